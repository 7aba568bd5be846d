package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/feepayer"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// FeePayer is the account's fee payer as GET and PUT /fee-payer answer it.
type FeePayer struct {
	Enabled bool    `json:"enabled" doc:"Whether the fee payer pays the network fee (and the rent of a recipient's new USDC account) of the account's sends, so agent wallets need no SOL." example:"true"`
	Address *string `json:"address" nullable:"true" doc:"The fee payer's Solana address, to fund with SOL; null until it is first enabled." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	SOL     *SOL    `json:"sol" nullable:"true" doc:"Its SOL balance, read live; null before it has an address, or when the Solana node did not answer (the rest is still current)." example:"0.75"`
	Budget  SOL     `json:"daily_budget_sol" doc:"The most SOL it may pay in fees and rent per UTC day; past it, sends answer 503 fee_payer_budget_exceeded." example:"1"`
	Spent   SOL     `json:"spent_today_sol" doc:"What it paid or may still pay today (UTC): fee and rent of the transactions it signed today that landed or may still land; one the node refused or that expired unseen counts nothing, one that landed and failed its fee." example:"0.0041"`
	Count   int     `json:"transactions_today" doc:"How many transactions it signed today (UTC)." example:"2"`
	Low     bool    `json:"low" doc:"Enabled and its SOL balance is below one day's budget: fund it before it runs dry." example:"false"`
}

type feePayerOutput struct {
	Body FeePayer
}

type putFeePayerInput struct {
	Body struct {
		Enabled bool    `json:"enabled" required:"true" doc:"Turn sponsorship on or off. The fee payer's wallet is made the first time it is enabled, and kept when it is turned off." example:"true"`
		Budget  *Amount `json:"daily_budget_sol,omitempty" doc:"The daily budget in SOL: above 0, at most 100, at most 9 decimals. Default: the current one, or FEE_PAYER_DAILY_BUDGET_SOL for a new fee payer." example:"1"`
	}
}

type fundFeePayerInput struct {
	Body struct {
		SOL *Amount `json:"sol" required:"true" doc:"SOL to add, above 0, at most 100, at most 6 decimals." example:"1"`
	}
}

func (s *server) registerFeePayer(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "get-fee-payer",
		Method:      http.MethodGet,
		Path:        Prefix + "/fee-payer",
		Summary:     "Get the account's fee payer",
		Description: "The fee payer (fee sponsorship): whether it is on, its address and live SOL balance, its daily budget and today's spend (UTC), " +
			"and `low` when its balance is below one day's budget. Never configured: off, no address, the default budget. " +
			"When the Solana node does not answer, `sol` is null and the rest is answered.",
		Tags:   []string{"Fee payer"},
		Errors: []int{401},
	}, func(ctx context.Context, _ *struct{}) (*feePayerOutput, error) {
		out, err := s.feePayer(ctx)
		if err != nil {
			return nil, err
		}
		return &feePayerOutput{Body: *out}, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "update-fee-payer",
		Method:      http.MethodPut,
		Path:        Prefix + "/fee-payer",
		Summary:     "Turn the fee payer on or off and set its budget",
		Description: "Owners and admin keys only. With `enabled` true, the account's sends are signed by the fee payer too, which pays their network fee and, " +
			"when the recipient has no USDC account yet, its rent: agent wallets need no SOL. Its wallet (made and sealed like agent wallets; " +
			"its key is opened only by the worker, and no route spends from it) is made the first time it is enabled; fund its address with SOL. " +
			"A send that would take its spend today (UTC) past `daily_budget_sol` answers 503 `fee_payer_budget_exceeded`, nothing signed or reserved. " +
			"Sends being signed when it changes finish as they began; the next ones see the change.",
		Tags:         []string{"Fee payer"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Errors:       []int{400, 401, 403, 413, 422},
	}, s.putFeePayer)

	huma.Register(api, huma.Operation{
		OperationID:   "fund-fee-payer",
		Method:        http.MethodPost,
		Path:          Prefix + "/fee-payer/fund",
		Summary:       "Fund the fee payer on a local chain",
		Description:   "Development only: adds test SOL to the fee payer on the local chain the service runs against (SOLANA_LOCAL_CHAIN). 409 before it was first enabled, and on devnet and mainnet (send SOL to its address instead).",
		Tags:          []string{"Fee payer"},
		MaxBodyBytes:  MaxBodyBytes + 1,
		DefaultStatus: http.StatusOK,
		Errors:        []int{400, 401, 403, 409, 413, 422, 502},
	}, s.fundFeePayer)
}

// defaultFeePayerBudget is the budget of a fee payer made without one.
func (s *server) defaultFeePayerBudget() int64 {
	if s.FeePayerDailyBudget > 0 {
		return s.FeePayerDailyBudget
	}
	return feepayer.DefaultBudget
}

// feePayer reads the account's fee payer, today's spend and, when it has
// an address, its balance: a node failure leaves sol null (the budget and
// the spend are the database's, and still worth showing).
func (s *server) feePayer(ctx context.Context) (*FeePayer, error) {
	p := principal(ctx)
	f, ok, err := feepayer.Get(ctx, s.DB, p.AccountID)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &FeePayer{Budget: SOL(s.defaultFeePayerBudget())}
	if !ok {
		return out, nil
	}
	out.Enabled, out.Address, out.Budget = f.Enabled, f.Pubkey, SOL(f.DailyBudget)
	spent, count, err := feepayer.SpentToday(ctx, s.DB, p.AccountID, time.Now(), uuid.Nil)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out.Spent, out.Count = SOL(spent), count
	if f.Pubkey == nil || s.Balances == nil {
		return out, nil
	}
	b, err := s.Balances.Balance(ctx, p.Network, *f.Pubkey)
	if err != nil {
		s.log.WarnContext(ctx, "fee payer's balance not read", "err", err)
		return out, nil
	}
	bal := SOL(b.Lamports)
	out.SOL = &bal
	out.Low = f.Enabled && int64(b.Lamports) < f.DailyBudget
	return out, nil
}

func (s *server) putFeePayer(ctx context.Context, in *putFeePayerInput) (*feePayerOutput, error) {
	c := feepayer.Change{Enabled: in.Body.Enabled}
	if in.Body.Budget != nil {
		lamports, err := solana.ParseSOL(in.Body.Budget.text)
		if err != nil {
			return nil, fieldError("daily_budget_sol", err.Error())
		}
		c.Budget = &lamports
	}
	if s.Sealer == nil {
		return nil, errorf(http.StatusServiceUnavailable, "wallets cannot be sealed")
	}
	p := principal(ctx)
	_, err := feepayer.Set(ctx, s.DB, s.Sealer, p.AccountID, p.ActorID(), c, s.defaultFeePayerBudget())
	var be *feepayer.BudgetError
	if errors.As(err, &be) {
		return nil, fieldError("daily_budget_sol", "must be above 0 and at most 100 SOL")
	}
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "fee payer updated", "enabled", c.Enabled, "by", p.ActorID())
	out, err := s.feePayer(ctx)
	if err != nil {
		return nil, err
	}
	return &feePayerOutput{Body: *out}, nil
}

func (s *server) fundFeePayer(ctx context.Context, in *fundFeePayerInput) (*balanceOutput, error) {
	m, err := in.Body.SOL.Micros("sol")
	if err != nil {
		return nil, err
	}
	if m == 0 || m > MaxFundSOL {
		return nil, fieldError("sol", "must be above 0 and at most "+money.Micros[money.USD](MaxFundSOL).String())
	}
	p := principal(ctx)
	f, ok, err := feepayer.Get(ctx, s.DB, p.AccountID)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	if !ok || f.Pubkey == nil {
		return nil, errorf(http.StatusConflict, "the account has no fee payer yet: enable it first (PUT /fee-payer)")
	}
	if s.Faucet == nil {
		return nil, errorf(http.StatusConflict, "funding exists only on a local chain: send SOL to the fee payer's address "+*f.Pubkey)
	}
	b, err := s.Faucet.Fund(ctx, p.Network, *f.Pubkey, uint64(m)*1000)
	switch {
	case errors.Is(err, solana.ErrNotLocalChain):
		return nil, errorf(http.StatusConflict, err.Error()+": send SOL to the fee payer's address "+*f.Pubkey)
	case err != nil:
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "fee payer funded on the local chain", "sol_micros", m, "by", p.ActorID())
	return &balanceOutput{Body: *balanceOf(p.Network, b)}, nil
}
