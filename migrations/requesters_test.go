package migrations_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// 0011 gives existing keys their ancestors: the lineages of the keys that
// made them, transitively (a key made by a rotated key's successor
// descends from the whole rotation lineage); keys no key made have none.
func TestRequestersMigrationGivesKeysTheirAncestors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0011_requesters.tx.down.sql")
	acct := uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO accounts (id, network) VALUES (?, 'devnet')`, acct); err != nil {
		t.Fatal(err)
	}
	// root was rotated into root2; child was made by root, grandchild by
	// child, late by root2.
	root, root2, child, grandchild, late := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	for _, k := range []struct {
		id, lineage, createdBy any
		role                   string
	}{{root2, root, nil, "admin"}, {root, root, nil, "admin"}, {child, child, root, "admin"}, {grandchild, grandchild, child, "agent"}, {late, late, root2, "agent"}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, prefix, hash, created_by, role, lineage)
			VALUES (?, ?, 'svc_test_x', sha256(?::text::bytea), ?, ?, ?)`, k.id, acct, k.id, k.createdBy, k.role, k.lineage); err != nil {
			t.Fatal(err)
		}
	}
	runFile(t, db, "0011_requesters.tx.up.sql")
	want := map[uuid.UUID][]string{
		root: {}, root2: {}, child: {"key_" + root.String()},
		grandchild: {"key_" + child.String(), "key_" + root.String()}, late: {"key_" + root.String()},
	}
	for id, w := range want {
		var got []string
		if err := db.NewRaw("SELECT ancestors FROM api_keys WHERE id = ?", id).Scan(ctx, pgdialect.Array(&got)); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("key %s: ancestors %v, want %v", id, got, w)
		}
	}
}

// 0011 on keys a person made in the dashboard before it: their key.created
// entry names the person, so the key (and a key it minted) descends from
// them, and removing the person revokes them.
func TestRequestersMigrationRemembersDashboardKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0011_requesters.tx.down.sql")
	acct, key, child := uuid.New(), uuid.New(), uuid.New()
	person := "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO accounts (id, network) VALUES (?, 'devnet')`, []any{acct}},
		{`INSERT INTO api_keys (id, account_id, prefix, hash, role, lineage) VALUES (?, ?, 'svc_test_x', sha256(?::text::bytea), 'admin', ?)`, []any{key, acct, key, key}},
		{`INSERT INTO api_keys (id, account_id, prefix, hash, role, lineage, created_by) VALUES (?, ?, 'svc_test_y', sha256(?::text::bytea), 'agent', ?, ?)`, []any{child, acct, child, child, key}},
		{`SELECT audit_append(gen_random_uuid(), ?, now(), ?, 'key.created', ?, '{}'::json)`, []any{acct, "user:" + person, "key:key_" + key.String()}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	runFile(t, db, "0011_requesters.tx.up.sql")
	for id, want := range map[uuid.UUID][]string{key: {"user:" + person}, child: {"key_" + key.String(), "user:" + person}} {
		var by *string
		var ancestors []string
		err := db.NewRaw("SELECT created_by_user, ancestors FROM api_keys WHERE id = ?", id).Scan(ctx, &by, pgdialect.Array(&ancestors))
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ancestors)
		if !slices.Equal(ancestors, want) || (id == key) != (by != nil && *by == person) {
			t.Errorf("key %s after 0011: created_by_user %v, ancestors %v, want %v", id, by, ancestors, want)
		}
	}
}

// 0014 on a database that holds sends made with an Idempotency-Key: the
// backfill gives them their key's scope before the check that needs one.
func TestIdempotencyScopeMigrationKeepsExistingKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0014_idempotency_scope.tx.down.sql")
	acct, w, key, req := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO accounts (id, network) VALUES (?, 'devnet')`, []any{acct}},
		{`INSERT INTO api_keys (id, account_id, prefix, hash, role, lineage) VALUES (?, ?, 'svc_test_x', sha256(?::text::bytea), 'agent', ?)`, []any{key, acct, key, key}},
		{`INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, secret_key_id, secret_sealed)
			VALUES (?, ?, 'w', ?, 1, 1, 1, 'k', '\x00')`, []any{w, acct, w.String()}},
		{`INSERT INTO send_requests (id, account_id, wallet_id, key_id, key_lineage, network, to_address, amount_micros, idempotency_key, deadline)
			VALUES (?, ?, ?, ?, ?, 'devnet', 'x', 1, 'idem-1', now())`, []any{req, acct, w, key, key}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	runFile(t, db, "0014_idempotency_scope.tx.up.sql")
	var scope string
	if err := db.NewRaw("SELECT idempotency_scope FROM send_requests WHERE id = ?", req).Scan(ctx, &scope); err != nil {
		t.Fatal(err)
	}
	if scope != "key_"+key.String() {
		t.Fatalf("scope %q, want the key's lineage", scope)
	}
}
