package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/mcpserver"
)

// bearer adds an API key to every request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// connectMCP is the official MCP client on the env's /mcp with key.
func connectMCP(t *testing.T, e *env, key string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: e.url + httpapi.MCPPath, HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured answer.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var out map[string]any
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(raw, &out)
	}
	return res, out
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// The MCP tools over in-memory transports (the stdio server's code) and
// over the API's streamable HTTP endpoint, with an agent key: the three
// send outcomes, reads, an approval's status, a bad argument as a tool
// error, and no tool that approves or changes a policy.
func TestMCPServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	ctx := context.Background()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 5, "max_tx_usdc": 10}, 50_000_000)
	deposits, sender := e.deposited()
	_, agentKey := e.agentKey()

	serverT, clientT := mcp.NewInMemoryTransports()
	if _, err := mcpserver.New(client.New(e.url, agentKey), "https://wallet.example.com",
		mcpserver.WithX402(mcpserver.FetchClient())).Connect(ctx, serverT, nil); err != nil {
		t.Fatal(err)
	}
	inMemory, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inMemory.Close()
	overHTTP, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: e.url + httpapi.MCPPath, HTTPClient: &http.Client{Transport: bearer{agentKey, http.DefaultTransport}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer overHTTP.Close()

	for name, cs := range map[string]*mcp.ClientSession{"in memory": inMemory, "streamable HTTP": overHTTP} {
		t.Run(name, func(t *testing.T) {
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
				if tool.Name == "send_usdc" && (tool.Annotations == nil || tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint) {
					t.Errorf("send_usdc is not marked destructive: %+v", tool.Annotations)
				}
				if tool.OutputSchema == nil || tool.InputSchema == nil {
					t.Errorf("%s lacks a schema", tool.Name)
				}
			}
			slices.Sort(names)
			if strings.Join(names, ",") != "get_approval_status,get_balance_history,get_wallet_info,list_recent_transactions,pay_fetch,preview_send,send_usdc,x402_fetch" {
				t.Fatalf("tools %v", names)
			}

			_, sent := call(t, cs, "send_usdc", map[string]any{"wallet_id": id, "to": newAddress(), "amount": "1.5", "memo": "mcp"})
			if sent["status"] != "sent" || sent["signature"] == "" || sent["idempotency_key"] == "" {
				t.Fatalf("send: %v", sent)
			}
			_, parked := call(t, cs, "send_usdc", map[string]any{"wallet_id": id, "to": newAddress(), "amount": "6"})
			apID, _ := parked["approval_id"].(string)
			if parked["status"] != "pending_approval" || apID == "" || parked["expires_at"] == "" || !strings.HasSuffix(parked["approve_url"].(string), "/dashboard/approvals/"+apID) {
				t.Fatalf("park: %v", parked)
			}
			_, blocked := call(t, cs, "send_usdc", map[string]any{"wallet_id": id, "to": newAddress(), "amount": "11"})
			if blocked["status"] != "blocked" || blocked["reason"] != "exceeds_max_tx" || blocked["remaining_today_usdc"] == "" {
				t.Fatalf("blocked: %v", blocked)
			}
			_, status := call(t, cs, "get_approval_status", map[string]any{"approval_id": apID})
			if status["status"] != "pending" || !strings.Contains(status["next"].(string), "do not send") {
				t.Fatalf("approval: %v", status)
			}
			_, info := call(t, cs, "get_wallet_info", map[string]any{"wallet_id": id})
			if info["state"] != "active" || info["usdc"] == "" || info["policy"] == nil {
				t.Fatalf("wallet: %v", info)
			}
			_, txs := call(t, cs, "list_recent_transactions", map[string]any{"wallet_id": id, "limit": 5})
			if list, _ := txs["transactions"].([]any); len(list) == 0 {
				t.Fatalf("transactions: %v", txs)
			}
			// Money coming in: the deposits, their sender, their asset.
			_, txs = call(t, cs, "list_recent_transactions", map[string]any{"wallet_id": deposits, "direction": "receive"})
			list, _ := txs["transactions"].([]any)
			got := map[string]string{}
			for _, tx := range list {
				tx := tx.(map[string]any)
				if tx["direction"] != "receive" || tx["from"] != sender || tx["to"] != nil || tx["status"] != "confirmed" {
					t.Fatalf("a deposit: %v", tx)
				}
				got[tx["asset"].(string)] = tx["amount"].(string)
			}
			if len(list) != 2 || got["usdc"] != "2.5" || got["sol"] != "0.25" {
				t.Fatalf("deposits: %v", txs)
			}
			if _, sends := call(t, cs, "list_recent_transactions", map[string]any{"wallet_id": deposits, "direction": "send"}); len(sends["transactions"].([]any)) != 0 {
				t.Fatalf("sends of the paid wallet: %v", sends)
			}
			at := time.Now().UTC().Add(time.Second).Format(time.RFC3339)
			_, h := call(t, cs, "get_balance_history", map[string]any{"wallet_id": deposits, "asset": "all", "at": at})
			held := map[string]any{}
			series, _ := h["series"].([]any)
			for _, s := range series {
				for _, p := range s.(map[string]any)["points"].([]any) {
					held[p.(map[string]any)["asset"].(string)] = p.(map[string]any)["amount"]
				}
			}
			if len(series) != 5 || held["USDC"] != "2.5" || held["SOL"] != "1.25" || held["EURC"] != "0" {
				t.Fatalf("balance history: %v", h)
			}
			if res, _ := call(t, cs, "get_balance_history", map[string]any{"wallet_id": deposits, "at": at, "interval": "day"}); !res.IsError || !strings.Contains(text(res), "422") {
				t.Fatalf("at with an interval: %+v", res)
			}
			_, preview := call(t, cs, "preview_send", map[string]any{"wallet_id": id, "to": newAddress(), "amount": "11"})
			if preview["outcome"] != "blocked" || preview["reason"] != "exceeds_max_tx" {
				t.Fatalf("preview: %v", preview)
			}
			// Bad arguments are tool errors the model can read.
			for _, args := range []map[string]any{
				{"wallet_id": id, "to": newAddress(), "amount": "one"},
				{"wallet_id": id, "to": "nope", "amount": "1"},
				{"wallet_id": "00000000-0000-4000-8000-000000000000", "to": newAddress(), "amount": "1"},
			} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_usdc", Arguments: args})
				if err != nil || !res.IsError || text(res) == "" {
					t.Fatalf("bad arguments %v: %+v %v", args, res, err)
				}
			}
		})
	}

	// Without a valid key the endpoint answers 401.
	resp, err := http.Post(e.url+httpapi.MCPPath, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no key: %d", resp.StatusCode)
	}
}

// mcpHeaders are what a streamable-HTTP MCP client sends.
var mcpHeaders = http.Header{"Accept": {"application/json, text/event-stream"}}

// The MCP tools through /mcp in another asset: send_usdc pays in the asset
// given and names it, a EUR block says the EUR day, get_wallet_info shows
// each asset held and the policy's assets and EUR limits, and the
// transactions of one asset are listed under it.
func TestMCP_SendsInTheAssetGiven(t *testing.T) {
	t.Parallel()
	e := currencyEnv(t)
	e.startWorker()
	id, pubkey := e.agent(map[string]any{"assets": []string{"USDC", "EURC"}, "daily_limit_eur": 20, "max_tx_eur": 10,
		"approval_threshold_eur": 10}, 0)
	e.fundAsset(pubkey, "EURC", 30_000_000)
	_, agentKey := e.agentKey()
	cs := connectMCP(t, e, agentKey)

	if _, sent := call(t, cs, "send_usdc", map[string]any{"wallet_id": id, "to": newAddress(), "amount": "2", "asset": "eurc"}); sent["status"] != "sent" || sent["asset"] != "EURC" {
		t.Fatalf("2 EURC: %v", sent)
	}
	_, blocked := call(t, cs, "send_usdc", map[string]any{"wallet_id": id, "to": newAddress(), "amount": "12", "asset": "EURC"})
	if blocked["status"] != "blocked" || blocked["reason"] != "exceeds_max_tx" || blocked["remaining_today_eur"] != "18" || blocked["remaining_today_usdc"] != nil {
		t.Fatalf("12 EURC over a 10 EUR max: %v", blocked)
	}
	if _, other := call(t, cs, "send_usdc", map[string]any{"wallet_id": id, "to": newAddress(), "amount": "1", "asset": "PYUSD"}); other["reason"] != "asset_not_allowed" {
		t.Fatalf("PYUSD not in the policy: %v", other)
	}
	_, info := call(t, cs, "get_wallet_info", map[string]any{"wallet_id": id})
	policy, _ := info["policy"].(map[string]any)
	if fmt.Sprint(policy["assets"]) != "[USDC EURC]" || policy["daily_limit_eur"] != "20" || !strings.Contains(fmt.Sprint(info["assets"]), "symbol:EURC") {
		t.Fatalf("wallet info: %v", info)
	}
	_, list := call(t, cs, "list_recent_transactions", map[string]any{"wallet_id": id, "asset": "EURC"})
	txs, _ := list["transactions"].([]any)
	if len(txs) != 1 || txs[0].(map[string]any)["asset"] != "eurc" || txs[0].(map[string]any)["amount"] != "2" {
		t.Fatalf("EURC transactions: %v", list)
	}
}

// With Postgres unreachable a caller whose key cannot be checked gets a
// fixed 503, never the driver's text (user, database, address).
func TestMCP_DatabaseDownIs503WithoutInternals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{proxied: true})
	_, agentKey := e.agentKey()
	u, err := url.Parse(e.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	rpc := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	unknown := "svc_test_" + newAddress() // well-formed: it is looked up
	for _, mode := range []struct {
		name string
		m    proxyMode
	}{{"refused", proxyRefuse}, {"blackholed", proxyBlackhole}} {
		e.pgProxy.set(mode.m)
		for _, key := range []string{unknown, agentKey} {
			status, raw, h := e.request("POST", httpapi.MCPPath, key, rpc, mcpHeaders)
			if status != http.StatusServiceUnavailable || strings.TrimSpace(string(raw)) != `{"error":"authentication unavailable; try again"}` {
				t.Fatalf("%s: %d %s", mode.name, status, raw)
			}
			for _, leak := range []string{dbName, "postgres", "127.0.0.1", "dial", "connect"} {
				if strings.Contains(string(raw), leak) {
					t.Fatalf("%s: the answer names %q: %s", mode.name, leak, raw)
				}
			}
			if h.Get("x-ratelimit-limit") == "" {
				t.Fatalf("%s: no rate-limit headers: %v", mode.name, h)
			}
		}
		e.pgProxy.set(proxyUp)
	}
}

// /mcp bodies are bounded like the API's: past 64 KiB is 413, nothing
// read; a large body within it is served.
func TestMCP_BodyOver64KiBIs413(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, agentKey := e.agentKey()
	padded := func(n int) string {
		head := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"pad":"`
		tail := `"}}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	status, body, _ := e.doH("POST", httpapi.MCPPath, agentKey, json.RawMessage(padded(httpapi.MaxBodyBytes+1)))
	wantError(t, status, body, http.StatusRequestEntityTooLarge, "larger than 64 KiB")
	if status, raw, _ := e.request("POST", httpapi.MCPPath, agentKey, padded(httpapi.MaxBodyBytes), mcpHeaders); status != http.StatusOK {
		t.Fatalf("64 KiB: %d %s", status, raw)
	}
}
