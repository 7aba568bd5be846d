package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/waitfor"
)

// The routes the dashboard's wallet and webhook pages stand on: search,
// the address book, previews under a proposed policy, local funds and test
// events.

func TestWalletSearch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := map[string]string{}
	var pubkeys []string
	for _, label := range []string{"Research Bot", "research-2", "payroll", "50% off_deals"} {
		status, a := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": label})
		if status != http.StatusCreated {
			t.Fatalf("create %s: %d %v", label, status, a)
		}
		ids[label] = a["id"].(string)
		pubkeys = append(pubkeys, a["pubkey"].(string))
	}
	labels := func(path, key string) []string {
		t.Helper()
		status, body := e.do("GET", path, key, nil)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %v", path, status, body)
		}
		list, _ := body["agents"].([]any)
		if list == nil {
			list, _ = body["wallets"].([]any)
		}
		var out []string
		for _, w := range list {
			out = append(out, w.(map[string]any)["label"].(string))
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"research", []string{"Research Bot", "research-2"}}, // any case
		{"BOT", []string{"Research Bot"}},
		{"%", []string{"50% off_deals"}}, // literal, not a pattern
		{"_", []string{"50% off_deals"}},
		{pubkeys[2][:6], []string{"payroll"}}, // an address's start
		{pubkeys[2][3:12], nil},               // not its middle
		{"nothing like it", nil},
	} {
		for _, route := range []string{"/api/public/v1/agents", "/api/public/v1/wallets"} {
			if got := labels(route+"?q="+url.QueryEscape(c.q), e.key); !slices.Equal(got, c.want) {
				t.Errorf("%s?q=%q: %v, want %v", route, c.q, got, c.want)
			}
		}
	}
	// Pages of a search: limit 1 walks both matches once.
	status, p1 := e.do("GET", "/api/public/v1/agents?q=research&limit=1", e.key, nil)
	cursor, _ := p1["next_cursor"].(string)
	if status != http.StatusOK || len(p1["agents"].([]any)) != 1 || cursor == "" {
		t.Fatalf("first page: %d %v", status, p1)
	}
	_, p2 := e.do("GET", "/api/public/v1/agents?q=research&limit=1&cursor="+cursor, e.key, nil)
	if len(p2["agents"].([]any)) != 1 || p2["next_cursor"] != nil {
		t.Fatalf("second page: %v", p2)
	}
	// A scoped key searches only its wallet.
	scoped := e.newKey(e.key, map[string]any{"wallet_ids": []string{ids["research-2"]}})["key"].(string)
	if got := labels("/api/public/v1/agents?q=research", scoped); !slices.Equal(got, []string{"research-2"}) {
		t.Errorf("scoped search: %v", got)
	}
	for _, bad := range []string{strings.Repeat("x", 101), "%00", "%FF"} {
		status, body := e.do("GET", "/api/public/v1/agents?q="+bad, e.key, nil)
		wantError(t, status, body, http.StatusUnprocessableEntity, "")
	}
	// The same check guards the audit log's target.
	for _, bad := range []string{"%00", "%FF"} {
		status, body := e.do("GET", "/api/public/v1/audit-log?target="+bad, e.key, nil)
		wantError(t, status, body, http.StatusUnprocessableEntity, "target")
	}
}

// othersWallet is the id of a wallet of another account.
func (e *env) othersWallet() string {
	e.t.Helper()
	_, key := e.newAccount(solana.Devnet)
	status, w := e.do("POST", "/api/public/v1/agents", key, map[string]any{"label": "theirs"})
	if status != http.StatusCreated {
		e.t.Fatalf("another account's wallet: %d %v", status, w)
	}
	return w["id"].(string)
}

func TestAllowlistLabels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b, c := newAddress(), newAddress(), newAddress()
	status, w := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "book", "policy": map[string]any{
		"allowlist": []string{a, b}, "allowlist_labels": map[string]string{a: "Acme invoices"}}})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, w)
	}
	id := w["id"].(string)
	labelsOf := func(agent map[string]any) map[string]any {
		return agent["policy"].(map[string]any)["allowlist_labels"].(map[string]any)
	}
	if got := labelsOf(w); len(got) != 1 || got[a] != "Acme invoices" {
		t.Fatalf("labels on create: %v", got)
	}
	policyPath := "/api/public/v1/agents/" + id + "/policy"

	// Omitted labels: entries that stay keep theirs, removed ones lose them.
	status, w = e.do("PATCH", policyPath, e.key, map[string]any{"allowlist": []string{a}})
	if status != http.StatusOK || labelsOf(w)[a] != "Acme invoices" {
		t.Fatalf("kept label: %d %v", status, w)
	}
	status, w = e.do("PATCH", policyPath, e.key, map[string]any{"allowlist": []string{a, c}, "allowlist_labels": map[string]string{c: "Cloud"}})
	if got := labelsOf(w); status != http.StatusOK || len(got) != 1 || got[c] != "Cloud" {
		t.Fatalf("replaced labels: %d %v", status, w)
	}
	var entry audit.Record
	if _, err := audit.SealAll(t.Context(), e.db); err != nil {
		t.Fatal(err)
	}
	if err := e.db.NewSelect().Model(&entry).Where("action = ?", audit.ActionPolicyUpdated).Order("seq DESC").Limit(1).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(entry.Details), `"allowlist_labels": {"`+c+`": "Cloud"}`) &&
		!strings.Contains(string(entry.Details), `"allowlist_labels":{"`+c+`":"Cloud"}`) {
		t.Errorf("the audit entry lacks the labels: %s", entry.Details)
	}

	for _, bad := range []map[string]any{
		{"allowlist_labels": map[string]string{b: "not allowed"}}, // not on the list
		{"allowlist_labels": map[string]string{a: ""}},            // empty
		{"allowlist_labels": map[string]string{a: " padded"}},     // spaces
		{"allowlist_labels": map[string]string{a: "tab\there"}},   // control
		{"allowlist_labels": map[string]string{a: strings.Repeat("é", 101)}},
		{"allowlist_labels": map[string]string{a: "Acme\u202einvoices"}}, // a bidi override
		{"allowlist_labels": map[string]string{a: "Ac\u200bme"}},         // zero-width
	} {
		status, body := e.do("PATCH", policyPath, e.key, bad)
		wantError(t, status, body, http.StatusUnprocessableEntity, "allowlist_labels")
	}
	_, w = e.do("GET", "/api/public/v1/agents/"+id, e.key, nil)
	if got := labelsOf(w); len(got) != 1 || got[c] != "Cloud" {
		t.Fatalf("refused patches changed the labels: %v", got)
	}

	// An agent may drop entries (and their labels) but not rename a kept one.
	_, agentKey := e.agentKey()
	status, body := e.do("PATCH", policyPath, agentKey, map[string]any{"allowlist_labels": map[string]string{c: "Trusted vendor"}})
	wantError(t, status, body, http.StatusForbidden, "label")
	status, w = e.do("PATCH", policyPath, agentKey, map[string]any{"allowlist": []string{c}})
	if got := labelsOf(w); status != http.StatusOK || len(got) != 1 || got[c] != "Cloud" {
		t.Fatalf("agent narrowing: %d %v", status, w)
	}
	// Restricting an open wallet, an agent may not name the recipients
	// either: only unlabelled entries.
	status, w2 := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "open"})
	if status != http.StatusCreated {
		t.Fatal(status, w2)
	}
	open := "/api/public/v1/agents/" + w2["id"].(string) + "/policy"
	status, body = e.do("PATCH", open, agentKey, map[string]any{"allowlist": []string{a}, "allowlist_labels": map[string]string{a: "Acme"}})
	wantError(t, status, body, http.StatusForbidden, "label")
	status, w2 = e.do("PATCH", open, agentKey, map[string]any{"allowlist": []string{a}})
	if status != http.StatusOK || len(labelsOf(w2)) != 0 || len(w2["policy"].(map[string]any)["allowlist"].([]any)) != 1 {
		t.Fatalf("agent restricting without labels: %d %v", status, w2)
	}
}

func TestPreviewUnderProposedPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 50, "max_tx_usdc": 20, "approval_threshold_usdc": 10}, 0)
	path := fmt.Sprintf(sendPath, id) + "/preview"
	to, other := newAddress(), newAddress()
	for _, c := range []struct {
		name     string
		proposed map[string]any
		amount   float64
		outcome  string
		reason   any
		limit    float64
	}{
		{"today's policy", nil, 5, "sent", nil, 50},
		{"an allowlist without the recipient", map[string]any{"allowlist": []string{other}}, 5, "blocked", "recipient_not_allowed", 50},
		{"an allowlist with it", map[string]any{"allowlist": []string{to, other}}, 5, "sent", nil, 50},
		{"a lower threshold", map[string]any{"approval_threshold_usdc": 2}, 5, "pending_approval", nil, 50},
		{"a lower cap", map[string]any{"max_tx_usdc": 4}, 5, "blocked", "exceeds_max_tx", 50},
		{"a higher cap", map[string]any{"max_tx_usdc": 40}, 30, "pending_approval", nil, 50},
		{"a lower daily limit", map[string]any{"daily_limit_usdc": 3}, 5, "blocked", "exceeds_daily_limit", 3},
	} {
		body := map[string]any{"to": to, "amount": c.amount}
		if c.proposed != nil {
			body["policy"] = c.proposed
		}
		before := e.snapshot()
		status, p := e.do("POST", path, e.key, body)
		if status != http.StatusOK || p["outcome"] != c.outcome || p["reason"] != c.reason || p["daily_limit_usdc"] != c.limit {
			t.Errorf("%s: %d %v", c.name, status, p)
		}
		if after := e.snapshot(); fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("%s: the preview changed rows", c.name)
		}
	}
	for _, bad := range []map[string]any{
		{"max_tx_usdc": -1},
		{"max_tx_usdc": 0.0000001},
		{"allowlist": []string{"not-an-address"}},
		{"allowlist_labels": map[string]string{other: "not on the list"}},
	} {
		status, body := e.do("POST", path, e.key, map[string]any{"to": to, "amount": 1, "policy": bad})
		wantError(t, status, body, http.StatusUnprocessableEntity, "policy.")
	}
	// The wallet's policy is untouched.
	_, w := e.do("GET", "/api/public/v1/agents/"+id, e.key, nil)
	if p := w["policy"].(map[string]any); p["max_tx_usdc"] != 20.0 || len(p["allowlist"].([]any)) != 0 {
		t.Fatalf("policy changed: %v", p)
	}
}

func TestFundOnLocalChain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, a := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "fund me"})
	if status != http.StatusCreated {
		t.Fatal(status, a)
	}
	id, pubkey := a["id"].(string), a["pubkey"].(string)
	path := "/api/public/v1/wallets/" + id + "/fund"
	status, b := e.do("POST", path, e.key, map[string]any{"usdc": 12.5, "sol": 0.5})
	if status != http.StatusOK || b["usdc"] != 12.5 || b["sol"] != 0.5 {
		t.Fatalf("fund: %d %v", status, b)
	}
	status, b = e.do("POST", path, e.key, map[string]any{"usdc": 7.5})
	if status != http.StatusOK || b["usdc"] != 20.0 || b["sol"] != 0.5 {
		t.Fatalf("fund again adds: %d %v", status, b)
	}
	if got := e.chainUSDC(pubkey); got != 20*money.Dollar {
		t.Fatalf("chain holds %s USDC", got)
	}
	_, bal := e.do("GET", "/api/public/v1/wallets/"+id+"/balance", e.key, nil)
	if bal["usdc"] != 20.0 || bal["sol"] != 0.5 {
		t.Fatalf("balance: %v", bal)
	}
	// Other assets by symbol: PYUSD opens a Token-2022 account, twice adds.
	for _, want := range []string{"5", "8"} {
		status, b = e.do("POST", path, e.key, map[string]any{"assets": map[string]any{"PYUSD": map[string]float64{"5": 5, "8": 3}[want], "EURC": 1}})
		held := map[string]string{}
		for _, x := range b["assets"].([]any) {
			held[x.(map[string]any)["symbol"].(string)] = fmt.Sprint(x.(map[string]any)["amount"])
		}
		if status != http.StatusOK || held["PYUSD"] != want || held["USDC"] != "20" {
			t.Fatalf("fund PYUSD: %d %v", status, b)
		}
	}
	for _, bad := range []map[string]any{{}, {"usdc": 0}, {"usdc": 1_000_001}, {"sol": 101}, {"usdc": -1}, {"usdc": 0.0000001},
		{"assets": map[string]any{"DOGE": 1}}, {"assets": map[string]any{"PYUSD": 1_000_001}}, {"assets": map[string]any{"PYUSD": 0}}} {
		status, body := e.do("POST", path, e.key, bad)
		wantError(t, status, body, http.StatusUnprocessableEntity, "")
	}
	if got := e.chainUSDC(pubkey); got != 20*money.Dollar {
		t.Fatalf("refusals changed the chain: %s", got)
	}
	var body map[string]any
	for _, id := range []string{uuid.NewString(), e.othersWallet()} {
		status, body = e.do("POST", "/api/public/v1/wallets/"+id+"/fund", e.key, map[string]any{"usdc": 1})
		wantError(t, status, body, http.StatusNotFound, "")
	}

	// A service on a public chain has no faucet: 409 naming the address.
	pub := newEnv(t, envOpts{publicChain: true})
	status, a = pub.do("POST", "/api/public/v1/agents", pub.key, map[string]any{"label": "real"})
	if status != http.StatusCreated {
		t.Fatal(status, a)
	}
	status, body = pub.do("POST", "/api/public/v1/wallets/"+a["id"].(string)+"/fund", pub.key, map[string]any{"usdc": 1})
	wantError(t, status, body, http.StatusConflict, a["pubkey"].(string))
	if got := pub.chainUSDC(a["pubkey"].(string)); got != 0 {
		t.Fatalf("funded on a public chain: %s", got)
	}
	for env, want := range map[*env]bool{pub: false, e: true} {
		hdr, _ := env.session(auth.RoleViewer)
		_, raw, _ := env.request("GET", "/api/dashboard/v1/session", "", nil, hdr)
		var sess struct {
			LocalChain *bool `json:"local_chain"`
		}
		if json.Unmarshal(raw, &sess) != nil || sess.LocalChain == nil || *sess.LocalChain != want {
			t.Errorf("session says local_chain %s, want %v", raw, want)
		}
	}
}

func TestWebhookTestEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	rc := newReceiver(t, nil)
	ep, _ := e.createEndpoint(rc.URL, "tx.sent")
	rc.next(t, "webhook.test") // the one sent on saving
	status, d := e.do("POST", endpointsPath+"/"+ep+"/test", e.key, nil)
	if status != http.StatusAccepted || d["event"] != "webhook.test" || d["status"] != "pending" {
		t.Fatalf("test: %d %v", status, d)
	}
	got := rc.next(t, "webhook.test")
	if got.Headers.Get("X-Service-Delivery") != d["id"] {
		t.Fatalf("delivery id %q, answered %v", got.Headers.Get("X-Service-Delivery"), d["id"])
	}
	// The log's payload is the body the receiver got, byte for byte.
	var payload json.RawMessage
	waitfor.True(t, "the test delivery succeeded", func() bool {
		status, raw := e.doRaw("GET", "/api/public/v1/deliveries/"+d["id"].(string), e.key, nil)
		var out struct {
			Status  string          `json:"status"`
			Payload json.RawMessage `json:"payload"`
		}
		if status != http.StatusOK || json.Unmarshal(raw, &out) != nil {
			t.Fatalf("get delivery: %d %s", status, raw)
		}
		payload = out.Payload
		return out.Status == "succeeded"
	})
	if string(payload) != string(got.Body) {
		t.Fatalf("payload %s\nreceived %s", payload, got.Body)
	}
	// A disabled endpoint gets none; another account's is 404.
	if status, body := e.do("PATCH", endpointsPath+"/"+ep, e.key, map[string]any{"enabled": false}); status != http.StatusOK {
		t.Fatal(status, body)
	}
	status, body := e.do("POST", endpointsPath+"/"+ep+"/test", e.key, nil)
	wantError(t, status, body, http.StatusConflict, "disabled")
	_, otherKey := e.newAccount(solana.Devnet)
	status, body = e.do("POST", endpointsPath+"/"+ep+"/test", otherKey, nil)
	wantError(t, status, body, http.StatusNotFound, "")
}

func TestApprovalsByWallet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	a, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	b, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	mine := []string{e.park(a, newAddress(), 1), e.park(a, newAddress(), 2)}
	e.park(b, newAddress(), 3)
	ids := func(query string) []string {
		t.Helper()
		status, body := e.do("GET", approvalsPath+query, e.key, nil)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %v", query, status, body)
		}
		var out []string
		for _, ap := range body["approvals"].([]any) {
			out = append(out, ap.(map[string]any)["id"].(string))
		}
		return out
	}
	if got := ids("?wallet_id=" + a); !slices.Equal(got, []string{mine[1], mine[0]}) {
		t.Fatalf("wallet a's approvals: %v, want %v", got, mine)
	}
	if got := ids("?wallet_id=" + a + "&limit=1"); !slices.Equal(got, mine[1:]) {
		t.Fatalf("a page of them: %v", got)
	}
	if got := ids("?wallet_id=" + b + "&status=sent"); len(got) != 0 {
		t.Fatalf("with a status: %v", got)
	}
	status, body := e.do("GET", approvalsPath+"?wallet_id=nope", e.key, nil)
	wantError(t, status, body, http.StatusUnprocessableEntity, "wallet_id")
	for _, id := range []string{uuid.NewString(), e.othersWallet()} {
		status, body = e.do("GET", approvalsPath+"?wallet_id="+id, e.key, nil)
		wantError(t, status, body, http.StatusNotFound, "")
	}
	// A key scoped to b does not learn of a's approvals: 404.
	scoped := e.newKey(e.key, map[string]any{"wallet_ids": []string{b}})["key"].(string)
	status, body = e.do("GET", approvalsPath+"?wallet_id="+a, scoped, nil)
	wantError(t, status, body, http.StatusNotFound, "")

	// The approval's context names a recipient by its address-book label.
	vendor := newAddress()
	c, _ := e.agent(map[string]any{"approval_threshold_usdc": 0, "allowlist": []string{vendor},
		"allowlist_labels": map[string]string{vendor: "Data vendor"}}, 10_000_000)
	ap := e.park(c, vendor, 1)
	status, ctx := e.do("GET", approvalsPath+"/"+ap+"/context", e.key, nil)
	if r := ctx["recipient"].(map[string]any); status != http.StatusOK || r["label"] != "Data vendor" || r["on_allowlist"] != true {
		t.Fatalf("context: %d %v", status, ctx)
	}
	status, ctx = e.do("GET", approvalsPath+"/"+mine[0]+"/context", e.key, nil)
	if r := ctx["recipient"].(map[string]any); status != http.StatusOK || r["label"] != nil {
		t.Fatalf("context without a label: %d %v", status, ctx)
	}
}
