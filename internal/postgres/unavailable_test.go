package postgres_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentwallet/agentwallet/internal/postgres"
)

// What means the database is out of reach (a 503 to the caller) and what
// is a fault of the statement (a 500).
func TestIsUnavailable(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("claim send request: %w", err) }
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"no rows", sql.ErrNoRows, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax", &pgconn.PgError{Code: "42601"}, false},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"crash of another server process", &pgconn.PgError{Code: "57P02"}, true},
		{"starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"deadline", context.DeadlineExceeded, true},
		{"conn done", sql.ErrConnDone, true},
		{"bad conn", driver.ErrBadConn, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"EOF", io.EOF, true},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"broken pipe", syscall.EPIPE, true},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"other", errors.New("boom"), false},
	} {
		if got := postgres.IsUnavailable(wrap(c.err)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
