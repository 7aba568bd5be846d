package httpapi

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

type balanceOutput struct {
	Body Balance
}

// Faucet adds test funds on a local chain; *solana.Clients implements it.
type Faucet interface {
	Fund(ctx context.Context, network solana.Network, owner string, lamports uint64, tokens ...solana.TokenFund) (solana.Balance, error)
}

// Funding bounds: generous for development, small next to any real sum.
const (
	MaxFundUSDC = 1_000_000 * money.Dollar
	MaxFundSOL  = 100 * money.Dollar // micro-SOL, as the body is read
)

type fundInput struct {
	ID   string `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Body struct {
		USDC *Amount `json:"usdc,omitempty" doc:"USDC to add, at most 1,000,000." example:"100"`
		SOL  *Amount `json:"sol,omitempty" doc:"SOL to add (for fees), at most 100, at most 6 decimals." example:"1"`
		// Other assets of the network, by symbol.
		Assets map[string]Amount `json:"assets,omitempty" maxProperties:"20" doc:"Other assets to add, by symbol of GET /assets (USDT, PYUSD, USDG, EURC), each at most 1,000,000." example:"{\"PYUSD\":5,\"EURC\":3}"`
	}
}

// Wallet is a wallet of the account as listed by GET /wallets, and the
// first fields of every agent object.
type Wallet struct {
	ID        string    `json:"id" format:"uuid" doc:"Wallet id (UUIDv4); also the id for /wallets/{id}/balance." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Label     string    `json:"label" doc:"Human label given at creation." example:"research-bot"`
	Kind      string    `json:"kind" enum:"agent" doc:"Wallet kind." example:"agent"`
	Pubkey    string    `json:"pubkey" doc:"Solana address (base58) that receives funds." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	State     string    `json:"state" enum:"active,frozen" doc:"A frozen wallet is blocked from every send (reason wallet_frozen)." example:"active"`
	CreatedAt time.Time `json:"created_at" doc:"Creation time, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	Signer    string    `json:"signer" enum:"local,pkcs11,vault,awskms" doc:"Where the wallet's key lives: local (sealed in the database, opened by the worker's master key), pkcs11 (an HSM), vault (Vault Transit) or awskms (AWS KMS)." example:"local"`
	// ExportedAt marks a wallet whose secret left the service (sealed to
	// an owner): anyone holding it may spend, whatever the policy.
	ExportedAt *time.Time `json:"exported_at,omitempty" example:"2026-04-02T09:30:00Z" doc:"When an owner exported the wallet's secret (approved by another owner); absent if never. An exported wallet's secret exists outside the service for good."`
}

func walletOf(w *wallet.Wallet) Wallet {
	return Wallet{ID: w.ID.String(), Label: w.Label, Kind: w.Kind, Pubkey: w.Pubkey, State: string(w.State), CreatedAt: w.CreatedAt.UTC(),
		Signer: string(cmp.Or(w.Signer, signer.Local)), ExportedAt: w.ExportedAt}
}

type listWalletsOutput struct {
	Body struct {
		Wallets    []Wallet `json:"wallets" doc:"A page of the account's wallets, newest first."`
		NextCursor *string  `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

func (s *server) registerWallets(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "list-wallets",
		Method:      http.MethodGet,
		Path:        Prefix + "/wallets",
		Summary:     "List wallets",
		Description: "The account's wallets, newest first, without policies or balances, a page at a time like GET /agents (100 unless `limit` says otherwise; `next_cursor` continues).",
		Tags:        []string{"Wallets"},
		Errors:      []int{400, 401, 422},
	}, func(ctx context.Context, in *walletPageQuery) (*listWalletsOutput, error) {
		ws, next, err := walletPage(ctx, s, in, walletOf)
		if err != nil {
			return nil, err
		}
		out := &listWalletsOutput{}
		out.Body.Wallets, out.Body.NextCursor = ws, next
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID:  "fund-wallet",
		Method:       http.MethodPost,
		Path:         Prefix + "/wallets/{id}/fund",
		Summary:      "Fund a wallet on a local chain",
		Description:  "Development only: adds test USDC and SOL to the wallet on the local chain the service runs against (SOLANA_LOCAL_CHAIN), and answers the new balance. On devnet and mainnet it answers 409: send funds to the wallet's address instead.",
		Tags:         []string{"Wallets"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Errors:       []int{400, 401, 404, 409, 413, 422, 502},
	}, s.fund)

	huma.Register(api, huma.Operation{
		OperationID: "get-wallet-balance",
		Method:      http.MethodGet,
		Path:        Prefix + "/wallets/{id}/balance",
		Summary:     "Get a wallet's live balance",
		Description: "SOL and USDC, read live from the Solana RPC node in one call (no caching).",
		Tags:        []string{"Wallets"},
		Errors:      []int{401, 404, 502},
	}, func(ctx context.Context, in *agentIDInput) (*balanceOutput, error) {
		w, err := s.wallet(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		b, err := s.balance(ctx, &w)
		if err != nil {
			return nil, err
		}
		return &balanceOutput{Body: *b}, nil
	})
}

func (s *server) fund(ctx context.Context, in *fundInput) (*balanceOutput, error) {
	var add, sol money.Micros[money.USD]
	for _, f := range []struct {
		name string
		in   *Amount
		max  money.Micros[money.USD]
		out  *money.Micros[money.USD]
	}{{"usdc", in.Body.USDC, MaxFundUSDC, &add}, {"sol", in.Body.SOL, MaxFundSOL, &sol}} {
		if f.in == nil {
			continue
		}
		m, err := f.in.Micros(f.name)
		if err != nil {
			return nil, err
		}
		if m > f.max {
			return nil, fieldError(f.name, "must be at most "+f.max.String())
		}
		*f.out = m
	}
	var tokens []solana.TokenFund
	for _, sym := range slices.Sorted(maps.Keys(in.Body.Assets)) {
		a, err := s.assetNamed(principal(ctx).Network, &sym)
		if err != nil {
			return nil, fieldError("assets."+sym, "is not an asset of this network (GET /assets lists them)")
		}
		m, err := in.Body.Assets[sym].Micros("assets." + sym)
		if err != nil {
			return nil, err
		}
		if m > MaxFundUSDC {
			return nil, fieldError("assets."+sym, "must be at most "+MaxFundUSDC.String())
		}
		if m > 0 && a.Symbol == "USDC" {
			add += m
		} else if m > 0 {
			tokens = append(tokens, solana.TokenFund{Token: a.Token(), Add: uint64(m)})
		}
	}
	if add == 0 && sol == 0 && len(tokens) == 0 {
		return nil, fieldError("usdc", "give usdc, sol or assets greater than 0")
	}
	w, err := s.wallet(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if s.Faucet == nil {
		return nil, errorf(http.StatusConflict, "funding exists only on a local chain: send USDC and SOL to the wallet's address "+w.Pubkey)
	}
	if add > 0 {
		tokens = append([]solana.TokenFund{{Token: principal(ctx).Network.USDC(), Add: uint64(add)}}, tokens...)
	}
	b, err := s.Faucet.Fund(ctx, principal(ctx).Network, w.Pubkey, uint64(sol)*1000, tokens...)
	switch {
	case errors.Is(err, solana.ErrNotLocalChain):
		return nil, errorf(http.StatusConflict, err.Error()+": send USDC and SOL to the wallet's address "+w.Pubkey)
	case errors.Is(err, solana.ErrFundTooLarge):
		return nil, fieldError("usdc", err.Error())
	case err != nil:
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "wallet funded on the local chain", "wallet_id", w.ID, "usdc", add, "sol_micros", sol, "by", principal(ctx).ActorID())
	return &balanceOutput{Body: *balanceOf(principal(ctx).Network, b)}, nil
}
