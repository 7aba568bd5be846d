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
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// errNotQueued stops a decision whose request another party settled.
var errNotQueued = errors.New("request is no longer queued")

// Decide settles a queued request: in ONE transaction it moves the
// request queued → decided, locks the wallet, evaluates the policy against
// the day's reserved total and writes the outcome with its event and audit
// entry; a send also stores its transaction there (signed before the
// lock when the policy is likely to allow it, else under it). Then it
// broadcasts and announces the final outcome. Deciding a request that is
// not queued does nothing, so a redelivered task is harmless.
func (e *Engine) Decide(ctx context.Context, id uuid.UUID) error {
	var (
		r    Request
		node Node
		out  *Outcome
		txn  *Transaction
	)
	err := e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Claim first: the request row is locked (an API abandoning it
		// waits for this commit) and read in the same statement. Past its
		// deadline it is abandoned instead, on the database's clock.
		// decided_at is the decision's time (the PolicyClock's, if set).
		err := postgres.QueryRow(ctx, tx, []any{&r}, `UPDATE send_requests
			SET state = CASE WHEN deadline > now() THEN $1 ELSE $2 END, decided_at = coalesce($3::timestamptz, now())
			WHERE id = $4 AND state = $5
			RETURNING `+postgres.Columns(tx, &r)+`, (SELECT pubkey FROM fee_payers AS f WHERE f.account_id = send_requests.account_id AND f.enabled) AS sponsor`,
			StateDecided, StateAbandoned, e.policyTime(), id, StateQueued)
		if errors.Is(err, sql.ErrNoRows) {
			return errNotQueued
		}
		if err != nil {
			return fmt.Errorf("claim send request: %w", err)
		}
		if r.State == StateAbandoned {
			e.log().WarnContext(ctx, "send request past its deadline; abandoned", "send_request_id", r.ID)
			return nil
		}
		var ok bool
		if node, ok = e.Nodes[r.Network]; !ok {
			return fmt.Errorf("no Solana node configured for %s", r.Network)
		}
		// A send's transfer is signed before the wallet's lock: one
		// wallet's decisions queue on that lock, so it is held for the
		// policy check and the reservation alone.
		pre := e.presign(ctx, tx, node, &r, r.DecidedAt.Time.UTC())
		// An x402 grant's approval is locked before the wallet, the order
		// Execute keeps.
		var grant *approval.Approval
		if r.X402 != nil && r.X402.ApprovalID.Valid {
			if grant, err = lockGrant(ctx, tx, r.X402.ApprovalID.UUID); err != nil {
				return err
			}
		}
		// The wallet lock serializes decisions of one wallet; its usage
		// (the day's, the rolling windows' totals and its payment counts)
		// is read after it is held, so it includes every earlier
		// decision's reservation and payment.
		w, err := wallet.Read(ctx, tx, r.WalletID, true)
		if err != nil {
			return fmt.Errorf("lock wallet: %w", err)
		}
		// A challenge paid before is its own answer: not judged again (no
		// block, no approval to ask for), never signed twice.
		if out, err = paidBefore(ctx, tx, &r); out != nil || err != nil {
			return err
		}
		// The database's clock (the claim's decided_at) places the send in
		// its UTC day, its windows and its active hours, so workers with
		// skewed clocks agree.
		at := r.DecidedAt.Time.UTC()
		a, err := e.assetOf(r.Network, r.Asset)
		if err != nil {
			out = &Outcome{Status: Refused, Detail: err.Error()}
			return setOutcome(ctx, tx, r.ID, out)
		}
		p := w.Policy()
		usage, err := ReadUsage(ctx, tx, w.ID, at, p.Windows(a.Currency))
		if err != nil {
			return err
		}
		// A payment redeeming an x402 grant was approved by a human: its
		// parked request was counted and its hours judged.
		redeems := r.X402 != nil && r.X402.ApprovalID.Valid
		d := p.Evaluate(policy.Request{To: r.To, Also: r.X402.also(), Asset: a.Symbol, Amount: a.Amount(r.Amount), Frozen: w.State == wallet.Frozen, Usage: usage, At: at, Approved: redeems})
		if redeems {
			if why, err := checkGrant(ctx, tx, &r, grant); err != nil {
				return err
			} else if why != "" {
				out = (&Outcome{Status: Refused, Detail: "approval_id: " + why}).remaining(d)
				return setOutcome(ctx, tx, r.ID, out)
			}
			if d.Outcome == policy.NeedsApproval {
				// What the human granted: the policy's other rules
				// still hold, evaluated now.
				d.Outcome = policy.Send
			}
		}
		switch d.Outcome {
		case policy.Blocked:
			out, err = e.block(ctx, tx, &r, d, at)
		case policy.NeedsApproval:
			out, err = e.park(ctx, tx, &r, &w, d, at)
		case policy.Send:
			if r.X402 != nil {
				out, err = e.signX402(ctx, tx, node, &r, &w, a, d, at)
				break
			}
			txn, out, err = e.sign(ctx, tx, node, &r, &w, a, d, at, pre)
		}
		return err
	})
	if errors.Is(err, errNotQueued) {
		return nil
	}
	if err != nil {
		return err
	}
	if out != nil || txn != nil {
		e.Sealer.Mark(r.AccountID)
	}
	if txn != nil {
		out, err = e.firstBroadcast(ctx, node, &r, txn)
		if err != nil {
			return err
		}
	}
	e.announce(ctx, r.ID, out)
	return nil
}

func setOutcome(ctx context.Context, db bun.IDB, id uuid.UUID, o *Outcome) error {
	_, err := postgres.Exec(ctx, db, `UPDATE send_requests SET outcome = $1 WHERE id = $2`, o, id)
	if err != nil {
		return fmt.Errorf("store outcome: %w", err)
	}
	return nil
}

func (e *Engine) announce(ctx context.Context, id uuid.UUID, o *Outcome) {
	if e.Redis == nil {
		return
	}
	if err := Publish(ctx, e.Redis, id, o); err != nil {
		e.log().WarnContext(ctx, "announce outcome; the API will poll", "send_request_id", id, "err", err)
	}
}

// actorOf is who made the send, as audit entries name them: the key, or
// the dashboard user.
func actorOf(r *Request) audit.Actor {
	switch {
	case r.KeyID.Valid:
		return audit.KeyActor(r.KeyID.UUID)
	case r.UserAddress != nil:
		return audit.UserActor(*r.UserAddress)
	}
	return audit.System
}

func (e *Engine) block(ctx context.Context, tx bun.Tx, r *Request, d policy.Decision, at time.Time) (*Outcome, error) {
	data := map[string]any{
		"wallet_id": r.WalletID, "amount": r.Amount, "asset": r.Asset, "to": r.To, "reason": d.Reason, "memo": r.Memo,
	}
	if r.X402 != nil {
		data["kind"], data["resource"] = r.X402.Kind(), r.X402.Resource
	}
	out := (&Outcome{Status: Blocked, Reason: d.Reason}).remaining(d)
	details := map[string]any{
		"request_id": r.ID, "amount": r.Amount, "asset": r.Asset, "to": r.To, "reason": d.Reason,
		"remaining_today": d.RemainingToday.String(),
	}
	if err := settleWithEvent(ctx, tx, r, out, webhook.KindTxBlocked, data, at, audit.ActionSendBlocked, details); err != nil {
		return nil, err
	}
	return out, nil
}

// settleWithEvent stores the request's outcome, emits its event and
// appends its audit entry (action, details) in one statement: the
// decision's last, so the audit chain's lock is held only to the commit.
func settleWithEvent(ctx context.Context, tx bun.Tx, r *Request, o *Outcome, kind string, data any, at time.Time, action string, details any) error {
	ev, err := webhook.NewEvent(r.AccountID, at, kind, data)
	if err != nil {
		return err
	}
	err = audit.AppendWith(ctx, tx, `ev AS (INSERT INTO events (id, account_id, kind, data, created_at) VALUES ($1, $2, $3, $4, $5)),
		o AS (UPDATE send_requests SET outcome = $6 WHERE id = $7)`,
		[]any{ev.ID, ev.AccountID, ev.Kind, string(ev.Data), ev.CreatedAt, o, r.ID}, audit.Entry{
			AccountID: r.AccountID,
			At:        at,
			Actor:     actorOf(r),
			Action:    action,
			Target:    wallet.Target(r.WalletID),
			Details:   details,
		})
	if err != nil {
		return fmt.Errorf("store outcome, %s event and audit entry: %w", kind, err)
	}
	return nil
}

func (e *Engine) park(ctx context.Context, tx bun.Tx, r *Request, w *wallet.Wallet, d policy.Decision, at time.Time) (*Outcome, error) {
	a := approval.Approval{
		ID: uuid.New(), AccountID: r.AccountID, WalletID: r.WalletID,
		RequestID:   uuid.NullUUID{UUID: r.ID, Valid: true},
		RequestedBy: r.KeyID, RequestedLineage: r.KeyLineage, RequestedByUser: r.UserAddress, Requesters: r.Requesters,
		Asset: r.Asset, Amount: r.Amount, To: r.To, Memo: r.Memo,
		Status: approval.Pending, CreatedAt: at, ExpiresAt: at.Add(approval.Lifetime),
	}
	if _, err := tx.NewInsert().Model(&a).Exec(ctx); err != nil {
		return nil, fmt.Errorf("insert approval: %w", err)
	}
	needed, err := approval.Quorum(ctx, tx, r.WalletID)
	if err != nil {
		return nil, err
	}
	data := map[string]any{
		"approval_id": approval.PublicID(a.ID), "wallet_id": r.WalletID, "agent_label": w.Label,
		"amount": r.Amount, "asset": r.Asset, "to": r.To, "memo": r.Memo, "approvals": []approval.VoteDoc{}, "approvals_needed": needed,
	}
	if r.X402 != nil {
		// Approvers see what is bought and from whom.
		data["kind"], data["resource"], data["description"] = r.X402.Kind(), r.X402.Resource, r.X402.Description
		if r.X402.Protocol == ProtocolMPP {
			// And an MPP charge's seller and every further recipient.
			data["realm"], data["splits"] = r.X402.Realm, r.X402.Splits
		}
	}
	out := (&Outcome{Status: PendingApproval, ApprovalID: a.ID}).remaining(d)
	if r.X402 != nil {
		out.X402 = &X402Signed{PaymentID: r.ID, Amount: int64(r.Amount), PayTo: r.To, Network: r.X402.NetworkID, Resource: r.X402.Resource}
	}
	details := map[string]any{"request_id": r.ID, "approval_id": approval.PublicID(a.ID), "amount": r.Amount, "asset": a.Asset, "to": r.To}
	if err := settleWithEvent(ctx, tx, r, out, webhook.KindApprovalPending, data, at, audit.ActionSendPendingApproval, details); err != nil {
		return nil, err
	}
	return out, nil
}
