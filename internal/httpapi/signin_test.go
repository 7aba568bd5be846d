package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// signInBody is the JSON a wallet's signature of input posts.
func signInBody(t testing.TB, w testWallet, input map[string]string) string {
	t.Helper()
	msg, sig := w.signIn(t, input)
	raw, _ := json.Marshal(map[string]string{"nonce": input["nonce"], "address": w.address,
		"message": base64.StdEncoding.EncodeToString(msg), "signature": base64.StdEncoding.EncodeToString(sig)})
	return string(raw)
}

// A page on another site cannot sign a visitor in (login CSRF): a
// <form enctype=text/plain> posting a valid challenge's valid signature
// (its "=" in the signature's padding) is 415, and any request without
// the dashboard's Origin is 403, on the challenge and the sign-in; none
// sets a cookie or uses the nonce, which then signs in from the
// dashboard. A made-up nonce is still 401.
func TestSignIn_RefusesCrossSiteRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newTestWallet(t)
	e.addUser(w.address, auth.RoleOwner)
	input := e.challenge()
	body := signInBody(t, w, input)
	// What the browser sends for <form method=post enctype=text/plain>
	// with one field named `{"nonce":…,"signature":"…=` and value `"}`.
	cut := strings.LastIndex(body, "=")
	form := body[:cut] + "=" + body[cut+1:] + "\r\n"
	for name, hdr := range map[string]http.Header{
		"text/plain from the dashboard's origin": {"Content-Type": {"text/plain"}, "Origin": {dashboardOrigin}},
		"form-encoded":                           {"Content-Type": {"application/x-www-form-urlencoded"}, "Origin": {dashboardOrigin}},
		"no content type":                        {"Content-Type": nil, "Origin": {dashboardOrigin}},
		"text/plain from another site":           {"Content-Type": {"text/plain"}, "Origin": {"https://evil.example"}},
		"JSON from another site":                 {"Origin": {"https://evil.example"}},
		"JSON without an Origin":                 {},
		"JSON from a null origin":                {"Origin": {"null"}},
	} {
		status, raw, h := e.request("POST", httpapi.SessionPath, "", form, hdr)
		want := http.StatusForbidden
		if hdr.Get("Origin") == dashboardOrigin {
			want = http.StatusUnsupportedMediaType
		}
		if status != want || h.Get("Set-Cookie") != "" || !strings.Contains(string(raw), `"error"`) {
			t.Fatalf("sign-in, %s: %d %s (cookie %q), want %d", name, status, raw, h.Get("Set-Cookie"), want)
		}
		status, raw, _ = e.request("POST", httpapi.SessionPath+"/challenge", "", "{}", hdr)
		if status != want || strings.Contains(string(raw), "nonce") {
			t.Fatalf("challenge, %s: %d %s, want %d", name, status, raw, want)
		}
	}
	// The dashboard's challenge call: {} as JSON; a body that says
	// something is refused.
	status, raw, _ := e.request("POST", httpapi.SessionPath+"/challenge", "", `{"domain":"evil.example"}`, fromDashboard)
	if status != http.StatusBadRequest {
		t.Fatalf("challenge with a body: %d %s", status, raw)
	}
	if n := len(e.auditOf(audit.ActionSignedIn)); n != 0 {
		t.Fatalf("%d sign-ins after refusals", n)
	}

	// A made-up nonce, from the dashboard, as JSON.
	made := map[string]string{}
	for k, v := range input {
		made[k] = v
	}
	made["nonce"] = "madeUpNonce123456"
	m, s := w.signIn(t, made)
	status, got, h := e.verify(made["nonce"], w.address, m, s)
	wantError(t, status, got, http.StatusUnauthorized, "unknown or already used")
	if h.Get("Set-Cookie") != "" {
		t.Fatalf("made-up nonce set a cookie")
	}

	// The refused requests left the nonce unused: the dashboard signs in
	// with it (charset parameter allowed).
	hdr := http.Header{"Origin": {dashboardOrigin}, "Content-Type": {"application/json; charset=utf-8"}}
	status, raw, h = e.request("POST", httpapi.SessionPath, "", body, hdr)
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Set-Cookie"), "aw_session=") {
		t.Fatalf("sign-in from the dashboard: %d %s %v", status, raw, h)
	}
}

// A refused sign-in writes nothing into the accounts of the address it
// names (it proved nothing); it is counted by reason in
// dashboard_sign_in_refusals_total. A verified sign-in is still audited.
func TestSignIn_RefusalsWriteNoAudit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	victim := newTestWallet(t)
	other, _ := e.newAccount(solana.Mainnet)
	for _, a := range []auth.Account{e.account, other} {
		if _, err := auth.AddUser(context.Background(), e.db, a.ID, victim.address, auth.RoleOwner, "operator"); err != nil {
			t.Fatal(err)
		}
	}
	actorEntries := func() int64 {
		n, err := e.db.NewSelect().Table("audit_log").Where("actor = ?", "user:"+victim.address).Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := actorEntries()

	// A signature by someone else, a made-up nonce, and a message for
	// another domain, each for the victim's address.
	in := e.challenge()
	m, _ := victim.signIn(t, in)
	status, body, _ := e.verify(in["nonce"], victim.address, m, ed25519.Sign(newTestWallet(t).priv, m))
	wantError(t, status, body, http.StatusUnauthorized, "signature does not verify")
	status, body, _ = e.verify("madeUpNonce123456", victim.address, m, ed25519.Sign(newTestWallet(t).priv, m))
	wantError(t, status, body, http.StatusUnauthorized, "unknown or already used")
	in = e.challenge()
	in["domain"] = "evil.example"
	m, sig := victim.signIn(t, in)
	status, body, _ = e.verify(in["nonce"], victim.address, m, sig)
	wantError(t, status, body, http.StatusUnauthorized, "not this sign-in request")
	if n := actorEntries(); n != before {
		t.Fatalf("refused sign-ins wrote %d audit entries as user:%s", n-before, victim.address)
	}
	for _, reason := range []string{"bad_signature", "unknown_request", "wrong_message"} {
		if got := e.metric(`dashboard_sign_in_refusals_total{reason="` + reason + `"}`); got != 1 {
			t.Fatalf("refusals counted for %s: %v, want 1", reason, got)
		}
	}

	// The victim's own sign-in is audited, once, in the account it opens.
	in = e.challenge()
	m, sig = victim.signIn(t, in)
	if status, body, _ := e.verify(in["nonce"], victim.address, m, sig); status != http.StatusOK {
		t.Fatalf("sign-in: %d %v", status, body)
	}
	if n := actorEntries(); n != before+1 {
		t.Fatalf("%d entries after a verified sign-in, want one", n-before)
	}
	var en audit.Record
	if err := e.db.NewSelect().Model(&en).Where("actor = ?", "user:"+victim.address).OrderExpr("at DESC").Limit(1).Scan(context.Background()); err != nil || en.Action != audit.ActionSignedIn {
		t.Fatalf("entry %+v %v", en, err)
	}
}

// metric reads one series' value from the API's /metrics (0 if absent).
func (e *env) metric(series string) float64 {
	e.t.Helper()
	_, raw, _ := e.request("GET", "/metrics", "", nil, nil)
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				e.t.Fatal(err)
			}
			return f
		}
	}
	return 0
}

// The sign-in routes count in the client's anonymous bucket and every
// answer that counted carries its x-ratelimit-* headers: 200, 401, and
// the 429 (with Retry-After).
func TestSignIn_AnswersCarryRateLimitHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{limits: &ratelimit.Limits{Anonymous: 3}})
	awayFromMinuteEnd()
	w := newTestWallet(t)
	challenge := func() (int, http.Header) {
		status, _, h := e.request("POST", httpapi.SessionPath+"/challenge", "", map[string]any{}, fromDashboard)
		return status, h
	}
	status, h := challenge()
	if status != 200 {
		t.Fatalf("challenge: %d", status)
	}
	wantLimitHeaders(t, "challenge", h, 3, 2)
	status, body, h := e.verify("madeUpNonce123456", w.address, []byte("m"), []byte("s"))
	wantError(t, status, body, http.StatusUnauthorized, "unknown or already used")
	wantLimitHeaders(t, "401", h, 3, 1)
	challenge()
	status, h = challenge()
	if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Fatalf("challenge past the limit: %d %v", status, h)
	}
	wantLimitHeaders(t, "challenge 429", h, 3, 0)
	status, body, h = e.verify("madeUpNonce123456", w.address, []byte("m"), []byte("s"))
	wantError(t, status, body, http.StatusTooManyRequests, "Rate limited")
	wantLimitHeaders(t, "sign-in 429", h, 3, 0)
	if h.Get("Retry-After") == "" {
		t.Fatalf("sign-in 429 without Retry-After: %v", h)
	}
}
