package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/usdc"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// Preview is what a send would be decided now, and the figures behind it.
type Preview struct {
	Decision   policy.Decision
	Policy     policy.Policy
	SpentToday usdc.Micros
}

// PreviewSend evaluates a send of amount to `to` from wallet id of the
// account exactly as a worker would at this moment (the database's clock
// places it in its UTC day), writing nothing and reserving nothing. It
// does not lock the wallet: a send decided meanwhile may change the answer.
// A non-nil proposed patch is applied to the wallet's policy first (what
// the send would do were that change saved); an invalid result is a
// *wallet.FieldError under "policy.".
func PreviewSend(ctx context.Context, db bun.IDB, accountID, id uuid.UUID, to string, amount usdc.Micros, proposed *policy.Patch) (Preview, error) {
	w, err := wallet.Get(ctx, db, accountID, id)
	if err != nil {
		return Preview{}, err
	}
	p := w.Policy()
	if proposed != nil {
		p = p.Apply(*proposed)
		if err := wallet.CheckPolicy(p, "policy."); err != nil {
			return Preview{}, err
		}
	}
	if w.Pubkey == to {
		return Preview{}, ErrSelfSend
	}
	var at time.Time
	if err := db.NewRaw("SELECT now()").Scan(ctx, &at); err != nil {
		return Preview{}, fmt.Errorf("read the database clock: %w", err)
	}
	spent, err := ReservedToday(ctx, db, w.ID, at)
	if err != nil {
		return Preview{}, err
	}
	d := p.Evaluate(policy.Request{To: to, Amount: amount, Frozen: w.State == wallet.Frozen, SpentToday: spent})
	return Preview{Decision: d, Policy: p, SpentToday: spent}, nil
}
