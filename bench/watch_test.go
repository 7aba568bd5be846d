package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/tasks"
)

// WatchResult is one size's measurement in bench/results/watch.json.
type WatchResult struct {
	Wallets  int `json:"wallets"`
	Watched  int `json:"watched_accounts"`
	InFlight int `json:"in_flight"`
	// The worker's RPC calls a minute over the window, by method and in
	// all, and the total per hundred wallets.
	CallsPerMinute      map[string]float64 `json:"rpc_calls_per_min"`
	TotalCallsPerMinute float64            `json:"rpc_calls_per_min_total"`
	CallsPer100Wallets  float64            `json:"rpc_calls_per_min_per_100_wallets"`
	// CPU is milliseconds of CPU a minute over the window, by process.
	CPU *CPU `json:"cpu_ms_per_min"`
	// From a payment landing (its sendTransaction answered) to its
	// confirmed status recorded (the row's updated_at): Probes payments
	// landing one a second beside the in-flight ones during the window.
	ConfirmP50ms float64 `json:"confirm_p50_ms"`
	ConfirmMaxMs float64 `json:"confirm_max_ms"`
	Probes       int     `json:"probes"`
	// The same for the in-flight payments when the congestion clears and
	// they all land within a second or two (Burst of them timed).
	BurstP50ms float64 `json:"burst_confirm_p50_ms"`
	BurstMaxMs float64 `json:"burst_confirm_max_ms"`
	Burst      int     `json:"burst"`
	Seconds    float64 `json:"window_s"`
}

// watchSlot is the localnet's slot in this benchmark: mainnet's 400 ms,
// which keeps an in-flight payment's blockhash valid for a minute (150
// blocks), longer than one size's measurement.
const watchSlot = 400 * time.Millisecond

// watchMinFee is the congested market's minimum compute-unit price; the
// probes pay watchProbeFee, above it.
const (
	watchMinFee   = 1_000
	watchProbeFee = 10_000
)

// BenchmarkWatch measures what watching many wallets and sweeping many
// payments costs the worker: the real worker and scheduler binaries
// (StartStack, private PostgreSQL and Redis) at 100, 1,000 and 10,000
// wallets of one account, with BENCH_IN_FLIGHT (1,000) payments signed and
// broadcast but not landed (the localnet's fee market is congested and
// drops them, as a busy cluster's leaders skip a transaction paying too
// little), so each confirmation sweep looks all of them up and
// re-broadcasts its bound of them. Over a window of BENCH_WATCH_SECONDS
// (30) it counts the worker's RPC calls by method (a proxy in front of
// the localnet), samples the worker's CPU, and lands a payment a second
// (one paying above the market) to time it from landing to its confirmed
// status recorded. Then the market clears, the in-flight payments are
// sent again and land together, and their confirmation is timed too.
// Writes bench/results/watch.json.
func BenchmarkWatch(b *testing.B) {
	var node *countingNode
	s := StartStack(b, StackOptions{Private: true, Scheduler: true, Slot: watchSlot,
		WorkerRPC: func(u string) string { node = newCountingNode(b, u); return node.URL }})
	db, err := postgres.Open(s.DatabaseURL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	acct, err := auth.CreateAccount(ctx, db, solana.Devnet)
	if err != nil {
		b.Fatal(err)
	}
	wb := &watchBench{b: b, s: s, db: db, node: node, account: acct.ID,
		chain: solana.NewClient(s.Localnet.URL, solana.Devnet, 30*time.Second), recipient: sol.NewWallet().PublicKey()}
	// The recipient's USDC account exists: every payment is a plain
	// transfer, the same size.
	s.Localnet.SetTokenBalance(b, wb.recipient.String(), solana.DevnetUSDCMint.String(), 0)
	wb.payers = wb.fundedWallets(watchPayers + 1)

	inFlight := envInt("BENCH_IN_FLIGHT", 1000)
	window := time.Duration(envInt("BENCH_WATCH_SECONDS", 30)) * time.Second
	var results []WatchResult
	for _, n := range envInts("BENCH_WATCH_WALLETS", []int{100, 1_000, 10_000}) {
		results = append(results, wb.size(n, inFlight, window))
	}
	fmt.Printf("\nwatch: sweeps and scans every %v, %d payments in flight\n%-8s %14s %12s %14s %10s %10s %12s %12s\n",
		tasks.ConfirmEvery, inFlight, "wallets", "rpc_calls/min", "per_100_w", "worker_ms/min", "p50_ms", "max_ms", "burst_p50", "burst_max")
	for _, r := range results {
		fmt.Printf("%-8d %14.0f %12.1f %14.0f %10.0f %10.0f %12.0f %12.0f\n", r.Wallets, r.TotalCallsPerMinute, r.CallsPer100Wallets,
			r.CPU.Worker, r.ConfirmP50ms, r.ConfirmMaxMs, r.BurstP50ms, r.BurstMaxMs)
	}
	first, last := results[0], results[len(results)-1]
	growth := (last.TotalCallsPerMinute / first.TotalCallsPerMinute) / (float64(last.Wallets) / float64(first.Wallets))
	fmt.Printf("calls grew %.3f× as fast as wallets from %d to %d (goal ≤ 1); confirmation max at %d wallets %.0f ms (goal < 3000)\n",
		growth, first.Wallets, last.Wallets, last.Wallets, last.ConfirmMaxMs)
	writeResults(b, "watch.json", map[string]any{
		"every_s": tasks.ConfirmEvery.Seconds(), "slot_ms": watchSlot.Milliseconds(), "in_flight": inFlight,
		"sizes": results,
		"goals": map[string]any{
			"calls_growth_vs_wallets": round(growth, 3), "calls_growth_met": growth <= 1,
			"confirm_max_ms_at_largest": last.ConfirmMaxMs, "confirm_met": last.ConfirmMaxMs < 3000,
		},
	})
}

// envInts reads a comma-separated list of counts, def when unset.
func envInts(name string, def []int) []int {
	var out []int
	for f := range strings.SplitSeq(os.Getenv(name), ",") {
		var v int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &v); err == nil && v > 0 {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return def
	}
	return out
}

// watchPayers is how many funded wallets sign the in-flight payments; one
// more signs the probes.
const watchPayers = 10

type watchBench struct {
	b         *testing.B
	s         *Stack
	db        *bun.DB
	node      *countingNode
	chain     *solana.Client
	account   uuid.UUID
	recipient sol.PublicKey
	payers    []watchPayer
	wallets   int
}

// watchPayer is a wallet of the account whose key the benchmark holds.
type watchPayer struct {
	id  uuid.UUID
	key sol.PrivateKey
}

// fundedWallets writes n wallets of the account whose keys the benchmark
// holds, each paid 10 SOL and 1,000 USDC by a transfer (a balance set
// without a transaction would have the watcher look for its transaction
// at every scan).
func (wb *watchBench) fundedWallets(n int) []watchPayer {
	keys := make([]sol.PrivateKey, n)
	pubs := make([]sol.PublicKey, n)
	for i := range keys {
		keys[i] = sol.NewWallet().PrivateKey
		pubs[i] = keys[i].PublicKey()
	}
	ids := insertWalletsOf(wb.b, wb.db, wb.account, pubs)
	wb.wallets += n
	var wg sync.WaitGroup
	for _, pub := range pubs {
		wg.Go(func() {
			from := chaintest.NewPayer(wb.b, wb.s.Localnet, 1_000_000_000, 11*solana.LamportsPerSOL)
			from.TransferSOL(wb.b, pub, 10*solana.LamportsPerSOL)
			from.TransferUSDC(wb.b, pub, 1_000_000_000)
		})
	}
	wg.Wait()
	out := make([]watchPayer, n)
	for i := range out {
		out[i] = watchPayer{id: ids[i], key: keys[i]}
	}
	return out
}

// size grows the account to n wallets, puts inFlight payments in flight
// and measures one window.
func (wb *watchBench) size(n, inFlight int, window time.Duration) WatchResult {
	b, ctx := wb.b, context.Background()
	if more := n - wb.wallets; more > 0 {
		pubs := make([]sol.PublicKey, more)
		for i := range pubs {
			pubs[i] = sol.NewWallet().PublicKey()
		}
		// In one commit: the worker's scans never see these wallets
		// unwatched.
		if err := wb.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			wb.watchedEmpty(tx, insertWalletsOf(b, tx, wb.account, pubs), pubs)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		wb.wallets = n
	}
	// A deployment that has run longer than the listing period (10 min)
	// lists each wallet's token accounts once in it, spread evenly.
	if _, err := wb.db.NewRaw(`UPDATE wallets SET token_accounts_listed_at = now() - random() * interval '10 minutes'
		WHERE account_id = ? AND token_accounts_listed_at IS NULL`, wb.account).Exec(ctx); err != nil {
		b.Fatal(err)
	}
	// The worker's scans watch every new wallet's address and USDC account.
	watched := wb.waitWatched(2 * n)

	wb.s.Localnet.SetMinPriorityFee(b, watchMinFee)
	pool := wb.putInFlight(inFlight)
	// A sweep has seen them, out of their first-broadcast grace.
	time.Sleep(payment.DefaultFirstBroadcastGrace + tasks.ConfirmEvery)

	procs := wb.s.Procs
	wb.node.take()
	before := sampleCPU(procs)
	var probes []landed
	probe := wb.payers[len(wb.payers)-1]
	tick := time.NewTicker(time.Second)
	for end := time.Now().Add(window); time.Now().Before(end); {
		<-tick.C
		probes = append(probes, wb.pay(probe, watchProbeFee, uint64(len(probes)+1), true))
	}
	tick.Stop()
	after := sampleCPU(procs)
	calls := wb.node.take()
	minutes := after.at.Sub(before.at).Minutes()
	r := WatchResult{Wallets: n, Watched: watched, InFlight: inFlight, CallsPerMinute: map[string]float64{}, Probes: len(probes),
		CPU: cpuPerOp(procs, before, after, minutes), Seconds: round(after.at.Sub(before.at).Seconds(), 1)}
	for m, c := range calls {
		r.CallsPerMinute[m] = round(float64(c)/minutes, 1)
		r.TotalCallsPerMinute += r.CallsPerMinute[m]
	}
	r.TotalCallsPerMinute = round(r.TotalCallsPerMinute, 1)
	r.CallsPer100Wallets = round(r.TotalCallsPerMinute/(float64(n)/100), 2)
	r.ConfirmP50ms, r.ConfirmMaxMs = wb.confirmLatency(probes, 30*time.Second)

	// The congestion clears: the in-flight payments land together.
	wb.s.Localnet.SetMinPriorityFee(b, 0)
	var burst []landed
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, p := range pool {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			// The sweep may have sent it again first: then its landing
			// time is not known here, and it is not timed.
			if _, err := wb.chain.Broadcast(ctx, p.raw); err != nil {
				return
			}
			p.at = time.Now()
			mu.Lock()
			burst = append(burst, p)
			mu.Unlock()
		})
	}
	wg.Wait()
	r.Burst = len(burst)
	r.BurstP50ms, r.BurstMaxMs = wb.confirmLatency(burst, 60*time.Second)
	wb.waitSettled(pool, 60*time.Second)
	b.Logf("%d wallets (%d watched), %d in flight: RPC calls a minute %v (%.0f in all, %.1f per 100 wallets); worker %.0f ms CPU a minute; confirmed p50 %.0f ms, max %.0f ms; burst of %d p50 %.0f ms, max %.0f ms",
		n, watched, inFlight, r.CallsPerMinute, r.TotalCallsPerMinute, r.CallsPer100Wallets, r.CPU.Worker,
		r.ConfirmP50ms, r.ConfirmMaxMs, r.Burst, r.BurstP50ms, r.BurstMaxMs)
	return r
}

// watchedEmpty writes the watched accounts of wallets that have never
// been touched on chain as the watcher leaves them once it has examined
// them (found empty, no transaction): the state of a deployment that has
// watched them for a while. Watching many new wallets at once first
// costs a getSignaturesForAddress per account, once, in the scans that
// follow; this benchmark measures the steady state after it.
func (wb *watchBench) watchedEmpty(db bun.IDB, ids []uuid.UUID, pubs []sol.PublicKey) {
	type row struct {
		bun.BaseModel `bun:"table:watched_accounts"`
		Address       string    `bun:"address"`
		Network       string    `bun:"network"`
		WalletID      uuid.UUID `bun:"wallet_id,type:uuid"`
		Asset         string    `bun:"asset"`
		Balance       int64     `bun:"balance"`
		Since         time.Time `bun:"since"`
		CheckedAt     time.Time `bun:"checked_at"`
	}
	since := time.Now().UTC().Add(-time.Minute)
	for start := 0; start < len(ids); start += 500 {
		var rows []row
		for i := start; i < min(start+500, len(ids)); i++ {
			ata, err := solana.Devnet.AssociatedUSDC(pubs[i])
			if err != nil {
				wb.b.Fatal(err)
			}
			rows = append(rows,
				row{Address: pubs[i].String(), Network: string(solana.Devnet), WalletID: ids[i], Asset: "sol", Since: since, CheckedAt: since},
				row{Address: ata.String(), Network: string(solana.Devnet), WalletID: ids[i], Asset: "usdc", Since: since, CheckedAt: since})
		}
		if _, err := db.NewInsert().Model(&rows).Exec(context.Background()); err != nil {
			wb.b.Fatal(err)
		}
	}
}

// waitWatched waits until the worker's scans watch want accounts, and
// returns how many they watch.
func (wb *watchBench) waitWatched(want int) int {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int
		if err := wb.db.NewRaw("SELECT count(*) FROM watched_accounts WHERE network = ?", solana.Devnet).Scan(context.Background(), &n); err != nil {
			wb.b.Fatal(err)
		}
		if n >= want {
			return n
		}
		if time.Now().After(deadline) {
			wb.b.Fatalf("%d accounts watched after 2 minutes, want %d", n, want)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// landed is one payment: its row, its signed bytes, and when it landed.
type landed struct {
	id  uuid.UUID
	raw []byte
	at  time.Time
}

// putInFlight signs n payments over the watchPayers wallets, records
// them pending as the worker does before its first broadcast, and
// broadcasts them; under the congested market none lands.
func (wb *watchBench) putInFlight(n int) []landed {
	out := make([]landed, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range out {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = wb.pay(wb.payers[i%watchPayers], 0, uint64(i+1), false)
		})
	}
	wg.Wait()
	return out
}

// pay signs a payment of amount micro-USDC from w to the recipient at
// compute-unit price price, records it pending (the statement the worker
// signs with), broadcasts it, and reports when the broadcast answered:
// when it landed, if wait (it must then land).
func (wb *watchBench) pay(w watchPayer, price, amount uint64, wait bool) landed {
	b, ctx := wb.b, context.Background()
	bh, err := wb.chain.LatestBlockhash(ctx)
	if err != nil {
		b.Fatal(err)
	}
	id := uuid.New()
	unsigned, err := wb.chain.BuildTransfer(solana.Transfer{Owner: w.key.PublicKey(), To: wb.recipient, Amount: money.Quantity(money.Micros[money.USD](amount)),
		ComputeUnitPrice: price, RecipientAccountExists: true, Reference: solana.ReferenceFor(id)}, bh)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := unsigned.Sign(func(sol.PublicKey) *sol.PrivateKey { return &w.key }); err != nil {
		b.Fatal(err)
	}
	raw, err := unsigned.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	t := payment.Transaction{ID: id, AccountID: wb.account, WalletID: w.id,
		Network: solana.Devnet, Signature: unsigned.Signatures[0].String(), Kind: "usdc", Direction: "send", Asset: "USDC", Currency: "USD",
		Amount: money.Quantity(money.Micros[money.USD](amount)), Counterparty: wb.recipient.String(), Status: payment.TxPending, SignedTx: raw,
		LastValidBlockHeight: bh.LastValidBlockHeight, Attempts: 1, CreatedAt: now, UpdatedAt: now}
	if _, err := wb.db.NewInsert().Model(&t).Exec(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := wb.chain.Broadcast(ctx, raw); err != nil && wait {
		b.Fatalf("probe not sent: %v", err)
	}
	return landed{id: id, raw: raw, at: time.Now()}
}

// confirmLatency waits until every payment of ps is confirmed and returns
// the p50 and max of landing → confirmed recorded, in ms.
func (wb *watchBench) confirmLatency(ps []landed, within time.Duration) (p50, maxMs float64) {
	if len(ps) == 0 {
		return 0, 0
	}
	ids := make([]uuid.UUID, len(ps))
	for i, p := range ps {
		ids[i] = p.id
	}
	var rows []struct {
		ID        uuid.UUID `bun:"id,type:uuid"`
		UpdatedAt time.Time `bun:"updated_at"`
	}
	deadline := time.Now().Add(within)
	for {
		rows = rows[:0]
		if err := wb.db.NewRaw("SELECT id, updated_at FROM transactions WHERE id IN (?) AND status = ?", bun.List(ids), payment.TxConfirmed).
			Scan(context.Background(), &rows); err != nil {
			wb.b.Fatal(err)
		}
		if len(rows) == len(ps) {
			break
		}
		if time.Now().After(deadline) {
			wb.b.Fatalf("%d of %d payments confirmed after %v", len(rows), len(ps), within)
		}
		time.Sleep(200 * time.Millisecond)
	}
	at := map[uuid.UUID]time.Time{}
	for _, p := range ps {
		at[p.id] = p.at
	}
	lat := make([]time.Duration, len(rows))
	for i, r := range rows {
		lat[i] = r.UpdatedAt.Sub(at[r.ID])
	}
	slices.Sort(lat)
	return round(float64(lat[len(lat)/2].Microseconds())/1000, 0), round(float64(lat[len(lat)-1].Microseconds())/1000, 0)
}

// waitSettled waits until none of ps is pending, so the next size starts
// with nothing in flight.
func (wb *watchBench) waitSettled(ps []landed, within time.Duration) {
	ids := make([]uuid.UUID, len(ps))
	for i, p := range ps {
		ids[i] = p.id
	}
	deadline := time.Now().Add(within)
	for {
		var n int
		if err := wb.db.NewRaw("SELECT count(*) FROM transactions WHERE id IN (?) AND status = ?", bun.List(ids), payment.TxPending).
			Scan(context.Background(), &n); err != nil {
			wb.b.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			wb.b.Fatalf("%d of %d payments still pending after %v", n, len(ps), within)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
