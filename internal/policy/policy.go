// Package policy holds the spending rules of an agent wallet. It does no
// I/O: callers load a Policy, pass it what they know, and get a value back.
package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/usdc"
)

// Policy limits what a wallet may spend. Amounts are micro-USDC.
type Policy struct {
	// DailyLimit caps the sum of a UTC day's sends.
	DailyLimit usdc.Micros
	// MaxTx caps one send.
	MaxTx usdc.Micros
	// ApprovalThreshold: sends of at least this much wait for a human; 0
	// sends every payment to approval.
	ApprovalThreshold usdc.Micros
	// Allowlist of recipient addresses (base58); empty means unrestricted.
	Allowlist []string
	// Labels name some allowlist entries (an address book for the people
	// who approve and edit); they never change a decision.
	Labels map[string]string
}

// MaxLabel bounds an allowlist entry's label, in characters.
const MaxLabel = 100

// MaxAllowlist bounds the allowlist so a policy stays a small row.
const MaxAllowlist = 1000

// Default is the policy of a wallet created without one, and supplies each
// field a partial policy leaves out.
func Default() Policy {
	return Policy{
		DailyLimit:        100 * usdc.Unit,
		MaxTx:             25 * usdc.Unit,
		ApprovalThreshold: 10 * usdc.Unit,
		Allowlist:         []string{},
	}
}

// FieldError names the policy field that is invalid.
type FieldError struct {
	Field string // JSON name, e.g. "allowlist[2]"
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate checks a policy; the first problem is returned as *FieldError.
func (p Policy) Validate() error {
	for _, f := range []struct {
		name string
		v    usdc.Micros
	}{
		{"daily_limit_usdc", p.DailyLimit},
		{"max_tx_usdc", p.MaxTx},
		{"approval_threshold_usdc", p.ApprovalThreshold},
	} {
		if f.v < 0 {
			return &FieldError{f.name, "must not be negative"}
		}
		if f.v > usdc.MaxMicros {
			return &FieldError{f.name, "is too large"}
		}
	}
	if len(p.Allowlist) > MaxAllowlist {
		return &FieldError{"allowlist", fmt.Sprintf("must have at most %d entries", MaxAllowlist)}
	}
	seen := make(map[string]int, len(p.Allowlist))
	for i, addr := range p.Allowlist {
		field := fmt.Sprintf("allowlist[%d]", i)
		if err := ValidAddress(addr); err != nil {
			return &FieldError{field, err.Error()}
		}
		if j, dup := seen[addr]; dup {
			return &FieldError{field, fmt.Sprintf("duplicates allowlist[%d]", j)}
		}
		seen[addr] = i
	}
	for _, addr := range slices.Sorted(maps.Keys(p.Labels)) {
		field := "allowlist_labels." + truncate(addr)
		if _, ok := seen[addr]; !ok {
			return &FieldError{field, "labels an address that is not on the allowlist"}
		}
		l := p.Labels[addr]
		if n := utf8.RuneCountInString(l); n == 0 || n > MaxLabel || strings.TrimSpace(l) != l {
			return &FieldError{field, fmt.Sprintf("must be 1 to %d characters without surrounding spaces", MaxLabel)}
		}
		if strings.ContainsFunc(l, Deceptive) {
			return &FieldError{field, "must not contain control or invisible formatting characters"}
		}
	}
	return nil
}

// Deceptive reports the characters refused in text that humans read to
// decide (labels, memos): control characters (newlines included), format
// characters (Cf: bidi overrides and isolates, zero-width ones, U+FEFF)
// and line or paragraph separators. They can make one text read as
// another, or forge lines, in the dashboard or a Slack message.
func Deceptive(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// ValidAddress checks that s is a base58 Solana address of 32 bytes.
func ValidAddress(s string) error {
	if len(s) < 32 || len(s) > 44 {
		return fmt.Errorf("%q is not a base58 Solana address (32 to 44 characters)", truncate(s))
	}
	if _, err := sol.PublicKeyFromBase58(s); err != nil {
		return fmt.Errorf("%q is not a base58 Solana address of 32 bytes", truncate(s))
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Patch changes some fields of a policy; nil fields keep their value (an
// empty, non-nil Allowlist clears it). Non-nil Labels replace the labels;
// nil keeps those of the addresses still allowed.
type Patch struct {
	DailyLimit        *usdc.Micros
	MaxTx             *usdc.Micros
	ApprovalThreshold *usdc.Micros
	Allowlist         []string
	Labels            map[string]string
}

// Apply returns p with c's fields changed; the result is not validated.
func (p Policy) Apply(c Patch) Policy {
	if c.DailyLimit != nil {
		p.DailyLimit = *c.DailyLimit
	}
	if c.MaxTx != nil {
		p.MaxTx = *c.MaxTx
	}
	if c.ApprovalThreshold != nil {
		p.ApprovalThreshold = *c.ApprovalThreshold
	}
	if c.Allowlist != nil {
		p.Allowlist = c.Allowlist
	}
	if c.Labels != nil {
		p.Labels = c.Labels
	} else if p.Labels != nil {
		kept := make(map[string]string, len(p.Labels))
		for _, a := range p.Allowlist {
			if l, ok := p.Labels[a]; ok {
				kept[a] = l
			}
		}
		p.Labels = kept
	}
	return p
}

// Doc is the policy as the API and the audit log show it: amounts in whole
// USDC under the spec's field names.
func (p Policy) Doc() map[string]any {
	allow := p.Allowlist
	if allow == nil {
		allow = []string{}
	}
	labels := p.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	return map[string]any{
		"daily_limit_usdc": p.DailyLimit, "max_tx_usdc": p.MaxTx,
		"approval_threshold_usdc": p.ApprovalThreshold, "allowlist": allow, "allowlist_labels": labels,
	}
}

// Loosening names the first way after is looser than before, or "" when
// after only tightens it or keeps it: a limit or the approval threshold
// raised, an address added to a non-empty allowlist, or a non-empty
// allowlist emptied (an empty one allows every recipient). Restricting an
// unrestricted wallet, lowering a value or removing entries from a list
// that stays non-empty tighten it. Setting or changing any entry's label
// is refused too: approvers read those labels, so whoever may only tighten
// must not name a recipient (an unlabelled entry it may add as above).
func Loosening(before, after Policy) string {
	for _, f := range []struct {
		name          string
		before, after usdc.Micros
	}{
		{"daily_limit_usdc", before.DailyLimit, after.DailyLimit},
		{"max_tx_usdc", before.MaxTx, after.MaxTx},
		{"approval_threshold_usdc", before.ApprovalThreshold, after.ApprovalThreshold},
	} {
		if f.after > f.before {
			return fmt.Sprintf("raise a policy limit (%s from %s to %s)", f.name, f.before, f.after)
		}
	}
	// Labels first: naming a recipient, even on a wallet being restricted,
	// is a person's call (approvers trust those names).
	for _, a := range after.Allowlist {
		if before.Labels[a] != after.Labels[a] {
			return fmt.Sprintf("label an allowlist entry (%s)", a)
		}
	}
	if len(before.Allowlist) == 0 {
		return ""
	}
	if len(after.Allowlist) == 0 {
		return "empty the allowlist (an empty allowlist allows every recipient)"
	}
	for _, a := range after.Allowlist {
		if !slices.Contains(before.Allowlist, a) {
			return fmt.Sprintf("add an address to the allowlist (%s)", a)
		}
	}
	return ""
}
