package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/dashboard"
)

// Every path under /dashboard/ answers the app's page (deep links), with
// the security headers and no caching; unknown assets are 404; writes are
// refused. Without a build the page says how to make one.
func TestHandler(t *testing.T) {
	t.Parallel()
	h := dashboard.Handler()
	for _, path := range []string{"/dashboard/", "/dashboard/approvals/ap_x", "/dashboard/deep/link"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			rec.Header().Get("Cache-Control") != "no-cache" || !strings.Contains(string(body), "<") {
			t.Fatalf("%s: %d %v %.80s", path, rec.Code, rec.Header(), body)
		}
		if !strings.Contains(string(body), `<div id="root">`) && !strings.Contains(string(body), "make dashboard") {
			t.Fatalf("%s: neither the app nor the build hint: %.200s", path, body)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/dashboard/assets/nope.js", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("missing asset: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/dashboard/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
}
