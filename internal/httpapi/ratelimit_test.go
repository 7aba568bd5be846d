package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// awayFromMinuteEnd waits, if needed, so a test's requests fall in one
// rate-limit window.
func awayFromMinuteEnd() {
	if s := time.Now().Second(); s >= 45 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
}

// The spec's limits: the 31st send in a minute on one key is 429 with
// Retry-After; the headers are on 2xx, 4xx and 429 answers; another key
// and other buckets have their own windows.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{limits: &ratelimit.Default})
	e.startWorker()
	id, _ := e.agent(map[string]any{"max_tx_usdc": 1}, 10_000_000)
	to := newAddress()
	awayFromMinuteEnd()

	var reset int64
	for i := 1; i <= 30; i++ {
		status, body, h := e.doH("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 2}) // blocked: fast
		if status != http.StatusForbidden || h.Get("x-ratelimit-limit") != "30" || h.Get("x-ratelimit-remaining") != strconv.Itoa(30-i) {
			t.Fatalf("send %d: %d %v %v", i, status, body, h)
		}
		reset, _ = strconv.ParseInt(h.Get("x-ratelimit-reset"), 10, 64)
	}
	status, body, h := e.doH("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 2})
	wantError(t, status, body, http.StatusTooManyRequests, "Rate limited")
	retry, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || retry < 1 || retry > 60 || h.Get("x-ratelimit-remaining") != "0" || h.Get("x-ratelimit-limit") != "30" {
		t.Fatalf("429 headers %v", h)
	}
	if now := time.Now().Unix(); reset <= now || reset > now+60 {
		t.Fatalf("reset %d, now %d", reset, now)
	}
	if n, _ := e.db.NewSelect().Table("send_requests").Count(t.Context()); n != 30 {
		t.Fatalf("%d send requests recorded; a limited send must not be", n)
	}

	// Reads have their own bucket: 200 with headers.
	status, _, h = e.doH("GET", "/api/public/v1/agents", e.key, nil)
	if status != 200 || h.Get("x-ratelimit-limit") != "120" || h.Get("x-ratelimit-remaining") != "119" {
		t.Fatalf("GET: %d %v", status, h)
	}
	// A 404 carries them too.
	status, _, h = e.doH("GET", "/api/public/v1/agents/00000000-0000-4000-8000-000000000000", e.key, nil)
	if status != 404 || h.Get("x-ratelimit-remaining") != "118" {
		t.Fatalf("404: %d %v", status, h)
	}
	// Another key of the account has its own windows.
	_, other := e.adminKey()
	status, _, h = e.doH("POST", fmt.Sprintf(sendPath, id), other, map[string]any{"to": to, "amount": 2})
	if status != http.StatusForbidden || h.Get("x-ratelimit-remaining") != "29" {
		t.Fatalf("other key: %d %v", status, h)
	}
	// Without a valid key the client's address has a bucket: 401 with
	// its headers, and 429 past 60 a minute.
	for i := 1; i <= 60; i++ {
		key := ""
		if i%2 == 0 {
			key = "svc_test_" + strings.Repeat("1", 44) // well-formed, unknown
		}
		status, _, h = e.doH("GET", "/api/public/v1/agents", key, nil)
		if status != 401 || h.Get("x-ratelimit-limit") != "60" || h.Get("x-ratelimit-remaining") != strconv.Itoa(60-i) {
			t.Fatalf("401 %d: %d %v", i, status, h)
		}
	}
	status, body, h = e.doH("GET", "/api/public/v1/agents", "", nil)
	wantError(t, status, body, http.StatusTooManyRequests, "Rate limited")
	if h.Get("Retry-After") == "" || h.Get("x-ratelimit-remaining") != "0" {
		t.Fatalf("429 headers %v", h)
	}
	// A valid key is still served: its own bucket.
	if status, _, h = e.doH("GET", "/api/public/v1/agents", e.key, nil); status != 200 || h.Get("x-ratelimit-limit") != "120" {
		t.Fatalf("keyed: %d %v", status, h)
	}
}

// withoutRedis is e served by a second api whose Redis never answers,
// limited by limits (nil: none).
func (e *env) withoutRedis(t *testing.T, limits *ratelimit.Limits) *env {
	t.Helper()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	sealer, _ := signer.NewSealer(e.publicKey)
	h, closeAPI := httpapi.New(httpapi.Deps{DB: e.db, Redis: dead, Sealer: sealer, RateLimits: limits})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); closeAPI(); dead.Close() })
	down := e.with(t)
	down.url = srv.URL
	return down
}

// With Redis unreachable every keyed request answers 503 at once instead of
// running unmetered; nothing is recorded.
func TestSendWithoutRedisIs503(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.agent(nil, 0)
	down := e.withoutRedis(t, &ratelimit.Default)

	start := time.Now()
	status, body := down.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 1})
	wantError(t, status, body, http.StatusServiceUnavailable, "try again")
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("503 took %s", took)
	}
	if n, _ := e.db.NewSelect().Table("send_requests").Count(t.Context()); n != 0 {
		t.Fatalf("%d send requests recorded", n)
	}
	status, body = down.do("GET", "/api/public/v1/agents", e.key, nil)
	wantError(t, status, body, http.StatusServiceUnavailable, "try again")
}

// An approve that cannot hand its execution to a worker (Redis gone after
// the limiter let it through) answers 503 at once and leaves the approval
// pending with nothing signed; approved again once Redis is back, it is
// sent, once.
func TestApproveWithoutRedisLeavesItPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	to := newAddress()
	apID := e.park(id, to, 2)
	_, approver := e.adminKey()

	// No limiter: the hand-off is the first thing to need Redis.
	down := e.withoutRedis(t, nil)

	start := time.Now()
	status, body := down.approve(apID, approver, nil)
	wantError(t, status, body, http.StatusServiceUnavailable, "the approval is still pending and nothing was sent")
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("503 took %s", took)
	}
	if s := e.approvalStatus(apID); s != "pending" {
		t.Fatalf("approval %s after the failed hand-off", s)
	}
	if n := e.transactionsOfApproval(apID); n != 0 {
		t.Fatalf("%d transactions signed", n)
	}

	status, a := e.approve(apID, approver, nil)
	if status != http.StatusOK || a["status"] != "sent" {
		t.Fatalf("approve with Redis back: %d %v", status, a)
	}
	e.paidOnce(eng, apID, a["signature"].(string), to, 2_000_000)
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
