package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// `api users remove` revokes the keys the person made, and those their
// keys made, in the same change, and says so; other keys keep working.
func TestUsersRemove_RevokesTheirKeys(t *testing.T) {
	t.Parallel()
	db, getenv := migrated(t)
	ctx := context.Background()
	acct, _ := auth.CreateAccount(ctx, db, solana.Devnet)
	_, operator, err := auth.CreateKey(ctx, db, acct)
	if err != nil {
		t.Fatal(err)
	}
	const stays, leaves = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", "HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH"
	for _, a := range []string{stays, leaves} {
		if _, err := auth.AddUser(ctx, db, acct.ID, a, auth.RoleOwner, "operator"); err != nil {
			t.Fatal(err)
		}
	}
	mint := func(by auth.Principal) string {
		var secret string
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var err error
			_, secret, err = auth.CreateKeyBy(ctx, tx, by, auth.KeySpec{Role: auth.RoleAdmin}, auth.DefaultMaxKeysByAgents)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	person := auth.Principal{AccountID: acct.ID, Network: acct.Network, Role: auth.RoleOwner, User: leaves}
	theirs := mint(person)
	p, err := auth.Authenticate(ctx, db, theirs)
	if err != nil {
		t.Fatal(err)
	}
	grandchild := mint(p)
	op, _ := auth.Authenticate(ctx, db, operator)
	bystander := mint(op)

	var out bytes.Buffer
	if err := run(ctx, []string{"users", "remove", "--account", acct.ID.String(), "--address", leaves}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2 API key(s)") {
		t.Fatalf("output %q", out.String())
	}
	for _, k := range []string{theirs, grandchild} {
		if _, err := auth.Authenticate(ctx, db, k); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("a key of the removed person: %v", err)
		}
	}
	for _, k := range []string{operator, bystander} {
		if _, err := auth.Authenticate(ctx, db, k); err != nil {
			t.Fatalf("another key: %v", err)
		}
	}
	var revoked int
	if err := db.NewRaw("SELECT count(*) FROM audit_log WHERE account_id = ? AND action = 'key.revoked' AND actor = 'system'", acct.ID).Scan(ctx, &revoked); err != nil || revoked != 2 {
		t.Fatalf("%d key.revoked entries (%v)", revoked, err)
	}
}
