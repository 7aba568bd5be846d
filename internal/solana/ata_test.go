package solana

import (
	"testing"

	sol "github.com/gagliardetto/solana-go"
)

// The kept address is the derived one, for each owner and mint.
func TestAssociatedTokenAddressCached(t *testing.T) {
	for range 3 {
		for _, mint := range []sol.PublicKey{DevnetUSDCMint, MainnetUSDCMint} {
			owner := sol.NewWallet().PublicKey()
			for range 2 {
				got, gotBump, err := associatedTokenAddress(owner, mint)
				want, wantBump, werr := sol.FindAssociatedTokenAddress(owner, mint)
				if err != nil || werr != nil || !got.Equals(want) || gotBump != wantBump {
					t.Fatalf("associatedTokenAddress(%s, %s) = %s %d %v, want %s %d %v", owner, mint, got, gotBump, err, want, wantBump, werr)
				}
			}
		}
	}
}

func BenchmarkAssociatedTokenAddress(b *testing.B) {
	owner := sol.NewWallet().PublicKey()
	b.Run("derived", func(b *testing.B) {
		for b.Loop() {
			_, _, _ = sol.FindAssociatedTokenAddress(owner, DevnetUSDCMint)
		}
	})
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			_, _, _ = associatedTokenAddress(owner, DevnetUSDCMint)
		}
	})
}
