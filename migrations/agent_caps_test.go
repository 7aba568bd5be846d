package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/audit"
)

// 0012 credits the wallets of an existing database to the key whose
// wallet.created audit entry made them, so agent keys' wallets made before
// it count against their cap; a person's wallet stays without a key.
func TestAgentCapsMigrationCreditsExistingWallets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0012_agent_caps.tx.down.sql")
	acct, byKey, byPerson, key := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO accounts (id, network) VALUES (?, 'devnet')`, acct); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, prefix, hash, role, lineage)
		VALUES (?, ?, 'svc_test_x', sha256(?::text::bytea), 'agent', ?)`, key, acct, key, key); err != nil {
		t.Fatal(err)
	}
	for w, actor := range map[uuid.UUID]string{byKey: "key_" + key.String(), byPerson: "user:9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"} {
		if _, err := db.ExecContext(ctx, `INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, secret_key_id, secret_sealed)
			VALUES (?, ?, 'w', ?, 1, 1, 1, 'k', '\x00')`, w, acct, w.String()); err != nil {
			t.Fatal(err)
		}
		if err := audit.Append(ctx, db, audit.Entry{
			AccountID: acct,
			At:        time.Now(),
			Actor:     audit.Actor(actor),
			Action:    audit.ActionWalletCreated,
			Target:    "wallet:" + w.String(),
			Details:   map[string]any{"wallet_id": w},
		}); err != nil {
			t.Fatal(err)
		}
	}
	runFile(t, db, "0012_agent_caps.tx.up.sql")
	got := map[uuid.UUID]uuid.NullUUID{}
	rows, err := db.QueryContext(ctx, "SELECT id, created_by FROM wallets WHERE account_id = ?", acct)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var by uuid.NullUUID
		if err := rows.Scan(&id, &by); err != nil {
			t.Fatal(err)
		}
		got[id] = by
	}
	if len(got) != 2 || got[byKey].UUID != key || got[byPerson].Valid {
		t.Fatalf("created_by after the migration: %v (key %s)", got, key)
	}
}
