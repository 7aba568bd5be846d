package payment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// Execute carries out an approved approval (signing, nothing signed yet).
// In ONE transaction it locks the approval, then the wallet, and evaluates
// the policy again against the wallet's usage (limits may have changed,
// the day, week or month may be used up; the payment's count and active
// hours were judged when it was parked): a block rejects the approval with
// reason policy_violation_at_approval; otherwise the transfer is signed and
// stored. Then it is broadcast: the approval becomes sent with its
// approval.approved event, or rejected if the node's preflight refuses it.
// An approval not awaiting execution is left alone, so a repeated task is
// harmless. Without a blockhash nothing is signed and the error asks for a
// retry (the approve's wait may return it to pending meanwhile).
func (e *Engine) Execute(ctx context.Context, id uuid.UUID) error {
	var (
		a      approval.Approval
		node   Node
		txn    *Transaction
		capped *Outcome // the fee market was above the cap, or the fee payer's budget used up: returned to pending
	)
	err := e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if a, err = approval.Claim(ctx, tx, id); err != nil {
			return err
		}
		// The account's network and the database's clock, which places
		// the payment in its UTC day.
		var network solana.Network
		var at time.Time
		if err := tx.NewRaw("SELECT network, now() FROM accounts WHERE id = ?", a.AccountID).Scan(ctx, &network, &at); err != nil {
			return fmt.Errorf("read account: %w", err)
		}
		at = at.UTC()
		if t := e.policyTime(); t != nil {
			at = *t
		}
		var ok bool
		if node, ok = e.Nodes[network]; !ok {
			return fmt.Errorf("no Solana node configured for %s", network)
		}
		var w wallet.Wallet
		if err := tx.NewSelect().Model(&w).Where("id = ?", a.WalletID).For("UPDATE").Scan(ctx); err != nil {
			return fmt.Errorf("lock wallet: %w", err)
		}
		as, err := e.assetOf(network, a.Asset)
		if err != nil {
			_, err := approval.RejectBySystem(ctx, tx, a.ID, approval.ReasonRefused, err.Error(), at)
			return err
		}
		p := w.Policy()
		usage, err := ReadUsage(ctx, tx, w.ID, at, p.Windows(as.Currency))
		if err != nil {
			return err
		}
		// Approved: the payment's count and hours were judged when it was
		// parked; every amount limit is judged again now.
		d := p.Evaluate(policy.Request{To: a.To, Asset: as.Symbol, Amount: as.Amount(a.Amount), Frozen: w.State == wallet.Frozen, Usage: usage, At: at, Approved: true})
		if d.Outcome == policy.Blocked {
			_, err := approval.RejectBySystem(ctx, tx, a.ID, approval.ReasonPolicyViolation, string(d.Reason), at)
			return err
		}
		// An x402 payment cannot be signed now: the seller's challenge
		// (its fee payer, memo, timeout) is the agent's to fetch again.
		// Approving grants it: the agent pays with approval_id and a
		// fresh challenge (PayX402 checks the grant).
		var isX402 bool
		if err := tx.NewRaw("SELECT x402 IS NOT NULL FROM send_requests WHERE id = ?", a.RequestID).Scan(ctx, &isX402); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read the approval's request: %w", err)
		}
		if isX402 {
			return approval.Grant(ctx, tx, &a, at)
		}
		// NeedsApproval is what a human just gave.
		txn, err = e.signTransfer(ctx, tx, node, &w, &spend{
			accountID: a.AccountID, walletID: a.WalletID, network: network, to: a.To, asset: as, amount: a.Amount, memo: a.Memo,
			approvalID: uuid.NullUUID{UUID: a.ID, Valid: true},
		}, at)
		switch out, ok := unsigned(err); {
		case ok && out.NotSigned():
			// Nothing signed: back to pending at once, the human's
			// approval not spent on a market it cannot land in, or on a
			// fee payer past its budget; the approve call answers why
			// (503 fee_cap_below_market, fee_payer_budget_exceeded).
			capped = out
			_, err := approval.Release(ctx, tx, a.ID)
			return err
		case ok && out.Status == Refused:
			// No node would take it, or a frozen account would make any
			// node refuse it: closed without spending.
			reason := approval.ReasonRefused
			if out.Cause == CauseAccountFrozen {
				reason = approval.ReasonAccountFrozen
			}
			_, err := approval.RejectBySystem(ctx, tx, a.ID, reason, out.Detail, at)
			return err
		}
		if err != nil {
			return err
		}
		return approval.Signed(ctx, tx, &a, txn.ID, txn.Signature, at)
	})
	if errors.Is(err, approval.ErrNotSigning) {
		return nil
	}
	if err != nil {
		return err
	}
	if txn != nil {
		e.broadcastApproval(ctx, node, txn)
	}
	e.announce(ctx, id, capped)
	return nil
}

// broadcastApproval sends an approval's transaction once. Accepted: the
// approval is sent (approval.approved). Refused by the node: the approval
// is rejected, nothing spent, and the transaction is never sent again (it
// fails when its blockhash expires). Any other
// failure leaves it signing; the sweep re-broadcasts the same bytes and
// marks it sent once a broadcast is accepted (or it confirms), or rejects
// it if the transaction expires.
func (e *Engine) broadcastApproval(ctx context.Context, node Node, t *Transaction) {
	_, berr := node.Client.Broadcast(ctx, t.SignedTx)
	var pe *solana.PreflightError
	refused := errors.As(berr, &pe) && !pe.BlockhashNotFound() && !pe.AlreadyProcessed()
	err := e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if refused {
			_, err := e.refuse(ctx, tx, t, "refused by the node: "+pe.Message)
			return err
		}
		if berr != nil {
			// Still signing: the sweep re-broadcasts the same bytes and
			// settles the approval with the transaction.
			e.log().WarnContext(ctx, "broadcast failed; the sweep re-broadcasts", "transaction_id", t.ID, "err", berr)
			return nil
		}
		return e.broadcasted(ctx, tx, t)
	})
	if err != nil {
		// The sweep settles the approval with its transaction.
		e.log().WarnContext(ctx, "record approval broadcast", "transaction_id", t.ID, "err", err)
	}
}

// broadcasted counts an accepted broadcast of t and moves its approval,
// if any, from signing to sent.
func (e *Engine) broadcasted(ctx context.Context, tx bun.IDB, t *Transaction) error {
	if _, err := tx.NewUpdate().Table("transactions").Set("broadcasts = broadcasts + 1").Where("id = ?", t.ID).Exec(ctx); err != nil {
		return fmt.Errorf("count broadcast: %w", err)
	}
	if !t.ApprovalID.Valid {
		return nil
	}
	_, err := approval.MarkSent(ctx, tx, t.ApprovalID.UUID, e.now())
	return err
}
