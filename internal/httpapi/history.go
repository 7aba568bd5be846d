package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/deposit"
)

type historyInput struct {
	ID       string    `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	From     time.Time `query:"from" doc:"First instant (ISO 8601); default: 30 intervals before to." example:"2026-04-01T00:00:00Z"`
	To       time.Time `query:"to" doc:"Last instant (ISO 8601); default: now." example:"2026-04-30T00:00:00Z"`
	Interval string    `query:"interval" enum:"hour,day" doc:"The step between points; default day." example:"day"`
	At       time.Time `query:"at" doc:"One instant only (ISO 8601): the balance then; from, to and interval are then not given." example:"2026-04-15T12:00:00Z"`
}

// BalancePoint is a wallet's balance at an instant, from its ledger.
type BalancePoint struct {
	At   time.Time `json:"at" doc:"The instant, ISO 8601 UTC." example:"2026-04-15T12:00:00Z"`
	USDC Quantity  `json:"usdc" doc:"USDC across the wallet's token accounts after the last change at or before at." example:"42.5"`
	SOL  Quantity  `json:"sol" doc:"SOL of the wallet's address after the last change at or before at." example:"0.25"`
}

type historyOutput struct {
	Body struct {
		WalletID string         `json:"wallet_id" format:"uuid" doc:"The wallet." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
		Points   []BalancePoint `json:"points" doc:"Oldest first."`
	}
}

// registerHistory mounts a wallet's balance over time.
func (s *server) registerHistory(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "get-wallet-balance-history",
		Method:      http.MethodGet,
		Path:        Prefix + "/wallets/{id}/balance/history",
		Summary:     "Get a wallet's balance over time",
		Description: "The wallet's USDC and SOL at each instant from `from` to `to` every `interval` (at most 1,000 points), or at one instant (`at`), " +
			"from its ledger: every change of its accounts, read from the transactions that made them (sends with their fees, deposits, x402 payments), " +
			"recorded by the deposit watcher within seconds of confirmation. A change made without a transaction (a test chain's faucet) is not in it.",
		Tags:   []string{"Wallets"},
		Errors: []int{400, 401, 404, 422},
	}, s.history)
}

func (s *server) history(ctx context.Context, in *historyInput) (*historyOutput, error) {
	w, err := s.wallet(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var at []time.Time
	if !in.At.IsZero() {
		if !in.From.IsZero() || !in.To.IsZero() || in.Interval != "" {
			return nil, inputError("query", "at", "give at alone, or from, to and interval")
		}
		if !plausible(in.At) {
			return nil, inputError("query", "at", "must be between 1970 and 9999")
		}
		at = []time.Time{in.At}
	} else {
		step := 24 * time.Hour
		if in.Interval == "hour" {
			step = time.Hour
		}
		to := in.To
		if to.IsZero() {
			to = time.Now().UTC()
		}
		from := in.From
		if from.IsZero() {
			from = to.Add(-30 * step)
		}
		if !plausible(from) || !plausible(to) {
			return nil, inputError("query", "from", "from and to must be between 1970 and 9999")
		}
		if at, err = deposit.Instants(from, to, step); err != nil {
			return nil, inputError("query", "from", err.Error())
		}
	}
	points, err := deposit.History(ctx, s.DB, w.ID, at)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &historyOutput{}
	out.Body.WalletID = w.ID.String()
	out.Body.Points = make([]BalancePoint, len(points))
	for i, p := range points {
		out.Body.Points[i] = BalancePoint{At: p.At.UTC(), USDC: quantityOf(deposit.USDC, p.USDC), SOL: quantityOf(deposit.SOL, p.SOL)}
	}
	return out, nil
}
