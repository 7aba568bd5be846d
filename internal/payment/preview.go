package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// PreviewQuery is a payment to preview.
type PreviewQuery struct {
	AccountID, WalletID uuid.UUID
	To                  string
	// Asset is what is paid (its zero value: USDC), Amount its units.
	Asset  asset.Asset
	Amount money.Quantity
	// Proposed, when not nil, is applied to the wallet's policy first
	// (what the send would do were that change saved).
	Proposed *policy.Patch
	// Approved previews what approving the payment would do: its count
	// and hours are not judged again (see policy.Request).
	Approved bool
	// At is when to decide; zero reads the database's clock.
	At time.Time
}

// Preview is what a send would be decided now, and the figures behind it.
type Preview struct {
	Decision policy.Decision
	Policy   policy.Policy
	// Usage has every window, whether or not the policy limits it.
	Usage policy.Usage
	// At is the time it was decided at.
	At time.Time
	// Asset is what it pays.
	Asset asset.Asset
}

// PreviewSend evaluates a send as a worker would at q.At, writing nothing
// and reserving nothing. It does not lock the wallet: a send decided
// meanwhile may change the answer. An invalid proposed policy is a
// *wallet.FieldError under "policy.".
func PreviewSend(ctx context.Context, db bun.IDB, q PreviewQuery) (Preview, error) {
	w, err := wallet.Get(ctx, db, q.AccountID, q.WalletID)
	if err != nil {
		return Preview{}, err
	}
	p := w.Policy()
	if q.Proposed != nil {
		p = p.Apply(*q.Proposed)
		if err := wallet.CheckPolicy(p, "policy."); err != nil {
			return Preview{}, err
		}
	}
	if w.Pubkey == q.To {
		return Preview{}, ErrSelfSend
	}
	at := q.At
	if at.IsZero() {
		if err := db.NewRaw("SELECT now()").Scan(ctx, &at); err != nil {
			return Preview{}, fmt.Errorf("read the database clock: %w", err)
		}
	}
	at = at.UTC()
	a := q.Asset
	if a.Symbol == "" {
		a = asset.Asset{Symbol: "USDC", Currency: asset.USD}
	}
	// Both currencies' figures: the preview shows the USD limits' and the
	// EUR ones' whatever the asset.
	usage, err := ReadUsage(ctx, db, w.ID, at, policy.Windows{Week: true, Month: true, Hour: true, Day: true})
	if err != nil {
		return Preview{}, err
	}
	eur, err := ReadUsage(ctx, db, w.ID, at, policy.Windows{Currency: asset.EUR, Week: true, Month: true})
	if err != nil {
		return Preview{}, err
	}
	usage.EUR = eur.EUR
	d := p.Evaluate(policy.Request{To: q.To, Asset: a.Symbol, Amount: a.Amount(q.Amount), Frozen: w.State == wallet.Frozen, Usage: usage, At: at, Approved: q.Approved})
	return Preview{Decision: d, Policy: p, Usage: usage, At: at, Asset: a}, nil
}
