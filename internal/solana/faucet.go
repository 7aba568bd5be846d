package solana

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/money"
)

// ErrNotLocalChain refuses to fund on a node of a public cluster: with
// SOLANA_LOCAL_CHAIN one network's node may be local and the other real.
var ErrNotLocalChain = errors.New("this network's node is a public cluster's: funding exists only on a local chain")

// ErrFundTooLarge refuses a fund past the largest amount a token's
// balance may reach here.
var ErrFundTooLarge = fmt.Errorf("funding would pass %s whole units of a token", money.Micros[money.USD](money.MaxMicros))

// maxFunded bounds a funded balance in base units: far above any supply,
// and inside int64 for every reader of balances.
const maxFunded = uint64(money.MaxMicros)

// TokenFund is how many base units of a token a fund adds.
type TokenFund struct {
	Token Token
	Add   uint64
}

// Fund adds tokens and lamports to owner on a local chain, through the
// localnet's cheat codes (surfnet_setTokenAccount and surfnet_setAccount,
// which set absolute amounts: the current balance is read first, so a fund
// racing another fund or a send may overwrite what that one changed). Public nodes do not know these
// methods; callers offer it only with SOLANA_LOCAL_CHAIN. Any token the
// localnet carries may be funded, Token-2022 included; the answer's
// Tokens are read again after them.
func (c Clients) Fund(ctx context.Context, network Network, owner string, lamports uint64, tokens ...TokenFund) (Balance, error) {
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
	var out json.RawMessage
	for _, f := range tokens {
		var cur uint64
		if t, ok := b.Of(f.Token.Mint); ok {
			cur = t.Units
		}
		if f.Add > maxFunded-min(cur, maxFunded) {
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
