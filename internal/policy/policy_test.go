package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/mr-tron/base58"

	"github.com/agentwallet/agentwallet/internal/money"
)

const (
	addrA = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
	addrB = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	with := func(f func(*Policy)) Policy { p := Default(); f(&p); return p }
	cases := []struct {
		name  string
		p     Policy
		field string // "" means valid
	}{
		{"defaults", Default(), ""},
		{"zeros", Policy{}, ""},
		{"allowlist", with(func(p *Policy) { p.Allowlist = []string{addrA, addrB} }), ""},
		{"negative daily", with(func(p *Policy) { p.DailyLimit = -1 }), "daily_limit_usdc"},
		{"negative max", with(func(p *Policy) { p.MaxTx = -1 }), "max_tx_usdc"},
		{"negative threshold", with(func(p *Policy) { p.ApprovalThreshold = -1 }), "approval_threshold_usdc"},
		{"huge", with(func(p *Policy) { p.MaxTx = money.Micros[money.USD](money.MaxMicros) + 1 }), "max_tx_usdc"},
		{"bad address", with(func(p *Policy) { p.Allowlist = []string{addrA, "not-an-address"} }), "allowlist[1]"},
		{"0OIl not base58", with(func(p *Policy) { p.Allowlist = []string{"0" + addrA[1:]} }), "allowlist[0]"},
		{"too short", with(func(p *Policy) { p.Allowlist = []string{addrA[:20]} }), "allowlist[0]"},
		{"duplicate", with(func(p *Policy) { p.Allowlist = []string{addrA, addrB, addrA} }), "allowlist[2]"},
		{"too many", with(func(p *Policy) { p.Allowlist = make([]string, MaxAllowlist+1) }), "allowlist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.p.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("error %v, want a FieldError on %s", err, tc.field)
			}
			if strings.TrimSpace(fe.Msg) == "" {
				t.Fatal("empty message")
			}
		})
	}
}

// An address passes only when it is the exact base58 spelling of 32
// bytes (so what is stored, compared against the allowlist and paid to is
// one string per key), and a refusal quotes at most 64 characters of it.
func FuzzValidAddress(f *testing.F) {
	for _, s := range []string{
		"4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", "11111111111111111111111111111111", "1111111111111111111111111111111",
		"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1", "0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
		"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "", " 4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU\x00",
		strings.Repeat("é", 40),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := ValidAddress(s)
		if err != nil {
			if len(err.Error()) > 64*4+80 {
				t.Fatalf("error quotes too much: %d bytes", len(err.Error()))
			}
			return
		}
		b, derr := base58.Decode(s)
		if derr != nil || len(b) != 32 || base58.Encode(b) != s {
			t.Fatalf("%q passed: decodes to %d bytes (%v), spelled canonically %q", s, len(b), derr, base58.Encode(b))
		}
	})
}

func TestLoosening(t *testing.T) {
	t.Parallel()
	base := Policy{DailyLimit: 100 * money.Dollar, MaxTx: 25 * money.Dollar, ApprovalThreshold: 10 * money.Dollar, Allowlist: []string{}}
	with := func(p Policy, f func(*Policy)) Policy { f(&p); return p }
	listed := with(base, func(p *Policy) { p.Allowlist = []string{addrA, addrB} })
	for _, c := range []struct {
		name          string
		before, after Policy
		want          string // in the answer; "" means it only tightens
	}{
		{"unchanged", base, base, ""},
		{"lower daily", base, with(base, func(p *Policy) { p.DailyLimit = 50 * money.Dollar }), ""},
		{"lower max", base, with(base, func(p *Policy) { p.MaxTx = 0 }), ""},
		{"lower threshold", base, with(base, func(p *Policy) { p.ApprovalThreshold = 0 }), ""},
		{"restrict an unrestricted wallet", base, listed, ""},
		{"remove an entry", listed, with(listed, func(p *Policy) { p.Allowlist = []string{addrB} }), ""},
		{"reorder", listed, with(listed, func(p *Policy) { p.Allowlist = []string{addrB, addrA} }), ""},
		{"raise daily", base, with(base, func(p *Policy) { p.DailyLimit = 101 * money.Dollar }), "raise a policy limit (daily_limit_usdc from 100 to 101)"},
		{"raise max by a micro", base, with(base, func(p *Policy) { p.MaxTx++ }), "max_tx_usdc from 25 to 25.000001"},
		{"raise threshold", base, with(base, func(p *Policy) { p.ApprovalThreshold = 1_000_000 * money.Dollar }), "approval_threshold_usdc"},
		{"empty the allowlist", listed, with(listed, func(p *Policy) { p.Allowlist = []string{} }), "empty the allowlist"},
		{"add an address", with(base, func(p *Policy) { p.Allowlist = []string{addrA} }), listed, "add an address to the allowlist (" + addrB + ")"},
		{"swap an address", with(base, func(p *Policy) { p.Allowlist = []string{addrA} }), with(base, func(p *Policy) { p.Allowlist = []string{addrB} }), "add an address"},
		{"tighten and loosen at once", base, with(base, func(p *Policy) { p.MaxTx = 1; p.DailyLimit = 1000 * money.Dollar }), "daily_limit_usdc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Loosening(c.before, c.after)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Fatalf("Loosening = %q, want %q", got, c.want)
			}
		})
	}
}
