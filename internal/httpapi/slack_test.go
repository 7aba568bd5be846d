package httpapi_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
)

// A memo with a line break, another control character or an invisible one
// is refused (422 naming memo) by the send and its preview before anything
// is recorded; in Slack, what agents and people wrote (label, memo)
// reaches the channel only inside plain_text objects, where `*…*` and
// mentions are inert, and never in the notification fallback.
func TestSlack_MemoCannotForgeLines(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	slack := newReceiver(t, nil)
	if status, ep := e.do("POST", endpointsPath, e.key, map[string]any{"url": slack.URL, "format": "slack",
		"events": []string{"approval.pending"}}); status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %v", status, ep)
	}
	slack.next(t, "webhook.test")
	status, w := e.do("POST", agentsPath, e.key, map[string]any{"label": "*payroll* <!channel>", "policy": map[string]any{"approval_threshold_usdc": 0, "max_tx_usdc": 5000, "daily_limit_usdc": 5000}})
	if status != http.StatusCreated {
		t.Fatalf("create agent: %d %v", status, w)
	}
	id := w["id"].(string)
	e.ln.SetLamports(t, w["pubkey"].(string), 1_000_000_000)
	to := newAddress()

	before := e.stableSnapshot()
	for name, memo := range map[string]string{
		"forged line": "invoice 7\nApproval needed: 0.50 USDC … verified by finance", "carriage return": "a\rb", "tab": "a\tb",
		"escape": "a\x1b[31mb", "DEL": "a\x7fb", "C1 control": "a\u0085b", "RLO": "a\u202eb", "zero-width space": "a\u200bb",
		"BOM": "a\ufeffb", "line separator": "a\u2028b", "paragraph separator": "a\u2029b",
	} {
		for _, path := range []string{sendPath, sendPath + "/preview"} {
			status, body := e.do("POST", fmt.Sprintf(path, id), e.key, map[string]any{"to": to, "amount": 2500, "memo": memo})
			if status != http.StatusUnprocessableEntity || !strings.HasPrefix(fmt.Sprint(body["error"]), "memo: ") {
				t.Errorf("%s memo to %s: %d %v", name, path, status, body)
			}
		}
	}
	if after := e.stableSnapshot(); !maps.Equal(before, after) {
		t.Fatalf("refused memos changed %v into %v", before, after)
	}

	// Markup in a memo and a label is text, not formatting.
	const memo = "*verified by finance* <!channel> <https://evil.example|invoice>"
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 2500, "memo": memo})
	if status != http.StatusAccepted {
		t.Fatalf("send: %d %v", status, body)
	}
	msg := slack.next(t, "approval.pending")
	var m map[string]any
	if err := json.Unmarshal(msg.Body, &m); err != nil {
		t.Fatalf("slack message %s: %v", msg.Body, err)
	}
	for _, text := range []string{"verified by finance", "payroll"} {
		if strings.Contains(fmt.Sprint(m["text"]), text) {
			t.Errorf("the fallback text carries %q: %q", text, m["text"])
		}
		var found []string
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if s, ok := v["text"].(string); ok && strings.Contains(s, text) {
					found = append(found, fmt.Sprint(v["type"]))
					if v["type"] != "plain_text" || v["emoji"] != false {
						t.Errorf("%q in a %v object: %v", text, v["type"], v)
					}
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
		walk(m["blocks"])
		if len(found) != 1 {
			t.Errorf("%q is in %d text objects of %s", text, len(found), msg.Body)
		}
	}
}

// A Slack endpoint's URL is a credential for the approvers' channel:
// owners and admin keys read it whole, viewers and approvers masked
// (scheme, host, the path's last 4 characters) in every answer that
// carries it. A JSON endpoint's URL is shown to all of them.
func TestSlack_URLMaskedForViewersAndApprovers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	slack := newReceiver(t, nil)
	slackURL := slack.URL + "/services/T0SECRET/B0SECRET/XXXXSECRETabcd"
	status, ep := e.do("POST", endpointsPath, e.key, map[string]any{"url": slackURL, "format": "slack", "events": []string{"approval.pending"}})
	if status != http.StatusCreated || ep["url"] != slackURL {
		t.Fatalf("create: %d %v", status, ep)
	}
	slack.next(t, "webhook.test")
	plain := newReceiver(t, nil)
	jsonID, _ := e.createEndpoint(plain.URL+"/hooks/x", "tx.sent")
	wallet, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	apID := e.park(wallet, newAddress(), 1)
	slack.next(t, "approval.pending")
	masked := slack.URL + "/…/abcd"
	epID := ep["id"].(string)

	owner, _ := e.session(auth.RoleOwner)
	approver, _ := e.session(auth.RoleApprover)
	viewer, _ := e.session(auth.RoleViewer)
	for _, who := range []struct {
		name string
		key  string
		hdr  http.Header
		want string
	}{
		{"admin key", e.key, nil, slackURL}, {"owner", "", owner, slackURL},
		{"approver", "", approver, masked}, {"viewer", "", viewer, masked},
	} {
		get := func(path string) map[string]any {
			t.Helper()
			status, raw, _ := e.request("GET", path, who.key, nil, who.hdr)
			var body map[string]any
			if err := json.Unmarshal(raw, &body); status != 200 || err != nil {
				t.Fatalf("%s GET %s: %d %s", who.name, path, status, raw)
			}
			if who.want == masked && strings.Contains(string(raw), "SECRET") {
				t.Errorf("%s GET %s carries the URL: %s", who.name, path, raw)
			}
			return body
		}
		list := get(endpointsPath)["endpoints"].([]any)
		urls := map[string]any{}
		for _, x := range list {
			urls[x.(map[string]any)["id"].(string)] = x.(map[string]any)["url"]
		}
		if urls[epID] != who.want || urls[jsonID] != plain.URL+"/hooks/x" {
			t.Errorf("%s list: %v", who.name, urls)
		}
		if got := get(endpointsPath + "/" + epID)["url"]; got != who.want {
			t.Errorf("%s get: %v", who.name, got)
		}
		ds := get(approvalsPath + "/" + apID + "/context")["webhook"].(map[string]any)["deliveries"].([]any)
		if len(ds) != 1 || ds[0].(map[string]any)["url"] != who.want {
			t.Errorf("%s approval context deliveries: %v", who.name, ds)
		}
		for _, d := range e.deliveries(e.key, epID, "") {
			get("/api/public/v1/deliveries/" + d["id"].(string))
		}
		get(endpointsPath + "/" + epID + "/deliveries")
		get("/api/public/v1/audit-log")
	}
	// Those who may change it read it in the change's answer.
	status, raw, _ := e.request("PATCH", endpointsPath+"/"+epID, "", map[string]any{"description": "approvals"}, owner)
	if status != 200 || !strings.Contains(string(raw), `"url":"`+slackURL+`"`) {
		t.Fatalf("owner's update: %d %s", status, raw)
	}
	for _, hdr := range []http.Header{approver, viewer} {
		status, raw, _ := e.request("PATCH", endpointsPath+"/"+epID, "", map[string]any{"description": "x"}, hdr)
		if status != http.StatusForbidden || strings.Contains(string(raw), "SECRET") {
			t.Fatalf("update by a reader: %d %s", status, raw)
		}
	}
}

// A signed Slack click replayed within the signing window (the same
// timestamp and body) is answered as the first one was and changes
// nothing twice: one approve, one audit entry, one message update. A new
// click (another timestamp) is served as usual.
func TestSlack_ClickReplayChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	slack := newReceiver(t, nil)
	responses := newReceiver(t, nil)
	apID, button := e.slackApproval(slack, map[string]any{"slack_approvers": []string{"U0APPROVER"}})

	at := time.Now()
	if status := e.slackClick(button, "approve", "T0HUMANS", "U0APPROVER", responses.URL, at, slackSecret); status != 200 {
		t.Fatalf("click: %d", status)
	}
	if r := responses.any(t); !strings.Contains(string(r.Body), "Approved by <@U0APPROVER> and sent") {
		t.Fatalf("update %s", r.Body)
	}
	audited := func() int {
		var n int
		if err := e.db.NewRaw("SELECT count(*) FROM audit_log WHERE action LIKE 'approval.%' OR action = 'permission.denied'").Scan(t.Context(), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before, entries := e.stableSnapshot(), audited()
	for range 3 {
		if status := e.slackClick(button, "approve", "T0HUMANS", "U0APPROVER", responses.URL, at, slackSecret); status != 200 {
			t.Fatalf("replayed click: %d", status)
		}
	}
	// A refused click's replay gets the refusal again, and is not audited
	// twice either.
	for range 2 {
		if status := e.slackClick(button, "approve", "T0AGENTS", "U0APPROVER", responses.URL, at, slackSecret); status != 401 {
			t.Fatalf("click from another workspace: %d", status)
		}
	}
	select {
	case r := <-responses.arrive:
		t.Fatalf("a replay updated the message again: %s", r.Body)
	case <-time.After(2 * time.Second):
	}
	if n := audited(); n != entries+1 {
		t.Fatalf("%d approval and refusal entries after the replays, want %d (one refusal)", n, entries+1)
	}
	if len(e.auditOf(audit.ActionPermissionDenied)) != 1 {
		t.Fatalf("permission.denied entries: %v", e.auditOf(audit.ActionPermissionDenied))
	}
	if after := e.stableSnapshot(); !maps.Equal(before, after) {
		t.Fatalf("replays changed %v into %v", before, after)
	}
	e.wantRows("transactions", 1)
	if s := e.approvalStatus(apID); s != "sent" {
		t.Fatalf("approval %s", s)
	}
	// Another click (a new timestamp) is a new request: it is answered
	// (the approval is decided) through response_url.
	if status := e.slackClick(button, "approve", "T0HUMANS", "U0APPROVER", responses.URL, at.Add(time.Second), slackSecret); status != 200 {
		t.Fatalf("new click: %d", status)
	}
	if r := responses.any(t); !strings.Contains(string(r.Body), "Nothing changed") {
		t.Fatalf("new click's update %s", r.Body)
	}
}

// WEBHOOK_ALLOW_PRIVATE lets test accounts' endpoints reach private
// addresses and nothing else: an API configured with it still refuses a
// Slack click whose response_url is not on https://hooks.slack.com/ (400,
// nothing changes); only the tests' own setting points it elsewhere.
func TestSlack_ResponseURLIsAlwaysSlacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	slack := newReceiver(t, nil)
	responses := newReceiver(t, nil)
	apID, button := e.slackApproval(slack, nil)

	// The service as the binaries build it, with WEBHOOK_ALLOW_PRIVATE.
	h, closeOps := httpapi.New(httpapi.Deps{DB: e.db, Redis: e.rdb, WebhookAllowPrivate: true, SlackSigningSecret: slackSecret,
		RateLimits: &ratelimit.Limits{Read: 1000, Write: 1000, Send: 1000}})
	t.Cleanup(closeOps)
	prod := e.with(t)
	prod.url = newTestServer(t, h)
	for _, u := range []string{responses.URL + "/actions/x", "https://hooks.slack.com.evil.example/actions/x", "http://hooks.slack.com/actions/x"} {
		if status := prod.slackClick(button, "approve", "T0HUMANS", "U0APPROVER", u, time.Now(), slackSecret); status != http.StatusBadRequest {
			t.Errorf("response_url %s: %d", u, status)
		}
	}
	select {
	case r := <-responses.arrive:
		t.Fatalf("the service posted to the clicker's response_url: %s", r.Body)
	case <-time.After(time.Second):
	}
	if s := e.approvalStatus(apID); s != "pending" {
		t.Fatalf("refused clicks changed the approval: %s", s)
	}
}

// slackApproval makes a Slack endpoint (with extra fields) posting to
// slack, parks a payment, and answers its approval id and the Approve
// button's value from the message the endpoint received.
func (e *env) slackApproval(slack *receiver, extra map[string]any) (apID, button string) {
	e.t.Helper()
	body := map[string]any{"url": slack.URL, "format": "slack", "events": []string{"approval.pending"}}
	maps.Copy(body, extra)
	if status, ep := e.do("POST", endpointsPath, e.key, body); status != http.StatusCreated {
		e.t.Fatalf("create: %d %v", status, ep)
	}
	slack.next(e.t, "webhook.test")
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	apID = e.park(id, newAddress(), 3)
	var m struct {
		Blocks []struct {
			Elements []struct{ Value string }
		}
	}
	if msg := slack.next(e.t, "approval.pending"); json.Unmarshal(msg.Body, &m) != nil || len(m.Blocks) != 2 {
		e.t.Fatalf("slack message %s", msg.Body)
	}
	return apID, m.Blocks[1].Elements[0].Value
}

// An MPP charge with eight split recipients and a 3000-character realm
// parks for two approvals: the approval keeps the realm clipped like the
// description, and both the message posted to Slack and the one that
// replaces it after the first approve stay within Block Kit's limits,
// naming the seller, what it buys and every recipient with its share.
func TestSlack_MPPApprovalMessagesStayWithinSlacksLimits(t *testing.T) {
	t.Parallel()
	q := newQuorum(t, 2, 2)
	q.startWorker()
	slack := newReceiver(t, nil)
	responses := newReceiver(t, nil)
	if status, ep := q.do("POST", endpointsPath, q.key, map[string]any{"url": slack.URL, "format": "slack",
		"events": []string{"approval.pending"}}); status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %v", status, ep)
	}
	slack.next(t, "webhook.test")
	if status, u := q.as("PATCH", usersPath+"/"+q.addrs[1], "", q.owner, map[string]any{"slack_user_id": "U0BEE"}); status != 200 {
		t.Fatalf("link: %d %v", status, u)
	}
	var splits []map[string]any
	var lines []string
	for i := range 8 {
		to := newAddress()
		splits = append(splits, map[string]any{"recipient": to, "amount": fmt.Sprint(1000 * (i + 1))})
		lines = append(lines, fmt.Sprintf("Also to %s: 0.00%d USDC", to, i+1))
	}
	realm := strings.Repeat("r", 3000)
	charge := strings.Replace(fakeCharge("1000000", splits...), `realm="seller.test"`, `realm="`+realm+`"`, 1)
	status, body := q.mppPay(q.wallet, []string{charge}, "https://seller.test/r", nil)
	if status != http.StatusAccepted || body["status"] != "pending_approval" {
		t.Fatalf("pay: %d %v", status, body)
	}
	apID := body["approval_id"].(string)
	clipped := realm[:255]
	if _, a := q.do("GET", approvalsPath+"/"+apID, q.key, nil); a["realm"] != clipped {
		t.Fatalf("the approval's realm is %d characters", len(fmt.Sprint(a["realm"])))
	}
	check := func(name string, msg []byte) {
		t.Helper()
		var m struct {
			Blocks []struct {
				Text     struct{ Text string }
				Fields   []struct{ Text string }
				Elements []struct{ Value string }
			}
		}
		if err := json.Unmarshal(msg, &m); err != nil || len(m.Blocks) != 2 {
			t.Fatalf("%s: %s %v", name, msg, err)
		}
		s := m.Blocks[0]
		if len(s.Text.Text) > 3000 || len(s.Fields) > 10 {
			t.Errorf("%s: text of %d, %d fields", name, len(s.Text.Text), len(s.Fields))
		}
		var fields []string
		for _, f := range s.Fields {
			if len(f.Text) > 2000 {
				t.Errorf("%s: a field of %d", name, len(f.Text))
			}
			fields = append(fields, f.Text)
		}
		text := strings.Join(fields, "\n")
		for _, want := range append(lines, "Seller says it is: "+clipped, "Buys (MPP): https://seller.test/r") {
			if !strings.Contains(text, want) {
				t.Errorf("%s: no %q in %q", name, want, text)
			}
		}
		for _, e := range m.Blocks[1].Elements {
			if len(e.Value) > 2000 {
				t.Errorf("%s: a button's value of %d", name, len(e.Value))
			}
		}
	}
	msg := slack.next(t, "approval.pending")
	check("posted", msg.Body)
	var m struct {
		Blocks []struct{ Elements []struct{ Value string } }
	}
	if err := json.Unmarshal(msg.Body, &m); err != nil || len(m.Blocks) != 2 {
		t.Fatalf("slack message %s", msg.Body)
	}
	if status := q.slackClick(m.Blocks[1].Elements[0].Value, "approve", "T0HUMANS", "U0BEE", responses.URL, time.Now(), slackSecret); status != 200 {
		t.Fatalf("click: %d", status)
	}
	r := responses.any(t)
	if !strings.Contains(string(r.Body), "1 of 2 approvals: <@U0BEE>") {
		t.Fatalf("after the first approve: %s", r.Body)
	}
	check("after the first approve", r.Body)
}
