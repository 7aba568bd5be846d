package httpapi_test

import (
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/localnettest"
)

// /readyz and /metrics answer without a key. A provider whose API key is
// in the URL's path (Alchemy .../v2/<key>, QuickNode .../<token>/,
// Triton, Ankr) must not have it shown there.
func TestFailover_PathKeyNotShownByReadyzOrMetrics(t *testing.T) {
	t.Parallel()
	const key = "PATHSECRET0123456789"
	ln := localnettest.Shared(t)
	p := localnettest.NewFaultProxy(t, ln.URL) // forwards whatever the path
	e := newEnv(t, envOpts{ln: ln, nodes: []string{p.URL + "/v2/" + key}})
	if status, body := e.doRaw("GET", "/readyz", "", nil); strings.Contains(string(body), key) {
		t.Errorf("/readyz (%d) shows the key: %s", status, body)
	}
	if status, body := e.doRaw("GET", "/metrics", "", nil); strings.Contains(string(body), key) {
		for _, l := range strings.Split(string(body), "\n") {
			if strings.Contains(l, key) {
				t.Errorf("/metrics (%d) shows the key: %s", status, l)
			}
		}
	}
}
