package auth_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/auth"
)

// Who may not approve a payment a principal requests: a person themself; a
// key its rotation line; an admin key also everyone it descends from (its
// creator holds it), an agent key not (humans delegate spending to it).
func TestPrincipal_Requesters(t *testing.T) {
	t.Parallel()
	lineage := uuid.New()
	key := "key_" + lineage.String()
	for _, c := range []struct {
		name string
		p    auth.Principal
		want []string
	}{
		{"a person", auth.Principal{Role: auth.RoleOwner, User: "ADDR", Ancestry: []string{"user:ADDR"}}, []string{"user:ADDR"}},
		{"an admin key a person made", auth.Principal{Role: auth.RoleAdmin, Lineage: lineage, Ancestry: []string{key, "user:ADDR"}}, []string{key, "user:ADDR"}},
		{"a command-line admin key", auth.Principal{Role: auth.RoleAdmin, Lineage: lineage}, []string{key}},
		{"an agent key a person made", auth.Principal{Role: auth.RoleAgent, Lineage: lineage, Ancestry: []string{key, "user:ADDR"}}, []string{key}},
	} {
		if got := c.p.Requesters(); !slices.Equal(got, c.want) {
			t.Errorf("%s: Requesters() = %q, want %q", c.name, got, c.want)
		}
	}
}

// By role: who may approve payments and who may read about people (the
// users, who decided, every key's history).
func TestPrincipal_ApprovesAndReadsPeopleByRole(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		role                  auth.Role
		approves, readsPeople bool
	}{
		{auth.RoleAgent, false, false},
		{auth.RoleAdmin, true, true},
		{auth.RoleOwner, true, true},
		{auth.RoleApprover, true, true},
		{auth.RoleViewer, false, true},
		{"unknown", false, false},
	} {
		p := auth.Principal{Role: c.role}
		if p.CanApprove() != c.approves || p.ReadsPeople() != c.readsPeople {
			t.Errorf("%s: approves %v, reads people %v; want %v, %v", c.role, p.CanApprove(), p.ReadsPeople(), c.approves, c.readsPeople)
		}
		k := auth.APIKey{Role: c.role}
		if want := c.role == auth.RoleAdmin; k.CanApprove() != want {
			t.Errorf("a key of role %s: approves %v, want %v", c.role, k.CanApprove(), want)
		}
	}
}

// A key's creator is the person, else the key, that made it ("" for the
// command line); its ancestry is its rotation line, then its ancestors.
func TestAPIKey_CreatorAndAncestry(t *testing.T) {
	t.Parallel()
	maker, lineage := uuid.New(), uuid.New()
	person := "ADDR"
	for _, c := range []struct {
		name     string
		k        auth.APIKey
		creator  string
		ancestry []string
	}{
		{"made by a person", auth.APIKey{CreatedByUser: &person, Lineage: lineage, Ancestors: []string{"user:ADDR"}},
			"user:ADDR", []string{"key_" + lineage.String(), "user:ADDR"}},
		{"made by a key", auth.APIKey{CreatedBy: uuid.NullUUID{UUID: maker, Valid: true}, Lineage: lineage, Ancestors: []string{"key_" + maker.String()}},
			"key_" + maker.String(), []string{"key_" + lineage.String(), "key_" + maker.String()}},
		{"made on the command line", auth.APIKey{Lineage: lineage}, "", []string{"key_" + lineage.String()}},
	} {
		if got := c.k.Creator(); got != c.creator {
			t.Errorf("%s: Creator() = %q, want %q", c.name, got, c.creator)
		}
		if got := c.k.Ancestry(); !slices.Equal(got, c.ancestry) {
			t.Errorf("%s: Ancestry() = %q, want %q", c.name, got, c.ancestry)
		}
	}
}

// Every row of the permission table names every role (a role missing from
// a row is refused silently); admin keys and owners may do everything but
// stream the dashboard's events, which is a person's, never a key's,
// export a wallet's secret, which only owners ask for and approve, and
// make or unmake owners (admin keys manage approvers and viewers only).
func TestPermissions_EveryRowNamesEveryRole(t *testing.T) {
	t.Parallel()
	for op, r := range auth.Permissions {
		for _, role := range auth.Roles {
			if _, ok := r.Access[role]; !ok {
				t.Errorf("%s: no access for %s", op, role)
			}
		}
		if got := auth.Can(auth.Principal{Role: auth.RoleOwner}, op); got != auth.Allowed {
			t.Errorf("%s: an owner %s", op, got)
		}
		want := auth.Allowed
		switch {
		case op == "stream-events" || strings.HasSuffix(op, "-wallet-export") || op == "list-wallet-exports":
			want = auth.Refused
		case strings.HasSuffix(op, "-user") && op != "list-users":
			want = auth.NotOwners
		}
		if got := auth.Can(auth.Principal{Role: auth.RoleAdmin}, op); got != want {
			t.Errorf("%s: an admin key %s, want %s", op, got, want)
		}
	}
}

// A user is a canonical Solana address (base58 of 32 bytes) with a role of
// the dashboard.
func TestCheckUser(t *testing.T) {
	t.Parallel()
	const addr = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
	for _, c := range []struct {
		address string
		role    auth.Role
		field   string // "" when valid
	}{
		{addr, auth.RoleOwner, ""},
		{addr, auth.RoleApprover, ""},
		{addr, auth.RoleViewer, ""},
		{addr, auth.RoleAdmin, "role"},
		{addr, "", "role"},
		{addr[:20], auth.RoleOwner, "address"},
		{"0" + addr[1:], auth.RoleOwner, "address"},
		{"1" + addr, auth.RoleOwner, "address"},
		{"", auth.RoleOwner, "address"},
	} {
		err := auth.CheckUser(c.address, c.role)
		fe, _ := err.(*auth.FieldError)
		if (c.field == "" && err != nil) || (c.field != "" && (fe == nil || fe.Field != c.field)) {
			t.Errorf("CheckUser(%q, %q) = %v, want a problem with %q", c.address, c.role, err, c.field)
		}
	}
}

// The owners' rule of the users rows, for every principal: a change that
// adds, removes, promotes or demotes an owner is only an owner's session's
// (a *Denied naming the user otherwise, whatever the key); a change of
// approvers and viewers is left to the table.
func TestCheckOwnerChange_OnlyAnOwnersSessionTouchesOwners(t *testing.T) {
	t.Parallel()
	const addr = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
	principals := map[string]auth.Principal{
		"agent key":        {Role: auth.RoleAgent},
		"scoped agent key": {Role: auth.RoleAgent, Wallets: auth.WalletScope{uuid.New()}},
		"admin key":        {Role: auth.RoleAdmin},
		"owner":            {Role: auth.RoleOwner, User: addr},
		"approver":         {Role: auth.RoleApprover, User: addr},
		"viewer":           {Role: auth.RoleViewer, User: addr},
		// A key can never be an owner; were it ever one, it still may not.
		"owner-role key": {Role: auth.RoleOwner},
	}
	changes := []struct {
		op, what string
		from, to auth.Role
	}{
		{"create-user", "add an owner", "", auth.RoleOwner},
		{"update-user", "make a user an owner", auth.RoleViewer, auth.RoleOwner},
		{"update-user", "change an owner's role", auth.RoleOwner, auth.RoleApprover},
		{"delete-user", "remove an owner", auth.RoleOwner, ""},
	}
	for name, p := range principals {
		for _, c := range changes {
			err := auth.CheckOwnerChange(p, c.op, addr, c.from, c.to)
			if name == "owner" {
				if err != nil {
					t.Errorf("%s may %s: %v", name, c.what, err)
				}
				continue
			}
			var d *auth.Denied
			if !errors.As(err, &d) || d.Op != c.op || d.Target != "user:"+addr || !strings.Contains(d.Reason, "cannot "+c.what) {
				t.Errorf("%s, %s: %v", name, c.what, err)
			}
		}
		for _, c := range [][2]auth.Role{{"", auth.RoleViewer}, {auth.RoleViewer, auth.RoleApprover}, {auth.RoleApprover, ""}} {
			if err := auth.CheckOwnerChange(p, "update-user", addr, c[0], c[1]); err != nil {
				t.Errorf("%s, %q to %q: %v", name, c[0], c[1], err)
			}
		}
	}
}
