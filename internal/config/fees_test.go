package config

import (
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// PRIORITY_FEE_* default to solana.DefaultFeePolicy, are read as set, and a
// value out of its bounds (or a minimum above the maximum) refuses to
// start, naming the variable.
func TestPriorityFees_DefaultsAndBounds(t *testing.T) {
	t.Parallel()
	priv, _, _ := signer.GenerateMasterKey()
	base := func(extra map[string]string) map[string]string {
		m := map[string]string{"WALLET_MASTER_KEY": priv}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	c, err := LoadWorker(env(base(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if c.PriorityFees != solana.DefaultFeePolicy || c.PriorityFees.Percentile != 75 {
		t.Fatalf("defaults: %+v", c.PriorityFees)
	}
	c, err = LoadWorker(env(base(map[string]string{
		"PRIORITY_FEE_PERCENTILE": "90", "PRIORITY_FEE_MIN_MICROLAMPORTS": "1000",
		"PRIORITY_FEE_MAX_MICROLAMPORTS": "100000", "PRIORITY_FEE_MAX_LAMPORTS": "50000",
	})))
	if err != nil {
		t.Fatal(err)
	}
	if want := (solana.FeePolicy{Percentile: 90, MinMicroLamports: 1000, MaxMicroLamports: 100_000, MaxLamports: 50_000}); c.PriorityFees != want {
		t.Fatalf("read %+v, want %+v", c.PriorityFees, want)
	}
	bad := map[string]map[string]string{
		"PRIORITY_FEE_PERCENTILE":        {"PRIORITY_FEE_PERCENTILE": "0"},
		"PRIORITY_FEE_MIN_MICROLAMPORTS": {"PRIORITY_FEE_MIN_MICROLAMPORTS": "-1"},
		"PRIORITY_FEE_MAX_MICROLAMPORTS": {"PRIORITY_FEE_MIN_MICROLAMPORTS": "5000", "PRIORITY_FEE_MAX_MICROLAMPORTS": "4000"},
		"PRIORITY_FEE_MAX_LAMPORTS":      {"PRIORITY_FEE_MAX_LAMPORTS": "0"},
	}
	for want, extra := range bad {
		_, err := LoadWorker(env(base(extra)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want an error naming %s", extra, err, want)
		}
	}
	// percentile 101 too
	if _, err := LoadWorker(env(base(map[string]string{"PRIORITY_FEE_PERCENTILE": "101"}))); err == nil {
		t.Error("percentile 101 accepted")
	}
}

// SEND_MAX_ATTEMPTS is 3 unset, 1 to 10 when set; anything else refuses to
// start, naming the variable.
func TestSendMaxAttempts_DefaultAndBounds(t *testing.T) {
	t.Parallel()
	priv, _, _ := signer.GenerateMasterKey()
	for raw, want := range map[string]int{"": 3, "1": 1, "5": 5} {
		c, err := LoadWorker(env(map[string]string{"WALLET_MASTER_KEY": priv, "SEND_MAX_ATTEMPTS": raw}))
		if err != nil || c.SendMaxAttempts != want {
			t.Errorf("SEND_MAX_ATTEMPTS=%q: %d %v, want %d", raw, c.SendMaxAttempts, err, want)
		}
	}
	for _, raw := range []string{"0", "11", "x"} {
		if _, err := LoadWorker(env(map[string]string{"WALLET_MASTER_KEY": priv, "SEND_MAX_ATTEMPTS": raw})); err == nil || !strings.Contains(err.Error(), "SEND_MAX_ATTEMPTS") {
			t.Errorf("SEND_MAX_ATTEMPTS=%q: %v", raw, err)
		}
	}
}
