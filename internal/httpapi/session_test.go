package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mr-tron/base58"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
)

// wallet is a dashboard user's Solana wallet in a test.
type testWallet struct {
	priv    ed25519.PrivateKey
	address string
}

func newTestWallet(t testing.TB) testWallet {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testWallet{priv: priv, address: base58.Encode(pub)}
}

// fromDashboard is what the dashboard's own sign-in requests carry.
var fromDashboard = http.Header{"Origin": {dashboardOrigin}}

// challenge asks the API for a sign-in input, as the dashboard does.
func (e *env) challenge() map[string]string {
	e.t.Helper()
	status, raw, _ := e.request("POST", httpapi.SessionPath+"/challenge", "", map[string]any{}, fromDashboard)
	var body struct{ Input map[string]string }
	if err := json.Unmarshal(raw, &body); status != 200 || err != nil {
		e.t.Fatalf("challenge: %d %s", status, raw)
	}
	return body.Input
}

// verify posts a signed sign-in message; it returns the status, the
// body and the answer's headers.
func (e *env) verify(nonce, address string, message, signature []byte) (int, map[string]any, http.Header) {
	e.t.Helper()
	status, raw, h := e.request("POST", httpapi.SessionPath, "", map[string]any{"nonce": nonce, "address": address,
		"message": base64.StdEncoding.EncodeToString(message), "signature": base64.StdEncoding.EncodeToString(signature)}, fromDashboard)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	return status, body, h
}

// signIn signs input's text for w as a wallet would.
func (w testWallet) signIn(t testing.TB, input map[string]string) ([]byte, []byte) {
	t.Helper()
	in, err := auth.SignInFromInput(input)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte(in.Text(w.address))
	return msg, ed25519.Sign(w.priv, msg)
}

// Sign-In With Solana through the API alone: the server's input, signed,
// starts a session (HttpOnly, SameSite=Strict cookie and a CSRF token)
// that authenticates the public API; a replayed nonce, a message for
// another domain, a bad signature, an expired request and an address that
// is no user are refused with 401 and not audited (logged and counted).
func TestSignInWithSolana(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newTestWallet(t)
	e.addUser(w.address, auth.RoleOwner)
	input := e.challenge()
	if input["domain"] != "127.0.0.1:8080" || input["uri"] != dashboardOrigin || len(input["nonce"]) < 8 || input["version"] != "1" {
		t.Fatalf("input %v", input)
	}
	msg, sig := w.signIn(t, input)
	status, body, h := e.verify(input["nonce"], w.address, msg, sig)
	if status != 200 || body["address"] != w.address || body["role"] != "owner" || body["csrf_token"] == nil || body["account_id"] != e.account.ID.String() {
		t.Fatalf("verify: %d %v", status, body)
	}
	cookie := h.Get("Set-Cookie")
	if !strings.HasPrefix(cookie, "aw_session=") || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") || strings.Contains(cookie, "Secure") {
		t.Fatalf("cookie %q", cookie)
	}
	hdr := http.Header{"Cookie": {strings.SplitN(cookie, ";", 2)[0]}}
	if status, raw, _ := e.request("GET", "/api/public/v1/agents", "", nil, hdr); status != 200 {
		t.Fatalf("the session on the public API: %d %s", status, raw)
	}
	if status, raw, _ := e.request("GET", httpapi.SessionPath, "", nil, hdr); status != 200 || !strings.Contains(string(raw), body["csrf_token"].(string)) {
		t.Fatalf("session: %d %s", status, raw)
	}

	// Refusals.
	status, body, _ = e.verify(input["nonce"], w.address, msg, sig)
	wantError(t, status, body, 401, "unknown or already used")
	in2 := e.challenge()
	evil := map[string]string{}
	for k, v := range in2 {
		evil[k] = v
	}
	evil["domain"], evil["uri"] = "evil.example", "https://evil.example"
	m, s := w.signIn(t, evil)
	status, body, _ = e.verify(in2["nonce"], w.address, m, s)
	wantError(t, status, body, 401, "not this sign-in request")
	in3 := e.challenge()
	m, _ = w.signIn(t, in3)
	status, body, _ = e.verify(in3["nonce"], w.address, m, ed25519.Sign(newTestWallet(t).priv, m))
	wantError(t, status, body, 401, "signature does not verify")
	stranger := newTestWallet(t)
	in4 := e.challenge()
	m, s = stranger.signIn(t, in4)
	status, body, _ = e.verify(in4["nonce"], stranger.address, m, s)
	wantError(t, status, body, 401, "no user of any account")
	// An input whose five minutes are up (aged in the store).
	in5 := e.challenge()
	in5["expirationTime"] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	raw, _ := json.Marshal(in5)
	if err := e.rdb.Set(context.Background(), "agentwallet:siws:"+in5["nonce"], raw, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	m, s = w.signIn(t, in5)
	status, body, _ = e.verify(in5["nonce"], w.address, m, s)
	wantError(t, status, body, 401, "expired")

	if n := len(e.auditOf(audit.ActionSignedIn)); n != 1 {
		t.Fatalf("%d sign-ins audited", n)
	}
	if n := len(e.auditOf(audit.ActionSignInFailed)); n != 0 {
		t.Fatalf("%d refusals audited, want none", n)
	}

	// Sign-out ends the session on the server.
	csrf := http.Header{"Cookie": hdr["Cookie"], "X-Csrf-Token": {fmt.Sprint(e.sessionCSRF(hdr))}, "Origin": {dashboardOrigin}}
	if status, raw, _ := e.request("DELETE", httpapi.SessionPath, "", nil, csrf); status != 204 {
		t.Fatalf("sign-out: %d %s", status, raw)
	}
	if status, _, _ := e.request("GET", "/api/public/v1/agents", "", nil, hdr); status != 401 {
		t.Fatalf("after sign-out: %d", status)
	}
}

// sessionCSRF reads a session's CSRF token.
func (e *env) sessionCSRF(hdr http.Header) string {
	e.t.Helper()
	_, raw, _ := e.request("GET", httpapi.SessionPath, "", nil, hdr)
	var s struct {
		CSRFToken string `json:"csrf_token"`
	}
	json.Unmarshal(raw, &s)
	return s.CSRFToken
}

// A cookie-authenticated unsafe request needs the session's CSRF token and
// the dashboard's Origin: without either it is 403 and changes nothing.
// Viewers cannot approve; approvers approve as user:<address>.
func TestSessionWritesNeedCSRF(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 1}, 10_000_000)
	hdr, _ := e.session(auth.RoleApprover)
	freeze := "/api/public/v1/agents/" + id + "/freeze"
	for name, h := range map[string]http.Header{
		"no token":     {"Cookie": hdr["Cookie"], "Origin": hdr["Origin"]},
		"wrong token":  {"Cookie": hdr["Cookie"], "Origin": hdr["Origin"], "X-Csrf-Token": {"nope"}},
		"no origin":    {"Cookie": hdr["Cookie"], "X-Csrf-Token": hdr["X-Csrf-Token"]},
		"other origin": {"Cookie": hdr["Cookie"], "X-Csrf-Token": hdr["X-Csrf-Token"], "Origin": {"https://evil.example"}},
	} {
		status, raw, _ := e.request("POST", freeze, "", nil, h)
		if status != 403 || !strings.Contains(string(raw), "refused") && !strings.Contains(string(raw), "CSRF") {
			t.Fatalf("%s: %d %s", name, status, raw)
		}
	}
	if status, a := e.do("GET", "/api/public/v1/agents/"+id, e.key, nil); status != 200 || a["state"] != "active" {
		t.Fatalf("refused writes froze the wallet: %v", a)
	}

	to := newAddress()
	apID := e.park(id, to, 2)
	viewer, _ := e.session(auth.RoleViewer)
	status, raw, _ := e.request("POST", approvalsPath+"/"+apID+"/approve", "", nil, viewer)
	if status != 403 || !strings.Contains(string(raw), "this user's role (viewer) cannot approve payments") {
		t.Fatalf("viewer approve: %d %s", status, raw)
	}
	approver, address := e.session(auth.RoleApprover)
	status, raw, _ = e.request("POST", approvalsPath+"/"+apID+"/approve", "", map[string]any{"note": "ok"}, approver)
	var a map[string]any
	json.Unmarshal(raw, &a)
	if status != 200 || a["status"] != "sent" || a["approved_by"] != "user:"+address {
		t.Fatalf("approver approve: %d %s", status, raw)
	}
	e.paidOnce(eng, apID, a["signature"].(string), to, 2_000_000)
}

// Owners manage users over the API; the last owner is never removed or
// demoted; a removed user's session ends.
func TestUsersRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner, ownerAddr := e.session(auth.RoleOwner)
	b := newAddress()
	status, raw, _ := e.request("POST", "/api/public/v1/users", "", map[string]any{"address": b, "role": "approver"}, owner)
	if status != 201 {
		t.Fatalf("add: %d %s", status, raw)
	}
	status, raw, _ = e.request("POST", "/api/public/v1/users", "", map[string]any{"address": b, "role": "viewer"}, owner)
	if status != 409 {
		t.Fatalf("add twice: %d %s", status, raw)
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"PATCH", "/api/public/v1/users/" + ownerAddr, map[string]any{"role": "viewer"}},
		{"DELETE", "/api/public/v1/users/" + ownerAddr, nil},
	} {
		status, raw, _ := e.request(c.method, c.path, "", c.body, owner)
		if status != 409 || !strings.Contains(string(raw), "last owner") {
			t.Fatalf("%s the last owner: %d %s", c.method, status, raw)
		}
	}
	// With a second owner, the first may step down.
	if status, raw, _ := e.request("PATCH", "/api/public/v1/users/"+b, "", map[string]any{"role": "owner"}, owner); status != 200 {
		t.Fatalf("promote: %d %s", status, raw)
	}
	if status, raw, _ := e.request("PATCH", "/api/public/v1/users/"+ownerAddr, "", map[string]any{"role": "viewer"}, owner); status != 200 {
		t.Fatalf("step down: %d %s", status, raw)
	}
	// Now a viewer: it reads users but changes none.
	if status, _, _ := e.request("GET", "/api/public/v1/users", "", nil, owner); status != 200 {
		t.Fatalf("viewer lists users: %d", status)
	}
	if status, _, _ := e.request("DELETE", "/api/public/v1/users/"+b, "", nil, owner); status != 403 {
		t.Fatalf("viewer removes a user: %d", status)
	}
	// The admin key removes the viewer (no longer an owner); its session ends.
	if status, body := e.do("DELETE", "/api/public/v1/users/"+ownerAddr, e.key, nil); status != 204 {
		t.Fatalf("remove: %d %v", status, body)
	}
	if status, _, _ := e.request("GET", "/api/public/v1/agents", "", nil, owner); status != 401 {
		t.Fatalf("removed user's session: %d", status)
	}
	if n := len(e.auditOf(audit.ActionUserAdded)) + len(e.auditOf(audit.ActionUserChanged)) + len(e.auditOf(audit.ActionUserRemoved)); n != 4 {
		t.Fatalf("%d user audit entries, want 4", n)
	}
}
