package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/mcpserver"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

// mcpPost posts one JSON-RPC message to /mcp with the env's key: the HTTP
// status, the body and the headers.
func mcpPost(t *testing.T, e *env, msg string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest("POST", e.url+httpapi.MCPPath, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// What an MCP client sends besides tool calls (initialize, tools/list,
// ping) is a read of its key: past the key's read limit it is 429, with
// Retry-After. A tool call is counted once, where it acts: as the API
// request it makes under the key.
func TestMCPCountsEveryRequestAgainstTheKey(t *testing.T) {
	t.Parallel()
	t.Run("handshake and listing", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOpts{limits: &ratelimit.Limits{Read: 3, Write: 1000, Send: 1000, Anonymous: 1000}, oneWindow: true})
		for i, method := range []string{"initialize", "tools/list", "ping", "ping"} {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, i+1, method)
			status, body, h := mcpPost(t, e, msg)
			if i < 3 {
				if status != http.StatusOK || h.Get("x-ratelimit-remaining") != fmt.Sprint(2-i) {
					t.Fatalf("%s: %d %s, remaining %q", method, status, body, h.Get("x-ratelimit-remaining"))
				}
				continue
			}
			var refused map[string]any
			if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" || json.Unmarshal([]byte(body), &refused) != nil || refused["error"] != "Rate limited" {
				t.Fatalf("%s past the limit: %d %s %v", method, status, body, h)
			}
		}
	})
	t.Run("tool calls counted once", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOpts{limits: &ratelimit.Limits{Read: 2, Write: 1000, Send: 1000, Anonymous: 1000}, oneWindow: true})
		call := func(i int) (int, map[string]any) {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_recent_transactions","arguments":{"limit":5}}}`, i)
			status, body, _ := mcpPost(t, e, msg)
			var answer struct {
				Result map[string]any `json:"result"`
			}
			if status == http.StatusOK {
				if err := json.Unmarshal([]byte(body), &answer); err != nil {
					t.Fatalf("call %d: %s", i, body)
				}
			}
			return status, answer.Result
		}
		for i := 1; i <= 2; i++ {
			if status, res := call(i); status != http.StatusOK || res["isError"] == true {
				t.Fatalf("call %d within the limit: %d %v", i, status, res)
			}
		}
		// The third is refused by the API it calls, and answered as the
		// tool's error: the MCP request itself was not counted.
		if status, res := call(3); status != http.StatusOK || res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "ate limit") {
			t.Fatalf("call 3: %d %v", status, res)
		}
	})
}

// fetchTarget is a URL x402_fetch may fetch that counts its hits and
// answers 200.
func fetchTarget(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("free"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// sendLimits are the rate limits with the default send bucket and the
// others out of the way.
func sendLimits(t *testing.T) *ratelimit.Limits {
	t.Helper()
	if ratelimit.Default.Send > 30 {
		t.Fatalf("the send bucket's default is %d a minute, more than the 30 this test holds it to", ratelimit.Default.Send)
	}
	return &ratelimit.Limits{Read: 1000, Write: 1000, Send: ratelimit.Default.Send, Anonymous: 1000}
}

// x402_fetch on /mcp counts in the key's send bucket before it fetches:
// 40 calls in a minute from one fresh key, through the official MCP
// client, make the API fetch the target as many times as the bucket
// allows (30 by default); the others are tool errors saying the key is
// rate limited.
func TestMCP_X402FetchCountsBeforeFetching(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{limits: sendLimits(t), oneWindow: true})
	wallet, _ := e.agent(nil, 0)
	_, key := e.agentKey()
	target, hits := fetchTarget(t)
	cs := connectMCP(t, e, key)
	refused := 0
	for i := range 40 {
		res, out := call(t, cs, mcpserver.ToolX402Fetch, map[string]any{"wallet_id": wallet, "url": target})
		switch {
		case res.IsError && strings.Contains(text(res), "Rate limited"):
			refused++
		case res.IsError || out["status"] != float64(200):
			t.Fatalf("call %d: %s %v", i+1, text(res), out)
		}
	}
	if n := hits.Load(); n != int64(ratelimit.Default.Send) || refused != 40-ratelimit.Default.Send {
		t.Fatalf("40 calls fetched the target %d times (%d refused as rate limited), want %d", n, refused, ratelimit.Default.Send)
	}
}

// Every message of a JSON-RPC batch counts on its own: one POST of 40
// x402_fetch calls (no MCP-Protocol-Version header, so the SDK takes the
// batch) fetches the target as many times as the send bucket allows.
func TestMCP_X402FetchBatchCountsEachCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{limits: sendLimits(t), oneWindow: true})
	wallet, _ := e.agent(nil, 0)
	target, hits := fetchTarget(t)
	var batch []string
	for i := range 40 {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"x402_fetch","arguments":{"wallet_id":%q,"url":%q}}}`, i+1, wallet, target))
	}
	status, body, _ := mcpPost(t, e, "["+strings.Join(batch, ",")+"]")
	var answers []struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &answers) != nil || len(answers) != 40 {
		t.Fatalf("batch: %d %.500s", status, body)
	}
	refused := 0
	for _, a := range answers {
		if a.Result.IsError && len(a.Result.Content) == 1 && strings.Contains(a.Result.Content[0].Text, "Rate limited") {
			refused++
		}
	}
	if n := hits.Load(); n != int64(ratelimit.Default.Send) || refused != 40-ratelimit.Default.Send {
		t.Fatalf("a batch of 40 fetched the target %d times (%d refused as rate limited), want %d", n, refused, ratelimit.Default.Send)
	}
}

// x402_fetch checks the wallet and the caller's x402-pay permission before
// it fetches: another account's wallet, one that does not exist, one
// outside a scoped key's wallets, and a key whose role may not pay x402
// challenges are refused with nothing fetched.
func TestMCP_X402FetchRefusedWithoutFetching(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wallet, _ := e.agent(nil, 0)
	other, _ := e.agent(nil, 0)
	_, agentKey := e.agentKey()
	_, foreignKey := e.newAccount(solana.Devnet)
	status, created := e.do("POST", "/api/public/v1/agents", foreignKey, map[string]any{"label": "theirs"})
	if status != http.StatusCreated {
		t.Fatalf("another account's wallet: %d %v", status, created)
	}
	status, scoped := e.do("POST", "/api/public/v1/keys", e.key, map[string]any{"wallet_ids": []string{other}})
	if status != http.StatusCreated {
		t.Fatalf("scoped key: %d %v", status, scoped)
	}
	// Every key's role may pay x402 challenges today: this one's may not
	// (its database lets it have a dashboard role).
	k, readOnlyKey, err := auth.CreateKey(t.Context(), e.db, e.account)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ExecContext(t.Context(), "ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ExecContext(t.Context(), "UPDATE api_keys SET role = ? WHERE id = ?", auth.RoleViewer, k.ID); err != nil {
		t.Fatal(err)
	}
	if auth.Can(auth.Principal{Role: auth.RoleViewer}, "x402-pay") != auth.Refused {
		t.Fatal("viewers may pay x402 challenges: this test needs a role that may not")
	}
	target, hits := fetchTarget(t)
	for _, c := range []struct {
		name, key, wallet, want string
	}{
		{"another account's wallet", agentKey, created["id"].(string), "404: agent not found"},
		{"no such wallet", agentKey, "00000000-0000-4000-8000-000000000000", "404: agent not found"},
		{"not a wallet id", agentKey, "nope", "404: agent not found"},
		{"outside the key's wallets", scoped["key"].(string), wallet, "404: agent not found"},
		{"a role that may not pay", readOnlyKey, wallet, "403: this key's role (viewer) cannot pay x402 challenges"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, _ := call(t, connectMCP(t, e, c.key), mcpserver.ToolX402Fetch, map[string]any{"wallet_id": c.wallet, "url": target})
			if !res.IsError || !strings.Contains(text(res), c.want) {
				t.Fatalf("answer %q, want a tool error with %q", text(res), c.want)
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the target was fetched %d times", n)
			}
		})
	}
	// The refusal by role is in the audit log, as the API's are.
	denied := e.auditOf("permission.denied")
	var details map[string]any
	if len(denied) != 1 || denied[0].Target != "wallet:"+wallet || json.Unmarshal(denied[0].Details, &details) != nil ||
		details["operation"] != "x402-pay" || details["role"] != string(auth.RoleViewer) {
		t.Fatalf("permission.denied entries: %+v", denied)
	}
}

// A tool call that reaches nothing (an unknown tool, arguments the schema
// or the tool refuses) counts as a read of the key, and past the read
// limit is refused as rate limited; an x402_fetch with bad arguments does
// not use the send bucket.
func TestMCP_UnknownToolsAndBadArgumentsCountAsReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{limits: &ratelimit.Limits{Read: 4, Write: 1000, Send: 1, Anonymous: 1000}})
	wallet, _ := e.agent(nil, 0)
	target, hits := fetchTarget(t)
	toolCall := func(id int, name, args string) map[string]any {
		t.Helper()
		status, body, _ := mcpPost(t, e, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args))
		var answer map[string]any
		if status != http.StatusOK || json.Unmarshal([]byte(body), &answer) != nil {
			t.Fatalf("%s %s: %d %s", name, args, status, body)
		}
		return answer
	}
	awayFromMinuteEnd()
	for i, c := range []struct{ name, args string }{
		{"no_such_tool", `{}`},
		{"send_usdc", `{}`},
		{"x402_fetch", `{"wallet_id":5,"url":"http://example.com/"}`},
		{"x402_fetch", fmt.Sprintf(`{"wallet_id":%q,"url":"ftp://example.com/"}`, wallet)},
	} {
		answer := toolCall(i+1, c.name, c.args)
		if res, _ := answer["result"].(map[string]any); answer["error"] == nil && res["isError"] != true {
			t.Fatalf("%s %s: %v, want an error", c.name, c.args, answer)
		}
	}
	// The send bucket is untouched: a good x402_fetch fetches.
	answer := toolCall(5, "x402_fetch", fmt.Sprintf(`{"wallet_id":%q,"url":%q}`, wallet, target))
	if res, _ := answer["result"].(map[string]any); res["isError"] == true || hits.Load() != 1 {
		t.Fatalf("x402_fetch after the bad calls: %v, %d fetches", answer, hits.Load())
	}
	// The four reads are used up: another unknown tool is refused as rate
	// limited, and so is a ping.
	answer = toolCall(6, "no_such_tool", `{}`)
	if res, _ := answer["result"].(map[string]any); res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "Rate limited") {
		t.Fatalf("an unknown tool past the read limit: %v", answer)
	}
	if status, body, _ := mcpPost(t, e, `{"jsonrpc":"2.0","id":7,"method":"ping"}`); status != http.StatusTooManyRequests {
		t.Fatalf("a ping past the read limit: %d %s", status, body)
	}
}

// An x402_fetch that pays is one send: the payment it makes is not counted
// a second time. With one send a minute, a purchase goes through (the
// seller reached twice: the challenge and the paid request), and the next
// call is refused before it reaches the seller.
func TestMCP_X402FetchPaysWithinItsOneSend(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{limits: &ratelimit.Limits{Read: 1000, Write: 1000, Send: 1, Anonymous: 1000}})
	e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: 10_000})
	sellerURL, err := url.Parse(seller.URL)
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(sellerURL)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	wallet, _ := e.x402Wallet(nil)
	_, key := e.agentKey()
	cs := connectMCP(t, e, key)
	awayFromMinuteEnd()

	res, out := call(t, cs, mcpserver.ToolX402Fetch, map[string]any{"wallet_id": wallet, "url": front.URL + x402test.Weather})
	if pay, _ := out["payment"].(map[string]any); res.IsError || out["status"] != float64(200) || pay["status"] != "paid" || hits.Load() != 2 {
		t.Fatalf("a purchase with one send a minute: %s %v, the seller reached %d times", text(res), out, hits.Load())
	}
	res, _ = call(t, cs, mcpserver.ToolX402Fetch, map[string]any{"wallet_id": wallet, "url": front.URL + x402test.Weather})
	if !res.IsError || !strings.Contains(text(res), "Rate limited") || hits.Load() != 2 {
		t.Fatalf("the next call: %s, the seller reached %d times", text(res), hits.Load())
	}
}

// One key's x402_fetch calls fetch at most 4 at a time (as documented);
// the others wait their turn and fetch too (a batch of 10 against a slow
// target).
func TestMCP_X402FetchesOfOneKeyRunAFewAtATime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wallet, _ := e.agent(nil, 0)
	var running, most, hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(200 * time.Millisecond)
		w.Write([]byte("slow"))
	}))
	t.Cleanup(target.Close)
	var batch []string
	for i := range 10 {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"x402_fetch","arguments":{"wallet_id":%q,"url":%q}}}`, i+1, wallet, target.URL))
	}
	status, body, _ := mcpPost(t, e, "["+strings.Join(batch, ",")+"]")
	if status != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Fatalf("batch: %d %.500s", status, body)
	}
	if hits.Load() != 10 || most.Load() > 4 {
		t.Fatalf("%d fetches, at most %d at once; want 10, at most 4", hits.Load(), most.Load())
	}
}

// Bad keys on /mcp count in the client's anonymous bucket as on the API:
// 401 {"error":"Unauthorized"} with the bucket's headers, then 429 with
// Retry-After, and the API's routes share that bucket.
func TestMCP_BadKeysAreRateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{limits: &ratelimit.Limits{Anonymous: 3}})
	awayFromMinuteEnd()
	rpc := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for i, key := range []string{"svc_test_" + newAddress(), "nope", ""} {
		status, raw, h := e.request("POST", httpapi.MCPPath, key, rpc, nil)
		if status != http.StatusUnauthorized || strings.TrimSpace(string(raw)) != `{"error":"Unauthorized"}` {
			t.Fatalf("bad key %d: %d %s", i, status, raw)
		}
		wantLimitHeaders(t, fmt.Sprintf("bad key %d", i), h, 3, 2-i)
	}
	status, body, h := e.doH("POST", httpapi.MCPPath, "svc_test_"+newAddress(), json.RawMessage(rpc))
	wantError(t, status, body, http.StatusTooManyRequests, "Rate limited")
	wantLimitHeaders(t, "429", h, 3, 0)
	if r, err := strconv.Atoi(h.Get("Retry-After")); err != nil || r < 1 || r > 60 {
		t.Fatalf("Retry-After %q", h.Get("Retry-After"))
	}
	status, body, _ = e.doH("GET", "/api/public/v1/agents", "nope", nil)
	wantError(t, status, body, http.StatusTooManyRequests, "Rate limited")
	// A valid key is not in that bucket.
	_, agentKey := e.agentKey()
	if status, raw, _ := e.request("POST", httpapi.MCPPath, agentKey, rpc, mcpHeaders); status != http.StatusOK {
		t.Fatalf("valid key: %d %s", status, raw)
	}
}
