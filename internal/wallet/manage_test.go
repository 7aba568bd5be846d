package wallet_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// entries counts the account's audit entries of action.
func entries(t *testing.T, tx bun.IDB, acct uuid.UUID, action string) int {
	t.Helper()
	n, err := tx.NewSelect().Table("audit_log").Where("account_id = ? AND action = ?", acct, action).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// A policy change is validated like a new wallet's (the field named
// without a prefix) and then by the guard; a refused one, or one that
// changes nothing, writes nothing; approvals_required is checked against
// the people who may approve only when it changes, so a wallet whose
// people left stays editable.
func TestUpdatePolicy(t *testing.T) {
	t.Parallel()
	limit := func(v money.Micros[money.USD]) *money.Micros[money.USD] { return &v }
	two := 2
	refuse := errors.New("the guard refuses")
	for _, c := range []struct {
		name     string
		required int // the wallet's approvals_required before the change
		patch    policy.Patch
		guard    wallet.Guard
		field    string // a FieldError on it
		err      error  // or this error
		daily    money.Micros[money.USD]
	}{
		{"a lower daily limit", 1, policy.Patch{DailyLimit: limit(50 * money.Dollar)}, nil, "", nil, 50 * money.Dollar},
		{"the same daily limit", 1, policy.Patch{DailyLimit: limit(100 * money.Dollar)}, nil, "", nil, 100 * money.Dollar},
		{"a negative daily limit", 1, policy.Patch{DailyLimit: limit(-1)}, nil, "daily_limit_usdc", nil, 100 * money.Dollar},
		{"refused by the guard", 1, policy.Patch{DailyLimit: limit(500 * money.Dollar)}, func(before, after policy.Policy) error { return refuse }, "", refuse, 100 * money.Dollar},
		{"two approvals, nobody to approve", 1, policy.Patch{ApprovalsRequired: &two}, nil, "approvals_required", nil, 100 * money.Dollar},
		{"people left: other fields still change", 3, policy.Patch{DailyLimit: limit(50 * money.Dollar)}, nil, "", nil, 50 * money.Dollar},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tx := pgtest.TestTx(t)
			ctx := t.Context()
			a, w := wallettest.New(t, tx)
			acct := a.ID
			if _, err := tx.ExecContext(ctx, "UPDATE wallets SET approvals_required = ? WHERE id = ?", c.required, w.ID); err != nil {
				t.Fatal(err)
			}
			_, err := wallet.UpdatePolicy(ctx, tx, acct, w.ID, "system", c.patch, c.guard)
			var fe *wallet.FieldError
			switch {
			case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
				t.Fatalf("%v, want a FieldError on %s", err, c.field)
			case c.err != nil && !errors.Is(err, c.err):
				t.Fatalf("%v, want %v", err, c.err)
			case c.field == "" && c.err == nil && err != nil:
				t.Fatalf("refused: %v", err)
			}
			got, err := wallet.Get(ctx, tx, acct, w.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.DailyLimit != c.daily || got.ApprovalsRequired != c.required {
				t.Errorf("daily limit %v, approvals_required %d; want %v, %d", got.DailyLimit, got.ApprovalsRequired, c.daily, c.required)
			}
			changed := c.daily != 100*money.Dollar
			if n := entries(t, tx, acct, audit.ActionPolicyUpdated); (n == 1) != changed || n > 1 {
				t.Errorf("%d policy.updated entries, want changed %v", n, changed)
			}
		})
	}
}

// Freezing and unfreezing: each change writes its entry, a wallet already
// in that state is left as it is with none, and another account's wallet
// is not found.
func TestSetState(t *testing.T) {
	t.Parallel()
	tx := pgtest.TestTx(t)
	ctx := t.Context()
	a, w := wallettest.New(t, tx)
	acct, other := a.ID, wallettest.Account(t, tx).ID
	for i, c := range []struct {
		state            wallet.State
		changed          bool
		frozen, unfrozen int // entries so far
	}{
		{wallet.Frozen, true, 1, 0},
		{wallet.Frozen, false, 1, 0},
		{wallet.Active, true, 1, 1},
		{wallet.Active, false, 1, 1},
		{wallet.Frozen, true, 2, 1},
	} {
		got, changed, err := wallet.SetState(ctx, tx, acct, w.ID, "system", c.state)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != c.state || changed != c.changed {
			t.Errorf("%d: %s changed %v, want %s changed %v", i, got.State, changed, c.state, c.changed)
		}
		if f, u := entries(t, tx, acct, audit.ActionWalletFrozen), entries(t, tx, acct, audit.ActionWalletUnfrozen); f != c.frozen || u != c.unfrozen {
			t.Errorf("%d: %d wallet.frozen and %d wallet.unfrozen entries, want %d and %d", i, f, u, c.frozen, c.unfrozen)
		}
	}
	if _, _, err := wallet.SetState(ctx, tx, other, w.ID, "system", wallet.Active); !errors.Is(err, wallet.ErrNotFound) {
		t.Fatalf("another account's wallet: %v", err)
	}
}
