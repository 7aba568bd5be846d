package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/mcpserver"
	"github.com/agentwallet/agentwallet/internal/policy"
)

// testClock is a policy clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock(t time.Time) *testClock { return &testClock{t: t} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// nextInNewYork is the next `day` at hh:00 in New York after now: near
// the real time, so approvals made at it have not expired on the
// database's clock.
func nextInNewYork(t testing.TB, day time.Weekday, hh int) time.Time {
	t.Helper()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	n := time.Now().In(ny)
	d := time.Date(n.Year(), n.Month(), n.Day(), hh, 0, 0, 0, ny)
	for d.Weekday() != day || !d.After(n) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

var officeHours = map[string]any{"timezone": "America/New_York", "days": []string{"mon", "tue", "wed", "thu", "fri"}, "from": "09:00", "to": "18:00"}

// previewOf previews a send of amount with key (and a proposed policy
// change, when not nil); the answer must be 200.
func (e *env) previewOf(key, id string, amount float64, proposed map[string]any) map[string]any {
	e.t.Helper()
	body := map[string]any{"to": newAddress(), "amount": amount}
	if proposed != nil {
		body["policy"] = proposed
	}
	status, p := e.do("POST", fmt.Sprintf(sendPath, id)+"/preview", key, body)
	if status != 200 {
		e.t.Fatalf("preview %v: %d %v", body, status, p)
	}
	return p
}

// blockedIn counts the range's blocked sends by reason (GET /analytics).
func (e *env) blockedIn(from, to time.Time) map[string]float64 {
	e.t.Helper()
	status, a := e.do("GET", fmt.Sprintf("/api/public/v1/analytics?from=%s&to=%s", from.UTC().Format(time.DateOnly), to.UTC().Format(time.DateOnly)), e.key, nil)
	if status != 200 {
		e.t.Fatalf("analytics: %d %v", status, a)
	}
	out := map[string]float64{}
	for _, b := range a["blocked"].([]any) {
		m := b.(map[string]any)
		out[m["reason"].(string)] = m["count"].(float64)
	}
	return out
}

// 100 concurrent payments against max_tx_per_hour 10: exactly 10 are sent
// or parked (half the attempts are at the approval threshold), 90 are
// blocked with exceeds_velocity and each says so in tx.blocked; the rows
// agree, and so do the preview and the analytics.
func TestVelocity_ExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"max_tx_per_hour": 10, "approval_threshold_usdc": 1}, 50_000_000)
	to := newAddress()
	counts := tally(100, retried(func(i int) (int, map[string]any) {
		amount := 0.5 // sent
		if i%2 == 1 {
			amount = 2 // parked
		}
		return e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": amount})
	}), func(status int, body map[string]any) string {
		switch {
		case status == 200 && body["status"] == "sent", status == 202 && body["status"] == "pending_approval":
			return "passed"
		case status == 403 && body["reason"] == "exceeds_velocity":
			return "blocked"
		}
		return ""
	})
	if counts["passed"] != 10 || counts["blocked"] != 90 || len(counts) != 2 {
		t.Fatalf("outcomes %v", counts)
	}
	if n := e.countRows("transactions") + e.countRows("approvals"); n != 10 {
		t.Fatalf("%d transactions and approvals, want 10", n)
	}
	blocked := e.events("tx.blocked")
	if len(blocked) != 90 {
		t.Fatalf("%d tx.blocked events", len(blocked))
	}
	for _, ev := range blocked {
		if ev["reason"] != "exceeds_velocity" {
			t.Fatalf("tx.blocked %v", ev)
		}
	}
	p := e.previewOf(e.key, id, 0.5, nil)
	if p["outcome"] != "blocked" || p["reason"] != "exceeds_velocity" || p["rule"] != "max_tx_per_hour" ||
		p["payments_last_hour"] != 10.0 || p["max_tx_per_hour"] != 10.0 || p["payments_last_day"] != 10.0 {
		t.Fatalf("preview %v", p)
	}
	now := time.Now()
	if b := e.blockedIn(now.Add(-24*time.Hour), now.Add(24*time.Hour)); b["exceeds_velocity"] != 90 || len(b) != 1 {
		t.Fatalf("analytics blocked %v", b)
	}
}

// Sends and x402 payments share the count: a send, a signed x402 payment
// and a parked one fill max_tx_per_hour 3, after which both kinds are
// blocked (tx.blocked of kind x402 too). Redeeming the parked payment's
// grant is the approved payment itself: it is signed, and counted no
// further.
func TestVelocity_CountsX402Payments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"max_tx_per_hour": 3, "approval_threshold_usdc": 1}, 50_000_000)
	_, key := e.agentKey()
	agent := *e
	agent.key = key
	payX402 := func(challenge map[string]any, extra map[string]any) (int, map[string]any) {
		raw, _ := json.Marshal(challenge)
		status, body, _ := agent.pay(id, raw, extra, nil)
		return status, body
	}
	if status, body := agent.do("POST", fmt.Sprintf(sendPath, id), key, map[string]any{"to": newAddress(), "amount": 0.5}); status != 200 {
		t.Fatalf("send: %d %v", status, body)
	}
	if status, body := payX402(fakeChallenge("500000"), nil); status != 200 || body["status"] != "signed" {
		t.Fatalf("x402: %d %v", status, body)
	}
	dear := fakeChallenge("2000000")
	status, body := payX402(dear, nil)
	if status != 202 || body["approval_id"] == nil {
		t.Fatalf("x402 at the threshold: %d %v", status, body)
	}
	apID := body["approval_id"].(string)

	status, body = agent.do("POST", fmt.Sprintf(sendPath, id), key, map[string]any{"to": newAddress(), "amount": 0.5})
	wantError(t, status, body, http.StatusForbidden, "Blocked by policy")
	if body["reason"] != "exceeds_velocity" {
		t.Fatalf("fourth payment (a send): %v", body)
	}
	status, body = payX402(fakeChallenge("500000"), nil)
	if status != 403 || body["reason"] != "exceeds_velocity" {
		t.Fatalf("fourth payment (x402): %d %v", status, body)
	}
	if ev := e.events("tx.blocked"); len(ev) != 2 || ev[1]["kind"] != "x402" || ev[1]["reason"] != "exceeds_velocity" {
		t.Fatalf("tx.blocked %v", ev)
	}

	if status, a := e.approve(apID, e.key, nil); status != 200 {
		t.Fatalf("approve: %d %v", status, a)
	}
	if status, body := payX402(dear, map[string]any{"approval_id": apID}); status != 200 || body["status"] != "signed" {
		t.Fatalf("redeeming the grant: %d %v", status, body)
	}
	if p := e.previewOf(key, id, 0.5, nil); p["payments_last_hour"] != 3.0 || p["rule"] != "max_tx_per_hour" {
		t.Fatalf("preview after the grant: %v", p)
	}
}

// Earlier days' spend, sent on the local chain with the policy's clock
// moved, fills the rolling week and month: sends over either are blocked
// with exceeds_weekly_limit or exceeds_monthly_limit while the day still
// has room, and a payment leaves each window 7 and 30 days after it was
// made.
func TestRollingLimits_WeeklyAndMonthly(t *testing.T) {
	t.Parallel()
	start := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	clock := newTestClock(start)
	e := newEnv(t, envOpts{clock: clock.Now})
	e.startWorker()
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 100, "max_tx_usdc": 30, "approval_threshold_usdc": 1000,
		"weekly_limit_usdc": 60, "monthly_limit_usdc": 100}, 500_000_000)
	to := newAddress()
	send := func(amount float64, want string) {
		t.Helper()
		status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": amount})
		switch {
		case want == "sent" && status == 200 && body["status"] == "sent":
		case want != "sent" && status == 403 && body["reason"] == want:
		default:
			t.Fatalf("%v on %v: %d %v, want %s", amount, clock.Now(), status, body, want)
		}
	}
	send(25, "sent")
	send(25, "sent")

	clock.Set(start.Add(2 * 24 * time.Hour))
	send(20, "exceeds_weekly_limit")
	p := e.previewOf(e.key, id, 20, nil)
	if p["rule"] != "weekly_limit_usdc" || p["spent_week_usdc"] != 50.0 || p["remaining_week_usdc"] != 10.0 ||
		p["spent_today_usdc"] != 0.0 || p["spent_month_usdc"] != 50.0 || p["remaining_month_usdc"] != 50.0 {
		t.Fatalf("preview %v", p)
	}
	send(10, "sent")

	// The first day's 50 have left the week, not the month.
	clock.Set(start.Add(7*24*time.Hour + time.Minute))
	send(25, "sent")
	send(20, "exceeds_monthly_limit")
	if p := e.previewOf(e.key, id, 20, nil); p["rule"] != "monthly_limit_usdc" || p["spent_week_usdc"] != 35.0 ||
		p["spent_month_usdc"] != 85.0 || p["remaining_month_usdc"] != 15.0 {
		t.Fatalf("preview %v", p)
	}
	send(15, "sent")

	// And the month: 10 + 25 + 15 remain of it.
	clock.Set(start.Add(30*24*time.Hour + time.Minute))
	if p := e.previewOf(e.key, id, 20, nil); p["outcome"] != "sent" || p["spent_month_usdc"] != 50.0 {
		t.Fatalf("preview a month on %v", p)
	}
	send(20, "sent")

	if b := e.blockedIn(start, start.Add(31*24*time.Hour)); b["exceeds_weekly_limit"] != 1 || b["exceeds_monthly_limit"] != 1 || len(b) != 2 {
		t.Fatalf("analytics blocked %v", b)
	}
	if got := e.chainUSDC(to); got != 120_000_000 {
		t.Fatalf("recipient holds %d micro-USDC, want 120 USDC", got)
	}
}

// Active hours Monday to Friday 09:00–18:00 in New York, with the policy's
// clock: on Saturday at 10:00 there a send is blocked, or parked for a
// human whatever its amount with outside_active_hours approve (and a
// human may approve it then); on Tuesday at 10:00 it is sent; at 18:00 it
// is outside again.
func TestActiveHours_BlockOrParkOutsideThem(t *testing.T) {
	t.Parallel()
	saturday := nextInNewYork(t, time.Saturday, 10)
	clock := newTestClock(saturday)
	e := newEnv(t, envOpts{clock: clock.Now})
	e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 5, "active_hours": officeHours}, 50_000_000)
	_, key := e.agentKey()
	send := func() (int, map[string]any) {
		return e.do("POST", fmt.Sprintf(sendPath, id), key, map[string]any{"to": newAddress(), "amount": 1})
	}

	status, body := send()
	if status != 403 || body["reason"] != "outside_active_hours" {
		t.Fatalf("saturday: %d %v", status, body)
	}
	if ev := e.events("tx.blocked"); len(ev) != 1 || ev[0]["reason"] != "outside_active_hours" {
		t.Fatalf("tx.blocked %v", ev)
	}
	if p := e.previewOf(key, id, 1, nil); p["outcome"] != "blocked" || p["rule"] != "active_hours" || p["within_active_hours"] != false ||
		p["outside_active_hours"] != "block" || fmt.Sprint(p["active_hours"]) != fmt.Sprint(officeHours) {
		t.Fatalf("preview %v", p)
	}

	e.patchPolicyWith(e.key, id, map[string]any{"outside_active_hours": "approve"})
	status, body = send()
	if status != 202 || body["status"] != "pending_approval" {
		t.Fatalf("saturday, approve: %d %v", status, body)
	}
	apID := body["approval_id"].(string)
	if p := e.previewOf(key, id, 1, nil); p["outcome"] != "pending_approval" || p["rule"] != "active_hours" {
		t.Fatalf("preview %v", p)
	}
	// A human decides outside the hours: approving sends it.
	if status, c := e.do("GET", approvalsPath+"/"+apID+"/context", e.key, nil); status != 200 ||
		c["if_approved_now"].(map[string]any)["outcome"] != "sent" {
		t.Fatalf("context: %d %v", status, c)
	}
	if status, a := e.approve(apID, e.key, nil); status != 200 || a["status"] != "sent" {
		t.Fatalf("approve on saturday: %d %v", status, a)
	}

	clock.Set(saturday.AddDate(0, 0, 3)) // Tuesday 10:00 in New York
	status, body = send()
	if status != 200 || body["status"] != "sent" {
		t.Fatalf("tuesday: %d %v", status, body)
	}
	if p := e.previewOf(key, id, 1, nil); p["outcome"] != "sent" || p["rule"] != nil || p["within_active_hours"] != true {
		t.Fatalf("preview %v", p)
	}
	clock.Set(saturday.AddDate(0, 0, 3).Add(8 * time.Hour)) // 18:00: to is exclusive
	if p := e.previewOf(key, id, 1, nil); p["outcome"] != "pending_approval" || p["rule"] != "active_hours" || p["within_active_hours"] != false {
		t.Fatalf("preview at 18:00 %v", p)
	}
	if b := e.blockedIn(saturday.Add(-24*time.Hour), saturday.Add(4*24*time.Hour)); b["outside_active_hours"] != 1 || len(b) != 1 {
		t.Fatalf("analytics blocked %v", b)
	}
}

// An agent key may only tighten the new rules: raising or removing a limit
// or a count, widening, removing or re-zoning the active hours and
// outside_active_hours block → approve are 403 (nothing changes, each
// attempt audited); lowering, narrowing and approve → block pass. An owner
// may loosen them all.
func TestRules_AgentKeyTightensOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.agent(map[string]any{"weekly_limit_usdc": 300, "monthly_limit_usdc": 1000, "max_tx_per_hour": 10, "max_tx_per_day": 50,
		"active_hours": officeHours, "outside_active_hours": "approve"}, 0)
	_, agentKey := e.agentKey()
	withHours := func(f func(h map[string]any)) map[string]any {
		h := map[string]any{}
		for k, v := range officeHours {
			h[k] = v
		}
		f(h)
		return map[string]any{"active_hours": h}
	}
	refused := 0
	for _, step := range []struct {
		name  string
		patch map[string]any
		want  string // "" for allowed, else the refusal
	}{
		{"raise weekly", map[string]any{"weekly_limit_usdc": 301}, "cannot raise a policy limit (weekly_limit_usdc from 300 to 301)"},
		{"remove weekly", map[string]any{"weekly_limit_usdc": nil}, "cannot remove a policy limit (weekly_limit_usdc, 300)"},
		{"raise monthly", map[string]any{"monthly_limit_usdc": 1000.000001}, "monthly_limit_usdc from 1000 to 1000.000001"},
		{"remove monthly", map[string]any{"monthly_limit_usdc": nil}, "remove a policy limit (monthly_limit_usdc"},
		{"raise per hour", map[string]any{"max_tx_per_hour": 11}, "max_tx_per_hour from 10 to 11"},
		{"remove per hour", map[string]any{"max_tx_per_hour": nil}, "remove a policy limit (max_tx_per_hour"},
		{"raise per day", map[string]any{"max_tx_per_day": 51}, "max_tx_per_day from 50 to 51"},
		{"remove per day", map[string]any{"max_tx_per_day": nil}, "remove a policy limit (max_tx_per_day"},
		{"add saturday", withHours(func(h map[string]any) { h["days"] = []string{"mon", "tue", "wed", "thu", "fri", "sat"} }), "cannot widen the active hours"},
		{"open earlier", withHours(func(h map[string]any) { h["from"] = "08:00" }), "cannot widen the active hours"},
		{"close later", withHours(func(h map[string]any) { h["to"] = "24:00" }), "cannot widen the active hours"},
		{"another zone", withHours(func(h map[string]any) { h["timezone"] = "America/Los_Angeles" }), "cannot change the active hours' time zone"},
		{"remove hours", map[string]any{"active_hours": nil}, "cannot remove the active hours"},
		{"tighten one, loosen another", map[string]any{"weekly_limit_usdc": 1, "max_tx_per_day": 500}, "max_tx_per_day from 50 to 500"},
		{"lower every limit and count", map[string]any{"weekly_limit_usdc": 200, "monthly_limit_usdc": 900, "max_tx_per_hour": 5, "max_tx_per_day": 0}, ""},
		{"narrow the hours", withHours(func(h map[string]any) { h["days"], h["from"], h["to"] = []string{"tue", "wed"}, "10:00", "17:00" }), ""},
		{"approve → block", map[string]any{"outside_active_hours": "block"}, ""},
		{"block → approve", map[string]any{"outside_active_hours": "approve"}, "outside_active_hours from block to approve"},
	} {
		e.patchStep(agentKey, id, step.name, step.patch, step.want)
		if step.want != "" {
			refused++
		}
	}
	if n := len(e.auditOf(audit.ActionPermissionDenied)); n != refused {
		t.Fatalf("%d permission.denied entries, want %d", n, refused)
	}
	p := e.patchPolicyWith(e.key, id, map[string]any{})["policy"].(map[string]any)
	if p["weekly_limit_usdc"] != 200.0 || p["monthly_limit_usdc"] != 900.0 || p["max_tx_per_hour"] != 5.0 || p["max_tx_per_day"] != 0.0 ||
		fmt.Sprint(p["active_hours"].(map[string]any)["days"]) != "[tue wed]" || p["outside_active_hours"] != "block" {
		t.Fatalf("after the agent's changes: %v", p)
	}

	// An owner (a person in the dashboard) loosens every rule.
	owner, _ := e.session(auth.RoleOwner)
	status, raw, _ := e.request("PATCH", agentsPath+"/"+id+"/policy", "", map[string]any{
		"weekly_limit_usdc": nil, "monthly_limit_usdc": 5000, "max_tx_per_hour": nil, "max_tx_per_day": 1000,
		"active_hours":         withHours(func(h map[string]any) { h["days"] = []string{"sat", "sun"}; h["from"], h["to"] = "22:00", "06:00" })["active_hours"],
		"outside_active_hours": "approve",
	}, owner)
	var a map[string]any
	if err := json.Unmarshal(raw, &a); err != nil || status != 200 {
		t.Fatalf("owner: %d %s", status, raw)
	}
	p = a["policy"].(map[string]any)
	if p["weekly_limit_usdc"] != nil || p["monthly_limit_usdc"] != 5000.0 || p["max_tx_per_hour"] != nil || p["max_tx_per_day"] != 1000.0 ||
		fmt.Sprint(p["active_hours"]) != "map[days:[sat sun] from:22:00 timezone:America/New_York to:06:00]" || p["outside_active_hours"] != "approve" {
		t.Fatalf("after the owner's change: %v", p)
	}
	status, raw, _ = e.request("PATCH", agentsPath+"/"+id+"/policy", "", map[string]any{"active_hours": nil}, owner)
	if status != 200 || !strings.Contains(string(raw), `"active_hours":null`) {
		t.Fatalf("owner removes the hours: %d %s", status, raw)
	}
}

// Each new field is read, shown, defaulted and refused as the others: a
// wallet without them shows null (and block), a create sets them (days
// answered Monday first), a PATCH keeps what it omits and removes what it
// sends as null, the audit log carries them, and a bad value is 422
// naming the field.
func TestRules_ReadShownDefaultedAndRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plain, _ := e.agent(nil, 0)
	status, a := e.do("GET", agentsPath+"/"+plain, e.key, nil)
	p := a["policy"].(map[string]any)
	for _, f := range []string{"weekly_limit_usdc", "monthly_limit_usdc", "max_tx_per_hour", "max_tx_per_day", "active_hours"} {
		if v, ok := p[f]; status != 200 || !ok || v != nil {
			t.Fatalf("a plain wallet's %s: %v (%d %v)", f, v, status, p)
		}
	}
	if p["outside_active_hours"] != "block" {
		t.Fatalf("a plain wallet's outside_active_hours: %v", p)
	}

	hours := map[string]any{"timezone": "Europe/Paris", "days": []string{"fri", "mon"}, "from": "22:00", "to": "06:00"}
	id, _ := e.agent(map[string]any{"weekly_limit_usdc": 300.5, "monthly_limit_usdc": 0, "max_tx_per_hour": 0, "max_tx_per_day": 7,
		"active_hours": hours, "outside_active_hours": "approve"}, 0)
	p = e.patchPolicyWith(e.key, id, map[string]any{"weekly_limit_usdc": nil, "max_tx_per_day": 6})["policy"].(map[string]any)
	if p["weekly_limit_usdc"] != nil || p["monthly_limit_usdc"] != 0.0 || p["max_tx_per_hour"] != 0.0 || p["max_tx_per_day"] != 6.0 ||
		fmt.Sprint(p["active_hours"]) != "map[days:[mon fri] from:22:00 timezone:Europe/Paris to:06:00]" || p["outside_active_hours"] != "approve" {
		t.Fatalf("policy %v", p)
	}
	updated := e.auditOf(audit.ActionPolicyUpdated)
	if len(updated) != 1 {
		t.Fatalf("%d policy.updated entries", len(updated))
	}
	d := details(t, updated[0])
	before, after := d["before"].(map[string]any), d["after"].(map[string]any)
	if before["weekly_limit_usdc"] != 300.5 || after["weekly_limit_usdc"] != nil || before["max_tx_per_day"] != 7.0 || after["max_tx_per_day"] != 6.0 ||
		after["outside_active_hours"] != "approve" || after["active_hours"].(map[string]any)["timezone"] != "Europe/Paris" {
		t.Fatalf("audit %v", d)
	}
	// A PATCH that changes nothing writes nothing.
	e.patchPolicyWith(e.key, id, map[string]any{"active_hours": hours, "outside_active_hours": nil})
	if n := len(e.auditOf(audit.ActionPolicyUpdated)); n != 1 {
		t.Fatalf("%d policy.updated entries after a no-op", n)
	}

	hoursWith := func(k string, v any) map[string]any {
		h := map[string]any{}
		for k2, v2 := range officeHours {
			h[k2] = v2
		}
		if v == nil {
			delete(h, k)
		} else {
			h[k] = v
		}
		return map[string]any{"active_hours": h}
	}
	for _, c := range []struct {
		name  string
		patch map[string]any
		want  string
	}{
		{"unknown zone", hoursWith("timezone", "Mars/Olympus"), `active_hours.timezone: "Mars/Olympus" is not a time zone`},
		{"the server's zone", hoursWith("timezone", "Local"), "active_hours.timezone"},
		{"single-digit hour", hoursWith("from", "9:00"), "active_hours.from"},
		{"minute 60", hoursWith("to", "17:60"), "active_hours.to"},
		{"empty window", hoursWith("to", "09:00"), "active_hours.to: must differ from from"},
		{"a day misspelt", hoursWith("days", []string{"mon", "Tuesday"}), "active_hours.days[1]"},
		{"a day twice", hoursWith("days", []string{"mon", "mon"}), "active_hours.days[1]"},
		{"no days", hoursWith("days", []string{}), "active_hours.days"},
		{"no to", hoursWith("to", nil), "active_hours: expected required property to"},
		{"an unknown field", hoursWith("tz", "UTC"), "active_hours.tz"},
		{"hours not an object", map[string]any{"active_hours": "9-5"}, "active_hours"},
		{"negative count", map[string]any{"max_tx_per_hour": -1}, "max_tx_per_hour"},
		{"fractional count", map[string]any{"max_tx_per_day": 1.5}, "max_tx_per_day"},
		{"count as text", map[string]any{"max_tx_per_day": "5"}, "max_tx_per_day"},
		{"too many decimals", map[string]any{"weekly_limit_usdc": 1.0000001}, "weekly_limit_usdc"},
		{"negative month", map[string]any{"monthly_limit_usdc": -1}, "monthly_limit_usdc"},
		{"bad outside", map[string]any{"outside_active_hours": "ask"}, "outside_active_hours"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := e.with(t).do("PATCH", agentsPath+"/"+id+"/policy", e.key, c.patch)
			wantError(t, status, body, http.StatusUnprocessableEntity, c.want)
		})
	}
	status, body := e.do("POST", agentsPath, e.key, map[string]any{"label": "x", "policy": hoursWith("timezone", "Nowhere/Town")})
	wantError(t, status, body, http.StatusUnprocessableEntity, "policy.active_hours.timezone")
	status, body = e.do("POST", fmt.Sprintf(sendPath, id)+"/preview", e.key, map[string]any{"to": newAddress(), "amount": 1, "policy": hoursWith("from", "25:00")})
	wantError(t, status, body, http.StatusUnprocessableEntity, "policy.active_hours.from")
}

// The preview names the rule that would decide, for each rule, under a
// proposed change or the wallet's own policy.
func TestRules_PreviewNamesEachRule(t *testing.T) {
	t.Parallel()
	tuesday := nextInNewYork(t, time.Tuesday, 10)
	e := newEnv(t, envOpts{clock: func() time.Time { return tuesday }})
	id, _ := e.agent(nil, 0) // daily 100, max 25, threshold 10
	saturdays := map[string]any{"timezone": "America/New_York", "days": []string{"sat"}, "from": "00:00", "to": "24:00"}
	for _, c := range []struct {
		name     string
		amount   float64
		proposed map[string]any
		outcome  string
		rule     any // nil when sent
	}{
		{"within policy", 1, nil, "sent", nil},
		{"approval threshold", 10, nil, "pending_approval", "approval_threshold_usdc"},
		{"allowlist", 1, map[string]any{"allowlist": []string{newAddress()}}, "blocked", "allowlist"},
		{"max per send", 26, nil, "blocked", "max_tx_usdc"},
		{"daily limit", 6, map[string]any{"daily_limit_usdc": 5}, "blocked", "daily_limit_usdc"},
		{"weekly limit", 6, map[string]any{"weekly_limit_usdc": 5}, "blocked", "weekly_limit_usdc"},
		{"monthly limit", 6, map[string]any{"monthly_limit_usdc": 5}, "blocked", "monthly_limit_usdc"},
		{"per hour", 1, map[string]any{"max_tx_per_hour": 0}, "blocked", "max_tx_per_hour"},
		{"per day", 1, map[string]any{"max_tx_per_day": 0}, "blocked", "max_tx_per_day"},
		{"outside the hours", 1, map[string]any{"active_hours": saturdays}, "blocked", "active_hours"},
		{"outside the hours, approve", 1, map[string]any{"active_hours": saturdays, "outside_active_hours": "approve"}, "pending_approval", "active_hours"},
		{"within the hours", 1, map[string]any{"active_hours": officeHours}, "sent", nil},
	} {
		p := e.previewOf(e.key, id, c.amount, c.proposed)
		if p["outcome"] != c.outcome || p["rule"] != c.rule {
			t.Errorf("%s: outcome %v rule %v, want %s %v (%v)", c.name, p["outcome"], p["rule"], c.outcome, c.rule, p)
		}
		if c.outcome == "blocked" && p["reason"] == nil || c.outcome != "blocked" && p["reason"] != nil {
			t.Errorf("%s: reason %v", c.name, p["reason"])
		}
	}
	p := e.previewOf(e.key, id, 1, map[string]any{"weekly_limit_usdc": 5})
	if p["reason"] != nil || p["remaining_week_usdc"] != 5.0 || p["weekly_limit_usdc"] != 5.0 || p["remaining_month_usdc"] != nil ||
		p["within_active_hours"] != nil || p["payments_last_hour"] != 0.0 {
		t.Fatalf("figures %v", p)
	}
	if status, body := e.do("POST", agentsPath+"/"+id+"/freeze", e.key, nil); status != 200 {
		t.Fatalf("freeze: %d %v", status, body)
	}
	if p := e.previewOf(e.key, id, 1, nil); p["reason"] != "wallet_frozen" || p["rule"] != "state" {
		t.Fatalf("frozen %v", p)
	}
}

// Every reason enum of the OpenAPI document (the 403's, the preview's, an
// approval's context, the analytics') lists every block reason of the
// policy, and the preview's rule every rule.
func TestRules_ReasonsDocumented(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{}).OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var enums [][]string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if e, ok := v["enum"].([]any); ok {
				var vals []string
				for _, x := range e {
					vals = append(vals, fmt.Sprint(x))
				}
				enums = append(enums, vals)
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	reasons, rules := 0, 0
	for _, e := range enums {
		switch {
		case slices.Contains(e, string(policy.ExceedsDailyLimit)):
			reasons++
			for _, r := range policy.Reasons {
				if !slices.Contains(e, string(r)) {
					t.Errorf("reason enum %v lacks %s", e, r)
				}
			}
		case slices.Contains(e, string(policy.RuleApprovalThreshold)):
			rules++
			for _, r := range policy.Rules {
				if !slices.Contains(e, string(r)) {
					t.Errorf("rule enum %v lacks %s", e, r)
				}
			}
		}
	}
	if reasons < 4 || rules != 1 {
		t.Fatalf("%d reason enums and %d rule enums found", reasons, rules)
	}
}

// The Go client and the MCP tools carry the rules: the client sets, reads
// and removes them (Remove sends null), previews a proposed rule and reads
// a velocity block as a BlockedError; get_wallet_info shows them and
// preview_send names the rule, send_usdc says what to do about it.
func TestRules_GoClientAndMCPToolsCarryThem(t *testing.T) {
	t.Parallel()
	tuesday := nextInNewYork(t, time.Tuesday, 10)
	e := newEnv(t, envOpts{clock: func() time.Time { return tuesday }})
	e.startWorker()
	ctx := context.Background()
	admin := client.New(e.url, e.key, client.WithRetries(0))
	weekly, perHour := client.Amount("300"), 2
	office := &client.ActiveHours{Timezone: "America/New_York", Days: []string{"mon", "tue", "wed", "thu", "fri"}, From: "09:00", To: "18:00"}
	a, err := admin.CreateAgent(ctx, "rules", &client.PolicyInput{WeeklyLimitUSDC: &weekly, MaxTxPerHour: &perHour, ActiveHours: office, OutsideActiveHours: "approve"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := admin.GetAgent(ctx, a.ID)
	if p := got.Policy; err != nil || p.WeeklyLimitUSDC == nil || p.WeeklyLimitUSDC.String() != "300" || p.MonthlyLimitUSDC != nil ||
		p.MaxTxPerHour == nil || *p.MaxTxPerHour != 2 || p.MaxTxPerDay != nil || !reflect.DeepEqual(p.ActiveHours, office) || p.OutsideActiveHours != "approve" {
		t.Fatalf("get: %+v %v", got, err)
	}
	zero := 0
	pv, err := admin.PreviewSendUnder(ctx, a.ID, client.SendRequest{To: newAddress(), Amount: "1"}, client.PolicyInput{MaxTxPerHour: &zero})
	if err != nil || pv.Outcome != "blocked" || pv.Rule == nil || *pv.Rule != "max_tx_per_hour" || pv.WithinActiveHours == nil || !*pv.WithinActiveHours {
		t.Fatalf("preview: %+v %v", pv, err)
	}
	a, err = admin.UpdatePolicy(ctx, a.ID, client.PolicyInput{MaxTxPerHour: &zero, Remove: []string{"weekly_limit_usdc", "active_hours"}})
	if p := a.Policy; err != nil || p.WeeklyLimitUSDC != nil || p.ActiveHours != nil || *p.MaxTxPerHour != 0 || p.OutsideActiveHours != "approve" {
		t.Fatalf("update: %+v %v", a, err)
	}
	_, err = admin.Send(ctx, a.ID, client.SendRequest{To: newAddress(), Amount: "1"})
	var blocked *client.BlockedError
	if !errors.As(err, &blocked) || blocked.Reason != client.ReasonExceedsVelocity {
		t.Fatalf("send: %v", err)
	}

	serverT, clientT := mcp.NewInMemoryTransports()
	if _, err := mcpserver.New(client.New(e.url, e.key), "https://wallet.example.com").Connect(ctx, serverT, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	e.patchPolicyWith(e.key, a.ID, map[string]any{"monthly_limit_usdc": 1000, "active_hours": officeHours})
	_, info := call(t, cs, "get_wallet_info", map[string]any{"wallet_id": a.ID})
	p := info["policy"].(map[string]any)
	if p["monthly_limit_usdc"] != "1000" || p["max_tx_per_hour"] != 0.0 || p["outside_active_hours"] != "approve" ||
		p["active_hours"].(map[string]any)["timezone"] != "America/New_York" {
		t.Fatalf("wallet info: %v", info)
	}
	if _, has := p["weekly_limit_usdc"]; has {
		t.Fatalf("an unset rule is shown: %v", p)
	}
	_, preview := call(t, cs, "preview_send", map[string]any{"wallet_id": a.ID, "to": newAddress(), "amount": "1"})
	if preview["rule"] != "max_tx_per_hour" || preview["reason"] != "exceeds_velocity" || preview["remaining_month_usdc"] != "1000" ||
		preview["within_active_hours"] != true || preview["max_tx_per_hour"] != 0.0 {
		t.Fatalf("preview_send: %v", preview)
	}
	_, sent := call(t, cs, "send_usdc", map[string]any{"wallet_id": a.ID, "to": newAddress(), "amount": "1"})
	if sent["status"] != "blocked" || sent["reason"] != "exceeds_velocity" || !strings.Contains(sent["next"].(string), "wait before paying again") {
		t.Fatalf("send_usdc: %v", sent)
	}
}

// The rolling limits are exact under concurrency, as the day's is: with
// earlier days' spend in the hourly sums, 20 sends at once against a week
// with 30 left pass exactly 3, and a week later 20 at once against a month
// with 20 left pass exactly 2; the rest are blocked with the window's
// reason, and the chain holds what passed.
func TestRollingLimits_ExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	start := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	clock := newTestClock(start)
	e := newEnv(t, envOpts{clock: clock.Now})
	e.startWorker()
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 100, "max_tx_usdc": 10, "approval_threshold_usdc": 1000,
		"weekly_limit_usdc": 60, "monthly_limit_usdc": 80}, 500_000_000)
	to := newAddress()
	burst := func(blockedAs string) (sent int) {
		t.Helper()
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 10})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case status == 200 && body["status"] == "sent":
					sent++
				case status == 403 && body["reason"] == blockedAs:
				default:
					t.Errorf("%d %v, want sent or %s", status, body, blockedAs)
				}
			})
		}
		wg.Wait()
		return sent
	}
	for range 3 {
		if status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 10}); status != 200 {
			t.Fatalf("first day's send: %d %v", status, body)
		}
	}
	clock.Set(start.Add(2 * 24 * time.Hour))
	if n := burst("exceeds_weekly_limit"); n != 3 {
		t.Fatalf("%d sent against a week with 30 USDC left, want 3", n)
	}
	// The first day's 30 have left the week, not the month: 20 left of it.
	clock.Set(start.Add(8 * 24 * time.Hour))
	if n := burst("exceeds_monthly_limit"); n != 2 {
		t.Fatalf("%d sent against a month with 20 USDC left, want 2", n)
	}
	if got := e.chainUSDC(to); got != 80_000_000 {
		t.Fatalf("recipient holds %d micro-USDC, want 80 USDC", got)
	}
}
