package deposit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// A change of a wallet's balance made without any transaction (the
// localnet's cheat codes, as a node that lost history would look) is a
// difference at the next snapshot: recorded with the chain's and the
// ledger's balances, announced once (wallet.balance_mismatch), listed;
// the ledger takes the chain's balance from then on, so the next snapshot
// finds nothing and the history answers what the chain holds.
func TestSnapshot_AChangeWithoutATransactionIsADifferenceOnce(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	_, w := wallettest.New(t, db)
	watcher, _ := newWatcher(ln, db)
	ctx := context.Background()
	snapshot := func() deposit.SnapshotStats {
		t.Helper()
		st, err := watcher.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := snapshot(); st.Wallets != 1 || st.Differences != 0 {
		t.Fatalf("the empty wallet's snapshot %+v", st)
	}
	ln.SetTokenBalance(t, w.Pubkey, solana.DevnetUSDCMint.String(), 7_000_000)
	ln.SetLamports(t, w.Pubkey, solana.LamportsPerSOL)
	if st := snapshot(); st.Wallets != 1 || st.Differences != 2 {
		t.Fatalf("snapshot %+v, want 2 differences (USDC and SOL)", st)
	}
	if n := eventsOf(t, db, "wallet.balance_mismatch"); n != 2 {
		t.Fatalf("%d wallet.balance_mismatch events, want 2", n)
	}
	ds, err := deposit.Differences(ctx, db, w.ID, "", time.Time{}, uuid.Nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"usdc": 7_000_000, "sol": solana.LamportsPerSOL}
	if len(ds) != 2 {
		t.Fatalf("differences %+v", ds)
	}
	for _, d := range ds {
		if d.Kind != deposit.DifferenceSnapshot || d.Amount != want[d.Asset] || d.Chain.Int64 != want[d.Asset] || d.Ledger.Int64 != 0 || d.Signature.Valid {
			t.Fatalf("difference %+v, want %s %d on chain, none in the ledger", d, d.Asset, want[d.Asset])
		}
	}

	// Reported once: the ledger now holds the chain's balance, and a scan
	// no longer takes the account for changed.
	if st := snapshot(); st.Differences != 0 {
		t.Fatalf("the next snapshot %+v", st)
	}
	if st, err := watcher.Scan(ctx); err != nil || st.Changed != 0 {
		t.Fatalf("scan %+v %v: the accounts look changed", st, err)
	}
	from := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
	from.TransferUSDC(t, w.PublicKey(), 1_000_000)
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if st := snapshot(); st.Differences != 0 {
		t.Fatalf("snapshot after a deposit %+v", st)
	}
	h, err := historyOfUSDCAndSOL(ctx, db, w.ID, []time.Time{time.Now().Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if h[0].USDC != 8_000_000 || h[0].SOL != int64(solana.LamportsPerSOL) {
		t.Fatalf("history %+v, want 8 USDC and 1 SOL as on chain", h[0])
	}
}

// A deposit the watcher has not scanned yet is no difference: the
// snapshot examines an account whose balance moved up to the slot it read
// it at before it compares (and records the deposit, once).
func TestSnapshot_AnUnscannedDepositIsNoDifference(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	_, w := wallettest.New(t, db)
	watcher, _ := newWatcher(ln, db)
	ctx := context.Background()
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	from := chaintest.NewPayer(t, ln, 10_000_000, 2*solana.LamportsPerSOL)
	from.TransferSOL(t, w.PublicKey(), solana.LamportsPerSOL/4)
	from.TransferUSDC(t, w.PublicKey(), 2_000_000)
	st, err := watcher.Snapshot(ctx)
	if err != nil || st.Wallets != 1 || st.Differences != 0 {
		t.Fatalf("snapshot %+v %v", st, err)
	}
	if got := depositsOf(t, db, w); len(got) != 2 {
		t.Fatalf("deposits %+v, want the 2 the snapshot examined", got)
	}
	if st, err := watcher.Scan(ctx); err != nil || st.Deposits != 0 {
		t.Fatalf("scan %+v %v: counted again", st, err)
	}
}

// A wallet's PYUSD (Token-2022) is checked by the snapshot as its own
// asset: a deposit not yet scanned is no difference; a change made
// without a transaction is one, named PYUSD, with the chain's and the
// ledger's balances in PYUSD units, announced once; the other assets are
// not disturbed.
func TestSnapshot_EachAssetIsCheckedOnItsOwn(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	_, w := wallettest.New(t, db)
	if _, err := db.NewRaw(`UPDATE wallets SET assets = '{USDC,PYUSD}' WHERE id = ?`, w.ID).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	watcher, c := newWatcher(ln, db)
	ctx := context.Background()
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	pyusd := devnetAsset(t, "PYUSD")
	from := stranger(t, ln, map[asset.Asset]uint64{pyusd: 100_000_000})
	pay(t, c, from, w.PublicKey(), pyusd, 4_000_000, true)
	if st, err := watcher.Snapshot(ctx); err != nil || st.Wallets != 1 || st.Differences != 0 {
		t.Fatalf("snapshot %+v %v", st, err)
	}
	var rows []struct {
		Asset  string `bun:"asset"`
		Chain  int64  `bun:"chain"`
		Ledger int64  `bun:"ledger"`
	}
	if err := db.NewSelect().Table("balance_snapshots").Column("asset", "chain", "ledger").Where("wallet_id = ?", w.ID).Order("asset").Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Asset != "pyusd" || rows[0].Chain != 4_000_000 || rows[0].Ledger != 4_000_000 {
		t.Fatalf("snapshot rows %+v, want pyusd (4 PYUSD on both sides), sol, usdc", rows)
	}
	ln.SetTokenBalance(t, w.Pubkey, pyusd.Mint.String(), 9_500_000)
	if st, err := watcher.Snapshot(ctx); err != nil || st.Differences != 1 {
		t.Fatalf("snapshot %+v %v, want 1 difference (PYUSD)", st, err)
	}
	ds := eventData(t, db, "wallet.balance_mismatch")
	if len(ds) != 1 || ds[0]["asset"] != "pyusd" || ds[0]["symbol"] != "PYUSD" || fmt.Sprint(ds[0]["chain"]) != "9.5" ||
		fmt.Sprint(ds[0]["ledger"]) != "4" || fmt.Sprint(ds[0]["difference"]) != "5.5" {
		t.Fatalf("wallet.balance_mismatch %v", ds)
	}
	if st, err := watcher.Snapshot(ctx); err != nil || st.Differences != 0 {
		t.Fatalf("the next snapshot %+v %v", st, err)
	}
	ledgerMatchesChain(t, db, c, w)
}
