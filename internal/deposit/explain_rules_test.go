package deposit

import (
	"database/sql"
	"testing"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// A change is explained only when the stored balance plus what the
// wallet's landed payments took is exactly the balance read; a rent
// counts only if every payment that may have paid one did, or none did.
func TestBalances_OnlyAnExactSumExplainsAChange(t *testing.T) {
	t.Parallel()
	const rent = solana.TokenAccountRentLamports
	fee := func(l int64) sql.NullInt64 { return sql.NullInt64{Int64: l, Valid: true} }
	address := &watched{Asset: SOL, Balance: sql.NullInt64{Int64: 1_000_000_000, Valid: true}}
	usdcAccount := &watched{Asset: USDC, Balance: sql.NullInt64{Int64: 50_000_000, Valid: true}, token: asset.Asset{Decimals: 6}}
	usdc := func(amount, f int64) own { return own{Asset: USDC, Amount: amount, Fee: fee(f)} }
	eurc := own{Asset: "eurc", Amount: 7, Fee: fee(5_000)}
	sponsored := own{Asset: USDC, Amount: 3, Fee: fee(10_000), FeePayer: sql.NullString{String: "payer", Valid: true}}
	for _, tc := range []struct {
		name  string
		r     *watched
		pays  []own
		now   int64
		after []int64 // nil: not explained
	}{
		{"token account: the amounts", usdcAccount, []own{usdc(1_000, 5_000), usdc(2_000, 5_000)}, 49_997_000, []int64{49_999_000, 49_997_000}},
		{"token account: a deposit beside them", usdcAccount, []own{usdc(1_000, 5_000)}, 50_999_000, nil},
		{"token account: another asset's payment takes nothing", usdcAccount, []own{usdc(1_000, 5_000), eurc}, 49_999_000, []int64{49_999_000}},
		{"address: the fees", address, []own{usdc(1, 5_000), usdc(1, 6_000)}, 999_989_000, []int64{999_995_000, 999_989_000}},
		{"address: every rent paid", address, []own{usdc(1, 5_000), usdc(1, 5_000)}, 1_000_000_000 - 10_000 - 2*rent, []int64{1_000_000_000 - 5_000 - rent, 1_000_000_000 - 10_000 - 2*rent}},
		{"address: one rent of two is not known payment by payment", address, []own{usdc(1, 5_000), usdc(1, 5_000)}, 1_000_000_000 - 10_000 - rent, nil},
		{"address: another asset's rent is not known", address, []own{eurc}, 1_000_000_000 - 5_000 - rent, nil},
		{"address: a stranger's lamports beside the fees", address, []own{usdc(1, 5_000)}, 1_000_000_000 - 5_000 + 1, nil},
		{"address: a payment whose fee a fee payer paid is not counted", address, []own{sponsored}, 1_000_000_000 - 10_000, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mine []own
			for _, p := range tc.pays {
				if effect(tc.r, p) != nil {
					mine = append(mine, p)
				}
			}
			if len(mine) == 0 {
				if tc.after != nil {
					t.Fatalf("no payment counts, want %v", tc.after)
				}
				return
			}
			after, ok := balances(change{r: tc.r, now: tc.now}, mine)
			if !ok {
				after = nil
			}
			if len(after) != len(tc.after) {
				t.Fatalf("balances %v, want %v", after, tc.after)
			}
			for i := range after {
				if after[i] != tc.after[i] {
					t.Fatalf("balances %v, want %v", after, tc.after)
				}
			}
		})
	}
}
