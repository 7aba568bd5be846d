package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/mcpserver"
)

// quorum is an account with people who can approve and a funded wallet
// whose payments park (threshold 0) and need `needed` of them.
type quorum struct {
	*env
	wallet string
	owner  http.Header // the owner's session
	people []http.Header
	addrs  []string // people's addresses, owner first
}

// newQuorum makes an env with an owner and n-1 approvers (sessions) and a
// wallet needing `needed` approvals, set by the owner.
func newQuorum(t *testing.T, n, needed int) *quorum {
	t.Helper()
	e := newEnv(t)
	q := &quorum{env: e}
	for i := range n {
		role := auth.RoleApprover
		if i == 0 {
			role = auth.RoleOwner
		}
		hdr, addr := e.session(role)
		q.people = append(q.people, hdr)
		q.addrs = append(q.addrs, addr)
	}
	q.owner = q.people[0]
	q.wallet, _ = e.agent(map[string]any{"approval_threshold_usdc": 0}, 50_000_000)
	status, body := e.as("PATCH", "/api/public/v1/agents/"+q.wallet+"/policy", "", q.owner, map[string]any{"approvals_required": needed})
	if status != 200 || body["policy"].(map[string]any)["approvals_required"] != float64(needed) {
		t.Fatalf("set approvals_required: %d %v", status, body)
	}
	return q
}

// approveAs approves apID as session hdr (or key).
func (q *quorum) approveAs(apID, key string, hdr http.Header, note string) (int, map[string]any) {
	q.t.Helper()
	var body any
	if note != "" {
		body = map[string]any{"note": note}
	}
	return q.as("POST", approvalsPath+"/"+apID+"/approve", key, hdr, body)
}

// approvePending has each of the people at indexes approve apID, and
// fails the test unless each approve leaves it pending.
func (q *quorum) approvePending(apID string, indexes ...int) {
	q.t.Helper()
	for _, i := range indexes {
		if status, a := q.approveAs(apID, "", q.people[i], ""); status != 200 || a["status"] != "pending" {
			q.t.Fatalf("approve by person %d: %d %v", i, status, a)
		}
	}
}

// votes are the `by` of an approval's approvals.
func votes(a map[string]any) []string {
	var by []string
	for _, v := range a["approvals"].([]any) {
		by = append(by, v.(map[string]any)["by"].(string))
	}
	return by
}

// One approver's approve leaves the approval pending with 1 of 2 (an
// approval.vote event, an approval.voted audit entry, nothing signed);
// the requester's own approve is refused; the same person cannot approve
// twice; a second person's approve sends it once, on chain, with one
// approval.approved event that lists both approves.
func TestQuorum_TwoOfThree(t *testing.T) {
	t.Parallel()
	q := newQuorum(t, 3, 2)
	eng, _ := q.startWorker()
	requester, b, c := q.people[0], q.people[1], q.people[2]
	to := newAddress()
	status, sent := q.as("POST", fmt.Sprintf(sendPath, q.wallet), "", requester, map[string]any{"to": to, "amount": 4})
	if status != http.StatusAccepted || sent["status"] != "pending_approval" {
		t.Fatalf("send: %d %v", status, sent)
	}
	apID := sent["approval_id"].(string)
	if p := q.events("approval.pending"); len(p) != 1 || p[0]["approvals_needed"] != 2.0 || len(p[0]["approvals"].([]any)) != 0 {
		t.Fatalf("approval.pending %v", p)
	}
	_, a := q.do("GET", approvalsPath+"/"+apID, q.key, nil)
	if a["approvals_needed"] != 2.0 || len(a["approvals"].([]any)) != 0 {
		t.Fatalf("approval %v", a)
	}

	q.approveRefusedToRequester(apID, "", requester, "user:"+q.addrs[0])

	status, a = q.approveAs(apID, "", b, "looks right")
	if status != 200 || a["status"] != "pending" || a["approvals_needed"] != 2.0 || a["approved_by"] != nil || a["decided_at"] != nil {
		t.Fatalf("first approve: %d %v", status, a)
	}
	v := a["approvals"].([]any)
	if len(v) != 1 || v[0].(map[string]any)["by"] != "user:"+q.addrs[1] || v[0].(map[string]any)["person"] != "user:"+q.addrs[1] ||
		v[0].(map[string]any)["note"] != "looks right" || v[0].(map[string]any)["at"] == nil {
		t.Fatalf("approvals %v", v)
	}
	if n := q.transactionsOfApproval(apID); n != 0 {
		t.Fatalf("%d transactions after one of two approves", n)
	}
	if ev := q.events("approval.vote"); len(ev) != 1 || ev[0]["approval_id"] != apID || ev[0]["by"] != "user:"+q.addrs[1] ||
		ev[0]["approvals_needed"] != 2.0 || len(ev[0]["approvals"].([]any)) != 1 {
		t.Fatalf("approval.vote events %v", ev)
	}
	if ev := q.events("approval.approved"); len(ev) != 0 {
		t.Fatalf("approval.approved after one approve: %v", ev)
	}
	if es := q.auditOf(audit.ActionApprovalVoted); len(es) != 1 || es[0].Actor != "user:"+q.addrs[1] || es[0].Target != "approval:"+apID ||
		details(t, es[0])["approvals"] != 1.0 || details(t, es[0])["approvals_needed"] != 2.0 || details(t, es[0])["note"] != "looks right" {
		t.Fatalf("approval.voted entries %v", es)
	}
	// Listed as it stands, and agent keys read the person by kind only.
	_, list := q.do("GET", approvalsPath+"?status=pending", q.key, nil)
	if l := list["approvals"].([]any); len(l) != 1 || !slices.Equal(votes(l[0].(map[string]any)), []string{"user:" + q.addrs[1]}) {
		t.Fatalf("list %v", list)
	}
	_, agentKey := q.agentKey()
	if _, seen := q.do("GET", approvalsPath+"/"+apID, agentKey, nil); !slices.Equal(votes(seen), []string{"user"}) ||
		seen["approvals"].([]any)[0].(map[string]any)["person"] != "user" {
		t.Fatalf("an agent key reads %v", seen["approvals"])
	}

	// The same person again: refused, nothing changes.
	status, body := q.approveAs(apID, "", b, "")
	wantError(t, status, body, http.StatusConflict, "you already approved this payment")
	if _, a := q.do("GET", approvalsPath+"/"+apID, q.key, nil); len(a["approvals"].([]any)) != 1 || a["status"] != "pending" {
		t.Fatalf("after a second approve by the same person: %v", a)
	}

	status, a = q.approveAs(apID, "", c, "")
	if status != 200 || a["status"] != "sent" || a["approved_by"] != "user:"+q.addrs[2] || a["approvals_needed"] != 2.0 ||
		!slices.Equal(votes(a), []string{"user:" + q.addrs[1], "user:" + q.addrs[2]}) {
		t.Fatalf("second approve: %d %v", status, a)
	}
	q.paidOnce(eng, apID, a["signature"].(string), to, 4_000_000)
	ev := q.events("approval.approved")
	if len(ev) != 1 || ev[0]["approvals_needed"] != 2.0 || len(ev[0]["approvals"].([]any)) != 2 {
		t.Fatalf("approval.approved events %v", ev)
	}
	if n := len(q.events("approval.vote")); n != 1 {
		t.Fatalf("%d approval.vote events: the last approve is approval.approved only", n)
	}
	if es := q.auditOf(audit.ActionApprovalApproved); len(es) != 1 || es[0].Actor != "user:"+q.addrs[2] ||
		len(details(t, es[0])["approvals"].([]any)) != 2 {
		t.Fatalf("approval.approved entries %v", es)
	}
	status, body = q.approveAs(apID, "", b, "")
	wantError(t, status, body, http.StatusConflict, "approval is sent, not pending")
}

// Two people approving at the same instant, and a third racing them, send
// it once: with no approve yet, one of them is the first of two, one
// completes it and the third finds it decided; with one approve already,
// one of the two completes it and the other finds it decided.
func TestQuorum_ConcurrentApprovesSendOnce(t *testing.T) {
	t.Parallel()
	q := newQuorum(t, 4, 2)
	eng, _ := q.startWorker()
	for round, racers := range [][]http.Header{q.people[1:4], q.people[2:4]} {
		to := newAddress()
		apID := q.park(q.wallet, to, 2)
		if round == 1 {
			q.approvePending(apID, 1)
		}
		var mu sync.Mutex
		var answers []string
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, hdr := range racers {
			wg.Go(func() {
				<-start
				status, a := q.approveAs(apID, "", hdr, "")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case status == 200:
					answers = append(answers, a["status"].(string))
				case status == http.StatusConflict:
					answers = append(answers, "409")
				default:
					answers = append(answers, fmt.Sprintf("%d %v", status, a))
				}
			})
		}
		close(start)
		wg.Wait()
		slices.Sort(answers)
		want := []string{"409", "pending", "sent"}
		if round == 1 {
			want = []string{"409", "sent"}
		}
		if !slices.Equal(answers, want) {
			t.Fatalf("round %d: answers %v, want %v", round, answers, want)
		}
		_, a := q.do("GET", approvalsPath+"/"+apID, q.key, nil)
		if a["status"] != "sent" || len(a["approvals"].([]any)) != 2 {
			t.Fatalf("round %d: approval %v", round, a)
		}
		q.paidOnce(eng, apID, a["signature"].(string), to, 2_000_000)
	}
	if n := len(q.events("approval.approved")); n != 2 {
		t.Fatalf("%d approval.approved events for 2 approvals", n)
	}
}

// One reject after one approve closes it: rejected_by the rejecter, the
// approve kept on the record, nothing signed, one approval.rejected event
// naming both.
func TestQuorum_RejectAfterOneApprove(t *testing.T) {
	t.Parallel()
	q := newQuorum(t, 3, 2)
	q.startWorker()
	apID := q.park(q.wallet, newAddress(), 3)
	q.approvePending(apID, 1)
	status, a := q.as("POST", approvalsPath+"/"+apID+"/reject", "", q.people[2], map[string]any{"note": "not this vendor"})
	if status != 200 || a["status"] != "rejected" || a["rejected_by"] != "user:"+q.addrs[2] || a["approved_by"] != nil ||
		!slices.Equal(votes(a), []string{"user:" + q.addrs[1]}) || a["approvals_needed"] != 2.0 {
		t.Fatalf("reject: %d %v", status, a)
	}
	if n := q.transactionsOfApproval(apID); n != 0 {
		t.Fatalf("%d transactions for a rejected approval", n)
	}
	if ev := q.events("approval.rejected"); len(ev) != 1 || ev[0]["rejected_by"] != "user:"+q.addrs[2] || len(ev[0]["approvals"].([]any)) != 1 {
		t.Fatalf("approval.rejected events %v", ev)
	}
	status, body := q.approveAs(apID, "", q.people[0], "")
	wantError(t, status, body, http.StatusConflict, "approval is rejected, not pending")
}

// An admin key counts as the person who made it, once: the person who
// approved in the dashboard cannot approve again with their key (nor with
// a key that key made), and a key made on the command line belongs to no
// person, so it cannot approve a payment that needs several. Another
// person's key completes it.
func TestQuorum_AdminKeyCountsAsItsCreator(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	q := &quorum{env: e}
	for range 3 {
		hdr, addr := e.session(auth.RoleOwner)
		q.people, q.addrs = append(q.people, hdr), append(q.addrs, addr)
	}
	q.owner = q.people[0]
	eng, _ := q.startWorker()
	q.wallet, _ = e.agent(map[string]any{"approval_threshold_usdc": 0, "approvals_required": 3}, 50_000_000)
	to := newAddress()
	apID := q.park(q.wallet, to, 5)

	_, bKey, _ := q.mint("", q.people[1], map[string]any{"role": "admin"})
	_, bGrandKey, _ := q.mint(bKey, nil, map[string]any{"role": "admin"})
	cKeyID, cKey, _ := q.mint("", q.people[2], map[string]any{"role": "admin"})

	q.approvePending(apID, 1)
	for _, key := range []string{bKey, bGrandKey} {
		status, body := q.approveAs(apID, key, nil, "")
		wantError(t, status, body, http.StatusConflict, "you already approved this payment (as user:"+q.addrs[1]+")")
	}
	_, cli := q.adminKey()
	status, body := q.approveAs(apID, cli, nil, "")
	wantError(t, status, body, http.StatusForbidden, "this admin key was made on the command line")
	if d := q.auditOf(audit.ActionPermissionDenied); len(d) != 1 || details(t, d[len(d)-1])["operation"] != "approve" {
		t.Fatalf("permission.denied entries %v", d)
	}

	status, a := q.approveAs(apID, cKey, nil, "")
	if status != 200 || a["status"] != "pending" {
		t.Fatalf("C's key: %d %v", status, a)
	}
	v := a["approvals"].([]any)[1].(map[string]any)
	if v["by"] != cKeyID || v["person"] != "user:"+q.addrs[2] {
		t.Fatalf("C's key's approve %v", v)
	}
	// C in the dashboard: already counted through the key.
	status, body = q.approveAs(apID, "", q.people[2], "")
	wantError(t, status, body, http.StatusConflict, "you already approved this payment (as "+cKeyID+")")

	status, a = q.approveAs(apID, "", q.people[0], "")
	if status != 200 || a["status"] != "sent" || !slices.Equal(votes(a), []string{"user:" + q.addrs[1], cKeyID, "user:" + q.addrs[0]}) {
		t.Fatalf("third person: %d %v", status, a)
	}
	q.paidOnce(eng, apID, a["signature"].(string), to, 5_000_000)
}

// approvals_required is 1 to the account's owners and approvers (422
// otherwise, naming the field, on create and on change); an agent key may
// raise it but not lower it (403, nothing changes); an owner may lower it.
// A policy whose people have since left stays editable in its other
// fields.
func TestQuorum_Validation(t *testing.T) {
	t.Parallel()
	q := newQuorum(t, 3, 2)
	policyPath := "/api/public/v1/agents/" + q.wallet + "/policy"
	for _, bad := range []any{0, 4, -1, 1001, "2"} {
		status, body := q.do("PATCH", policyPath, q.key, map[string]any{"approvals_required": bad})
		if status != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(body), "approvals_required") {
			t.Fatalf("approvals_required %v: %d %v", bad, status, body)
		}
	}
	status, body := q.do("PATCH", policyPath, q.key, map[string]any{"approvals_required": 4})
	wantError(t, status, body, http.StatusUnprocessableEntity, "approvals_required: must be 1 to 3: the account has 3 people who can approve")
	status, body = q.do("POST", "/api/public/v1/agents", q.key, map[string]any{"label": "x", "policy": map[string]any{"approvals_required": 4}})
	wantError(t, status, body, http.StatusUnprocessableEntity, "policy.approvals_required: must be 1 to 3")
	// Viewers do not count.
	q.session(auth.RoleViewer)
	status, body = q.do("PATCH", policyPath, q.key, map[string]any{"approvals_required": 4})
	wantError(t, status, body, http.StatusUnprocessableEntity, "must be 1 to 3")
	// An account without people can only need one.
	_, otherKey := q.newAccount("devnet")
	status, body = q.do("POST", "/api/public/v1/agents", otherKey, map[string]any{"label": "x", "policy": map[string]any{"approvals_required": 2}})
	wantError(t, status, body, http.StatusUnprocessableEntity, "must be 1 to 1: the account has 0 people")

	_, agentKey := q.agentKey()
	status, body = q.do("PATCH", policyPath, agentKey, map[string]any{"approvals_required": 3})
	if status != 200 || body["policy"].(map[string]any)["approvals_required"] != 3.0 {
		t.Fatalf("an agent key raises it: %d %v", status, body)
	}
	status, body = q.do("PATCH", policyPath, agentKey, map[string]any{"approvals_required": 2})
	wantError(t, status, body, http.StatusForbidden, "cannot lower the approvals required (approvals_required from 3 to 2)")
	if _, a := q.do("GET", "/api/public/v1/agents/"+q.wallet, q.key, nil); a["policy"].(map[string]any)["approvals_required"] != 3.0 {
		t.Fatalf("after a refused lowering: %v", a["policy"])
	}
	if es := q.auditOf(audit.ActionPolicyUpdated); details(t, es[len(es)-1])["after"].(map[string]any)["approvals_required"] != 3.0 {
		t.Fatalf("policy.updated %v", details(t, es[len(es)-1]))
	}
	// A person leaves: the wallet keeps 3, its other fields stay editable.
	if status, body := q.as("DELETE", usersPath+"/"+q.addrs[2], "", q.owner, nil); status != http.StatusNoContent {
		t.Fatalf("remove: %d %v", status, body)
	}
	if status, body := q.do("PATCH", policyPath, q.key, map[string]any{"daily_limit_usdc": 50}); status != 200 {
		t.Fatalf("edit another field: %d %v", status, body)
	}
	status, body = q.as("PATCH", policyPath, "", q.owner, map[string]any{"approvals_required": 1})
	if status != 200 || body["policy"].(map[string]any)["approvals_required"] != 1.0 {
		t.Fatalf("an owner lowers it: %d %v", status, body)
	}
	// The preview says how many would approve.
	if p := q.previewOf(q.key, q.wallet, 1, map[string]any{"approvals_required": 2}); p["approvals_required"] != 2.0 || p["outcome"] != "pending_approval" {
		t.Fatalf("preview %v", p)
	}
}

// When people leave, their approves on pending approvals no longer count,
// and when fewer people who can approve remain than a wallet requires,
// the quorum is all of them.
func TestQuorum_PeopleLeave(t *testing.T) {
	t.Parallel()
	q := newQuorum(t, 4, 4)
	eng, _ := q.startWorker()
	to := newAddress()
	apID := q.park(q.wallet, to, 1)
	q.approvePending(apID, 1, 2)
	// Person 1 is removed: their approve is withdrawn.
	if status, body := q.as("DELETE", usersPath+"/"+q.addrs[1], "", q.owner, nil); status != http.StatusNoContent {
		t.Fatalf("remove: %d %v", status, body)
	}
	_, a := q.do("GET", approvalsPath+"/"+apID, q.key, nil)
	if !slices.Equal(votes(a), []string{"user:" + q.addrs[2]}) || a["approvals_needed"] != 3.0 {
		t.Fatalf("after a removal: %v", a)
	}
	if es := q.auditOf(audit.ActionUserRemoved); details(t, es[0])["approvals_withdrawn"] != 1.0 {
		t.Fatalf("user.removed %v", details(t, es[0]))
	}
	// Person 3 becomes a viewer: two people remain, both must approve.
	if status, body := q.as("PATCH", usersPath+"/"+q.addrs[3], "", q.owner, map[string]any{"role": "viewer"}); status != 200 {
		t.Fatalf("demote: %d %v", status, body)
	}
	if status, body := q.approveAs(apID, "", q.people[3], ""); status != http.StatusForbidden { // viewers may not approve at all
		t.Fatalf("a viewer approves: %d %v", status, body)
	}
	_, a = q.do("GET", approvalsPath+"/"+apID, q.key, nil)
	if a["approvals_needed"] != 2.0 {
		t.Fatalf("quorum with two people left: %v", a)
	}
	status, a := q.approveAs(apID, "", q.owner, "")
	if status != 200 || a["status"] != "sent" || a["approvals_needed"] != 2.0 {
		t.Fatalf("the owner completes it: %d %v", status, a)
	}
	q.paidOnce(eng, apID, a["signature"].(string), to, 1_000_000)
}

// Slack clicks count as the person their member is linked to (PATCH
// /users: slack_user_id); an unlinked member's approve is refused while
// several are needed; each vote replaces the message with the count and
// keeps the buttons; a second click of the same person answers where it
// stands; the same person in the dashboard is refused; the last click
// sends it.
func TestQuorum_SlackClicksCountAsTheLinkedPerson(t *testing.T) {
	t.Parallel()
	q := newQuorum(t, 3, 2)
	eng, _ := q.startWorker()
	slack := newReceiver(t, nil)
	responses := newReceiver(t, nil)
	if status, ep := q.do("POST", endpointsPath, q.key, map[string]any{"url": slack.URL, "format": "slack",
		"events": []string{"approval.pending", "approval.vote"}}); status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, ep)
	}
	slack.next(t, "webhook.test")
	for i, member := range []string{"", "U0BEE", "U0SEA"} {
		if member == "" {
			continue
		}
		status, u := q.as("PATCH", usersPath+"/"+q.addrs[i], "", q.owner, map[string]any{"slack_user_id": member})
		if status != 200 || u["slack_user_id"] != member || u["role"] != "approver" {
			t.Fatalf("link %s: %d %v", member, status, u)
		}
	}
	status, body := q.as("PATCH", usersPath+"/"+q.addrs[0], "", q.owner, map[string]any{"slack_user_id": "U0BEE"})
	wantError(t, status, body, http.StatusConflict, "already linked to another user")
	status, body = q.as("PATCH", usersPath+"/"+q.addrs[0], "", q.owner, map[string]any{"slack_user_id": "not an id"})
	wantError(t, status, body, http.StatusUnprocessableEntity, "slack_user_id")

	to := newAddress()
	apID := q.park(q.wallet, to, 3)
	var m struct {
		Text   string
		Blocks []struct {
			Text     struct{ Text string }
			Elements []struct{ Value string }
		}
	}
	if msg := slack.next(t, "approval.pending"); json.Unmarshal(msg.Body, &m) != nil || len(m.Blocks) != 2 || !strings.Contains(m.Blocks[0].Text.Text, "0 of 2 approvals") {
		t.Fatalf("slack message %s", msg.Body)
	}
	button := m.Blocks[1].Elements[0].Value
	now := time.Now()
	click := func(member string) string {
		t.Helper()
		if status := q.slackClick(button, "approve", "T0HUMANS", member, responses.URL, now, slackSecret); status != 200 {
			t.Fatalf("click by %s: %d", member, status)
		}
		now = now.Add(time.Second) // another signature: not a replay
		return string(responses.any(t).Body)
	}

	if r := click("U0NOBODY"); !strings.Contains(r, "Nothing changed") || !strings.Contains(r, "linked to no person") || strings.Contains(r, `"replace_original":true`) {
		t.Fatalf("unlinked member: %s", r)
	}
	r := click("U0BEE")
	var upd struct {
		Replace bool `json:"replace_original"`
		Blocks  []struct {
			Text     struct{ Text string }
			Elements []struct{ Value string }
		}
	}
	if err := json.Unmarshal([]byte(r), &upd); err != nil || !upd.Replace || len(upd.Blocks) != 2 ||
		!strings.Contains(upd.Blocks[0].Text.Text, "1 of 2 approvals: <@U0BEE>") || upd.Blocks[1].Elements[0].Value != button {
		t.Fatalf("after the first click: %s", r)
	}
	if ev := slack.next(t, "approval.vote"); !strings.Contains(string(ev.Body), "1 of 2 approvals") {
		t.Fatalf("approval.vote message %s", ev.Body)
	}
	_, a := q.do("GET", approvalsPath+"/"+apID, q.key, nil)
	if a["status"] != "pending" || !slices.Equal(votes(a), []string{"slack:U0BEE"}) || a["approvals"].([]any)[0].(map[string]any)["person"] != "user:"+q.addrs[1] {
		t.Fatalf("after the first click: %v", a)
	}
	if r := click("U0BEE"); !strings.Contains(r, "You already approved it") || !strings.Contains(r, "1 of 2 approvals") {
		t.Fatalf("second click of the same person: %s", r)
	}
	status, body = q.approveAs(apID, "", q.people[1], "")
	wantError(t, status, body, http.StatusConflict, "you already approved this payment (as slack:U0BEE)")

	if r := click("U0SEA"); !strings.Contains(r, "Approved by <@U0SEA> (2 of 2 approvals) and sent") {
		t.Fatalf("last click: %s", r)
	}
	_, a = q.do("GET", approvalsPath+"/"+apID, q.key, nil)
	if a["status"] != "sent" || !slices.Equal(votes(a), []string{"slack:U0BEE", "slack:U0SEA"}) {
		t.Fatalf("sent approval %v", a)
	}
	q.paidOnce(eng, apID, a["signature"].(string), to, 3_000_000)
}

// The quorum lowered after approves were cast: the next approve, even by
// someone who approved, completes it.
func TestQuorum_LoweredCompletes(t *testing.T) {
	t.Parallel()
	q := newQuorum(t, 3, 3)
	eng, _ := q.startWorker()
	to := newAddress()
	apID := q.park(q.wallet, to, 1)
	q.approvePending(apID, 1, 2)
	if status, body := q.as("PATCH", "/api/public/v1/agents/"+q.wallet+"/policy", "", q.owner, map[string]any{"approvals_required": 2}); status != 200 {
		t.Fatalf("lower: %d %v", status, body)
	}
	status, a := q.approveAs(apID, "", q.people[1], "")
	if status != 200 || a["status"] != "sent" || a["approvals_needed"] != 2.0 || len(a["approvals"].([]any)) != 2 {
		t.Fatalf("approve after lowering: %d %v", status, a)
	}
	q.paidOnce(eng, apID, a["signature"].(string), to, 1_000_000)
}

// The Go client sets and reads approvals_required, links a Slack member,
// and reads an approval's approves; the MCP tools show the quorum
// (get_wallet_info) and where an approval stands (get_approval_status).
func TestQuorum_GoClientAndMCPTools(t *testing.T) {
	t.Parallel()
	q := newQuorum(t, 3, 2)
	q.startWorker()
	ctx := context.Background()
	admin := client.New(q.url, q.key, client.WithRetries(0))
	a, err := admin.UpdatePolicy(ctx, q.wallet, client.PolicyInput{ApprovalsRequired: 3})
	if err != nil || a.Policy.ApprovalsRequired != 3 {
		t.Fatalf("update: %+v %v", a, err)
	}
	if _, err := admin.UpdatePolicy(ctx, q.wallet, client.PolicyInput{ApprovalsRequired: 4}); err == nil || !strings.Contains(err.Error(), "must be 1 to 3") {
		t.Fatalf("over the people: %v", err)
	}
	if _, err := admin.UpdatePolicy(ctx, q.wallet, client.PolicyInput{ApprovalsRequired: 2}); err != nil {
		t.Fatal(err)
	}
	u, err := admin.LinkSlackMember(ctx, q.addrs[1], "U0LINKED")
	if err != nil || u.SlackUserID == nil || *u.SlackUserID != "U0LINKED" || u.Role != "approver" {
		t.Fatalf("link: %+v %v", u, err)
	}
	if u, err = admin.LinkSlackMember(ctx, q.addrs[1], ""); err != nil || u.SlackUserID != nil {
		t.Fatalf("unlink: %+v %v", u, err)
	}
	apID := q.park(q.wallet, newAddress(), 1)
	if status, _ := q.approveAs(apID, "", q.people[1], "ok"); status != 200 {
		t.Fatalf("approve: %d", status)
	}
	got, err := admin.GetApproval(ctx, apID)
	if err != nil || got.ApprovalsNeeded != 2 || len(got.Approvals) != 1 || got.Approvals[0].By != "user:"+q.addrs[1] ||
		got.Approvals[0].Person == nil || got.Approvals[0].Note == nil || *got.Approvals[0].Note != "ok" {
		t.Fatalf("get: %+v %v", got, err)
	}

	_, agentKey := q.agentKey()
	serverT, clientT := mcp.NewInMemoryTransports()
	if _, err := mcpserver.New(client.New(q.url, agentKey), "https://wallet.example.com").Connect(ctx, serverT, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, info := call(t, cs, "get_wallet_info", map[string]any{"wallet_id": q.wallet})
	if p := info["policy"].(map[string]any); p["approvals_required"] != 2.0 {
		t.Fatalf("wallet info: %v", info)
	}
	_, st := call(t, cs, "get_approval_status", map[string]any{"approval_id": apID})
	votes := st["approvals"].([]any)
	if st["status"] != "pending" || st["approvals_needed"] != 2.0 || len(votes) != 1 || votes[0].(map[string]any)["by"] != "user" ||
		!strings.Contains(st["next"].(string), "1 of 2 people have approved") {
		t.Fatalf("get_approval_status: %v", st)
	}
}
