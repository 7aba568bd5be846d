package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
	"github.com/agentwallet/agentwallet/internal/webhook"
	"github.com/agentwallet/agentwallet/internal/worker"
)

// DepositsResult is one size's measurement in bench/results/deposits.json.
type DepositsResult struct {
	Wallets int `json:"wallets"`
	// RPC calls a minute of idle scans (a scan every ScanEveryS), by
	// method and in all; one idle scan's duration.
	CallsPerMinute      map[string]float64 `json:"rpc_calls_per_min"`
	TotalCallsPerMinute float64            `json:"rpc_calls_per_min_total"`
	MsPerScan           float64            `json:"ms_per_scan"`
	// From a transfer's confirmation (the sender saw it confirmed) to its
	// tx.received webhook received by the endpoint.
	DetectionP50ms float64 `json:"detection_p50_ms"`
	DetectionMaxMs float64 `json:"detection_max_ms"`
	Deposits       int     `json:"deposits"`
}

// BenchmarkDeposits measures money coming in at 100 and 10,000 watched
// wallets on the localnet: the watcher's RPC calls a minute when nothing
// arrives (scans every tasks.DepositsEvery, as the scheduler runs them),
// what one scan takes, and the detection latency, from a transfer's
// confirmation to its tx.received webhook delivered (the outbox, the
// dispatcher, asynq and a worker's signed POST, as deployed), for
// BENCH_DEPOSITS (10) deposits to wallets picked across the set. Writes
// bench/results/deposits.json.
func BenchmarkDeposits(b *testing.B) {
	results := []DepositsResult{}
	for _, n := range []int{100, 10_000} {
		results = append(results, benchDeposits(b, n, envInt("BENCH_DEPOSITS", 10)))
	}
	fmt.Printf("\ndeposits: scans every %v\n%-8s %14s %12s %10s %10s\n", tasks.DepositsEvery, "wallets", "rpc_calls/min", "ms/scan", "p50_ms", "max_ms")
	for _, r := range results {
		fmt.Printf("%-8d %14.0f %12.1f %10.0f %10.0f\n", r.Wallets, r.TotalCallsPerMinute, r.MsPerScan, r.DetectionP50ms, r.DetectionMaxMs)
	}
	writeResults(b, "deposits.json", map[string]any{"scan_every_s": tasks.DepositsEvery.Seconds(), "sizes": results})
}

func benchDeposits(b *testing.B, n, deposits int) DepositsResult {
	ctx := context.Background()
	ln := localnettest.Shared(b)
	db, dbURL := pgtest.NewWithURL(b)
	rdb, _ := redistest.New(b)
	key := wallettest.NewMasterKey(b)
	acct := wallettest.Account(b, db)
	ws := insertWallets(b, db, acct.ID, n)

	hooks := &signatureReceiver{at: map[string]time.Time{}, arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(hooks)
	defer srv.Close()
	u := srv.URL
	if _, _, err := webhook.CreateEndpoint(ctx, db, key.Sealer, acct.ID, webhook.Settings{URL: &u, Events: []string{webhook.KindTxReceived}}, 0); err != nil {
		b.Fatal(err)
	}
	wh := &worker.Webhooks{
		Deliverer:  &webhook.Deliverer{DB: db, Keys: key.Keystore(b), AllowPrivate: true},
		Dispatcher: &webhook.Dispatcher{DB: db, Enqueue: worker.EnqueueDelivery(rdb)},
	}
	dctx, stopDispatch := context.WithCancel(ctx)
	defer stopDispatch()
	go wh.Dispatcher.Run(dctx, dbURL)
	stop, err := worker.Start(rdb, worker.NewMux(worker.Deps{DB: db, Redis: rdb, Webhooks: wh}),
		worker.Options{Concurrency: 4, Queues: []string{"webhooks"}, ShutdownTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer stop()

	node := newCountingNode(b, ln.URL)
	w := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(node.URL, solana.Devnet, 30*time.Second)}}
	// The first scans watch every wallet and list their token accounts,
	// 20 wallets a scan: a catch-up, then each wallet every 10 minutes
	// (n/10 a minute; past 6,000 wallets the 20 a scan never catch up and
	// listing goes on at 600 a minute, each wallet every n/600 minutes).
	for range 10 {
		if _, err := w.Scan(ctx); err != nil {
			b.Fatal(err)
		}
		if node.take()["getTokenAccountsByOwner"] == 0 {
			break
		}
	}
	const scans = 5
	start := time.Now()
	for range scans {
		if _, err := w.Scan(ctx); err != nil {
			b.Fatal(err)
		}
	}
	perScan := time.Since(start) / scans
	idle := node.take()
	r := DepositsResult{Wallets: n, CallsPerMinute: map[string]float64{}, MsPerScan: round(float64(perScan.Microseconds())/1000, 1), Deposits: deposits}
	perMinute := float64(time.Minute / tasks.DepositsEvery)
	for m, c := range idle {
		r.CallsPerMinute[m] = round(float64(c)/scans*perMinute, 1)
		r.TotalCallsPerMinute += r.CallsPerMinute[m]
	}

	from := chaintest.NewPayer(b, ln, 1_000_000_000, solana.LamportsPerSOL)
	stopScans := scanEvery(ctx, w, tasks.DepositsEvery)
	defer stopScans()
	var lat []time.Duration
	for i := range deposits {
		sig := from.TransferUSDC(b, ws[(i*7919)%len(ws)], 10_000)
		confirmed := time.Now()
		got, ok := hooks.wait(sig, time.Minute)
		if !ok {
			b.Fatalf("deposit %s not announced within a minute", sig)
		}
		lat = append(lat, got.Sub(confirmed))
	}
	slices.Sort(lat)
	r.DetectionP50ms = round(float64(lat[len(lat)/2].Microseconds())/1000, 0)
	r.DetectionMaxMs = round(float64(lat[len(lat)-1].Microseconds())/1000, 0)
	b.Logf("%d wallets: an idle scan takes %v; RPC calls a minute %v; detection p50 %v ms, max %v ms",
		n, perScan, r.CallsPerMinute, r.DetectionP50ms, r.DetectionMaxMs)
	return r
}

// signatureReceiver records when each tx.received webhook arrived, by
// the deposit's signature.
type signatureReceiver struct {
	mu      sync.Mutex
	at      map[string]time.Time
	arrived chan struct{}
}

func (h *signatureReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	var ev struct {
		Data struct {
			Signature string `json:"signature"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &ev)
	h.mu.Lock()
	if _, seen := h.at[ev.Data.Signature]; !seen {
		h.at[ev.Data.Signature] = now
	}
	h.mu.Unlock()
	select {
	case h.arrived <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

// wait returns when the webhook of sig arrived.
func (h *signatureReceiver) wait(sig string, within time.Duration) (time.Time, bool) {
	deadline := time.After(within)
	for {
		h.mu.Lock()
		at, ok := h.at[sig]
		h.mu.Unlock()
		if ok {
			return at, true
		}
		select {
		case <-h.arrived:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			return time.Time{}, false
		}
	}
}

// countingNode is an RPC node in front of target that counts the calls
// it passes, by method.
type countingNode struct {
	mu    sync.Mutex
	calls map[string]int
	URL   string
}

func newCountingNode(tb testing.TB, target string) *countingNode {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	c := &countingNode{calls: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		c.mu.Lock()
		c.calls[req.Method]++
		c.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// take returns the calls counted since the last take, and forgets them.
func (c *countingNode) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int{}
	return out
}

// scanEvery scans with w every period, as the scheduler has a worker do,
// until stop.
func scanEvery(ctx context.Context, w *deposit.Watcher, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_, _ = w.Scan(ctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// insertWallets writes n wallets of account acct straight into the
// database (no real key: nothing signs for them; the watcher reads only
// their addresses), and returns their addresses.
func insertWallets(tb testing.TB, db *bun.DB, acct uuid.UUID, n int) []sol.PublicKey {
	tb.Helper()
	addrs := make([]sol.PublicKey, n)
	for i := range addrs {
		addrs[i] = sol.NewWallet().PublicKey()
	}
	insertWalletsOf(tb, db, acct, addrs)
	return addrs
}

// insertWalletsOf writes a wallet of account acct for each address, 1,000
// a statement, with no key the service could sign with, and returns their
// ids.
func insertWalletsOf(tb testing.TB, db bun.IDB, acct uuid.UUID, addrs []sol.PublicKey) []uuid.UUID {
	tb.Helper()
	ids := make([]uuid.UUID, 0, len(addrs))
	at := time.Now().UTC().Add(-time.Minute)
	for start := 0; start < len(addrs); start += 1000 {
		var ws []wallet.Wallet
		for i := start; i < min(start+1000, len(addrs)); i++ {
			id := uuid.New()
			ids = append(ids, id)
			ws = append(ws, wallet.Wallet{ID: id, AccountID: acct, Kind: wallet.KindAgent, Label: fmt.Sprint("w", i),
				Pubkey: addrs[i].String(), State: wallet.Active, Allowlist: []string{}, AllowlistLabels: map[string]string{},
				SecretKeyID: "unused", SecretSealed: []byte{0}, Assets: []string{"USDC"}, CreatedAt: at})
		}
		if _, err := db.NewInsert().Model(&ws).Exec(context.Background()); err != nil {
			tb.Fatal(err)
		}
	}
	return ids
}
