package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// watchDeposits scans for deposits every 100 ms until the test ends, as
// the scheduler's deposits:scan task has a worker do every 2 s.
func (e *env) watchDeposits() {
	e.t.Helper()
	// Token accounts are listed again every second (10 minutes deployed),
	// so one made for a wallet by someone else is found at once.
	w := &deposit.Watcher{DB: e.db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(e.ln.URL, solana.Devnet, 5*time.Second)},
		ListEvery: time.Second}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_, _ = w.Scan(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	e.t.Cleanup(func() { stop(); <-done })
}

// USDC and SOL sent to an agent's address from outside, every way money
// arrives (a USDC transfer, a transferChecked, a transfer inside another
// program, one to a second USDC account the wallet owns, SOL), each reach
// a tx.received endpoint once, signed so that libraries we did not write
// verify it, and list in GET /transactions as receive (with
// direction=receive, not with direction=send).
func TestDeposits_AnnouncedSignedAndListed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, pubkey := e.agent(nil, 0)
	hook := newReceiver(t, nil)
	ep, secret := e.createEndpoint(hook.URL, "tx.received")
	e.waitDelivered(e.key, ep) // the endpoint's test event
	e.watchDeposits()

	from := chaintest.NewPayer(t, e.ln, 100_000_000, 2*solana.LamportsPerSOL)
	to := sol.MustPublicKeyFromBase58(pubkey)
	for _, pay := range []struct {
		asset, amount string
		send          func() string
	}{
		{"usdc", "1.25", func() string { return from.TransferCheckedUSDC(t, to, 1_250_000) }},
		{"usdc", "0.5", func() string { return from.TransferUSDCByCPI(t, to, 500_000) }},
		{"usdc", "0.75", func() string { return from.TransferUSDCToAccount(t, from.NewTokenAccount(t, to), 750_000) }},
		{"usdc", "2.5", func() string { return from.TransferUSDC(t, to, 2_500_000) }},
		{"sol", "0.25", func() string { return from.TransferSOL(t, to, 250_000_000) }},
	} {
		sig := pay.send()
		confirmed := time.Now()
		r := hook.next(t, "tx.received")
		t.Logf("%s deposit announced %v after its confirmation", pay.asset, time.Since(confirmed))
		verifyWithNode(t, secret, r)
		var body struct {
			Event string         `json:"event"`
			Data  map[string]any `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		d := body.Data
		if body.Event != "tx.received" || d["wallet_id"] != id || d["signature"] != sig || d["asset"] != pay.asset ||
			d["from"] != from.PublicKey().String() || printed(d["amount"]) != pay.amount {
			t.Fatalf("%s: delivered %s", pay.asset, r.Body)
		}
	}
	select {
	case r := <-hook.arrive:
		t.Fatalf("a further delivery: %s", r.Body)
	case <-time.After(500 * time.Millisecond):
	}

	status, got := e.do("GET", "/api/public/v1/transactions?direction=receive&wallet_id="+id, e.key, nil)
	txs, _ := got["transactions"].([]any)
	if status != http.StatusOK || len(txs) != 5 {
		t.Fatalf("receives: %d %v", status, got)
	}
	// Several may bear the same second (a block's time): find the SOL one.
	var sol0 map[string]any
	for _, tx := range txs {
		if tx.(map[string]any)["kind"] == "sol" {
			sol0 = tx.(map[string]any)
		}
	}
	if sol0["direction"] != "receive" || sol0["kind"] != "sol" || sol0["amount"] != 0.25 || sol0["counterparty"] != from.PublicKey().String() || sol0["status"] != "confirmed" {
		t.Fatalf("the SOL deposit listed: %v", sol0)
	}
	if status, got := e.do("GET", "/api/public/v1/transactions?direction=send&wallet_id="+id, e.key, nil); status != http.StatusOK || len(got["transactions"].([]any)) != 0 {
		t.Fatalf("sends: %d %v", status, got)
	}
	if status, got := e.do("GET", "/api/public/v1/transactions", e.key, nil); status != http.StatusOK || len(got["transactions"].([]any)) != 5 {
		t.Fatalf("the plain list: %d %v", status, got)
	}

	// The ledger: the balance after the deposits, as the chain has it (the
	// SOL the test funded the wallet with by the localnet's faucet shows in
	// the deposit transaction's balances).
	now := time.Now().UTC().Add(time.Second).Format(time.RFC3339)
	for asset, want := range map[string]float64{"USDC": 5, "SOL": 1.25} {
		status, h := e.do("GET", "/api/public/v1/wallets/"+id+"/balance/history?asset="+asset+"&at="+now, e.key, nil)
		if p := onlyPoints(h); status != http.StatusOK || len(p) != 1 || p[0]["asset"] != asset || p[0]["amount"] != want {
			t.Fatalf("%s from the ledger: %d %v, want %v", asset, status, h, want)
		}
	}
	status, h := e.do("GET", "/api/public/v1/wallets/"+id+"/balance/history?interval=hour", e.key, nil)
	if p := onlyPoints(h); status != http.StatusOK || len(p) != 31 {
		t.Fatalf("30 hours of history: %d %v", status, h)
	}
}

// printed is a decoded JSON number as sent (no exponent).
func printed(v any) string {
	f, ok := v.(float64)
	if !ok {
		return ""
	}
	b, _ := json.Marshal(f)
	return string(b)
}

// A wallet's money that moved without the service is listed by GET
// /wallets/{id}/balance/differences, a page at a time, newest first, and
// counted in /metrics: here the localnet's faucet (SOL and USDC set with
// no transaction), which the snapshot finds apart from the ledger. Another
// account's wallet is 404; a malformed cursor 400.
func TestDeposits_DifferencesListedAndCounted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.agent(nil, 3_000_000)
	w := &deposit.Watcher{DB: e.db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(e.ln.URL, solana.Devnet, 5*time.Second)}}
	if st, err := w.Snapshot(context.Background()); err != nil || st.Differences < 2 {
		t.Fatalf("snapshot %+v %v", st, err)
	}
	path := "/api/public/v1/wallets/" + id + "/balance/differences"
	seen := map[string]map[string]any{}
	cursor := ""
	for page := 0; page < 3; page++ {
		q := path + "?limit=1"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		status, got := e.do("GET", q, e.key, nil)
		items, _ := got["items"].([]any)
		if status != http.StatusOK || got["wallet_id"] != id || len(items) > 1 {
			t.Fatalf("page %d: %d %v", page, status, got)
		}
		for _, it := range items {
			d := it.(map[string]any)
			seen[d["asset"].(string)] = d
		}
		next, _ := got["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	usdc, sol := seen["USDC"], seen["SOL"]
	if len(seen) != 2 || usdc["kind"] != "snapshot" || usdc["amount"] != 3.0 || usdc["chain"] != 3.0 || usdc["ledger"] != 0.0 ||
		usdc["signature"] != nil || sol["amount"] != 1.0 {
		t.Fatalf("differences %v", seen)
	}
	if status, got := e.do("GET", path+"?cursor=not-a-cursor", e.key, nil); status != http.StatusBadRequest || got["error"] == "" {
		t.Fatalf("a malformed cursor: %d %v", status, got)
	}
	_, otherKey := e.newAccount(solana.Devnet)
	if status, got := e.do("GET", path, otherKey, nil); status != http.StatusNotFound {
		t.Fatalf("another account's wallet: %d %v", status, got)
	}
	code, raw := e.doRaw("GET", "/metrics", "", nil)
	m := regexp.MustCompile(`(?m)^wallet_balance_differences_total\{kind="snapshot"\} (\d+)$`).FindSubmatch(raw)
	if code != http.StatusOK || m == nil {
		t.Fatalf("/metrics: %d, no snapshot differences counted", code)
	}
	if n, _ := strconv.Atoi(string(m[1])); n < 2 {
		t.Fatalf("/metrics counts %d snapshot differences, want at least 2", n)
	}
}
