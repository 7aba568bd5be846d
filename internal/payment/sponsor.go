package payment

import (
	"context"
	"fmt"
	"strings"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/feepayer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// errFeePayerBudget: the account's fee payer would pass its daily budget
// with this transfer; nothing signed.
type errFeePayerBudget struct {
	spent, cost, budget int64
}

func (e errFeePayerBudget) Error() string {
	return fmt.Sprintf("the account's fee payer has spent %s of its daily budget of %s SOL, and this payment's fee and rent (%s SOL) would pass it",
		solString(e.spent), solString(e.budget), solString(e.cost))
}

// solString is lamports as SOL, with no trailing zeros.
func solString(lamports int64) string {
	s := fmt.Sprintf("%d.%09d", lamports/solana.LamportsPerSOL, lamports%solana.LamportsPerSOL)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// sponsor decides, under the account's fee payer row lock (held until
// the decision commits), whether the account's fee payer pays t: still
// enabled, its cost (the fee and, when the recipient's token account may
// have to be made, its rent) is checked against the day's budget with
// every earlier sponsored transaction of the day counted; over it,
// errFeePayerBudget. Turned off since the fee reading: the wallet pays,
// nil.
func (e *Engine) sponsor(ctx context.Context, tx bun.Tx, s *spend, t *solana.Transfer, units uint32, rent uint64, replacing uuid.UUID, at time.Time) (*feepayer.FeePayer, int64, error) {
	f, ok, err := feepayer.Lock(ctx, tx, s.accountID)
	if err != nil {
		return nil, 0, err
	}
	if !ok || !f.Enabled {
		t.FeePayer = sol.PublicKey{}
		return nil, 0, nil
	}
	t.FeePayer = f.PublicKey()
	cost := int64(t.FeeLamports(units, t.ComputeUnitPrice))
	if !t.RecipientAccountExists {
		cost += int64(rent) // the recipient's new account: its size depends on the mint
	}
	spent, _, err := feepayer.SpentToday(ctx, tx, s.accountID, at, replacing)
	if err != nil {
		return nil, 0, err
	}
	if spent+cost > f.DailyBudget {
		e.log().WarnContext(ctx, "fee payer's daily budget reached; nothing signed", "account_id", s.accountID,
			"spent_lamports", spent, "cost_lamports", cost, "budget_lamports", f.DailyBudget)
		return nil, 0, errFeePayerBudget{spent: spent, cost: cost, budget: f.DailyBudget}
	}
	return &f, cost, nil
}
