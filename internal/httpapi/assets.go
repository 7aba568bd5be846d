package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/solana"
)

// AssetOut is one token of the caller's network.
type AssetOut struct {
	Symbol       string `json:"symbol" doc:"The asset's symbol." example:"USDC"`
	Mint         string `json:"mint" doc:"Its mint address." example:"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"`
	TokenProgram string `json:"token_program" enum:"token,token-2022" doc:"The program that owns the mint: SPL Token or Token-2022." example:"token"`
	Decimals     uint8  `json:"decimals" doc:"Decimal places of its base units." example:"6"`
	Currency     string `json:"currency" enum:"USD,EUR" doc:"What it is pegged to. Limits count every asset of one currency together at 1:1 (a USD stablecoin as a dollar); that peg is an assumption of the policy, not a price." example:"USD"`
	// Amounts is always "raw": see the field's doc.
	Amounts string `json:"amounts" enum:"raw" doc:"What the service's amounts of this asset mean: always raw, the mint's base units over 10^decimals (what a transfer moves, what balances show and what limits count). A Token-2022 mint with a scaled UI amount or interest shows holders a different UI amount (see scaled_ui_amount and interest_bearing); the service never converts to it." example:"raw"`
	// The mint's facts, as last read on chain (facts_read_at); all null
	// when it was never read.
	FreezeAuthority   *string             `json:"freeze_authority" nullable:"true" doc:"The mint's freeze authority, which can freeze any holder's account of it (a send from or to a frozen account is refused: account_frozen); null when it has none, or when the mint was not read." example:"7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"`
	IssuerCanSeize    *bool               `json:"issuer_can_seize" nullable:"true" doc:"Whether the issuer can move or burn any holder's tokens without their signature: a Token-2022 PermanentDelegate extension with a delegate set (permanent_delegate). Null when the mint was not read." example:"false"`
	PermanentDelegate *string             `json:"permanent_delegate" nullable:"true" doc:"That permanent delegate; null when none (or not read)." example:"7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"`
	DefaultFrozen     *bool               `json:"default_frozen" nullable:"true" doc:"Whether new accounts of the mint start frozen (Token-2022 DefaultAccountState Frozen) until the freeze authority thaws them: a wallet's new account of it can neither send nor receive until then. Null when the mint was not read." example:"false"`
	ScaledUIAmount    *ScaledUIAmountOut  `json:"scaled_ui_amount,omitempty" doc:"The mint's Token-2022 ScaledUiAmount: holders' wallets show base units times a multiplier. Amounts here stay raw. Absent when the mint has none (or was not read)."`
	InterestBearing   *InterestBearingOut `json:"interest_bearing,omitempty" doc:"The mint's Token-2022 InterestBearingConfig: holders' wallets show base units grown by the rate. Amounts here stay raw. Absent when the mint has none (or was not read)."`
}

// ScaledUIAmountOut is a mint's ScaledUiAmount config.
type ScaledUIAmountOut struct {
	Multiplier      string    `json:"multiplier" doc:"The multiplier in force when read, as a decimal string (the chain keeps a 64-bit float)." example:"1.05"`
	NewMultiplier   string    `json:"new_multiplier" doc:"The multiplier from new_multiplier_at on." example:"1.05"`
	NewMultiplierAt time.Time `json:"new_multiplier_at" doc:"When new_multiplier takes over." example:"2026-12-01T00:00:00Z"`
}

// InterestBearingOut is a mint's InterestBearingConfig.
type InterestBearingOut struct {
	CurrentRateBps int16     `json:"current_rate_bps" doc:"The yearly rate in basis points (may be negative)." example:"500"`
	RateUpdatedAt  time.Time `json:"rate_updated_at" doc:"When the rate was last set." example:"2026-11-01T00:00:00Z"`
}

type assetsOutput struct {
	Body struct {
		Network     string     `json:"network" enum:"devnet,mainnet" doc:"The caller's network." example:"mainnet"`
		Assets      []AssetOut `json:"assets" doc:"USDC first, then the others in the table's order."`
		FactsReadAt *time.Time `json:"facts_read_at" nullable:"true" doc:"When the mints' facts (freeze_authority, issuer_can_seize, permanent_delegate, default_frozen, scaled_ui_amount, interest_bearing) were read on chain: at the API's start, then every few minutes. Null when the network's node has not answered since the start: those facts are then null, not false." example:"2026-12-07T21:00:00Z"`
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
			"A wallet spends the ones its policy lists (assets), USD ones under the _usdc limits and EUR ones under the _eur limits. " +
			"Each shows what its issuer can do to holders, as read from its mint on chain: freeze accounts (freeze_authority), take tokens (issuer_can_seize), " +
			"make new accounts start frozen (default_frozen); and whether holders' wallets show amounts other than the raw ones the service uses (scaled_ui_amount, interest_bearing).",
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
	reading, read := s.AssetFacts.Get(ctx, p.Network)
	if read {
		at := reading.At.UTC()
		out.Body.FactsReadAt = &at
	}
	for _, a := range table.Of(p.Network) {
		o := AssetOut{Symbol: a.Symbol, Mint: a.Mint.String(), TokenProgram: a.ProgramName(),
			Decimals: a.Decimals, Currency: string(a.Currency), Amounts: "raw"}
		if f, ok := reading.Facts[a.Mint]; ok {
			factsOut(&o, f, reading.At)
		}
		out.Body.Assets = append(out.Body.Assets, o)
	}
	return out, nil
}

// factsOut sets o's facts from its mint's, as read at.
func factsOut(o *AssetOut, f solana.MintFacts, at time.Time) {
	seize, frozen := f.IssuerCanSeize(), f.DefaultFrozen
	o.IssuerCanSeize, o.DefaultFrozen = &seize, &frozen
	if k := f.FreezeAuthority; k != nil {
		v := k.String()
		o.FreezeAuthority = &v
	}
	if k := f.PermanentDelegate; k != nil {
		v := k.String()
		o.PermanentDelegate = &v
	}
	if sc := f.ScaledUIAmount; sc != nil {
		o.ScaledUIAmount = &ScaledUIAmountOut{
			Multiplier:      strconv.FormatFloat(sc.MultiplierAt(at.Unix()), 'g', -1, 64),
			NewMultiplier:   strconv.FormatFloat(sc.NewMultiplier, 'g', -1, 64),
			NewMultiplierAt: time.Unix(sc.NewMultiplierAt, 0).UTC(),
		}
	}
	if ib := f.InterestBearing; ib != nil {
		o.InterestBearing = &InterestBearingOut{CurrentRateBps: ib.CurrentRate, RateUpdatedAt: time.Unix(ib.LastUpdateAt, 0).UTC()}
	}
}
