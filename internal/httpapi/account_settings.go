package httpapi

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// AccountSettings are the account's settings as GET and PATCH
// /account/settings answer them.
type AccountSettings struct {
	DepositMinUSDC USDC `json:"deposit_min_usdc" doc:"Deposits of a USD stablecoin (USDC) below this amount are recorded and listed with below_minimum true, but not announced (no tx.received event). Default 0.01." example:"0.01"`
	DepositMinEUR  EUR  `json:"deposit_min_eur" doc:"The same for a EUR stablecoin (EURC), in euros. Default 0.01." example:"0.01"`
	DepositMinSOL  SOL  `json:"deposit_min_sol" doc:"The same for SOL. Default 0.001." example:"0.001"`
}

type accountSettingsOutput struct {
	Body AccountSettings
}

type patchAccountSettingsInput struct {
	Body struct {
		DepositMinUSDC *Amount `json:"deposit_min_usdc,omitempty" doc:"Deposits of a USD stablecoin below this are not announced: 0 to 1,000,000, at most 6 decimals; 0 announces every deposit." example:"0.01"`
		DepositMinEUR  *Amount `json:"deposit_min_eur,omitempty" doc:"Deposits of a EUR stablecoin below this are not announced: 0 to 1,000,000, at most 6 decimals." example:"0.01"`
		DepositMinSOL  *Amount `json:"deposit_min_sol,omitempty" doc:"Deposits of SOL below this are not announced: 0 to 1,000, at most 9 decimals." example:"0.001"`
	}
}

// Bounds of the deposit minimums: a minimum above these would hide real
// payments.
const (
	maxDepositMinMicros   = 1_000_000 * 1_000_000
	maxDepositMinLamports = 1_000 * 1_000_000_000
)

func (s *server) registerAccountSettings(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "get-account-settings",
		Method:      http.MethodGet,
		Path:        Prefix + "/account/settings",
		Summary:     "Get the account's settings",
		Description: "The account's settings: the minimum of a deposit that is announced, per currency. Deposits below it are recorded " +
			"and listed (`GET /transactions`, `below_minimum: true`) but raise no `tx.received` event, so dust sent by strangers " +
			"does not reach every webhook endpoint.",
		Tags:   []string{"Account"},
		Errors: []int{401},
	}, func(ctx context.Context, _ *struct{}) (*accountSettingsOutput, error) {
		out, err := s.accountSettings(ctx)
		if err != nil {
			return nil, err
		}
		return &accountSettingsOutput{Body: *out}, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "update-account-settings",
		Method:      http.MethodPatch,
		Path:        Prefix + "/account/settings",
		Summary:     "Change the account's settings",
		Description: "Owners and admin keys only. Sets the fields given; the others stay. The minimums apply to deposits recorded from then on. " +
			"Each change is an audit entry (`account.settings_updated`, with the values set in base units).",
		Tags: []string{"Account"},
		// The body's fields are all optional: an empty object changes nothing.
		MaxBodyBytes: MaxBodyBytes + 1,
		Errors:       []int{400, 401, 403, 413, 422},
	}, s.patchAccountSettings)
}

func (s *server) accountSettings(ctx context.Context) (*AccountSettings, error) {
	var m deposit.Minimums
	err := s.DB.NewRaw(`SELECT deposit_min_usd, deposit_min_eur, deposit_min_sol FROM accounts WHERE id = ?`, principal(ctx).AccountID).Scan(ctx, &m)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, s.fail(ctx, err)
	}
	return &AccountSettings{
		DepositMinUSDC: USDC(m.MinUSD()),
		DepositMinEUR:  EUR(m.MinEUR()),
		DepositMinSOL:  SOL(m.MinSOL()),
	}, nil
}

func (s *server) patchAccountSettings(ctx context.Context, in *patchAccountSettingsInput) (*accountSettingsOutput, error) {
	set := map[string]int64{}
	if a := in.Body.DepositMinUSDC; a != nil {
		m, err := a.Micros("deposit_min_usdc")
		if err != nil {
			return nil, err
		}
		if m > maxDepositMinMicros {
			return nil, fieldError("deposit_min_usdc", "must be at most "+money.Micros[money.USD](maxDepositMinMicros).String())
		}
		set["deposit_min_usd"] = int64(m)
	}
	if a := in.Body.DepositMinEUR; a != nil {
		m, err := a.EURMicros("deposit_min_eur")
		if err != nil {
			return nil, err
		}
		if m > maxDepositMinMicros {
			return nil, fieldError("deposit_min_eur", "must be at most "+money.Micros[money.EUR](maxDepositMinMicros).String())
		}
		set["deposit_min_eur"] = int64(m)
	}
	if a := in.Body.DepositMinSOL; a != nil {
		lamports, err := solana.ParseSOL(a.text)
		if err != nil {
			return nil, fieldError("deposit_min_sol", err.Error())
		}
		if lamports < 0 || lamports > maxDepositMinLamports {
			return nil, fieldError("deposit_min_sol", "must be 0 to 1000 SOL")
		}
		set["deposit_min_sol"] = lamports
	}
	p := principal(ctx)
	if len(set) > 0 {
		// The change and its audit entry in one commit: which deposits are
		// announced is something humans must be able to trace.
		err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			q := tx.NewUpdate().Table("accounts").Where("id = ?", p.AccountID)
			for col, v := range set {
				q = q.Set("? = ?", bun.Ident(col), v)
			}
			if _, err := q.Exec(ctx); err != nil {
				return err
			}
			return audit.Append(ctx, tx, audit.Entry{
				AccountID: p.AccountID,
				At:        time.Now().UTC(),
				Actor:     audit.Actor(p.ActorID()),
				Action:    audit.ActionAccountSettingsUpdated,
				Target:    "account",
				Details:   set,
			})
		})
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		s.log.InfoContext(ctx, "account settings changed", "fields", len(set), "by", p.ActorID())
	}
	out, err := s.accountSettings(ctx)
	if err != nil {
		return nil, err
	}
	return &accountSettingsOutput{Body: *out}, nil
}
