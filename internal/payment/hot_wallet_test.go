package payment_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// A hot wallet decided from many goroutines at once admits exactly what
// its limits allow, though sends are signed before the wallet's lock: 200
// sends to each of two wallets of one account, all decided at once by 32
// goroutines, against a daily limit of 25 payments' worth on one and a
// velocity of 15 payments an hour on the other. Exactly 25 and 15 are
// sent, the rest blocked for that rule, and each wallet's transactions
// and reserved total are exactly the admitted sends' amounts.
func TestDecide_HotWalletAdmitsExactlyItsLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const (
		attempts = 200 // per wallet
		amount   = money.Micros[money.USD](10_000)
		byDay    = 25 // the daily limit's payments
		byHour   = 15 // the velocity's
	)
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	key := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	daily := wallettest.Create(t, db, key.Sealer, acc.ID, "daily")
	velocity := wallettest.Create(t, db, key.Sealer, acc.ID, "velocity")
	for _, w := range []string{daily.Pubkey, velocity.Pubkey} {
		ln.SetLamports(t, w, 1_000_000_000)
		ln.SetTokenBalance(t, w, solana.DevnetUSDCMint.String(), 1_000_000_000)
	}
	// Nothing else binds: per payment and the approval threshold far
	// above the amount.
	for _, q := range []struct {
		id          uuid.UUID
		daily, hour any
	}{{daily.ID, int64(byDay * amount), nil}, {velocity.ID, int64(1_000_000_000), byHour}} {
		if _, err := db.ExecContext(ctx, `UPDATE wallets SET daily_limit_micros = ?, max_tx_micros = 1000000000,
			approval_threshold_micros = 1000000000, max_tx_per_hour = ? WHERE id = ?`, q.daily, q.hour, q.id); err != nil {
			t.Fatal(err)
		}
	}
	eng := &payment.Engine{DB: db, Signer: key.Keystore(t), Nodes: map[solana.Network]payment.Node{
		solana.Devnet: payment.NewNode(ln.URL, solana.Devnet, 5*time.Second),
	}}

	to := sol.NewWallet().PublicKey().String()
	ids := make([]uuid.UUID, 2*attempts)
	for i := range ids {
		w := daily.ID
		if i%2 == 1 {
			w = velocity.ID
		}
		r := payment.Request{ID: uuid.New(), AccountID: acc.ID, WalletID: w, Network: solana.Devnet, To: to, Amount: money.Quantity(amount)}
		if err := payment.Submit(ctx, db, &r, time.Minute); err != nil {
			t.Fatal(err)
		}
		ids[i] = r.ID
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(ids); i = int(next.Add(1)) - 1 {
				if err := eng.Decide(ctx, ids[i]); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name   string
		wallet uuid.UUID
		sent   int
		reason policy.Reason
	}{{"daily limit", daily.ID, byDay, policy.ExceedsDailyLimit}, {"velocity", velocity.ID, byHour, policy.ExceedsVelocity}} {
		t.Run(c.name, func(t *testing.T) {
			var outcomes []struct {
				Status payment.Status
				Reason policy.Reason
				N      int
			}
			if err := db.NewRaw(`SELECT outcome ->> 'status' AS status, coalesce(outcome ->> 'reason', '') AS reason, count(*) AS n
				FROM send_requests WHERE wallet_id = ? GROUP BY 1, 2`, c.wallet).Scan(ctx, &outcomes); err != nil {
				t.Fatal(err)
			}
			got := map[payment.Status]int{}
			for _, o := range outcomes {
				got[o.Status] += o.N
				if o.Status == payment.Blocked && o.Reason != c.reason {
					t.Errorf("%d blocked for %s, want only %s", o.N, o.Reason, c.reason)
				}
			}
			if got[payment.Sent] != c.sent || got[payment.Blocked] != attempts-c.sent || len(got) != 2 {
				t.Fatalf("outcomes %v, want %d sent and %d blocked", got, c.sent, attempts-c.sent)
			}
			var txs int
			var sum int64
			if err := db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(amount_micros), 0) FROM transactions WHERE wallet_id = ?`,
				c.wallet).Scan(&txs, &sum); err != nil {
				t.Fatal(err)
			}
			if txs != c.sent || sum != int64(c.sent)*int64(amount) {
				t.Fatalf("%d transactions of %d micros in all, want %d of %d", txs, sum, c.sent, int64(c.sent)*int64(amount))
			}
			if reserved, err := payment.ReservedToday(ctx, db, c.wallet, time.Now()); err != nil || reserved != money.Micros[money.USD](sum) {
				t.Fatalf("reserved today %d (%v), want %d", reserved, err, sum)
			}
			var sentLastHour int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM send_requests WHERE wallet_id = ? AND outcome ->> 'status' = 'sent'
				AND decided_at > now() - interval '1 hour'`, c.wallet).Scan(&sentLastHour); err != nil || sentLastHour != c.sent {
				t.Fatalf("%d sent in the last hour (%v), want %d", sentLastHour, err, c.sent)
			}
		})
	}
}
