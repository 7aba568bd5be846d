package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// AssetOut is one token of the caller's network.
type AssetOut struct {
	Symbol       string `json:"symbol" doc:"The asset's symbol." example:"USDC"`
	Mint         string `json:"mint" doc:"Its mint address." example:"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"`
	TokenProgram string `json:"token_program" enum:"token,token-2022" doc:"The program that owns the mint: SPL Token or Token-2022." example:"token"`
	Decimals     uint8  `json:"decimals" doc:"Decimal places of its base units." example:"6"`
	Currency     string `json:"currency" enum:"USD,EUR" doc:"What it is pegged to. Limits count every asset of one currency together at 1:1 (a USD stablecoin as a dollar); that peg is an assumption of the policy, not a price." example:"USD"`
}

type assetsOutput struct {
	Body struct {
		Network string     `json:"network" enum:"devnet,mainnet" doc:"The caller's network." example:"mainnet"`
		Assets  []AssetOut `json:"assets" doc:"USDC first, then the others in the table's order."`
	}
}

// registerAssets mounts the table of assets.
func (s *server) registerAssets(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "list-assets",
		Method:      http.MethodGet,
		Path:        Prefix + "/assets",
		Summary:     "List the assets of the caller's network",
		Description: "The tokens the service knows on the caller's network: the stablecoins at their real mints (USDC, USDT, PYUSD, USDG, EURC; USDT has no devnet mint) " +
			"and any the operator added (`ASSETS`), each checked on chain (its program and decimals) before a worker starts. " +
			"A wallet spends the ones its policy lists (assets), USD ones under the _usdc limits and EUR ones under the _eur limits.",
		Tags:   []string{"Wallets"},
		Errors: []int{401},
	}, s.assets)
}

func (s *server) assets(ctx context.Context, _ *struct{}) (*assetsOutput, error) {
	p := principal(ctx)
	table := s.Assets.OrDefaults()
	out := &assetsOutput{}
	out.Body.Network = string(p.Network)
	out.Body.Assets = []AssetOut{}
	for _, a := range table.Of(p.Network) {
		out.Body.Assets = append(out.Body.Assets, AssetOut{Symbol: a.Symbol, Mint: a.Mint.String(), TokenProgram: a.ProgramName(),
			Decimals: a.Decimals, Currency: string(a.Currency)})
	}
	return out, nil
}
