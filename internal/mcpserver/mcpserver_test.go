package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/mcpserver"
)

const dashboard = "https://wallet.example.com/"

// api is a stand-in for the service's REST API: answer answers each
// request (path below client.Prefix); calls counts them, query is the
// last one's URL query and body the last JSON body sent.
type api struct {
	calls  atomic.Int64
	query  atomic.Value // url.Values
	body   atomic.Value // map[string]any
	answer func(method, path string) (int, any)
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.calls.Add(1)
	a.query.Store(r.URL.Query())
	var sent map[string]any
	json.NewDecoder(r.Body).Decode(&sent)
	a.body.Store(sent)
	status, body := a.answer(r.Method, strings.TrimPrefix(r.URL.Path, client.Prefix))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// countingTransport counts the requests x402_fetch sends to sellers.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, fmt.Errorf("no seller here")
}

// connect is an MCP client session on the tools acting through a.
func connect(t *testing.T, a *api, fetch *countingTransport) *mcp.ClientSession {
	t.Helper()
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	serverT, clientT := mcp.NewInMemoryTransports()
	s := mcpserver.New(client.New(srv.URL, "svc_test_key"), dashboard, mcpserver.WithX402(&http.Client{Transport: fetch}))
	if _, err := s.Connect(t.Context(), serverT, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool; out is its structured answer, text its text (a tool
// error's message).
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (out map[string]any, text string, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(raw, &out)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return out, b.String(), res.IsError
}

// send_usdc turns each answer of the API into what the model should do
// next: a send is done; a parked one must not be retried and links the
// approval page; a blocked one says what the rule needs; a refused request
// is a tool error carrying the service's words.
func TestSendUSDC_SaysWhatToDoNext(t *testing.T) {
	t.Parallel()
	blocked := func(reason string) (int, any) {
		return http.StatusForbidden, map[string]any{"error": "blocked by policy", "reason": reason, "remaining_today_usdc": "1.5"}
	}
	for _, c := range []struct {
		name   string
		answer func(method, path string) (int, any)
		want   map[string]string // fields of the answer
		next   string            // part of next
		err    string            // part of a tool error instead
		asset  string            // the send's asset argument, if any
	}{
		{"sent", func(string, string) (int, any) { return 200, map[string]any{"status": "sent", "signature": "SIG"} },
			map[string]string{"status": "sent", "signature": "SIG", "asset": "USDC"}, "sent: the transaction confirms", "", ""},
		{"sent in another asset", func(string, string) (int, any) { return 200, map[string]any{"status": "sent", "signature": "SIG"} },
			map[string]string{"status": "sent", "asset": "PYUSD"}, "sent: the transaction confirms", "", "pyusd"},
		{"an asset the policy does not list", func(string, string) (int, any) { return blocked("asset_not_allowed") },
			map[string]string{"reason": "asset_not_allowed", "asset": "USDT"}, "policy.assets", "", "USDT"},
		{"a EUR stablecoin over the EUR day", func(string, string) (int, any) {
			return http.StatusForbidden, map[string]any{"error": "blocked by policy", "reason": "exceeds_daily_limit", "remaining_today_eur": 4}
		}, map[string]string{"reason": "exceeds_daily_limit", "asset": "EURC", "remaining_today_eur": "4", "remaining_today_usdc": "<nil>"},
			"remaining_today_eur", "", "EURC"},
		{"parked for a human", func(method, path string) (int, any) {
			if method == http.MethodGet && path == "/approvals/ap_1" {
				return 200, map[string]any{"id": "ap_1", "status": "pending", "expires_at": "2026-04-13T12:00:00Z"}
			}
			return 202, map[string]any{"status": "pending_approval", "approval_id": "ap_1"}
		}, map[string]string{"status": "pending_approval", "approval_id": "ap_1", "expires_at": "2026-04-13T12:00:00Z",
			"approve_url": "https://wallet.example.com/dashboard/approvals/ap_1"}, "do not retry", "", ""},
		{"over the per-payment cap", func(string, string) (int, any) { return blocked("exceeds_max_tx") },
			map[string]string{"status": "blocked", "reason": "exceeds_max_tx", "remaining_today_usdc": "1.5"}, "send less", "", ""},
		{"over the daily limit", func(string, string) (int, any) { return blocked("exceeds_daily_limit") },
			map[string]string{"reason": "exceeds_daily_limit"}, "wait for tomorrow (UTC)", "", ""},
		{"a recipient off the allowlist", func(string, string) (int, any) { return blocked("recipient_not_allowed") },
			map[string]string{"reason": "recipient_not_allowed"}, "a human must add it", "", ""},
		{"a frozen wallet", func(string, string) (int, any) { return blocked("wallet_frozen") },
			map[string]string{"reason": "wallet_frozen"}, "do not retry", "", ""},
		{"over the weekly limit", func(string, string) (int, any) { return blocked("exceeds_weekly_limit") },
			map[string]string{"reason": "exceeds_weekly_limit"}, "last 7 days", "", ""},
		{"over the monthly limit", func(string, string) (int, any) { return blocked("exceeds_monthly_limit") },
			map[string]string{"reason": "exceeds_monthly_limit"}, "last 30 days", "", ""},
		{"too many payments", func(string, string) (int, any) { return blocked("exceeds_velocity") },
			map[string]string{"reason": "exceeds_velocity"}, "wait before paying again", "", ""},
		{"outside the active hours", func(string, string) (int, any) { return blocked("outside_active_hours") },
			map[string]string{"reason": "outside_active_hours"}, "within them", "", ""},
		{"a rule this server does not know", func(string, string) (int, any) { return blocked("exceeds_something_new") },
			map[string]string{"reason": "exceeds_something_new"}, "do not retry unchanged", "", ""},
		{"a bad request", func(string, string) (int, any) {
			return 422, map[string]any{"error": "validation failed", "details": []map[string]any{{"location": "body.to", "message": "not a Solana address"}}}
		}, nil, "", "the service answered 422: validation failed; body.to: not a Solana address", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := &api{answer: c.answer}
			cs := connect(t, a, &countingTransport{})
			args := map[string]any{"wallet_id": "w", "to": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", "amount": "1", "idempotency_key": "K"}
			if c.asset != "" {
				args["asset"] = c.asset
			}
			out, text, isError := call(t, cs, mcpserver.ToolSendUSDC, args)
			if sent, _ := a.body.Load().(map[string]any); c.asset != "" && sent["asset"] != strings.ToUpper(c.asset) {
				t.Errorf("the send's body %v, want asset %s", sent, strings.ToUpper(c.asset))
			}
			if c.err != "" {
				if !isError || !strings.Contains(text, c.err) {
					t.Fatalf("error %v %q, want a tool error with %q", isError, text, c.err)
				}
				return
			}
			if isError {
				t.Fatalf("tool error: %s", text)
			}
			for k, v := range c.want {
				if fmt.Sprint(out[k]) != v {
					t.Errorf("%s = %v, want %q", k, out[k], v)
				}
			}
			if out["idempotency_key"] != "K" || !strings.Contains(fmt.Sprint(out["next"]), c.next) {
				t.Errorf("idempotency_key %v, next %q; want K and %q", out["idempotency_key"], out["next"], c.next)
			}
		})
	}
}

// x402_fetch refuses bad arguments before fetching anything or paying.
func TestX402Fetch_RefusesBadArgumentsBeforeFetching(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"a relative URL", map[string]any{"url": "/weather"}, "url must be an absolute http(s) URL"},
		{"another scheme", map[string]any{"url": "ftp://seller.example/weather"}, "url must be an absolute http(s) URL"},
		{"no host", map[string]any{"url": "https:///weather"}, "url must be an absolute http(s) URL"},
		{"another method", map[string]any{"url": "https://seller.example/", "method": "TRACE"}, `method "TRACE"`},
		{"a body over 64 KiB", map[string]any{"url": "https://seller.example/", "method": "POST", "body": strings.Repeat("x", 64<<10+1)}, "body is larger than 64 KiB"},
		{"a zero cap", map[string]any{"url": "https://seller.example/", "max_usdc": "0.00"}, "max_usdc"},
		{"a negative cap", map[string]any{"url": "https://seller.example/", "max_usdc": "-1"}, "max_usdc"},
		{"a cap in exponent form", map[string]any{"url": "https://seller.example/", "max_usdc": "1e3"}, "max_usdc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := &api{answer: func(string, string) (int, any) { return 500, map[string]any{"error": "not called"} }}
			fetch := &countingTransport{}
			cs := connect(t, a, fetch)
			args := map[string]any{"wallet_id": "w"}
			for k, v := range c.args {
				args[k] = v
			}
			_, text, isError := call(t, cs, mcpserver.ToolX402Fetch, args)
			if !isError || !strings.Contains(text, c.want) {
				t.Errorf("error %v %q, want a tool error with %q", isError, text, c.want)
			}
			if n, m := fetch.n.Load(), a.calls.Load(); n != 0 || m != 0 {
				t.Errorf("fetched %d times and called the API %d times, want neither", n, m)
			}
		})
	}
}

// pay_fetch refuses bad arguments, a preference other than mpp or x402
// among them, before fetching anything or paying.
func TestPayFetch_RefusesBadArgumentsBeforeFetching(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"another scheme", map[string]any{"url": "ftp://seller.example/weather"}, "url must be an absolute http(s) URL"},
		{"another method", map[string]any{"url": "https://seller.example/", "method": "TRACE"}, `method "TRACE"`},
		{"a zero cap", map[string]any{"url": "https://seller.example/", "max_usdc": "0"}, "max_usdc"},
		{"another protocol", map[string]any{"url": "https://seller.example/", "prefer": "tempo"}, `prefer "tempo"`},
		{"a protocol in capitals", map[string]any{"url": "https://seller.example/", "prefer": "MPP"}, `prefer "MPP"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := &api{answer: func(string, string) (int, any) { return 500, map[string]any{"error": "not called"} }}
			fetch := &countingTransport{}
			cs := connect(t, a, fetch)
			args := map[string]any{"wallet_id": "w"}
			for k, v := range c.args {
				args[k] = v
			}
			_, text, isError := call(t, cs, mcpserver.ToolPayFetch, args)
			if !isError || !strings.Contains(text, c.want) {
				t.Errorf("error %v %q, want a tool error with %q", isError, text, c.want)
			}
			if n, m := fetch.n.Load(), a.calls.Load(); n != 0 || m != 0 {
				t.Errorf("fetched %d times and called the API %d times, want neither", n, m)
			}
		})
	}
}

// A fetch follows at most 5 redirects.
func TestLimitRedirects(t *testing.T) {
	t.Parallel()
	for n := range 7 {
		err := mcpserver.LimitRedirects(nil, make([]*http.Request, n))
		if (err != nil) != (n >= 5) {
			t.Errorf("after %d redirects: %v", n, err)
		}
	}
}

// list_recent_transactions asks for the direction and asset given and
// shows a deposit as what it is: money in, in its asset, from its sender;
// each transaction names its asset; a direction the API does not know is
// refused before any call.
func TestListRecentTransactions_DepositsDirectionAndAsset(t *testing.T) {
	t.Parallel()
	a := &api{answer: func(method, path string) (int, any) {
		return 200, map[string]any{"transactions": []map[string]any{
			{"id": "1", "signature": "S1", "kind": "sol", "asset": "SOL", "direction": "receive", "amount": 0.25, "counterparty": "SENDER",
				"status": "confirmed", "memo": nil, "created_at": "2026-04-15T12:00:00Z", "wallet_id": "w"},
			{"id": "2", "signature": "S2", "kind": "usdc", "asset": "USDC", "direction": "send", "amount": 1.5, "counterparty": "PAYEE",
				"status": "confirmed", "memo": "invoice", "created_at": "2026-04-15T11:00:00Z", "wallet_id": "w"},
			{"id": "3", "signature": "S3", "kind": "eurc", "asset": "EURC", "direction": "send", "amount": 2, "counterparty": "PAYEE",
				"status": "pending", "memo": nil, "created_at": "2026-04-15T10:00:00Z", "wallet_id": "w"},
		}}
	}}
	cs := connect(t, a, &countingTransport{})
	out, text, isError := call(t, cs, mcpserver.ToolListRecentTransactions, map[string]any{"wallet_id": "w", "direction": "receive", "limit": 5})
	if isError {
		t.Fatalf("tool error: %s", text)
	}
	if q := a.query.Load().(url.Values); q.Get("direction") != "receive" || q.Get("wallet_id") != "w" || q.Get("limit") != "5" || q.Has("asset") {
		t.Fatalf("query %v", q)
	}
	txs, _ := out["transactions"].([]any)
	if len(txs) != 3 {
		t.Fatalf("answer %v", out)
	}
	if eur := txs[2].(map[string]any); eur["asset"] != "eurc" || eur["amount"] != "2" {
		t.Errorf("the EURC send: %v", eur)
	}
	if _, _, isError := call(t, cs, mcpserver.ToolListRecentTransactions, map[string]any{"asset": "EURC"}); isError || a.query.Load().(url.Values).Get("asset") != "EURC" {
		t.Errorf("of one asset: error %v, query %v", isError, a.query.Load())
	}
	in, sent := txs[0].(map[string]any), txs[1].(map[string]any)
	if in["direction"] != "receive" || in["asset"] != "sol" || in["amount"] != "0.25" || in["from"] != "SENDER" || in["to"] != nil {
		t.Errorf("the deposit: %v", in)
	}
	if sent["direction"] != "send" || sent["asset"] != "usdc" || sent["amount"] != "1.5" || sent["to"] != "PAYEE" || sent["from"] != nil || sent["memo"] != "invoice" {
		t.Errorf("the send: %v", sent)
	}
	if _, _, isError := call(t, cs, mcpserver.ToolListRecentTransactions, map[string]any{}); isError || a.query.Load().(url.Values).Has("direction") {
		t.Errorf("without a direction: error %v, query %v", isError, a.query.Load())
	}
	before := a.calls.Load()
	_, text, isError = call(t, cs, mcpserver.ToolListRecentTransactions, map[string]any{"direction": "incoming"})
	if !isError || !strings.Contains(text, "use send, receive") || a.calls.Load() != before {
		t.Errorf("direction incoming: error %v %q, %d calls", isError, text, a.calls.Load()-before)
	}
}

// get_balance_history passes the asset and at, or the range, and answers
// each series' points as decimal text in its asset; an instant that is
// not ISO 8601 is a tool error before any call.
func TestGetBalanceHistory(t *testing.T) {
	t.Parallel()
	a := &api{answer: func(method, path string) (int, any) {
		if method != http.MethodGet || path != "/wallets/w/balance/history" {
			return 404, map[string]any{"error": "not found"}
		}
		return 200, map[string]any{"wallet_id": "w", "series": []map[string]any{
			{"asset": "EURC", "decimals": 6, "points": []map[string]any{
				{"at": "2026-04-14T00:00:00Z", "asset": "EURC", "amount": 0},
				{"at": "2026-04-15T00:00:00Z", "asset": "EURC", "amount": 42.5},
			}},
			{"asset": "SOL", "decimals": 9, "points": []map[string]any{
				{"at": "2026-04-14T00:00:00Z", "asset": "SOL", "amount": 0.001},
				{"at": "2026-04-15T00:00:00Z", "asset": "SOL", "amount": 0.000995},
			}},
		}}
	}}
	cs := connect(t, a, &countingTransport{})
	out, text, isError := call(t, cs, mcpserver.ToolGetBalanceHistory, map[string]any{"wallet_id": "w", "asset": "eurc", "from": "2026-04-14T00:00:00Z", "interval": "day"})
	if isError {
		t.Fatalf("tool error: %s", text)
	}
	if q := a.query.Load().(url.Values); q.Get("asset") != "eurc" || q.Get("from") != "2026-04-14T00:00:00Z" || q.Get("interval") != "day" || q.Has("at") || q.Has("to") {
		t.Fatalf("query %v", q)
	}
	series, _ := out["series"].([]any)
	if out["wallet_id"] != "w" || len(series) != 2 {
		t.Fatalf("answer %v", out)
	}
	eurc, sol := series[0].(map[string]any), series[1].(map[string]any)
	if eurc["asset"] != "EURC" || eurc["decimals"] != 6.0 || sol["asset"] != "SOL" || sol["decimals"] != 9.0 {
		t.Fatalf("series %v", series)
	}
	if p := eurc["points"].([]any)[1].(map[string]any); p["at"] != "2026-04-15T00:00:00Z" || p["asset"] != "EURC" || p["amount"] != "42.5" {
		t.Errorf("EURC point %v", p)
	}
	if p := sol["points"].([]any)[1].(map[string]any); p["asset"] != "SOL" || p["amount"] != "0.000995" {
		t.Errorf("SOL point %v", p)
	}
	if _, _, isError := call(t, cs, mcpserver.ToolGetBalanceHistory, map[string]any{"wallet_id": "w", "at": "2026-04-15T12:00:00Z"}); isError {
		t.Fatal("at: tool error")
	}
	if q := a.query.Load().(url.Values); len(q) != 1 || q.Get("at") != "2026-04-15T12:00:00Z" {
		t.Errorf("query %v", q)
	}
	before := a.calls.Load()
	if _, text, isError := call(t, cs, mcpserver.ToolGetBalanceHistory, map[string]any{"wallet_id": "w", "at": "yesterday"}); !isError || !strings.Contains(text, "ISO 8601") || a.calls.Load() != before {
		t.Errorf("at yesterday: error %v %q", isError, text)
	}
	if _, text, isError := call(t, cs, mcpserver.ToolGetBalanceHistory, map[string]any{"wallet_id": "x"}); !isError || !strings.Contains(text, "404") {
		t.Errorf("an unknown wallet: error %v %q", isError, text)
	}
}

// get_wallet_info shows every asset the wallet holds, and the policy's
// assets and EUR limits (none set: left out, no EUR spending).
func TestGetWalletInfo_EveryAssetAndTheEURLimits(t *testing.T) {
	t.Parallel()
	agent := func(eur any) map[string]any {
		return map[string]any{"id": "w", "label": "bot", "pubkey": "ADDR", "state": "active", "created_at": "2026-04-15T12:00:00Z",
			"policy": map[string]any{"daily_limit_usdc": 100, "max_tx_usdc": 25, "approval_threshold_usdc": 10, "allowlist": []string{},
				"assets": []string{"USDC", "EURC"}, "daily_limit_eur": eur, "max_tx_eur": eur, "approval_threshold_eur": nil,
				"weekly_limit_eur": nil, "monthly_limit_eur": nil, "outside_active_hours": "block", "approvals_required": 1},
			"balance": map[string]any{"sol": 0.5, "usdc": 12, "assets": []map[string]any{
				{"symbol": "USDC", "mint": "M1", "amount": 12}, {"symbol": "EURC", "mint": "M2", "amount": 7.25}}}}
	}
	var noEUR atomic.Bool
	cs := connect(t, &api{answer: func(string, string) (int, any) {
		if noEUR.Load() {
			return 200, agent(nil)
		}
		return 200, agent(50)
	}}, &countingTransport{})
	out, text, isError := call(t, cs, mcpserver.ToolGetWalletInfo, map[string]any{"wallet_id": "w"})
	if isError {
		t.Fatalf("tool error: %s", text)
	}
	if got := fmt.Sprint(out["assets"]); got != "[map[amount:12 symbol:USDC] map[amount:7.25 symbol:EURC]]" {
		t.Errorf("assets %s", got)
	}
	p := out["policy"].(map[string]any)
	if fmt.Sprint(p["assets"]) != "[USDC EURC]" || p["daily_limit_eur"] != "50" || p["max_tx_eur"] != "50" || p["approval_threshold_eur"] != nil {
		t.Errorf("policy %v", p)
	}
	noEUR.Store(true)
	out, _, _ = call(t, cs, mcpserver.ToolGetWalletInfo, map[string]any{"wallet_id": "w"})
	if p := out["policy"].(map[string]any); p["daily_limit_eur"] != nil || p["max_tx_eur"] != nil {
		t.Errorf("no EUR limits: %v", p)
	}
}

// preview_send passes the asset and answers the day in the payment's
// currency: the EUR figures for EURC.
func TestPreviewSend_InThePaymentsCurrency(t *testing.T) {
	t.Parallel()
	a := &api{answer: func(string, string) (int, any) {
		return 200, map[string]any{"outcome": "blocked", "reason": "exceeds_daily_limit", "rule": "daily_limit_eur", "asset": "EURC",
			"currency": "EUR", "daily_limit_usdc": 100, "spent_today_usdc": 0, "remaining_today_usdc": 100, "daily_limit_eur": 20,
			"spent_today_eur": 18, "remaining_today_eur": 2, "approval_threshold_usdc": 10, "max_tx_usdc": 25,
			"payments_last_hour": 3, "payments_last_day": 3, "outside_active_hours": "block", "approvals_required": 1}
	}}
	cs := connect(t, a, &countingTransport{})
	out, text, isError := call(t, cs, mcpserver.ToolPreviewSend, map[string]any{"wallet_id": "w", "to": "ADDR", "amount": "5", "asset": "EURC"})
	if isError {
		t.Fatalf("tool error: %s", text)
	}
	if body, _ := a.body.Load().(map[string]any); body["asset"] != "EURC" {
		t.Errorf("the preview's body %v", body)
	}
	if out["asset"] != "EURC" || out["currency"] != "EUR" || out["rule"] != "daily_limit_eur" || out["spent_today_eur"] != "18" || out["remaining_today_eur"] != "2" {
		t.Errorf("answer %v", out)
	}
}
