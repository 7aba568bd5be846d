package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/wallet"
)

type balanceOutput struct {
	Body Balance
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
}

func walletOf(w *wallet.Wallet) Wallet {
	return Wallet{ID: w.ID.String(), Label: w.Label, Kind: w.Kind, Pubkey: w.Pubkey, State: string(w.State), CreatedAt: w.CreatedAt.UTC()}
}

type listWalletsOutput struct {
	Body struct {
		Wallets    []Wallet   `json:"wallets" doc:"Every wallet of the account, newest first."`
		NextCursor pageCursor `json:"next_cursor,omitzero" doc:"When limit or cursor is given: pass as cursor for the next page; null on the last page. Absent otherwise." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

func (s *server) registerWallets(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "list-wallets",
		Method:      http.MethodGet,
		Path:        Prefix + "/wallets",
		Summary:     "List wallets",
		Description: "Every wallet of the account, newest first, without policies or balances; `limit` and `cursor` page them.",
		Tags:        []string{"Wallets"},
		Errors:      []int{400, 401, 422},
	}, func(ctx context.Context, in *walletPageQuery) (*listWalletsOutput, error) {
		ws, next, err := s.wallets(ctx, in)
		if err != nil {
			return nil, err
		}
		out := &listWalletsOutput{}
		out.Body.NextCursor = next
		out.Body.Wallets = make([]Wallet, len(ws))
		for i := range ws {
			out.Body.Wallets[i] = walletOf(&ws[i])
		}
		return out, nil
	})

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
