package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
)

const approvalsPath = "/api/public/v1/approvals"

// park sends amount from wallet id with the env's key; the send must
// park. It returns the approval id (ap_…).
func (e *env) park(id, to string, amount float64) string {
	e.t.Helper()
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": amount, "memo": "needs a human"})
	if status != http.StatusAccepted || body["status"] != "pending_approval" {
		e.t.Fatalf("send did not park: %d %v", status, body)
	}
	return body["approval_id"].(string)
}

// adminKey makes a second admin key of the env's account (as `api
// keys create` does): one that may approve.
func (e *env) adminKey() (id, key string) {
	e.t.Helper()
	k, secret, err := auth.CreateKey(context.Background(), e.db, e.account)
	if err != nil {
		e.t.Fatal(err)
	}
	return auth.KeyActorID(k.ID), secret
}

// agentKey makes a key of the env's account through POST /keys: an agent
// key.
func (e *env) agentKey() (id, key string) {
	e.t.Helper()
	status, body := e.do("POST", "/api/public/v1/keys", e.key, nil)
	if status != http.StatusCreated {
		e.t.Fatalf("create key: %d %v", status, body)
	}
	return body["id"].(string), body["key"].(string)
}

func (e *env) approve(apID, key string, body any) (int, map[string]any) {
	e.t.Helper()
	return e.do("POST", approvalsPath+"/"+apID+"/approve", key, body)
}

func (e *env) reject(apID, key string, body any) (int, map[string]any) {
	e.t.Helper()
	return e.do("POST", approvalsPath+"/"+apID+"/reject", key, body)
}

// auditOf returns the account's audit entries with action, oldest first.
func (e *env) auditOf(action string) []audit.Record {
	e.t.Helper()
	var es []audit.Record
	if _, err := audit.Seal(context.Background(), e.db, e.account.ID); err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.NewSelect().Model(&es).Where("account_id = ? AND action = ?", e.account.ID, action).Order("seq").Scan(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	return es
}

func details(t testing.TB, en audit.Record) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(en.Details, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// transactionsOfApproval counts the transactions made for an approval.
func (e *env) transactionsOfApproval(apID string) int {
	e.t.Helper()
	id, _ := approval.ParseID(apID)
	n, err := e.db.NewSelect().Table("transactions").Where("approval_id = ?", id).Count(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return int(n)
}

// The whole life of an approval: parked by a send, read, refused to its
// requester, approved with a note by a second key, signed, broadcast and
// confirmed on chain, with its event and audit entry; then closed to
// every further action.
func TestApproveEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 5}, 50_000_000)
	to := newAddress()
	apID := e.park(id, to, 7.5)

	status, a := e.do("GET", approvalsPath+"/"+apID, e.key, nil)
	if status != 200 || a["id"] != apID || a["status"] != "pending" || a["wallet_id"] != id || a["agent_label"] != "payer" ||
		a["amount"] != 7.5 || a["to"] != to || a["memo"] != "needs a human" || a["signature"] != nil || a["decided_at"] != nil ||
		a["requested_by"] != "key_"+keyIDOf(t, e, e.key) {
		t.Fatalf("get: %d %v", status, a)
	}
	created, _ := time.Parse(time.RFC3339Nano, a["created_at"].(string))
	expires, _ := time.Parse(time.RFC3339Nano, a["expires_at"].(string))
	if expires.Sub(created) != approval.Lifetime {
		t.Fatalf("lifetime %s", expires.Sub(created))
	}

	status, body := e.approve(apID, e.key, nil)
	wantError(t, status, body, http.StatusForbidden, "Requester cannot approve")
	if e.approvalStatus(apID) != approval.Pending {
		t.Fatal("a refused approve changed the approval")
	}

	keyID, key2 := e.adminKey()
	status, a = e.approve(apID, key2, map[string]any{"note": "invoice checked"})
	if status != 200 || a["status"] != "sent" || a["approved_by"] != keyID || a["note"] != "invoice checked" || a["decided_at"] == nil || a["rejected_by"] != nil {
		t.Fatalf("approve: %d %v", status, a)
	}
	sig := a["signature"].(string)
	e.paidOnce(eng, apID, sig, to, 7_500_000)
	if ev := e.events("approval.approved"); len(ev) != 1 || ev[0]["approval_id"] != apID || ev[0]["signature"] != sig ||
		ev[0]["amount"] != 7.5 || ev[0]["to"] != to || ev[0]["wallet_id"] != id {
		t.Fatalf("approval.approved events %v", ev)
	}
	if ev := e.events("tx.sent"); len(ev) != 1 || ev[0]["signature"] != sig {
		t.Fatalf("tx.sent events %v", ev)
	}
	if es := e.auditOf(audit.ActionApprovalApproved); len(es) != 1 || es[0].Actor != keyID || es[0].Target != "approval:"+apID ||
		details(t, es[0])["signature"] != sig || details(t, es[0])["note"] != "invoice checked" {
		t.Fatalf("audit %v", es)
	}
	// The approved amount counts against the day.
	if r := e.reservedToday(id); r != 7_500_000 {
		t.Fatalf("reserved %d", r)
	}

	for _, act := range []func(string, string, any) (int, map[string]any){e.approve, e.reject} {
		status, body := act(apID, key2, nil)
		wantError(t, status, body, http.StatusConflict, "approval is sent, not pending")
	}
}

// keyIDOf is the uuid of an API key.
func keyIDOf(t testing.TB, e *env, key string) string {
	t.Helper()
	p, err := auth.Authenticate(context.Background(), e.db, key)
	if err != nil {
		t.Fatal(err)
	}
	return p.KeyID.String()
}

// paidOnce confirms the approval's transaction sig and checks that it is
// the approval's only transaction and that `to` received exactly micros.
func (e *env) paidOnce(eng *payment.Engine, apID, sig, to string, micros money.Micros[money.USD]) {
	e.t.Helper()
	e.settle(eng, sig, payment.TxConfirmed)
	if got := e.chainUSDC(to); got != micros {
		e.t.Fatalf("recipient holds %d, want %d", got, micros)
	}
	if n := e.transactionsOfApproval(apID); n != 1 {
		e.t.Fatalf("%d transactions for %s", n, apID)
	}
}

func (e *env) approvalStatus(apID string) string {
	e.t.Helper()
	status, a := e.do("GET", approvalsPath+"/"+apID, e.key, nil)
	if status != 200 {
		e.t.Fatalf("get approval: %d %v", status, a)
	}
	return a["status"].(string)
}

// The requester may reject its own payment: closed without spending, with
// rejected_by, the note, an approval.rejected event and an audit entry.
func TestRejectByRequester(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	to := newAddress()
	apID := e.park(id, to, 1)
	me := "key_" + keyIDOf(t, e, e.key)

	status, a := e.reject(apID, e.key, map[string]any{"note": "wrong vendor"})
	if status != 200 || a["status"] != "rejected" || a["rejected_by"] != me || a["note"] != "wrong vendor" || a["reason"] != nil || a["decided_at"] == nil {
		t.Fatalf("reject: %d %v", status, a)
	}
	if ev := e.events("approval.rejected"); len(ev) != 1 || ev[0]["rejected_by"] != me || ev[0]["approval_id"] != apID || ev[0]["amount"] != 1.0 {
		t.Fatalf("approval.rejected events %v", ev)
	}
	if es := e.auditOf(audit.ActionApprovalRejected); len(es) != 1 || es[0].Actor != me || details(t, es[0])["note"] != "wrong vendor" {
		t.Fatalf("audit %v", es)
	}
	_, key2 := e.adminKey()
	status, body := e.approve(apID, key2, nil)
	wantError(t, status, body, http.StatusConflict, "approval is rejected, not pending")
	if n := e.transactionsOfApproval(apID); n != 0 {
		t.Fatalf("%d transactions", n)
	}
	// A note too long changes nothing.
	apID = e.park(id, to, 1)
	status, body = e.reject(apID, e.key, map[string]any{"note": strings.Repeat("n", 501)})
	wantError(t, status, body, http.StatusUnprocessableEntity, "note")
	if e.approvalStatus(apID) != approval.Pending {
		t.Fatal("a refused reject changed the approval")
	}
}

// 50 concurrent approves of one approval: exactly one executes (one
// transfer on chain, one approval.approved event); the others get 409.
func TestConcurrentApprovesPayOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 1}, 50_000_000)
	to := newAddress()
	apID := e.park(id, to, 2)
	_, key2 := e.adminKey()

	var sig string
	counts := tally(50, retried(func(int) (int, map[string]any) { return e.approve(apID, key2, nil) }), func(status int, body map[string]any) string {
		switch {
		case status == 200 && body["status"] == "sent":
			sig = body["signature"].(string)
			return "sent"
		case status == 409:
			return "conflict"
		}
		return ""
	})
	if counts["sent"] != 1 || counts["conflict"] != 49 {
		t.Fatalf("outcomes %v", counts)
	}
	e.paidOnce(eng, apID, sig, to, 2_000_000)
	if ev := e.events("approval.approved"); len(ev) != 1 {
		t.Fatalf("%d approval.approved events", len(ev))
	}
}

// Approve racing reject: exactly one wins, the loser gets 409, and the
// chain agrees with the winner.
func TestApproveRacesReject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 1, "daily_limit_usdc": 1000}, 100_000_000)
	_, key2 := e.adminKey()
	wins := map[string]int{}
	for round := range 6 {
		to := newAddress()
		apID := e.park(id, to, 1)
		var wg sync.WaitGroup
		var aStatus, rStatus int
		var aBody, rBody map[string]any
		start := make(chan struct{})
		wg.Go(func() { <-start; aStatus, aBody = e.approve(apID, key2, nil) })
		wg.Go(func() { <-start; rStatus, rBody = e.reject(apID, e.key, nil) })
		close(start)
		wg.Wait()
		switch {
		case aStatus == 200 && rStatus == 409:
			wins["approve"]++
			if aBody["status"] != "sent" {
				t.Fatalf("round %d: approve won with %v", round, aBody)
			}
			e.settle(eng, aBody["signature"].(string), payment.TxConfirmed)
			if got := e.chainUSDC(to); got != 1_000_000 {
				t.Fatalf("round %d: approve won but recipient holds %d", round, got)
			}
		case rStatus == 200 && aStatus == 409:
			wins["reject"]++
			if rBody["status"] != "rejected" || e.transactionsOfApproval(apID) != 0 {
				t.Fatalf("round %d: reject won with %v", round, rBody)
			}
			if _, err := eng.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := e.chainUSDC(to); got != 0 {
				t.Fatalf("round %d: reject won but recipient holds %d", round, got)
			}
		default:
			t.Fatalf("round %d: approve %d %v, reject %d %v", round, aStatus, aBody, rStatus, rBody)
		}
		if s := e.approvalStatus(apID); (s == "sent") != (aStatus == 200) {
			t.Fatalf("round %d: approval is %s", round, s)
		}
	}
	t.Logf("winners %v", wins)
}

// The policy is evaluated again, whole, at approval: whatever no longer
// fits is rejected by the system with policy_violation_at_approval and the
// rule, and nothing is signed.
func TestApprovalReevaluatesPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	_, key2 := e.adminKey()
	allowed := newAddress()
	cases := []struct {
		name   string
		change func(e *env, walletID string) // between parking and approving
		rule   string
	}{
		{"day used up by other sends", func(e *env, w string) {
			for range 2 {
				if status, body := e.do("POST", fmt.Sprintf(sendPath, w), e.key, map[string]any{"to": allowed, "amount": 9}); status != 200 {
					e.t.Fatalf("small send: %d %v", status, body)
				}
			}
		}, "exceeds_daily_limit"},
		{"daily limit lowered", func(e *env, w string) { e.patchPolicy(w, map[string]any{"daily_limit_usdc": 19.99}) }, "exceeds_daily_limit"},
		{"max per send lowered", func(e *env, w string) { e.patchPolicy(w, map[string]any{"max_tx_usdc": 15}) }, "exceeds_max_tx"},
		{"recipient dropped from the allowlist", func(e *env, w string) {
			e.patchPolicy(w, map[string]any{"allowlist": []string{newAddress()}})
		}, "recipient_not_allowed"},
		{"wallet frozen", func(e *env, w string) {
			if status, body := e.do("POST", "/api/public/v1/agents/"+w+"/freeze", e.key, nil); status != 200 {
				e.t.Fatalf("freeze: %d %v", status, body)
			}
		}, "wallet_frozen"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := e.with(t)
			id, _ := e.agent(map[string]any{"daily_limit_usdc": 30, "max_tx_usdc": 25, "approval_threshold_usdc": 10}, 100_000_000)
			apID := e.park(id, allowed, 20)
			c.change(e, id)
			status, a := e.approve(apID, key2, nil)
			if status != 200 || a["status"] != "rejected" || a["reason"] != "policy_violation_at_approval" || a["reason_detail"] != c.rule ||
				a["rejected_by"] != "system" || a["signature"] != nil {
				t.Fatalf("approve: %d %v", status, a)
			}
			if n := e.transactionsOfApproval(apID); n != 0 {
				t.Fatalf("%d transactions", n)
			}
			var found bool
			for _, en := range e.auditOf(audit.ActionApprovalRejected) {
				d := details(t, en)
				if d["approval_id"] == apID {
					found = en.Actor == "system" && d["reason"] == "policy_violation_at_approval" && d["detail"] == c.rule
				}
			}
			if !found {
				t.Fatal("no system approval.rejected audit entry with policy_violation_at_approval")
			}
			var ev map[string]any
			for _, x := range e.events("approval.rejected") {
				if x["approval_id"] == apID {
					ev = x
				}
			}
			if ev == nil || ev["rejected_by"] != "system" || ev["reason"] != "policy_violation_at_approval" {
				t.Fatalf("approval.rejected event %v", ev)
			}
		})
	}
}

func (e *env) patchPolicy(walletID string, p map[string]any) map[string]any {
	e.t.Helper()
	status, body := e.do("PATCH", "/api/public/v1/agents/"+walletID+"/policy", e.key, p)
	if status != 200 {
		e.t.Fatalf("patch policy: %d %v", status, body)
	}
	return body
}

// An approval pending past its lifetime is expired by the sweep (an
// injected clock, not a wait), with its event and audit entry, and cannot
// be approved; one past its lifetime that no sweep reached yet is expired
// by the approve itself.
func TestExpiredApprovalCannotBeApproved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	to := newAddress()
	_, key2 := e.adminKey()
	apID := e.park(id, to, 1)

	ctx := context.Background()
	st, err := approval.Sweep(ctx, e.db, time.Now().Add(approval.Lifetime-time.Minute), approval.AbandonedAfter)
	if err != nil || st.Expired != 0 {
		t.Fatalf("sweep before the lifetime: %+v %v", st, err)
	}
	st, err = approval.Sweep(ctx, e.db, time.Now().Add(approval.Lifetime+time.Minute), approval.AbandonedAfter)
	if err != nil || st.Expired != 1 {
		t.Fatalf("sweep after the lifetime: %+v %v", st, err)
	}
	status, body := e.approve(apID, key2, nil)
	wantError(t, status, body, http.StatusConflict, "approval is expired, not pending")
	if ev := e.events("approval.expired"); len(ev) != 1 || ev[0]["approval_id"] != apID {
		t.Fatalf("approval.expired events %v", ev)
	}
	if es := e.auditOf(audit.ActionApprovalExpired); len(es) != 1 || es[0].Actor != "system" {
		t.Fatalf("audit %v", es)
	}

	// Past its lifetime, not swept yet.
	late := e.park(id, to, 1)
	lateID, _ := approval.ParseID(late)
	if _, err := e.db.NewUpdate().Table("approvals").Set("expires_at = now() - interval '1 second'").Where("id = ?", lateID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	status, body = e.approve(late, key2, nil)
	wantError(t, status, body, http.StatusConflict, "approval is expired, not pending")
	if s := e.approvalStatus(late); s != "expired" {
		t.Fatalf("status %s", s)
	}
	if n := e.transactionsOfApproval(apID) + e.transactionsOfApproval(late); n != 0 {
		t.Fatalf("%d transactions", n)
	}
}

// With no worker the approve answers 503 within its wait and the approval
// is pending again, nothing signed; once a worker runs, approving again
// pays once.
func TestApproveWithoutWorkerStaysPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{sendWait: 500 * time.Millisecond})
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	to := newAddress()
	// Parking needs a worker; approving gets none.
	_, stop := e.startWorker()
	apID := e.park(id, to, 1)
	stop()
	_, key2 := e.adminKey()

	status, body := e.approve(apID, key2, nil)
	wantError(t, status, body, http.StatusServiceUnavailable, "still pending")
	if s := e.approvalStatus(apID); s != "pending" {
		t.Fatalf("status %s", s)
	}
	eng, _ := e.startWorker()
	status, a := e.approve(apID, key2, nil)
	if status != 200 || a["status"] != "sent" {
		t.Fatalf("approve with a worker: %d %v", status, a)
	}
	e.paidOnce(eng, apID, a["signature"].(string), to, 1_000_000)
}

// An approve whose process died between its two steps leaves the approval
// signing with nothing signed; the sweep returns it to pending once it is
// older than any approve waits.
func TestSweepReleasesAbandonedApprove(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	apID := e.park(id, newAddress(), 1)
	uid, _ := approval.ParseID(apID)
	ctx := context.Background()
	if _, err := approval.Start(ctx, e.db, e.account.ID, uid, "key_other", nil, nil); err != nil {
		t.Fatal(err)
	}
	st, err := approval.Sweep(ctx, e.db, time.Now(), approval.AbandonedAfter)
	if err != nil || st.Released != 0 {
		t.Fatalf("early sweep %+v %v", st, err)
	}
	// The database's clock stamped it; age it there.
	if _, err := e.db.NewUpdate().Table("approvals").Set("decided_at = decided_at - ? * interval '1 second'", (approval.AbandonedAfter+time.Second).Seconds()).
		Where("id = ?", uid).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	st, err = approval.Sweep(ctx, e.db, time.Now(), approval.AbandonedAfter)
	if err != nil || st.Released != 1 {
		t.Fatalf("late sweep %+v %v", st, err)
	}
	status, a := e.do("GET", approvalsPath+"/"+apID, e.key, nil)
	if status != 200 || a["status"] != "pending" || a["approved_by"] != nil || a["decided_at"] != nil {
		t.Fatalf("after release: %v", a)
	}
}

// GET /approvals pages newest first with a cursor and filters by status;
// another account's approvals are invisible (404 on every route).
func TestListApprovals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	to := newAddress()
	var ids []string
	for range 3 {
		ids = append(ids, e.park(id, to, 1))
	}
	if status, _ := e.reject(ids[0], e.key, nil); status != 200 {
		t.Fatal("reject")
	}

	status, page := e.do("GET", approvalsPath+"?limit=2", e.key, nil)
	list := page["approvals"].([]any)
	if status != 200 || len(list) != 2 || list[0].(map[string]any)["id"] != ids[2] || list[1].(map[string]any)["id"] != ids[1] || page["next_cursor"] == nil {
		t.Fatalf("first page: %d %v", status, page)
	}
	status, page = e.do("GET", approvalsPath+"?limit=2&cursor="+page["next_cursor"].(string), e.key, nil)
	list = page["approvals"].([]any)
	if status != 200 || len(list) != 1 || list[0].(map[string]any)["id"] != ids[0] || page["next_cursor"] != nil {
		t.Fatalf("second page: %d %v", status, page)
	}
	status, page = e.do("GET", approvalsPath+"?status=pending", e.key, nil)
	if list = page["approvals"].([]any); status != 200 || len(list) != 2 {
		t.Fatalf("pending: %d %v", status, page)
	}

	for _, c := range []struct {
		query, want string
		status      int
	}{
		{"?status=approved", "status", 422},
		{"?limit=0", "limit", 422},
		{"?limit=101", "limit", 422},
		{"?cursor=%21%21", "cursor", 400},
		{"?cursor=bm90LWEtY3Vyc29y", "cursor", 400},
	} {
		status, body := e.do("GET", approvalsPath+c.query, e.key, nil)
		wantError(t, status, body, c.status, c.want)
	}

	_, otherKey := e.newAccount("devnet")
	status, page = e.do("GET", approvalsPath, otherKey, nil)
	if status != 200 || len(page["approvals"].([]any)) != 0 {
		t.Fatalf("other account lists %v", page)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", approvalsPath + "/" + ids[1]},
		{"POST", approvalsPath + "/" + ids[1] + "/approve"},
		{"POST", approvalsPath + "/" + ids[1] + "/reject"},
		{"GET", approvalsPath + "/ap_not-a-uuid"},
		{"POST", approvalsPath + "/00000000-0000-4000-8000-000000000000/approve"},
	} {
		status, body := e.do(c.method, c.path, otherKey, nil)
		wantError(t, status, body, 404, "approval not found")
	}
	if s := e.approvalStatus(ids[1]); s != "pending" {
		t.Fatalf("another account's calls changed it: %s", s)
	}
}

// An approved payment the wallet cannot cover is refused by the node's
// preflight: nothing is sent, the approval is rejected by the system
// (refused_by_node) and its reservation released.
func TestApprovalRefusedByNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 1_000_000) // holds 1 USDC
	to := newAddress()
	apID := e.park(id, to, 5)
	_, key2 := e.adminKey()
	status, a := e.approve(apID, key2, nil)
	if status != 200 || a["status"] != "rejected" || a["reason"] != "refused_by_node" || a["rejected_by"] != "system" {
		t.Fatalf("approve: %d %v", status, a)
	}
	// Its transaction holds the day's reservation until its blockhash
	// has expired; it is never sent.
	if r := e.reservedToday(id); r != 5_000_000 {
		t.Fatalf("reserved %d", r)
	}
	if got := e.chainUSDC(to); got != 0 {
		t.Fatalf("recipient holds %d", got)
	}
	if ev := e.events("approval.rejected"); len(ev) != 1 || ev[0]["reason"] != "refused_by_node" {
		t.Fatalf("approval.rejected %v", ev)
	}
	if ev := e.events("approval.approved"); len(ev) != 0 {
		t.Fatalf("approval.approved %v", ev)
	}
	if got := strings.Join(e.auditActions(), ","); got != "wallet.created,send.pending_approval,approval.approved,approval.rejected" {
		t.Fatalf("audit %s", got)
	}
}

// A node failing the first broadcast: the approve answers 202 signing with
// the signature; the sweep re-broadcasts the same bytes, the approval is
// sent once they are accepted, and exactly one transfer reaches the chain.
func TestApprovalBroadcastFailureIsResent(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	to := newAddress()
	apID := e.park(id, to, 4)
	_, key2 := e.adminKey()

	ln.SetFaults(t, localnettest.Faults{FailSends: true})
	status, a := e.approve(apID, key2, nil)
	if status != http.StatusAccepted || a["status"] != "signing" || a["signature"] == nil {
		t.Fatalf("approve: %d %v", status, a)
	}
	if ev := e.events("approval.approved"); len(ev) != 0 {
		t.Fatalf("approval.approved before any broadcast was accepted: %v", ev)
	}
	ln.SetFaults(t, localnettest.Faults{})
	e.paidOnce(eng, apID, a["signature"].(string), to, 4_000_000)
	if s := e.approvalStatus(apID); s != "sent" {
		t.Fatalf("status %s after confirmation", s)
	}
	if ev := e.events("approval.approved"); len(ev) != 1 {
		t.Fatalf("approval.approved %v", ev)
	}
}

// A key made through POST /keys is an agent key: it cannot approve any
// payment (else an agent could mint one and approve its own sends), but
// it may reject.
func TestAgentKeyCannotApprove(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	to := newAddress()
	apID := e.park(id, to, 1)
	agentID, agentKey := e.agentKey()
	status, body := e.approve(apID, agentKey, nil)
	wantError(t, status, body, http.StatusForbidden, "cannot approve")
	if s := e.approvalStatus(apID); s != "pending" {
		t.Fatalf("status %s", s)
	}
	status, a := e.reject(apID, agentKey, nil)
	if status != 200 || a["status"] != "rejected" || a["rejected_by"] != agentID {
		t.Fatalf("reject: %d %v", status, a)
	}
	// Its own sends park like any other and an operator key approves them.
	status, body = e.do("POST", fmt.Sprintf(sendPath, id), agentKey, map[string]any{"to": to, "amount": 1})
	if status != http.StatusAccepted {
		t.Fatalf("send with the agent key: %d %v", status, body)
	}
	if status, a := e.approve(body["approval_id"].(string), e.key, nil); status != 200 || a["status"] != "sent" || a["requested_by"] != agentID {
		t.Fatalf("approve the agent key's send: %d %v", status, a)
	}
}

// An approve racing sends on the same wallet: the decisions serialize on
// the wallet, so the day's total never passes the limit whichever goes
// first, and the chain holds exactly what was reserved.
func TestApproveRacesSendsOnDailyLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	_, key2 := e.adminKey()
	for round := range 3 {
		id, _ := e.agent(map[string]any{"daily_limit_usdc": 30, "max_tx_usdc": 25, "approval_threshold_usdc": 10}, 100_000_000)
		to := newAddress()
		apID := e.park(id, to, 20)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var sigs []string
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			status, a := e.approve(apID, key2, nil)
			if status != 200 || (a["status"] != "sent" && a["status"] != "rejected") {
				t.Errorf("round %d: approve %d %v", round, status, a)
				return
			}
			if a["status"] == "sent" {
				mu.Lock()
				sigs = append(sigs, a["signature"].(string))
				mu.Unlock()
			}
		})
		for range 3 {
			wg.Go(func() {
				<-start
				status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 9})
				switch {
				case status == 200:
					mu.Lock()
					sigs = append(sigs, body["signature"].(string))
					mu.Unlock()
				case status == 403 && body["reason"] == "exceeds_daily_limit":
				default:
					t.Errorf("round %d: send %d %v", round, status, body)
				}
			})
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		reserved := e.reservedToday(id)
		if reserved > 30_000_000 {
			t.Fatalf("round %d: reserved %d over the daily limit", round, reserved)
		}
		for _, sig := range sigs {
			e.settle(eng, sig, payment.TxConfirmed)
		}
		if got := e.chainUSDC(to); got != reserved {
			t.Fatalf("round %d: chain %d, reserved %d", round, got, reserved)
		}
	}
}
