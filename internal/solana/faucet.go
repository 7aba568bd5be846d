package solana

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/money"
)

// ErrNotLocalChain refuses to fund on a node of a public cluster: with
// SOLANA_LOCAL_CHAIN one network's node may be local and the other real.
var ErrNotLocalChain = errors.New("this network's node is a public cluster's: funding exists only on a local chain")

// ErrFundTooLarge refuses a fund past the largest USDC amount.
var ErrFundTooLarge = fmt.Errorf("funding would pass %s USDC", money.Micros[money.USD](money.MaxMicros))

// TokenFund is how many base units of a token a fund adds.
type TokenFund struct {
	Token Token
	Add   uint64
}

// Fund adds USDC and lamports to owner on a local chain, through the
// localnet's cheat codes (surfnet_setTokenAccount and surfnet_setAccount,
// which set absolute amounts: the current balance is read first, so a fund
// racing another fund or a send may overwrite what that one changed). Public nodes do not know these
// methods; callers offer it only with SOLANA_LOCAL_CHAIN.
//
// tokens add other tokens the same way (any token the localnet carries,
// Token-2022 included); the answer's Tokens are read again after them.
func (c Clients) Fund(ctx context.Context, network Network, owner string, add money.Micros[money.USD], lamports uint64, tokens ...TokenFund) (Balance, error) {
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
	if add > money.Micros[money.USD](money.MaxMicros)-b.USDC {
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
	for _, f := range tokens {
		i := slices.IndexFunc(b.Tokens, func(h TokenBalance) bool { return h.Mint.Equals(f.Token.Mint) })
		var cur uint64
		if i >= 0 {
			cur = b.Tokens[i].Units
		}
		if f.Add > uint64(money.Micros[money.USD](money.MaxMicros))-min(cur, uint64(money.Micros[money.USD](money.MaxMicros))) {
			return Balance{}, ErrFundTooLarge
		}
		if err := cl.rpc.RPCCallForInto(ctx, &out, "surfnet_setTokenAccount",
			[]any{owner, f.Token.Mint.String(), map[string]any{"amount": cur + f.Add}}); err != nil {
			return Balance{}, cl.rpcError("surfnet_setTokenAccount", err)
		}
	}
	if len(tokens) > 0 {
		// A fund may have opened an account: the answer lists what the
		// chain now holds.
		after, err := cl.Balance(ctx, pk)
		if err != nil {
			return Balance{}, err
		}
		b.Tokens = after.Tokens
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
