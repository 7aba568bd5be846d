package migrations_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// 0020 adds the optional rules with none set: a wallet of an existing
// database keeps its policy and decides as before.
func TestRulesMigration_KeepsExistingPolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0020_wallet_rules.tx.down.sql")
	acct, id := uuid.New(), uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO accounts (id, network) VALUES (?, 'devnet')`, acct); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, allowlist, secret_key_id, secret_sealed)
		VALUES (?, ?, 'w', 'pk', 100000000, 25000000, 10000000, '{9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM}', 'k', '\x00')`, id, acct); err != nil {
		t.Fatal(err)
	}
	runFile(t, db, "0020_wallet_rules.tx.up.sql")
	w, err := wallet.Get(ctx, db, acct, id)
	if err != nil {
		t.Fatal(err)
	}
	want := policy.Default()
	want.Allowlist = []string{"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"}
	if p := w.Policy(); !p.Same(want) || p.WeeklyLimit != nil || p.MonthlyLimit != nil || p.MaxTxPerHour != nil || p.MaxTxPerDay != nil ||
		p.ActiveHours != nil || p.OutsideActiveHours != policy.OutsideBlock {
		t.Fatalf("policy after 0020: %+v", p)
	}
	// The checks hold what the policy package validates.
	for _, bad := range []string{
		"weekly_limit_micros = -1", "max_tx_per_hour = -1", "outside_active_hours = 'ask'", `active_hours = '"09:00"'`,
	} {
		if _, err := db.ExecContext(ctx, "UPDATE wallets SET "+bad+" WHERE id = ?", id); err == nil {
			t.Errorf("%s was stored", bad)
		}
	}
}
