package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// repoRoot is the repository's directory.
func repoRoot(t testing.TB) string {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// needBuilt fails the test when the TypeScript packages are not built.
func needBuilt(t testing.TB, root string) {
	for _, f := range []string{"node_modules/@agentwallet/sdk", "sdk/typescript/dist/index.js", "sdk/langchain/dist/index.js"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Fatalf("%s is missing: run make sdk (make test does)", f)
		}
	}
}

// node runs a node command in dir with env and fails the test on error.
func node(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The TypeScript SDK, the LangChain tools (and the MCP endpoint through the
// official TypeScript MCP client) against the real service, and the
// LangChain example with its scripted model.
func TestTypeScriptPackages(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	needBuilt(t, root)
	e := currencyEnv(t)
	e.startWorker()
	wallet, _ := e.agent(map[string]any{"approval_threshold_usdc": 5, "max_tx_usdc": 10, "daily_limit_usdc": 1000}, 500_000_000)
	// A wallet that may spend EURC (a EUR day of 20, 10 a payment, a human
	// from 8), holding 50.
	eurWallet, eurPubkey := e.agent(map[string]any{"assets": []string{"USDC", "EURC"}, "daily_limit_eur": 20, "max_tx_eur": 10,
		"approval_threshold_eur": 8}, 0)
	e.fundAsset(eurPubkey, "EURC", 50_000_000)
	busy, _ := e.agent(nil, 0)
	// 250 transactions to page through.
	ctx := context.Background()
	rows := make([]payment.Transaction, 250)
	for i := range rows {
		rows[i] = payment.Transaction{ID: uuid.New(), AccountID: e.account.ID, WalletID: uuid.MustParse(busy), Network: solana.Devnet,
			Signature: sol.Signature(sol.NewWallet().PrivateKey[:64]).String(), Kind: "usdc", Direction: "send", Amount: 1,
			Counterparty: newAddress(), Status: payment.TxConfirmed, SignedTx: []byte{0}, LastValidBlockHeight: 1,
			CreatedAt: time.Now().Add(-time.Duration(i) * time.Second), UpdatedAt: time.Now()}
	}
	if _, err := e.db.NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// A wallet paid from outside, and an endpoint that heard of it
	// (tx.received): the tests read the deposits and replay a delivery;
	// and a wallet whose faucet money the snapshot found unexplained.
	hook := newReceiver(t, nil)
	ep, secret := e.createEndpoint(hook.URL, "tx.received")
	e.waitDelivered(e.key, ep)
	deposits, sender := e.deposited()
	hook.next(t, "tx.received")
	hook.next(t, "tx.received")
	faucet := e.unexplained()
	_, agentKey := e.agentKey()
	env := []string{"API_URL=" + e.url, "ADMIN_KEY=" + e.key, "AGENT_KEY=" + agentKey, "WALLET_ID=" + wallet, "WALLET_250=" + busy,
		"DEPOSIT_WALLET=" + deposits, "DEPOSIT_SENDER=" + sender, "DEPOSIT_ENDPOINT=" + ep, "DEPOSIT_ENDPOINT_SECRET=" + secret, "UNEXPLAINED_WALLET=" + faucet, "EUR_WALLET=" + eurWallet}
	out := node(t, root, env, "--test", "--test-concurrency=1", "sdk/typescript/test/sdk.test.mjs", "sdk/langchain/test/langchain.test.mjs")
	if !strings.Contains(out, "# fail 0") {
		t.Fatalf("TypeScript tests: %s", out)
	}
	t.Logf("%s", lastLines(out, 9))

	// The example, offline with its scripted model.
	to := newAddress()
	out = node(t, root, []string{"AGENTWALLET_API_URL=" + e.url, "AGENTWALLET_API_KEY=" + agentKey, "WALLET_ID=" + wallet,
		"SOLANA_RPC_URL=" + e.ln.URL, "PAY_TO=" + to, "PAY_AMOUNT=1.5", "OPENAI_API_KEY="}, "examples/langchain-agent.mjs")
	if !strings.Contains(out, `send outcome: {"status":"sent"`) || !strings.Contains(out, fmt.Sprintf("recipient %s holds 1.5 USDC", to)) {
		t.Fatalf("example: %s", out)
	}
}

// The committed generated types are what openapi-typescript makes of the
// committed OpenAPI document (make sdk-types regenerates them).
func TestTypeScriptTypesAreCurrent(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	needBuilt(t, root)
	tmp := filepath.Join(t.TempDir(), "schema.ts")
	cmd := exec.Command(filepath.Join(root, "node_modules/.bin/openapi-typescript"), "openapi/openapi.yaml", "-o", tmp)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("openapi-typescript: %v\n%s", err, out)
	}
	want, _ := os.ReadFile(tmp)
	got, err := os.ReadFile(filepath.Join(root, "sdk/typescript/src/schema.ts"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("sdk/typescript/src/schema.ts is stale: run make sdk-types (%v)", err)
	}
}

// npm pack makes tarballs that install into an empty folder and import.
func TestTypeScriptPackagesPack(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	needBuilt(t, root)
	dir := t.TempDir()
	var tarballs []string
	for _, pkg := range []string{"sdk/typescript", "sdk/langchain"} {
		cmd := exec.Command("npm", "pack", "--pack-destination", dir, "--silent")
		cmd.Dir = filepath.Join(root, pkg)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("npm pack %s: %v", pkg, err)
		}
		tarballs = append(tarballs, filepath.Join(dir, strings.TrimSpace(string(out))))
	}
	app := filepath.Join(dir, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "package.json"), []byte(`{"name":"app","private":true,"type":"module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	install := exec.Command("npm", append([]string{"install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"}, append(tarballs, "@langchain/core@1.4.0", "zod@4.6.7")...)...)
	install.Dir = app
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	out := node(t, app, nil, "--input-type=module", "-e", `
		import { AgentWallet, verifyWebhook } from '@agentwallet/sdk';
		import { agentWalletTools } from '@agentwallet/langchain';
		const tools = agentWalletTools({ client: new AgentWallet({ apiKey: 'svc_test_x' }), walletId: 'w' });
		console.log(typeof verifyWebhook, tools.map((t) => t.name).join(','));`)
	if strings.TrimSpace(out) != "function send_usdc,get_wallet_info,list_recent_transactions,get_balance_history,preview_send,get_approval_status,x402_fetch,pay_fetch" {
		t.Fatalf("imports: %s", out)
	}
}
