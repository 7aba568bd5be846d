package payment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/wallet"
)

// ErrSelfSend is a send whose recipient is the sending wallet itself.
var ErrSelfSend = errors.New("the recipient is the sending wallet itself")

// Submit records a queued request, in one statement that also checks the
// wallet belongs to the account (else wallet.ErrNotFound) and is not the
// recipient (ErrSelfSend). Its deadline is `wait` from now on the
// database's clock, the one clock the API and every worker share.
func Submit(ctx context.Context, db bun.IDB, r *Request, wait time.Duration) error {
	var row struct {
		Pubkey    string
		CreatedAt bun.NullTime
		Deadline  bun.NullTime
	}
	err := db.NewRaw(`WITH w AS (SELECT id, pubkey FROM wallets WHERE id = ? AND account_id = ?),
		ins AS (
			INSERT INTO send_requests (id, account_id, wallet_id, key_id, network, to_address, amount_micros, memo, state, deadline)
			SELECT ?, ?, w.id, ?, ?, ?, ?, ?, ?, now() + ? * interval '1 microsecond' FROM w WHERE w.pubkey <> ?
			RETURNING created_at, deadline)
		SELECT w.pubkey, ins.created_at, ins.deadline FROM w LEFT JOIN ins ON true`,
		r.WalletID, r.AccountID,
		r.ID, r.AccountID, r.KeyID, r.Network, r.To, r.Amount, r.Memo, StateQueued, wait.Microseconds(), r.To,
	).Scan(ctx, &row.Pubkey, &row.CreatedAt, &row.Deadline)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return wallet.ErrNotFound
	case err != nil:
		return fmt.Errorf("insert send request: %w", err)
	case row.CreatedAt.IsZero():
		return ErrSelfSend
	}
	r.State, r.CreatedAt, r.Deadline = StateQueued, row.CreatedAt.Time, row.Deadline.Time
	return nil
}

// Abandon moves a queued request to abandoned. False means a worker had
// already decided it.
func Abandon(ctx context.Context, db bun.IDB, id uuid.UUID) (bool, error) {
	res, err := db.NewUpdate().Table("send_requests").
		Set("state = ?", StateAbandoned).Set("decided_at = now()").
		Where("id = ? AND state = ?", id, StateQueued).
		Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("abandon send request: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Final returns the request's outcome once it is known: nil while queued or
// while a decided send is still being broadcast. An abandoned request is
// ErrAbandoned.
func Final(ctx context.Context, db bun.IDB, id uuid.UUID) (*Outcome, error) {
	o, err := stored(ctx, db, id)
	if o != nil && o.Broadcasting {
		return nil, err
	}
	return o, err
}

// stored is the request's outcome as stored, final or not.
func stored(ctx context.Context, db bun.IDB, id uuid.UUID) (*Outcome, error) {
	var r Request
	err := db.NewSelect().Model(&r).Column("state", "outcome").Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("send request %s does not exist", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read send request: %w", err)
	}
	if r.State == StateAbandoned {
		return nil, ErrAbandoned
	}
	return r.Outcome, nil
}

// Wait waits for the outcome of request id: handed over by notified (see
// Waiter), or polled from the database as a fallback. At timeout it
// abandons the request; if a worker won that race, it waits up to grace
// more for the broadcast's answer, then answers the signed transaction as
// sent. ErrAbandoned means the send will never execute; ErrUnknown that
// its fate could not be established.
func Wait(ctx context.Context, db bun.IDB, id uuid.UUID, notified <-chan *Outcome, timeout, grace time.Duration) (*Outcome, error) {
	const poll = 200 * time.Millisecond
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case o := <-notified:
			if o != nil {
				return o, nil
			}
			notified = nil
		case <-tick.C:
		case <-deadline.C:
			waiting = false
			continue
		case <-ctx.Done():
			// The caller went away: stop the send if it has not started.
			waiting = false
			continue
		}
		if o, err := Final(ctx, db, id); o != nil || errors.Is(err, ErrAbandoned) {
			return o, err
		}
	}

	// Out of time: abandon it unless a worker decided it first. The
	// caller's context may be gone; this must still happen. A worker
	// holding the row makes this wait for its commit.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	abandoned, err := Abandon(actx, db, id)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnknown, err)
	}
	if abandoned {
		return nil, ErrAbandoned
	}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace+5*time.Second)
	defer cancel()
	until := time.Now().Add(grace)
	for time.Now().Before(until) {
		if o, err := Final(gctx, db, id); o != nil || errors.Is(err, ErrAbandoned) {
			return o, err
		}
		select {
		case o := <-notified:
			if o != nil {
				return o, nil
			}
			notified = nil
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Signed and stored, first broadcast not reported: it is sent (the
	// sweep broadcasts it until it lands or expires).
	o, err := stored(gctx, db, id)
	if err != nil || o == nil {
		return nil, fmt.Errorf("%w: decided without an outcome (%v)", ErrUnknown, err)
	}
	o.Broadcasting = false
	return o, nil
}
