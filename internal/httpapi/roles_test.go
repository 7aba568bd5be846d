package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/audit"
)

const agentsPath = "/api/public/v1/agents"

// newKey makes a key through POST /keys with key `by` and body (nil for
// none) and returns the answer; the request must succeed.
func (e *env) newKey(by string, body any) map[string]any {
	e.t.Helper()
	status, k := e.do("POST", keysPath, by, body)
	if status != http.StatusCreated {
		e.t.Fatalf("create key: %d %v", status, k)
	}
	return k
}

// policyOf is a wallet's policy as an admin reads it.
func (e *env) policyOf(id string) string {
	e.t.Helper()
	status, a := e.do("GET", agentsPath+"/"+id, e.key, nil)
	if status != 200 {
		e.t.Fatalf("get agent: %d %v", status, a)
	}
	return fmt.Sprint(a["policy"])
}

// The calls that let an agent loosen its own rules are refused to an agent
// key (403 naming what is missing, nothing changes, each attempt audited)
// and allowed to an admin key; tightening is allowed to both.
func TestAgentCannotLoosenItsRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hook := newReceiver(t, nil)
	id, _ := e.agent(nil, 0)
	agentID, agentKey := e.agentKey()
	if status, body := e.do("POST", agentsPath+"/"+id+"/freeze", e.key, nil); status != 200 || body["state"] != "frozen" {
		t.Fatalf("freeze: %d %v", status, body)
	}
	policy := e.policyOf(id)
	raise := map[string]any{"daily_limit_usdc": 1_000_000, "max_tx_usdc": 1_000_000, "approval_threshold_usdc": 1_000_000}
	endpoint := map[string]any{"url": hook.URL, "events": []string{"approval.pending"}, "format": "slack"}

	status, body := e.do("POST", agentsPath+"/"+id+"/unfreeze", agentKey, nil)
	wantError(t, status, body, http.StatusForbidden, "this key's role (agent) cannot unfreeze wallets")
	status, body = e.do("PATCH", agentsPath+"/"+id+"/policy", agentKey, raise)
	wantError(t, status, body, http.StatusForbidden, "this key's role (agent) cannot raise a policy limit")
	status, body = e.do("POST", endpointsPath, agentKey, endpoint)
	wantError(t, status, body, http.StatusForbidden, "this key's role (agent) cannot manage webhook endpoints")
	status, body = e.do("GET", endpointsPath, agentKey, nil)
	wantError(t, status, body, http.StatusForbidden, "cannot read webhook endpoints")

	status, a := e.do("GET", agentsPath+"/"+id, agentKey, nil)
	if status != 200 || a["state"] != "frozen" || fmt.Sprint(a["policy"]) != policy || e.countRows("webhook_endpoints") != 0 {
		t.Fatalf("refused calls changed something: %v, %d endpoints", a, e.countRows("webhook_endpoints"))
	}
	denied := e.auditOf(audit.ActionPermissionDenied)
	if len(denied) != 4 {
		t.Fatalf("%d permission.denied entries, want 4", len(denied))
	}
	for i, want := range []struct{ op, target string }{
		{"unfreeze-agent", "wallet:" + id}, {"update-policy", "wallet:" + id},
		{"create-webhook-endpoint", "key:" + agentID}, {"list-webhook-endpoints", "key:" + agentID},
	} {
		d := details(t, denied[i])
		if denied[i].Actor != agentID || denied[i].Target != want.target || d["operation"] != want.op || d["key_id"] != agentID ||
			d["role"] != "agent" || !strings.Contains(d["reason"].(string), "this key's role (agent) cannot") {
			t.Fatalf("entry %d: %+v %v", i, denied[i], d)
		}
	}

	// Tightening is an agent's right: a lower cap, and freezing.
	if status, body := e.do("POST", agentsPath+"/"+id+"/unfreeze", e.key, nil); status != 200 || body["state"] != "active" {
		t.Fatalf("admin unfreeze: %d %v", status, body)
	}
	if a := e.patchPolicyWith(agentKey, id, map[string]any{"max_tx_usdc": 10}); a["policy"].(map[string]any)["max_tx_usdc"] != 10.0 {
		t.Fatalf("tightened %v", a)
	}
	if status, body := e.do("POST", agentsPath+"/"+id+"/freeze", agentKey, nil); status != 200 || body["state"] != "frozen" {
		t.Fatalf("agent freeze: %d %v", status, body)
	}
	// The admin key may do all three.
	if status, body := e.do("POST", agentsPath+"/"+id+"/unfreeze", e.key, nil); status != 200 || body["state"] != "active" {
		t.Fatalf("admin unfreeze: %d %v", status, body)
	}
	if a := e.patchPolicyWith(e.key, id, raise); a["policy"].(map[string]any)["max_tx_usdc"] != 1_000_000.0 {
		t.Fatalf("admin raise %v", a)
	}
	if status, body := e.do("POST", endpointsPath, e.key, endpoint); status != http.StatusCreated {
		t.Fatalf("admin endpoint: %d %v", status, body)
	}
	if n := len(e.auditOf(audit.ActionPermissionDenied)); n != 4 {
		t.Fatalf("%d permission.denied entries after allowed calls", n)
	}
}

// patchStep patches wallet id's policy with key, as the step named name
// of a test: when want is not "" the patch must be refused with a 403
// naming want, leaving the policy as it was; otherwise it must succeed.
// It returns the answer's body.
func (e *env) patchStep(key, id, name string, patch map[string]any, want string) map[string]any {
	e.t.Helper()
	before := e.policyOf(id)
	status, body := e.do("PATCH", agentsPath+"/"+id+"/policy", key, patch)
	if want != "" {
		wantError(e.t, status, body, http.StatusForbidden, want)
		if after := e.policyOf(id); after != before {
			e.t.Fatalf("%s: refused, yet the policy went from %s to %s", name, before, after)
		}
		return body
	}
	if status != 200 {
		e.t.Fatalf("%s: %d %v", name, status, body)
	}
	return body
}

// patchPolicyWith patches a policy with key; it must succeed.
func (e *env) patchPolicyWith(key, id string, p map[string]any) map[string]any {
	e.t.Helper()
	status, a := e.do("PATCH", agentsPath+"/"+id+"/policy", key, p)
	if status != 200 {
		e.t.Fatalf("patch %v: %d %v", p, status, a)
	}
	return a
}

// The allowlist through an agent key: restricting an unrestricted wallet
// and removing entries tighten; adding to a non-empty list, emptying it, or
// a patch that tightens one field and loosens another are refused whole.
func TestAgentAllowlistChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.agent(nil, 0)
	_, agentKey := e.agentKey()
	a, b, c := newAddress(), newAddress(), newAddress()
	for _, step := range []struct {
		name  string
		patch map[string]any
		want  string // "" for allowed, else the refusal
		allow []string
	}{
		{"restrict an unrestricted wallet", map[string]any{"allowlist": []string{a, b}}, "", []string{a, b}},
		{"remove an entry", map[string]any{"allowlist": []string{a}}, "", []string{a}},
		{"add an entry", map[string]any{"allowlist": []string{a, c}}, "cannot add an address to the allowlist (" + c + ")", []string{a}},
		{"empty it", map[string]any{"allowlist": []string{}}, "cannot empty the allowlist", []string{a}},
		{"tighten and loosen at once", map[string]any{"max_tx_usdc": 1, "daily_limit_usdc": 500}, "cannot raise a policy limit (daily_limit_usdc from 100 to 500)", []string{a}},
		{"lower the threshold and the day", map[string]any{"approval_threshold_usdc": 0, "daily_limit_usdc": 50}, "", []string{a}},
	} {
		body := e.patchStep(agentKey, id, step.name, step.patch, step.want)
		if step.want != "" {
			continue
		}
		if got := body["policy"].(map[string]any)["allowlist"]; fmt.Sprint(got) != fmt.Sprint(step.allow) {
			t.Fatalf("%s: allowlist %v", step.name, got)
		}
	}
	if n := len(e.auditOf(audit.ActionPermissionDenied)); n != 3 {
		t.Fatalf("%d permission.denied entries, want 3", n)
	}
}

// A key created with wallet_ids reaches only those wallets: any other
// answers 404 on every route and is left out of every list; it cannot
// create wallets, nor give a key more than it has.
func TestScopedAgentKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	in, _ := e.agent(map[string]any{"approval_threshold_usdc": 5}, 10_000_000)
	out, _ := e.agent(map[string]any{"approval_threshold_usdc": 5}, 10_000_000)
	k := e.newKey(e.key, map[string]any{"wallet_ids": []string{in}, "label": "research bot"})
	if k["role"] != "agent" || fmt.Sprint(k["wallet_ids"]) != fmt.Sprint([]string{in}) || k["label"] != "research bot" || k["can_approve"] != false {
		t.Fatalf("scoped key %v", k)
	}
	scoped := k["key"].(string)

	// Items on both wallets: a payment and an approval each.
	for _, w := range []string{in, out} {
		if status, body := e.do("POST", fmt.Sprintf(sendPath, w), e.key, map[string]any{"to": newAddress(), "amount": 1}); status != 200 {
			t.Fatalf("send: %d %v", status, body)
		}
		e.park(w, newAddress(), 6)
	}
	outApproval := e.park(out, newAddress(), 7)

	send := map[string]any{"to": newAddress(), "amount": 1}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", agentsPath + "/" + out, nil},
		{"GET", "/api/public/v1/wallets/" + out + "/balance", nil},
		{"POST", fmt.Sprintf(sendPath, out), send},
		{"POST", fmt.Sprintf(sendPath, out) + "/preview", send},
		{"PATCH", agentsPath + "/" + out + "/policy", map[string]any{"max_tx_usdc": 1}},
		{"POST", agentsPath + "/" + out + "/freeze", nil},
		{"GET", "/api/public/v1/transactions?wallet_id=" + out, nil},
	} {
		status, body := e.do(c.method, c.path, scoped, c.body)
		wantError(t, status, body, http.StatusNotFound, "agent not found")
	}
	for _, path := range []string{approvalsPath + "/" + outApproval, approvalsPath + "/" + outApproval + "/reject"} {
		method := "GET"
		if strings.HasSuffix(path, "reject") {
			method = "POST"
		}
		status, body := e.do(method, path, scoped, nil)
		wantError(t, status, body, http.StatusNotFound, "approval not found")
	}
	if s := e.approvalStatus(outApproval); s != approval.Pending {
		t.Fatalf("the out-of-scope approval is %s", s)
	}

	// Its own wallet works.
	if status, body := e.do("GET", agentsPath+"/"+in, scoped, nil); status != 200 || body["balance"] == nil {
		t.Fatalf("get: %d %v", status, body)
	}
	if status, body := e.do("POST", fmt.Sprintf(sendPath, in), scoped, send); status != 200 || body["status"] != "sent" {
		t.Fatalf("send: %d %v", status, body)
	}

	// Lists hold the scoped wallet's items only.
	walletOf := func(item any) string {
		m := item.(map[string]any)
		if w, ok := m["wallet_id"].(string); ok {
			return w
		}
		return m["id"].(string)
	}
	for path, field := range map[string]string{
		agentsPath: "agents", "/api/public/v1/wallets": "wallets", "/api/public/v1/transactions": "transactions",
		"/api/public/v1/transactions?limit=500": "transactions", approvalsPath: "approvals",
	} {
		status, body := e.do("GET", path, scoped, nil)
		items, _ := body[field].([]any)
		if status != 200 || len(items) == 0 {
			t.Fatalf("%s: %d %v", path, status, body)
		}
		for _, it := range items {
			if w := walletOf(it); w != in {
				t.Fatalf("%s shows wallet %s to a key scoped to %s", path, w, in)
			}
		}
	}
	status, body := e.do("GET", "/api/public/v1/audit-log?limit=100", scoped, nil)
	entries, _ := body["entries"].([]any)
	if status != 200 || len(entries) == 0 {
		t.Fatalf("audit log: %d %v", status, body)
	}
	for _, it := range entries {
		en := it.(map[string]any)
		d := en["details"].(map[string]any)
		if en["target"] != "wallet:"+in && d["wallet_id"] != in && en["target"] != "key:"+k["id"].(string) {
			t.Fatalf("audit entry about another wallet than %s (out %s): %v", in, out, en)
		}
	}
	if _, all := e.do("GET", "/api/public/v1/audit-log?limit=100", e.key, nil); len(all["entries"].([]any)) <= len(entries) {
		t.Fatal("the admin key sees no more of the audit log than the scoped key")
	}

	// No wallets, no keys beyond its scope, no admin keys.
	status, body = e.do("POST", agentsPath, scoped, map[string]any{"label": "more"})
	wantError(t, status, body, http.StatusForbidden, "this key is limited to some wallets and cannot create wallets")
	status, body = e.do("POST", keysPath, scoped, map[string]any{"wallet_ids": []string{in, out}})
	wantError(t, status, body, http.StatusForbidden, "cannot give a key a wallet outside them")
	status, body = e.do("POST", keysPath, scoped, map[string]any{"role": "admin"})
	wantError(t, status, body, http.StatusForbidden, "this key's role (agent) cannot create admin keys")
	if inherited := e.newKey(scoped, nil); fmt.Sprint(inherited["wallet_ids"]) != fmt.Sprint([]string{in}) {
		t.Fatalf("a key made by a scoped key reaches %v", inherited["wallet_ids"])
	}

	// Bad scopes are 422 and make nothing.
	_, otherKey := e.newAccount("devnet")
	foreign, _ := e.with(t).agentOf(otherKey)
	keys := e.countRows("api_keys")
	for _, c := range []struct {
		body any
		want string
	}{
		{map[string]any{"wallet_ids": []string{foreign}}, "wallet_ids[0]: no wallet of this account"},
		{map[string]any{"wallet_ids": []string{in, "nope"}}, "wallet_ids[1]: must be a wallet id"},
		{map[string]any{"wallet_ids": []string{in, in}}, "wallet_ids[1]: duplicates wallet_ids[0]"},
		{map[string]any{"wallet_ids": []string{}}, "wallet_ids"},
		{map[string]any{"role": "admin", "wallet_ids": []string{in}}, "admin keys reach every wallet"},
		{map[string]any{"role": "owner"}, "role"},
		{map[string]any{"label": " "}, "label: must not be blank"},
	} {
		status, body := e.do("POST", keysPath, e.key, c.body)
		wantError(t, status, body, http.StatusUnprocessableEntity, c.want)
	}
	e.wantRows("api_keys", keys)

	// A rotation keeps the role, scope and label.
	status, rotated := e.do("POST", keysPath+"/"+k["id"].(string)+"/rotate", scoped, nil)
	if status != 200 || rotated["role"] != "agent" || fmt.Sprint(rotated["wallet_ids"]) != fmt.Sprint([]string{in}) || rotated["label"] != "research bot" {
		t.Fatalf("rotate: %d %v", status, rotated)
	}
	status, body = e.do("GET", agentsPath+"/"+out, rotated["key"].(string), nil)
	wantError(t, status, body, http.StatusNotFound, "agent not found")
	// An admin key makes admin keys.
	if admin := e.newKey(e.key, map[string]any{"role": "admin", "label": "ops"}); admin["role"] != "admin" || admin["can_approve"] != true || admin["wallet_ids"] != nil {
		t.Fatalf("admin key %v", admin)
	}
}

// agentOf creates a wallet with key and returns its id.
func (e *env) agentOf(key string) (string, map[string]any) {
	e.t.Helper()
	status, a := e.do("POST", agentsPath, key, map[string]any{"label": "theirs"})
	if status != http.StatusCreated {
		e.t.Fatalf("create agent: %d %v", status, a)
	}
	return a["id"].(string), a
}

// No key of the requester's lineage approves its payment: the requester
// rotated twice tries with each successor (403, audited, still pending);
// an admin key of another lineage approves, and the recipient is paid
// once.
func TestRequesterLineageCannotApprove(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 5}, 50_000_000)
	reqID, requester := e.adminKey()
	to := newAddress()
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), requester, map[string]any{"to": to, "amount": 6})
	if status != http.StatusAccepted {
		t.Fatalf("send: %d %v", status, body)
	}
	apID := body["approval_id"].(string)
	current := requester
	for range 2 {
		status, next := e.do("POST", keysPath+"/"+reqID+"/rotate", current, nil)
		if status != 200 || next["role"] != "admin" {
			t.Fatalf("rotate: %d %v", status, next)
		}
		reqID, current = next["id"].(string), next["key"].(string)
		status, body := e.approve(apID, current, nil)
		wantError(t, status, body, http.StatusForbidden, "Requester cannot approve")
		if s := e.approvalStatus(apID); s != approval.Pending {
			t.Fatalf("status %s after a refused approve", s)
		}
	}
	denied := e.auditOf(audit.ActionPermissionDenied)
	if len(denied) != 2 || denied[0].Target != "approval:"+apID || details(t, denied[1])["operation"] != "approve" {
		t.Fatalf("permission.denied entries %+v", denied)
	}
	approverID, approver := e.adminKey()
	status, a := e.approve(apID, approver, nil)
	if status != 200 || a["status"] != "sent" || a["approved_by"] != approverID {
		t.Fatalf("approve: %d %v", status, a)
	}
	e.paidOnce(eng, apID, a["signature"].(string), to, 6_000_000)
}
