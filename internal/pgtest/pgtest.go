// Package pgtest gives each test a migrated PostgreSQL database of its own,
// cloned from a template built once per schema version, and drops it when
// the test ends; or, with TestTx, a transaction on a database shared by the
// test binary, rolled back when the test ends. TEST_DATABASE_URL points at
// the server (any database on it); the default is the local server's
// "postgres" database.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/migrations"
)

// DefaultURL is used when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func serverURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// New returns a migrated database for this test only.
func New(t testing.TB) *bun.DB {
	t.Helper()
	db, _ := NewWithURL(t)
	return db
}

// NewWithURL is New, and the database's URL, for what the test connects
// on its own (a child process, a listener, the code under test).
func NewWithURL(t testing.TB) (*bun.DB, string) {
	t.Helper()
	url := NewURL(t, true)
	db, err := postgres.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, url
}

// NewURL creates a database for this test only and returns its URL;
// migrated says whether it starts with the schema applied or empty.
func NewURL(t testing.TB, migrated bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, serverURL())
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v (is PostgreSQL running?)", serverURL(), err)
	}
	defer admin.Close(ctx)

	name := "test_" + randomHex(8)
	stmt := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if migrated {
		tmpl, err := ensureTemplate(ctx, admin)
		if err != nil {
			t.Fatalf("pgtest: template: %v", err)
		}
		stmt += " TEMPLATE " + pgx.Identifier{tmpl}.Sanitize()
	}
	if _, err := admin.Exec(ctx, stmt); err != nil {
		t.Fatalf("pgtest: %s: %v", stmt, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, serverURL())
		if err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
		}
	})
	return withDatabase(serverURL(), name)
}

// ensureTemplate builds the migrated template for the current schema once,
// under an advisory lock so parallel test binaries agree.
func ensureTemplate(ctx context.Context, admin *pgx.Conn) (string, error) {
	fp, err := migrations.Fingerprint()
	if err != nil {
		return "", err
	}
	name := "agentwallet_tmpl_" + fp
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(727274)"); err != nil {
		return "", err
	}
	defer admin.Exec(context.Background(), "SELECT pg_advisory_unlock(727274)")

	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	build := name + "_build"
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{build}.Sanitize()+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{build}.Sanitize()); err != nil {
		return "", err
	}
	db, err := postgres.Open(withDatabase(serverURL(), build))
	if err != nil {
		return "", err
	}
	m, err := migrations.NewMigrator(db)
	if err == nil {
		err = m.Init(ctx)
	}
	if err == nil {
		_, err = m.Migrate(ctx)
	}
	db.Close()
	if err != nil {
		return "", fmt.Errorf("migrate: %w", err)
	}
	_, err = admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{build}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize())
	return name, err
}

func withDatabase(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// BehindTriggers runs stmt with the tables' triggers off for its
// transaction (session_replication_role = replica), as only the database's
// owner could: how a test tampers with the append-only audit log.
func BehindTriggers(t testing.TB, db *bun.DB, stmt string, args ...any) {
	t.Helper()
	err := db.RunInTx(t.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, stmt, args...)
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// TestTx begins a transaction on a migrated database and rolls it back
// when the test ends, for tests of rules that read and write rows but need
// nothing kept. The database is shared by every TestTx of the test binary
// (made once, from the template: nothing commits there); a test that
// commits or rolls back the transaction itself fails. Queries on the
// transaction run at READ COMMITTED, as the service's do.
func TestTx(t testing.TB) bun.Tx {
	t.Helper()
	txDB.once.Do(openTxDB)
	if txDB.err != nil {
		t.Fatalf("pgtest: TestTx: %v", txDB.err)
	}
	// Not t.Context(): it ends before the cleanup, and database/sql would
	// roll the transaction back on its own, hiding a commit by the test.
	tx, err := txDB.db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatalf("pgtest: TestTx: begin: %v", err)
	}
	t.Cleanup(func() {
		if err := tx.Rollback(); errors.Is(err, sql.ErrTxDone) {
			t.Errorf("pgtest: TestTx: the test ended its transaction itself (a commit is kept in the shared database)")
		} else if err != nil {
			t.Errorf("pgtest: TestTx: rollback: %v", err)
		}
	})
	return tx
}

// txLockClass is the first key of the advisory lock that a test binary
// holds on its TestTx database while it runs (the second is the number in
// the database's name).
const txLockClass = 727275

// txPrefix names the TestTx databases.
const txPrefix = "test_tx_"

var txDB struct {
	once sync.Once
	db   *bun.DB
	err  error
	// owner holds the advisory lock on the database for the binary's life;
	// its session ends with the process, which frees the lock.
	owner *pgx.Conn
}

// openTxDB makes this binary's TestTx database, first dropping those of
// binaries that have exited: a database whose lock nobody holds.
func openTxDB() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	owner, err := pgx.Connect(ctx, serverURL())
	if err != nil {
		txDB.err = fmt.Errorf("connect to %s: %w (is PostgreSQL running?)", serverURL(), err)
		return
	}
	var n int32
	for {
		var b [4]byte
		rand.Read(b[:])
		n = int32(binary.BigEndian.Uint32(b[:]) >> 1)
		var got bool
		if err := owner.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", txLockClass, n).Scan(&got); err != nil {
			txDB.err = err
			return
		}
		if got {
			break
		}
	}
	if err := dropExitedTxDBs(ctx, owner); err != nil {
		txDB.err = fmt.Errorf("drop the databases of exited binaries: %w", err)
		return
	}
	tmpl, err := ensureTemplate(ctx, owner)
	if err != nil {
		txDB.err = fmt.Errorf("template: %w", err)
		return
	}
	name := txPrefix + strconv.Itoa(int(n))
	stmt := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{tmpl}.Sanitize()
	if _, err := owner.Exec(ctx, stmt); err != nil {
		txDB.err = fmt.Errorf("%s: %w", stmt, err)
		return
	}
	txDB.db, txDB.err = postgres.Open(withDatabase(serverURL(), name))
	txDB.owner = owner
}

// dropExitedTxDBs drops the TestTx databases whose binary's lock is free.
func dropExitedTxDBs(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE starts_with(datname, $1)", txPrefix)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range names {
		n, err := strconv.ParseInt(strings.TrimPrefix(name, txPrefix), 10, 32)
		if err != nil {
			continue
		}
		var free bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", txLockClass, int32(n)).Scan(&free); err != nil {
			return err
		}
		if !free {
			continue
		}
		_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		if _, uerr := conn.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", txLockClass, int32(n)); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
