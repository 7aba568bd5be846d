package config

import (
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// PPROF_ADDR is off by default and, when set, accepts only a loopback
// host:port, for the api and the worker alike.
func TestPprofAddrIsOffByDefaultAndLoopbackOnly(t *testing.T) {
	t.Parallel()
	priv, pub, _ := signer.GenerateMasterKey()
	load := func(addr string) (API, Worker, error, error) {
		a, aerr := LoadAPI(env(map[string]string{"WALLET_PUBLIC_KEY": pub, "PPROF_ADDR": addr}))
		w, werr := LoadWorker(env(map[string]string{"WALLET_MASTER_KEY": priv, "PPROF_ADDR": addr}))
		return a, w, aerr, werr
	}
	a, w, aerr, werr := load("")
	if aerr != nil || werr != nil || a.PprofAddr != "" || w.PprofAddr != "" {
		t.Fatalf("default: %q %q %v %v", a.PprofAddr, w.PprofAddr, aerr, werr)
	}
	for _, ok := range []string{"127.0.0.1:0", "127.0.0.1:6060", "[::1]:6060", "localhost:6060"} {
		a, w, aerr, werr := load(ok)
		if aerr != nil || werr != nil || a.PprofAddr != ok || w.PprofAddr != ok {
			t.Errorf("%s: %q %q %v %v", ok, a.PprofAddr, w.PprofAddr, aerr, werr)
		}
	}
	for _, bad := range []string{"0.0.0.0:6060", ":6060", "10.0.0.5:6060", "[::]:6060", "example.com:6060", "6060", "127.0.0.1:x", "127.0.0.1:70000"} {
		_, _, aerr, werr := load(bad)
		for _, err := range []error{aerr, werr} {
			if err == nil || !strings.Contains(err.Error(), "PPROF_ADDR") {
				t.Errorf("%s: error %v, want one naming PPROF_ADDR", bad, err)
			}
		}
	}
}
