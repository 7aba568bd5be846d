package migrations_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/uuid"
)

// 0024 sums an existing database's reservations into wallet_usage_hours
// (pending and confirmed transactions, by the UTC hour of created_at;
// failed ones not), keeps them summed from then on, and its down
// migration removes the table.
func TestUsageHoursMigrationSumsExistingReservations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0024_usage_hours.tx.down.sql")
	acct, w := uuid.New(), uuid.New()
	tx := func(amount int, status, at string) string {
		return `INSERT INTO transactions (id, account_id, wallet_id, network, signature, amount_micros, counterparty, status, signed_tx, last_valid_block_height, created_at, updated_at)
			VALUES ('` + uuid.NewString() + `', '` + acct.String() + `', '` + w.String() + `', 'devnet', '` + uuid.NewString() + `', ` +
			strconv.Itoa(amount) + `, 'cp', '` + status + `', '\x00', 1, '` + at + `', now())`
	}
	for _, q := range []string{
		`INSERT INTO accounts (id, network) VALUES ('` + acct.String() + `', 'devnet')`,
		`INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, secret_key_id, secret_sealed)
			VALUES ('` + w.String() + `', '` + acct.String() + `', 'w', 'pk', 1, 1, 1, 'k', '\x00')`,
		tx(1, "confirmed", "2026-11-24T10:00:00Z"),
		tx(2, "pending", "2026-11-24T10:59:59.999999Z"),
		tx(4, "failed", "2026-11-24T10:30:00Z"),
		tx(8, "confirmed", "2026-11-24T11:00:00+05:30"), // 05:30 UTC
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	runFile(t, db, "0024_usage_hours.tx.up.sql")
	sums := func() map[string]int {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT to_char(hour AT TIME ZONE 'UTC', 'HH24:MI'), micros FROM wallet_usage_hours WHERE wallet_id = ?`, w)
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
	if got := sums(); len(got) != 2 || got["10:00"] != 3 || got["05:00"] != 8 {
		t.Fatalf("hourly totals after the migration %v, want 10:00 → 3, 05:00 → 8", got)
	}
	if _, err := db.ExecContext(ctx, tx(16, "pending", "2026-11-24T10:15:00Z")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE transactions SET status = 'failed' WHERE amount_micros = 2"); err != nil {
		t.Fatal(err)
	}
	if got := sums(); got["10:00"] != 17 {
		t.Fatalf("10:00 after an insert and a failure: %d, want 17", got["10:00"])
	}
	runFile(t, db, "0024_usage_hours.tx.down.sql")
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'wallet_usage_hours'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("wallet_usage_hours left (%d, %v)", n, err)
	}
}
