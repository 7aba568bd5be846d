// Package postgres opens the service's database: bun over pgx's
// database/sql driver, and creates the database on first migration.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Open connects to url. The pool is bounded and every connection attempt
// times out, so an outage fails requests quickly instead of hanging them.
func Open(url string) (*bun.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > 5*time.Second {
		cfg.ConnectTimeout = 5 * time.Second
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	// No statement or lock wait runs unbounded; a URL may set its own.
	// No JIT and no parallel workers: the service's statements read a
	// page or a few thousand index rows, where compiling a plan or
	// starting workers costs more than it saves (a balance history's plan,
	// estimated costly, spent 18 of its 21 ms compiling; a page of x402
	// payments waited ~10 ms for two workers to start).
	for k, v := range map[string]string{"statement_timeout": "30s", "lock_timeout": "10s", "jit": "off", "max_parallel_workers_per_gather": "0"} {
		if _, set := cfg.RuntimeParams[k]; !set {
			cfg.RuntimeParams[k] = v
		}
	}
	sqldb := stdlib.OpenDB(*cfg)
	sqldb.SetMaxOpenConns(25)
	sqldb.SetMaxIdleConns(25)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	return bun.NewDB(sqldb, pgdialect.New()), nil
}

// EnsureDatabase creates the database named in url when it does not exist,
// connecting to the server's "postgres" database to do so. An existing
// database is found first, so a role without CREATEDB can still migrate.
func EnsureDatabase(ctx context.Context, url string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse database url: %w", err)
	}
	probe, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		return probe.Close(ctx)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name
		return fmt.Errorf("connect: %w", err)
	}
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to server: %w", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database
		return nil
	}
	return err
}

// IsUniqueViolation reports whether err is a unique-constraint violation.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// IsUnavailable reports whether err means the database could not be
// reached or the query was cut off, as opposed to a bad query: callers map
// it to 503.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, context.Canceled) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 53: insufficient resources;
		// 57P: operator intervention (shutdown).
		c := pgErr.Code
		return c[:2] == "08" || c[:2] == "53" || c[:3] == "57P"
	}
	// The server gone mid-statement (a crash, a restart, a cut network):
	// the connection ends without an answer.
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var connErr *pgconn.ConnectError
	return errors.As(err, &connErr) || pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}
