package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// BenchmarkReads measures authenticated reads against a same-run baseline:
// /healthz (no auth, no database) on the same server. The ratios are what
// to compare across changes; absolute times on these machines are noisy.
func BenchmarkReads(b *testing.B) {
	e := newEnv(b)
	for i := range 20 {
		e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": fmt.Sprintf("a%d", i)})
	}
	_, list := e.do("GET", "/api/public/v1/agents", e.key, nil)
	id := list["agents"].([]any)[0].(map[string]any)["id"].(string)

	timeIt := func(path, key string, n int) time.Duration {
		req, _ := http.NewRequest("GET", e.url+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		start := time.Now()
		for range n {
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("%s: %v %v", path, err, resp)
			}
			resp.Body.Close()
		}
		return time.Since(start) / time.Duration(n)
	}
	const n = 200
	base := timeIt("/healthz", "", n)
	cases := map[string]string{
		"list_agents":    "/api/public/v1/agents",
		"wallet_balance": "/api/public/v1/wallets/" + id + "/balance",
	}
	for name, path := range cases {
		b.Run(name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				total += timeIt(path, e.key, 1)
			}
			b.ReportMetric(float64(total)/float64(b.N)/float64(base), "x_healthz")
		})
	}
}
