// Package bench measures the send path end to end against a same-run
// baseline. `make bench` runs it and writes bench/results/send.json.
package bench

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/usdc"
	"github.com/agentwallet/agentwallet/internal/worker"
)

const (
	clients = 32
	wallets = 64
	amount  = 10_000 // 0.01 USDC
)

// Result is one scenario's measurement.
type Result struct {
	RPS    float64 `json:"rps"`
	P50ms  float64 `json:"p50_ms"`
	P95ms  float64 `json:"p95_ms"`
	P99ms  float64 `json:"p99_ms"`
	N      int     `json:"n"`
	Errors int     `json:"errors"`
}

func measure(n int, op func(client, i int) error) Result {
	lat := make([]time.Duration, n)
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				if err := op(c, i); err != nil {
					if errs.Add(1) <= 3 {
						fmt.Fprintln(os.Stderr, "bench:", err)
					}
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(n-1, int(p*float64(n)))].Microseconds()) / 1000
	}
	return Result{RPS: float64(n) / elapsed.Seconds(), P50ms: q(0.50), P95ms: q(0.95), P99ms: q(0.99), N: n, Errors: int(errs.Load())}
}

// BenchmarkSend runs three scenarios once, at the same concurrency, in one
// process: the full path (HTTP → asynq → worker → localnet), a baseline
// client sending the identical transfer straight to the localnet, and
// decisions alone (sends the policy blocks). Run it with -benchtime=1x.
func BenchmarkSend(b *testing.B) {
	ctx := context.Background()
	ln := localnettest.Start(b)
	db := pgtest.New(b)
	rdb, _ := redistest.New(b)
	masterKey, publicKey, _ := signer.GenerateMasterKey()
	sealer, _ := signer.NewSealer(publicKey)
	keys, _ := signer.NewKeystore(masterKey)
	client := solana.NewClient(ln.URL, solana.Devnet, 10*time.Second)

	h, closeAPI := httpapi.New(httpapi.Deps{
		DB: db, Redis: rdb, Sealer: sealer,
		Balances: solana.Clients{solana.Devnet: client},
	})
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); closeAPI() }()

	eng := &payment.Engine{DB: db, Redis: rdb, Keys: keys, Nodes: map[solana.Network]payment.Node{
		solana.Devnet: payment.NewNode(ln.URL, solana.Devnet, 10*time.Second),
	}}
	bhCtx, stopBH := context.WithCancel(ctx)
	defer stopBH()
	eng.RunBlockhashes(bhCtx)
	stopWorker, err := worker.Start(rdb, worker.NewMux(worker.Deps{DB: db, Redis: rdb, Payments: eng}),
		worker.Options{Concurrency: clients, ShutdownTimeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer stopWorker()

	acct, _ := auth.CreateAccount(ctx, db, solana.Devnet)
	_, key, _ := auth.CreateKey(ctx, db, acct)
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients * 2}}
	post := func(path string, body any) (int, map[string]any, error) {
		j, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(j))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := httpc.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return resp.StatusCode, m, nil
	}
	newAgent := func(p map[string]any) string {
		status, a, err := post("/api/public/v1/agents", map[string]any{"label": "bench", "policy": p})
		if err != nil || status != 201 {
			b.Fatalf("create agent: %d %v %v", status, a, err)
		}
		ln.SetLamports(b, a["pubkey"].(string), 100*solana.LamportsPerSOL)
		ln.SetTokenBalance(b, a["pubkey"].(string), solana.DevnetUSDCMint.String(), 1_000_000_000_000)
		return a["id"].(string)
	}
	raised := map[string]any{"daily_limit_usdc": 1_000_000, "max_tx_usdc": 1_000_000, "approval_threshold_usdc": 1_000_000}
	blocking := map[string]any{"daily_limit_usdc": 1_000_000, "max_tx_usdc": 0, "approval_threshold_usdc": 1_000_000}
	sending, blocked := make([]string, wallets), make([]string, wallets)
	for i := range wallets {
		sending[i], blocked[i] = newAgent(raised), newAgent(blocking)
	}
	recipients := make([]string, wallets)
	for i := range recipients {
		recipients[i] = sol.NewWallet().PublicKey().String()
	}

	// Baseline payers: plain keypairs funded the same way.
	payers := make([]ed25519.PrivateKey, wallets)
	for i := range payers {
		_, payers[i], _ = ed25519.GenerateKey(nil)
		pub := sol.PublicKeyFromBytes(payers[i].Public().(ed25519.PublicKey)).String()
		ln.SetLamports(b, pub, 100*solana.LamportsPerSOL)
		ln.SetTokenBalance(b, pub, solana.DevnetUSDCMint.String(), 1_000_000_000_000)
	}
	bh := solana.NewBlockhashCache(client, 0)
	go bh.Run(bhCtx)
	var refs atomic.Uint64
	direct := func(c, i int) error {
		w := (c + clients*(i%2)) % wallets
		blockhash, err := bh.Get(ctx)
		if err != nil {
			return err
		}
		var ref [16]byte
		n := refs.Add(1)
		copy(ref[:], fmt.Appendf(nil, "%016d", n))
		tx, err := client.BuildTransfer(solana.Transfer{
			Owner: sol.PublicKeyFromBytes(payers[w].Public().(ed25519.PublicKey)), To: sol.MustPublicKeyFromBase58(recipients[w]),
			Amount: amount, Reference: solana.ReferenceFor(ref),
		}, blockhash)
		if err != nil {
			return err
		}
		raw, _, err := solana.Sign(tx, payers[w])
		if err != nil {
			return err
		}
		_, err = client.Broadcast(ctx, raw)
		return err
	}
	full := func(c, i int) error {
		w := (c + clients*(i%2)) % wallets
		status, body, err := post("/api/public/v1/agents/"+sending[w]+"/send", map[string]any{"to": recipients[w], "amount": usdc.Micros(amount)})
		if err != nil {
			return err
		}
		if status != 200 || body["status"] != "sent" {
			return fmt.Errorf("send: %d %v", status, body)
		}
		return nil
	}
	decision := func(c, i int) error {
		w := (c + clients*(i%2)) % wallets
		status, body, err := post("/api/public/v1/agents/"+blocked[w]+"/send", map[string]any{"to": recipients[w], "amount": usdc.Micros(amount)})
		if err != nil {
			return err
		}
		if status != 403 || body["reason"] != "exceeds_max_tx" {
			return fmt.Errorf("blocked send: %d %v", status, body)
		}
		return nil
	}

	// Warm every path (connections, token accounts, caches) first.
	measure(clients*4, direct)
	measure(clients*4, full)
	measure(clients*4, decision)

	n := envInt("BENCH_SENDS", 2000)
	results := map[string]Result{}
	for _, sc := range []struct {
		name string
		op   func(c, i int) error
	}{{"baseline", direct}, {"full", full}, {"decision_only", decision}} {
		if only := os.Getenv("BENCH_ONLY"); only != "" && only != sc.name {
			continue
		}
		stop := startProfile(b, sc.name)
		results[sc.name] = measure(n, sc.op)
		stop()
	}

	if os.Getenv("BENCH_ONLY") != "" {
		fmt.Printf("%+v\n", results)
		return
	}
	f, bl, d := results["full"], results["baseline"], results["decision_only"]
	fmt.Printf("\nsend path, %d clients, %d wallets, n=%d each\n", clients, wallets, n)
	fmt.Printf("%-14s %9s %8s %8s %8s %7s\n", "scenario", "per_s", "p50_ms", "p95_ms", "p99_ms", "errors")
	for _, name := range []string{"baseline", "full", "decision_only"} {
		r := results[name]
		fmt.Printf("%-14s %9.1f %8.2f %8.2f %8.2f %7d\n", name, r.RPS, r.P50ms, r.P95ms, r.P99ms, r.Errors)
	}
	fmt.Printf("full/baseline: throughput %.2f, p50 +%.2f ms (target ≤ +15 ms: %v)\n", f.RPS/bl.RPS, f.P50ms-bl.P50ms, f.P50ms-bl.P50ms <= 15)
	fmt.Printf("decision only: %.0f/s (target ≥ 500: %v), p99 %.2f ms (target ≤ 50: %v)\n", d.RPS, d.RPS >= 500, d.P99ms, d.P99ms <= 50)

	writeResults(b, "send.json", results)
	b.ReportMetric(f.RPS/bl.RPS, "full/baseline_rps")
	b.ReportMetric(f.P50ms-bl.P50ms, "full-baseline_p50_ms")
	b.ReportMetric(d.RPS, "decisions/s")
	b.ReportMetric(d.P99ms, "decision_p99_ms")
}

// writeResults writes a benchmark's results to results/name as JSON.
func writeResults(b *testing.B, name string, results any) {
	out, _ := json.MarshalIndent(results, "", "  ")
	if err := os.MkdirAll("results", 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("results", name), append(out, '\n'), 0o644); err != nil {
		b.Fatal(err)
	}
}

func envInt(name string, def int) int {
	var v int
	if _, err := fmt.Sscan(os.Getenv(name), &v); err != nil || v <= 0 {
		return def
	}
	return v
}

// startProfile writes a CPU profile of scenario to
// results/send-<scenario>.pprof when BENCH_PROFILE names it.
func startProfile(b *testing.B, scenario string) func() {
	if os.Getenv("BENCH_PROFILE") != scenario {
		return func() {}
	}
	f, err := os.Create(filepath.Join("results", "send-"+scenario+".pprof"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
