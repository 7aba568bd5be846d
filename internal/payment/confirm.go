package payment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// rebroadcastParallel bounds concurrent re-broadcasts within one sweep.
const rebroadcastParallel = 8

// expiryMargin is how many blocks past a transaction's last valid height
// the sweep waits before declaring it lost: a node behind a load balancer
// may answer the height from one backend and the status from a lagging
// one.
const expiryMargin = 150

// DefaultFirstBroadcastGrace is how long after its commit the sweep
// leaves a transaction to the worker's own first broadcast.
const DefaultFirstBroadcastGrace = 3 * time.Second

func (e *Engine) firstBroadcastGrace() time.Duration {
	if e.FirstBroadcastGrace > 0 {
		return e.FirstBroadcastGrace
	}
	return DefaultFirstBroadcastGrace
}

// SweepStats counts what one sweep did.
type SweepStats struct {
	Checked, Confirmed, Failed, Rebroadcast int
	// Resigned: expired unseen and signed again (a new attempt recorded).
	Resigned int
	// Skipped: another sweep was running (in any worker); this one did
	// nothing.
	Skipped bool
}

// Bounds of one sweep's work, so a slow node cannot make a sweep run for
// long: the oldest pending transactions of each network are checked first,
// the rest wait for the next sweep (two seconds later).
const (
	MaxSweepChecks       = 4 * solana.MaxSignatureStatuses // per network
	MaxSweepRebroadcasts = 64
	// MaxSweepResigns bounds the re-signs of one sweep (each reads a
	// blockhash, the fee market and the recipient's account, one at a
	// time); the rest wait for the next sweep.
	MaxSweepResigns = 16
)

// sweepLock is the advisory lock (per database) that lets one sweep run at
// a time across every worker.
const sweepLock = 0x61777377 // "awsw"

// SweepGauge counts the sweeps running in this process and their peak:
// the worker logs it, and tests prove no two sweeps overlapped.
type SweepGauge struct{ active, peak atomic.Int64 }

func (g *SweepGauge) enter() {
	n := g.active.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
}

func (g *SweepGauge) leave() { g.active.Add(-1) }

// Peak is the most sweeps that ran at once.
func (g *SweepGauge) Peak() int64 { return g.peak.Load() }

// Sweep settles pending transactions: it asks the node for their statuses
// (≤ 256 per call), confirms the landed ones (emitting tx.sent), fails the
// ones the cluster rejected or whose blockhash expired unseen (releasing
// their reservation), and re-broadcasts the same bytes of the rest. A
// payment whose transaction expired unseen is signed again (resign) up to
// MaxAttempts transactions before it fails; nothing else makes a new
// signature. Only one sweep runs at a time across all
// workers (an advisory lock held in a transaction for the sweep's length,
// released if its worker dies); a sweep that finds it held does nothing
// (Skipped). Its work is bounded by MaxSweepChecks and
// MaxSweepRebroadcasts.
func (e *Engine) Sweep(ctx context.Context) (SweepStats, error) {
	var total SweepStats
	lock, err := e.DB.BeginTx(ctx, nil)
	if err != nil {
		return total, fmt.Errorf("begin sweep: %w", err)
	}
	defer lock.Rollback()
	var held bool
	if err := lock.NewRaw("SELECT pg_try_advisory_xact_lock(?)", sweepLock).Scan(ctx, &held); err != nil {
		return total, fmt.Errorf("take the sweep lock: %w", err)
	}
	if !held {
		total.Skipped = true
		return total, nil
	}
	if e.Sweeps != nil {
		e.Sweeps.enter()
		defer e.Sweeps.leave()
	}
	resend, resign := MaxSweepRebroadcasts, MaxSweepResigns
	var errs []error
	for network, node := range e.Nodes {
		st, err := e.sweepNetwork(ctx, network, node, &resend, &resign)
		if err == nil {
			err = e.sweepX402(ctx, network, node, &st)
		}
		total.Checked += st.Checked
		total.Confirmed += st.Confirmed
		total.Failed += st.Failed
		total.Rebroadcast += st.Rebroadcast
		total.Resigned += st.Resigned
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", network, err))
		}
	}
	return total, errors.Join(errs...)
}

// sweepNetwork sweeps one network's oldest MaxSweepChecks pending
// transactions; resend and resign are what remain of the sweep's
// re-broadcasts and re-signs.
func (e *Engine) sweepNetwork(ctx context.Context, network solana.Network, node Node, resend, resign *int) (SweepStats, error) {
	var st SweepStats
	// Another chain's statuses would confirm or fail transactions falsely.
	if err := node.Client.ChainErr(); err != nil {
		return st, err
	}
	// The height is read before the statuses: a transaction not found
	// after the chain passed its last valid height can never land.
	height, err := node.Client.BlockHeight(ctx)
	if err != nil {
		return st, err
	}
	var after struct {
		at time.Time
		id uuid.UUID
	}
	for {
		var batch []Transaction
		q := e.DB.NewSelect().Model(&batch).
			Column("id", "account_id", "wallet_id", "request_id", "approval_id", "network", "signature", "signed_tx", "last_valid_block_height", "expiry_slot",
				"asset", "amount_micros", "counterparty", "memo", "error", "refused_at", "attempts", "created_at").
			// The grace runs from the commit, on the database's clock.
			ColumnExpr("signed_at > clock_timestamp() - ? * interval '1 microsecond' AS in_grace", e.firstBroadcastGrace().Microseconds()).
			Where("status = ? AND network = ?", TxPending, network).
			Order("created_at", "id").Limit(solana.MaxSignatureStatuses)
		if !after.at.IsZero() {
			q = q.Where("(created_at, id) > (?, ?)", after.at, after.id)
		}
		if err := q.Scan(ctx); err != nil {
			return st, fmt.Errorf("read pending transactions: %w", err)
		}
		if len(batch) == 0 {
			return st, nil
		}
		last := batch[len(batch)-1]
		after.at, after.id = last.CreatedAt, last.ID
		if err := e.sweepBatch(ctx, node, height, batch, &st, resend, resign); err != nil {
			return st, err
		}
		if len(batch) < solana.MaxSignatureStatuses || st.Checked >= MaxSweepChecks {
			return st, nil
		}
	}
}

func (e *Engine) sweepBatch(ctx context.Context, node Node, height uint64, batch []Transaction, st *SweepStats, budget, resigns *int) error {
	st.Checked += len(batch)
	statuses, err := node.Client.SignatureStatuses(ctx, false, signatures(batch))
	if err != nil {
		return err
	}
	var expired []Transaction
	var resend []Transaction
	for i := range batch {
		t, s := &batch[i], statuses[i]
		switch {
		case s.Confirmed && s.Err != "":
			if err := e.fail(ctx, t, "rejected on chain: "+s.Err, paidFee, st); err != nil {
				return err
			}
		case s.Confirmed:
			if err := e.confirm(ctx, t, st); err != nil {
				return err
			}
		case s.Found:
			// Processed: its result (even an error) may still be rolled
			// back with its fork; confirmation decides.
		case height > t.LastValidBlockHeight+expiryMargin:
			expired = append(expired, *t)
		case t.InGrace:
			// Its worker is broadcasting it right now; leave it that turn.
		case !t.RefusedAt.IsZero():
			// Refused at its first broadcast: never sent again; it keeps
			// its reservation until its blockhash has expired.
		default:
			resend = append(resend, *t)
		}
	}
	if len(expired) > 0 {
		// Not in the node's recent status cache: search its history
		// before declaring them lost (a sweep may have been late).
		// Height and statuses from one node (Settled): the height read
		// above may come from a node ahead of the one answering here.
		// A "not found" counts only from an answer at or past the slot
		// at which each was first seen expired (recorded below).
		since := make([]uint64, len(expired))
		for i := range expired {
			since[i] = expired[i].ExpirySlot
		}
		settled, err := node.Client.Settled(ctx, signatures(expired), since)
		if err != nil {
			return err
		}
		height := settled.Height
		if err := e.recordExpirySlots(ctx, expired, settled); err != nil {
			return err
		}
		if !settled.History {
			e.log().WarnContext(ctx, "the Solana node keeps no transaction history: expired transactions it does not know are not signed again (they may have landed before its status cache)", "network", expired[0].Network)
		}
		doubted := 0
		for i := range expired {
			t, s := &expired[i], settled.Statuses[i]
			var err error
			switch {
			case !s.Found && height <= t.LastValidBlockHeight+expiryMargin:
				// This node is behind the one that said expired: wait.
			case !s.Found && !s.Absent:
				// Not found, but by an answer from before the slot at
				// which it was seen expired (a backend behind the one
				// it landed on), or a second node disagrees or did not
				// answer: it may have landed. Wait and ask again;
				// never sign again on that word.
				doubted++
			case !s.Found && !settled.History && t.RefusedAt.IsZero():
				// Unknown to a node without history proves nothing: it
				// may have landed before the node's status cache. Never
				// signed again: failed, as before re-signing existed.
				err = e.fail(ctx, t, "expired: not found by a node without transaction history, so not signed again; it may have landed (check the signature on chain)", paidUnknown, st)
			case s.Confirmed && s.Err != "":
				err = e.fail(ctx, t, "rejected on chain: "+s.Err, paidFee, st)
			case s.Confirmed:
				err = e.confirm(ctx, t, st)
			case !s.Found && !t.RefusedAt.IsZero() && t.Error != nil:
				err = e.fail(ctx, t, *t.Error+"; its blockhash has expired", paidNothing, st)
			case !s.Found && t.RefusedAt.IsZero() && t.Attempts < e.maxAttempts():
				// It can never land: the same payment is signed again
				// (by a later sweep past this one's bound).
				if *resigns > 0 {
					*resigns--
					err = e.resign(ctx, node, height, t, st)
				}
			case !s.Found && t.Attempts > 1:
				err = e.fail(ctx, t, fmt.Sprintf("expired: the blockhash of each of its %d attempts expired before it landed", t.Attempts), paidNothing, st)
			case !s.Found:
				err = e.fail(ctx, t, "expired: the blockhash expired before the transaction landed", paidNothing, st)
			}
			if err != nil {
				return err
			}
		}
		if doubted > 0 {
			e.log().WarnContext(ctx, "expired transactions not found, but not conclusively: they wait, and are not signed again",
				"network", expired[0].Network, "transactions", doubted, "why", settled.Doubt)
		}
	}
	resend = resend[:min(len(resend), *budget)]
	*budget -= len(resend)
	e.rebroadcast(ctx, node, resend, st)
	return nil
}

// recordExpirySlots records, for each transaction first seen past its
// last valid height (and the margin) by settled's node, the slot read
// with that height: from then on only answers at or past it count. The
// record is conditional on the attempt's signature: a re-sign (a new
// blockhash) clears it.
func (e *Engine) recordExpirySlots(ctx context.Context, ts []Transaction, settled solana.Settled) error {
	for i := range ts {
		t := &ts[i]
		if t.ExpirySlot != 0 || settled.Height <= t.LastValidBlockHeight+expiryMargin {
			continue
		}
		if _, err := e.DB.NewUpdate().Table("transactions").Set("expiry_slot = ?", settled.Slot).
			Where("id = ? AND signature = ? AND expiry_slot IS NULL", t.ID, t.Signature).Exec(ctx); err != nil {
			return fmt.Errorf("record expiry slot: %w", err)
		}
		t.ExpirySlot = settled.Slot
	}
	return nil
}

func signatures(ts []Transaction) []sol.Signature {
	sigs := make([]sol.Signature, len(ts))
	for i := range ts {
		sigs[i] = sol.MustSignatureFromBase58(ts[i].Signature)
	}
	return sigs
}

// fail fails a pending transaction (releasing its reservation, and the
// fee payer's of what it did not pay); a concurrent sweep's settlement
// wins harmlessly.
func (e *Engine) fail(ctx context.Context, t *Transaction, why string, paid feePaid, st *SweepStats) error {
	return e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		failed, err := e.failTx(ctx, tx, t, why, paid, approval.ReasonTxFailed)
		if failed {
			st.Failed++
		}
		return err
	})
}

// confirm confirms a pending transaction, with its tx.sent event; a
// concurrent sweep's settlement wins harmlessly.
func (e *Engine) confirm(ctx context.Context, t *Transaction, st *SweepStats) error {
	return e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		at := e.now()
		res, err := tx.NewUpdate().Table("transactions").
			Set("status = ?", TxConfirmed).Set("updated_at = ?", at).
			Where("id = ? AND status = ?", t.ID, TxPending).Exec(ctx)
		if err != nil {
			return fmt.Errorf("confirm transaction: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		st.Confirmed++
		if t.ApprovalID.Valid {
			// Its worker died before the broadcast reported.
			if _, err := approval.MarkSent(ctx, tx, t.ApprovalID.UUID, at); err != nil {
				return err
			}
		}
		data := map[string]any{
			"wallet_id": t.WalletID, "signature": t.Signature, "amount": t.Amount, "asset": t.Asset, "to": t.Counterparty, "memo": t.Memo,
		}
		_, err = webhook.Emit(ctx, tx, t.AccountID, at, webhook.KindTxSent, data)
		return err
	})
}

// errSkipped ends a re-broadcast that did not happen.
var errSkipped = errors.New("not re-broadcast")

// rebroadcast sends the stored bytes again, each under its row's lock and
// only while it is still pending and was never refused: this sweep read
// the rows earlier, and a refusal recorded since (which waits for the
// lock) must stop it, or bytes answered "nothing was sent" could still
// land uncounted. Failures are expected (a node that is down, a
// simulation that fails for now) and only logged: the next sweep tries
// again until the blockhash expires.
func (e *Engine) rebroadcast(ctx context.Context, node Node, ts []Transaction, st *SweepStats) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, rebroadcastParallel)
	var mu sync.Mutex
	for i := range ts {
		t := &ts[i]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				var live bool
				err := tx.NewRaw("SELECT true FROM transactions WHERE id = ? AND status = ? AND refused_at IS NULL FOR UPDATE",
					t.ID, TxPending).Scan(ctx, &live)
				if errors.Is(err, sql.ErrNoRows) {
					return errSkipped
				}
				if err != nil {
					return fmt.Errorf("lock transaction: %w", err)
				}
				if _, err := node.Client.Broadcast(ctx, t.SignedTx); err != nil {
					e.log().DebugContext(ctx, "re-broadcast failed", "transaction_id", t.ID, "err", err)
					return errSkipped
				}
				return e.broadcasted(ctx, tx, t)
			})
			switch {
			case errors.Is(err, errSkipped):
				return
			case err != nil:
				e.log().WarnContext(ctx, "record re-broadcast", "transaction_id", t.ID, "err", err)
			}
			mu.Lock()
			st.Rebroadcast++
			mu.Unlock()
		})
	}
	wg.Wait()
}

// feePaid is what the fee payer of a transaction that failed paid for
// it: its sponsored_lamports becomes that, so the day's budget counts what
// was paid (a signed transaction reserves its fee and rent; one that can
// no longer land releases what it did not pay).
type feePaid int

const (
	// paidNothing: it never landed (refused, or expired unseen).
	paidNothing feePaid = iota
	// paidFee: it landed and failed: the fee is charged, and the
	// recipient's account it offered to make was rolled back with it.
	paidFee
	// paidUnknown: it may have landed; all it reserved stays counted.
	paidUnknown
)

// sponsored is the SQL expression of the transaction's sponsored_lamports
// once it paid p (null stays null: the wallet paid its own way).
func (p feePaid) sponsored() string {
	switch p {
	case paidNothing:
		return "CASE WHEN sponsored_lamports IS NULL THEN NULL ELSE 0 END"
	case paidFee:
		return "CASE WHEN sponsored_lamports IS NULL THEN NULL ELSE LEAST(sponsored_lamports, fee_lamports) END"
	}
	return "sponsored_lamports"
}

// failTx marks a pending transaction failed (releasing its reservation)
// with an audit entry and a tx.failed event; an approval still signing for
// it is rejected by the system. False means it was no longer pending.
func (e *Engine) failTx(ctx context.Context, tx bun.Tx, t *Transaction, why string, paid feePaid, reason string) (bool, error) {
	at := e.now()
	res, err := tx.NewUpdate().Table("transactions").
		Set("status = ?", TxFailed).Set("error = ?", why).Set("updated_at = ?", at).
		Set("sponsored_lamports = "+paid.sponsored()).
		Where("id = ? AND status = ?", t.ID, TxPending).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("fail transaction: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if t.ApprovalID.Valid {
		// The approval row before the audit lock, the order every
		// transaction keeps.
		if _, err := tx.ExecContext(ctx, "SELECT 1 FROM approvals WHERE id = ? FOR UPDATE", t.ApprovalID.UUID); err != nil {
			return false, fmt.Errorf("lock approval: %w", err)
		}
	}
	details := map[string]any{"transaction_id": t.ID, "signature": t.Signature, "amount": t.Amount, "asset": t.Asset, "to": t.Counterparty, "error": why}
	// Under the payment's requester, like its send.sent: the key or
	// person who asked for it (system when it is unknown).
	// audit.Actor's spellings, in SQL.
	var actor string
	err = tx.NewRaw(`SELECT COALESCE('key_' || r.key_id::text, 'user:' || r.user_address,
			'key_' || a.requested_by::text, 'user:' || a.requested_by_user, 'system')
		FROM (SELECT 1) AS one
		LEFT JOIN send_requests AS r ON r.id = ?
		LEFT JOIN approvals AS a ON a.id = ?`, t.RequestID, t.ApprovalID).Scan(ctx, &actor)
	if err != nil {
		return false, fmt.Errorf("read the payment's requester: %w", err)
	}
	if err := audit.Append(ctx, tx, audit.Entry{
		AccountID: t.AccountID,
		At:        at,
		Actor:     audit.Actor(actor),
		Action:    audit.ActionSendFailed,
		Target:    wallet.Target(t.WalletID),
		Details:   details,
	}); err != nil {
		return false, err
	}
	// Never silent: whoever was told "sent" hears that it failed.
	data := map[string]any{"wallet_id": t.WalletID, "signature": t.Signature, "amount": t.Amount, "asset": t.Asset, "to": t.Counterparty, "memo": t.Memo, "reason": why}
	if t.ApprovalID.Valid {
		data["approval_id"] = approval.PublicID(t.ApprovalID.UUID)
	}
	if _, err := webhook.Emit(ctx, tx, t.AccountID, at, webhook.KindTxFailed, data); err != nil {
		return false, err
	}
	if t.ApprovalID.Valid {
		if _, err := approval.RejectBySystem(ctx, tx, t.ApprovalID.UUID, reason, why, at); err != nil {
			return false, err
		}
	}
	return true, nil
}
