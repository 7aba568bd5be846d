package bench

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// StrangerResult is bench/results/deposits-stranger.json.
type StrangerResult struct {
	Wallets       int                `json:"wallets"`
	PlantedOnOne  int                `json:"token_accounts_planted_on_one_wallet"`
	WatchedOfThat int                `json:"watched_accounts_of_that_wallet"`
	WatchedInAll  int                `json:"watched_accounts_in_all"`
	ListingScanMs float64            `json:"listing_scan_ms"`
	ListingCalls  map[string]int     `json:"listing_scan_rpc_calls"`
	IdleScanMs    float64            `json:"idle_ms_per_scan"`
	IdleCallsScan map[string]float64 `json:"idle_rpc_calls_per_scan"`
	DepositScans  int                `json:"scans_until_another_wallets_deposit_announced"`
}

// BenchmarkDepositsStranger plants BENCH_PLANTED (5,000) token accounts of
// USDC, each holding 1 micro-USDC, on one of 100 watched wallets, as a
// stranger can (surfnet_setAccount: no transaction shows them, so each
// watched one is a balance no transaction explains, the costliest kind:
// examined at every scan). It measures the scan that lists them, idle
// scans after it (their time and RPC calls by method), how many of the
// wallet's accounts are watched, and how many scans it takes to announce
// a deposit to another wallet. Writes bench/results/deposits-stranger.json.
func BenchmarkDepositsStranger(b *testing.B) {
	ctx := context.Background()
	ln := localnettest.Shared(b)
	db := pgtest.New(b)
	acct := wallettest.Account(b, db)
	ws := insertWallets(b, db, acct.ID, 100)
	target, other := ws[0], ws[57]
	planted := envInt("BENCH_PLANTED", 5000)
	data := make([]byte, 165)
	copy(data[0:32], solana.DevnetUSDCMint[:])
	copy(data[32:64], target[:])
	binary.LittleEndian.PutUint64(data[64:72], 1)
	data[108] = 1
	enc := base64.StdEncoding.EncodeToString(data)
	for range planted {
		ln.Call(b, nil, "surfnet_setAccount", sol.NewWallet().PublicKey().String(), map[string]any{
			"lamports": 2_039_280, "owner": sol.TokenProgramID.String(), "data": []string{enc, "base64"},
		})
	}

	node := newCountingNode(b, ln.URL)
	w := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(node.URL, solana.Devnet, 30*time.Second)},
		ListPerScan: 1}
	r := StrangerResult{Wallets: len(ws), PlantedOnOne: planted, IdleCallsScan: map[string]float64{}}
	// The first wallet listed is the one with the planted accounts (the
	// wallets were written in order; ties go by the database's order, so
	// list until it is done).
	for range len(ws) {
		node.take()
		start := time.Now()
		if _, err := w.Scan(ctx); err != nil {
			b.Fatal(err)
		}
		var n int
		if err := db.NewRaw(`SELECT count(*) FROM watched_accounts x JOIN wallets w ON w.id = x.wallet_id WHERE w.pubkey = ?`,
			target.String()).Scan(ctx, &n); err != nil {
			b.Fatal(err)
		}
		if n > 2 {
			r.ListingScanMs = round(float64(time.Since(start).Microseconds())/1000, 1)
			r.ListingCalls = node.take()
			r.WatchedOfThat = n
			break
		}
	}
	// Everyone listed: idle scans from here.
	w.ListPerScan = 100
	if _, err := w.Scan(ctx); err != nil {
		b.Fatal(err)
	}
	if err := db.NewRaw(`SELECT count(*) FROM watched_accounts`).Scan(ctx, &r.WatchedInAll); err != nil {
		b.Fatal(err)
	}
	node.take()
	const scans = 5
	start := time.Now()
	for range scans {
		if _, err := w.Scan(ctx); err != nil {
			b.Fatal(err)
		}
	}
	r.IdleScanMs = round(float64((time.Since(start)/scans).Microseconds())/1000, 1)
	for m, c := range node.take() {
		r.IdleCallsScan[m] = round(float64(c)/scans, 1)
	}

	from := chaintest.NewPayer(b, ln, 1_000_000, solana.LamportsPerSOL)
	sig := from.TransferUSDC(b, other, 10_000)
	for r.DepositScans = 1; r.DepositScans <= 10; r.DepositScans++ {
		if _, err := w.Scan(ctx); err != nil {
			b.Fatal(err)
		}
		var n int
		if err := db.NewRaw(`SELECT count(*) FROM events WHERE kind = 'tx.received' AND data->>'signature' = ?`, sig).Scan(ctx, &n); err != nil {
			b.Fatal(err)
		}
		if n == 1 {
			break
		}
	}
	fmt.Printf("\n%d token accounts planted on one of %d wallets: %d of them watched (%d accounts in all)\n", planted, len(ws), r.WatchedOfThat, r.WatchedInAll)
	fmt.Printf("the scan that lists them: %.1f ms, calls %v\nan idle scan: %.1f ms, calls %v\nanother wallet's deposit announced after %d scan(s)\n",
		r.ListingScanMs, r.ListingCalls, r.IdleScanMs, r.IdleCallsScan, r.DepositScans)
	writeResults(b, "deposits-stranger.json", r)
}
