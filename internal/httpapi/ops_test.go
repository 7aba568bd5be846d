package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/tasks"
)

func TestOpsRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if status, body := e.do("GET", "/healthz", "", nil); status != 200 || body["status"] != "ok" {
		t.Fatalf("healthz: %d %v", status, body)
	}
	if status, body := e.do("GET", "/readyz", "", nil); status != 200 || body["status"] != "ready" {
		t.Fatalf("readyz: %d %v", status, body)
	}
	e.do("GET", "/api/public/v1/agents", e.key, nil)
	// Queue metrics exist once a queue does.
	if _, err := asynq.NewClientFromRedisClient(e.rdb).Enqueue(tasks.NewHeartbeatTask()); err != nil {
		t.Fatal(err)
	}
	status, raw := e.doRaw("GET", "/metrics", "", nil)
	if status != 200 || !strings.Contains(string(raw), `http_requests_total{method="GET",route="GET /api/public/v1/agents",status="200"}`) ||
		!strings.Contains(string(raw), "asynq_") {
		t.Fatalf("metrics: %d\n%s", status, grepLines(string(raw), "http_requests_total", "asynq_"))
	}
	// Methods clients invent do not become metric series of their own.
	e.do("FOOBAR", "/x", "", nil)
	_, raw = e.doRaw("GET", "/metrics", "", nil)
	if strings.Contains(string(raw), "FOOBAR") || !strings.Contains(string(raw), `method="OTHER"`) {
		t.Fatalf("method label: %s", grepLines(string(raw), "http_requests_total"))
	}
	// No operator credentials configured: the queue UI is refused.
	status, body := e.do("GET", "/ops/queues/", "", nil)
	wantError(t, status, body, http.StatusForbidden, "disabled")
}

func TestOpsQueuesNeedCredentials(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{ops: httpapi.OpsConfig{Username: "ops", Password: "s3cret"}})
	for _, creds := range [][2]string{{"", ""}, {"ops", "wrong"}, {"other", "s3cret"}} {
		req, _ := http.NewRequest("GET", e.url+"/ops/queues/", nil)
		if creds[0] != "" {
			req.SetBasicAuth(creds[0], creds[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("creds %v: %d", creds, resp.StatusCode)
		}
	}
	// A state change started by another site is refused even with the
	// browser's cached credentials.
	req, _ := http.NewRequest("POST", e.url+"/ops/queues/api/queues/default:pause", nil)
	req.SetBasicAuth("ops", "s3cret")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("cross-site pause: %d", resp.StatusCode)
	}
	for _, path := range []string{"/ops/queues/", "/ops/queues/api/queues"} {
		req, _ := http.NewRequest("GET", e.url+path, nil)
		req.SetBasicAuth("ops", "s3cret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s with credentials: %d", path, resp.StatusCode)
		}
	}
}

func grepLines(s string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}
