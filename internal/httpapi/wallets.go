package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

type balanceOutput struct {
	Body Balance
}

func (s *server) registerWallets(api huma.API) {
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
