package bench

import (
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// HotWalletResults is bench/results/hotwallet.json.
type HotWalletResults struct {
	Setup Setup `json:"setup"`
	// LoadAvg is /proc/loadavg before and after the scenarios: the
	// machine's load the figures were taken under.
	LoadAvgBefore string `json:"loadavg_before"`
	LoadAvgAfter  string `json:"loadavg_after"`
	// One wallet paying at 32 clients: sends answered sent, sends the
	// policy blocks (the decision alone), x402 and MPP payments signed.
	Send        *HotResult `json:"send,omitempty"`
	SendBlocked *HotResult `json:"send_blocked,omitempty"`
	X402        *HotResult `json:"x402,omitempty"`
	MPP         *HotResult `json:"mpp,omitempty"`
	// SendSpread is the send scenario over 32 wallets of the same
	// account, a client each: what the machine allows when no two
	// decisions share a wallet's lock, in the same run.
	SendSpread *HotResult `json:"send_32_wallets,omitempty"`
	// GoalPerSec is the decided payments a second one wallet should
	// reach; Met says which scenarios did.
	GoalPerSec float64         `json:"goal_per_s"`
	Met        map[string]bool `json:"met"`
}

// HotResult is a scenario's measurement and how many of the service's
// database sessions waited for a lock (a wallet's row, mostly), on
// average over the scenario: near the worker's concurrency, decisions
// queue on the lock; near zero, something else bounds them.
type HotResult struct {
	Result
	LockWaiters float64 `json:"lock_waiters"`
}

// hotGoal is decided payments a second for one wallet.
const hotGoal = 200

// BenchmarkHotWallet measures one wallet paying as fast as its key may:
// the per-key rate limits raised (as StartStack does), a policy whose
// limits never bind, 32 clients at once, and each operation answered with
// its final decision. Sends are answered sent (signed, stored and
// broadcast to the localnet); blocked sends are the decision alone; x402
// and MPP payments are challenges made here, of the test sellers' shape,
// answered signed (nothing settles them: signing is the decision's end).
// One wallet's decisions serialise on its row lock, so this measures how
// long the lock is held, where BenchmarkSend spreads 64 wallets.
func BenchmarkHotWallet(b *testing.B) {
	loadBefore := loadAvg()
	stack := StartStack(b, StackOptions{APIs: 1, Workers: 1, WorkerConcurrency: clients, Private: true})
	ln := stack.Localnet
	api := stack.client(stack.NewKey(b), clients*2)

	newAgent := func(p map[string]any) (string, string) {
		status, a, err := api.do(0, "POST", "/api/public/v1/agents", map[string]any{"label": "hot", "policy": p}, nil)
		if err != nil || status != 201 {
			b.Fatalf("create agent: %d %v %v", status, a, err)
		}
		ln.SetLamports(b, a["pubkey"].(string), 100*solana.LamportsPerSOL)
		ln.SetTokenBalance(b, a["pubkey"].(string), solana.DevnetUSDCMint.String(), 1_000_000_000_000)
		return a["id"].(string), a["pubkey"].(string)
	}
	// Limits far above what a run spends: every payment is allowed, and
	// its decision still reads the day's usage and checks every rule.
	raised := map[string]any{"daily_limit_usdc": 1_000_000, "max_tx_usdc": 1_000_000, "approval_threshold_usdc": 1_000_000}
	blocking := map[string]any{"daily_limit_usdc": 1_000_000, "max_tx_usdc": 0, "approval_threshold_usdc": 1_000_000}
	hot, _ := newAgent(raised)
	blocked, _ := newAgent(blocking)
	spreadWallets := make([]string, clients)
	for i := range spreadWallets {
		spreadWallets[i], _ = newAgent(raised)
	}
	// A few recipients, their token accounts created by the warm-up's
	// sends, as a wallet paying the same counterparties would.
	recipients := make([]string, 8)
	for i := range recipients {
		recipients[i] = sol.NewWallet().PublicKey().String()
	}

	// pay posts body to wallet's route and expects the answer's key to be
	// want, with status.
	pay := func(c int, wallet, route string, body map[string]any, status int, key, want string) error {
		got, answer, err := api.do(c, "POST", "/api/public/v1/agents/"+wallet+route, body, nil)
		if err != nil {
			return err
		}
		if got != status || answer[key] != want {
			return fmt.Errorf("%s: %d %v", route, got, answer)
		}
		return nil
	}
	transfer := func(i int) map[string]any {
		return map[string]any{"to": recipients[i%len(recipients)], "amount": money.Micros[money.USD](amount)}
	}
	send := func(c, i int) error { return pay(c, hot, "/send", transfer(i), 200, "status", "sent") }
	sendSpread := func(c, i int) error { return pay(c, spreadWallets[c], "/send", transfer(i), 200, "status", "sent") }
	sendBlocked := func(c, i int) error { return pay(c, blocked, "/send", transfer(i), 403, "reason", "exceeds_max_tx") }
	x402 := func(c, i int) error {
		return pay(c, hot, "/x402/pay", map[string]any{"payment_required": x402Challenge(amount)}, 200, "status", "signed")
	}
	mpp := func(c, i int) error {
		return pay(c, hot, "/mpp/pay", map[string]any{"challenge": mppCharge(amount), "resource": "https://seller.test/r"}, 200, "status", "signed")
	}

	// Warm every path (connections, token accounts, caches) first.
	for _, op := range []func(c, i int) error{send, sendSpread, sendBlocked, x402, mpp} {
		measure(clients, clients*2, op)
	}

	res := HotWalletResults{Setup: Setup{
		APIs: 1, Accounts: 1, Workers: 1, WorkerConcurrency: clients, Wallets: 1, CPUs: runtime.NumCPU(),
		GoVersion: runtime.Version(), ClockTicks: int(clockTicks), Date: time.Now().UTC().Format(time.RFC3339),
		Note: "one wallet (the blocked scenario: another of the same account), 32 clients; the machine is shared, so read loadavg with the figures",
	}, LoadAvgBefore: loadBefore, GoalPerSec: hotGoal, Met: map[string]bool{}}
	db, err := postgres.Open(stack.DatabaseURL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	n := envInt("BENCH_HOT", 1000)
	only := os.Getenv("BENCH_ONLY")
	for _, sc := range []struct {
		name string
		out  **HotResult
		op   func(c, i int) error
	}{
		{"send", &res.Send, send},
		{"send_32_wallets", &res.SendSpread, sendSpread},
		{"send_blocked", &res.SendBlocked, sendBlocked},
		{"x402", &res.X402, x402},
		{"mpp", &res.MPP, mpp},
	} {
		if only != "" && only != sc.name {
			continue
		}
		before := sampleCPU(stack.Procs)
		stop := make(chan struct{})
		waiters := make(chan float64)
		go func() { waiters <- lockWaiters(db.DB, stop) }()
		r := HotResult{Result: measure(clients, n, sc.op)}
		close(stop)
		r.CPU = cpuPerOp(stack.Procs, before, sampleCPU(stack.Procs), float64(n))
		r.LockWaiters = <-waiters
		*sc.out = &r
		if sc.name != "send_32_wallets" {
			res.Met[sc.name] = r.Errors == 0 && r.RPS >= hotGoal
		}
		b.ReportMetric(r.RPS, sc.name+"_per_s")
	}
	res.LoadAvgAfter = loadAvg()
	printHotWallet(&res, n)
	if only != "" {
		return
	}
	writeResults(b, "hotwallet.json", res)
}

func printHotWallet(r *HotWalletResults, n int) {
	fmt.Printf("\none wallet: 1 api, 1 worker (concurrency %d); n=%d at %d clients; loadavg %s → %s\n",
		r.Setup.WorkerConcurrency, n, clients, r.LoadAvgBefore, r.LoadAvgAfter)
	fmt.Printf("%-15s %8s %8s %8s %8s %6s %7s | %s\n", "scenario", "per_s", "p50_ms", "p95_ms", "p99_ms", "errors", "waiters",
		"CPU ms per op: api worker postgres redis = service; localnet client")
	for _, s := range []struct {
		name string
		r    *HotResult
	}{{"send", r.Send}, {"send_32_wallets", r.SendSpread}, {"send_blocked", r.SendBlocked}, {"x402", r.X402}, {"mpp", r.MPP}} {
		if s.r == nil {
			continue
		}
		c := s.r.CPU
		fmt.Printf("%-15s %8.1f %8.2f %8.2f %8.2f %6d %7.1f | %.2f %.2f %.2f %.2f = %.2f; %.2f %.2f\n", s.name, s.r.RPS, s.r.P50ms, s.r.P95ms, s.r.P99ms, s.r.Errors,
			s.r.LockWaiters, c.API, c.Worker, c.Postgres, c.Redis, c.Service, c.Localnet, c.Client)
	}
}

// lockWaiters samples, every 10 ms until stop closes, the service's
// database sessions waiting for a lock, and returns their mean.
func lockWaiters(db *sql.DB, stop <-chan struct{}) float64 {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var sum, samples int
	for {
		select {
		case <-stop:
			if samples == 0 {
				return 0
			}
			return round(float64(sum)/float64(samples), 2)
		case <-tick.C:
			var n int
			if db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`).Scan(&n) == nil {
				sum, samples = sum+n, samples+1
			}
		}
	}
}

// x402Challenge is a v2 devnet challenge of micros USDC to a fresh
// seller, the shape internal/x402test's seller answers: each one a
// payment of its own.
func x402Challenge(micros int64) json.RawMessage {
	c, _ := json.Marshal(map[string]any{"x402Version": 2, "resource": map[string]any{"url": "https://seller.test/r", "description": "a resource"},
		"accepts": []any{map[string]any{"scheme": "exact", "network": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "amount": fmt.Sprint(micros),
			"asset": solana.DevnetUSDCMint.String(), "payTo": sol.NewWallet().PublicKey().String(), "maxTimeoutSeconds": 60,
			"extra": map[string]any{"feePayer": sol.NewWallet().PublicKey().String()}}}})
	return c
}

// mppCharge is a devnet Solana charge (a WWW-Authenticate Payment
// challenge) of micros USDC to a fresh recipient, the seller's fee payer
// paying, with a fresh challenge id: the shape internal/mpp/mpptest's
// seller answers.
func mppCharge(micros int64) string {
	details := map[string]any{"network": "devnet", "decimals": 6, "feePayer": true, "feePayerKey": sol.NewWallet().PublicKey().String()}
	req, _ := json.Marshal(map[string]any{"amount": fmt.Sprint(micros), "currency": solana.DevnetUSDCMint.String(),
		"recipient": sol.NewWallet().PublicKey().String(), "methodDetails": details})
	id := base64.RawURLEncoding.EncodeToString([]byte(uuid.NewString()))
	return fmt.Sprintf(`Payment id=%q, realm="seller.test", method="solana", intent="charge", request=%q, expires=%q`,
		id, base64.RawURLEncoding.EncodeToString(req), time.Now().Add(5*time.Minute).UTC().Format("2006-01-02T15:04:05.000Z"))
}
