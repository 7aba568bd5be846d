package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
)

// Handoff gives the next free worker a payment's decision, or an
// approval's execution, to run now. An error means the hand-off may or
// may not have reached a worker: the Gateway then withdraws what it can.
type Handoff interface {
	Decide(ctx context.Context, requestID uuid.UUID) error
	Execute(ctx context.Context, approvalID uuid.UUID) error
}

// Outcomes is the outcome bus as the API listens to it: Register returns
// a channel that receives id's outcome when a worker announces it (nil:
// read it from the database), and a func to stop listening. A lost
// announcement costs only the poll interval. Waiter is the Redis one.
type Outcomes interface {
	Register(id uuid.UUID) (<-chan *Outcome, func())
}

// DefaultGrace is how long a payment whose decision won the race against
// the caller's wait still waits for its broadcast to report.
const DefaultGrace = 5 * time.Second

// Gateway is the API side of the payment path, shared by every entry
// point (a send, an x402 payment, an approval, through REST, the MCP
// tools or Slack): it records the request (replaying an idempotent one's
// first answer), hands the work to a worker, and waits for its outcome,
// withdrawing what no worker took. The worker side is the Engine.
type Gateway struct {
	DB       *bun.DB
	Handoff  Handoff
	Outcomes Outcomes
	// Wait bounds a caller's wait for its decision (it must be set).
	Wait time.Duration
	// Grace is DefaultGrace when zero.
	Grace time.Duration
	Log   *slog.Logger
}

func (g *Gateway) grace() time.Duration {
	if g.Grace > 0 {
		return g.Grace
	}
	return DefaultGrace
}

func (g *Gateway) log() *slog.Logger {
	if g.Log == nil {
		return slog.Default()
	}
	return g.Log
}

// ErrQueueUnavailable means the hand-off to a worker failed and what was
// asked was withdrawn: nothing was done (a payment never runs; an
// approval is still pending), and asking again is safe.
var ErrQueueUnavailable = errors.New("the payment queue is unavailable")

// Paid is a payment's answer: its outcome and, for an idempotent replay,
// that it is one and what became of a sent payment's transaction.
type Paid struct {
	Outcome  *Outcome
	Replayed bool
	// TransactionStatus (a replay of a sent payment): pending, confirmed
	// or failed, by any of its attempts' signatures.
	TransactionStatus string
}

// Pay records r (a send or an x402 payment), hands its decision to a
// worker and waits for the outcome. With an idempotency key, a request
// already answered replays its first answer, byte for byte; one still in
// flight is ErrInFlight. A hand-off that fails withdraws the request
// (ErrQueueUnavailable) unless a worker took it all the same, which is
// then waited for; a withdrawal that cannot be established is ErrUnknown.
func (g *Gateway) Pay(ctx context.Context, r *Request) (*Paid, error) {
	if r.IdempotencyKey != nil {
		prior, err := SubmitOnce(ctx, g.DB, r, g.Wait, g.grace())
		if err != nil {
			return nil, err
		}
		if prior != nil {
			p := &Paid{Outcome: prior, Replayed: true}
			if prior.Status == Sent {
				if p.TransactionStatus, err = TransactionStatus(ctx, g.DB, r.AccountID, prior.Signature); err != nil {
					return nil, err
				}
			}
			return p, nil
		}
	} else if err := Submit(ctx, g.DB, r, g.Wait); err != nil {
		return nil, err
	}
	notified, done := g.Outcomes.Register(r.ID)
	defer done()
	if err := g.Handoff.Decide(ctx, r.ID); err != nil {
		// The hand-off may have reached Redis all the same (a timeout
		// on the answer): only a successful abandon means nothing runs.
		g.log().WarnContext(ctx, "hand a payment's decision to a worker", "send_request_id", r.ID, "err", err)
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		abandoned, aerr := Abandon(bg, g.DB, r.ID)
		cancel()
		switch {
		case aerr != nil:
			return nil, fmt.Errorf("%w: %w", ErrUnknown, aerr)
		case abandoned:
			return nil, ErrQueueUnavailable
		}
		// A worker took it: wait for its outcome like any other.
	}
	o, err := Wait(ctx, g.DB, r.ID, notified, g.Wait, g.grace())
	if err != nil {
		return nil, err
	}
	return &Paid{Outcome: o}, nil
}

// ErrNotExecuted means an approval's execution did not happen within the
// wait: it was returned to pending, nothing sent.
var ErrNotExecuted = errors.New("the approval was not executed in time; it is still pending and nothing was sent")

// UnknownApprovalError is an approve whose effect could not be
// established: the approval may still execute, so the approve must not be
// repeated blindly.
type UnknownApprovalError struct{ ID uuid.UUID }

func (e *UnknownApprovalError) Error() string {
	return "the outcome of approval " + approval.PublicID(e.ID) + " could not be established"
}

// NotSignedError is an approval the worker returned to pending without
// signing, for a reason of its own (Outcome.Cause: the fee market above
// the cap, the fee payer's budget used up).
type NotSignedError struct{ Outcome *Outcome }

func (e *NotSignedError) Error() string { return e.Outcome.Detail }

// Approve casts voter's vote on approval id of the account. A vote short
// of the quorum answers the approval, still pending. The vote that
// completes it moves the approval to signing, hands its execution to a
// worker and waits for it as a payment's decision is waited for: an
// approval not executed by the wait's end returns to pending
// (ErrNotExecuted, or ErrQueueUnavailable when the hand-off failed). The
// vote's own refusals are the approval package's errors.
func (g *Gateway) Approve(ctx context.Context, accountID, id uuid.UUID, voter approval.Voter, note *string) (approval.Approval, error) {
	voted, final, err := approval.VoteFor(ctx, g.DB, accountID, id, voter, note)
	if err != nil {
		return approval.Approval{}, err
	}
	if !final {
		g.log().InfoContext(ctx, "approval vote", "approval_id", id, "by", voter.Actor, "approvals", len(voted.Votes), "needed", voted.Needed)
		return voted, nil
	}
	// Only the approve that completed the quorum listens, before its
	// hand-off exists.
	notified, done := g.Outcomes.Register(id)
	defer done()
	// A hand-off lost with Redis or a killed worker leaves the approval
	// signing with nothing signed: the wait below returns it to pending.
	if err := g.Handoff.Execute(ctx, id); err != nil {
		g.log().WarnContext(ctx, "hand an approval's execution to a worker", "approval_id", id, "err", err)
		released, err := g.release(ctx, id)
		switch {
		case err != nil:
			return approval.Approval{}, &UnknownApprovalError{ID: id}
		case released:
			return approval.Approval{}, ErrQueueUnavailable
		}
		// A worker took it all the same: wait for it.
	}
	a, err := g.awaitApproval(ctx, accountID, id, notified)
	if err != nil {
		return approval.Approval{}, err
	}
	g.log().InfoContext(ctx, "approval executed", "approval_id", id, "by", voter.Actor, "status", a.Status)
	return a, nil
}

// release returns an unexecuted approval to pending, even when the caller
// has gone away.
func (g *Gateway) release(ctx context.Context, id uuid.UUID) (bool, error) {
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	released, err := approval.Release(bg, g.DB, id)
	if err != nil {
		g.log().ErrorContext(ctx, "release approval", "approval_id", id, "err", err)
	}
	return released, err
}

// awaitApproval waits for the worker's turn on the approval: until it
// leaves signing, or, once the worker announces it is done, until it is
// signed (a broadcast that failed leaves it signing while the sweep
// re-broadcasts). At the wait's end it releases an approval nothing was
// signed for (ErrNotExecuted, still pending); a signed one gets the grace
// more, then is answered as it stands. It polls as Wait does.
func (g *Gateway) awaitApproval(ctx context.Context, accountID, id uuid.UUID, notified <-chan *Outcome) (approval.Approval, error) {
	// read reports whether a is an answer; announced says the worker
	// finished its turn.
	read := func(ctx context.Context, announced bool) (approval.Approval, bool, error) {
		a, err := approval.Get(ctx, g.DB, accountID, id)
		switch {
		case err != nil:
			g.log().WarnContext(ctx, "read approval while waiting", "approval_id", id, "err", err)
			return a, false, nil
		case a.Status == approval.Pending:
			// Returned to pending by the expiry task's clean-up.
			return a, false, ErrNotExecuted
		}
		return a, a.Status != approval.Signing || (announced && a.Signature != nil), nil
	}
	deadline := time.NewTimer(g.Wait)
	defer deadline.Stop()
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	for waiting := true; waiting; {
		announced := false
		select {
		case o := <-notified:
			announced, notified = true, nil
			if o.NotSigned() {
				// The worker returned it to pending, nothing signed.
				return approval.Approval{}, &NotSignedError{Outcome: o}
			}
		case <-tick.C:
		case <-deadline.C:
			waiting = false
			continue
		case <-ctx.Done():
			waiting = false
			continue
		}
		if a, final, err := read(ctx, announced); final || err != nil {
			return a, err
		}
	}
	released, err := g.release(ctx, id)
	switch {
	case err != nil:
		return approval.Approval{}, &UnknownApprovalError{ID: id}
	case released:
		return approval.Approval{}, ErrNotExecuted
	}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.grace()+5*time.Second)
	defer cancel()
	until := time.Now().Add(g.grace())
	for {
		announced := false
		select {
		case <-notified:
			announced, notified = true, nil
		case <-time.After(50 * time.Millisecond):
		}
		a, final, err := read(gctx, announced || time.Now().After(until))
		if final || err != nil {
			return a, err
		}
		if gctx.Err() != nil {
			return approval.Approval{}, &UnknownApprovalError{ID: id}
		}
	}
}

// NotSigned reports whether o is a payment the worker refused to sign
// for a reason of its own: the network's priority fee above the cap, the
// account's fee payer's daily budget used up, or the signer unavailable
// (o.Cause says which).
func (o *Outcome) NotSigned() bool {
	return o != nil && (o.Cause == CauseFeeCapBelowMarket || o.Cause == CauseFeePayerBudgetExceeded ||
		o.Cause == CauseSignerUnavailable)
}
