package payment_test

import (
	"context"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/feepayer"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// A sponsored payment whose first transaction expired unseen is signed
// again with the fee payer too, and lands: the wallet, holding no SOL,
// keeps none; the fee payer pays the landed attempt's fee and the new
// token account's rent, once. Its budget counts the payment once: it is
// set below what the two attempts would cost together, so counting the
// expired attempt beside the new one would refuse the re-sign.
func TestResign_SponsoredPaysFeeAndRentOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newResignFixture(t, localnettest.Start(t))
	budget := int64(2*solana.TokenAccountRentLamports) - 1
	fp, err := feepayer.Set(ctx, f.eng.DB, f.sealer, f.acc.ID, "system", feepayer.Change{Enabled: true, Budget: &budget}, budget)
	if err != nil {
		t.Fatal(err)
	}
	const funded = 1_000_000_000
	f.ln.SetLamports(t, *fp.Pubkey, funded)
	f.ln.SetLamports(t, f.w.Pubkey, 0)

	f.sendUnseen(t)
	first := f.row(t)
	if first.FeePayer == nil || *first.FeePayer != *fp.Pubkey || first.SponsoredLamports == nil {
		t.Fatalf("first attempt not sponsored: fee payer %v, sponsored %v", first.FeePayer, first.SponsoredLamports)
	}
	f.checkLandedOnce(t)
	txn := f.row(t)
	if txn.FeePayer == nil || *txn.FeePayer != *fp.Pubkey || txn.SponsoredLamports == nil {
		t.Fatalf("new attempt not sponsored: fee payer %v, sponsored %v", txn.FeePayer, txn.SponsoredLamports)
	}
	node := solana.NewClient(f.ln.URL, solana.Devnet, 0)
	w, err := node.Balance(ctx, sol.MustPublicKeyFromBase58(f.w.Pubkey))
	if err != nil || w.Lamports != 0 {
		t.Fatalf("the wallet holds %d lamports (%v), want 0", w.Lamports, err)
	}
	p, err := node.Balance(ctx, sol.MustPublicKeyFromBase58(*fp.Pubkey))
	if err != nil {
		t.Fatal(err)
	}
	want := uint64(*txn.FeeLamports) + solana.TokenAccountRentLamports
	if paid := funded - p.Lamports; paid != want || uint64(*txn.SponsoredLamports) != want {
		t.Fatalf("the fee payer paid %d, sponsored %d; want the landed attempt's fee %d plus rent %d",
			paid, *txn.SponsoredLamports, *txn.FeeLamports, solana.TokenAccountRentLamports)
	}
	if spent, n, err := feepayer.SpentToday(ctx, f.eng.DB, f.acc.ID, time.Now(), uuid.Nil); err != nil || spent != *txn.SponsoredLamports || n != 1 {
		t.Fatalf("spent today %d in %d (%v), want %d in 1", spent, n, err, *txn.SponsoredLamports)
	}
}

// A sponsored payment whose every attempt expired unseen fails, and the
// fee payer's budget no longer counts what it reserved: nothing was paid.
func TestFeePayer_ExpiredSendReleasesItsReservation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newResignFixture(t, localnettest.Start(t))
	f.eng.MaxAttempts = 1
	budget := int64(solana.LamportsPerSOL)
	fp, err := feepayer.Set(ctx, f.eng.DB, f.sealer, f.acc.ID, "system", feepayer.Change{Enabled: true, Budget: &budget}, budget)
	if err != nil {
		t.Fatal(err)
	}
	f.ln.SetLamports(t, *fp.Pubkey, 1_000_000_000)
	f.ln.SetLamports(t, f.w.Pubkey, 0)

	f.sendUnseen(t)
	if spent, n, err := feepayer.SpentToday(ctx, f.eng.DB, f.acc.ID, time.Now(), uuid.Nil); err != nil || spent == 0 || n != 1 {
		t.Fatalf("while it may land: spent %d in %d (%v), want its fee and rent reserved", spent, n, err)
	}
	txn := f.sweepUntil(t, payment.TxFailed)
	if txn.SponsoredLamports == nil || *txn.SponsoredLamports != 0 {
		t.Fatalf("failed unseen: sponsored %v, want 0", txn.SponsoredLamports)
	}
	if spent, _, err := feepayer.SpentToday(ctx, f.eng.DB, f.acc.ID, time.Now(), uuid.Nil); err != nil || spent != 0 {
		t.Fatalf("spent today %d (%v) after it expired unseen, want 0", spent, err)
	}
}
