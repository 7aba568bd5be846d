package httpapi_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/mpp/mpptest"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

// The TypeScript SDK's payFetch and mpp methods and the LangChain pay_fetch
// tool against the real service, the official MPP seller and a resource
// offering both protocols: each purchase is paid once, to the seller of
// its protocol (the MPP seller's recipient grows by exactly five prices,
// the x402 seller's by exactly two), and the buying wallets never hold
// SOL.
func TestPayFetch_TypeScriptSDKAndLangChain(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	needBuilt(t, root)
	e := newEnv(t)
	e.startWorker()
	const mppPrice, x402Price = 10_000, 20_000
	mppSeller := mpptest.Start(t, e.ln.URL, mpptest.Options{FeePayer: true, Price: mppPrice})
	x402Seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: x402Price})
	both := startBothFront(t, mppSeller.URL+mpptest.Weather, x402Seller.URL+x402test.Weather)
	wallet, pubkey := e.x402Wallet(nil)
	parking, _ := e.x402Wallet(map[string]any{"approval_threshold_usdc": 0.01})
	fenced, _ := e.x402Wallet(map[string]any{"allowlist": []string{newAddress()}})
	_, agentKey := e.agentKey()
	_, adminKey := e.adminKey()
	mppBefore, x402Before := mppSeller.Balance(t, mppSeller.Recipient), x402Seller.USDC(t, x402Seller.PayTo)

	env := []string{"API_URL=" + e.url, "ADMIN_KEY=" + adminKey, "AGENT_KEY=" + agentKey, "WALLET_ID=" + wallet,
		"WALLET_PARKING=" + parking, "WALLET_ALLOWLIST=" + fenced, "MPP_SELLER_URL=" + mppSeller.URL, "MPP_RECIPIENT=" + mppSeller.Recipient,
		"MPP_PRICE=" + strconv.Itoa(mppPrice), "BOTH_URL=" + both.URL, "X402_PRICE=" + strconv.Itoa(x402Price)}
	out := node(t, root, env, "--test", "--test-concurrency=1", "sdk/typescript/test/payfetch.test.mjs", "sdk/langchain/test/payfetch.test.mjs")
	if !strings.Contains(out, "# fail 0") {
		t.Fatalf("TypeScript tests: %s", out)
	}
	t.Logf("%s", lastLines(out, 9))

	// MPP: the SDK's default purchase, the default of both, the approved
	// one, mpp.pay's, and the LangChain tool's; x402: the SDK's and the
	// tool's purchase of both, preferring x402.
	if got := mppSeller.Balance(t, mppSeller.Recipient) - mppBefore; got != 5*mppPrice {
		t.Fatalf("the MPP seller received %d, want %d", got, 5*mppPrice)
	}
	if got := x402Seller.USDC(t, x402Seller.PayTo) - x402Before; got != 2*x402Price {
		t.Fatalf("the x402 seller received %d, want %d", got, 2*x402Price)
	}
	if m, x := both.count(client.ProtocolMPP), both.count(client.ProtocolX402); m != 1 || x != 2 {
		t.Fatalf("the resource offering both passed %d MPP and %d x402 payments, want 1 and 2", m, x)
	}
	if n := mppSeller.Lamports(t, pubkey); n != 0 {
		t.Fatalf("the buying wallet holds %d lamports", n)
	}
}

// The TypeScript SDK's payFetch and the LangChain pay_fetch tool pay a
// seller whose 402 never changes (the same MPP challenge beside the same
// x402 offer on every request) once each: asked again, the SDK throws
// ChallengePaidError and the tool answers already_paid, both naming the
// first payment, and nothing more is paid in either protocol. One payment
// row per seller front; the MPP seller's recipient grows by two prices
// (one per front), the x402 seller's by nothing.
func TestPayFetch_TypeScriptSDKAndLangChainPayAStaticChallengeOnce(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	needBuilt(t, root)
	e := newEnv(t)
	e.startWorker()
	const mppPrice = 10_000
	mppSeller := mpptest.Start(t, e.ln.URL, mpptest.Options{FeePayer: true, Price: mppPrice})
	x402Seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: 20_000})
	forSDK := startStaticFront(t, mppSeller.URL+mpptest.Weather, x402Seller.URL+x402test.Weather)
	forLangChain := startStaticFront(t, mppSeller.URL+mpptest.Weather, x402Seller.URL+x402test.Weather)
	wallet, _ := e.x402Wallet(nil)
	_, agentKey := e.agentKey()
	_, adminKey := e.adminKey()
	mppBefore, x402Before := mppSeller.Balance(t, mppSeller.Recipient), x402Seller.USDC(t, x402Seller.PayTo)

	env := []string{"API_URL=" + e.url, "ADMIN_KEY=" + adminKey, "AGENT_KEY=" + agentKey, "WALLET_ID=" + wallet,
		"MPP_PRICE=" + strconv.Itoa(mppPrice), "STATIC_SDK_URL=" + forSDK.URL, "STATIC_LANGCHAIN_URL=" + forLangChain.URL}
	out := node(t, root, env, "--test", "--test-concurrency=1", "sdk/typescript/test/staticchallenge.test.mjs", "sdk/langchain/test/staticchallenge.test.mjs")
	if !strings.Contains(out, "# fail 0") {
		t.Fatalf("TypeScript tests: %s", out)
	}
	t.Logf("%s", lastLines(out, 9))

	e.wantRows("x402_payments", 2)
	for name, f := range map[string]*bothFront{"the SDK's": forSDK, "LangChain's": forLangChain} {
		if m, x := f.count(client.ProtocolMPP), f.count(client.ProtocolX402); m != 1 || x != 0 {
			t.Fatalf("%s static seller was sent %d MPP and %d x402 payments, want 1 and 0", name, m, x)
		}
	}
	if m, x := mppSeller.Balance(t, mppSeller.Recipient)-mppBefore, x402Seller.USDC(t, x402Seller.PayTo)-x402Before; m != 2*mppPrice || x != 0 {
		t.Fatalf("the MPP seller received %d (want %d), the x402 seller %d (want 0)", m, 2*mppPrice, x)
	}
}
