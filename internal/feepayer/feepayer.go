// Package feepayer owns an account's fee payer (fee sponsorship): a wallet
// of the service that pays the network fee and the rent of created token
// accounts for the account's agent wallets, so they need no SOL. It is not
// an agent wallet: it has no row in wallets, so no API route can spend
// from it; its secret is sealed like theirs (internal/signer) and only the
// worker opens it, to co-sign sponsored transfers.
package feepayer

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// Budget bounds, in lamports: above zero (a zero budget is "off"), and at
// most MaxBudget, so a typo cannot hand an agent an unbounded drain.
const (
	MaxBudget     = 100 * solana.LamportsPerSOL
	DefaultBudget = solana.LamportsPerSOL
)

// Target is how audit entries name an account's fee payer.
const Target = "fee_payer"

// FeePayer is an account's fee payer row. Pubkey and the sealed secret are
// empty until it is first enabled.
type FeePayer struct {
	bun.BaseModel `bun:"table:fee_payers"`

	AccountID    uuid.UUID `bun:"account_id,pk,type:uuid"`
	Enabled      bool      `bun:"enabled"`
	DailyBudget  int64     `bun:"daily_budget_lamports"`
	Pubkey       *string   `bun:"pubkey"`
	SecretKeyID  *string   `bun:"secret_key_id"`
	SecretSealed []byte    `bun:"secret_sealed"`
	CreatedAt    time.Time `bun:"created_at"`
	UpdatedAt    time.Time `bun:"updated_at"`
}

// PublicKey is the fee payer's address (zero before it is made).
func (f *FeePayer) PublicKey() sol.PublicKey {
	if f.Pubkey == nil {
		return sol.PublicKey{}
	}
	return sol.MustPublicKeyFromBase58(*f.Pubkey)
}

// Sealed is the fee payer's sealed secret, for the worker to open.
// Key names the fee payer's key for a signer.
func (f *FeePayer) Key() signer.Key {
	pub := f.PublicKey()
	return signer.Key{Public: ed25519.PublicKey(pub[:]), Sealed: f.Sealed()}
}

func (f *FeePayer) Sealed() signer.Sealed {
	s := signer.Sealed{Ciphertext: f.SecretSealed}
	if f.SecretKeyID != nil {
		s.KeyID = *f.SecretKeyID
	}
	return s
}

// publicColumns are a fee payer's columns but its sealed secret.
const publicColumns = "account_id, enabled, daily_budget_lamports, pubkey, secret_key_id, created_at, updated_at"

// Get is the account's fee payer without its secret; ok is false when the
// account never set one.
func Get(ctx context.Context, db bun.IDB, accountID uuid.UUID) (f FeePayer, ok bool, err error) {
	err = postgres.QueryRow(ctx, db, []any{&f}, `SELECT `+publicColumns+` FROM fee_payers WHERE account_id = $1`, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return FeePayer{}, false, nil
	}
	if err != nil {
		return FeePayer{}, false, fmt.Errorf("select fee payer: %w", err)
	}
	return f, true, nil
}

// Lock reads the account's fee payer with its secret and holds its row
// until tx ends: every sponsored signing of the account takes it, so the
// day's spend read after it includes every earlier sponsored transaction.
// ok is false when the account has none (nothing is locked then).
func Lock(ctx context.Context, tx bun.IDB, accountID uuid.UUID) (f FeePayer, ok bool, err error) {
	err = tx.NewSelect().Model(&f).Where("account_id = ?", accountID).For("UPDATE").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return FeePayer{}, false, nil
	}
	if err != nil {
		return FeePayer{}, false, fmt.Errorf("lock fee payer: %w", err)
	}
	return f, true, nil
}

// SpentToday is what the account's fee payer paid or may pay in at's UTC
// day, and in how many transactions: the sponsored_lamports of every
// transaction it signed that day (by signed_at: a payment signed again
// after midnight counts in the day of its current attempt). A signed
// transaction reserves its fee and rent; one the node refused, or that
// expired unseen, counts nothing once recorded so, and one that landed
// and failed its fee alone (the payment engine rewrites its
// sponsored_lamports). except, a transaction being signed again (its
// current attempt is replaced by the one being priced), is left out;
// uuid.Nil leaves out nothing.
func SpentToday(ctx context.Context, db bun.IDB, accountID uuid.UUID, at time.Time, except uuid.UUID) (lamports int64, count int, err error) {
	err = db.NewSelect().Table("transactions").ColumnExpr("coalesce(sum(sponsored_lamports), 0), count(*)").
		Where("account_id = ? AND fee_payer IS NOT NULL AND signed_at >= ? AND id <> ?", accountID, policy.DayStart(at), except).
		Scan(ctx, &lamports, &count)
	if err != nil {
		return 0, 0, fmt.Errorf("sum the fee payer's spend today: %w", err)
	}
	return lamports, count, nil
}

// Change is a PUT /fee-payer: Enabled, and the budget when given.
type Change struct {
	Enabled bool
	Budget  *int64 // lamports; nil keeps the current one (or the default)
}

// BudgetError is a budget out of range.
type BudgetError struct{ Lamports int64 }

func (e *BudgetError) Error() string {
	return fmt.Sprintf("daily budget %d lamports: want above 0 and at most %d SOL", e.Lamports, MaxBudget/solana.LamportsPerSOL)
}

// Set applies c to the account's fee payer by actor, under its row's lock
// (a send signing with it finishes first; the next one sees the change),
// with an audit entry. The keypair is made, and sealed at once, the first
// time it is enabled; disabling keeps it (enabling again reuses it).
// defaultBudget is the budget of a fee payer made without one.
func Set(ctx context.Context, db *bun.DB, sealer wallet.Sealer, accountID uuid.UUID, actor string, c Change, defaultBudget int64) (FeePayer, error) {
	if c.Budget != nil && (*c.Budget <= 0 || *c.Budget > MaxBudget) {
		return FeePayer{}, &BudgetError{*c.Budget}
	}
	var f FeePayer
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		budget := defaultBudget
		if c.Budget != nil {
			budget = *c.Budget
		}
		if _, err := tx.NewRaw(`INSERT INTO fee_payers (account_id, daily_budget_lamports) VALUES (?, ?)
			ON CONFLICT (account_id) DO NOTHING`, accountID, budget).Exec(ctx); err != nil {
			return fmt.Errorf("insert fee payer: %w", err)
		}
		var ok bool
		var err error
		if f, ok, err = Lock(ctx, tx, accountID); err != nil {
			return err
		} else if !ok {
			return errors.New("fee payer row vanished")
		}
		before := map[string]any{"enabled": f.Enabled, "daily_budget_lamports": f.DailyBudget}
		made := false
		if c.Enabled && f.Pubkey == nil {
			pub, sealed, err := sealer.NewWallet()
			if err != nil {
				return fmt.Errorf("make the fee payer's wallet: %w", err)
			}
			addr := sol.PublicKeyFromBytes(pub).String()
			f.Pubkey, f.SecretKeyID, f.SecretSealed, made = &addr, &sealed.KeyID, sealed.Ciphertext, true
		}
		f.Enabled = c.Enabled
		if c.Budget != nil {
			f.DailyBudget = *c.Budget
		}
		var now time.Time
		err = tx.NewRaw(`UPDATE fee_payers SET enabled = ?, daily_budget_lamports = ?, pubkey = ?, secret_key_id = ?, secret_sealed = ?, updated_at = now()
			WHERE account_id = ? RETURNING updated_at`,
			f.Enabled, f.DailyBudget, f.Pubkey, f.SecretKeyID, f.SecretSealed, accountID).Scan(ctx, &now)
		if err != nil {
			return fmt.Errorf("update fee payer: %w", err)
		}
		f.UpdatedAt = now
		details := map[string]any{"enabled": f.Enabled, "daily_budget_lamports": f.DailyBudget, "before": before, "pubkey": f.Pubkey, "wallet_made": made}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: accountID,
			At:        now,
			Actor:     audit.Actor(actor),
			Action:    audit.ActionFeePayerUpdated,
			Target:    Target,
			Details:   details,
		})
	})
	if err != nil {
		return FeePayer{}, err
	}
	f.SecretSealed = nil
	return f, nil
}
