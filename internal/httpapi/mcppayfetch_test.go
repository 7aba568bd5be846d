package httpapi_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/mcpserver"
	"github.com/agentwallet/agentwallet/internal/mpp/mpptest"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

// connectStdioWith is connectStdio with more environment for the server.
func connectStdioWith(t *testing.T, url, key string, env ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), mcpStdioChild+"=1", "AGENTWALLET_API_URL="+url, "AGENTWALLET_API_KEY="+key), env...)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// The MCP tool pay_fetch, beside x402_fetch: over /mcp it buys from the
// official MPP seller (payment.protocol mpp, the receipt's transaction,
// the receipt recorded, listed settled with its signature once swept) and
// pays a resource offering both protocols by the one the call prefers;
// the stdio server pays by the operator's PAY_PREFERENCE (x402 here) when
// the call does not say, and by the call's prefer when it does. Each
// purchase is paid once, to the seller of its protocol.
func TestPayFetch_MCPToolPaysEitherProtocol(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	mppSeller := mpptest.Start(t, e.ln.URL, mpptest.Options{FeePayer: true, Price: 10_000})
	x402Seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: 20_000})
	both := startBothFront(t, mppSeller.URL+mpptest.Weather, x402Seller.URL+x402test.Weather)
	wallet, _ := e.x402Wallet(nil)
	_, agentKey := e.agentKey()
	mppBefore, x402Before := mppSeller.Balance(t, mppSeller.Recipient), x402Seller.USDC(t, x402Seller.PayTo)

	overHTTP := connectMCP(t, e, agentKey)
	tools, err := overHTTP.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	if !names[mcpserver.ToolPayFetch] || !names[mcpserver.ToolX402Fetch] {
		t.Fatalf("tools %v", names)
	}
	res, out := call(t, overHTTP, mcpserver.ToolPayFetch, map[string]any{"wallet_id": wallet, "url": mppSeller.URL + mpptest.Weather})
	pay, _ := out["payment"].(map[string]any)
	if res.IsError || out["status"] != float64(200) || !strings.Contains(out["text"].(string), `"route":"/weather"`) || pay["status"] != "paid" ||
		pay["protocol"] != "mpp" || pay["amount"] != "0.01" || pay["asset"] != "USDC" || pay["pay_to"] != mppSeller.Recipient || pay["settled"] != true || pay["transaction"] == "" {
		t.Fatalf("MPP over /mcp: %s %v", text(res), out)
	}
	p := e.mppState(eng, pay["payment_id"].(string), "settled")
	if rc, _ := p["receipt"].(map[string]any); p["signature"] != pay["transaction"] || rc["reference"] != pay["transaction"] {
		t.Fatalf("settled payment %v, the seller's transaction %v", p, pay["transaction"])
	}
	res, out = call(t, overHTTP, mcpserver.ToolPayFetch, map[string]any{"wallet_id": wallet, "url": both.URL + "/weather", "prefer": "x402"})
	if pay, _ := out["payment"].(map[string]any); res.IsError || out["status"] != float64(200) || pay["protocol"] != "x402" || pay["settled"] != true {
		t.Fatalf("both, preferring x402, over /mcp: %s %v", text(res), out)
	}
	if res, _ := call(t, overHTTP, mcpserver.ToolPayFetch, map[string]any{"wallet_id": wallet, "url": both.URL + "/weather", "prefer": "tempo"}); !res.IsError ||
		!strings.Contains(text(res), "prefer") {
		t.Fatalf("an unknown preference: %s", text(res))
	}

	stdio := connectStdioWith(t, e.url, agentKey, "PAY_PREFERENCE=x402")
	res, out = call(t, stdio, mcpserver.ToolPayFetch, map[string]any{"wallet_id": wallet, "url": both.URL + "/weather"})
	if pay, _ := out["payment"].(map[string]any); res.IsError || out["status"] != float64(200) || pay["protocol"] != "x402" {
		t.Fatalf("both, by the operator's x402 preference, over stdio: %s %v", text(res), out)
	}
	res, out = call(t, stdio, mcpserver.ToolPayFetch, map[string]any{"wallet_id": wallet, "url": both.URL + "/weather", "prefer": "mpp"})
	if pay, _ := out["payment"].(map[string]any); res.IsError || out["status"] != float64(200) || pay["protocol"] != "mpp" || pay["settled"] != true {
		t.Fatalf("both, preferring mpp, over stdio: %s %v", text(res), out)
	}
	// x402_fetch still pays x402 only.
	res, out = call(t, stdio, mcpserver.ToolX402Fetch, map[string]any{"wallet_id": wallet, "url": both.URL + "/weather"})
	if pay, _ := out["payment"].(map[string]any); res.IsError || out["status"] != float64(200) || pay["protocol"] != "x402" {
		t.Fatalf("x402_fetch of both: %s %v", text(res), out)
	}
	if res, _ := call(t, stdio, mcpserver.ToolX402Fetch, map[string]any{"wallet_id": wallet, "url": mppSeller.URL + mpptest.Weather}); !res.IsError ||
		!strings.Contains(text(res), "x402") {
		t.Fatalf("x402_fetch of an MPP seller: %s", text(res))
	}

	if m, x := mppSeller.Balance(t, mppSeller.Recipient)-mppBefore, x402Seller.USDC(t, x402Seller.PayTo)-x402Before; m != 20_000 || x != 60_000 ||
		both.count(client.ProtocolMPP) != 1 || both.count(client.ProtocolX402) != 3 {
		t.Fatalf("the MPP seller received %d (want 20000), the x402 seller %d (want 60000); sent %v", m, x, both.forwarded)
	}
}

// An operator's PAY_PREFERENCE is mpp, x402 or unset; anything else stops
// the stdio server before it serves.
func TestPayFetch_StdioRefusesAnUnknownPayPreference(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AGENTWALLET_API_KEY": "svc_test_x", "PAY_PREFERENCE": "tempo"}
	err := mcpserver.RunStdio(t.Context(), func(k string) string { return env[k] }, "http://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "PAY_PREFERENCE") {
		t.Fatalf("RunStdio with PAY_PREFERENCE=tempo: %v", err)
	}
	for _, p := range []string{"", "mpp", "x402"} {
		if _, err := mcpserver.ParsePayPreference(p); err != nil {
			t.Fatalf("%q: %v", p, err)
		}
	}
}

// The MCP tool pay_fetch pays a seller whose 402 never changes (the same
// MPP challenge beside the same x402 offer) once: the first call pays the
// MPP challenge; the next answers payment.status already_paid with the
// first payment's id and state and pays nothing, neither the challenge
// again nor the x402 offer. One payment row; the MPP seller's recipient
// grown by one price, the x402 seller's by nothing.
func TestPayFetch_MCPToolPaysAStaticChallengeOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	const price = 10_000
	mppSeller := mpptest.Start(t, e.ln.URL, mpptest.Options{FeePayer: true, Price: price})
	x402Seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: 20_000})
	static := startStaticFront(t, mppSeller.URL+mpptest.Weather, x402Seller.URL+x402test.Weather)
	wallet, _ := e.x402Wallet(nil)
	_, agentKey := e.agentKey()
	mppBefore, x402Before := mppSeller.Balance(t, mppSeller.Recipient), x402Seller.USDC(t, x402Seller.PayTo)
	overHTTP := connectMCP(t, e, agentKey)

	res, out := call(t, overHTTP, mcpserver.ToolPayFetch, map[string]any{"wallet_id": wallet, "url": static.URL + "/weather"})
	first, _ := out["payment"].(map[string]any)
	if res.IsError || out["status"] != float64(200) || first["status"] != "paid" || first["protocol"] != "mpp" {
		t.Fatalf("first: %s %v", text(res), out)
	}
	res, out = call(t, overHTTP, mcpserver.ToolPayFetch, map[string]any{"wallet_id": wallet, "url": static.URL + "/weather"})
	again, _ := out["payment"].(map[string]any)
	if res.IsError || out["status"] != float64(402) || again["status"] != "already_paid" || again["protocol"] != "mpp" ||
		again["payment_id"] != first["payment_id"] || again["amount"] != "0.01" || again["state"] == nil || !strings.Contains(out["next"].(string), "do not retry") {
		t.Fatalf("again: %s %v", text(res), out)
	}

	e.wantRows("x402_payments", 1)
	if m, x := static.count(client.ProtocolMPP), static.count(client.ProtocolX402); m != 1 || x != 0 {
		t.Fatalf("the static seller was sent %d MPP and %d x402 payments, want 1 and 0", m, x)
	}
	if m, x := mppSeller.Balance(t, mppSeller.Recipient)-mppBefore, x402Seller.USDC(t, x402Seller.PayTo)-x402Before; m != price || x != 0 {
		t.Fatalf("the MPP seller received %d (want %d), the x402 seller %d (want 0)", m, price, x)
	}
}
