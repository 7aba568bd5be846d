package auth_test

import (
	"flag"
	"os"
	"testing"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/auth"
)

var update = flag.Bool("update", false, "rewrite docs/permissions.md from the permission table")

const permissionsDoc = "../../docs/permissions.md"

// docs/permissions.md prints the code's table; `make docs` rewrites it.
func TestPermissionsDocIsCurrent(t *testing.T) {
	want := auth.PermissionsMarkdown()
	if *update {
		if err := os.WriteFile(permissionsDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(permissionsDoc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("docs/permissions.md differs from auth.Permissions: run `make docs`")
	}
}

func TestCan(t *testing.T) {
	t.Parallel()
	agent := auth.Principal{Role: auth.RoleAgent}
	scoped := auth.Principal{Role: auth.RoleAgent, Wallets: auth.WalletScope{uuid.New()}}
	admin := auth.Principal{Role: auth.RoleAdmin}
	nobody := auth.Principal{Role: "viewer"}
	for _, c := range []struct {
		p    auth.Principal
		op   string
		want auth.Access
	}{
		{agent, "send", auth.Allowed},
		{agent, "update-policy", auth.TightenOnly},
		{admin, "update-policy", auth.Allowed},
		{agent, "unfreeze-agent", auth.Refused},
		{agent, "approve", auth.Refused},
		{admin, "approve", auth.Allowed},
		{agent, "create-agent", auth.Allowed},
		{scoped, "create-agent", auth.Refused},
		{admin, "create-agent", auth.Allowed},
		{agent, "rotate-key", auth.OwnKeys},
		{agent, "list-webhook-endpoints", auth.Refused},
		{admin, "no-such-operation", auth.Refused},
		{nobody, "send", auth.Refused},
	} {
		if got := auth.Can(c.p, c.op); got != c.want {
			t.Errorf("Can(%s scoped=%v, %s) = %s, want %s", c.p.Role, c.p.Scoped(), c.op, got, c.want)
		}
	}
	for _, c := range []struct {
		p    auth.Principal
		op   string
		want string
	}{
		{agent, "unfreeze-agent", "this key's role (agent) cannot unfreeze wallets"},
		{scoped, "create-agent", "this key is limited to some wallets and cannot create wallets"},
		{agent, "no-such-operation", "operation no-such-operation is not in the permission table"},
	} {
		if got := auth.Deny(c.p, c.op).Error(); got != c.want {
			t.Errorf("Deny(%s, %s) = %q, want %q", c.p.Role, c.op, got, c.want)
		}
	}
}
