package migrations_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/migrations"
)

func TestUpDownUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := postgres.Open(pgtest.NewURL(t, false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := migrations.NewMigrator(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Init(ctx); err != nil {
		t.Fatal(err)
	}
	tables := func() int {
		var n int
		if err := db.NewRaw(`SELECT count(*) FROM information_schema.tables
			WHERE table_schema = 'public' AND table_name NOT LIKE 'bun_%'`).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for round := 0; round < 2; round++ {
		if _, err := m.Migrate(ctx); err != nil {
			t.Fatalf("up: %v", err)
		}
		if n := tables(); n == 0 {
			t.Fatal("up created no tables")
		}
		if missing, err := m.MissingMigrations(ctx); err != nil || len(missing) != 0 {
			t.Fatalf("after up: missing %v, err %v", missing, err)
		}
		for {
			g, err := m.Rollback(ctx)
			if err != nil {
				t.Fatalf("down: %v", err)
			}
			if g.IsZero() {
				break
			}
		}
		if n := tables(); n != 0 {
			t.Fatalf("down left %d tables", n)
		}
	}
}

// 0006 turns the keys of an existing database into roles and lineages:
// keys no key created (the operator keys) become admin keys, the others
// agent keys; a rotation chain shares its first key's lineage, and sends
// and approvals record their key's.
func TestRolesMigrationKeepsExistingKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0006_roles.tx.down.sql")
	acct, wallet, op, op2, op3, agent := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	for _, q := range []string{
		`INSERT INTO accounts (id, network) VALUES ('` + acct.String() + `', 'devnet')`,
		`INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, secret_key_id, secret_sealed)
			VALUES ('` + wallet.String() + `', '` + acct.String() + `', 'w', 'pk', 1, 1, 1, 'k', '\x00')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// op was rotated into op2, op2 into op3; agent was made by op.
	for _, k := range []struct {
		id, createdBy, replacedBy any
	}{{op3, nil, nil}, {op2, nil, op3}, {op, nil, op2}, {agent, op, nil}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, prefix, hash, created_by, replaced_by)
			VALUES (?, ?, 'svc_test_x', sha256(?::text::bytea), ?, ?)`, k.id, acct, k.id, k.createdBy, k.replacedBy); err != nil {
			t.Fatal(err)
		}
	}
	req := uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO send_requests (id, account_id, wallet_id, key_id, network, to_address, amount_micros, state, deadline)
		VALUES (?, ?, ?, ?, 'devnet', 'to', 1, 'decided', now())`, req, acct, wallet, op2); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO approvals (id, account_id, wallet_id, request_id, requested_by, amount_micros, to_address, status, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, 1, 'to', 'pending', now(), now() + interval '1 day')`, uuid.New(), acct, wallet, req, op2); err != nil {
		t.Fatal(err)
	}
	runFile(t, db, "0006_roles.tx.up.sql")

	got := map[uuid.UUID]string{}
	rows, err := db.QueryContext(ctx, "SELECT id, role || ' ' || lineage::text FROM api_keys")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		got[id] = v
	}
	want := map[uuid.UUID]string{op: "admin " + op.String(), op2: "admin " + op.String(), op3: "admin " + op.String(), agent: "agent " + agent.String()}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("keys after the migration:\n got %v\nwant %v", got, want)
	}
	var reqLineage, apLineage uuid.UUID
	if err := db.QueryRowContext(ctx, "SELECT r.key_lineage, a.requested_lineage FROM send_requests AS r JOIN approvals AS a ON a.request_id = r.id").
		Scan(&reqLineage, &apLineage); err != nil || reqLineage != op || apLineage != op {
		t.Fatalf("recorded lineages %s %s (%v), want %s", reqLineage, apLineage, err, op)
	}
}

// runFile executes a migration file's statements on db, as the migrator
// would, without recording it.
func runFile(t *testing.T, db *bun.DB, name string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(string(b), "--bun:split") {
		if _, err := db.ExecContext(context.Background(), stmt); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// runFileErr runs a migration file in one transaction, as the migrator
// does, and answers its error.
func runFileErr(db *bun.DB, name string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, stmt := range strings.Split(string(b), "--bun:split") {
		if _, err := tx.ExecContext(context.Background(), stmt); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// migrated is a migrated database of this test's own.
func migrated(t *testing.T) *bun.DB {
	t.Helper()
	return pgtest.New(t)
}
