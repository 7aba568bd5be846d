package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
	if _, err := auth.AddUser(context.Background(), e.db, e.account.ID, w.address, auth.RoleOwner); err != nil {
		t.Fatal(err)
	}
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
		if _, err := auth.AddUser(context.Background(), e.db, a.ID, victim.address, auth.RoleOwner); err != nil {
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
	var en audit.Entry
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

// wantLimitHeaders checks an answer's x-ratelimit-* headers.
func wantLimitHeaders(t testing.TB, what string, h http.Header, limit, remaining int) {
	t.Helper()
	reset, err := strconv.ParseInt(h.Get("x-ratelimit-reset"), 10, 64)
	now := time.Now().Unix()
	if h.Get("x-ratelimit-limit") != strconv.Itoa(limit) || h.Get("x-ratelimit-remaining") != strconv.Itoa(remaining) ||
		err != nil || reset <= now || reset > now+60 {
		t.Fatalf("%s: headers %v, want limit %d, remaining %d", what, h, limit, remaining)
	}
}

// Bad keys on /mcp count in the client's anonymous bucket as on the API:
// 401 {"error":"Unauthorized"} with the bucket's headers, then 429 with
// Retry-After, and the API's routes share that bucket.
func TestMCP_BadKeysAreRateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{limits: &ratelimit.Limits{Anonymous: 3}})
	awayFromMinuteEnd()
	rpc := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for i, key := range []string{"svc_test_" + newAddress(), "nope", ""} {
		status, raw, h := e.request("POST", httpapi.MCPPath, key, rpc, nil)
		if status != http.StatusUnauthorized || strings.TrimSpace(string(raw)) != `{"error":"Unauthorized"}` {
			t.Fatalf("bad key %d: %d %s", i, status, raw)
		}
		wantLimitHeaders(t, fmt.Sprintf("bad key %d", i), h, 3, 2-i)
	}
	status, body, h := e.doH("POST", httpapi.MCPPath, "svc_test_"+newAddress(), json.RawMessage(rpc))
	wantError(t, status, body, http.StatusTooManyRequests, "Rate limited")
	wantLimitHeaders(t, "429", h, 3, 0)
	if r, err := strconv.Atoi(h.Get("Retry-After")); err != nil || r < 1 || r > 60 {
		t.Fatalf("Retry-After %q", h.Get("Retry-After"))
	}
	status, body, _ = e.doH("GET", "/api/public/v1/agents", "nope", nil)
	wantError(t, status, body, http.StatusTooManyRequests, "Rate limited")
	// A valid key is not in that bucket.
	_, agentKey := e.agentKey()
	if status, raw, _ := e.request("POST", httpapi.MCPPath, agentKey, rpc, mcpHeaders); status != http.StatusOK {
		t.Fatalf("valid key: %d %s", status, raw)
	}
}

// mcpHeaders are what a streamable-HTTP MCP client sends.
var mcpHeaders = http.Header{"Accept": {"application/json, text/event-stream"}}

// With Postgres unreachable a caller whose key cannot be checked gets a
// fixed 503, never the driver's text (user, database, address).
func TestMCP_DatabaseDownIs503WithoutInternals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{proxied: true})
	_, agentKey := e.agentKey()
	u, err := url.Parse(e.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	rpc := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	unknown := "svc_test_" + newAddress() // well-formed: it is looked up
	for _, mode := range []struct {
		name string
		m    proxyMode
	}{{"refused", proxyRefuse}, {"blackholed", proxyBlackhole}} {
		e.pgProxy.set(mode.m)
		for _, key := range []string{unknown, agentKey} {
			status, raw, h := e.request("POST", httpapi.MCPPath, key, rpc, mcpHeaders)
			if status != http.StatusServiceUnavailable || strings.TrimSpace(string(raw)) != `{"error":"authentication unavailable; try again"}` {
				t.Fatalf("%s: %d %s", mode.name, status, raw)
			}
			for _, leak := range []string{dbName, "postgres", "127.0.0.1", "dial", "connect"} {
				if strings.Contains(string(raw), leak) {
					t.Fatalf("%s: the answer names %q: %s", mode.name, leak, raw)
				}
			}
			if h.Get("x-ratelimit-limit") == "" {
				t.Fatalf("%s: no rate-limit headers: %v", mode.name, h)
			}
		}
		e.pgProxy.set(proxyUp)
	}
}

// /mcp bodies are bounded like the API's: past 64 KiB is 413, nothing
// read; a large body within it is served.
func TestMCP_BodyOver64KiBIs413(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, agentKey := e.agentKey()
	padded := func(n int) string {
		head := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"pad":"`
		tail := `"}}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	status, body, _ := e.doH("POST", httpapi.MCPPath, agentKey, json.RawMessage(padded(httpapi.MaxBodyBytes+1)))
	wantError(t, status, body, http.StatusRequestEntityTooLarge, "larger than 64 KiB")
	if status, raw, _ := e.request("POST", httpapi.MCPPath, agentKey, padded(httpapi.MaxBodyBytes), mcpHeaders); status != http.StatusOK {
		t.Fatalf("64 KiB: %d %s", status, raw)
	}
}

// Behind a trusted proxy each client has its own anonymous bucket, named
// by the rightmost X-Forwarded-For address that is not a trusted proxy
// (what a client prepends changes nothing); from a peer that is not
// trusted the header is ignored.
func TestRateLimits_ClientsBehindATrustedProxyHaveOwnBuckets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	serve := func(trusted string) string {
		ps, err := ratelimit.ParseProxies(trusted)
		if err != nil {
			t.Fatal(err)
		}
		h, closeAPI := httpapi.New(httpapi.Deps{DB: e.db, Redis: e.rdb, DashboardOrigin: dashboardOrigin,
			RateLimits: &ratelimit.Limits{Anonymous: 2}, TrustedProxies: ps})
		srv := httptest.NewServer(h)
		t.Cleanup(func() { srv.Close(); closeAPI() })
		return srv.URL
	}
	awayFromMinuteEnd()
	get := func(base, forwarded string) (int, http.Header) {
		c := e.with(t)
		c.url = base
		var hdr http.Header
		if forwarded != "" {
			hdr = http.Header{"X-Forwarded-For": strings.Split(forwarded, "|")}
		}
		status, _, h := c.request("GET", "/api/public/v1/agents", "", nil, hdr)
		return status, h
	}

	// Untrusted peer: every request is the peer's, whatever it forwards.
	direct := serve("")
	for i, forwarded := range []string{"198.51.100.5", "198.51.100.6"} {
		if status, h := get(direct, forwarded); status != 401 || h.Get("x-ratelimit-remaining") != strconv.Itoa(1-i) {
			t.Fatalf("spoofed header %d: %d %v", i, status, h)
		}
	}
	if status, _ := get(direct, "198.51.100.7"); status != http.StatusTooManyRequests {
		t.Fatalf("a spoofed header escaped the peer's bucket: %d", status)
	}

	// Trusted: the test's peer (loopback) and a second proxy hop.
	behind := serve("127.0.0.1/32, 10.0.0.0/8")
	for i, c := range []struct {
		forwarded      string
		status, remain int
	}{
		{"198.51.100.1", 401, 1},
		{"203.0.113.9, 198.51.100.1", 401, 0}, // a prepended address is the client's own claim
		{"198.51.100.2", 401, 1},              // another client: its own bucket
		{"198.51.100.1, 10.1.2.3", 429, 0},    // through the second proxy: still client 1
		{"203.0.113.9|198.51.100.1", 429, 0},  // the same, over two header lines
		{"198.51.100.3:4711", 401, 1},         // a port is not part of the address
		{"garbage, 198.51.100.2", 401, 0},     // client 2
		{"198.51.100.4, garbage", 429, 0},     // not an address: the peer's bucket, spent above
	} {
		status, h := get(behind, c.forwarded)
		if status != c.status || h.Get("x-ratelimit-remaining") != strconv.Itoa(c.remain) {
			t.Fatalf("behind a trusted proxy, %d (%s): %d %v, want %d remaining %d", i, c.forwarded, status, h, c.status, c.remain)
		}
	}
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

// The documents name people as the service writes them (user:<address>),
// never usr_…, and say that unkeyed requests count in a bucket.
func TestDocs_NamePeopleAsTheServiceWritesThem(t *testing.T) {
	t.Parallel()
	v31, _, err := httpapi.OpenAPIDocuments()
	if err != nil {
		t.Fatal(err)
	}
	decisions, err := os.ReadFile(filepath.Join("..", "..", "docs", "decisions.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{"the OpenAPI document": string(v31), "docs/decisions.md": string(decisions)} {
		for _, stale := range []string{"usr_… (dashboard user)", "`usr_…` (dashboard user)", "usr_…, slack", "counts nowhere"} {
			if strings.Contains(doc, stale) {
				t.Errorf("%s says %q", name, stale)
			}
		}
		if !strings.Contains(doc, "user:<address>") {
			t.Errorf("%s never names a person as user:<address>", name)
		}
	}
}
