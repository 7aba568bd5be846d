package migrations_test

import (
	"context"
	"testing"

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
