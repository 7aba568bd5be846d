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
	var r Request
	err := db.NewSelect().Model(&r).Column("state", "outcome").Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("send request %s does not exist", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read send request: %w", err)
	}
	switch {
	case r.State == StateAbandoned:
		return nil, ErrAbandoned
	case r.State == StateDecided && r.Outcome != nil:
		return r.Outcome, nil
	}
	return nil, nil
}

// signedOutcome answers a decided send whose broadcast has not reported
// yet: it is signed, stored and will be broadcast (again) until it lands or
// its blockhash expires, so it is sent.
func signedOutcome(ctx context.Context, db bun.IDB, id uuid.UUID) (*Outcome, error) {
	var sig string
	err := db.NewSelect().Table("transactions").Column("signature").
		Where("request_id = ?", id).Scan(ctx, &sig)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read transaction of request: %w", err)
	}
	return &Outcome{Status: Sent, Signature: sig}, nil
}

// Wait waits for the outcome of request id: handed over by notified (see
// Waiter), or polled from the database as a fallback. At timeout it abandons the request; if
// a worker won that race, it waits up to grace more for the broadcast's
// answer and then answers from the stored transaction. ErrAbandoned means
// the send will never execute.
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
	// caller's context may be gone; this must still happen.
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	abandoned, err := Abandon(bg, db, id)
	if err != nil {
		return nil, err
	}
	if abandoned {
		return nil, ErrAbandoned
	}
	until := time.Now().Add(grace)
	for {
		if o, err := Final(bg, db, id); o != nil || err != nil {
			return o, err
		}
		if time.Now().After(until) {
			break
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
	if o, err := signedOutcome(bg, db, id); o != nil || err != nil {
		return o, err
	}
	// Decided, yet neither an outcome nor a transaction: the worker is
	// between its commit and writing the outcome of a non-send (cannot
	// happen: those commit together) or the database lost the row.
	return nil, fmt.Errorf("send request %s decided without an outcome", id)
}
