package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func newTestServer(t testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestErrorShapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	big := `{"label":"` + strings.Repeat("a", 64<<10) + `"}`
	cases := []struct {
		name, method, path, body string
		key                      bool
		status                   int
		want                     string
	}{
		{"malformed json", "POST", "/api/public/v1/agents", `{"label":`, true, 400, "malformed JSON"},
		{"not json", "POST", "/api/public/v1/agents", `label=x`, true, 400, "malformed JSON"},
		{"json array", "POST", "/api/public/v1/agents", `[]`, true, 422, "object"},
		{"empty body", "POST", "/api/public/v1/agents", ``, true, 400, "body is required"},
		{"too large", "POST", "/api/public/v1/agents", big, true, 413, "larger than 64 KiB"},
		{"trailing data", "POST", "/api/public/v1/agents", `{"label":"a"} {}`, true, 400, "malformed JSON"},
		{"unknown route", "GET", "/api/public/v1/nope", "", true, 404, "not found"},
		{"unknown route no key", "GET", "/api/public/v1/nope", "", false, 404, "not found"},
		{"root", "GET", "/", "", false, 404, "not found"},
		{"wrong method", "DELETE", "/api/public/v1/agents", "", true, 405, "method not allowed"},
		{"wrong method on id", "PUT", "/api/public/v1/agents/x", "", true, 405, "method not allowed"},
	}
	for _, tc := range cases {
		key := ""
		if tc.key {
			key = e.key
		}
		status, body := e.do(tc.method, tc.path, key, tc.body)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d (%v)", tc.name, status, tc.status, body)
			continue
		}
		if msg, _ := body["error"].(string); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: body %v, want error containing %q", tc.name, body, tc.want)
		}
		for k := range body {
			if k != "error" && k != "details" {
				t.Errorf("%s: unexpected field %q in %v", tc.name, k, body)
			}
		}
	}
	// Exactly 64 KiB is accepted as a body (then fails validation on length).
	exact := `{"label":"` + strings.Repeat("a", 64<<10-12) + `"}`
	if len(exact) != 64<<10 {
		t.Fatalf("exact body is %d bytes", len(exact))
	}
	if status, _ := e.do("POST", "/api/public/v1/agents", e.key, exact); status != 422 {
		t.Fatalf("64 KiB body: %d, want 422", status)
	}
	e.wantRows("wallets", 0)
}

// FuzzCreateAgent: whatever the body, the answer is 201 or a 4xx with an
// {"error"} body, never a 5xx.
func FuzzCreateAgent(f *testing.F) {
	for _, s := range []string{`{"label":"a"}`, `{"label":"a","policy":{"max_tx_usdc":1e-7}}`, `{`, `[]`, `null`, `{"label":"a","policy":{"allowlist":["x"]}}`, `{"label":"\u0000"}`, `{"label":"a","policy":{"daily_limit_usdc":1e999}}`} {
		f.Add(s)
	}
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, body string) {
		status, raw := e.with(t).doRaw("POST", "/api/public/v1/agents", e.key, body)
		if status == 201 {
			return
		}
		if status < 400 || status >= 500 || !strings.Contains(string(raw), `"error"`) {
			t.Fatalf("body %q → %d %s", body, status, raw)
		}
	})
}

// A body broken on the wire is the client's fault: 400, not 500.
func TestBrokenChunkedBodyIs400(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/public/v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", e.key)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"error"`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}
