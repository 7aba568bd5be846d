package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/waitfor"
)

// TestOutagesAnswer503AndHeal takes Postgres, then Redis, away from the
// API (refused, then blackholed) and calls every public operation: each
// answers 503 with an {"error"} body within 2 s (the client gives up at
// 2 s), and when the dependency returns the API serves again by itself,
// a send included.
//
// Not parallel: it times every route at once against a 2 s bound, so it
// runs before the package's parallel tests load the machine.
func TestOutagesAnswer503AndHeal(t *testing.T) {
	e := newEnv(t, envOpts{proxied: true})
	e.startWorker()
	hook := newReceiver(t, nil)
	fx := e.fixtures(e.key, hook.URL)
	samples := matrixSamples(hook.URL)
	doc := httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{}).OpenAPI()
	type route struct {
		method, path string
		body         []byte
	}
	var routes []route
	for path, item := range doc.Paths {
		for method, op := range operations(item) {
			var body []byte
			if s, ok := samples[op.OperationID]; ok {
				body, _ = json.Marshal(s)
			}
			routes = append(routes, route{method, fx.fill(t, path), body})
		}
	}
	client := &http.Client{Timeout: 2 * time.Second}
	call := func(r route) (int, []byte, error) {
		req, _ := http.NewRequest(r.method, e.url+r.path, bytes.NewReader(r.body))
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		return resp.StatusCode, raw, err
	}

	for _, dep := range []struct {
		name string
		p    *proxy
	}{{"postgres", e.pgProxy}, {"redis", e.redisProxy}} {
		for _, mode := range []struct {
			name string
			m    proxyMode
		}{{"refused", proxyRefuse}, {"blackholed", proxyBlackhole}} {
			dep.p.set(mode.m)
			var wg sync.WaitGroup
			errs := make([]string, len(routes))
			for i, r := range routes {
				wg.Go(func() {
					status, raw, err := call(r)
					var body struct{ Error string }
					_ = json.Unmarshal(raw, &body)
					switch {
					case err != nil:
						errs[i] = err.Error()
					case status != http.StatusServiceUnavailable || body.Error == "":
						errs[i] = fmt.Sprintf("%d %s", status, raw)
					}
				})
			}
			wg.Wait()
			for i, msg := range errs {
				if msg != "" {
					t.Errorf("%s %s: %s %s: %s, want 503 within 2 s", dep.name, mode.name, routes[i].method, routes[i].path, msg)
				}
			}
			dep.p.set(proxyUp)
			waitfor.True(t, dep.name+" back in service", func() bool {
				status, _, err := call(route{"GET", httpapi.Prefix + "/agents", nil})
				return err == nil && status == http.StatusOK
			})
		}
	}

	// Healed: a send is decided, signed and answered as usual.
	status, body := e.do("POST", fmt.Sprintf(sendPath, fx["agents"]), e.key, map[string]any{"to": newAddress(), "amount": 0.5})
	if status != http.StatusOK || body["status"] != "sent" {
		t.Fatalf("send after the outages: %d %v", status, body)
	}
}
