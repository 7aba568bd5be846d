package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// `api keys create` makes an operator key (one that may approve) of an
// existing account, with an audit entry; an unknown account is an error.
func TestKeysCreate(t *testing.T) {
	t.Parallel()
	db, getenv := migrated(t)
	ctx := context.Background()
	acct, _ := auth.CreateAccount(ctx, db, solana.Devnet)

	var out bytes.Buffer
	if err := run(ctx, []string{"keys", "create", "--account", acct.ID.String(), "--quiet"}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	p, err := auth.Authenticate(ctx, db, strings.TrimSpace(out.String()))
	if err != nil || p.AccountID != acct.ID || !p.CanApprove() || p.Role != auth.RoleAdmin {
		t.Fatalf("principal %+v %v", p, err)
	}
	var actions []string
	if err := db.NewSelect().Table("audit_log").Column("action").Where("account_id = ?", acct.ID).Scan(ctx, &actions); err != nil || len(actions) != 1 || actions[0] != "key.created" {
		t.Fatalf("audit %v %v", actions, err)
	}
	for _, args := range [][]string{
		{"keys"}, {"keys", "create"}, {"keys", "create", "--account", "nope"}, {"keys", "create", "--account", uuid.NewString()},
	} {
		if err := run(ctx, args, getenv, &out); err == nil {
			t.Fatalf("%v accepted", args)
		}
	}
}

// `api users add` makes an address a user of an account (how its first
// owner comes to be); `api users remove` never removes the last owner.
func TestUsersCommand(t *testing.T) {
	t.Parallel()
	db, getenv := migrated(t)
	ctx := context.Background()
	acct, _ := auth.CreateAccount(ctx, db, solana.Devnet)
	const addr = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
	var out bytes.Buffer
	if err := run(ctx, []string{"users", "add", "--account", acct.ID.String(), "--address", addr, "--role", "owner"}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	ms, err := auth.Memberships(ctx, db, addr)
	if err != nil || len(ms) != 1 || ms[0].Role != auth.RoleOwner || ms[0].AccountID != acct.ID {
		t.Fatalf("memberships %v %v", ms, err)
	}
	if err := run(ctx, []string{"users", "remove", "--account", acct.ID.String(), "--address", addr}, getenv, &out); err == nil || !strings.Contains(err.Error(), "last owner") {
		t.Fatalf("removing the last owner: %v", err)
	}
	for _, args := range [][]string{
		{"users"}, {"users", "add", "--account", acct.ID.String(), "--address", "nope", "--role", "owner"},
		{"users", "add", "--account", acct.ID.String(), "--address", addr, "--role", "king"},
		{"users", "add", "--account", uuid.NewString(), "--address", addr, "--role", "viewer"},
	} {
		if err := run(ctx, args, getenv, &out); err == nil {
			t.Fatalf("%v accepted", args)
		}
	}
}

// `api mcp` needs the key its tools act with.
func TestMCPCommandNeedsAKey(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"mcp"}, func(string) string { return "" }, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "AGENTWALLET_API_KEY") {
		t.Fatalf("err %v", err)
	}
}

// migrated is a migrated database of this test's own and the environment
// that points the command at it.
func migrated(t *testing.T) (*bun.DB, func(string) string) {
	t.Helper()
	db, url := pgtest.NewWithURL(t)
	return db, func(k string) string { return map[string]string{"DATABASE_URL": url, "LOG_LEVEL": "error"}[k] }
}
