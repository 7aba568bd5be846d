package migrations_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/postgres"
)

// 0011 gives existing keys their ancestors: the lineages of the keys that
// made them, transitively (a key made by a rotated key's successor
// descends from the whole rotation lineage); keys no key made have none.
func TestRequestersMigrationGivesKeysTheirAncestors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := postgres.Open(pgtest.NewURL(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
