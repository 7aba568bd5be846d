package migrations_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
)

// 0016 gives the transactions of an existing database one attempt each,
// keeps earlier attempts with unique signatures, and its down migration
// removes them.
func TestAttemptsMigration_GivesExistingTransactionsOneAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0016_transaction_attempts.tx.down.sql")
	acct, w, txn := uuid.New(), uuid.New(), uuid.New()
	for _, q := range []string{
		`INSERT INTO accounts (id, network) VALUES ('` + acct.String() + `', 'devnet')`,
		`INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, secret_key_id, secret_sealed)
			VALUES ('` + w.String() + `', '` + acct.String() + `', 'w', 'pk', 1, 1, 1, 'k', '\x00')`,
		`INSERT INTO transactions (id, account_id, wallet_id, network, signature, amount_micros, counterparty, status, signed_tx, last_valid_block_height, created_at, updated_at)
			VALUES ('` + txn.String() + `', '` + acct.String() + `', '` + w.String() + `', 'devnet', 'sig-2', 1, 'cp', 'pending', '\x00', 1, now(), now())`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	runFile(t, db, "0016_transaction_attempts.tx.up.sql")
	var attempts int
	if err := db.QueryRowContext(ctx, "SELECT attempts FROM transactions WHERE id = ?", txn).Scan(&attempts); err != nil || attempts != 1 {
		t.Fatalf("attempts %d (%v), want 1", attempts, err)
	}
	insert := `INSERT INTO transaction_attempts (transaction_id, attempt, signature, last_valid_block_height, outcome, signed_at, ended_at)
		VALUES (?, ?, ?, 1, 'expired', now(), now())`
	if _, err := db.ExecContext(ctx, insert, txn, 1, "sig-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, insert, txn, 2, "sig-1"); err == nil {
		t.Fatal("a signature recorded twice")
	}
	if _, err := db.ExecContext(ctx, "UPDATE transactions SET attempts = 0 WHERE id = ?", txn); err == nil {
		t.Fatal("attempts 0 accepted")
	}
	runFile(t, db, "0016_transaction_attempts.tx.down.sql")
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'transactions' AND column_name = 'attempts'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("attempts column left (%d, %v)", n, err)
	}
}
