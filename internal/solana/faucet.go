package solana

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/usdc"
)

// ErrNotLocalChain refuses to fund on a node of a public cluster: with
// SOLANA_LOCAL_CHAIN one network's node may be local and the other real.
var ErrNotLocalChain = errors.New("this network's node is a public cluster's: funding exists only on a local chain")

// ErrFundTooLarge refuses a fund past the largest USDC amount.
var ErrFundTooLarge = fmt.Errorf("funding would pass %s USDC", usdc.MaxMicros)

// Fund adds USDC and lamports to owner on a local chain, through the
// localnet's cheat codes (surfnet_setTokenAccount and surfnet_setAccount,
// which set absolute amounts: the current balance is read first, so a fund
// racing another fund or a send may overwrite what that one changed). Public nodes do not know these
// methods; callers offer it only with SOLANA_LOCAL_CHAIN.
func (c Clients) Fund(ctx context.Context, network Network, owner string, add usdc.Micros, lamports uint64) (Balance, error) {
	cl, ok := c[network]
	if !ok {
		return Balance{}, fmt.Errorf("%w: no RPC node configured for %s", ErrRPC, network)
	}
	pk, err := sol.PublicKeyFromBase58(owner)
	if err != nil {
		return Balance{}, fmt.Errorf("wallet address %q: %w", owner, err)
	}
	ctx, cancel := context.WithTimeout(ctx, cl.timeout)
	defer cancel()
	h, err := cl.rpc.GetGenesisHash(ctx)
	if err != nil {
		return Balance{}, cl.rpcError("getGenesisHash", err)
	}
	if PublicGenesis(h.String()) {
		return Balance{}, ErrNotLocalChain
	}
	b, err := cl.Balance(ctx, pk)
	if err != nil {
		return Balance{}, err
	}
	if add > usdc.MaxMicros-b.USDC {
		return Balance{}, ErrFundTooLarge
	}
	var out json.RawMessage
	if add > 0 {
		amount := b.USDC + add
		if err := cl.rpc.RPCCallForInto(ctx, &out, "surfnet_setTokenAccount",
			[]any{owner, network.USDCMint().String(), map[string]any{"amount": uint64(amount)}}); err != nil {
			return Balance{}, cl.rpcError("surfnet_setTokenAccount", err)
		}
		b.USDC = amount
	}
	if lamports > 0 {
		b.Lamports += lamports
		if err := cl.rpc.RPCCallForInto(ctx, &out, "surfnet_setAccount",
			[]any{owner, map[string]any{"lamports": b.Lamports}}); err != nil {
			return Balance{}, cl.rpcError("surfnet_setAccount", err)
		}
	}
	return b, nil
}
