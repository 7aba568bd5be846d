package payment

import (
	"context"
	"errors"
	"fmt"

	sol "github.com/gagliardetto/solana-go"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// firstBroadcast sends the stored bytes and records the final outcome. A
// refusal by the node proves nothing went out: the transaction is never
// sent again (answered refused), and keeps its reservation until its
// blockhash expires. Any other failure leaves it pending: the confirmation
// sweep re-broadcasts the same bytes until they land or the blockhash
// expires, so the answer is still sent.
func (e *Engine) firstBroadcast(ctx context.Context, node Node, r *Request, t *Transaction) (*Outcome, error) {
	_, err := node.Client.Broadcast(ctx, t.SignedTx)
	out := &Outcome{Status: Sent, Signature: t.Signature}
	var pe *solana.PreflightError
	switch {
	case err == nil:
		// The outcome and the broadcast count in one statement, whose
		// commit does not wait for its WAL flush (this transaction only):
		// lost in a crash, the row is back to sent and never broadcast,
		// which the sweep answers by broadcasting the same bytes again,
		// and the answer was sent either way. A refusal, below, waits.
		_, err := postgres.Exec(ctx, e.DB, `WITH b AS (UPDATE transactions SET broadcasts = broadcasts + 1 WHERE id = $1)
			UPDATE send_requests SET outcome = $2 FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async
			WHERE id = $3`, t.ID, out, r.ID)
		if err != nil {
			return nil, fmt.Errorf("store outcome: %w", err)
		}
		return out, nil
	case errors.As(err, &pe) && !pe.BlockhashNotFound() && !pe.AlreadyProcessed():
		if to, err := sol.PublicKeyFromBase58(t.Counterparty); err == nil && node.Recipients != nil {
			node.Recipients.Forget(to) // it may have closed its account
		}
		out = &Outcome{Status: Refused, Detail: pe.Message}
		out.Short, _ = pe.InsufficientFunds()
		if out.Short == "USDC" {
			out.Short = t.Asset // the token program's: the asset sent
		}
		if out.Short == "SOL" && t.FeePayer != nil {
			out.Short = ShortFeePayerSOL // the wallet pays neither fee nor rent
		}
		err := e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			refused, err := e.refuse(ctx, tx, t, "refused by the node: "+pe.Message)
			if err != nil {
				return err
			}
			if !refused {
				// A sweep's re-broadcast got it out first (or it landed):
				// it was sent.
				out = &Outcome{Status: Sent, Signature: t.Signature}
			}
			return setOutcome(ctx, tx, r.ID, out)
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	default:
		e.log().WarnContext(ctx, "broadcast failed; the sweep re-broadcasts", "transaction_id", t.ID, "err", err)
	}
	if err := setOutcome(ctx, e.DB, r.ID, out); err != nil {
		return nil, err
	}
	return out, nil
}

// refuse records the node's refusal of t's first broadcast (why): t is
// never sent again, and keeps its reservation until its blockhash has
// expired, when the sweep fails it. An approval waiting on it is rejected
// by the system now: nothing can go out any more. False means a
// re-broadcast got it out first (the update waits for that re-broadcast's
// row lock and sees its count), or it was settled: it was sent.
func (e *Engine) refuse(ctx context.Context, tx bun.Tx, t *Transaction, why string) (bool, error) {
	at := e.now()
	res, err := tx.NewUpdate().Table("transactions").
		Set("refused_at = ?", at).Set("error = ?", why).Set("updated_at = ?", at).
		// Nothing went out: the fee payer pays nothing for it.
		Set("sponsored_lamports = "+paidNothing.sponsored()).
		Where("id = ? AND status = ? AND refused_at IS NULL AND broadcasts = 0", t.ID, TxPending).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("record refusal: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if t.ApprovalID.Valid {
		if _, err := approval.RejectBySystem(ctx, tx, t.ApprovalID.UUID, approval.ReasonRefused, why, at); err != nil {
			return false, err
		}
	}
	return true, nil
}
