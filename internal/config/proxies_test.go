package config

import (
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// TRUSTED_PROXIES is empty (trust none) by default, read as CIDRs and
// addresses, and a bad entry refuses to start, naming the variable.
func TestTrustedProxies_AreValidated(t *testing.T) {
	t.Parallel()
	_, pub, _ := signer.GenerateMasterKey()
	c, err := LoadAPI(env(map[string]string{"WALLET_PUBLIC_KEY": pub}))
	if err != nil || c.TrustedProxies != nil {
		t.Fatalf("default: %v %v", c.TrustedProxies, err)
	}
	c, err = LoadAPI(env(map[string]string{"WALLET_PUBLIC_KEY": pub, "TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7"}))
	if err != nil || len(c.TrustedProxies) != 2 || c.TrustedProxies.Client("10.1.1.1:80", []string{"203.0.113.1"}) != "203.0.113.1" {
		t.Fatalf("set: %v %v", c.TrustedProxies, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.internal", "10.0.0.0/8,nope"} {
		_, err := LoadAPI(env(map[string]string{"WALLET_PUBLIC_KEY": pub, "TRUSTED_PROXIES": bad}))
		if err == nil || !strings.Contains(err.Error(), "TRUSTED_PROXIES") {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}
