package solana

import (
	"context"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
)

// MintInfo is what the asset table is checked against: whether the mint
// exists, the program that owns it and its decimals; and what the mint
// says of its issuer's powers and its amounts (Facts, unless FactsErr).
type MintInfo struct {
	Exists   bool
	Program  sol.PublicKey
	Decimals uint8
	Facts    MintFacts
	// FactsErr is why Facts could not be read from an existing mint's
	// data (an ErrMalformedMint).
	FactsErr error
}

// mintDecimalsOffset is where a mint's decimals byte sits, in the SPL
// Token layout Token-2022 shares (authority option and key, supply).
const mintDecimalsOffset = 44

// Mints reads mints, MaxAccountsPerCall a call, at confirmed commitment.
func (c *Client) Mints(ctx context.Context, mints []sol.PublicKey) ([]MintInfo, error) {
	out := make([]MintInfo, 0, len(mints))
	err := c.eachAccount(ctx, mints, func(a *rpc.Account, _ uint64) {
		var m MintInfo
		if a != nil {
			m.Exists, m.Program = true, a.Owner
			data := a.Data.GetBinary()
			if len(data) > mintDecimalsOffset {
				m.Decimals = data[mintDecimalsOffset]
			}
			m.Facts, m.FactsErr = ParseMintFacts(a.Owner, data)
		}
		out = append(out, m)
	})
	return out, err
}
