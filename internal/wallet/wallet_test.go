package wallet_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

func TestCreateGetListScopedToAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	sealer := wallettest.Sealer(t)
	a, b := wallettest.Account(t, db), wallettest.Account(t, db)

	p := policy.Default()
	p.Allowlist = []string{"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"}
	w1, err := wallet.Create(ctx, db, sealer, a.ID, "system", "one", p, 0)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := wallet.Create(ctx, db, sealer, a.ID, "system", "two", policy.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if w1.SecretSealed != nil || w1.SecretKeyID != sealer.KeyID() {
		t.Fatalf("create returned sealed bytes or wrong key id: %q", w1.SecretKeyID)
	}

	got, err := wallet.Get(ctx, db, a.ID, w1.ID)
	if err != nil || got.Label != "one" || len(got.Allowlist) != 1 || got.SecretSealed != nil || !got.CreatedAt.Equal(w1.CreatedAt) {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := wallet.Get(ctx, db, b.ID, w1.ID); !errors.Is(err, wallet.ErrNotFound) {
		t.Fatalf("other account's get: %v", err)
	}
	if _, err := wallet.Get(ctx, db, a.ID, uuid.New()); !errors.Is(err, wallet.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	list, err := wallet.List(ctx, db, a.ID, nil, wallet.Page{})
	if err != nil || len(list) != 2 || list[0].ID != w2.ID || list[1].ID != w1.ID {
		t.Fatalf("list: %v %v", list, err)
	}
	if other, _ := wallet.List(ctx, db, b.ID, nil, wallet.Page{}); len(other) != 0 {
		t.Fatalf("other account lists %d", len(other))
	}
	bad := policy.Default()
	bad.MaxTx = -1
	for _, tc := range []struct {
		label string
		p     policy.Policy
		field string
	}{
		{"bad", bad, "policy.max_tx_usdc"},
		{" \t", policy.Default(), "label"},
		{strings.Repeat("é", wallet.MaxLabel+1), policy.Default(), "label"},
		{"a\x00b", policy.Default(), "label"},
	} {
		_, err := wallet.Create(ctx, db, sealer, a.ID, "system", tc.label, tc.p, 0)
		var fe *wallet.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("Create(%q): %v, want a FieldError on %s", tc.label, err, tc.field)
		}
	}
	if _, err := wallet.Create(ctx, db, sealer, a.ID, "system", strings.Repeat("é", wallet.MaxLabel), policy.Default(), 0); err != nil {
		t.Fatalf("100-character label: %v", err)
	}
	if list, _ := wallet.List(ctx, db, a.ID, nil, wallet.Page{}); len(list) != 3 {
		t.Fatalf("invalid creates stored wallets: %d", len(list))
	}
}
