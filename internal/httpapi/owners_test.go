package httpapi_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// userAdded is the event kind that announces a new user.
const userAdded = "user.added"

// roleOf is the role of the user at address, "" when it is none.
func (e *env) roleOf(address string) auth.Role {
	e.t.Helper()
	u, err := auth.GetUser(e.t.Context(), e.db, e.account.ID, address)
	if err != nil {
		return ""
	}
	return u.Role
}

// No API key adds, removes, promotes or demotes an owner: an admin key is
// refused each (403 naming what is missing, nothing changes, each attempt
// audited as permission.denied on the user) yet still manages approvers
// and viewers; an owner signed in to the dashboard does all of it.
func TestOwners_NoKeyAddsRemovesOrChangesAnOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner, _ := e.session(auth.RoleOwner)
	other := newAddress()
	e.addUser(other, auth.RoleOwner)
	approver := newAddress()
	e.addUser(approver, auth.RoleApprover)
	_, agentKey := e.agentKey()
	newcomer := newAddress()

	for _, c := range []struct {
		name, method, path, address string
		body                        any
		want                        string
		role                        auth.Role // the user's role after the refusal
	}{
		{"add an owner", "POST", usersPath, newcomer, map[string]any{"address": newcomer, "role": "owner"}, "cannot add an owner", ""},
		{"promote an approver", "PATCH", usersPath + "/" + approver, approver, map[string]any{"role": "owner"}, "cannot make a user an owner", auth.RoleApprover},
		{"demote an owner", "PATCH", usersPath + "/" + other, other, map[string]any{"role": "viewer"}, "cannot change an owner's role", auth.RoleOwner},
		{"remove an owner", "DELETE", usersPath + "/" + other, other, nil, "cannot remove an owner", auth.RoleOwner},
	} {
		denied := len(e.auditOf(audit.ActionPermissionDenied))
		status, body := e.do(c.method, c.path, e.key, c.body)
		wantError(t, status, body, http.StatusForbidden, "this key's role (admin) "+c.want)
		if got := e.roleOf(c.address); got != c.role {
			t.Fatalf("%s: refused, yet the user's role is %q", c.name, got)
		}
		entries := e.auditOf(audit.ActionPermissionDenied)
		if len(entries) != denied+1 {
			t.Fatalf("%s: %d permission.denied entries, want %d", c.name, len(entries), denied+1)
		}
		if last := entries[len(entries)-1]; last.Target != "user:"+c.address || !strings.Contains(details(t, last)["reason"].(string), c.want) {
			t.Fatalf("%s: entry %+v", c.name, last)
		}
		// An agent key was never allowed to manage users.
		status, body = e.do(c.method, c.path, agentKey, c.body)
		wantError(t, status, body, http.StatusForbidden, "this key's role (agent) cannot manage users")
	}
	if n := len(e.events(userAdded)); n != 0 {
		t.Fatalf("%d user.added events after refusals", n)
	}

	// The admin key still manages approvers and viewers.
	viewer := newAddress()
	if status, body := e.do("POST", usersPath, e.key, map[string]any{"address": viewer, "role": "viewer"}); status != http.StatusCreated {
		t.Fatalf("admin adds a viewer: %d %v", status, body)
	}
	if status, body := e.do("PATCH", usersPath+"/"+viewer, e.key, map[string]any{"role": "approver"}); status != http.StatusOK || body["role"] != "approver" {
		t.Fatalf("admin makes a viewer an approver: %d %v", status, body)
	}
	if status, body := e.do("DELETE", usersPath+"/"+viewer, e.key, nil); status != http.StatusNoContent {
		t.Fatalf("admin removes an approver: %d %v", status, body)
	}

	// An owner in the dashboard does what the key may not.
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"add an owner", "POST", usersPath, map[string]any{"address": newcomer, "role": "owner"}, http.StatusCreated},
		{"promote an approver", "PATCH", usersPath + "/" + approver, map[string]any{"role": "owner"}, http.StatusOK},
		{"demote an owner", "PATCH", usersPath + "/" + other, map[string]any{"role": "viewer"}, http.StatusOK},
		{"remove an owner", "DELETE", usersPath + "/" + newcomer, nil, http.StatusNoContent},
	} {
		if status, body := e.doAs(owner, c.method, c.path, c.body); status != c.status {
			t.Fatalf("owner: %s: %d %v", c.name, status, body)
		}
	}
	if e.roleOf(approver) != auth.RoleOwner || e.roleOf(other) != auth.RoleViewer || e.roleOf(newcomer) != "" {
		t.Fatalf("after the owner's changes: %s, %s, %q", e.roleOf(approver), e.roleOf(other), e.roleOf(newcomer))
	}
}

// A removed or demoted owner's export requests that are not sealed yet
// are void, in the same change: the ones they asked for (pending) and the
// ones they approved (approved, not yet sealed: no worker runs here).
// Another owner's request stays pending.
func TestOwners_RemovedOrDemotedOwnersExportsAreVoid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.agent(nil, 0)
	demoted, demotedAddr := e.session(auth.RoleOwner)
	removed, removedAddr := e.session(auth.RoleOwner)
	_, approverAddr := e.session(auth.RoleOwner)
	stays, _ := e.session(auth.RoleOwner)
	recipient, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(hdr http.Header) string {
		status, x := e.exportAs(hdr, id, recipient)
		if status != http.StatusCreated {
			t.Fatalf("request: %d %v", status, x)
		}
		return x["id"].(string)
	}
	byDemoted, byRemoved, approved, untouched := ask(demoted), ask(removed), ask(stays), ask(stays)
	// Approved by an owner and not sealed: no worker runs in this env.
	x, err := wallet.DecideExport(t.Context(), e.db, e.account.ID, uuid.MustParse(id), uuid.MustParse(approved), audit.Actor("user:"+approverAddr), true)
	if err != nil || x.State != wallet.ExportApproved {
		t.Fatalf("approve: %v %v", x.State, err)
	}
	state := func(export string) map[string]any {
		t.Helper()
		status, got := e.doAs(stays, "GET", fmt.Sprintf(exportsPath, id)+"/"+export, nil)
		if status != http.StatusOK {
			t.Fatalf("get export: %d %v", status, got)
		}
		return got
	}

	if status, body := e.doAs(stays, "PATCH", usersPath+"/"+demotedAddr, map[string]any{"role": "approver"}); status != http.StatusOK {
		t.Fatalf("demote: %d %v", status, body)
	}
	if got := state(byDemoted); got["state"] != "void" || !strings.Contains(fmt.Sprint(got["void_reason"]), "user:"+demotedAddr) {
		t.Fatalf("the demoted owner's request: %v", got)
	}
	if got := state(byRemoved); got["state"] != "pending" {
		t.Fatalf("another owner's request after the demotion: %v", got)
	}
	if status, body := e.doAs(stays, "DELETE", usersPath+"/"+removedAddr, nil); status != http.StatusNoContent {
		t.Fatalf("remove: %d %v", status, body)
	}
	if got := state(byRemoved); got["state"] != "void" || !strings.Contains(fmt.Sprint(got["void_reason"]), "was removed") {
		t.Fatalf("the removed owner's request: %v", got)
	}
	if status, body := e.doAs(stays, "PATCH", usersPath+"/"+approverAddr, map[string]any{"role": "viewer"}); status != http.StatusOK {
		t.Fatalf("demote the approver: %d %v", status, body)
	}
	if got := state(approved); got["state"] != "void" || got["sealed_secret"] != nil {
		t.Fatalf("the request the demoted owner approved: %v", got)
	}
	if got := state(untouched); got["state"] != "pending" {
		t.Fatalf("a request no change touched: %v", got)
	}
	// Void for good: no approve revives it.
	status, body := e.doAs(stays, "POST", fmt.Sprintf(exportsPath, id)+"/"+byDemoted+"/approve", nil)
	if status != http.StatusConflict {
		t.Fatalf("approve a void request: %d %v", status, body)
	}
	if n := len(e.auditOf(wallet.ActionExportVoided)); n != 3 {
		t.Fatalf("%d %s entries, want 3", n, wallet.ActionExportVoided)
	}
	changed := e.auditOf(audit.ActionUserChanged)
	removal := e.auditOf(audit.ActionUserRemoved)
	if len(changed) != 2 || details(t, changed[0])["exports_voided"] != 1.0 || details(t, changed[1])["exports_voided"] != 1.0 ||
		len(removal) != 1 || details(t, removal[0])["exports_voided"] != 1.0 {
		t.Fatalf("user.changed %+v, user.removed %+v", changed, removal)
	}
}

// Every user added is announced, whoever added them: one user.added
// event (address, role, added_by) in the outbox and on the other owners'
// live stream, beside the user.added audit entry. A refused add announces
// nothing. A promotion to owner is announced the same way.
func TestOwners_UserAddedIsAnnounced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner, ownerAddr := e.session(auth.RoleOwner)
	watcher, _ := e.session(auth.RoleOwner)
	stream := e.mustOpen(watcher, "")

	added := newAddress()
	if status, body := e.doAs(owner, "POST", usersPath, map[string]any{"address": added, "role": "owner"}); status != http.StatusCreated {
		t.Fatalf("add an owner: %d %v", status, body)
	}
	evs := e.events(userAdded)
	if len(evs) != 1 || evs[0]["address"] != added || evs[0]["role"] != "owner" || evs[0]["added_by"] != "user:"+ownerAddr {
		t.Fatalf("user.added events %v", evs)
	}
	ev, _ := stream.waitFor(userAdded, added)
	if ev.field(t, "data", "added_by") != "user:"+ownerAddr || ev.field(t, "data", "role") != "owner" {
		t.Fatalf("streamed %s", ev.Data)
	}
	entries := e.auditOf(audit.ActionUserAdded)
	if len(entries) != 1 || entries[0].Target != "user:"+added || entries[0].Actor != "user:"+ownerAddr {
		t.Fatalf("user.added entries %+v", entries)
	}

	// Added by an admin key: announced the same way.
	viewer := newAddress()
	if status, body := e.do("POST", usersPath, e.key, map[string]any{"address": viewer, "role": "viewer"}); status != http.StatusCreated {
		t.Fatalf("add a viewer: %d %v", status, body)
	}
	evs = e.events(userAdded)
	if len(evs) != 2 || evs[1]["address"] != viewer || evs[1]["role"] != "viewer" || !strings.HasPrefix(fmt.Sprint(evs[1]["added_by"]), "key_") {
		t.Fatalf("user.added events %v", evs)
	}
	stream.waitFor(userAdded, viewer)

	// Refused or failed adds announce nothing.
	if status, _ := e.do("POST", usersPath, e.key, map[string]any{"address": newAddress(), "role": "owner"}); status != http.StatusForbidden {
		t.Fatalf("an admin key added an owner: %d", status)
	}
	if status, _ := e.doAs(owner, "POST", usersPath, map[string]any{"address": added, "role": "viewer"}); status != http.StatusConflict {
		t.Fatalf("added twice: %d", status)
	}
	if n := len(e.events(userAdded)); n != 2 {
		t.Fatalf("%d user.added events, want 2", n)
	}
	// Promoted to owner: a new owner too, announced with where from.
	if status, body := e.doAs(owner, "PATCH", usersPath+"/"+viewer, map[string]any{"role": "owner"}); status != http.StatusOK {
		t.Fatalf("promote: %d %v", status, body)
	}
	evs = e.events(userAdded)
	if len(evs) != 3 || evs[2]["address"] != viewer || evs[2]["role"] != "owner" || evs[2]["promoted_from"] != "viewer" || evs[2]["added_by"] != "user:"+ownerAddr {
		t.Fatalf("user.added events after a promotion %v", evs)
	}
	stream.waitFor(userAdded, viewer)
	// Endpoints may subscribe to it.
	hook := newReceiver(t, nil)
	if _, secret := e.createEndpoint(hook.URL, userAdded); secret == "" {
		t.Fatal("no endpoint")
	}
}

// A click by the Slack member linked to an owner counts as that owner on
// an approval: no API key links or unlinks an owner's member (403,
// unchanged), while it still may an approver's; an owner signed in to the
// dashboard may link another owner's.
func TestOwners_NoKeyLinksAnOwnersSlackMember(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner, _ := e.session(auth.RoleOwner)
	other := newAddress()
	e.addUser(other, auth.RoleOwner)
	approver := newAddress()
	e.addUser(approver, auth.RoleApprover)
	slackOf := func(address string) *string {
		u, err := auth.GetUser(e.t.Context(), e.db, e.account.ID, address)
		if err != nil {
			t.Fatal(err)
		}
		return u.SlackUserID
	}

	status, body := e.do("PATCH", usersPath+"/"+other, e.key, map[string]any{"slack_user_id": "U0KEYS"})
	wantError(t, status, body, http.StatusForbidden, "cannot change an owner's Slack member id")
	if got := slackOf(other); got != nil {
		t.Fatalf("an admin key linked %s to an owner", *got)
	}
	if status, body := e.do("PATCH", usersPath+"/"+approver, e.key, map[string]any{"slack_user_id": "U0APPR"}); status != http.StatusOK {
		t.Fatalf("an admin key links an approver: %d %v", status, body)
	}
	if status, body := e.doAs(owner, "PATCH", usersPath+"/"+other, map[string]any{"slack_user_id": "U0OWNR"}); status != http.StatusOK {
		t.Fatalf("an owner links another owner: %d %v", status, body)
	}
	status, body = e.do("PATCH", usersPath+"/"+other, e.key, map[string]any{"slack_user_id": nil})
	wantError(t, status, body, http.StatusForbidden, "cannot change an owner's Slack member id")
	if got := slackOf(other); got == nil || *got != "U0OWNR" {
		t.Fatalf("after an admin key's unlink: %v", got)
	}
}
