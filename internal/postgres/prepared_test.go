package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/postgres"
)

type thing struct {
	bun.BaseModel `bun:"table:things"`

	ID    int64  `bun:"id,pk"`
	Name  string `bun:"name"`
	Extra string `bun:"extra,scanonly"`
}

// Exec and QueryRow run prepared statements on the pool, in a transaction
// and on a connection, and scan like bun: a model by column names, or one
// value per column; no row is sql.ErrNoRows. Columns names a model's
// columns (scan-only ones aside), so a column added later is not read.
func TestPrepared(t *testing.T) {
	ctx := context.Background()
	db := pgtest.New(t)
	if _, err := db.ExecContext(ctx, `CREATE TABLE things (id bigint PRIMARY KEY, name text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if got, want := postgres.Columns(db, &thing{}), `"id", "name"`; got != want {
		t.Fatalf("Columns = %s, want %s", got, want)
	}
	if _, err := postgres.Exec(ctx, db, `INSERT INTO things (id, name) VALUES ($1, $2), ($3, $4)`, 1, "one", 2, "two"); err != nil {
		t.Fatal(err)
	}
	// A column the model does not know, as a migration ahead of the binary.
	if _, err := db.ExecContext(ctx, `ALTER TABLE things ADD COLUMN later text`); err != nil {
		t.Fatal(err)
	}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var th thing
		q := `SELECT ` + postgres.Columns(tx, &th) + `, upper(name) AS extra FROM things WHERE id = $1 FOR UPDATE`
		if err := postgres.QueryRow(ctx, tx, []any{&th}, q, 2); err != nil {
			return err
		}
		if th.ID != 2 || th.Name != "two" || th.Extra != "TWO" {
			t.Errorf("model scan = %+v", th)
		}
		_, err := postgres.Exec(ctx, tx, `UPDATE things SET name = $1 WHERE id = $2`, "deux", 2)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var name string
	var n int64
	if err := postgres.QueryRow(ctx, conn, []any{&name, &n}, `SELECT name, count(*) OVER () FROM things WHERE id = $1`, 2); err != nil {
		t.Fatal(err)
	}
	if name != "deux" || n != 1 {
		t.Errorf("values scan = %q %d", name, n)
	}
	if err := postgres.QueryRow(ctx, db, []any{&name}, `SELECT name FROM things WHERE id = $1`, 3); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no row: %v, want sql.ErrNoRows", err)
	}
	if _, err := postgres.Exec(ctx, db, `INSERT INTO things (id, name) VALUES ($1, $2)`, 1, "again"); !postgres.IsUniqueViolation(err) {
		t.Errorf("duplicate: %v, want a unique violation", err)
	}
}
