package auth_test

import (
	"errors"
	"slices"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// keyring is an account on a test transaction with the principals that
// make keys: a command-line admin key, an agent key it made, an agent key
// scoped to wallet A, and an owner in the dashboard.
type keyring struct {
	tx                   bun.Tx
	acct                 auth.Account
	a, b                 uuid.UUID // wallets
	admin, agent, scoped auth.Principal
	owner                auth.Principal
}

func newKeyring(t *testing.T) keyring {
	t.Helper()
	ctx := t.Context()
	r := keyring{tx: pgtest.TestTx(t)}
	r.acct = wallettest.Account(t, r.tx)
	sealer := wallettest.Sealer(t)
	r.a = wallettest.Create(t, r.tx, sealer, r.acct.ID, "w").ID
	r.b = wallettest.Create(t, r.tx, sealer, r.acct.ID, "w").ID
	_, secret, err := auth.CreateKey(ctx, r.tx, r.acct)
	if err != nil {
		t.Fatal(err)
	}
	r.admin = r.authenticate(t, secret)
	r.agent = r.make(t, r.admin, auth.KeySpec{})
	r.scoped = r.make(t, r.admin, auth.KeySpec{Wallets: auth.WalletScope{r.a}})
	addr := sol.NewWallet().PublicKey().String()
	if _, err := auth.AddUser(ctx, r.tx, r.acct.ID, addr, auth.RoleOwner, "operator"); err != nil {
		t.Fatal(err)
	}
	r.owner = auth.Principal{AccountID: r.acct.ID, Network: r.acct.Network, Role: auth.RoleOwner, User: addr, Ancestry: []string{auth.UserActorID(addr)}}
	return r
}

func (r keyring) authenticate(t *testing.T, secret string) auth.Principal {
	t.Helper()
	p, err := auth.Authenticate(t.Context(), r.tx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// make has by make a key of spec and authenticates as it.
func (r keyring) make(t *testing.T, by auth.Principal, spec auth.KeySpec) auth.Principal {
	t.Helper()
	_, secret, err := auth.CreateKeyBy(t.Context(), r.tx, by, spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	return r.authenticate(t, secret)
}

// What a creator may give a new key: only admin keys and owners make admin
// keys, which reach every wallet; a scoped key makes keys inside its scope
// (and passes it on when none is asked); a scope names known wallets once
// each; the new key descends from its creator.
func TestCreateKeyBy_WhatACreatorMayGive(t *testing.T) {
	t.Parallel()
	label := func(s string) *string { return &s }
	for _, c := range []struct {
		name    string
		by      func(keyring) auth.Principal
		spec    func(keyring) auth.KeySpec
		denied  bool
		field   string
		wallets func(keyring) auth.WalletScope
		// ancestors of the new key
		ancestors func(keyring) []string
	}{
		{name: "an admin key makes an admin key",
			by: func(r keyring) auth.Principal { return r.admin }, spec: func(keyring) auth.KeySpec { return auth.KeySpec{Role: auth.RoleAdmin} },
			ancestors: func(r keyring) []string { return []string{auth.KeyActorID(r.admin.Lineage)} }},
		{name: "an owner makes an admin key",
			by: func(r keyring) auth.Principal { return r.owner }, spec: func(keyring) auth.KeySpec { return auth.KeySpec{Role: auth.RoleAdmin} },
			ancestors: func(r keyring) []string { return []string{auth.UserActorID(r.owner.User)} }},
		{name: "an agent key makes an agent key",
			by: func(r keyring) auth.Principal { return r.agent }, spec: func(keyring) auth.KeySpec { return auth.KeySpec{} },
			ancestors: func(r keyring) []string { return r.agent.Ancestry }},
		{name: "an agent key may not make an admin key", denied: true,
			by: func(r keyring) auth.Principal { return r.agent }, spec: func(keyring) auth.KeySpec { return auth.KeySpec{Role: auth.RoleAdmin} }},
		{name: "an admin key is never scoped", field: "wallet_ids",
			by: func(r keyring) auth.Principal { return r.admin },
			spec: func(r keyring) auth.KeySpec {
				return auth.KeySpec{Role: auth.RoleAdmin, Wallets: auth.WalletScope{r.a}}
			}},
		{name: "an unknown role", field: "role",
			by: func(r keyring) auth.Principal { return r.admin }, spec: func(keyring) auth.KeySpec { return auth.KeySpec{Role: "root"} }},
		{name: "an empty scope", field: "wallet_ids",
			by: func(r keyring) auth.Principal { return r.admin }, spec: func(keyring) auth.KeySpec { return auth.KeySpec{Wallets: auth.WalletScope{}} }},
		{name: "a wallet named twice", field: "wallet_ids[1]",
			by: func(r keyring) auth.Principal { return r.admin }, spec: func(r keyring) auth.KeySpec { return auth.KeySpec{Wallets: auth.WalletScope{r.a, r.a}} }},
		{name: "a wallet of no account", field: "wallet_ids[0]",
			by: func(r keyring) auth.Principal { return r.admin }, spec: func(keyring) auth.KeySpec { return auth.KeySpec{Wallets: auth.WalletScope{uuid.New()}} }},
		{name: "an invisible character in the label", field: "label",
			by: func(r keyring) auth.Principal { return r.admin }, spec: func(keyring) auth.KeySpec { return auth.KeySpec{Label: label("a\u202eb")} }},
		{name: "a scoped key passes its scope on",
			by: func(r keyring) auth.Principal { return r.scoped }, spec: func(keyring) auth.KeySpec { return auth.KeySpec{} },
			wallets:   func(r keyring) auth.WalletScope { return auth.WalletScope{r.a} },
			ancestors: func(r keyring) []string { return r.scoped.Ancestry }},
		{name: "a scoped key may not reach past its scope", denied: true,
			by: func(r keyring) auth.Principal { return r.scoped }, spec: func(r keyring) auth.KeySpec { return auth.KeySpec{Wallets: auth.WalletScope{r.b}} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newKeyring(t)
			k, _, err := auth.CreateKeyBy(t.Context(), r.tx, c.by(r), c.spec(r), 0)
			var denied *auth.Denied
			var fe *auth.FieldError
			switch {
			case c.denied:
				if !errors.As(err, &denied) {
					t.Fatalf("%v, want a refusal", err)
				}
				return
			case c.field != "":
				if !errors.As(err, &fe) || fe.Field != c.field {
					t.Fatalf("%v, want a FieldError on %s", err, c.field)
				}
				return
			case err != nil:
				t.Fatalf("refused: %v", err)
			}
			var wantWallets auth.WalletScope
			if c.wallets != nil {
				wantWallets = c.wallets(r)
			}
			if !slices.Equal(k.Wallets, wantWallets) || !slices.Equal(k.Ancestors, c.ancestors(r)) {
				t.Errorf("wallets %v, ancestors %q; want %v, %q", k.Wallets, k.Ancestors, wantWallets, c.ancestors(r))
			}
		})
	}
}

// An admin key revokes any key of its account; an agent key only itself
// and the keys it made; revoking a revoked key changes nothing; another
// account's key is not found.
func TestRevoke_WhoMayRevokeWhichKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		by      func(keyring) auth.Principal
		target  func(*testing.T, keyring) uuid.UUID
		want    error // nil: revoked
		changed bool
	}{
		{"an admin key, another agent's key", func(r keyring) auth.Principal { return r.admin },
			func(_ *testing.T, r keyring) uuid.UUID { return r.agent.KeyID }, nil, true},
		{"an agent key, itself", func(r keyring) auth.Principal { return r.agent },
			func(_ *testing.T, r keyring) uuid.UUID { return r.agent.KeyID }, nil, true},
		{"an agent key, a key it made", func(r keyring) auth.Principal { return r.agent },
			func(t *testing.T, r keyring) uuid.UUID { return r.make(t, r.agent, auth.KeySpec{}).KeyID }, nil, true},
		{"an agent key, another agent's key", func(r keyring) auth.Principal { return r.agent },
			func(_ *testing.T, r keyring) uuid.UUID { return r.scoped.KeyID }, &auth.Denied{}, false},
		{"an agent key, the admin key that made it", func(r keyring) auth.Principal { return r.agent },
			func(_ *testing.T, r keyring) uuid.UUID { return r.admin.KeyID }, &auth.Denied{}, false},
		{"a revoked key", func(r keyring) auth.Principal { return r.admin },
			func(t *testing.T, r keyring) uuid.UUID {
				if _, _, err := auth.Revoke(t.Context(), r.tx, r.admin, r.agent.KeyID); err != nil {
					t.Fatal(err)
				}
				return r.agent.KeyID
			}, nil, false},
		{"another account's key", func(r keyring) auth.Principal { return r.admin },
			func(t *testing.T, r keyring) uuid.UUID {
				other, err := auth.CreateAccount(t.Context(), r.tx, solana.Devnet)
				if err != nil {
					t.Fatal(err)
				}
				k, _, err := auth.CreateKey(t.Context(), r.tx, other)
				if err != nil {
					t.Fatal(err)
				}
				return k.ID
			}, auth.ErrKeyNotFound, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newKeyring(t)
			id := c.target(t, r)
			_, changed, err := auth.Revoke(t.Context(), r.tx, c.by(r), id)
			var denied *auth.Denied
			switch want := c.want.(type) {
			case nil:
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			case *auth.Denied:
				if !errors.As(err, &denied) {
					t.Fatalf("%v, want a refusal", err)
				}
			default:
				if !errors.Is(err, want) {
					t.Fatalf("%v, want %v", err, want)
				}
			}
			if changed != c.changed {
				t.Errorf("changed %v, want %v", changed, c.changed)
			}
			if c.want != nil {
				return
			}
			if k, err := auth.GetKey(t.Context(), r.tx, r.acct.ID, id); err != nil || k.RevokedAt == nil {
				t.Errorf("key %+v %v, want revoked", k, err)
			}
		})
	}
}
