package feepayer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/feepayer"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// sponsoredTx is a transaction row as the payment engine leaves it.
type sponsoredTx struct {
	status    string    // pending, confirmed or failed
	createdAt time.Time // zero: signedAt
	signedAt  time.Time
	sponsored *int64 // nil: the wallet paid its own fee (no fee payer)
	fee       *int64
	refused   bool
}

func insertTx(t *testing.T, tx bun.IDB, acct, walletID uuid.UUID, r sponsoredTx) uuid.UUID {
	t.Helper()
	id := uuid.New()
	var feePayer *string
	if r.sponsored != nil {
		p := sol.NewWallet().PublicKey().String()
		feePayer = &p
	}
	if r.createdAt.IsZero() {
		r.createdAt = r.signedAt
	}
	var refusedAt *time.Time
	if r.refused {
		refusedAt = &r.signedAt
	}
	_, err := tx.ExecContext(t.Context(), `INSERT INTO transactions (id, account_id, wallet_id, network, signature, amount_micros,
			counterparty, status, signed_tx, last_valid_block_height, created_at, updated_at, signed_at, refused_at,
			fee_payer, sponsored_lamports, fee_lamports)
		VALUES (?, ?, ?, 'devnet', ?, 1000000, ?, ?, '\x00', 1, ?, ?, ?, ?, ?, ?, ?)`,
		id, acct, walletID, "sig-"+id.String(), sol.NewWallet().PublicKey().String(), r.status,
		r.createdAt, r.signedAt, r.signedAt, refusedAt, feePayer, r.sponsored, r.fee)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func newWallet(t *testing.T, tx bun.IDB) (acct, walletID uuid.UUID) {
	t.Helper()
	a, w := wallettest.New(t, tx)
	return a.ID, w.ID
}

// The day's spend is the sponsored_lamports of the transactions the fee
// payer signed since 00:00 UTC (by signed_at: a payment signed again today
// counts today), and their number: what a pending transaction reserves
// (fee and rent), what a landed one paid (a landed failure its fee alone),
// nothing for one refused or expired unseen (its sponsored_lamports is
// 0, yet it is one of the day's transactions); never the wallet's own
// fees, another account's, or the transaction being signed again.
func TestSpentToday(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC)
	midnight := policy.DayStart(at)
	n := func(v int64) *int64 { return &v }
	const fee, rent = 10_000, 2_039_280
	for _, c := range []struct {
		name         string
		row          sponsoredTx
		other, again bool // another account's row; the row being signed again
		lamports     int64
		count        int
	}{
		{"pending: fee and rent reserved", sponsoredTx{status: "pending", signedAt: at.Add(-time.Hour), sponsored: n(fee + rent), fee: n(fee)}, false, false, fee + rent, 1},
		{"confirmed", sponsoredTx{status: "confirmed", signedAt: at.Add(-time.Hour), sponsored: n(fee), fee: n(fee)}, false, false, fee, 1},
		{"landed and failed: its fee", sponsoredTx{status: "failed", signedAt: at.Add(-time.Hour), sponsored: n(fee), fee: n(fee)}, false, false, fee, 1},
		{"refused by the node: nothing", sponsoredTx{status: "failed", signedAt: at.Add(-time.Hour), sponsored: n(0), fee: n(fee), refused: true}, false, false, 0, 1},
		{"expired unseen: nothing", sponsoredTx{status: "failed", signedAt: at.Add(-time.Hour), sponsored: n(0), fee: n(fee)}, false, false, 0, 1},
		{"signed at midnight", sponsoredTx{status: "pending", signedAt: midnight, sponsored: n(fee), fee: n(fee)}, false, false, fee, 1},
		{"made yesterday, signed again today", sponsoredTx{status: "pending", createdAt: midnight.Add(-time.Hour), signedAt: at.Add(-time.Hour), sponsored: n(fee), fee: n(fee)}, false, false, fee, 1},
		{"signed just before midnight", sponsoredTx{status: "pending", signedAt: midnight.Add(-time.Microsecond), sponsored: n(fee), fee: n(fee)}, false, false, 0, 0},
		{"the wallet paid its own fee", sponsoredTx{status: "confirmed", signedAt: at.Add(-time.Hour), fee: n(fee)}, false, false, 0, 0},
		{"another account's", sponsoredTx{status: "confirmed", signedAt: at.Add(-time.Hour), sponsored: n(fee), fee: n(fee)}, true, false, 0, 0},
		{"the one being signed again", sponsoredTx{status: "pending", signedAt: at.Add(-time.Hour), sponsored: n(fee + rent), fee: n(fee)}, false, true, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tx := pgtest.TestTx(t)
			acct, w := newWallet(t, tx)
			owner, ownerWallet := acct, w
			if c.other {
				owner, ownerWallet = newWallet(t, tx)
			}
			id := insertTx(t, tx, owner, ownerWallet, c.row)
			except := uuid.Nil
			if c.again {
				except = id
			}
			lamports, count, err := feepayer.SpentToday(t.Context(), tx, acct, at, except)
			if err != nil {
				t.Fatal(err)
			}
			if lamports != c.lamports || count != c.count {
				t.Errorf("spent %d lamports in %d transactions, want %d in %d", lamports, count, c.lamports, c.count)
			}
		})
	}
}

// A day's rows add up: the day's spend is their sum, whatever their order.
func TestSpentToday_AddsTheDaysRows(t *testing.T) {
	t.Parallel()
	tx := pgtest.TestTx(t)
	acct, w := newWallet(t, tx)
	at := time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC)
	n := func(v int64) *int64 { return &v }
	for _, r := range []sponsoredTx{
		{status: "pending", signedAt: at.Add(-3 * time.Hour), sponsored: n(2_049_280), fee: n(10_000)},
		{status: "confirmed", signedAt: at.Add(-2 * time.Hour), sponsored: n(10_000), fee: n(10_000)},
		{status: "failed", signedAt: at.Add(-time.Hour), sponsored: n(0), fee: n(10_000), refused: true},
		{status: "confirmed", signedAt: at.Add(-24 * time.Hour), sponsored: n(10_000), fee: n(10_000)},
	} {
		insertTx(t, tx, acct, w, r)
	}
	lamports, count, err := feepayer.SpentToday(t.Context(), tx, acct, at, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	if lamports != 2_059_280 || count != 3 {
		t.Fatalf("spent %d lamports in %d transactions, want 2059280 in 3", lamports, count)
	}
}

// An account has no fee payer until one is set; Lock and Get then read it
// (Get without its sealed secret).
func TestGetAndLock_ReadTheAccountsFeePayer(t *testing.T) {
	t.Parallel()
	tx := pgtest.TestTx(t)
	ctx := t.Context()
	acct, _ := newWallet(t, tx)
	if _, ok, err := feepayer.Get(ctx, tx, acct); ok || err != nil {
		t.Fatalf("before one is set: ok %v, %v", ok, err)
	}
	if _, ok, err := feepayer.Lock(ctx, tx, acct); ok || err != nil {
		t.Fatalf("lock before one is set: ok %v, %v", ok, err)
	}
	addr := sol.NewWallet().PublicKey().String()
	if _, err := tx.ExecContext(ctx, `INSERT INTO fee_payers (account_id, enabled, daily_budget_lamports, pubkey, secret_key_id, secret_sealed)
		VALUES (?, true, 5000, ?, 'kid', '\x01')`, acct, addr); err != nil {
		t.Fatal(err)
	}
	got, ok, err := feepayer.Get(ctx, tx, acct)
	if err != nil || !ok || !got.Enabled || got.DailyBudget != 5000 || got.PublicKey().String() != addr || got.SecretSealed != nil {
		t.Fatalf("get: %+v %v %v", got, ok, err)
	}
	locked, ok, err := feepayer.Lock(ctx, tx, acct)
	if err != nil || !ok || locked.Sealed().KeyID != "kid" || len(locked.Sealed().Ciphertext) != 1 {
		t.Fatalf("lock: %+v %v %v", locked, ok, err)
	}
}

// A budget is above 0 and at most feepayer.MaxBudget; one outside is
// refused before anything is read or written.
func TestSet_RefusesABudgetOutOfBounds(t *testing.T) {
	t.Parallel()
	for _, b := range []int64{0, -1, feepayer.MaxBudget + 1} {
		_, err := feepayer.Set(context.Background(), nil, nil, uuid.New(), "system", feepayer.Change{Enabled: true, Budget: &b}, feepayer.DefaultBudget)
		var be *feepayer.BudgetError
		if !errors.As(err, &be) || be.Lamports != b {
			t.Errorf("budget %d: %v, want a BudgetError", b, err)
		}
	}
}
