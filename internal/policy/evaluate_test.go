package policy

import (
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/money"
)

func TestEvaluate(t *testing.T) {
	t.Parallel()
	const u = money.Dollar
	base := Policy{DailyLimit: 100 * u, MaxTx: 25 * u, ApprovalThreshold: 10 * u}
	allow := base
	allow.Allowlist = []string{addrA}
	zeroThreshold := base
	zeroThreshold.ApprovalThreshold = 0

	cases := []struct {
		name    string
		p       Policy
		r       Request
		outcome Outcome
		reason  Reason
		remain  money.Micros[money.USD]
	}{
		{"small send", base, Request{To: addrB, Amount: usd(1 * u)}, Send, "", 100 * u},
		{"just under threshold", base, Request{To: addrB, Amount: usd(10*u - 1)}, Send, "", 100 * u},
		{"at threshold", base, Request{To: addrB, Amount: usd(10 * u)}, NeedsApproval, "", 100 * u},
		{"threshold 0 sends everything to approval", zeroThreshold, Request{To: addrB, Amount: usd(1)}, NeedsApproval, "", 100 * u},
		{"amount = max_tx passes", base, Request{To: addrB, Amount: usd(25 * u)}, NeedsApproval, "", 100 * u},
		{"one micro over max_tx", base, Request{To: addrB, Amount: usd(25*u + 1)}, Blocked, ExceedsMaxTx, 100 * u},
		{"spent + amount = limit passes", base, Request{To: addrB, Amount: usd(5 * u), Usage: Usage{USD: Spent[money.USD]{Today: 95 * u}}}, Send, "", 5 * u},
		{"one micro over the day", base, Request{To: addrB, Amount: usd(5*u + 1), Usage: Usage{USD: Spent[money.USD]{Today: 95 * u}}}, Blocked, ExceedsDailyLimit, 5 * u},
		{"limit used up", base, Request{To: addrB, Amount: usd(1), Usage: Usage{USD: Spent[money.USD]{Today: 100 * u}}}, Blocked, ExceedsDailyLimit, 0},
		{"overspent (limit lowered) remains 0", base, Request{To: addrB, Amount: usd(1), Usage: Usage{USD: Spent[money.USD]{Today: 150 * u}}}, Blocked, ExceedsDailyLimit, 0},
		{"empty allowlist allows all", base, Request{To: addrA, Amount: usd(1)}, Send, "", 100 * u},
		{"allowlisted", allow, Request{To: addrA, Amount: usd(1)}, Send, "", 100 * u},
		{"not allowlisted", allow, Request{To: addrB, Amount: usd(1)}, Blocked, RecipientNotAllowed, 100 * u},
		{"every split recipient allowlisted", allow, Request{To: addrA, Also: []string{addrA}, Amount: usd(1)}, Send, "", 100 * u},
		{"a split recipient not allowlisted", allow, Request{To: addrA, Also: []string{addrB}, Amount: usd(1)}, Blocked, RecipientNotAllowed, 100 * u},
		{"split recipients under an empty allowlist", base, Request{To: addrA, Also: []string{addrB}, Amount: usd(1)}, Send, "", 100 * u},
		{"frozen", base, Request{To: addrB, Amount: usd(1), Frozen: true}, Blocked, WalletFrozen, 100 * u},
		// Order: frozen → recipient → max_tx → daily → approval.
		{"frozen beats recipient", allow, Request{To: addrB, Amount: usd(1), Frozen: true}, Blocked, WalletFrozen, 100 * u},
		{"recipient beats max_tx", allow, Request{To: addrB, Amount: usd(30 * u)}, Blocked, RecipientNotAllowed, 100 * u},
		{"max_tx beats daily", base, Request{To: addrB, Amount: usd(30 * u), Usage: Usage{USD: Spent[money.USD]{Today: 99 * u}}}, Blocked, ExceedsMaxTx, 1 * u},
		{"daily beats approval", base, Request{To: addrB, Amount: usd(20 * u), Usage: Usage{USD: Spent[money.USD]{Today: 90 * u}}}, Blocked, ExceedsDailyLimit, 10 * u},
		{"zero limits block", Policy{}, Request{To: addrB, Amount: usd(1)}, Blocked, ExceedsMaxTx, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := tc.p.Evaluate(tc.r)
			if d.Outcome != tc.outcome || d.Reason != tc.reason || d.RemainingToday != usd(tc.remain) {
				t.Fatalf("got %v/%q/%v, want %v/%q/%v", d.Outcome, d.Reason, d.RemainingToday, tc.outcome, tc.reason, tc.remain)
			}
		})
	}
}

func TestDayStart(t *testing.T) {
	t.Parallel()
	plus2 := time.FixedZone("+2", 2*3600)
	cases := map[time.Time]time.Time{
		time.Date(2026, 11, 21, 23, 59, 59, 999, time.UTC): time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC):      time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 22, 1, 0, 0, 0, plus2):         time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), // 23:00 UTC the day before
	}
	for in, want := range cases {
		if got := DayStart(in); !got.Equal(want) {
			t.Errorf("DayStart(%v) = %v, want %v", in, got, want)
		}
	}
}

// usd is m as a payment's amount.
func usd(m money.Micros[money.USD]) money.Amount { return money.Of(m) }
