package deposit

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/payment"
)

// Deposit is a deposits row: money that came into a wallet. Amount is in
// the asset's base units (micro-USDC, lamports).
type Deposit struct {
	bun.BaseModel `bun:"table:deposits"`

	ID           uuid.UUID `bun:"id,pk,type:uuid"`
	AccountID    uuid.UUID `bun:"account_id,type:uuid"`
	WalletID     uuid.UUID `bun:"wallet_id,type:uuid"`
	Network      string    `bun:"network"`
	Signature    string    `bun:"signature"`
	Asset        string    `bun:"asset"`
	Amount       int64     `bun:"amount"`
	Counterparty string    `bun:"counterparty"`
	Slot         uint64    `bun:"slot"`
	Status       string    `bun:"status"`
	// BelowMinimum: below the account's minimum when recorded, so not
	// announced.
	BelowMinimum bool      `bun:"below_minimum"`
	CreatedAt    time.Time `bun:"created_at"`
}

// List returns the account's deposits that f selects, newest first (as
// payment.ListTransactions selects transactions).
func List(ctx context.Context, db bun.IDB, accountID uuid.UUID, f payment.TxFilter) ([]Deposit, error) {
	ds := []Deposit{}
	if err := f.Select(db.NewSelect().Model(&ds).Where("account_id = ?", accountID)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list deposits: %w", err)
	}
	return ds, nil
}
