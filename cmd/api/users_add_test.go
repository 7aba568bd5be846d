package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// `api users add` announces the user it adds like the API does: one
// user.added event (address, role, added_by system, via) beside its
// user.added audit entry; an add that fails announces nothing.
func TestUsersAdd_AnnouncesTheUser(t *testing.T) {
	t.Parallel()
	db, getenv := migrated(t)
	ctx := context.Background()
	acct, _ := auth.CreateAccount(ctx, db, solana.Devnet)
	const address = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
	add := []string{"users", "add", "--account", acct.ID.String(), "--address", address, "--role", "owner"}
	var out bytes.Buffer
	if err := run(ctx, add, getenv, &out); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, add, getenv, &out); err == nil {
		t.Fatal("added twice")
	}
	var raws []json.RawMessage
	if err := db.NewSelect().Table("events").Column("data").Where("account_id = ? AND kind = ?", acct.ID, "user.added").
		Scan(ctx, &raws); err != nil {
		t.Fatal(err)
	}
	if len(raws) != 1 {
		t.Fatalf("%d user.added events, want 1", len(raws))
	}
	var data map[string]any
	if err := json.Unmarshal(raws[0], &data); err != nil {
		t.Fatal(err)
	}
	if data["address"] != address || data["role"] != "owner" || data["added_by"] != "system" || data["via"] != "api users add" {
		t.Fatalf("user.added data %v", data)
	}
	var entries int
	if err := db.NewRaw("SELECT count(*) FROM audit_log WHERE account_id = ? AND action = 'user.added' AND actor = 'system' AND target = ?",
		acct.ID, "user:"+address).Scan(ctx, &entries); err != nil || entries != 1 {
		t.Fatalf("%d user.added entries (%v)", entries, err)
	}
}
