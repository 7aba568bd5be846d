package httpapi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/client"
)

// GET /analytics aggregates what happened through the API: spend per day
// per wallet with the limits, approvals by outcome with the median time
// to a decision, blocked sends by rule; a scoped key counts only its
// wallets; another range is empty; a bad range is a 422.
func TestAnalytics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	_, approver := e.adminKey()
	policy := map[string]any{"approval_threshold_usdc": 5, "max_tx_usdc": 10, "daily_limit_usdc": 100}
	w1, _ := e.agent(policy, 1000_000_000)
	w2, _ := e.agent(policy, 1000_000_000)
	send := func(w string, amount float64, want string) {
		t.Helper()
		status, body := e.do("POST", fmt.Sprintf(sendPath, w), e.key, map[string]any{"to": newAddress(), "amount": amount})
		got, _ := body["status"].(string)
		if status == 403 && body["reason"] != nil {
			got = "blocked"
		}
		if got != want {
			t.Fatalf("send %v from %s: %d %v, want %s", amount, w, status, body, want)
		}
	}
	send(w1, 2, "sent")
	send(w1, 3, "sent")
	send(w2, 1.5, "sent")
	send(w1, 20, "blocked")
	send(w2, 20, "blocked")
	yes, no := e.park(w1, newAddress(), 6), e.park(w1, newAddress(), 7)
	if status, body := e.approve(yes, approver, nil); status != 200 || body["status"] != "sent" {
		t.Fatalf("approve: %d %v", status, body)
	}
	if status, body := e.reject(no, approver, nil); status != 200 {
		t.Fatalf("reject: %d %v", status, body)
	}
	// A transaction names the approval it came from.
	_, txs := e.do("GET", "/api/public/v1/transactions?wallet_id="+w1, e.key, nil)
	for _, x := range txs["transactions"].([]any) {
		tx := x.(map[string]any)
		if want := map[bool]any{true: yes, false: nil}[tx["amount"] == 6.0]; tx["approval_id"] != want {
			t.Fatalf("transaction %v: approval_id %v, want %v", tx["amount"], tx["approval_id"], want)
		}
	}
	e.park(w2, newAddress(), 8) // still pending: no decision
	if status, body := e.do("POST", "/api/public/v1/agents/"+w2+"/freeze", e.key, nil); status != 200 {
		t.Fatalf("freeze: %d %v", status, body)
	}
	send(w2, 1, "blocked")
	// Decisions that took 100 s and 300 s: the median is 200 s.
	for id, took := range map[string]int{yes: 100, no: 300} {
		if _, err := e.db.ExecContext(t.Context(), "UPDATE approvals SET created_at = decided_at - ? * interval '1 second' WHERE id = ?",
			took, uuid.MustParse(strings.TrimPrefix(id, "ap_"))); err != nil {
			t.Fatal(err)
		}
	}

	today := time.Now().UTC().Format(time.DateOnly)
	a, err := client.New(e.url, e.key).GetAnalytics(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if a.To != today || a.From != time.Now().UTC().AddDate(0, 0, -29).Format(time.DateOnly) {
		t.Fatalf("default range %s..%s", a.From, a.To)
	}
	spend := map[string]string{}
	for _, s := range a.Spend {
		spend[s.WalletID] = fmt.Sprintf("%s %v×%d", s.Day, s.AmountUSDC, s.Transactions)
	}
	if want := map[string]string{w1: today + " 11×3", w2: today + " 1.5×1"}; fmt.Sprint(spend) != fmt.Sprint(want) {
		t.Fatalf("spend %v, want %v", spend, want)
	}
	if len(a.Wallets) != 2 || a.Wallets[0].DailyLimitUSDC != 100 || a.Wallets[0].Label != "payer" {
		t.Fatalf("wallets %+v", a.Wallets)
	}
	if len(a.Approvals) != 1 || a.Approvals[0].Day != today || a.Approvals[0].Approved != 1 || a.Approvals[0].Rejected != 1 ||
		a.Approvals[0].Expired != 0 || a.Approvals[0].MedianDecisionSeconds == nil || *a.Approvals[0].MedianDecisionSeconds != 200 {
		t.Fatalf("approvals %+v", a.Approvals)
	}
	if a.MedianDecisionSeconds == nil || *a.MedianDecisionSeconds != 200 {
		t.Fatalf("median %v", a.MedianDecisionSeconds)
	}
	if got := fmt.Sprint(a.Blocked); got != "[{exceeds_max_tx 2} {wallet_frozen 1}]" {
		t.Fatalf("blocked %s", got)
	}

	// A key limited to w2 counts only w2.
	scoped := e.newKey(e.key, map[string]any{"wallet_ids": []string{w2}})["key"].(string)
	s, err := client.New(e.url, scoped).GetAnalytics(t.Context(), today, today)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Spend) != 1 || s.Spend[0].WalletID != w2 || len(s.Wallets) != 1 || len(s.Approvals) != 0 || s.MedianDecisionSeconds != nil ||
		fmt.Sprint(s.Blocked) != "[{exceeds_max_tx 1} {wallet_frozen 1}]" {
		t.Fatalf("scoped %+v", s)
	}

	// Yesterday and another account: nothing.
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	status, body := e.do("GET", "/api/public/v1/analytics?from="+yesterday+"&to="+yesterday, e.key, nil)
	if status != 200 || fmt.Sprint(body["spend"], body["approvals"], body["blocked"], body["median_decision_seconds"]) != "[] [] [] <nil>" {
		t.Fatalf("yesterday: %d %v", status, body)
	}
	_, other := e.newAccount("devnet")
	if o, err := client.New(e.url, other).GetAnalytics(t.Context(), "", ""); err != nil || len(o.Spend)+len(o.Blocked)+len(o.Approvals) != 0 {
		t.Fatalf("another account: %+v %v", o, err)
	}

	for _, c := range []struct{ query, field string }{
		{"from=2026-13-01", "from"},
		{"to=yesterday", "to"},
		{"from=1969-12-31&to=1970-01-05", "from"},
		{"from=2026-05-02&to=2026-05-01", "from"},
		{"from=2025-01-01&to=2026-01-02", "to"},
		{"to=" + url.QueryEscape("2026-01-01T00:00:00Z"), "to"},
	} {
		status, body := e.do("GET", "/api/public/v1/analytics?"+c.query, e.key, nil)
		wantError(t, status, body, 422, c.field)
	}
	if status, body := e.do("GET", "/api/public/v1/analytics?from=2025-01-01&to=2026-01-01", e.key, nil); status != 200 {
		t.Fatalf("366 days: %d %v", status, body)
	}
}
