package deposit

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
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
	CreatedAt    time.Time `bun:"created_at"`
}

// Filter selects deposits of an account as payment.TxFilter selects
// transactions (zero fields select all), newest first.
type Filter struct {
	WalletID     uuid.NullUUID
	Wallets      []uuid.UUID // a key's wallet scope, when not nil
	Status       string
	Since, Until time.Time
	AfterTime    time.Time
	AfterID      uuid.UUID
	Limit        int
}

// List returns the account's deposits that f selects, newest first.
func List(ctx context.Context, db bun.IDB, accountID uuid.UUID, f Filter) ([]Deposit, error) {
	ds := []Deposit{}
	q := db.NewSelect().Model(&ds).Where("account_id = ?", accountID).Order("created_at DESC", "id DESC").Limit(int64(f.Limit))
	if f.WalletID.Valid {
		q = q.Where("wallet_id = ?", f.WalletID.UUID)
	}
	if f.Wallets != nil {
		q = q.Where("wallet_id IN (?)", bun.List(f.Wallets))
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		q = q.Where("created_at < ?", f.Until)
	}
	if !f.AfterTime.IsZero() {
		q = q.Where("(created_at, id) < (?, ?)", f.AfterTime, f.AfterID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list deposits: %w", err)
	}
	return ds, nil
}
