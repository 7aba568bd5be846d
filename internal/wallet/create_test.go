package wallet_test

import (
	"errors"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// newKey inserts an API key of role into the account.
func newKey(t *testing.T, tx bun.IDB, acct uuid.UUID, role auth.Role) uuid.UUID {
	t.Helper()
	id := uuid.New()
	if _, err := tx.ExecContext(t.Context(), "INSERT INTO api_keys (id, account_id, prefix, hash, role, lineage) VALUES (?0, ?1, 'svc_test_x', sha256(?2::bytea), ?3, ?0)",
		id, acct, id.String(), role); err != nil {
		t.Fatal(err)
	}
	return id
}

// A label is refused when blank, longer than MaxLabel characters, or
// carrying a control or invisible formatting character; any other text,
// accents and dashes included, is fine.
func TestLabelProblem(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		label, want string // want: "" when fine, else part of the problem
	}{
		{"Acme invoices — März", ""},
		{strings.Repeat("é", wallet.MaxLabel), ""},
		{"", "blank"},
		{" \t ", "blank"},
		{strings.Repeat("é", wallet.MaxLabel+1), "at most 100 characters"},
		{"Acme\ninvoices", "invisible"},
		{"Acme \u202einvoices", "invisible"},
		{"Acme\u200binvoices", "invisible"},
	} {
		got := wallet.LabelProblem(c.label)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("LabelProblem(%q) = %q, want %q", c.label, got, c.want)
		}
	}
}

// An account's wallets are capped in total, whoever made them, and agent
// keys are capped on the wallets agent keys made: admin keys and people
// are held to the total only.
func TestCreateBy_Caps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// wallets already made by a person, by agent keys, by admin keys
		byPerson, byAgents, byAdmins int
		creator                      auth.Role // "" for a person
		caps                         wallet.Caps
		want                         *wallet.TooManyError
	}{
		{"no caps", 3, 3, 0, auth.RoleAgent, wallet.Caps{}, nil},
		{"under the total", 2, 0, 0, "", wallet.Caps{Total: 3}, nil},
		{"at the total, a person", 2, 0, 0, "", wallet.Caps{Total: 2}, &wallet.TooManyError{Max: 2}},
		{"at the total, an agent key", 1, 1, 0, auth.RoleAgent, wallet.Caps{Total: 2, ByAgents: 5}, &wallet.TooManyError{Max: 2}},
		{"at the agents' cap, an agent key", 0, 2, 0, auth.RoleAgent, wallet.Caps{Total: 10, ByAgents: 2}, &wallet.TooManyError{Max: 2, ByAgents: true}},
		{"at the agents' cap, an admin key", 0, 2, 0, auth.RoleAdmin, wallet.Caps{Total: 10, ByAgents: 2}, nil},
		{"at the agents' cap, a person", 0, 2, 0, "", wallet.Caps{ByAgents: 2}, nil},
		{"others' wallets do not count for agents", 3, 1, 3, auth.RoleAgent, wallet.Caps{ByAgents: 2}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tx := pgtest.TestTx(t)
			ctx := t.Context()
			sealer := wallettest.Sealer(t)
			acct := wallettest.Account(t, tx).ID
			by := func(role auth.Role) wallet.Creator {
				if role == "" {
					return wallet.Creator{Actor: "user:someone"}
				}
				k := newKey(t, tx, acct, role)
				return wallet.Creator{Actor: auth.KeyActorID(k), Key: uuid.NullUUID{UUID: k, Valid: true}, Agent: role == auth.RoleAgent}
			}
			for role, n := range map[auth.Role]int{"": c.byPerson, auth.RoleAgent: c.byAgents, auth.RoleAdmin: c.byAdmins} {
				for range n {
					if _, err := wallet.CreateBy(ctx, tx, sealer, acct, by(role), "w", policy.Default(), wallet.Caps{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			_, err := wallet.CreateBy(ctx, tx, sealer, acct, by(c.creator), "next", policy.Default(), c.caps)
			var tm *wallet.TooManyError
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != nil && (!errors.As(err, &tm) || *tm != *c.want):
				t.Fatalf("%v, want %+v", err, *c.want)
			}
		})
	}
}

// A new wallet is checked before anything is stored: its label, its policy
// (a field of it named under policy.), and approvals_required against the
// account's people who may approve (owners and approvers; at least 1 is
// always allowed).
func TestCreateBy_RefusesWhatCannotBeKept(t *testing.T) {
	t.Parallel()
	with := func(f func(*policy.Policy)) policy.Policy { p := policy.Default(); f(&p); return p }
	for _, c := range []struct {
		name                       string
		label                      string
		p                          policy.Policy
		owners, approvers, viewers int
		field                      string // "" when made
	}{
		{"a default wallet", "w", policy.Default(), 0, 0, 0, ""},
		{"a blank label", " ", policy.Default(), 0, 0, 0, "label"},
		{"a negative daily limit", "w", with(func(p *policy.Policy) { p.DailyLimit = -1 }), 0, 0, 0, "policy.daily_limit_usdc"},
		{"a huge weekly limit", "w", with(func(p *policy.Policy) { v := money.Micros[money.USD](money.MaxMicros) + 1; p.WeeklyLimit = &v }), 0, 0, 0, "policy.weekly_limit_usdc"},
		{"two approvals, nobody to approve", "w", with(func(p *policy.Policy) { p.ApprovalsRequired = 2 }), 0, 0, 0, "policy.approvals_required"},
		{"two approvals, an owner and a viewer", "w", with(func(p *policy.Policy) { p.ApprovalsRequired = 2 }), 1, 0, 1, "policy.approvals_required"},
		{"two approvals, an owner and an approver", "w", with(func(p *policy.Policy) { p.ApprovalsRequired = 2 }), 1, 1, 0, ""},
		{"three approvals, two who may", "w", with(func(p *policy.Policy) { p.ApprovalsRequired = 3 }), 2, 0, 3, "policy.approvals_required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tx := pgtest.TestTx(t)
			ctx := t.Context()
			acct := wallettest.Account(t, tx).ID
			for role, n := range map[auth.Role]int{auth.RoleOwner: c.owners, auth.RoleApprover: c.approvers, auth.RoleViewer: c.viewers} {
				for range n {
					if _, err := auth.AddUser(ctx, tx, acct, sol.NewWallet().PublicKey().String(), role, "operator"); err != nil {
						t.Fatal(err)
					}
				}
			}
			w, err := wallet.Create(ctx, tx, wallettest.Sealer(t), acct, "system", c.label, c.p, 0)
			var fe *wallet.FieldError
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.field == "" && w.ApprovalsRequired != c.p.Approvals():
				t.Fatalf("approvals_required %d, want %d", w.ApprovalsRequired, c.p.Approvals())
			case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
				t.Fatalf("%v, want a FieldError on %s", err, c.field)
			}
			n, err := tx.NewSelect().Table("wallets").Where("account_id = ?", acct).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if made := c.field == ""; (n == 1) != made {
				t.Fatalf("%d wallets stored, want made %v", n, made)
			}
		})
	}
}
