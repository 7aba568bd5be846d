package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/payment"
)

// TransactionsLimit is how many transactions GET /transactions returns.
const TransactionsLimit = 100

// Transaction is an on-chain transfer from an agent wallet.
type Transaction struct {
	ID           string    `json:"id" format:"uuid" doc:"Record id." example:"0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"`
	Signature    string    `json:"signature" doc:"On-chain signature." example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
	Kind         string    `json:"kind" enum:"usdc" doc:"What moved." example:"usdc"`
	Direction    string    `json:"direction" enum:"send" doc:"Out of the wallet." example:"send"`
	Amount       USDC      `json:"amount" doc:"USDC in whole units." example:"1.5"`
	Counterparty string    `json:"counterparty" doc:"The recipient's address." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	Status       string    `json:"status" enum:"pending,confirmed,failed" doc:"pending: broadcast, not yet confirmed; confirmed: confirmed by the cluster; failed: rejected, or expired without landing (its amount no longer counts against the daily limit)." example:"confirmed"`
	Memo         *string   `json:"memo" nullable:"true" doc:"The on-chain memo, or null." example:"invoice 1234"`
	CreatedAt    time.Time `json:"created_at" doc:"When it was signed, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	WalletID     string    `json:"wallet_id" format:"uuid" doc:"The sending wallet." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
}

type transactionsOutput struct {
	Body struct {
		Transactions []Transaction `json:"transactions" doc:"The account's last 100 transactions, newest first."`
	}
}

func (s *server) registerTransactions(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "list-transactions",
		Method:      http.MethodGet,
		Path:        Prefix + "/transactions",
		Summary:     "List recent transactions",
		Description: "The last 100 transactions across every wallet of the account, newest first.",
		Tags:        []string{"Payments"},
		Errors:      []int{401},
	}, s.listTransactions)
}

func (s *server) listTransactions(ctx context.Context, _ *struct{}) (*transactionsOutput, error) {
	ts, err := payment.ListTransactions(ctx, s.DB, principal(ctx).AccountID, TransactionsLimit)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &transactionsOutput{}
	out.Body.Transactions = make([]Transaction, len(ts))
	for i, t := range ts {
		out.Body.Transactions[i] = Transaction{
			ID: t.ID.String(), Signature: t.Signature, Kind: t.Kind, Direction: t.Direction,
			Amount: USDC(t.Amount), Counterparty: t.Counterparty, Status: t.Status, Memo: t.Memo,
			CreatedAt: t.CreatedAt.UTC(), WalletID: t.WalletID.String(),
		}
	}
	return out, nil
}
