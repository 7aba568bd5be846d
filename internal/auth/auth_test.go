package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mr-tron/base58"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	for _, n := range []solana.Network{solana.Devnet, solana.Mainnet} {
		acct, err := auth.CreateAccount(ctx, db, n)
		if err != nil {
			t.Fatal(err)
		}
		k, secret, err := auth.CreateKey(ctx, db, acct)
		if err != nil {
			t.Fatal(err)
		}
		wantPrefix := map[solana.Network]string{solana.Devnet: auth.TestPrefix, solana.Mainnet: auth.LivePrefix}[n]
		if !strings.HasPrefix(secret, wantPrefix) || !strings.HasPrefix(secret, k.Prefix) || len(k.Prefix) >= len(secret)/2 {
			t.Fatalf("key %q, display prefix %q", secret, k.Prefix)
		}
		raw, err := base58.Decode(strings.TrimPrefix(secret, wantPrefix))
		if err != nil || len(raw) != 32 {
			t.Fatalf("random part: %d bytes, %v", len(raw), err)
		}
		p, err := auth.Authenticate(ctx, db, secret)
		if err != nil || p.AccountID != acct.ID || p.KeyID != k.ID || p.Network != n {
			t.Fatalf("authenticate: %+v %v", p, err)
		}
		err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, changed, err := auth.Revoke(ctx, tx, p, k.ID)
			if err == nil && !changed {
				t.Error("revoke changed nothing")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := auth.Authenticate(ctx, db, secret); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("revoked key: %v", err)
		}
	}
}

func TestWellFormed(t *testing.T) {
	t.Parallel()
	good := auth.TestPrefix + base58.Encode(make([]byte, 32))
	cases := map[string]bool{
		good: true,
		auth.LivePrefix + base58.Encode([]byte("0123456789abcdef0123456789abcdef")): true,
		"":                       false,
		auth.TestPrefix:          false,
		"svc_prod_" + good[9:]:   false,
		good + "1":               false,
		good[:len(good)-1] + "0": false, // 0 is not base58
		auth.TestPrefix + base58.Encode(make([]byte, 31)): false,
		strings.ToUpper(good):                             false,
	}
	for in, want := range cases {
		if got := auth.WellFormed(in); got != want {
			t.Errorf("WellFormed(%q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzWellFormed(f *testing.F) {
	f.Add(auth.TestPrefix + base58.Encode(make([]byte, 32)))
	f.Add("svc_live_")
	f.Fuzz(func(t *testing.T, s string) {
		if auth.WellFormed(s) && !strings.HasPrefix(s, auth.TestPrefix) && !strings.HasPrefix(s, auth.LivePrefix) {
			t.Fatalf("accepted %q", s)
		}
	})
}
