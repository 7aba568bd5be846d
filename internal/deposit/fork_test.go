package deposit_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// A deposit seen at confirmed and then dropped by a fork (its transaction
// gone from the chain, past its blockhash's life) is marked failed and
// announced once (tx.receive_failed); the ledger forgets it, so the
// balance history and the snapshot agree with the chain again. A deposit
// that stays is seen finalized and asked after no more.
func TestWatcher_DepositDroppedByAForkIsFailedOnce(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t) // its own: the test moves its slots on
	db := pgtest.New(t)
	_, w := wallettest.New(t, db)
	watcher, c := newWatcher(ln, db)
	ctx := context.Background()
	scan := func() deposit.Stats {
		t.Helper()
		st, err := watcher.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	scan()
	from := chaintest.NewPayer(t, ln, 10_000_000, 2*solana.LamportsPerSOL)
	kept := from.TransferSOL(t, w.PublicKey(), solana.LamportsPerSOL/2)
	dropped := from.TransferUSDC(t, w.PublicKey(), 3_000_000)
	if st := scan(); st.Deposits != 2 {
		t.Fatalf("scan %+v, want 2 deposits", st)
	}
	localnettest.Call(t, ln.URL, nil, "localnet_abandon", map[string]any{"signature": dropped})

	// Until the dropped transaction's blockhash has expired it could still
	// land on another fork: nothing is concluded.
	if st := scan(); st.Failed != 0 {
		t.Fatalf("failed before the blockhash expired: %+v", st)
	}
	localnettest.Call(t, ln.URL, nil, "localnet_advance", map[string]any{"slots": deposit.ForkWindow + 10})
	if st := scan(); st.Failed != 1 {
		t.Fatalf("scan %+v, want the dropped deposit failed", st)
	}
	scan() // the rewound USDC account is read again: nothing new
	if st := scan(); st.Failed != 0 || st.Deposits != 0 {
		t.Fatalf("a later scan %+v", st)
	}
	got := depositsOf(t, db, w)
	want := map[string]string{kept: "confirmed", dropped: "failed"}
	if len(got) != 2 || want[got[0].Signature] != got[0].Status || want[got[1].Signature] != got[1].Status {
		t.Fatalf("deposits %+v, want %v", got, want)
	}
	if n := eventsOf(t, db, "tx.receive_failed"); n != 1 {
		t.Fatalf("%d tx.receive_failed events, want 1", n)
	}
	var unsettled int
	if err := db.NewRaw(`SELECT count(*) FROM deposits WHERE finalized_at IS NULL AND status = 'confirmed'`).Scan(ctx, &unsettled); err != nil {
		t.Fatal(err)
	}
	if unsettled != 0 {
		t.Fatalf("%d deposits still asked after", unsettled)
	}

	b, err := c.Balance(ctx, w.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	h, err := historyOfUSDCAndSOL(ctx, db, w.ID, []time.Time{time.Now().Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if h[0].USDC != int64(b.USDC) || h[0].SOL != int64(b.Lamports) || b.USDC != 0 {
		t.Fatalf("history %+v, chain %d micro-USDC %d lamports", h[0], b.USDC, b.Lamports)
	}
	st, err := watcher.Snapshot(ctx)
	if err != nil || st.Wallets != 1 || st.Differences != 0 {
		t.Fatalf("snapshot %+v %v, want the wallet checked and no difference", st, err)
	}
}
