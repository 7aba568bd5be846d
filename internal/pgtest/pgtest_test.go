package pgtest_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/pgtest"
)

// What one TestTx writes is gone once its test ends, and every TestTx of
// the binary is on the same migrated database.
func TestTestTx_RollsBackAtCleanupOnOneSharedDatabase(t *testing.T) {
	id := uuid.New()
	var first string
	t.Run("writes", func(t *testing.T) {
		tx := pgtest.TestTx(t)
		if err := tx.QueryRowContext(t.Context(), "SELECT current_database()").Scan(&first); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(t.Context(), "INSERT INTO accounts (id, network) VALUES (?, 'devnet')", id); err != nil {
			t.Fatal(err)
		}
	})
	tx := pgtest.TestTx(t)
	var db string
	var n int
	if err := tx.QueryRowContext(t.Context(), "SELECT current_database(), (SELECT count(*) FROM accounts WHERE id = ?)", id).Scan(&db, &n); err != nil {
		t.Fatal(err)
	}
	if db != first {
		t.Errorf("TestTx on %s, then on %s: want one database", first, db)
	}
	if n != 0 {
		t.Errorf("the account written in an ended test is still there")
	}
}

// recorder is a testing.TB that keeps its cleanups and errors.
type recorder struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, args ...any) { r.errors = append(r.errors, format) }

// A test that commits the shared transaction (nothing it wrote may stay)
// fails at cleanup.
func TestTestTx_ACommitByTheTestFails(t *testing.T) {
	r := &recorder{TB: t}
	tx := pgtest.TestTx(r)
	if err := tx.Commit(); err != nil { // an empty transaction: nothing kept
		t.Fatal(err)
	}
	for _, f := range r.cleanups {
		f()
	}
	if len(r.errors) != 1 {
		t.Fatalf("errors at cleanup %q, want one", r.errors)
	}
}
