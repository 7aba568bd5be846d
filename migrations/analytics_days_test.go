package migrations_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
)

// 0034 sums an existing database's history into analytics_days (every
// day, not only recent ones), and its triggers keep the sums as rows are
// added, change status, and are removed: each sum equals what the rows
// themselves add up to, and the down migration removes the table.
func TestAnalyticsDaysSumTheHistoryAndFollowEveryChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0034_analytics_days.tx.down.sql")
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
	tx := func(amount int, status, kind, currency, at string, fee any) uuid.UUID {
		n++
		id := uuid.New()
		exec(`INSERT INTO transactions (id, account_id, wallet_id, network, signature, kind, amount_micros, counterparty, status, signed_tx,
			last_valid_block_height, created_at, updated_at, currency, asset, fee_lamports)
			VALUES (?, ?, ?, 'devnet', ?, ?, ?, 'cp', ?, '\x00', 1, ?, now(), ?, ?, ?)`,
			id, acct, w, fmt.Sprint("sig", n), kind, amount, status, at, currency, map[string]string{"USD": "USDC", "EUR": "EURC"}[currency], fee)
		return id
	}
	deposit := func(amount int, status, asset, at string) {
		n++
		exec(`INSERT INTO deposits (id, account_id, wallet_id, network, signature, asset, amount, counterparty, slot, status, created_at)
			VALUES (?, ?, ?, 'devnet', ?, ?, ?, 'cp', 1, ?, ?)`, uuid.New(), acct, w, fmt.Sprint("dep", n), asset, amount, status, at)
	}
	blocked := func(reason, at string) {
		exec(`INSERT INTO send_requests (id, account_id, wallet_id, network, to_address, amount_micros, state, outcome, created_at, deadline, decided_at)
			VALUES (?, ?, ?, 'devnet', 'to', 1, 'decided', jsonb_build_object('status', 'blocked', 'reason', ?::text), ?, ?, ?)`,
			uuid.New(), acct, w, reason, at, at, at)
	}
	const old, day = "2024-02-10T23:30:00Z", "2026-03-01T10:00:00Z"
	tx(1, "confirmed", "usdc", "USD", old, 5000) // two years back: summed too
	tx(2, "confirmed", "x402", "USD", day, 7000)
	tx(4, "failed", "usdc", "USD", day, nil)
	tx(8, "pending", "usdc", "EUR", day, nil)
	deposit(16, "confirmed", "usdc", day)
	deposit(32, "failed", "usdc", day)
	blocked("exceeds_max_tx", day)
	runFile(t, db, "0034_analytics_days.tx.up.sql")

	// Each day's sums, as "n usd eur fee x402_n x402 mpp_n mpp usdc_in_n
	// usdc_in sol_in_n sol_in", and the blocked sends by day and reason.
	sums := func() map[string]string {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT day::text, concat_ws(' ', n, usd_micros, eur_micros, fee_lamports, x402_n, x402_micros,
				mpp_n, mpp_micros, usdc_in_n, usdc_in, sol_in_n, sol_in) FROM analytics_days WHERE account_id = ?
			UNION ALL SELECT day::text || ' ' || reason, n::text FROM analytics_blocked_days WHERE account_id = ? AND n <> 0`, acct, acct)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]string{}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			if v != "0 0 0 0 0 0 0 0 0 0 0 0" {
				m[k] = v
			}
		}
		return m
	}
	want := map[string]string{
		"2024-02-10":                "1 1 0 5000 0 0 0 0 0 0 0 0",
		"2026-03-01":                "2 2 8 7000 1 2 0 0 1 16 0 0",
		"2026-03-01 exceeds_max_tx": "1",
	}
	check := func(when string) {
		t.Helper()
		got := sums()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: sums\n%v\nwant\n%v", when, got, want)
		}
	}
	check("after the migration")

	// The pending EUR payment confirms with its fee, a confirmed x402
	// payment fails, a deposit fails, another send is blocked, an MPP
	// payment is signed: the sums follow.
	exec(`UPDATE transactions SET status = 'confirmed', fee_lamports = 9000 WHERE amount_micros = 8`)
	exec(`UPDATE transactions SET status = 'failed' WHERE amount_micros = 2`)
	exec(`UPDATE deposits SET status = 'failed' WHERE amount = 16`)
	blocked("exceeds_daily_limit", day)
	mpp := tx(64, "pending", "mpp", "USD", day, nil)
	// A broadcast counted again changes nothing counted.
	exec(`UPDATE transactions SET broadcasts = broadcasts + 1, status = status WHERE id = ?`, mpp)
	want["2026-03-01"] = "2 64 8 9000 0 0 1 64 0 0 0 0"
	want["2026-03-01 exceeds_daily_limit"] = "1"
	check("after the changes")
	exec(`DELETE FROM transactions WHERE id = ?`, mpp)
	want["2026-03-01"] = "1 0 8 9000 0 0 0 0 0 0 0 0"
	check("after a removal")

	runFile(t, db, "0034_analytics_days.tx.down.sql")
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('analytics_days') IS NOT NULL OR to_regclass('analytics_blocked_days') IS NOT NULL`).Scan(&exists); err != nil || exists {
		t.Fatalf("analytics_days after the down migration: %v %v", exists, err)
	}
}
