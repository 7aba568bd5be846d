package config

import (
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// FEE_PAYER_DAILY_BUDGET_SOL is read exactly into lamports; 1 SOL unset;
// zero, negative, finer than a lamport or above 100 SOL refuse to start.
func TestFeePayerBudget_ReadExactlyInLamports(t *testing.T) {
	t.Parallel()
	_, pub, _ := signer.GenerateMasterKey()
	load := func(v string) (API, error) {
		m := map[string]string{"WALLET_PUBLIC_KEY": pub}
		if v != "" {
			m["FEE_PAYER_DAILY_BUDGET_SOL"] = v
		}
		return LoadAPI(env(m))
	}
	for v, want := range map[string]int64{"": 1_000_000_000, "0.25": 250_000_000, "100": 100_000_000_000, "0.000000001": 1, "2e-3": 2_000_000} {
		c, err := load(v)
		if err != nil || c.FeePayerDailyBudget != want {
			t.Errorf("%q: %d %v, want %d lamports", v, c.FeePayerDailyBudget, err, want)
		}
	}
	for _, v := range []string{"0", "-1", "100.000000001", "0.0000000001", "lots"} {
		if _, err := load(v); err == nil || !strings.Contains(err.Error(), "FEE_PAYER_DAILY_BUDGET_SOL") {
			t.Errorf("%q: %v, want an error naming FEE_PAYER_DAILY_BUDGET_SOL", v, err)
		}
	}
}
