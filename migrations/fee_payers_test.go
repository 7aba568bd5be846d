package migrations_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// 0017: a fee payer cannot be enabled without its wallet, its key parts
// come together, its budget is above 0, and a transaction names what its
// fee payer pays exactly when it names a fee payer.
func TestFeePayersMigration_Constraints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	acct := uuid.NewString()
	if _, err := db.ExecContext(ctx, `INSERT INTO accounts (id, network) VALUES (?, 'devnet')`, acct); err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]string{
		"enabled without a wallet": `INSERT INTO fee_payers (account_id, enabled, daily_budget_lamports) VALUES (?, true, 1)`,
		"a zero budget":            `INSERT INTO fee_payers (account_id, daily_budget_lamports) VALUES (?, 0)`,
		"an address without a key": `INSERT INTO fee_payers (account_id, daily_budget_lamports, pubkey) VALUES (?, 1, 'pk')`,
	} {
		if _, err := db.ExecContext(ctx, q, acct); !checkViolation(err) {
			t.Errorf("%s: %v, want a check violation", name, err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO fee_payers (account_id, enabled, daily_budget_lamports, pubkey, secret_key_id, secret_sealed)
		VALUES (?, true, 1, 'pk', 'k', '\x00')`, acct); err != nil {
		t.Fatalf("a whole fee payer: %v", err)
	}
	wallet := uuid.NewString()
	if _, err := db.ExecContext(ctx, `INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, secret_key_id, secret_sealed)
		VALUES (?, ?, 'w', 'wpk', 1, 1, 1, 'k', '\x00')`, wallet, acct); err != nil {
		t.Fatal(err)
	}
	insert := func(feePayer, sponsored any) error {
		_, err := db.ExecContext(ctx, `INSERT INTO transactions (id, account_id, wallet_id, network, signature, kind, direction, amount_micros, counterparty, status, signed_tx, last_valid_block_height, fee_payer, sponsored_lamports, created_at, updated_at)
			VALUES (?, ?, ?, 'devnet', ?, 'usdc', 'send', 1, 'to', 'pending', '\x00', 1, ?, ?, now(), now())`, uuid.New(), acct, wallet, uuid.NewString(), feePayer, sponsored)
		return err
	}
	if err := insert("pk", nil); !checkViolation(err) {
		t.Errorf("a fee payer without what it pays: %v, want a check violation", err)
	}
	if err := insert(nil, 5); !checkViolation(err) {
		t.Errorf("sponsored lamports without a fee payer: %v, want a check violation", err)
	}
	if err := insert("pk", 10_000); err != nil {
		t.Errorf("a sponsored transaction: %v", err)
	}
	if err := insert(nil, nil); err != nil {
		t.Errorf("a wallet-paid transaction: %v", err)
	}
}

// checkViolation: err is Postgres refusing a CHECK constraint.
func checkViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "SQLSTATE 23514")
}
