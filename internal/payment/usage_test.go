package payment_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/usdc"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// ReadUsage counts, back from a decision's time, what the rolling windows
// and the UTC day hold: amounts of pending and confirmed transactions and
// signed x402 payments (never failed or expired ones), and the payments
// sent, signed or parked (never blocked, refused or unavailable ones, nor
// an x402 payment redeeming an approval, whose parked request counted). A
// row exactly a window's length old has left it.
func TestIssue25ReadUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	_, pub, _ := signer.GenerateMasterKey()
	sealer, _ := signer.NewSealer(pub)
	acc, err := auth.CreateAccount(ctx, db, solana.Devnet)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wallet.Create(ctx, db, sealer, acc.ID, "system", "w", policy.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := wallet.Create(ctx, db, sealer, acc.ID, "system", "other", policy.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC) // a Tuesday afternoon
	const u = usdc.Unit

	tx := func(walletID uuid.UUID, amount usdc.Micros, status string, created time.Time) {
		t.Helper()
		row := payment.Transaction{ID: uuid.New(), AccountID: acc.ID, WalletID: walletID, Network: solana.Devnet,
			Signature: uuid.NewString(), Kind: "usdc", Direction: "send", Amount: amount,
			Counterparty: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Status: status, SignedTx: []byte{0}, CreatedAt: created, UpdatedAt: created}
		if _, err := db.NewInsert().Model(&row).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	req := func(walletID uuid.UUID, status payment.Status, decided time.Time, x *payment.X402Request) uuid.UUID {
		t.Helper()
		r := payment.Request{ID: uuid.New(), AccountID: acc.ID, WalletID: walletID, Network: solana.Devnet,
			To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Amount: u, State: payment.StateDecided, X402: x,
			Outcome: &payment.Outcome{Status: status}, CreatedAt: decided, Deadline: decided.Add(time.Minute)}
		r.DecidedAt.Time = decided
		if _, err := db.NewInsert().Model(&r).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	x402 := func(amount usdc.Micros, state string, created time.Time) {
		t.Helper()
		id := req(w.ID, payment.Signed, created, &payment.X402Request{Resource: "r"})
		p := payment.X402Payment{ID: id, AccountID: acc.ID, WalletID: w.ID, RequestID: id, Network: solana.Devnet, Version: 2,
			Challenge: []byte(`{}`), Amount: amount, PayTo: "p", Asset: "a", FeePayer: "f", Resource: "r", Memo: "m",
			OwnerSignature: uuid.NewString(), SourceATA: "s", DestinationATA: "d", Header: "h", PaymentSignature: "v",
			SignedTx: []byte{0}, State: state, CreatedAt: created, UpdatedAt: created}
		if _, err := db.NewInsert().Model(&p).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}

	dayStart := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	// Amounts.
	tx(w.ID, 1*u, payment.TxConfirmed, dayStart)                      // today (the day's first instant), week, month
	tx(w.ID, 2*u, payment.TxPending, dayStart.Add(-time.Microsecond)) // yesterday: week and month
	tx(w.ID, 100*u, payment.TxFailed, at.Add(-time.Hour))             // failed: nothing
	tx(w.ID, 4*u, payment.TxConfirmed, at.Add(-payment.Week))         // exactly 7 days old: month only
	tx(w.ID, 8*u, payment.TxConfirmed, at.Add(-payment.Month))        // exactly 30 days old: nothing
	tx(w.ID, 16*u, payment.TxConfirmed, at.Add(-payment.Month+time.Second))
	tx(other.ID, 1000*u, payment.TxConfirmed, at.Add(-time.Minute)) // another wallet's
	x402(32*u, payment.X402StateSigned, at.Add(-time.Minute))       // signed: reserved (and a payment of the hour)
	x402(64*u, payment.X402Expired, at.Add(-time.Minute))           // expired: released (still a payment of the hour)

	// Counts (besides the two x402 pay requests above).
	req(w.ID, payment.Sent, at.Add(-59*time.Minute), nil)
	req(w.ID, payment.PendingApproval, at.Add(-time.Hour), nil) // exactly an hour old: the day's only
	req(w.ID, payment.Sent, at.Add(-23*time.Hour), nil)
	req(w.ID, payment.Sent, at.Add(-payment.Day), nil) // exactly 24 hours old: neither
	req(w.ID, payment.Blocked, at.Add(-time.Minute), nil)
	req(w.ID, payment.Refused, at.Add(-time.Minute), nil)
	req(w.ID, payment.Unavailable, at.Add(-time.Minute), nil)
	req(w.ID, payment.Signed, at.Add(-time.Minute), &payment.X402Request{Resource: "r", ApprovalID: uuid.NullUUID{UUID: uuid.New(), Valid: true}})
	req(other.ID, payment.Sent, at.Add(-time.Minute), nil)

	all := policy.Windows{Week: true, Month: true, Hour: true, Day: true}
	got, err := payment.ReadUsage(ctx, db, w.ID, at, all)
	if err != nil {
		t.Fatal(err)
	}
	want := policy.Usage{SpentToday: 1*u + 32*u, SpentWeek: 1*u + 2*u + 32*u, SpentMonth: 1*u + 2*u + 4*u + 16*u + 32*u,
		PaymentsLastHour: 3, PaymentsLastDay: 5}
	if got != want {
		t.Fatalf("usage %+v, want %+v", got, want)
	}
	// Only what a policy limits is read; the day always.
	got, err = payment.ReadUsage(ctx, db, w.ID, at, policy.Windows{})
	if err != nil || got != (policy.Usage{SpentToday: want.SpentToday}) {
		t.Fatalf("usage without optional rules %+v (%v)", got, err)
	}
	got, err = payment.ReadUsage(ctx, db, w.ID, at, policy.Windows{Hour: true})
	if err != nil || got != (policy.Usage{SpentToday: want.SpentToday, PaymentsLastHour: 3}) {
		t.Fatalf("usage with the hour only %+v (%v)", got, err)
	}
	if r, err := payment.ReservedToday(ctx, db, w.ID, at); err != nil || r != want.SpentToday {
		t.Fatalf("reserved today %v (%v)", r, err)
	}
}
