package solana

import (
	"context"
	"fmt"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
)

// MintInfo is what the asset table is checked against: whether the mint
// exists, the program that owns it and its decimals.
type MintInfo struct {
	Exists   bool
	Program  sol.PublicKey
	Decimals uint8
}

// mintDecimalsOffset is where a mint's decimals byte sits, in the SPL
// Token layout Token-2022 shares (authority option and key, supply).
const mintDecimalsOffset = 44

// Mints reads mints, MaxAccountsPerCall a call, at confirmed commitment.
func (c *Client) Mints(ctx context.Context, mints []sol.PublicKey) ([]MintInfo, error) {
	out := make([]MintInfo, 0, len(mints))
	for start := 0; start < len(mints); start += MaxAccountsPerCall {
		batch := mints[start:min(start+MaxAccountsPerCall, len(mints))]
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		res, err := c.rpc.GetMultipleAccountsWithOpts(cctx, batch, &rpc.GetMultipleAccountsOpts{
			Encoding: sol.EncodingBase64, Commitment: rpc.CommitmentConfirmed,
		})
		cancel()
		if err != nil {
			return nil, c.rpcError("getMultipleAccounts", err)
		}
		if res == nil || len(res.Value) != len(batch) {
			return nil, fmt.Errorf("%w: getMultipleAccounts: malformed answer", ErrRPC)
		}
		for _, a := range res.Value {
			var m MintInfo
			if a != nil {
				m.Exists, m.Program = true, a.Owner
				if data := a.Data.GetBinary(); len(data) > mintDecimalsOffset {
					m.Decimals = data[mintDecimalsOffset]
				}
			}
			out = append(out, m)
		}
	}
	return out, nil
}
