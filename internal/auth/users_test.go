package auth_test

import (
	"errors"
	"slices"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// The account's last owner is never removed or demoted; any other user
// is, and an address that is no user is not found.
func TestLastOwner_IsNeverRemovedOrDemoted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		owners int
		role   auth.Role // the user acted on
		remove bool      // else demoted to viewer
		want   error
	}{
		{"demote the only owner", 1, auth.RoleOwner, false, auth.ErrLastOwner},
		{"remove the only owner", 1, auth.RoleOwner, true, auth.ErrLastOwner},
		{"demote one of two owners", 2, auth.RoleOwner, false, nil},
		{"remove one of two owners", 2, auth.RoleOwner, true, nil},
		{"demote an approver beside the only owner", 1, auth.RoleApprover, false, nil},
		{"remove an approver beside the only owner", 1, auth.RoleApprover, true, nil},
		{"demote no user", 1, "", false, auth.ErrUserNotFound},
		{"remove no user", 1, "", true, auth.ErrUserNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tx := pgtest.TestTx(t)
			ctx := t.Context()
			acct := wallettest.Account(t, tx)
			var owners []string
			for range c.owners {
				a := sol.NewWallet().PublicKey().String()
				if _, err := auth.AddUser(ctx, tx, acct.ID, a, auth.RoleOwner, "operator"); err != nil {
					t.Fatal(err)
				}
				owners = append(owners, a)
			}
			target := sol.NewWallet().PublicKey().String()
			switch c.role {
			case auth.RoleOwner:
				target = owners[0]
			case "":
			default:
				if _, err := auth.AddUser(ctx, tx, acct.ID, target, c.role, "operator"); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if c.remove {
				_, _, err = auth.RemoveUser(ctx, tx, acct.ID, target)
			} else {
				_, _, err = auth.SetRole(ctx, tx, acct.ID, target, auth.RoleViewer)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("%v, want %v", err, c.want)
			}
			u, err := auth.GetUser(ctx, tx, acct.ID, target)
			switch {
			case c.want != nil && c.role != "" && (err != nil || u.Role != c.role):
				t.Errorf("refused, yet the user is %+v %v", u, err)
			case c.want == nil && c.remove && !errors.Is(err, auth.ErrUserNotFound):
				t.Errorf("removed, yet the user is %+v %v", u, err)
			case c.want == nil && !c.remove && (err != nil || u.Role != auth.RoleViewer):
				t.Errorf("demoted, yet the user is %+v %v", u, err)
			}
		})
	}
}

// Removing a person revokes, in the same change, every live key that
// descends from them (made by them, or by a key they made) and no other.
func TestRemoveUser_RevokesTheKeysThatDescendFromThem(t *testing.T) {
	t.Parallel()
	tx := pgtest.TestTx(t)
	ctx := t.Context()
	acct := wallettest.Account(t, tx)
	person := func() auth.Principal {
		a := sol.NewWallet().PublicKey().String()
		if _, err := auth.AddUser(ctx, tx, acct.ID, a, auth.RoleOwner, "operator"); err != nil {
			t.Fatal(err)
		}
		return auth.Principal{AccountID: acct.ID, Network: acct.Network, Role: auth.RoleOwner, User: a, Ancestry: []string{auth.UserActorID(a)}}
	}
	leaving, staying := person(), person()
	mint := func(by auth.Principal, role auth.Role) auth.Principal {
		_, secret, err := auth.CreateKeyBy(ctx, tx, by, auth.KeySpec{Role: role}, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := auth.Authenticate(ctx, tx, secret)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	theirs := mint(leaving, auth.RoleAdmin)
	theirsTheirs := mint(theirs, auth.RoleAgent)
	other := mint(staying, auth.RoleAdmin)
	_ = mint(other, auth.RoleAgent)

	_, revoked, err := auth.RemoveUser(ctx, tx, acct.ID, leaving.User)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uuid.UUID
	for _, k := range revoked {
		ids = append(ids, k.ID)
	}
	want := []uuid.UUID{theirs.KeyID, theirsTheirs.KeyID}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	slices.SortFunc(want, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	if !slices.Equal(ids, want) {
		t.Fatalf("revoked %v, want %v", ids, want)
	}
	var live int
	if err := tx.NewSelect().Table("api_keys").ColumnExpr("count(*)").Where("account_id = ? AND revoked_at IS NULL", acct.ID).Scan(ctx, &live); err != nil {
		t.Fatal(err)
	}
	if live != 2 {
		t.Fatalf("%d live keys, want the other person's 2", live)
	}
}
