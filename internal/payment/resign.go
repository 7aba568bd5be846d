package payment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// DefaultMaxAttempts is how many transactions one payment may be signed
// as (the first and the re-signs after expiry) when Engine.MaxAttempts is
// zero.
const DefaultMaxAttempts = 3

func (e *Engine) maxAttempts() int {
	if e.MaxAttempts > 0 {
		return e.MaxAttempts
	}
	return DefaultMaxAttempts
}

// crashPoint, when set (only by this package's tests, in a child process
// they kill), is called at each named step of the re-sign path, before
// and after each of its writes, so a test can end the worker there with
// SIGKILL. Nil in production.
var crashPoint func(step string)

func crash(step string) {
	if crashPoint != nil {
		crashPoint(step)
	}
}

// The steps of the re-sign path, in order.
const (
	StepSigned    = "resign.signed"    // the new attempt signed, nothing written
	StepWritten   = "resign.written"   // recorded in the transaction, not yet committed
	StepRecorded  = "resign.recorded"  // committed, not yet broadcast
	StepBroadcast = "resign.broadcast" // broadcast, its count not yet committed
	StepCounted   = "resign.counted"   // the broadcast counted
)

// resign signs t's payment again after its current attempt expired
// unseen (the sweep established that no node knows it after the chain
// passed its last valid height, so it can never land): a fresh blockhash
// and a fresh fee reading, the same amount, recipient and reference. The
// new bytes are recorded on the same row, compare-and-set on the expired
// attempt's signature and number under the row's lock, and only then
// broadcast: a crash before the record leaves the expired attempt, which
// the next sweep signs again; a crash after it leaves stored bytes that
// the sweep re-broadcasts. The row keeps its reservation (it stays
// pending) and the request keeps its first answer. A market above the
// fee cap, or a frozen wallet, ends the payment failed instead; a node
// that does not answer leaves it for the next sweep.
func (e *Engine) resign(ctx context.Context, node Node, height uint64, t *Transaction, st *SweepStats) error {
	var w wallet.Wallet
	if err := e.DB.NewSelect().Model(&w).Where("id = ?", t.WalletID).Scan(ctx); err != nil {
		return fmt.Errorf("read wallet: %w", err)
	}
	expired := "expired: the blockhash expired before the transaction landed"
	if w.State == wallet.Frozen {
		return e.fail(ctx, t, expired+"; not signed again: the wallet is frozen", paidNothing, st)
	}
	log := e.log().With("transaction_id", t.ID, "attempt", t.Attempts+1)
	bh, err := node.Client.LatestBlockhash(ctx)
	if err != nil {
		log.WarnContext(ctx, "no blockhash to sign again; the next sweep tries", "err", err)
		return nil
	}
	if bh.LastValidBlockHeight <= height {
		log.WarnContext(ctx, "the node's blockhash is already expired; the next sweep tries", "last_valid", bh.LastValidBlockHeight, "height", height)
		return nil
	}
	a, err := e.assetOf(t.Network, t.Asset)
	if err != nil {
		return e.fail(ctx, t, expired+"; not signed again: "+err.Error(), paidNothing, st)
	}
	s := &spend{
		accountID: t.AccountID, walletID: t.WalletID, network: t.Network, to: t.Counterparty, asset: a, amount: t.Amount, memo: t.Memo,
		requestID: t.RequestID, approvalID: t.ApprovalID,
	}
	// Signed under the row's lock, compare-and-set on the expired attempt:
	// with sponsorship the fee payer's budget is checked under its lock in
	// this same transaction.
	var signed signedTransfer
	var notAgain error // a verdict that ends the payment instead
	err = e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// The wallet first (the order a send keeps), shared: a freeze
		// (which locks it) either committed before, and is seen here, or
		// waits for this attempt's record.
		var state wallet.State
		if err := tx.NewRaw("SELECT state FROM wallets WHERE id = ? FOR SHARE", t.WalletID).Scan(ctx, &state); err != nil {
			return fmt.Errorf("lock wallet: %w", err)
		}
		if state == wallet.Frozen {
			notAgain = errors.New("the wallet is frozen")
			return errSkipped
		}
		var live bool
		err := tx.NewRaw(`SELECT true FROM transactions
			WHERE id = ? AND status = ? AND signature = ? AND attempts = ? AND refused_at IS NULL FOR UPDATE`,
			t.ID, TxPending, t.Signature, t.Attempts).Scan(ctx, &live)
		if errors.Is(err, sql.ErrNoRows) {
			return errSkipped // settled, or signed again, meanwhile
		}
		if err != nil {
			return fmt.Errorf("lock transaction: %w", err)
		}
		signed, err = e.signSpend(ctx, tx, node, &w, s, bh,
			func(tr solana.Transfer) []uint64 { return e.freshFees(ctx, node, t.Network, tr) }, t.ID, e.now())
		if out, ok := unsigned(err); ok && (out.NotSigned() || out.Cause == CauseAccountFrozen) {
			notAgain = errors.New(out.Detail)
			return errSkipped
		}
		if err != nil {
			return fmt.Errorf("sign again: %w", err)
		}
		crash(StepSigned)
		at := e.now()
		if _, err := tx.NewRaw(`INSERT INTO transaction_attempts
			(transaction_id, attempt, signature, last_valid_block_height, fee_lamports, outcome, signed_at, ended_at)
			SELECT id, attempts, signature, last_valid_block_height, fee_lamports, 'expired', signed_at, ?
			FROM transactions WHERE id = ?`, at, t.ID).Exec(ctx); err != nil {
			return fmt.Errorf("keep the expired attempt: %w", err)
		}
		// broadcasts counts the current bytes' accepted broadcasts (a
		// refusal of the new bytes is recorded only while it is 0).
		if _, err := tx.NewUpdate().Table("transactions").
			Set("signature = ?", signed.signature).Set("signed_tx = ?", signed.raw).
			Set("last_valid_block_height = ?", signed.lastValid).Set("fee_lamports = ?", signed.fee).
			Set("fee_payer = ?", signed.feePayer).Set("sponsored_lamports = ?", signed.sponsored).
			Set("attempts = attempts + 1").Set("broadcasts = 0").Set("expiry_slot = NULL").
			Set("signed_at = clock_timestamp()").Set("updated_at = ?", at).
			Where("id = ?", t.ID).Exec(ctx); err != nil {
			return fmt.Errorf("record the new attempt: %w", err)
		}
		details := map[string]any{
			"transaction_id": t.ID, "attempt": t.Attempts + 1, "signature": signed.signature,
			"previous_signature": t.Signature, "fee_lamports": signed.fee, "amount": t.Amount, "asset": t.Asset, "to": t.Counterparty,
		}
		if err := audit.Append(ctx, tx, audit.Entry{
			AccountID: t.AccountID,
			At:        at,
			Actor:     audit.System,
			Action:    audit.ActionSendResigned,
			Target:    wallet.Target(t.WalletID),
			Details:   details,
		}); err != nil {
			return err
		}
		crash(StepWritten)
		return nil
	})
	if notAgain != nil {
		return e.fail(ctx, t, expired+"; not signed again: "+notAgain.Error(), paidNothing, st)
	}
	if errors.Is(err, errSkipped) {
		return nil
	}
	if err != nil {
		log.ErrorContext(ctx, "sign again; the next sweep tries", "err", err)
		return nil
	}
	crash(StepRecorded)
	st.Resigned++
	log.InfoContext(ctx, "expired unseen; signed again", "previous_signature", t.Signature, "signature", signed.signature, "fee_lamports", signed.fee)
	t.Signature, t.SignedTx, t.LastValidBlockHeight, t.Attempts = signed.signature, signed.raw, signed.lastValid, t.Attempts+1
	t.FeeLamports = &signed.fee
	e.broadcastAgain(ctx, node, t)
	crash(StepCounted)
	return nil
}

// broadcastAgain sends a new attempt's stored bytes once, under its row's
// lock while it is still that attempt and pending. Accepted: counted. A
// preflight refusal: never sent again, failed once its blockhash expires
// (refuse). Anything else: the sweep re-broadcasts the same bytes.
func (e *Engine) broadcastAgain(ctx context.Context, node Node, t *Transaction) {
	err := e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var live bool
		err := tx.NewRaw("SELECT true FROM transactions WHERE id = ? AND signature = ? AND status = ? AND refused_at IS NULL FOR UPDATE",
			t.ID, t.Signature, TxPending).Scan(ctx, &live)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("lock transaction: %w", err)
		}
		_, berr := node.Client.Broadcast(ctx, t.SignedTx)
		crash(StepBroadcast)
		var pe *solana.PreflightError
		switch {
		case errors.As(berr, &pe) && !pe.BlockhashNotFound() && !pe.AlreadyProcessed():
			_, err := e.refuse(ctx, tx, t, "refused by the node: "+pe.Message)
			return err
		case berr != nil:
			e.log().WarnContext(ctx, "broadcast of the new attempt failed; the sweep re-broadcasts", "transaction_id", t.ID, "err", berr)
			return nil
		}
		return e.broadcasted(ctx, tx, t)
	})
	if err != nil {
		e.log().WarnContext(ctx, "record the new attempt's broadcast", "transaction_id", t.ID, "err", err)
	}
}

// freshFees reads the market for t now, not from the cache: the expired
// attempt may have been priced below what lands. A node that does not
// answer in time leaves the cached reading (readFees).
func (e *Engine) freshFees(ctx context.Context, node Node, network solana.Network, t solana.Transfer) []uint64 {
	accounts, err := solana.WritableAccounts(network, t)
	if err != nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, feeReadWait)
	defer cancel()
	fees, err := node.Client.RecentPrioritizationFees(rctx, accounts)
	if err != nil {
		e.log().WarnContext(ctx, "fresh fee market not read; priced from the cached reading", "network", network, "err", err)
		return e.readFees(ctx, node, network, t)
	}
	return fees
}
