package payment_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// A send lands while the node's history backend lags from a slot before
// it (statuses null with a context slot from before the send,
// getTransaction null, getSignaturesForAddress without it), the height
// current, for longer than the blockhash lives: no sweep signs it again
// or fails it; once the node catches up it ends confirmed with its first
// signature, the recipient paid once.
func TestSweep_LandedSendIsNotSignedAgainWhileTheNodeLags(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	f := newResignFixture(t, ln)
	ctx := context.Background()
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 1})
	var stuck uint64
	ln.Call(t, &stuck, "getSlot")
	ln.SetFaults(t, localnettest.Faults{HistorySlot: &stuck})
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 1})

	r := payment.Request{ID: uuid.New(), AccountID: f.acc.ID, WalletID: f.w.ID, Network: solana.Devnet, To: f.to, Amount: f.amount}
	if err := payment.Submit(ctx, f.eng.DB, &r, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := f.eng.Decide(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	o, err := payment.Final(ctx, f.eng.DB, r.ID)
	if err != nil || o == nil || o.Status != payment.Sent {
		t.Fatalf("outcome %+v %v", o, err)
	}
	f.request, f.firstSignature = r.ID, o.Signature
	if got := f.recipientUSDC(t); got != f.amount {
		t.Fatalf("recipient holds %d after the send, want %d (it landed)", got, f.amount)
	}

	// Past the blockhash's life and the sweep's margin, several sweeps.
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	for i := range 5 {
		st, err := f.eng.Sweep(ctx)
		if err != nil || st.Resigned != 0 || st.Failed != 0 || st.Confirmed != 0 {
			t.Fatalf("sweep %d while the node lags: %+v %v", i, st, err)
		}
		ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 200})
	}
	if txn := f.row(t); txn.Status != payment.TxPending || txn.Attempts != 1 || txn.Signature != f.firstSignature || txn.ExpirySlot == 0 {
		t.Fatalf("while the node lags: status %s, attempts %d, signature %s (first %s), expiry slot %d",
			txn.Status, txn.Attempts, txn.Signature, f.firstSignature, txn.ExpirySlot)
	}

	ln.SetFaults(t, localnettest.Faults{})
	txn := f.sweepUntil(t, payment.TxConfirmed)
	if txn.Attempts != 1 || txn.Signature != f.firstSignature {
		t.Fatalf("confirmed as attempt %d, signature %s (first %s)", txn.Attempts, txn.Signature, f.firstSignature)
	}
	if got := f.recipientUSDC(t); got != f.amount {
		t.Fatalf("recipient holds %d, want %d (paid once)", got, f.amount)
	}
	if n := f.countWhere(t, "transaction_attempts", "true"); n != 0 {
		t.Fatalf("%d earlier attempts recorded", n)
	}
	if n := f.countWhere(t, "events", "kind = 'tx.sent'"); n != 1 {
		t.Fatalf("%d tx.sent events", n)
	}
	if reserved, _ := payment.ReservedToday(ctx, f.eng.DB, f.w.ID, time.Now()); reserved != f.amount {
		t.Fatalf("reserved %d, want %d (counted once)", reserved, f.amount)
	}
}
