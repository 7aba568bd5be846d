package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/internal/mcpserver"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

// x402Wallet is an agent wallet for buying: USDC and no SOL (the seller's
// facilitator pays the fees), approval threshold 5, max_tx 10.
func (e *env) x402Wallet(extra map[string]any) (id, pubkey string) {
	e.t.Helper()
	p := map[string]any{"approval_threshold_usdc": 5, "max_tx_usdc": 10, "daily_limit_usdc": 1000}
	for k, v := range extra {
		p[k] = v
	}
	id, pubkey = e.agent(p, 100_000_000)
	e.ln.SetLamports(e.t, pubkey, 0)
	return id, pubkey
}

// The TypeScript SDK's client.x402 and the LangChain x402_fetch tool (in a
// scripted tool-calling loop), and /mcp's x402_fetch through the official
// TypeScript MCP client, each buying from the official seller on the
// localnet: the seller's USDC grows by exactly what was bought, the buying
// wallet never holds SOL.
func TestX402Tools_TypeScriptSDKAndLangChain(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	needBuilt(t, root)
	e := newEnv(t)
	eng, _ := e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: 10_000, PremiumPrice: 5_000_000})
	wallet, pubkey := e.x402Wallet(nil)
	allow, _ := e.x402Wallet(map[string]any{"allowlist": []string{newAddress()}})
	_, agentKey := e.agentKey()
	_, adminKey := e.adminKey()
	before := seller.USDC(t, seller.PayTo)

	env := []string{"API_URL=" + e.url, "ADMIN_KEY=" + adminKey, "AGENT_KEY=" + agentKey, "WALLET_ID=" + wallet, "WALLET_ALLOWLIST=" + allow,
		"SELLER_URL=" + seller.URL, "SELLER_PAY_TO=" + seller.PayTo, "SELLER_PRICE=10000"}
	out := node(t, root, env, "--test", "--test-concurrency=1", "sdk/typescript/test/x402.test.mjs", "sdk/langchain/test/x402.test.mjs")
	if !strings.Contains(out, "# fail 0") {
		t.Fatalf("TypeScript tests: %s", out)
	}
	t.Logf("%s", lastLines(out, 9))

	// Bought: /weather (v2), /v1/weather, /memo/weather, the streamed POST
	// (/weather behind a front), /premium once approved (5 USDC, once),
	// the LangChain loop's and the MCP call's /weather.
	if got, want := seller.USDC(t, seller.PayTo)-before, uint64(6*10_000+5_000_000); got != want {
		t.Fatalf("the seller received %d atomic USDC, want %d (settlements %+v)", got, want, seller.Settlements(t))
	}
	if n := seller.Lamports(t, pubkey); n != 0 {
		t.Fatalf("the buying wallet holds %d lamports", n)
	}
	settled := map[string]bool{}
	for _, s := range seller.Settlements(t) {
		if !s.Success || s.Payer != pubkey {
			t.Fatalf("settlement %+v: want success, paid by %s", s, pubkey)
		}
		settled[s.Transaction] = true
	}
	// The service lists each of them settled, with the on-chain signature.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := eng.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		status, body := e.do("GET", "/api/public/v1/x402/payments?state=settled&wallet_id="+wallet, e.key, nil)
		if status != http.StatusOK {
			t.Fatalf("list x402 payments: %d %v", status, body)
		}
		pays, _ := body["payments"].([]any)
		if len(pays) == len(settled) {
			for _, p := range pays {
				if sig, _ := p.(map[string]any)["signature"].(string); !settled[sig] {
					t.Fatalf("settled payment %v: its signature is none of the seller's settlements %v", p, settled)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d payments settled, want %d", len(pays), len(settled))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The MCP tool x402_fetch over stdio (the server as its own process: it
// fetches there and pays through the public route) and over /mcp (the API
// process fetches, behind the SSRF guard): a purchase from the official
// seller (listed settled with the seller's transaction), a parked payment
// bought once with approval_id after a human approved it, a policy block, a
// cap, bad arguments, a non-402 passed through with its text bounded; a live
// (mainnet) account's /mcp fetch of a private address is refused before any
// payment.
func TestX402Tools_MCPFetch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	ctx := context.Background()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: 10_000, PremiumPrice: 5_000_000})
	wallet, pubkey := e.x402Wallet(nil)
	allow, _ := e.x402Wallet(map[string]any{"allowlist": []string{newAddress()}})
	_, agentKey := e.agentKey()
	_, adminKey := e.adminKey()
	before := seller.USDC(t, seller.PayTo)
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strings.Repeat("a", 100<<10)))
	}))
	t.Cleanup(big.Close)

	// The stdio server as its own process (`api mcp`): it fetches in that
	// process and pays through the public route.
	inProcess := connectStdio(t, e.url, agentKey)
	overHTTP := connectMCP(t, e, agentKey)

	var bought uint64 // atomic USDC
	for _, tc := range []struct {
		name string
		cs   *mcp.ClientSession
	}{{"stdio", inProcess}, {"streamable HTTP", overHTTP}} {
		t.Run(tc.name, func(t *testing.T) {
			tools, err := tc.cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == mcpserver.ToolX402Fetch }) {
				t.Fatalf("no %s among the tools", mcpserver.ToolX402Fetch)
			}
			res, out := call(t, tc.cs, "x402_fetch", map[string]any{"wallet_id": wallet, "url": seller.URL + x402test.Weather})
			pay, _ := out["payment"].(map[string]any)
			if res.IsError || out["status"] != float64(200) || !strings.Contains(out["text"].(string), `"route":"/weather"`) ||
				pay["status"] != "paid" || pay["settled"] != true || pay["pay_to"] != seller.PayTo || pay["amount"] != "0.01" || pay["transaction"] == "" {
				t.Fatalf("buy: %s %v", text(res), out)
			}
			bought += 10_000
			// The service lists it settled, with the transaction the seller named.
			if p := e.with(t).x402State(eng, pay["payment_id"].(string), "settled"); p["signature"] != pay["transaction"] {
				t.Fatalf("settled payment %v, the seller's transaction %v", p, pay["transaction"])
			}
			res, out = call(t, tc.cs, "x402_fetch", map[string]any{"wallet_id": wallet, "url": seller.URL + x402test.V1Weather, "method": "get"})
			if pay, _ := out["payment"].(map[string]any); res.IsError || out["status"] != float64(200) || pay["status"] != "paid" {
				t.Fatalf("buy v1: %s %v", text(res), out)
			}
			bought += 10_000
			_, out = call(t, tc.cs, "x402_fetch", map[string]any{"wallet_id": wallet, "url": seller.URL + x402test.Premium})
			parked, _ := out["payment"].(map[string]any)
			apID, _ := parked["approval_id"].(string)
			if parked["status"] != "pending_approval" || !strings.HasPrefix(apID, "ap_") || !strings.Contains(out["next"].(string), "approval_id") {
				t.Fatalf("park: %v", out)
			}
			// Approved, the same call with approval_id buys it, once.
			if status, body := e.with(t).approve(apID, adminKey, nil); status != http.StatusOK {
				t.Fatalf("approve: %d %v", status, body)
			}
			res, out = call(t, tc.cs, "x402_fetch", map[string]any{"wallet_id": wallet, "url": seller.URL + x402test.Premium, "approval_id": apID})
			if pay, _ := out["payment"].(map[string]any); res.IsError || out["status"] != float64(200) || pay["status"] != "paid" || pay["amount"] != "5" {
				t.Fatalf("buy with the approval: %s %v", text(res), out)
			}
			bought += 5_000_000
			if res, _ = call(t, tc.cs, "x402_fetch", map[string]any{"wallet_id": wallet, "url": seller.URL + x402test.Premium, "approval_id": apID}); !res.IsError {
				t.Fatalf("a second use of the approval: %s", text(res))
			}
			_, out = call(t, tc.cs, "x402_fetch", map[string]any{"wallet_id": allow, "url": seller.URL + x402test.Weather})
			if pay, _ := out["payment"].(map[string]any); pay["status"] != "blocked" || pay["reason"] != "recipient_not_allowed" {
				t.Fatalf("block: %v", out)
			}
			res, _ = call(t, tc.cs, "x402_fetch", map[string]any{"wallet_id": wallet, "url": seller.URL + x402test.Weather, "max_usdc": "0.001"})
			if !res.IsError || !strings.Contains(text(res), "422") {
				t.Fatalf("a price over max_usdc: %s", text(res))
			}
			for _, args := range []map[string]any{
				{"wallet_id": wallet, "url": "ftp://example.com/"},
				{"wallet_id": wallet, "url": seller.URL + x402test.Weather, "method": "TRACE"},
			} {
				if res, _ := call(t, tc.cs, "x402_fetch", args); !res.IsError {
					t.Fatalf("bad arguments %v: %v", args, text(res))
				}
			}
		})
	}
	// The text is bounded (the stdio server reaches loopback as the agent could).
	_, out := call(t, inProcess, "x402_fetch", map[string]any{"wallet_id": wallet, "url": big.URL})
	if out["status"] != float64(200) || out["truncated"] != true || len(out["text"].(string)) != mcpserver.X402TextLimit || out["payment"] != nil {
		t.Fatalf("bounded text: status %v truncated %v len %d", out["status"], out["truncated"], len(out["text"].(string)))
	}

	// A live account's /mcp fetch may not reach a private address: refused
	// at the dial, before anything is paid.
	_, liveKey := e.newAccount(solana.Mainnet)
	status, liveWallet := e.do("POST", "/api/public/v1/agents", liveKey, map[string]any{"label": "live"})
	if status != http.StatusCreated {
		t.Fatalf("a live wallet: %d %v", status, liveWallet)
	}
	live := connectMCP(t, e, liveKey)
	settled := len(seller.Settlements(t))
	res, _ := call(t, live, "x402_fetch", map[string]any{"wallet_id": liveWallet["id"], "url": seller.URL + x402test.Weather})
	if !res.IsError || !strings.Contains(text(res), "public address") {
		t.Fatalf("a live account's fetch of %s: %s", seller.URL, text(res))
	}
	if n := len(seller.Settlements(t)); n != settled {
		t.Fatalf("settlements went from %d to %d", settled, n)
	}

	if got, want := seller.USDC(t, seller.PayTo)-before, bought; got != want {
		t.Fatalf("the seller received %d atomic USDC, want %d", got, want)
	}
	if n := seller.Lamports(t, pubkey); n != 0 {
		t.Fatalf("the buying wallet holds %d lamports", n)
	}
}
