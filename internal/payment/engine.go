package payment

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// Node is one network's RPC client, its blockhash cache and its fee
// market reading.
type Node struct {
	Client      *solana.Client
	Blockhashes *solana.BlockhashCache
	Fees        *solana.FeeCache
	// Recipients remembers the recipients whose token account exists.
	Recipients *solana.KnownAccounts
}

// Engine is the worker side of the send path: decisions, signing,
// broadcast and confirmation. Only the worker holds one (it opens keys).
type Engine struct {
	DB    *bun.DB
	Redis *redis.Client // announces final outcomes; nil disables
	// Signer signs with wallets' and fee payers' keys; it never hands
	// one out.
	Signer signer.Signer
	Nodes  map[solana.Network]Node
	// Assets are each network's assets (nil: asset.Defaults()).
	Assets asset.Table
	// Fees prices each transfer's priority fee from the market (the zero
	// value: solana.DefaultFeePolicy).
	Fees solana.FeePolicy
	// FirstBroadcastGrace is how long after its commit the sweep leaves
	// a transaction to its worker's first broadcast (0: 3 s).
	FirstBroadcastGrace time.Duration
	// MaxAttempts is how many transactions one payment may be signed as:
	// its first, then one more each time the current one expired unseen
	// (0: DefaultMaxAttempts). Only after the last expired does it fail.
	MaxAttempts int
	// Sweeps counts running sweeps; nil counts nothing.
	Sweeps *SweepGauge
	Now    func() time.Time
	// PolicyClock, when set, is the time decisions are made at: the day
	// and the rolling windows they count, the active hours, and the
	// decision's rows (decided_at, the transaction's created_at). Nil (as
	// in production) reads the database's clock, the one clock every
	// worker and API instance shares. Tests set it.
	PolicyClock func() time.Time
	// Sealer seals the audit entries of a decision soon after its commit;
	// nil leaves them to the scheduler's seal and to readers.
	Sealer *audit.Sealer
	Log    *slog.Logger
}

// assetOf is the network's asset of symbol. A symbol the table no longer
// has (an operator removed it) is an error the payment is refused with.
func (e *Engine) assetOf(n solana.Network, symbol string) (asset.Asset, error) {
	a, ok := e.Assets.OrDefaults().Find(n, symbol)
	if !ok {
		return asset.Asset{}, fmt.Errorf("%s is not an asset of %s on this service (GET /assets lists them)", symbol, n)
	}
	return a, nil
}

// PayableTokens are the tokens a wallet under p may pay an x402 or MPP
// seller in: the assets of 6 decimals its policy allows that the network
// has, in the policy's order (the most preferred first). The API and the worker both choose
// from them, so they choose alike.
func PayableTokens(t asset.Table, n solana.Network, p policy.Policy) []solana.Token {
	t = t.OrDefaults()
	var out []solana.Token
	for _, sym := range p.SpendableAssets() {
		// A seller's amount is in the token's base units and the policy
		// counts micros: only a 6-decimal asset reads as both alike.
		if a, ok := t.Find(n, sym); ok && a.Decimals == money.Decimals {
			out = append(out, a.Token())
		}
	}
	// None allowed: Select offers USDC, which the policy then blocks
	// (asset_not_allowed), as it blocks a send.
	return out
}

func (e *Engine) now() time.Time {
	if e.Now == nil {
		return now(time.Now)
	}
	return now(e.Now)
}

// policyTime is the PolicyClock's time, or nil: the database's clock.
func (e *Engine) policyTime() *time.Time {
	if e.PolicyClock == nil {
		return nil
	}
	t := now(e.PolicyClock)
	return &t
}

func (e *Engine) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

// NewNode connects to one network's RPC node.
func NewNode(url string, network solana.Network, timeout time.Duration) Node {
	return NodeOf(solana.NewClient(url, network, timeout))
}

// NodeOf is the node behind client, with its blockhash cache.
func NodeOf(c *solana.Client) Node {
	return Node{Client: c, Blockhashes: solana.NewBlockhashCache(c, 0), Fees: solana.NewFeeCache(c, 0), Recipients: solana.NewKnownAccounts(0)}
}

// RunBlockhashes keeps every node's blockhash fresh in the background
// until ctx ends.
func (e *Engine) RunBlockhashes(ctx context.Context) {
	for _, n := range e.Nodes {
		go n.Blockhashes.Run(ctx)
	}
}
