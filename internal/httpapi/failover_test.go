package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// Two nodes, the first refusing connections; then the first up and the
// second down mid-run. Every send, from 16 clients at once, lands exactly
// once: the recipients' balances on chain are the sum of the sends
// answered sent, and each payment is one transaction. 40 sends by
// default; FAILOVER_FULL=1 runs 200.
func TestFailover_SendsLandExactlyOnce(t *testing.T) {
	t.Parallel()
	n := 40
	if os.Getenv("FAILOVER_FULL") == "1" {
		n = 200
	}
	const clients = 16
	ln := localnettest.Start(t)
	first, second := localnettest.NewFaultProxy(t, ln.URL), localnettest.NewFaultProxy(t, ln.URL)
	first.Set(t, localnettest.ProxyFaults{Refuse: true})
	e := newEnv(t, envOpts{ln: ln, nodes: []string{first.URL, second.URL}})
	eng, _ := e.startWorker()
	id, payer := e.agent(map[string]any{"daily_limit_usdc": 100_000, "max_tx_usdc": 10, "approval_threshold_usdc": 100_000}, uint64(n)*1_000_000)
	recipients := make([]string, 8)
	for i := range recipients {
		recipients[i] = newAddress()
	}
	amount := func(i int) money.Micros[money.USD] { return money.Micros[money.USD](i%4+1) * 10_000 }

	var done atomic.Int64
	sent := make([]string, n) // signature of each send answered sent
	work := make(chan int)
	var wg sync.WaitGroup
	run := fmt.Sprint(time.Now().UnixNano())
	for range clients {
		wg.Go(func() {
			for i := range work {
				sent[i] = sendUntilAnswered(e, id, fmt.Sprintf("failover-%s-%d", run, i),
					map[string]any{"to": recipients[i%len(recipients)], "amount": float64(amount(i)) / 1e6})
				done.Add(1)
			}
		})
	}
	// Three phases of a third of the sends each: the first node refusing
	// connections; both up (the first back, verified by the worker); the
	// second going down a quarter into the last phase.
	start := time.Now()
	phase := func(from, to int) {
		for i := from; i < to; i++ {
			work <- i
		}
		for done.Load() < int64(to) && !t.Failed() {
			time.Sleep(10 * time.Millisecond)
		}
	}
	phase(0, n/3)
	first.Set(t, localnettest.ProxyFaults{})
	deadline := time.Now().Add(30 * time.Second)
	for !workerNodeUp(eng, first.URL) {
		if time.Now().After(deadline) {
			close(work)
			t.Fatalf("the worker never took the first node back: %+v", eng.Nodes[solana.Devnet].Client.Health())
		}
		time.Sleep(20 * time.Millisecond)
	}
	phase(n/3, 2*n/3)
	// The second goes down with sends in flight.
	before := first.Calls("sendTransaction")
	go func() {
		for done.Load() < int64(2*n/3+n/12) && !t.Failed() {
			time.Sleep(time.Millisecond)
		}
		second.Set(t, localnettest.ProxyFaults{Refuse: true})
	}()
	phase(2*n/3, n)
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	if t.Failed() {
		t.FailNow()
	}
	if got := first.Calls("sendTransaction") - before; got < n-2*n/3 {
		t.Fatalf("the first node got %d broadcasts of the last %d sends", got, n-2*n/3)
	}

	// Settle everything through the first node alone.
	deadline = time.Now().Add(2 * time.Minute)
	for {
		if _, err := eng.Sweep(context.Background()); err != nil {
			t.Logf("sweep: %v", err)
		}
		pending, err := e.db.NewSelect().Table("transactions").Where("status = ?", payment.TxPending).Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d transactions still pending", pending)
		}
		time.Sleep(200 * time.Millisecond)
	}
	confirmed, err := e.db.NewSelect().Table("transactions").Where("status = ?", payment.TxConfirmed).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rows := e.countRows("transactions"); rows != n || confirmed != int64(n) {
		t.Fatalf("%d transactions, %d confirmed, for %d sends", rows, confirmed, n)
	}
	want := map[string]money.Micros[money.USD]{}
	var total money.Micros[money.USD]
	seen := map[string]bool{}
	for i, sig := range sent {
		if sig == "" || seen[sig] {
			t.Fatalf("send %d: signature %q (empty or shared)", i, sig)
		}
		seen[sig] = true
		want[recipients[i%len(recipients)]] += amount(i)
		total += amount(i)
	}
	for _, r := range recipients {
		if got := e.chainUSDC(r); got != want[r] {
			t.Errorf("recipient %s holds %d on chain, the sends answered sent paid it %d", r, got, want[r])
		}
	}
	if got := e.chainUSDC(payer); got != money.Micros[money.USD](n)*1_000_000-total {
		t.Errorf("payer holds %d, want %d", got, money.Micros[money.USD](n)*1_000_000-total)
	}
	t.Logf("%d sends from %d clients answered in %s", n, clients, elapsed)
}

// sendUntilAnswered sends once under an idempotency key, repeating the
// same key while the service answers 5xx (a client's retry), and returns
// the signature of a sent answer; any other answer fails the test.
func sendUntilAnswered(e *env, id, key string, body map[string]any) string {
	deadline := time.Now().Add(90 * time.Second)
	for {
		status, raw, _ := e.sendOnce(id, key, body)
		if status == http.StatusOK && strings.Contains(string(raw), `"sent"`) {
			var sig string
			if i := strings.Index(string(raw), `"signature":"`); i >= 0 {
				rest := string(raw)[i+len(`"signature":"`):]
				sig = rest[:strings.IndexByte(rest, '"')]
			}
			return sig
		}
		if status < 500 || time.Now().After(deadline) {
			e.t.Errorf("send %s: %d %s", key, status, raw)
			return ""
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func workerNodeUp(eng *payment.Engine, url string) bool {
	for _, h := range eng.Nodes[solana.Devnet].Client.Health() {
		if h.Node == url {
			return h.Up
		}
	}
	return false
}

// With two nodes, balance reads answer while either is up and 503 only
// when neither answers; /readyz stays ready and says which nodes are up
// (degraded with one of two), and /metrics shows each node's health and
// latency under its redacted name.
func TestFailover_Balance503OnlyWhenEveryNodeIsDown(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	a, b := localnettest.NewFaultProxy(t, ln.URL), localnettest.NewFaultProxy(t, ln.URL)
	e := newEnv(t, envOpts{nodes: []string{a.URL, b.URL}})
	id, _ := e.agent(nil, 3_000_000)
	balance := "/api/public/v1/wallets/" + id + "/balance"
	if status, body := e.do("GET", balance, e.key, nil); status != http.StatusOK || body["usdc"] != 3.0 {
		t.Fatalf("both up: %d %v", status, body)
	}
	ready := func() (string, []any) {
		t.Helper()
		status, body := e.do("GET", "/readyz", "", nil)
		if status != http.StatusOK || body["status"] != "ready" {
			t.Fatalf("readyz: %d %v", status, body)
		}
		devnet := body["solana"].(map[string]any)["devnet"].(map[string]any)
		if body["checks"].(map[string]any)["solana_devnet"] != devnet["status"] {
			t.Fatalf("readyz checks %v and solana %v disagree", body["checks"], devnet)
		}
		return devnet["status"].(string), devnet["nodes"].([]any)
	}
	if status, _ := ready(); status != "ok" {
		t.Fatalf("both up: readyz %q", status)
	}

	// Reads go to the first node unless the other is twice as fast: on a
	// busy machine it may be, and the first would never be tried. The
	// second is made slow for a few reads, so the first is the one read
	// (a quarter second each: a loaded machine's stall of the first, a
	// few hundred milliseconds, must not make the second twice as fast).
	b.Set(t, localnettest.ProxyFaults{Delay: 250 * time.Millisecond})
	for range 5 {
		e.do("GET", balance, e.key, nil)
	}
	b.Set(t, localnettest.ProxyFaults{})
	a.Set(t, localnettest.ProxyFaults{Refuse: true})
	if status, body := e.do("GET", balance, e.key, nil); status != http.StatusOK || body["usdc"] != 3.0 {
		t.Fatalf("first down: %d %v", status, body)
	}
	status, nodes := ready()
	first, second := nodes[0].(map[string]any), nodes[1].(map[string]any)
	if status != "degraded: 1 of 2 nodes up" || first["node"] != a.URL || first["up"] != false || first["state"] != "down" ||
		first["error"] == "" || second["up"] != true || second["latency_seconds"].(float64) <= 0 {
		t.Fatalf("first down: readyz %q %v", status, nodes)
	}
	code, raw := e.doRaw("GET", "/metrics", "", nil)
	metrics := string(raw)
	for _, line := range []string{
		fmt.Sprintf(`solana_rpc_node_up{network="devnet",node=%q} 0`, a.URL),
		fmt.Sprintf(`solana_rpc_node_up{network="devnet",node=%q} 1`, b.URL),
		fmt.Sprintf(`solana_rpc_node_latency_seconds{network="devnet",node=%q}`, b.URL),
	} {
		if code != http.StatusOK || !strings.Contains(metrics, line) {
			t.Fatalf("metrics %d: no %s in\n%s", code, line, grepLines(metrics, "solana_rpc"))
		}
	}

	b.Set(t, localnettest.ProxyFaults{Status: http.StatusServiceUnavailable})
	start := time.Now()
	status2, body := e.do("GET", balance, e.key, nil)
	wantError(t, status2, body, http.StatusServiceUnavailable, "no Solana RPC node")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("503 took %s", d)
	}
	if status, _ := ready(); status != "unavailable: no node up" {
		t.Fatalf("both down: readyz %q", status)
	}
	b.Set(t, localnettest.ProxyFaults{})
	if status, body := e.do("GET", balance, e.key, nil); status != http.StatusOK {
		t.Fatalf("second back: %d %v", status, body)
	}
}

// /readyz and /metrics answer without a key. A provider whose API key is
// in the URL's path (Alchemy .../v2/<key>, QuickNode .../<token>/,
// Triton, Ankr) must not have it shown there.
func TestFailover_PathKeyNotShownByReadyzOrMetrics(t *testing.T) {
	t.Parallel()
	const key = "PATHSECRET0123456789"
	ln := localnettest.Shared(t)
	p := localnettest.NewFaultProxy(t, ln.URL) // forwards whatever the path
	e := newEnv(t, envOpts{ln: ln, nodes: []string{p.URL + "/v2/" + key}})
	if status, body := e.doRaw("GET", "/readyz", "", nil); strings.Contains(string(body), key) {
		t.Errorf("/readyz (%d) shows the key: %s", status, body)
	}
	if status, body := e.doRaw("GET", "/metrics", "", nil); strings.Contains(string(body), key) {
		for _, l := range strings.Split(string(body), "\n") {
			if strings.Contains(l, key) {
				t.Errorf("/metrics (%d) shows the key: %s", status, l)
			}
		}
	}
}
