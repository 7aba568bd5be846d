package payment_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// usageWallets makes a database with an account and a wallet per label
// (default policy), for reading usage against.
func usageWallets(tb testing.TB, labels ...string) (*bun.DB, auth.Account, []uuid.UUID) {
	tb.Helper()
	db := pgtest.New(tb)
	sealer := wallettest.Sealer(tb)
	acc := wallettest.Account(tb, db)
	var ids []uuid.UUID
	for _, label := range labels {
		ids = append(ids, wallettest.Create(tb, db, sealer, acc.ID, label).ID)
	}
	return db, acc, ids
}

// ReadUsage counts, back from a decision's time, what the rolling windows
// and the UTC day hold: amounts of pending and confirmed transactions and
// signed x402 payments (never failed or expired ones), and the payments
// sent, signed or parked (never blocked, refused or unavailable ones, nor
// an x402 payment redeeming an approval, whose parked request counted). A
// row exactly a window's length old has left it.
func TestReadUsage_CountsWhatEachWindowHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acc, ids := usageWallets(t, "w", "other")
	w, other := ids[0], ids[1]
	at := time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC) // a Tuesday afternoon
	const u = money.Dollar

	tx := func(walletID uuid.UUID, amount money.Micros[money.USD], status string, created time.Time) {
		t.Helper()
		row := payment.Transaction{ID: uuid.New(), AccountID: acc.ID, WalletID: walletID, Network: solana.Devnet,
			Signature: uuid.NewString(), Kind: "usdc", Direction: "send", Amount: money.Quantity(amount),
			Counterparty: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Status: status, SignedTx: []byte{0}, CreatedAt: created, UpdatedAt: created}
		if _, err := db.NewInsert().Model(&row).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	req := func(walletID uuid.UUID, status payment.Status, decided time.Time, x *payment.X402Request) uuid.UUID {
		t.Helper()
		r := payment.Request{ID: uuid.New(), AccountID: acc.ID, WalletID: walletID, Network: solana.Devnet,
			To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Amount: money.Quantity(u), State: payment.StateDecided, X402: x,
			Outcome: &payment.Outcome{Status: status}, CreatedAt: decided, Deadline: decided.Add(time.Minute)}
		r.DecidedAt.Time = decided
		if _, err := db.NewInsert().Model(&r).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	x402 := func(amount money.Micros[money.USD], state string, created time.Time) {
		t.Helper()
		id := req(w, payment.Signed, created, &payment.X402Request{Resource: "r"})
		p := payment.X402Payment{ID: id, AccountID: acc.ID, WalletID: w, RequestID: id, Network: solana.Devnet, Version: 2, Protocol: payment.ProtocolX402,
			Challenge: []byte(`{}`), Amount: money.Quantity(amount), PayTo: "p", Asset: "a", FeePayer: "f", Resource: "r", Memo: "m",
			OwnerSignature: uuid.NewString(), SourceATA: "s", DestinationATA: "d", Header: "h", PaymentSignature: "v",
			SignedTx: []byte{0}, State: state, CreatedAt: created, UpdatedAt: created}
		if _, err := db.NewInsert().Model(&p).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}

	dayStart := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	// Amounts.
	tx(w, 1*u, payment.TxConfirmed, dayStart)                      // today (the day's first instant), week, month
	tx(w, 2*u, payment.TxPending, dayStart.Add(-time.Microsecond)) // yesterday: week and month
	tx(w, 100*u, payment.TxFailed, at.Add(-time.Hour))             // failed: nothing
	tx(w, 4*u, payment.TxConfirmed, at.Add(-payment.Week))         // exactly 7 days old: month only
	tx(w, 8*u, payment.TxConfirmed, at.Add(-payment.Month))        // exactly 30 days old: nothing
	tx(w, 16*u, payment.TxConfirmed, at.Add(-payment.Month+time.Second))
	tx(other, 1000*u, payment.TxConfirmed, at.Add(-time.Minute)) // another wallet's
	x402(32*u, payment.X402StateSigned, at.Add(-time.Minute))    // signed: reserved (and a payment of the hour)
	x402(64*u, payment.X402Expired, at.Add(-time.Minute))        // expired: released (still a payment of the hour)

	// Counts (besides the two x402 pay requests above).
	req(w, payment.Sent, at.Add(-59*time.Minute), nil)
	req(w, payment.PendingApproval, at.Add(-time.Hour), nil) // exactly an hour old: the day's only
	req(w, payment.Sent, at.Add(-23*time.Hour), nil)
	req(w, payment.Sent, at.Add(-payment.Day), nil) // exactly 24 hours old: neither
	req(w, payment.Blocked, at.Add(-time.Minute), nil)
	req(w, payment.Refused, at.Add(-time.Minute), nil)
	req(w, payment.Unavailable, at.Add(-time.Minute), nil)
	req(w, payment.Signed, at.Add(-time.Minute), &payment.X402Request{Resource: "r", ApprovalID: uuid.NullUUID{UUID: uuid.New(), Valid: true}})
	req(other, payment.Sent, at.Add(-time.Minute), nil)

	all := policy.Windows{Week: true, Month: true, Hour: true, Day: true}
	got, err := payment.ReadUsage(ctx, db, w, at, all)
	if err != nil {
		t.Fatal(err)
	}
	want := policy.Usage{USD: policy.Spent[money.USD]{Today: 1*u + 32*u, Week: 1*u + 2*u + 32*u, Month: 1*u + 2*u + 4*u + 16*u + 32*u},
		PaymentsLastHour: 3, PaymentsLastDay: 5}
	if got != want {
		t.Fatalf("usage %+v, want %+v", got, want)
	}
	// Only what a policy limits is read; the day always.
	got, err = payment.ReadUsage(ctx, db, w, at, policy.Windows{})
	if err != nil || got != (policy.Usage{USD: policy.Spent[money.USD]{Today: want.USD.Today}}) {
		t.Fatalf("usage without optional rules %+v (%v)", got, err)
	}
	got, err = payment.ReadUsage(ctx, db, w, at, policy.Windows{Hour: true})
	if err != nil || got != (policy.Usage{USD: policy.Spent[money.USD]{Today: want.USD.Today}, PaymentsLastHour: 3}) {
		t.Fatalf("usage with the hour only %+v (%v)", got, err)
	}
	if r, err := payment.ReservedToday(ctx, db, w, at); err != nil || r != want.USD.Today {
		t.Fatalf("reserved today %v (%v)", r, err)
	}
}

// usageByScan is ReadUsage's amounts as they were read before migration
// 0024: every row of the widest window, summed. The hourly totals must
// agree with it to the microUSDC.
func usageByScan(t *testing.T, db bun.IDB, walletID uuid.UUID, at time.Time) (day, week, month money.Micros[money.USD]) {
	t.Helper()
	return usageByScanB(t, db, walletID, at)
}

func usageByScanB(t testing.TB, db bun.IDB, walletID uuid.UUID, at time.Time) (day, week, month money.Micros[money.USD]) {
	t.Helper()
	err := db.NewRaw(`SELECT coalesce(sum(amount_micros) FILTER (WHERE created_at >= ?), 0)::bigint,
			coalesce(sum(amount_micros) FILTER (WHERE created_at > ?), 0)::bigint,
			coalesce(sum(amount_micros) FILTER (WHERE created_at > ?), 0)::bigint
		FROM (SELECT created_at, amount_micros FROM transactions WHERE wallet_id = ? AND status IN ('pending', 'confirmed')
			UNION ALL SELECT created_at, amount_micros FROM x402_payments WHERE wallet_id = ? AND state = 'signed') AS t`,
		policy.DayStart(at), at.Add(-payment.Week), at.Add(-payment.Month), walletID, walletID).Scan(t.Context(), &day, &week, &month)
	if err != nil {
		t.Fatal(err)
	}
	return day, week, month
}

// The hourly totals (migration 0024) give what a scan of every row gives,
// through a random history: transactions and x402 payments inserted across
// 35 days (some in the future), confirmed, failed, settled, expired, moved
// to another time or amount, deleted; read at random instants and at the
// edges that matter (a row's own time, an hour's first instant, exactly a
// window's length after a row). The stored totals then equal a
// recomputation from the rows.
func TestUsageHoursAgreeWithAScan(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, acc, wallets := usageWallets(t, "a", "b")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	base := time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC)
	// Instants cluster on hour boundaries, so edges are hit.
	instant := func() time.Time {
		t := base.Add(-time.Duration(rng.Int64N(int64(33 * payment.Day)))).Add(time.Duration(rng.Int64N(int64(2 * payment.Day))))
		switch rng.IntN(4) {
		case 0:
			return t.Truncate(time.Hour)
		case 1:
			return t.Truncate(time.Hour).Add(-time.Microsecond)
		}
		return t.Truncate(time.Microsecond)
	}
	type row struct {
		table  string
		id     uuid.UUID
		wallet uuid.UUID
		at     time.Time
	}
	var rows []row
	for i := range 300 {
		w := wallets[rng.IntN(len(wallets))]
		at := instant()
		amount := money.Micros[money.USD](1 + rng.Int64N(50_000_000))
		if i%3 == 0 {
			id := uuid.New()
			r := payment.Request{ID: id, AccountID: acc.ID, WalletID: w, Network: solana.Devnet, To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
				Amount: money.Quantity(amount), State: payment.StateDecided, X402: &payment.X402Request{Resource: "r"}, Outcome: &payment.Outcome{Status: payment.Signed},
				CreatedAt: at, Deadline: at.Add(time.Minute)}
			r.DecidedAt.Time = at
			if _, err := db.NewInsert().Model(&r).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			p := payment.X402Payment{ID: id, AccountID: acc.ID, WalletID: w, RequestID: id, Network: solana.Devnet, Version: 2, Protocol: payment.ProtocolX402,
				Challenge: []byte(`{}`), Amount: money.Quantity(amount), PayTo: "p", Asset: "a", FeePayer: "f", Resource: "r", Memo: "m",
				OwnerSignature: uuid.NewString(), SourceATA: "s", DestinationATA: "d", Header: "h", PaymentSignature: "v",
				SignedTx: []byte{0}, State: []string{payment.X402StateSigned, payment.X402StateSigned, payment.X402Expired}[rng.IntN(3)], CreatedAt: at, UpdatedAt: at}
			if _, err := db.NewInsert().Model(&p).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, row{"x402_payments", id, w, at})
			continue
		}
		tx := payment.Transaction{ID: uuid.New(), AccountID: acc.ID, WalletID: w, Network: solana.Devnet,
			Signature: uuid.NewString(), Kind: "usdc", Direction: "send", Amount: money.Quantity(amount),
			Counterparty: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
			Status:       []string{payment.TxPending, payment.TxPending, payment.TxConfirmed, payment.TxFailed}[rng.IntN(4)], SignedTx: []byte{0}, CreatedAt: at, UpdatedAt: at}
		if _, err := db.NewInsert().Model(&tx).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row{"transactions", tx.ID, w, at})
	}
	// Changes after the fact, as the sweeps and re-signs
	// make them (and a few no code makes: the triggers do not care).
	for range 200 {
		r := rows[rng.IntN(len(rows))]
		var stmt string
		switch c := rng.IntN(6); {
		case r.table == "transactions" && c < 3:
			stmt = fmt.Sprintf("UPDATE transactions SET status = '%s' WHERE id = ?", []string{payment.TxConfirmed, payment.TxFailed, payment.TxPending}[c])
		case r.table == "x402_payments" && c < 3:
			stmt = fmt.Sprintf("UPDATE x402_payments SET state = '%s' WHERE id = ?", []string{"failed", payment.X402Expired, payment.X402StateSigned}[c])
		case c == 3:
			stmt = "UPDATE " + r.table + " SET created_at = created_at - interval '59 minutes 59.999999 seconds' WHERE id = ?"
		case c == 4:
			stmt = "UPDATE " + r.table + " SET amount_micros = amount_micros + 1 WHERE id = ?"
		default:
			stmt = "UPDATE " + r.table + " SET updated_at = now() WHERE id = ?" // counts nothing
		}
		if _, err := db.ExecContext(ctx, stmt, r.id); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, r := range rows[:10] {
		if r.table == "transactions" {
			if _, err := db.ExecContext(ctx, "DELETE FROM transactions WHERE id = ?", r.id); err != nil {
				t.Fatal(err)
			}
		}
	}

	var ats []time.Time
	for range 150 {
		ats = append(ats, instant())
	}
	for _, r := range rows[:40] {
		var at time.Time
		if err := db.NewRaw("SELECT created_at FROM "+r.table+" WHERE id = ?", r.id).Scan(ctx, &at); err != nil {
			continue // deleted
		}
		ats = append(ats, at, at.Add(payment.Week), at.Add(payment.Month), at.Add(payment.Week+time.Microsecond), at.Add(payment.Month-time.Microsecond))
	}
	all := policy.Windows{Week: true, Month: true}
	for _, at := range ats {
		for _, w := range wallets {
			got, err := payment.ReadUsage(ctx, db, w, at, all)
			if err != nil {
				t.Fatal(err)
			}
			day, week, month := usageByScan(t, db, w, at)
			if got.USD.Today != day || got.USD.Week != week || got.USD.Month != month {
				t.Fatalf("at %s: hourly totals give day %d week %d month %d; the scan %d %d %d", at.Format(time.RFC3339Nano),
					got.USD.Today, got.USD.Week, got.USD.Month, day, week, month)
			}
		}
	}
	var drift int
	if err := db.NewRaw(`SELECT count(*) FROM (
			SELECT wallet_id, hour, micros FROM wallet_usage_hours WHERE micros <> 0
			EXCEPT
			SELECT wallet_id, usage_hour(created_at), sum(amount_micros) FROM (
				SELECT wallet_id, created_at, amount_micros FROM transactions WHERE status IN ('pending', 'confirmed')
				UNION ALL SELECT wallet_id, created_at, amount_micros FROM x402_payments WHERE state = 'signed') AS t
			GROUP BY 1, 2) AS d`).Scan(ctx, &drift); err != nil || drift != 0 {
		t.Fatalf("%d stored hourly totals differ from the rows' (%v)", drift, err)
	}
}

// BenchmarkReadUsage reads a month of a busy wallet's usage (10,000
// counted payments over 30 days, among as many of 7 other wallets', so its
// hours lie apart as in a shared table) from the hourly sums, against the
// scan of every row it replaced, in the same run: x_scan is the ratio.
func BenchmarkReadUsage(b *testing.B) {
	ctx := b.Context()
	db, acc, ids := usageWallets(b, "busy-0", "busy-1", "busy-2", "busy-3", "busy-4", "busy-5", "busy-6", "busy-7")
	w := ids[0]
	at := time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC)
	if _, err := db.ExecContext(ctx, `INSERT INTO transactions (id, account_id, wallet_id, network, signature, amount_micros, counterparty,
			status, signed_tx, last_valid_block_height, created_at, updated_at)
		SELECT gen_random_uuid(), ?, (?::uuid[])[1 + j], 'devnet', gen_random_uuid()::text, 1000, 'cp', 'confirmed', '\x00', 1,
			?::timestamptz - i * interval '259 seconds', now()
		FROM generate_series(1, 10000) AS i, generate_series(0, 7) AS j ORDER BY i, j`, acc.ID, pgdialect.Array(ids), at); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE transactions, wallet_usage_hours"); err != nil {
		b.Fatal(err)
	}
	var scan time.Duration
	b.Run("scan", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			usageByScanB(b, db, w, at)
		}
		scan = time.Since(start) / time.Duration(b.N)
	})
	b.Run("hours", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			if _, err := payment.ReadUsage(ctx, db, w, at, policy.Windows{Week: true, Month: true}); err != nil {
				b.Fatal(err)
			}
		}
		if scan > 0 {
			b.ReportMetric(float64(time.Since(start)/time.Duration(b.N))/float64(scan), "x_scan")
		}
	})
}
