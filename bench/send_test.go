// Package bench measures the send path end to end against a same-run
// baseline, with the service deployed as it runs: the cmd/api and
// cmd/worker binaries as processes of their own over a private PostgreSQL
// and Redis, so the CPU each spends per send is read from /proc.
// `make bench` runs it and writes bench/results/send.json.
package bench

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/tasks"
)

const (
	clients = 32
	wallets = 64
	amount  = 10_000 // 0.01 USDC
)

// Result is one scenario's measurement.
type Result struct {
	RPS     float64 `json:"rps"`
	P50ms   float64 `json:"p50_ms"`
	P95ms   float64 `json:"p95_ms"`
	P99ms   float64 `json:"p99_ms"`
	N       int     `json:"n"`
	Errors  int     `json:"errors"`
	Clients int     `json:"clients"`
	// CPU is each process's CPU per operation over the scenario.
	CPU *CPU `json:"cpu_ms_per_op,omitempty"`
}

// spread runs do for each i in [0, n) on workers goroutines, each taking
// the next i in turn, and returns once all are done; worker is the
// goroutine's number.
func spread(n, workers int, do func(worker, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				do(w, i)
			}
		})
	}
	wg.Wait()
}

// measure runs n operations from conc clients at once.
func measure(conc, n int, op func(client, i int) error) Result {
	lat := make([]time.Duration, n)
	var errs atomic.Int64
	start := time.Now()
	spread(n, conc, func(c, i int) {
		t0 := time.Now()
		if err := op(c, i); err != nil {
			if errs.Add(1) <= 3 {
				fmt.Fprintln(os.Stderr, "bench:", err)
			}
		}
		lat[i] = time.Since(t0)
	})
	elapsed := time.Since(start)
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(n-1, int(p*float64(n)))].Microseconds()) / 1000
	}
	return Result{RPS: round(float64(n)/elapsed.Seconds(), 1), P50ms: q(0.50), P95ms: q(0.95), P99ms: q(0.99),
		N: n, Errors: int(errs.Load()), Clients: conc}
}

// Setup is how the figures were made.
type Setup struct {
	APIs              int    `json:"apis"`
	Accounts          int    `json:"accounts"`
	Workers           int    `json:"workers"`
	WorkerConcurrency int    `json:"worker_concurrency"`
	Wallets           int    `json:"wallets"`
	CPUs              int    `json:"cpus"`
	GoVersion         string `json:"go_version"`
	ClockTicks        int    `json:"clock_ticks"`
	Date              string `json:"date"`
	Note              string `json:"note"`
}

// Targets are the send path's performance goals, as ratios of this run's
// figures.
type Targets struct {
	// Service CPU (api + worker + postgres + redis) per send in the full
	// scenario, and the same over the localnet's CPU per raw transfer.
	ServiceCPUmsPerSend            float64 `json:"service_cpu_ms_per_send"`
	ServiceCPUOverLocalnetTransfer float64 `json:"service_cpu_over_localnet_cpu_per_transfer"`
	// Against bench/results/send-before.json (goal ≤ 0.5), when present.
	ServiceCPUVsBefore           float64         `json:"service_cpu_vs_before,omitempty"`
	ServiceCPUVsBeforeNormalized float64         `json:"service_cpu_over_localnet_vs_before,omitempty"`
	FullOverBaselineRPS          float64         `json:"full_over_baseline_rps"`          // ≥ 0.6
	DecisionP99ms                float64         `json:"decision_only_p99_ms"`            // ≤ 25
	OneClientSendP50OverRawMs    float64         `json:"one_client_send_p50_over_raw_ms"` // ≤ 3
	OneClientSendP99OverRawMs    float64         `json:"one_client_send_p99_over_raw_ms"` // ≤ 5
	BalanceP50OverRaw            float64         `json:"balance_p50_over_raw"`            // ≤ 1.2
	BalanceP99OverRaw            float64         `json:"balance_p99_over_raw"`
	Met                          map[string]bool `json:"met"`
}

// SendResults is bench/results/send.json.
type SendResults struct {
	Setup Setup `json:"setup"`
	// Idle is each process's CPU per second with no load (ms/s).
	Idle         *CPU    `json:"idle_cpu_ms_per_s,omitempty"`
	Baseline     *Result `json:"baseline,omitempty"`
	Full         *Result `json:"full,omitempty"`
	DecisionOnly *Result `json:"decision_only,omitempty"`
	// One client: a raw transfer against a send, a raw getMultipleAccounts
	// against the balance route.
	OneClientTransfer   *Result  `json:"one_client_transfer,omitempty"`
	OneClientSend       *Result  `json:"one_client_send,omitempty"`
	OneClientRawBalance *Result  `json:"one_client_raw_balance,omitempty"`
	OneClientBalance    *Result  `json:"one_client_balance,omitempty"`
	Targets             *Targets `json:"targets,omitempty"`
}

// BenchmarkSend runs every scenario once, in one run against one stack
// (APIS api and WORKERS worker processes, 1 and 1 by default, over a
// private PostgreSQL and Redis): at 32 clients, a baseline client sending
// the identical transfer straight to the localnet, the full path (HTTP →
// api → asynq → worker → localnet, answered "sent"), and decisions alone
// (sends the policy blocks); then at one client a raw transfer against a
// send and a raw getMultipleAccounts against the balance route. Each
// process's CPU is read before and after each scenario. BENCH_PPROF=1
// then profiles the api and worker processes under the full load.
func BenchmarkSend(b *testing.B) {
	ctx := context.Background()
	nAPIs, nWorkers := envInt("APIS", 1), envInt("WORKERS", 1)
	pprofOn := os.Getenv("BENCH_PPROF") == "1"
	stack := StartStack(b, StackOptions{APIs: nAPIs, Workers: nWorkers, WorkerConcurrency: clients, Private: true, Pprof: pprofOn, PGStatements: pprofOn})
	ln := stack.Localnet
	rpc := solana.NewClient(ln.URL, solana.Devnet, 10*time.Second)
	// Wallet w belongs to account w % BENCH_ACCOUNTS (1): its calls use
	// that account's key.
	nAccounts := min(envInt("BENCH_ACCOUNTS", 1), wallets)
	accounts := make([]*client, nAccounts)
	for a := range accounts {
		accounts[a] = stack.client(stack.NewKey(b), clients*2)
		if a > 0 {
			accounts[a].http = accounts[0].http // one connection pool
		}
	}
	api := func(w int) *client { return accounts[w%nAccounts] }

	newAgent := func(i int, p map[string]any) (string, string) {
		status, a, err := api(i).do(i, "POST", "/api/public/v1/agents", map[string]any{"label": "bench", "policy": p}, nil)
		if err != nil || status != 201 {
			b.Fatalf("create agent: %d %v %v", status, a, err)
		}
		ln.SetLamports(b, a["pubkey"].(string), 100*solana.LamportsPerSOL)
		ln.SetTokenBalance(b, a["pubkey"].(string), solana.DevnetUSDCMint.String(), 1_000_000_000_000)
		return a["id"].(string), a["pubkey"].(string)
	}
	raised := map[string]any{"daily_limit_usdc": 1_000_000, "max_tx_usdc": 1_000_000, "approval_threshold_usdc": 1_000_000}
	blocking := map[string]any{"daily_limit_usdc": 1_000_000, "max_tx_usdc": 0, "approval_threshold_usdc": 1_000_000}
	sending, sendingKeys, blocked := make([]string, wallets), make([]sol.PublicKey, wallets), make([]string, wallets)
	for i := range wallets {
		var pub string
		sending[i], pub = newAgent(i, raised)
		sendingKeys[i] = sol.MustPublicKeyFromBase58(pub)
		blocked[i], _ = newAgent(i, blocking)
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
	bhCtx, stopBH := context.WithCancel(ctx)
	defer stopBH()
	bh := solana.NewBlockhashCache(rpc, 0)
	go bh.Run(bhCtx)
	var refs atomic.Uint64
	wallet := func(c, i int) int { return (c + clients*(i%2)) % wallets }
	direct := func(c, i int) error {
		w := wallet(c, i)
		blockhash, err := bh.Get(ctx)
		if err != nil {
			return err
		}
		var ref [16]byte
		n := refs.Add(1)
		copy(ref[:], fmt.Appendf(nil, "%016d", n))
		tx, err := rpc.BuildTransfer(solana.Transfer{
			Owner: sol.PublicKeyFromBytes(payers[w].Public().(ed25519.PublicKey)), To: sol.MustPublicKeyFromBase58(recipients[w]),
			Amount: amount, Reference: solana.ReferenceFor(ref),
		}, blockhash)
		if err != nil {
			return err
		}
		raw, _, err := solana.Sign(context.Background(), tx, signer.Plain(payers[w]))
		if err != nil {
			return err
		}
		_, err = rpc.Broadcast(ctx, raw)
		return err
	}
	// The api a call goes to: by client at 32 clients, by call at one.
	full := func(apiIndex func(c, i int) int) func(c, i int) error {
		return func(c, i int) error {
			w := wallet(c, i)
			status, body, err := api(w).do(apiIndex(c, i), "POST", "/api/public/v1/agents/"+sending[w]+"/send", map[string]any{"to": recipients[w], "amount": money.Micros[money.USD](amount)}, nil)
			if err != nil {
				return err
			}
			if status != 200 || body["status"] != "sent" {
				return fmt.Errorf("send: %d %v", status, body)
			}
			return nil
		}
	}
	byClient := func(c, _ int) int { return c }
	byCall := func(_, i int) int { return i }
	decision := func(c, i int) error {
		w := wallet(c, i)
		status, body, err := api(w).do(c, "POST", "/api/public/v1/agents/"+blocked[w]+"/send", map[string]any{"to": recipients[w], "amount": money.Micros[money.USD](amount)}, nil)
		if err != nil {
			return err
		}
		if status != 403 || body["reason"] != "exceeds_max_tx" {
			return fmt.Errorf("blocked send: %d %v", status, body)
		}
		return nil
	}
	rawBalance := func(_, i int) error {
		_, err := rpc.Balance(ctx, sendingKeys[i%wallets])
		return err
	}
	balance := func(_, i int) error {
		status, body, err := api(i%wallets).do(i, "GET", "/api/public/v1/wallets/"+sending[i%wallets]+"/balance", nil, nil)
		if err != nil {
			return err
		}
		if status != 200 || body["usdc"] == nil {
			return fmt.Errorf("balance: %d %v", status, body)
		}
		return nil
	}

	// Warm every path (connections, token accounts, caches) first.
	measure(clients, clients*4, direct)
	measure(clients, clients*4, full(byClient))
	measure(clients, clients*4, decision)
	measure(1, 20, rawBalance)
	measure(1, 20, balance)

	res := SendResults{Setup: Setup{
		APIs: nAPIs, Accounts: nAccounts, Workers: nWorkers, WorkerConcurrency: clients, Wallets: wallets, CPUs: runtime.NumCPU(),
		GoVersion: runtime.Version(), ClockTicks: int(clockTicks), Date: time.Now().UTC().Format(time.RFC3339),
		Note: "CPU from /proc/<pid>/stat (postgres: postmaster and backends); the machine is shared, so compare ratios within one run",
	}}
	// What the stack burns doing nothing (asynq polls, heartbeats).
	idleFrom := sampleCPU(stack.Procs)
	time.Sleep(5 * time.Second)
	idleTo := sampleCPU(stack.Procs)
	res.Idle = cpuPerOp(stack.Procs, idleFrom, idleTo, idleTo.at.Sub(idleFrom.at).Seconds())

	// The audit entries a scenario wrote are sealed onto their chain
	// within its window, as the scheduler would (its every-2-s task), so
	// what a send costs includes its seal. The scheduler itself does not
	// run: its confirmation sweeps were never part of these figures.
	db, err := postgres.Open(stack.DatabaseURL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	run := func(conc, n int, op func(c, i int) error) *Result {
		before := sampleCPU(stack.Procs)
		stop := make(chan struct{})
		sealed := make(chan error, 1)
		go func() {
			tick := time.NewTicker(tasks.AuditSealEvery)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					_, err := audit.SealAll(ctx, db)
					sealed <- err
					return
				case <-tick.C:
					if _, err := audit.SealAll(ctx, db); err != nil {
						sealed <- err
						return
					}
				}
			}
		}()
		r := measure(conc, n, op)
		close(stop)
		if err := <-sealed; err != nil {
			b.Fatal(err)
		}
		r.CPU = cpuPerOp(stack.Procs, before, sampleCPU(stack.Procs), float64(n))
		return &r
	}
	n := envInt("BENCH_SENDS", 2000)
	one := envInt("BENCH_ONE_CLIENT", 500)
	only := os.Getenv("BENCH_ONLY")
	for _, sc := range []struct {
		name string
		out  **Result
		conc int
		n    int
		op   func(c, i int) error
	}{
		{"baseline", &res.Baseline, clients, n, direct},
		{"full", &res.Full, clients, n, full(byClient)},
		{"decision_only", &res.DecisionOnly, clients, n, decision},
		{"one_client_transfer", &res.OneClientTransfer, 1, one, direct},
		{"one_client_send", &res.OneClientSend, 1, one, full(byCall)},
		{"one_client_raw_balance", &res.OneClientRawBalance, 1, one, rawBalance},
		{"one_client_balance", &res.OneClientBalance, 1, one, balance},
	} {
		if only != "" && only != sc.name {
			continue
		}
		*sc.out = run(sc.conc, sc.n, sc.op)
	}
	if only != "" {
		out, _ := json.MarshalIndent(res, "", "  ")
		fmt.Printf("%s\n", out)
		return
	}
	res.Targets = targets(&res)
	printSend(&res, n)
	writeResults(b, sendResultsName(nAPIs, nWorkers, nAccounts), res)

	if pprofOn {
		profileFull(b, stack, "", clients, full(byClient))
	}
	b.ReportMetric(res.Targets.FullOverBaselineRPS, "full/baseline_rps")
	b.ReportMetric(res.Targets.ServiceCPUmsPerSend, "service_cpu_ms/send")
	b.ReportMetric(res.DecisionOnly.P99ms, "decision_p99_ms")
}

// sendResultsName is send.json for one api, one worker and one account,
// else send-<n>api-<m>worker[-<k>accounts].json.
func sendResultsName(apis, workers, accounts int) string {
	name := "send"
	if apis != 1 || workers != 1 {
		name += fmt.Sprintf("-%dapi-%dworker", apis, workers)
	}
	if accounts != 1 {
		name += fmt.Sprintf("-%daccounts", accounts)
	}
	return name + ".json"
}

// targets computes the goals' ratios; the CPU goal compares with
// results/send-before.json when it exists.
func targets(r *SendResults) *Targets {
	t := &Targets{Met: map[string]bool{}}
	f, bl, d := r.Full, r.Baseline, r.DecisionOnly
	t.ServiceCPUmsPerSend = f.CPU.Service
	if bl.CPU.Localnet > 0 {
		t.ServiceCPUOverLocalnetTransfer = round(f.CPU.Service/bl.CPU.Localnet, 3)
	}
	if raw, err := os.ReadFile(filepath.Join("results", "send-before.json")); err == nil {
		var before SendResults
		if json.Unmarshal(raw, &before) == nil && before.Full != nil && before.Full.CPU != nil && before.Full.CPU.Service > 0 {
			t.ServiceCPUVsBefore = round(f.CPU.Service/before.Full.CPU.Service, 3)
			if b := before.Baseline; b != nil && b.CPU != nil && b.CPU.Localnet > 0 && t.ServiceCPUOverLocalnetTransfer > 0 {
				t.ServiceCPUVsBeforeNormalized = round(t.ServiceCPUOverLocalnetTransfer/(before.Full.CPU.Service/b.CPU.Localnet), 3)
			}
			t.Met["service_cpu_at_most_half_of_before"] = t.ServiceCPUVsBefore <= 0.5
		}
	}
	t.FullOverBaselineRPS = round(f.RPS/bl.RPS, 3)
	t.Met["full_at_least_0.6x_baseline"] = t.FullOverBaselineRPS >= 0.6
	t.DecisionP99ms = d.P99ms
	t.Met["decision_p99_at_most_25ms"] = d.P99ms <= 25
	t.OneClientSendP50OverRawMs = round(r.OneClientSend.P50ms-r.OneClientTransfer.P50ms, 3)
	t.OneClientSendP99OverRawMs = round(r.OneClientSend.P99ms-r.OneClientTransfer.P99ms, 3)
	t.Met["one_client_p50_within_3ms"] = t.OneClientSendP50OverRawMs <= 3
	t.Met["one_client_p99_within_5ms"] = t.OneClientSendP99OverRawMs <= 5
	t.BalanceP50OverRaw = round(r.OneClientBalance.P50ms/r.OneClientRawBalance.P50ms, 3)
	t.BalanceP99OverRaw = round(r.OneClientBalance.P99ms/r.OneClientRawBalance.P99ms, 3)
	t.Met["balance_at_most_1.2x_raw"] = t.BalanceP50OverRaw <= 1.2
	return t
}

func printSend(r *SendResults, n int) {
	fmt.Printf("\nsend path: %d api, %d worker (concurrency %d), %d wallets of %d account(s); n=%d at %d clients\n",
		r.Setup.APIs, r.Setup.Workers, r.Setup.WorkerConcurrency, wallets, r.Setup.Accounts, n, clients)
	fmt.Printf("%-23s %8s %8s %8s %8s %6s | %s\n", "scenario", "per_s", "p50_ms", "p95_ms", "p99_ms", "errors",
		"CPU ms per op: api worker postgres redis = service; localnet client")
	for _, s := range []struct {
		name string
		r    *Result
	}{{"baseline", r.Baseline}, {"full", r.Full}, {"decision_only", r.DecisionOnly},
		{"one_client_transfer", r.OneClientTransfer}, {"one_client_send", r.OneClientSend},
		{"one_client_raw_balance", r.OneClientRawBalance}, {"one_client_balance", r.OneClientBalance}} {
		c := s.r.CPU
		fmt.Printf("%-23s %8.1f %8.2f %8.2f %8.2f %6d | %.2f %.2f %.2f %.2f = %.2f; %.2f %.2f\n", s.name, s.r.RPS, s.r.P50ms, s.r.P95ms, s.r.P99ms, s.r.Errors,
			c.API, c.Worker, c.Postgres, c.Redis, c.Service, c.Localnet, c.Client)
	}
	if p := r.Full.CPU.ByProcess; p != nil {
		fmt.Printf("%-23s postgres CPU ms per send: backends %.2f, autovacuum %.2f, background (WAL writer, checkpointer…) %.2f, postmaster and exited %.2f\n",
			"full", p["postgres/backends"], p["postgres/autovacuum"], p["postgres/background"], p["postgres/postmaster"])
	}
	i := r.Idle
	fmt.Printf("%-23s CPU ms per second: api %.1f worker %.1f postgres %.1f redis %.1f localnet %.1f\n", "idle", i.API, i.Worker, i.Postgres, i.Redis, i.Localnet)
	t := r.Targets
	fmt.Printf("service CPU per send %.2f ms = %.2f× the localnet's CPU per raw transfer", t.ServiceCPUmsPerSend, t.ServiceCPUOverLocalnetTransfer)
	if t.ServiceCPUVsBefore > 0 {
		fmt.Printf("; %.2f× before (normalized %.2f×; target ≤ 0.5: %v)", t.ServiceCPUVsBefore, t.ServiceCPUVsBeforeNormalized, t.Met["service_cpu_at_most_half_of_before"])
	}
	fmt.Println()
	fmt.Printf("full/baseline throughput %.2f (target ≥ 0.6: %v); decision-only p99 %.2f ms (target ≤ 25: %v)\n",
		t.FullOverBaselineRPS, t.Met["full_at_least_0.6x_baseline"], t.DecisionP99ms, t.Met["decision_p99_at_most_25ms"])
	fmt.Printf("one client: send p50 raw+%.2f ms (target ≤ 3: %v), p99 raw+%.2f ms (target ≤ 5: %v); balance %.2f× raw getMultipleAccounts at p50, %.2f× at p99 (target ≤ 1.2: %v)\n",
		t.OneClientSendP50OverRawMs, t.Met["one_client_p50_within_3ms"], t.OneClientSendP99OverRawMs, t.Met["one_client_p99_within_5ms"],
		t.BalanceP50OverRaw, t.BalanceP99OverRaw, t.Met["balance_at_most_1.2x_raw"])
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
	if _, err := fmt.Sscan(strings.TrimSpace(os.Getenv(name)), &v); err != nil || v <= 0 {
		return def
	}
	return v
}
