package migrations_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// 0024 sums an existing database's reservations of the last 31 days into
// wallet_usage_hours (pending and confirmed transactions, by the UTC hour
// of created_at; failed ones and older ones not), keeps them summed from
// then on, and its down migration removes the table.
func TestUsageHoursMigrationSumsExistingReservations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	// 0024 on the schema it was written for: 0032, which keys the sums
	// by currency, is rolled back first (and 0034, whose day sums read
	// the currency).
	runFile(t, db, "0034_analytics_days.tx.down.sql")
	runFile(t, db, "0032_currencies.tx.down.sql")
	runFile(t, db, "0024_usage_hours.tx.down.sql")
	acct, w := uuid.New(), uuid.New()
	tx := func(amount int, status, at string) string {
		return `INSERT INTO transactions (id, account_id, wallet_id, network, signature, amount_micros, counterparty, status, signed_tx, last_valid_block_height, created_at, updated_at)
			VALUES ('` + uuid.NewString() + `', '` + acct.String() + `', '` + w.String() + `', 'devnet', '` + uuid.NewString() + `', ` +
			strconv.Itoa(amount) + `, 'cp', '` + status + `', '\x00', 1, '` + at + `', now())`
	}
	h := time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour) // an hour some transactions fall in
	at := func(d time.Duration) string { return h.Add(d).Format(time.RFC3339Nano) }
	other := h.Add(-5 * time.Hour)
	for _, q := range []string{
		`INSERT INTO accounts (id, network) VALUES ('` + acct.String() + `', 'devnet')`,
		`INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, secret_key_id, secret_sealed)
			VALUES ('` + w.String() + `', '` + acct.String() + `', 'w', 'pk', 1, 1, 1, 'k', '\x00')`,
		tx(1, "confirmed", at(0)),
		tx(2, "pending", at(time.Hour-time.Microsecond)),
		tx(4, "failed", at(30*time.Minute)),
		tx(8, "confirmed", other.In(time.FixedZone("", 5*3600+1800)).Format(time.RFC3339)), // +05:30: its UTC hour
		tx(32, "confirmed", at(-32*24*time.Hour)),                                          // older than any window: not summed
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	runFile(t, db, "0024_usage_hours.tx.up.sql")
	sums := func() map[string]int {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), micros FROM wallet_usage_hours WHERE wallet_id = ?`, w)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]int{}
		for rows.Next() {
			var h string
			var n int
			if err := rows.Scan(&h, &n); err != nil {
				t.Fatal(err)
			}
			m[h] = n
		}
		return m
	}
	hh, oh := h.Format("2006-01-02 15:04"), other.Format("2006-01-02 15:04")
	if got := sums(); len(got) != 2 || got[hh] != 3 || got[oh] != 8 {
		t.Fatalf("hourly totals after the migration %v, want %s → 3, %s → 8", got, hh, oh)
	}
	if _, err := db.ExecContext(ctx, tx(16, "pending", at(15*time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE transactions SET status = 'failed' WHERE amount_micros = 2"); err != nil {
		t.Fatal(err)
	}
	if got := sums(); got[hh] != 17 {
		t.Fatalf("%s after an insert and a failure: %d, want 17", hh, got[hh])
	}
	runFile(t, db, "0024_usage_hours.tx.down.sql")
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'wallet_usage_hours'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("wallet_usage_hours left (%d, %v)", n, err)
	}
}

// 0032 keys the sums by currency: existing ones are USD, a EUR
// transaction's amount goes to its own sum, and its down migration keeps
// the USD sums (and refuses while a payment in another asset exists).
func TestCurrenciesMigrationKeepsTheUSDSums(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0034_analytics_days.tx.down.sql")
	runFile(t, db, "0032_currencies.tx.down.sql")
	acct, w := uuid.New(), uuid.New()
	tx := func(amount int, currency string) string {
		cols, vals := "", ""
		if currency != "" {
			cols, vals = ", currency, asset", ", '"+currency+"', 'EURC'"
		}
		return `INSERT INTO transactions (id, account_id, wallet_id, network, signature, amount_micros, counterparty, status, signed_tx, last_valid_block_height, created_at, updated_at` + cols + `)
			VALUES ('` + uuid.NewString() + `', '` + acct.String() + `', '` + w.String() + `', 'devnet', '` + uuid.NewString() + `', ` +
			strconv.Itoa(amount) + `, 'cp', 'confirmed', '\x00', 1, now(), now()` + vals + `)`
	}
	sum := func(currency string) (n int) {
		t.Helper()
		q := `SELECT coalesce(sum(micros), 0) FROM wallet_usage_hours WHERE wallet_id = ?`
		args := []any{w}
		if currency != "" {
			q += ` AND currency = ?`
			args = append(args, currency)
		}
		if err := db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, q := range []string{
		`INSERT INTO accounts (id, network) VALUES ('` + acct.String() + `', 'devnet')`,
		`INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, secret_key_id, secret_sealed)
			VALUES ('` + w.String() + `', '` + acct.String() + `', 'w', 'pk', 1, 1, 1, 'k', '\x00')`,
		tx(5, ""),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	runFile(t, db, "0032_currencies.tx.up.sql")
	if _, err := db.ExecContext(ctx, tx(7, "EUR")); err != nil {
		t.Fatal(err)
	}
	if usd, eur := sum("USD"), sum("EUR"); usd != 5 || eur != 7 {
		t.Fatalf("sums: USD %d, EUR %d; want 5 and 7", usd, eur)
	}
	// Rolled back while a EURC payment exists, it refuses rather than
	// lose it; without one it keeps the USD sums.
	if err := runFileErr(db, "0032_currencies.tx.down.sql"); err == nil || !strings.Contains(err.Error(), "cannot hold them") {
		t.Fatalf("the down migration with a EURC payment: %v", err)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM transactions WHERE asset = 'EURC'`); err != nil {
		t.Fatal(err)
	}
	runFile(t, db, "0032_currencies.tx.down.sql")
	if got := sum(""); got != 5 {
		t.Fatalf("after the down migration the sums hold %d, want the USD 5", got)
	}
}
