package solana

import (
	"context"
	"fmt"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
)

// tokenAccountStateOffset is a token account's state byte (0
// uninitialized, 1 initialized, 2 frozen), at the same place under SPL
// Token and Token-2022 (whose extensions come after the 165-byte base).
const tokenAccountStateOffset = 108

// TokenAccountState is what a send needs to know of one owner's
// associated account of a token before signing.
type TokenAccountState struct {
	Owner sol.PublicKey
	// Account is the associated token account (under the token's
	// program).
	Account sol.PublicKey
	// Exists: the account is there (a missing one is made by the
	// transfer, and is not frozen).
	Exists bool
	// Frozen: its mint's freeze authority froze it; no transfer from or
	// to it lands until it is thawed.
	Frozen bool
}

// TokenAccountStates reads owners' associated accounts of tk (at
// confirmed commitment, one call, only their state byte), in the order
// given.
func (c *Client) TokenAccountStates(ctx context.Context, tk Token, owners ...sol.PublicKey) ([]TokenAccountState, error) {
	if tk.IsZero() {
		tk = c.network.USDC()
	}
	out := make([]TokenAccountState, len(owners))
	accounts := make([]sol.PublicKey, len(owners))
	for i, o := range owners {
		a, _, err := accountOf(o, tk)
		if err != nil {
			return nil, err
		}
		out[i] = TokenAccountState{Owner: o, Account: a}
		accounts[i] = a
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetMultipleAccountsWithOpts(ctx, accounts, &rpc.GetMultipleAccountsOpts{
		Encoding: sol.EncodingBase64, Commitment: rpc.CommitmentConfirmed,
		DataSlice: &rpc.DataSlice{Offset: new(uint64(tokenAccountStateOffset)), Length: new(uint64(1))},
	})
	if err != nil {
		return nil, c.rpcError("getMultipleAccounts", err)
	}
	if res == nil || len(res.Value) != len(accounts) {
		return nil, fmt.Errorf("%w: getMultipleAccounts: malformed answer", ErrRPC)
	}
	for i, a := range res.Value {
		if a == nil || a.Lamports == 0 {
			continue
		}
		out[i].Exists = true
		if d := a.Data.GetBinary(); len(d) == 1 {
			out[i].Frozen = d[0] == accountFrozen
		}
	}
	return out, nil
}
