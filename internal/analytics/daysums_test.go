package analytics_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/analytics"
	"github.com/agentwallet/agentwallet/internal/money"
)

// The day sums agree with a scan of the rows they sum, through a random
// history of payments, deposits and blocks, each then confirmed, failed,
// expired or removed at random: spend, fees, x402/MPP parts, deposits and
// blocks per day and wallet, over the whole range and over part of it.
func TestCompute_DaySumsAgreeWithAScan(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(38, 1))
	wallets := []uuid.UUID{f.w.ID, f.w2.ID}
	start := day1.AddDate(0, 0, -3)
	at := func() time.Time {
		return start.Add(time.Duration(rng.Int64N(int64(6 * 24 * time.Hour))))
	}
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := f.tx.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	for range 120 {
		w := wallets[rng.IntN(2)]
		var fee *int64
		if rng.IntN(3) > 0 {
			v := 5000 + rng.Int64N(10000)
			fee = &v
		}
		f.transaction(t, w, at(), pick("usdc", "x402", "mpp", "eurc"), pick("pending", "confirmed", "failed"), money.Micros[money.USD](1+rng.Int64N(9_000_000)), fee)
	}
	exec(`UPDATE transactions SET currency = 'EUR', asset = 'EURC' WHERE account_id = ? AND kind = 'eurc'`, f.acct)
	for range 40 {
		f.x402(t, wallets[rng.IntN(2)], at(), pick("signed", "expired", "failed"), money.Micros[money.USD](1+rng.Int64N(900_000)))
	}
	exec(`UPDATE x402_payments SET protocol = 'mpp', x402_version = 0, challenge_id = id::text, expires_at = created_at WHERE account_id = ? AND amount_micros % 2 = 0`, f.acct)
	for range 40 {
		f.deposit(t, wallets[rng.IntN(2)], at(), pick("usdc", "sol"), pick("confirmed", "failed"), 1+rng.Int64N(50_000_000))
	}
	for range 40 {
		f.request(t, wallets[rng.IntN(2)], at(), pick("blocked", "sent"), pick("exceeds_max_tx", "exceeds_daily_limit", "exceeds_velocity"))
	}
	// Then the changes a payment's life makes, and a few removals.
	for _, q := range []string{
		`UPDATE transactions SET status = 'confirmed', fee_lamports = coalesce(fee_lamports, 5000) WHERE account_id = ? AND status = 'pending' AND amount_micros % 3 = 0`,
		`UPDATE transactions SET status = 'failed' WHERE account_id = ? AND status = 'confirmed' AND amount_micros % 5 = 0`,
		`UPDATE transactions SET fee_lamports = fee_lamports + 1 WHERE account_id = ? AND amount_micros % 7 = 0`,
		`UPDATE x402_payments SET state = 'expired' WHERE account_id = ? AND state = 'signed' AND amount_micros % 3 = 0`,
		`UPDATE deposits SET status = 'failed' WHERE account_id = ? AND amount % 4 = 0`,
		`UPDATE send_requests SET outcome = outcome || '{"reason": "exceeds_weekly_limit"}' WHERE account_id = ? AND amount_micros % 2 = 0 AND outcome ->> 'status' = 'blocked'`,
		`DELETE FROM transactions WHERE account_id = ? AND amount_micros % 11 = 0`,
	} {
		exec(q, f.acct)
	}

	for _, r := range []analytics.Range{{From: start, To: start.AddDate(0, 0, 6)}, {From: day1, To: day2}} {
		rep, err := analytics.Compute(ctx, f.tx, f.acct, nil, r)
		if err != nil {
			t.Fatal(err)
		}
		from, until := r.From, r.To.AddDate(0, 0, 1)
		got, want := map[string]string{}, map[string]string{}
		for _, s := range rep.Spend {
			got["spend "+s.Day.Format(time.DateOnly)+" "+s.WalletID.String()] = fmt.Sprint(s.Count, int64(s.Amount), int64(s.AmountEUR), s.FeeLamports, s.X402Count, int64(s.X402Amount), s.MPPCount, int64(s.MPPAmount))
		}
		for _, s := range rep.Received {
			got["received "+s.Day.Format(time.DateOnly)+" "+s.WalletID.String()+" "+s.Asset] = fmt.Sprint(s.Count, s.Amount)
		}
		for _, b := range rep.Blocked {
			got["blocked "+b.Reason] = fmt.Sprint(b.Count)
		}
		// The rows themselves, summed as the analytics count them.
		rows, err := f.tx.QueryContext(ctx, `SELECT 'spend ' || d || ' ' || wallet_id, concat_ws(' ', count(*),
				coalesce(sum(amount_micros) FILTER (WHERE currency = 'USD'), 0), coalesce(sum(amount_micros) FILTER (WHERE currency = 'EUR'), 0),
				coalesce(sum(fee_lamports) FILTER (WHERE status = 'confirmed'), 0),
				count(*) FILTER (WHERE kind = 'x402'), coalesce(sum(amount_micros) FILTER (WHERE kind = 'x402' AND currency = 'USD'), 0),
				count(*) FILTER (WHERE kind = 'mpp'), coalesce(sum(amount_micros) FILTER (WHERE kind = 'mpp' AND currency = 'USD'), 0))
			FROM (SELECT (created_at AT TIME ZONE 'UTC')::date AS d, wallet_id, amount_micros, currency, status, fee_lamports, kind FROM transactions
				WHERE account_id = ?0 AND created_at >= ?1 AND created_at < ?2 AND status <> 'failed'
			UNION ALL SELECT (created_at AT TIME ZONE 'UTC')::date, wallet_id, amount_micros, currency, 'pending', NULL, protocol FROM x402_payments
				WHERE account_id = ?0 AND created_at >= ?1 AND created_at < ?2 AND state = 'signed') AS t GROUP BY d, wallet_id
			UNION ALL
			SELECT 'received ' || (created_at AT TIME ZONE 'UTC')::date || ' ' || wallet_id || ' ' || asset, count(*) || ' ' || sum(amount) FROM deposits
				WHERE account_id = ?0 AND created_at >= ?1 AND created_at < ?2 AND status = 'confirmed' GROUP BY 1
			UNION ALL
			SELECT 'blocked ' || (outcome ->> 'reason'), count(*)::text FROM send_requests
				WHERE account_id = ?0 AND state = 'decided' AND decided_at >= ?1 AND decided_at < ?2 AND outcome ->> 'status' = 'blocked' GROUP BY 1`,
			f.acct, from, until)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			want[k] = v
		}
		rows.Close()
		if len(want) < 10 {
			t.Fatalf("the history left only %d sums in %v: the test proves little", len(want), r)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: day sums %q, scan %q", k, got[k], v)
				}
			}
			for k, v := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: day sums %q, scan nothing", k, v)
				}
			}
		}
	}
}
