package policy

import (
	"testing"

	"github.com/agentwallet/agentwallet/internal/money"
)

func eur(m money.Micros[money.EUR]) money.Amount { return money.Of(m) }

// Each payment meets the limits of its asset's currency: USD stablecoins
// share the _usdc limits, EUR ones the _eur limits (none: no EUR at all),
// and only the assets the policy lists are spent.
func TestEvaluate_EachCurrencyUnderItsOwnLimits(t *testing.T) {
	t.Parallel()
	const u = money.Dollar
	const e = money.Micros[money.EUR](money.Unit)
	base := Policy{DailyLimit: 10 * u, MaxTx: 10 * u, ApprovalThreshold: 10 * u, Assets: []string{"USDC", "USDT", "EURC"}}
	withEUR := base
	withEUR.EUR = &Limits[money.EUR]{DailyLimit: 50 * e, MaxTx: 20 * e, ApprovalThreshold: 15 * e}
	eurWeek := withEUR
	eurWeek.EUR = &Limits[money.EUR]{DailyLimit: 50 * e, MaxTx: 20 * e, ApprovalThreshold: 15 * e, WeeklyLimit: new(60 * e)}
	usdOnly := Policy{DailyLimit: 10 * u, MaxTx: 10 * u, ApprovalThreshold: 10 * u}

	cases := []struct {
		name   string
		p      Policy
		r      Request
		want   Outcome
		reason Reason
		rule   Rule
		remain money.Amount
	}{
		{"USDT counts with USDC: 6 then 6 is over 10", base,
			Request{To: addrB, Asset: "USDT", Amount: usd(6 * u), Usage: Usage{USD: Spent[money.USD]{Today: 6 * u}}},
			Blocked, ExceedsDailyLimit, RuleDailyLimit, usd(4 * u)},
		{"USDT within the USD day", base, Request{To: addrB, Asset: "USDT", Amount: usd(4 * u), Usage: Usage{USD: Spent[money.USD]{Today: 6 * u}}},
			Send, "", "", usd(4 * u)},
		{"EUR spent does not use the USD day", withEUR,
			Request{To: addrB, Asset: "USDC", Amount: usd(5 * u), Usage: Usage{EUR: Spent[money.EUR]{Today: 50 * e}}},
			Send, "", "", usd(10 * u)},
		{"EURC under the EUR limits, not the USD ones", withEUR, Request{To: addrB, Asset: "EURC", Amount: eur(12 * e)},
			Send, "", "", eur(50 * e)},
		{"EURC over max_tx_eur", withEUR, Request{To: addrB, Asset: "EURC", Amount: eur(21 * e)},
			Blocked, ExceedsMaxTx, RuleMaxTxEUR, eur(50 * e)},
		{"EURC over the EUR day", withEUR, Request{To: addrB, Asset: "EURC", Amount: eur(5 * e), Usage: Usage{EUR: Spent[money.EUR]{Today: 46 * e}}},
			Blocked, ExceedsDailyLimit, RuleDailyLimitEUR, eur(4 * e)},
		{"EURC at the EUR threshold waits", withEUR, Request{To: addrB, Asset: "EURC", Amount: eur(15 * e)},
			NeedsApproval, "", RuleApprovalThresholdEUR, eur(50 * e)},
		{"EURC over the EUR week", eurWeek, Request{To: addrB, Asset: "EURC", Amount: eur(2 * e), Usage: Usage{EUR: Spent[money.EUR]{Week: 59 * e}}},
			Blocked, ExceedsWeeklyLimit, RuleWeeklyLimitEUR, eur(50 * e)},
		{"no EUR limits: no EUR spending", base, Request{To: addrB, Asset: "EURC", Amount: eur(1)},
			Blocked, ExceedsMaxTx, RuleMaxTxEUR, eur(0)},
		{"an asset not listed is blocked", base, Request{To: addrB, Asset: "PYUSD", Amount: usd(1)},
			Blocked, AssetNotAllowed, RuleAssets, usd(10 * u)},
		{"the default lists USDC only", usdOnly, Request{To: addrB, Asset: "USDT", Amount: usd(1)},
			Blocked, AssetNotAllowed, RuleAssets, usd(10 * u)},
		{"no asset named is USDC", usdOnly, Request{To: addrB, Amount: usd(1)}, Send, "", "", usd(10 * u)},
		{"frozen before the asset", base, Request{To: addrB, Asset: "PYUSD", Amount: usd(1), Frozen: true},
			Blocked, WalletFrozen, RuleState, usd(10 * u)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := tc.p.Evaluate(tc.r)
			if d.Outcome != tc.want || d.Reason != tc.reason || d.Rule != tc.rule || d.RemainingToday != tc.remain {
				t.Fatalf("got %v/%q/%q/%v, want %v/%q/%q/%v", d.Outcome, d.Reason, d.Rule, d.RemainingToday, tc.want, tc.reason, tc.rule, tc.remain)
			}
		})
	}
}

// Allowing an asset or EUR spending loosens a policy; narrowing tightens.
func TestLoosening_AssetsAndEURLimits(t *testing.T) {
	t.Parallel()
	const e = money.Micros[money.EUR](money.Unit)
	base := Default()
	withEURC := base
	withEURC.Assets = []string{"USDC", "EURC"}
	eurSet := withEURC
	eurSet.EUR = &Limits[money.EUR]{DailyLimit: 50 * e, MaxTx: 20 * e, ApprovalThreshold: 10 * e}
	eurRaised := eurSet
	eurRaised.EUR = &Limits[money.EUR]{DailyLimit: 60 * e, MaxTx: 20 * e, ApprovalThreshold: 10 * e}
	eurLowered := eurSet
	eurLowered.EUR = &Limits[money.EUR]{DailyLimit: 40 * e, MaxTx: 20 * e, ApprovalThreshold: 5 * e}
	none := base
	none.Assets = []string{}
	for _, tc := range []struct {
		name          string
		before, after Policy
		loosens       bool
	}{
		{"allow another asset", base, withEURC, true},
		{"narrow the assets", withEURC, base, false},
		{"allow no asset at all", base, none, false},
		{"set EUR limits where none were", withEURC, eurSet, true},
		{"raise the EUR day", eurSet, eurRaised, true},
		{"lower EUR limits", eurSet, eurLowered, false},
		{"remove the EUR limits", eurSet, withEURC, false},
	} {
		if got := Loosening(tc.before, tc.after); (got != "") != tc.loosens {
			t.Errorf("%s: Loosening = %q, want loosens %v", tc.name, got, tc.loosens)
		}
	}
}

// A patch of some EUR limits leaves the others 0: nothing more is paid in
// EUR than what was set; removing all leaves no EUR limits.
func TestApply_EURLimitsNeverUnlimitedByAccident(t *testing.T) {
	t.Parallel()
	const e = money.Micros[money.EUR](money.Unit)
	p := Default().Apply(Patch{EUR: EURPatch{DailyLimit: To(50 * e)}, Assets: []string{"USDC", "EURC"}})
	if p.EUR == nil || p.EUR.DailyLimit != 50*e || p.EUR.MaxTx != 0 || p.EUR.ApprovalThreshold != 0 {
		t.Fatalf("EUR = %+v", p.EUR)
	}
	if d := p.Evaluate(Request{To: addrB, Asset: "EURC", Amount: eur(1)}); d.Reason != ExceedsMaxTx {
		t.Fatalf("a EURC send with only daily_limit_eur set: %v %q", d.Outcome, d.Reason)
	}
	p = p.Apply(Patch{EUR: EURPatch{DailyLimit: Remove[money.Micros[money.EUR]]()}})
	if p.EUR != nil {
		t.Fatalf("EUR = %+v, want none", p.EUR)
	}
	if err := (Policy{Assets: []string{"usdc"}}).Validate(); err == nil {
		t.Fatal("a lower-case symbol was accepted")
	}
	if err := (Policy{Assets: []string{"USDC", "USDC"}}).Validate(); err == nil {
		t.Fatal("a duplicate asset was accepted")
	}
	if err := (Policy{EUR: &Limits[money.EUR]{DailyLimit: -1}}).Validate(); err == nil {
		t.Fatal("a negative EUR limit was accepted")
	}
}
