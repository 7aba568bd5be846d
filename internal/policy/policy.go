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

	"github.com/agentwallet/agentwallet/internal/money"
)

// Policy limits what a wallet may spend. The _usdc limits govern every
// USD-pegged stablecoin together, counted at 1:1 (a USDT is taken to be
// worth a USDC: the peg is assumed, not priced); the _eur ones every
// EUR-pegged one. Amounts are millionths of the currency.
type Policy struct {
	// DailyLimit caps the sum of a UTC day's sends in USD stablecoins.
	DailyLimit money.Micros[money.USD]
	// MaxTx caps one send.
	MaxTx money.Micros[money.USD]
	// ApprovalThreshold: sends of at least this much wait for a human; 0
	// sends every payment to approval.
	ApprovalThreshold money.Micros[money.USD]
	// Allowlist of recipient addresses (base58); empty means unrestricted.
	Allowlist []string
	// Labels name some allowlist entries (an address book for the people
	// who approve and edit); they never change a decision.
	Labels map[string]string

	// The optional rules: nil means the rule does not apply.

	// WeeklyLimit and MonthlyLimit cap what the last 7 and 30 days (rolling
	// windows, 7×24 and 30×24 hours back from the decision) reserved or
	// spent, counted as the daily limit counts.
	WeeklyLimit, MonthlyLimit *money.Micros[money.USD]
	// MaxTxPerHour and MaxTxPerDay cap how many payments (sends and x402
	// payments, sent or parked for approval) the last hour and the last
	// 24 hours (rolling) may hold.
	MaxTxPerHour, MaxTxPerDay *int
	// ActiveHours is when the agent may pay; outside them a payment is
	// blocked or, with OutsideActiveHours approve, parked for a human.
	ActiveHours *ActiveHours
	// OutsideActiveHours: what becomes of a payment outside ActiveHours
	// (zero value: OutsideBlock). Without ActiveHours it changes nothing.
	OutsideActiveHours Outside

	// EUR limits the EUR stablecoins: nil, no EUR spending at all (every
	// such payment is blocked by max_tx_eur), so a EUR asset allowed by
	// Assets still pays nothing until a human sets them.
	EUR *Limits[money.EUR]

	// Assets are the symbols of the assets the wallet may spend (nil:
	// DefaultAssets); any other is blocked asset_not_allowed, so an asset
	// the service gains is spent only once a human allows it.
	Assets []string

	// ApprovalsRequired is how many distinct people must approve a parked
	// payment before it is sent (zero value: 1). It never changes a
	// decision: the approval package counts the votes. That it is at
	// most the account's people who can approve is checked where the
	// account is known (the wallet package).
	ApprovalsRequired int
}

// Limits are the amount limits of one currency's payments, as the policy's
// USD fields are for USD.
type Limits[C money.Currency] struct {
	DailyLimit, MaxTx, ApprovalThreshold money.Micros[C]
	WeeklyLimit, MonthlyLimit            *money.Micros[C]
}

// valid checks each of l's limits (their fields end in _suffix) is 0 to
// money.MaxMicros.
func (l Limits[C]) valid(suffix string) *FieldError {
	for _, f := range []struct {
		name string
		v    *money.Micros[C]
	}{
		{"daily_limit_", &l.DailyLimit}, {"max_tx_", &l.MaxTx}, {"approval_threshold_", &l.ApprovalThreshold},
		{"weekly_limit_", l.WeeklyLimit}, {"monthly_limit_", l.MonthlyLimit},
	} {
		switch {
		case f.v != nil && *f.v < 0:
			return &FieldError{f.name + suffix, "must not be negative"}
		case f.v != nil && *f.v > money.MaxMicros:
			return &FieldError{f.name + suffix, "is too large"}
		}
	}
	return nil
}

// USDLimits are the policy's _usdc limits.
func (p Policy) USDLimits() Limits[money.USD] {
	return Limits[money.USD]{p.DailyLimit, p.MaxTx, p.ApprovalThreshold, p.WeeklyLimit, p.MonthlyLimit}
}

// EURLimits are the policy's _eur limits; all zero (nothing may be paid)
// without them.
func (p Policy) EURLimits() Limits[money.EUR] {
	if p.EUR == nil {
		return Limits[money.EUR]{}
	}
	return *p.EUR
}

// DefaultAssets is what a wallet may spend unless its policy says
// otherwise: USDC only.
var DefaultAssets = []string{"USDC"}

// MaxAssets bounds the assets list.
const MaxAssets = 50

// SpendableAssets are the assets p allows.
func (p Policy) SpendableAssets() []string {
	if p.Assets == nil {
		return DefaultAssets
	}
	return p.Assets
}

// Spends reports whether p allows paying in asset (its symbol).
func (p Policy) Spends(asset string) bool {
	return slices.Contains(p.SpendableAssets(), asset)
}

// MaxApprovals bounds approvals_required: an account has at most 1,000
// users (auth.MaxUsers).
const MaxApprovals = 1000

// Approvals is how many people must approve: ApprovalsRequired, at least 1.
func (p Policy) Approvals() int { return max(1, p.ApprovalsRequired) }

// MaxTxCount bounds max_tx_per_hour and max_tx_per_day.
const MaxTxCount = 1_000_000

// MaxLabel bounds an allowlist entry's label, in characters.
const MaxLabel = 100

// MaxAllowlist bounds the allowlist so a policy stays a small row.
const MaxAllowlist = 1000

// Default is the policy of a wallet created without one, and supplies each
// field a partial policy leaves out.
func Default() Policy {
	return Policy{
		DailyLimit:         100 * money.Dollar,
		MaxTx:              25 * money.Dollar,
		ApprovalThreshold:  10 * money.Dollar,
		Allowlist:          []string{},
		OutsideActiveHours: OutsideBlock,
		ApprovalsRequired:  1,
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
	if fe := p.USDLimits().valid("usdc"); fe != nil {
		return fe
	}
	if p.EUR != nil {
		if fe := p.EUR.valid("eur"); fe != nil {
			return fe
		}
	}
	if len(p.Assets) > MaxAssets {
		return &FieldError{"assets", fmt.Sprintf("must have at most %d entries", MaxAssets)}
	}
	for i, a := range p.Assets {
		if !ValidSymbol(a) {
			return &FieldError{fmt.Sprintf("assets[%d]", i), "must be an asset's symbol: 2 to 10 capital letters or digits (GET /assets)"}
		}
		if j := slices.Index(p.Assets, a); j < i {
			return &FieldError{fmt.Sprintf("assets[%d]", i), fmt.Sprintf("duplicates assets[%d]", j)}
		}
	}
	for _, f := range []struct {
		name string
		v    *int
	}{
		{"max_tx_per_hour", p.MaxTxPerHour},
		{"max_tx_per_day", p.MaxTxPerDay},
	} {
		if f.v != nil && (*f.v < 0 || *f.v > MaxTxCount) {
			return &FieldError{f.name, fmt.Sprintf("must be 0 to %d", MaxTxCount)}
		}
	}
	if p.ActiveHours != nil {
		if fe := p.ActiveHours.Valid(); fe != nil {
			return fe
		}
	}
	if p.ApprovalsRequired < 0 || p.ApprovalsRequired > MaxApprovals {
		return &FieldError{"approvals_required", fmt.Sprintf("must be 1 to %d", MaxApprovals)}
	}
	if o := p.OutsideActiveHours; o != "" && o != OutsideBlock && o != OutsideApprove {
		return &FieldError{"outside_active_hours", `must be "block" or "approve"`}
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

// ValidSymbol reports whether s has the form of an asset's symbol: 2 to
// 10 capital letters or digits.
func ValidSymbol(s string) bool {
	if len(s) < 2 || len(s) > 10 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
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
// nil keeps those of the addresses still allowed. A non-nil Change of an
// optional rule sets it, or removes it when its To is nil.
type Patch struct {
	DailyLimit         *money.Micros[money.USD]
	MaxTx              *money.Micros[money.USD]
	ApprovalThreshold  *money.Micros[money.USD]
	Allowlist          []string
	Labels             map[string]string
	WeeklyLimit        *Change[money.Micros[money.USD]]
	MonthlyLimit       *Change[money.Micros[money.USD]]
	MaxTxPerHour       *Change[int]
	MaxTxPerDay        *Change[int]
	ActiveHours        *Change[ActiveHours]
	OutsideActiveHours *Outside
	ApprovalsRequired  *int
	// EUR changes the EUR limits.
	EUR EURPatch
	// Assets, when non-nil, replaces the assets the wallet may spend.
	Assets []string
}

// EURPatch changes some EUR limits. A limit that was never set is 0 (the
// three amounts) or none (the windows): setting one where none were makes
// the others 0, so nothing is paid in EUR beyond what was set; removing
// one makes it 0, or none.
type EURPatch struct {
	DailyLimit, MaxTx, ApprovalThreshold *Change[money.Micros[money.EUR]]
	WeeklyLimit, MonthlyLimit            *Change[money.Micros[money.EUR]]
}

func (c EURPatch) empty() bool {
	return c.DailyLimit == nil && c.MaxTx == nil && c.ApprovalThreshold == nil && c.WeeklyLimit == nil && c.MonthlyLimit == nil
}

// apply is l with c's changes: nil when no EUR limit is left (no EUR
// spending).
func (c EURPatch) apply(l *Limits[money.EUR]) *Limits[money.EUR] {
	if c.empty() {
		return l
	}
	var n Limits[money.EUR]
	if l != nil {
		n = *l
	}
	for _, f := range []struct {
		c   *Change[money.Micros[money.EUR]]
		out *money.Micros[money.EUR]
	}{{c.DailyLimit, &n.DailyLimit}, {c.MaxTx, &n.MaxTx}, {c.ApprovalThreshold, &n.ApprovalThreshold}} {
		if f.c != nil {
			*f.out = 0
			if f.c.To != nil {
				*f.out = *f.c.To
			}
		}
	}
	c.WeeklyLimit.apply(&n.WeeklyLimit)
	c.MonthlyLimit.apply(&n.MonthlyLimit)
	if n.Equal(Limits[money.EUR]{}) {
		return nil
	}
	return &n
}

// Change is the new value of an optional rule: To, or none (the rule is
// removed) when To is nil.
type Change[T any] struct{ To *T }

// To is a Change setting v.
func To[T any](v T) *Change[T] { return &Change[T]{To: &v} }

// Remove is a Change removing the rule.
func Remove[T any]() *Change[T] { return &Change[T]{} }

func (c *Change[T]) apply(field **T) {
	if c != nil {
		*field = c.To
	}
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
	c.WeeklyLimit.apply(&p.WeeklyLimit)
	c.MonthlyLimit.apply(&p.MonthlyLimit)
	c.MaxTxPerHour.apply(&p.MaxTxPerHour)
	c.MaxTxPerDay.apply(&p.MaxTxPerDay)
	c.ActiveHours.apply(&p.ActiveHours)
	if c.OutsideActiveHours != nil {
		p.OutsideActiveHours = *c.OutsideActiveHours
	}
	if c.ApprovalsRequired != nil {
		p.ApprovalsRequired = *c.ApprovalsRequired
	}
	p.EUR = c.EUR.apply(p.EUR)
	if c.Assets != nil {
		p.Assets = c.Assets
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
		"weekly_limit_usdc": p.WeeklyLimit, "monthly_limit_usdc": p.MonthlyLimit,
		"max_tx_per_hour": p.MaxTxPerHour, "max_tx_per_day": p.MaxTxPerDay,
		"active_hours": p.ActiveHours, "outside_active_hours": p.OutsideActiveHours.orBlock(),
		"approvals_required": p.Approvals(), "assets": p.SpendableAssets(),
		"daily_limit_eur": eurField(p.EUR, func(l Limits[money.EUR]) *money.Micros[money.EUR] { return &l.DailyLimit }),
		"max_tx_eur":      eurField(p.EUR, func(l Limits[money.EUR]) *money.Micros[money.EUR] { return &l.MaxTx }),
		"approval_threshold_eur": eurField(p.EUR, func(l Limits[money.EUR]) *money.Micros[money.EUR] {
			return &l.ApprovalThreshold
		}),
		"weekly_limit_eur":  eurField(p.EUR, func(l Limits[money.EUR]) *money.Micros[money.EUR] { return l.WeeklyLimit }),
		"monthly_limit_eur": eurField(p.EUR, func(l Limits[money.EUR]) *money.Micros[money.EUR] { return l.MonthlyLimit }),
	}
}

// eurField is one EUR limit, or nil without EUR limits.
func eurField(l *Limits[money.EUR], f func(Limits[money.EUR]) *money.Micros[money.EUR]) *money.Micros[money.EUR] {
	if l == nil {
		return nil
	}
	return f(*l)
}

// Equal reports whether l and o are the same limits.
func (l Limits[C]) Equal(o Limits[C]) bool {
	return l.DailyLimit == o.DailyLimit && l.MaxTx == o.MaxTx && l.ApprovalThreshold == o.ApprovalThreshold &&
		equalPtr(l.WeeklyLimit, o.WeeklyLimit) && equalPtr(l.MonthlyLimit, o.MonthlyLimit)
}

// Same reports whether p and o are the same policy.
func (p Policy) Same(o Policy) bool {
	return p.DailyLimit == o.DailyLimit && p.MaxTx == o.MaxTx && p.ApprovalThreshold == o.ApprovalThreshold &&
		slices.Equal(p.Allowlist, o.Allowlist) && maps.Equal(p.Labels, o.Labels) &&
		equalPtr(p.WeeklyLimit, o.WeeklyLimit) && equalPtr(p.MonthlyLimit, o.MonthlyLimit) &&
		equalPtr(p.MaxTxPerHour, o.MaxTxPerHour) && equalPtr(p.MaxTxPerDay, o.MaxTxPerDay) &&
		(p.ActiveHours == nil) == (o.ActiveHours == nil) && (p.ActiveHours == nil || p.ActiveHours.Equal(*o.ActiveHours)) &&
		p.OutsideActiveHours.orBlock() == o.OutsideActiveHours.orBlock() && p.Approvals() == o.Approvals() &&
		(p.EUR == nil) == (o.EUR == nil) && (p.EUR == nil || p.EUR.Equal(*o.EUR)) &&
		slices.Equal(p.SpendableAssets(), o.SpendableAssets())
}

func equalPtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// Loosening names the first way after is looser than before, or "" when
// after only tightens it or keeps it: a limit, a count or the approval
// threshold raised, an optional limit or count removed, active hours
// removed or widened (any minute of the week added, or another time zone),
// outside_active_hours changed from block to approve, approvals_required
// lowered (fewer people must approve), an address added to
// a non-empty allowlist, or a non-empty allowlist emptied (an empty one
// allows every recipient). Restricting an unrestricted wallet, setting an
// optional limit, count or active hours where there were none, lowering a
// value, raising approvals_required, narrowing active hours, approve →
// block and removing entries from
// a list that stays non-empty tighten it. Setting or changing any entry's
// label is refused too: approvers read those labels, so whoever may only
// tighten must not name a recipient (an unlabelled entry it may add as
// above).
func Loosening(before, after Policy) string {
	if what := loosensLimits("usdc", before.USDLimits(), after.USDLimits()); what != "" {
		return what
	}
	switch b, a := before.EUR, after.EUR; {
	case a == nil:
	case b == nil:
		return fmt.Sprintf("allow EUR spending (daily_limit_eur %s where none was set)", a.DailyLimit)
	default:
		if what := loosensLimits("eur", *b, *a); what != "" {
			return what
		}
	}
	for _, a := range after.SpendableAssets() {
		if !before.Spends(a) {
			return fmt.Sprintf("allow another asset (%s)", a)
		}
	}
	if what := loosensOptional("max_tx_per_hour", before.MaxTxPerHour, after.MaxTxPerHour); what != "" {
		return what
	}
	if what := loosensOptional("max_tx_per_day", before.MaxTxPerDay, after.MaxTxPerDay); what != "" {
		return what
	}
	if b, a := before.ActiveHours, after.ActiveHours; b != nil {
		switch {
		case a == nil:
			return fmt.Sprintf("remove the active hours (%s)", b)
		case a.Timezone != b.Timezone:
			return fmt.Sprintf("change the active hours' time zone (from %s to %s)", b.Timezone, a.Timezone)
		case !a.within(*b):
			return fmt.Sprintf("widen the active hours (from %s to %s)", b, a)
		}
	}
	if b, a := before.Approvals(), after.Approvals(); a < b {
		return fmt.Sprintf("lower the approvals required (approvals_required from %d to %d)", b, a)
	}
	if before.OutsideActiveHours.orBlock() == OutsideBlock && after.OutsideActiveHours.orBlock() == OutsideApprove {
		return "park payments outside the active hours for approval instead of blocking them (outside_active_hours from block to approve)"
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

// loosensLimits names how one currency's limits (their fields end in
// _suffix) were loosened: one raised, or an optional one removed.
func loosensLimits[C money.Currency](suffix string, before, after Limits[C]) string {
	for _, f := range []struct {
		name          string
		before, after money.Micros[C]
	}{
		{"daily_limit_", before.DailyLimit, after.DailyLimit},
		{"max_tx_", before.MaxTx, after.MaxTx},
		{"approval_threshold_", before.ApprovalThreshold, after.ApprovalThreshold},
	} {
		if f.after > f.before {
			return fmt.Sprintf("raise a policy limit (%s%s from %s to %s)", f.name, suffix, f.before, f.after)
		}
	}
	if what := loosensOptional("weekly_limit_"+suffix, before.WeeklyLimit, after.WeeklyLimit); what != "" {
		return what
	}
	return loosensOptional("monthly_limit_"+suffix, before.MonthlyLimit, after.MonthlyLimit)
}

// loosensOptional names how an optional limit or count was loosened:
// raised, or removed (no limit at all); "" when it was not.
func loosensOptional[T ~int64 | ~int](name string, before, after *T) string {
	switch {
	case before == nil:
		return ""
	case after == nil:
		return fmt.Sprintf("remove a policy limit (%s, %v)", name, *before)
	case *after > *before:
		return fmt.Sprintf("raise a policy limit (%s from %v to %v)", name, *before, *after)
	}
	return ""
}
