package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/tasks"
)

const (
	addrA = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
	addrB = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
)

func TestCreateListGetAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	status, body := e.do("GET", "/api/public/v1/agents", e.key, nil)
	if status != 200 || fmt.Sprint(body["agents"]) != "[]" {
		t.Fatalf("empty list: %d %v", status, body)
	}

	status, a1 := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "first"})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, a1)
	}
	pk, err := sol.PublicKeyFromBase58(a1["pubkey"].(string))
	if err != nil || len(pk.Bytes()) != 32 {
		t.Fatalf("pubkey %v: %v", a1["pubkey"], err)
	}
	if a1["kind"] != "agent" || a1["label"] != "first" || a1["state"] != "active" {
		t.Fatalf("agent %v", a1)
	}
	if _, err := time.Parse(time.RFC3339, a1["created_at"].(string)); err != nil || !strings.HasSuffix(a1["created_at"].(string), "Z") {
		t.Fatalf("created_at %v is not ISO 8601 UTC", a1["created_at"])
	}
	wantPolicy := withoutRules(map[string]any{"daily_limit_usdc": 100.0, "max_tx_usdc": 25.0, "approval_threshold_usdc": 10.0, "allowlist": []any{}, "allowlist_labels": map[string]any{}})
	if fmt.Sprint(a1["policy"]) != fmt.Sprint(wantPolicy) {
		t.Fatalf("default policy %v, want %v", a1["policy"], wantPolicy)
	}
	if _, leaked := a1["secret_key"]; leaked || a1["balance"] != nil {
		t.Fatalf("create answer has extra fields: %v", a1)
	}

	status, a2 := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{
		"label": "second",
		"policy": map[string]any{"daily_limit_usdc": 50.5, "max_tx_usdc": 0.000001, "approval_threshold_usdc": 0,
			"allowlist": []string{addrA, addrB}},
	})
	if status != http.StatusCreated {
		t.Fatalf("create with policy: %d %v", status, a2)
	}
	wantPolicy = withoutRules(map[string]any{"daily_limit_usdc": 50.5, "max_tx_usdc": 0.000001, "approval_threshold_usdc": 0.0, "allowlist": []any{addrA, addrB}, "allowlist_labels": map[string]any{}})
	if fmt.Sprint(a2["policy"]) != fmt.Sprint(wantPolicy) {
		t.Fatalf("policy %v, want %v", a2["policy"], wantPolicy)
	}

	// A partial policy keeps the other defaults.
	status, a3 := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "third", "policy": map[string]any{"max_tx_usdc": 5}})
	if status != http.StatusCreated {
		t.Fatalf("create partial: %d %v", status, a3)
	}
	wantPolicy = withoutRules(map[string]any{"daily_limit_usdc": 100.0, "max_tx_usdc": 5.0, "approval_threshold_usdc": 10.0, "allowlist": []any{}, "allowlist_labels": map[string]any{}})
	if fmt.Sprint(a3["policy"]) != fmt.Sprint(wantPolicy) {
		t.Fatalf("partial policy %v, want %v", a3["policy"], wantPolicy)
	}

	status, list := e.do("GET", "/api/public/v1/agents", e.key, nil)
	agents := list["agents"].([]any)
	if status != 200 || len(agents) != 3 {
		t.Fatalf("list: %d %v", status, list)
	}
	for i, want := range []map[string]any{a3, a2, a1} { // newest first
		got := agents[i].(map[string]any)
		if got["id"] != want["id"] || got["kind"] != "agent" || got["created_at"] != want["created_at"] || got["policy"] == nil {
			t.Fatalf("list[%d] = %v, want %v", i, got, want)
		}
		if _, has := got["balance"]; has {
			t.Fatalf("list[%d] has a balance", i)
		}
	}

	status, got := e.do("GET", "/api/public/v1/agents/"+a2["id"].(string), e.key, nil)
	if status != 200 || got["id"] != a2["id"] || fmt.Sprint(got["policy"]) != fmt.Sprint(a2["policy"]) {
		t.Fatalf("get: %d %v", status, got)
	}
	if fmt.Sprint(got["balance"]) != fmt.Sprint(map[string]any{"sol": 0.0, "usdc": 0.0, "assets": usdcOnly(0)}) {
		t.Fatalf("fresh wallet balance %v", got["balance"])
	}
}

func TestBalanceIsLive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "funded"})
	id, pubkey := a["id"].(string), a["pubkey"].(string)

	e.ln.SetTokenBalance(t, pubkey, solana.DevnetUSDCMint.String(), 12_500_000)
	e.ln.SetLamports(t, pubkey, solana.LamportsPerSOL)

	status, got := e.do("GET", "/api/public/v1/agents/"+id, e.key, nil)
	if status != 200 || fmt.Sprint(got["balance"]) != fmt.Sprint(map[string]any{"sol": 1.0, "usdc": 12.5, "assets": usdcOnly(12.5)}) {
		t.Fatalf("agent balance: %d %v", status, got)
	}
	_, raw := e.doRaw("GET", "/api/public/v1/wallets/"+id+"/balance", e.key, nil)
	body := `{"sol":1,"usdc":12.5,"assets":[{"symbol":"USDC","mint":"` + solana.DevnetUSDCMint.String() + `","amount":12.5}]}`
	if string(raw) != body+"\n" && string(raw) != body {
		t.Fatalf("balance body %s", raw)
	}

	// Only the wallet's own network's mint counts: mainnet USDC on a devnet
	// account's wallet is not its USDC.
	e.ln.SetTokenBalance(t, pubkey, solana.MainnetUSDCMint.String(), 7_000_000)
	e.ln.SetTokenBalance(t, pubkey, solana.DevnetUSDCMint.String(), 1)
	_, got = e.do("GET", "/api/public/v1/wallets/"+id+"/balance", e.key, nil)
	if fmt.Sprint(got) != fmt.Sprint(map[string]any{"sol": 1.0, "usdc": 0.000001, "assets": usdcOnly(0.000001)}) {
		t.Fatalf("after update: %v", got)
	}
}

func TestMainnetAccountReadsMainnetMint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.newAccount(solana.Mainnet)
	if !strings.HasPrefix(key, auth.LivePrefix) {
		t.Fatalf("mainnet key %q", key)
	}
	_, a := e.do("POST", "/api/public/v1/agents", key, map[string]any{"label": "live"})
	e.ln.SetTokenBalance(t, a["pubkey"].(string), solana.MainnetUSDCMint.String(), 3_000_000)
	_, got := e.do("GET", "/api/public/v1/wallets/"+a["id"].(string)+"/balance", key, nil)
	if got["usdc"] != 3.0 {
		t.Fatalf("mainnet balance %v", got)
	}
}

// An API whose mainnet node is of another chain answers that network's
// balance reads 503 and serves devnet as usual.
func TestWrongChainBalancesAre503(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{strictMainnet: true})
	_, key := e.newAccount(solana.Mainnet)
	_, a := e.do("POST", "/api/public/v1/agents", key, map[string]any{"label": "live"})
	for _, path := range []string{"/api/public/v1/agents/" + a["id"].(string), "/api/public/v1/wallets/" + a["id"].(string) + "/balance"} {
		status, body := e.do("GET", path, key, nil)
		wantError(t, status, body, http.StatusServiceUnavailable, "this network's Solana node is unavailable")
	}
	id, _ := e.agent(nil, 0)
	if status, body := e.do("GET", "/api/public/v1/wallets/"+id+"/balance", e.key, nil); status != 200 {
		t.Fatalf("devnet balance: %d %v", status, body)
	}
}

func TestAnotherAccountsWalletIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, otherKey := e.newAccount(solana.Devnet)
	_, mine := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "mine"})
	id := mine["id"].(string)

	for _, path := range []string{"/api/public/v1/agents/" + id, "/api/public/v1/wallets/" + id + "/balance"} {
		status, body := e.do("GET", path, otherKey, nil)
		wantError(t, status, body, 404, "not found")
	}
	status, list := e.do("GET", "/api/public/v1/agents", otherKey, nil)
	if status != 200 || len(list["agents"].([]any)) != 0 {
		t.Fatalf("other account sees %v", list)
	}
	for _, id := range []string{"00000000-0000-4000-8000-000000000000", "not-a-uuid", "1"} {
		status, body := e.do("GET", "/api/public/v1/agents/"+id, e.key, nil)
		wantError(t, status, body, 404, "not found")
		status, body = e.do("GET", "/api/public/v1/wallets/"+id+"/balance", e.key, nil)
		wantError(t, status, body, 404, "not found")
	}
}

func TestCreateAgentValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := strings.Repeat("x", 101)
	cases := []struct {
		name  string
		body  string
		field string // the error must name it
	}{
		{"no label", `{}`, "label"},
		{"empty label", `{"label":""}`, "label"},
		{"blank label", `{"label":"   "}`, "label"},
		{"long label", `{"label":"` + long + `"}`, "label"},
		{"label not string", `{"label":5}`, "label"},
		{"NUL in label", `{"label":"a\u0000b"}`, "label"},
		{"newline in label", `{"label":"a\nb"}`, "label"},
		{"unknown field", `{"label":"a","colour":"red"}`, "colour"},
		{"negative daily", `{"label":"a","policy":{"daily_limit_usdc":-1}}`, "daily_limit_usdc"},
		{"7 decimals", `{"label":"a","policy":{"max_tx_usdc":1.0000001}}`, "max_tx_usdc"},
		{"tiny exponent", `{"label":"a","policy":{"max_tx_usdc":1e-7}}`, "max_tx_usdc"},
		{"huge", `{"label":"a","policy":{"approval_threshold_usdc":1e30}}`, "approval_threshold_usdc"},
		{"beyond float64", `{"label":"a","policy":{"daily_limit_usdc":1e400}}`, "daily_limit_usdc"},
		{"long label in other casing", `{"label":"ok","Label":"` + long + `"}`, "Label"},
		{"string amount", `{"label":"a","policy":{"max_tx_usdc":"5"}}`, "max_tx_usdc"},
		{"policy not object", `{"label":"a","policy":[]}`, "policy"},
		{"unknown policy field", `{"label":"a","policy":{"limit":1}}`, "limit"},
		{"bad address", `{"label":"a","policy":{"allowlist":["nope"]}}`, "allowlist[0]"},
		{"short address", `{"label":"a","policy":{"allowlist":["` + addrA[:31] + `"]}}`, "allowlist[0]"},
		{"address of 33 bytes", `{"label":"a","policy":{"allowlist":["` + addrA + `1"]}}`, "allowlist[0]"},
		{"duplicate address", `{"label":"a","policy":{"allowlist":["` + addrA + `","` + addrA + `"]}}`, "allowlist[1]"},
		{"allowlist not strings", `{"label":"a","policy":{"allowlist":[1]}}`, "allowlist"},
	}
	for _, tc := range cases {
		status, body := e.do("POST", "/api/public/v1/agents", e.key, tc.body)
		if status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422 (%v)", tc.name, status, body)
			continue
		}
		if msg, _ := body["error"].(string); !strings.Contains(msg, tc.field) {
			t.Errorf("%s: error %q does not name %s", tc.name, msg, tc.field)
		}
	}
	e.wantRows("wallets", 0)
}

func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 20
	var wg sync.WaitGroup
	ids := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, a := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": fmt.Sprintf("agent-%d", i)})
			if status != 201 {
				t.Errorf("create %d: %d %v", i, status, a)
				return
			}
			ids <- a["pubkey"].(string)
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("pubkey %s issued twice", id)
		}
		seen[id] = true
	}
	if len(seen) != n || e.countRows("wallets") != n {
		t.Fatalf("%d distinct wallets, %d rows; want %d", len(seen), e.countRows("wallets"), n)
	}
}

// A node that does not answer (down: 503) leaves no node to answer: 503,
// quickly. (A bad answer from a node that did answer is 502.)
func TestRPCOutageIs503(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	_, a := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "x"})
	ln.SetFaults(t, localnettest.Faults{Down: true})
	start := time.Now()
	status, body := e.do("GET", "/api/public/v1/agents/"+a["id"].(string), e.key, nil)
	wantError(t, status, body, http.StatusServiceUnavailable, "Solana RPC")
	status, body = e.do("GET", "/api/public/v1/wallets/"+a["id"].(string)+"/balance", e.key, nil)
	wantError(t, status, body, http.StatusServiceUnavailable, "Solana RPC")
	if time.Since(start) > 30*time.Second {
		t.Fatalf("outage answers took %s", time.Since(start))
	}
	// Creating and listing do not need the node.
	if status, _ := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "y"}); status != 201 {
		t.Fatalf("create during RPC outage: %d", status)
	}
	ln.SetFaults(t, localnettest.Faults{})
	if status, _ := e.do("GET", "/api/public/v1/agents/"+a["id"].(string), e.key, nil); status != 200 {
		t.Fatalf("after recovery: %d", status)
	}
}

// null for a policy amount means "not given": the default applies.
func TestNullPolicyFieldTakesDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, a := e.do("POST", "/api/public/v1/agents", e.key, `{"label":"a","policy":{"max_tx_usdc":null}}`)
	if status != 201 || a["policy"].(map[string]any)["max_tx_usdc"] != 25.0 {
		t.Fatalf("%d %v", status, a)
	}
}

// A wallet is never sealed to a key no running worker holds: its funds
// could never move.
func TestCreateRefusedWhenWorkersLackTheKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.rdb.SAdd(ctx, tasks.WorkerKeysKey, "0123456789abcdef")
	status, body := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "x"})
	wantError(t, status, body, http.StatusServiceUnavailable, "master key")
	status, body = e.do("GET", "/readyz", "", nil)
	wantError(t, status, body, http.StatusServiceUnavailable, "not ready")
	if e.countRows("wallets") != 0 {
		t.Fatal("wallet created")
	}
	sealer, _ := signer.NewSealer(e.publicKey)
	e.rdb.SAdd(ctx, tasks.WorkerKeysKey, sealer.KeyID())
	if status, body := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "x"}); status != 201 {
		t.Fatalf("with the key held: %d %v", status, body)
	}
}

// GET /agents and GET /wallets page with limit and cursor (the plain
// answer is the first page of 100, here every wallet with next_cursor
// null); wallets and webhook
// endpoints are capped per account, concurrent creates included.
func TestWalletListsAndCaps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{maxWallets: 5, maxEndpoints: 2})
	created := concurrently(t, 8, func(i int) int {
		status, _ := e.with(t).do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": fmt.Sprint("w", i)})
		return status
	})
	if created != 5 || e.countRows("wallets") != 5 {
		t.Fatalf("%d of 8 concurrent creates passed a cap of 5", created)
	}
	status, body := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "one more"})
	wantError(t, status, body, http.StatusConflict, "the account holds 5 wallets, the most it may")

	for path, field := range map[string]string{"/api/public/v1/agents": "agents", "/api/public/v1/wallets": "wallets"} {
		status, all := e.do("GET", path, e.key, nil)
		if next, has := all["next_cursor"]; status != 200 || !has || next != nil || len(all[field].([]any)) != 5 {
			t.Fatalf("%s: %d %v", path, status, all)
		}
		var seen []string
		cursor := ""
		for range 4 {
			status, pg := e.do("GET", path+"?limit=2"+cursor, e.key, nil)
			if status != 200 {
				t.Fatalf("%s page: %d %v", path, status, pg)
			}
			for _, it := range pg[field].([]any) {
				seen = append(seen, it.(map[string]any)["id"].(string))
			}
			next, ok := pg["next_cursor"].(string)
			if !ok {
				if pg["next_cursor"] != nil || len(seen) != 5 {
					t.Fatalf("%s: last page %v after %v", path, pg, seen)
				}
				break
			}
			cursor = "&cursor=" + next
		}
		want := []string{}
		for _, it := range all[field].([]any) {
			want = append(want, it.(map[string]any)["id"].(string))
		}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Fatalf("%s pages %v, all %v", path, seen, want)
		}
	}

	rc := newReceiver(t, nil)
	e.createEndpoint(rc.URL, "tx.sent")
	e.createEndpoint(rc.URL, "tx.sent")
	status, body = e.do("POST", endpointsPath, e.key, map[string]any{"url": rc.URL, "events": []string{"tx.sent"}})
	wantError(t, status, body, http.StatusConflict, "the account holds 2 webhook endpoints")
}

// withoutRules is policy p as answered when none of the optional rules is
// set: each null, outside_active_hours block, one approval needed.
func withoutRules(p map[string]any) map[string]any {
	for _, f := range []string{"weekly_limit_usdc", "monthly_limit_usdc", "max_tx_per_hour", "max_tx_per_day", "active_hours"} {
		p[f] = nil
	}
	p["outside_active_hours"] = "block"
	p["approvals_required"] = 1.0
	if _, ok := p["assets"]; !ok {
		p["assets"] = []any{"USDC"}
	}
	for _, f := range []string{"daily_limit_eur", "max_tx_eur", "approval_threshold_eur", "weekly_limit_eur", "monthly_limit_eur"} {
		if _, ok := p[f]; !ok {
			p[f] = nil
		}
	}
	return p
}

// usdcOnly is the assets of a devnet wallet's balance holding only USDC
// (usdc of it), as decoded from JSON.
func usdcOnly(usdc float64) []any {
	return []any{map[string]any{"symbol": "USDC", "mint": solana.DevnetUSDCMint.String(), "amount": usdc}}
}
