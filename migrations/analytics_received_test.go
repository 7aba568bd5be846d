package migrations_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
)

// 0039 sums the confirmed deposits already recorded into
// analytics_received_days per day, wallet and asset (every asset, not
// only USDC and SOL), its trigger follows each later insert, status change
// and removal, and the down migration removes table and trigger.
func TestAnalyticsReceivedSumTheHistoryAndFollowEveryChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0039_analytics_received.tx.down.sql")
	acct, w := uuid.New(), uuid.New()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	exec(`INSERT INTO accounts (id, network) VALUES (?, 'devnet')`, acct)
	exec(`INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, secret_key_id, secret_sealed)
		VALUES (?, ?, 'w', 'pk', 1, 1, 1, 'k', '\x00')`, w, acct)
	n := 0
	deposit := func(amount int, status, asset, at string) {
		n++
		exec(`INSERT INTO deposits (id, account_id, wallet_id, network, signature, asset, amount, counterparty, slot, status, created_at)
			VALUES (?, ?, ?, 'devnet', ?, ?, ?, 'cp', 1, ?, ?)`, uuid.New(), acct, w, fmt.Sprint("dep", n), asset, amount, status, at)
	}
	const old, day = "2024-02-10T23:30:00Z", "2026-03-01T10:00:00Z"
	deposit(1, "confirmed", "usdc", old)
	deposit(2, "confirmed", "eurc", day)
	deposit(4, "confirmed", "eurc", day)
	deposit(8, "failed", "eurc", day)
	deposit(16, "confirmed", "sol", day)
	runFile(t, db, "0039_analytics_received.tx.up.sql")

	sums := func() string {
		t.Helper()
		var got []string
		if err := db.NewRaw(`SELECT concat_ws(' ', day, asset, n, amount) FROM analytics_received_days
			WHERE account_id = ? AND n <> 0 ORDER BY day, asset`, acct).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
	if got, want := sums(), "[2024-02-10 usdc 1 1 2026-03-01 eurc 2 6 2026-03-01 sol 1 16]"; got != want {
		t.Fatalf("after the migration: %s, want %s", got, want)
	}
	deposit(32, "confirmed", "pyusd", day)
	exec(`UPDATE deposits SET status = 'confirmed' WHERE amount = 8`)
	exec(`UPDATE deposits SET status = 'failed' WHERE amount = 16`)
	exec(`DELETE FROM deposits WHERE amount = 1`)
	if got, want := sums(), "[2026-03-01 eurc 3 14 2026-03-01 pyusd 1 32]"; got != want {
		t.Fatalf("after the changes: %s, want %s", got, want)
	}

	runFile(t, db, "0039_analytics_received.tx.down.sql")
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('analytics_received_days') IS NOT NULL
		OR EXISTS (SELECT FROM pg_trigger WHERE tgname = 'analytics_received')`).Scan(&exists); err != nil || exists {
		t.Fatalf("after the down migration: %v %v", exists, err)
	}
	deposit(64, "confirmed", "eurc", day) // no trigger left to fail
}
