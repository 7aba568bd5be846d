package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
)

const keysPath = "/api/public/v1/keys"

// listKeys returns the account's keys by id, as the key lister sees them.
func (e *env) listKeys(key string) map[string]map[string]any {
	e.t.Helper()
	status, body := e.do("GET", keysPath, key, nil)
	if status != http.StatusOK {
		e.t.Fatalf("list keys: %d %v", status, body)
	}
	out := map[string]map[string]any{}
	for _, k := range body["keys"].([]any) {
		m := k.(map[string]any)
		for field := range m {
			switch field {
			case "id", "prefix", "role", "wallet_ids", "label", "can_approve", "created_at", "last_used_at", "revoked_at", "replaced_by", "created_by":
			default:
				e.t.Fatalf("listed key has field %q: %v", field, m)
			}
		}
		out[m["id"].(string)] = m
	}
	return out
}

func TestListKeysNeverShowsSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	opID := "key_" + keyIDOf(t, e, e.key)
	agentID, agentKey := e.agentKey()
	// An agent key lists itself and the keys it created; an admin key
	// every key.
	if ks := e.listKeys(agentKey); len(ks) != 1 || ks[agentID] == nil {
		t.Fatalf("the agent's keys: %v", ks)
	}
	ks := e.listKeys(e.key)
	if len(ks) != 2 {
		t.Fatalf("keys: %v", ks)
	}
	if op := ks[opID]; op["role"] != "admin" || op["can_approve"] != true || op["revoked_at"] != nil || op["wallet_ids"] != nil || !strings.HasPrefix(e.key, op["prefix"].(string)) {
		t.Fatalf("admin key: %v", op)
	}
	if ag := ks[agentID]; ag["role"] != "agent" || ag["can_approve"] != false || !strings.HasPrefix(agentKey, ag["prefix"].(string)) {
		t.Fatalf("agent key: %v", ag)
	}
	// Both were used: the admin to make the agent key, the agent to list.
	if ks[opID]["last_used_at"] == nil || ks[agentID]["last_used_at"] == nil {
		t.Fatalf("last_used_at not set: %v", ks)
	}
	// Another account sees only its own.
	_, otherKey := e.newAccount("devnet")
	if other := e.listKeys(otherKey); len(other) != 1 || other[opID] != nil {
		t.Fatalf("other account's keys: %v", other)
	}
	// Pages: one key per page, no key twice.
	seen := map[string]bool{}
	cursor := ""
	for range 3 {
		status, body := e.do("GET", keysPath+"?limit=1"+cursor, e.key, nil)
		if status != 200 {
			t.Fatalf("page: %d %v", status, body)
		}
		for _, k := range body["keys"].([]any) {
			id := k.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("key %s twice", id)
			}
			seen[id] = true
		}
		next, _ := body["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = "&cursor=" + next
	}
	if len(seen) != 2 {
		t.Fatalf("pages visited %v", seen)
	}
}

func TestRotateKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	oldID := "key_" + keyIDOf(t, e, e.key)
	// A second API instance over the same database, which has just
	// served the old key.
	h, closeOps := httpapi.New(httpapi.Deps{DB: e.db, Redis: e.rdb, RateLimits: &ratelimit.Limits{Read: 1000, Write: 1000, Send: 1000}})
	t.Cleanup(closeOps)
	other := e.with(t)
	other.url = newTestServer(t, h)
	if status, body := other.do("GET", "/api/public/v1/agents", e.key, nil); status != 200 {
		t.Fatalf("other instance: %d %v", status, body)
	}
	status, body := e.do("POST", keysPath+"/"+oldID+"/rotate", e.key, nil)
	if status != http.StatusOK || body["replaces"] != oldID || body["role"] != "admin" || body["can_approve"] != true {
		t.Fatalf("rotate: %d %v", status, body)
	}
	newKey, newID := body["key"].(string), body["id"].(string)
	if !strings.HasPrefix(newKey, "svc_test_") || newKey == e.key || !strings.HasPrefix(newKey, body["prefix"].(string)) {
		t.Fatalf("new key %q", newKey)
	}
	// The old key is refused on the very next request; the new one works.
	for _, instance := range []*env{e, other} {
		status, body = instance.do("GET", "/api/public/v1/agents", e.key, nil)
		wantError(t, status, body, http.StatusUnauthorized, "Unauthorized")
		if status, body := instance.do("GET", "/api/public/v1/agents", newKey, nil); status != 200 {
			t.Fatalf("new key: %d %v", status, body)
		}
	}
	ks := e.listKeys(newKey)
	if ks[oldID]["revoked_at"] == nil || ks[oldID]["replaced_by"] != newID || ks[newID]["can_approve"] != true {
		t.Fatalf("after rotation: %v", ks)
	}
	// A revoked key cannot be rotated again.
	status, body = e.do("POST", keysPath+"/"+oldID+"/rotate", newKey, nil)
	wantError(t, status, body, http.StatusConflict, "already revoked")
	if got := e.auditOf("key.rotated"); len(got) != 1 || got[0].Actor != oldID || got[0].Target != "key:"+oldID {
		t.Fatalf("audit: %+v", got)
	}
}

func TestAgentKeysCannotManageAdminKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	opID := "key_" + keyIDOf(t, e, e.key)
	agentID, agentKey := e.agentKey()
	for _, tc := range []struct{ method, path string }{
		{"POST", keysPath + "/" + opID + "/rotate"},
		{"DELETE", keysPath + "/" + opID},
	} {
		status, body := e.do(tc.method, tc.path, agentKey, nil)
		wantError(t, status, body, http.StatusForbidden, "this key's role (agent) may")
	}
	if status, _ := e.do("GET", "/api/public/v1/agents", e.key, nil); status != 200 {
		t.Fatal("the admin key stopped working")
	}
	// An agent key rotates itself into another agent key.
	status, body := e.do("POST", keysPath+"/"+agentID+"/rotate", agentKey, nil)
	if status != 200 || body["can_approve"] != false {
		t.Fatalf("agent self-rotation: %d %v", status, body)
	}
	if status, _ := e.do("GET", "/api/public/v1/agents", agentKey, nil); status != 401 {
		t.Fatalf("rotated agent key: %d", status)
	}
	if status, _ := e.do("GET", "/api/public/v1/agents", body["key"].(string), nil); status != 200 {
		t.Fatalf("new agent key: %d", status)
	}
}

// An agent key manages itself and the keys it created, not its siblings';
// rotating it hands its keys to the successor.
func TestAgentKeysManageOnlyTheirOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, agentA := e.agentKey()
	siblingID, sibling := e.agentKey()
	for _, tc := range []struct{ method, path string }{
		{"POST", keysPath + "/" + siblingID + "/rotate"},
		{"DELETE", keysPath + "/" + siblingID},
	} {
		status, body := e.do(tc.method, tc.path, agentA, nil)
		wantError(t, status, body, http.StatusForbidden, "only itself and the keys it created")
	}
	if status, _ := e.do("GET", "/api/public/v1/agents", sibling, nil); status != 200 {
		t.Fatal("the sibling's key stopped working")
	}
	// A creates C; A is rotated into A2; A2 (not A) manages C.
	status, c := e.do("POST", keysPath, agentA, nil)
	if status != 201 {
		t.Fatalf("create: %d %v", status, c)
	}
	status, a2 := e.do("POST", keysPath+"/"+keyIDOf(t, e, agentA)+"/rotate", agentA, nil)
	if status != 200 {
		t.Fatalf("rotate: %d %v", status, a2)
	}
	status, body := e.do("POST", keysPath+"/"+c["id"].(string)+"/rotate", a2["key"].(string), nil)
	if status != 200 || body["can_approve"] != false {
		t.Fatalf("successor rotating its key: %d %v", status, body)
	}
	// The operator key manages every key.
	if status, body := e.do("DELETE", keysPath+"/"+siblingID, e.key, nil); status != 200 {
		t.Fatalf("operator revoking: %d %v", status, body)
	}
}

func TestRevokeKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	agentID, agentKey := e.agentKey()
	status, body := e.do("DELETE", keysPath+"/"+agentID, e.key, nil)
	if status != 200 || body["id"] != agentID || body["revoked_at"] == nil || body["key"] != nil {
		t.Fatalf("revoke: %d %v", status, body)
	}
	status, body = e.do("GET", "/api/public/v1/agents", agentKey, nil)
	wantError(t, status, body, http.StatusUnauthorized, "Unauthorized")
	// Again: nothing changes, no second audit entry.
	if status, again := e.do("DELETE", keysPath+"/"+agentID, e.key, nil); status != 200 || again["revoked_at"] != body["revoked_at"] && again["revoked_at"] == nil {
		t.Fatalf("revoke again: %d %v", status, again)
	}
	if got := e.auditOf("key.revoked"); len(got) != 1 || got[0].Target != "key:"+agentID {
		t.Fatalf("audit: %+v", got)
	}
	// A key may revoke itself; it is refused from the next request on.
	selfID := "key_" + keyIDOf(t, e, e.key)
	if status, _ := e.do("DELETE", keysPath+"/"+selfID, e.key, nil); status != 200 {
		t.Fatalf("self revoke: %d", status)
	}
	if status, _ := e.do("GET", keysPath, e.key, nil); status != 401 {
		t.Fatalf("self-revoked key: %d", status)
	}
}

// Another account's key, an unknown one or a malformed id: 404, and the
// key keeps working.
func TestKeyOfAnotherAccountIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, otherKey := e.newAccount("devnet")
	otherID := "key_" + keyIDOf(t, e, otherKey)
	for _, id := range []string{otherID, "key_00000000-0000-4000-8000-000000000000", "nope", strings.TrimPrefix(otherID, "key_")} {
		status, body := e.do("POST", keysPath+"/"+id+"/rotate", e.key, nil)
		wantError(t, status, body, http.StatusNotFound, "key not found")
		status, body = e.do("DELETE", keysPath+"/"+id, e.key, nil)
		wantError(t, status, body, http.StatusNotFound, "key not found")
	}
	if status, _ := e.do("GET", keysPath, otherKey, nil); status != 200 {
		t.Fatal("the other account's key was touched")
	}
}

// An account holds at most 100 live agent keys (rate limits count per
// key); concurrent creates never pass the bound, and a revocation makes
// room.
func TestAgentKeysAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	firstID, _ := e.agentKey()
	for range auth.MaxAgentKeys - 5 {
		e.agentKey()
	}
	created := concurrently(t, 12, func(int) int {
		status, _ := e.with(t).do("POST", keysPath, e.key, nil)
		return status
	})
	if created != 4 {
		t.Fatalf("%d of 12 concurrent creates passed with room for 4", created)
	}
	status, body := e.do("POST", keysPath, e.key, nil)
	wantError(t, status, body, http.StatusConflict, "revoke one first")
	// A revocation makes room.
	if status, body := e.do("DELETE", keysPath+"/"+firstID, e.key, nil); status != 200 {
		t.Fatalf("revoke: %d %v", status, body)
	}
	e.agentKey()
}
