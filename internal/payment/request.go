package payment

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// ErrSelfSend is a send whose recipient is the sending wallet itself.
var ErrSelfSend = errors.New("the recipient is the sending wallet itself")

// Submit records a queued request, in one statement that also checks the
// wallet belongs to the account (else wallet.ErrNotFound) and is not the
// recipient (ErrSelfSend). Its deadline is `wait` from now on the
// database's clock, the one clock the API and every worker share. A
// request with an IdempotencyKey goes through SubmitOnce instead.
func Submit(ctx context.Context, db bun.IDB, r *Request, wait time.Duration) error {
	inserted, err := insert(ctx, db, r, wait)
	if err == nil && !inserted {
		return fmt.Errorf("send request %s: idempotency key already in use", r.ID)
	}
	return err
}

// liveKey is the predicate of the unique index send_requests_idempotency:
// the requests that hold their idempotency key.
const liveKey = `idempotency_key IS NOT NULL AND state <> 'abandoned'
	AND (outcome IS NULL OR outcome ->> 'status' <> 'unavailable')`

// insert records r unless its idempotency key is held by another live
// request (inserted false).
//
// Its commit does not wait for the WAL flush (synchronous_commit off for
// this statement's transaction only; db must not be a transaction): no
// answer about a send follows from its row alone before a synchronous
// commit after it (the decision, the claim, an abandon) has flushed the
// WAL up to that later commit, which holds this one. A crash before that
// loses a request nothing was decided or answered for but "in progress";
// its retry is a new request. That saves one flush wait per send.
func insert(ctx context.Context, db bun.IDB, r *Request, wait time.Duration) (inserted bool, err error) {
	// The one place a request without an asset becomes USDC's (every
	// earlier client's): rows read back always name theirs.
	r.Asset = cmp.Or(r.Asset, "USDC")
	var row struct {
		Pubkey    string
		CreatedAt bun.NullTime
		Deadline  bun.NullTime
		Commit    string
	}
	err = postgres.QueryRow(ctx, db, []any{&row.Pubkey, &row.CreatedAt, &row.Deadline, &row.Commit},
		`WITH w AS (SELECT id, pubkey FROM wallets WHERE id = $1 AND account_id = $2),
		ins AS (
			INSERT INTO send_requests (id, account_id, wallet_id, key_id, key_lineage, user_address, requesters, network, to_address, amount_micros, memo, idempotency_key, idempotency_scope, x402, state, deadline, asset)
			SELECT $3, $2, w.id, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, now() + $16 * interval '1 microsecond', $17 FROM w WHERE w.pubkey <> $9
			ON CONFLICT (account_id, idempotency_scope, idempotency_key) WHERE `+liveKey+` DO NOTHING
			RETURNING created_at, deadline)
		SELECT w.pubkey, ins.created_at, ins.deadline, set_config('synchronous_commit', 'off', true) FROM w LEFT JOIN ins ON true`,
		r.WalletID, r.AccountID,
		r.ID, r.KeyID, r.KeyLineage, r.UserAddress, r.Requesters, r.Network, r.To, int64(r.Amount), r.Memo, r.IdempotencyKey, r.IdempotencyScope, r.X402, StateQueued, wait.Microseconds(), r.Asset,
	)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, wallet.ErrNotFound
	case err != nil:
		return false, fmt.Errorf("insert send request: %w", err)
	case row.Pubkey == r.To:
		return false, ErrSelfSend
	case row.CreatedAt.IsZero():
		return false, nil
	}
	r.State, r.CreatedAt, r.Deadline = StateQueued, row.CreatedAt.Time, row.Deadline.Time
	return true, nil
}

// IdempotencyRetention is how long an Idempotency-Key answers with its
// first request's outcome; after it the key starts a new request. A send
// parked for approval holds its key while the approval is open, and for
// this long after it is decided.
const IdempotencyRetention = 24 * time.Hour

// ErrKeyReused is an Idempotency-Key sent again with a different request
// (another wallet, recipient, amount or memo).
var ErrKeyReused = errors.New("the Idempotency-Key was already used with a different request")

// ErrInFlight is an Idempotency-Key whose first request is still being
// decided or broadcast.
var ErrInFlight = errors.New("a request with this Idempotency-Key is still in progress")

// IdempotencyScope names whose an Idempotency-Key is: a key's rotation
// lineage (a rotated key replays its predecessor's sends), or a dashboard
// user. Keys are unique per scope, so no caller learns of, or can squat,
// another's values.
func IdempotencyScope(lineage uuid.UUID, user string) string {
	if user != "" {
		return string(audit.UserActor(user))
	}
	return string(audit.KeyActor(lineage))
}

// SubmitOnce is Submit for a request carrying an Idempotency-Key and its
// IdempotencyScope (docs/decisions/money-path.md, "Idempotency-Key"). The
// first request with the key in its scope is recorded (prior nil). A later one
// with the same body gets the first one's final outcome as prior and records
// nothing; with another body ErrKeyReused; while the first is undecided, or
// decided and still within its wait for the broadcast (deadline + grace),
// ErrInFlight. A request that was abandoned, whose node could not be reached
// before signing, or past IdempotencyRetention no longer holds its key.
func SubmitOnce(ctx context.Context, db bun.IDB, r *Request, wait, grace time.Duration) (prior *Outcome, err error) {
	for range 4 {
		inserted, err := insert(ctx, db, r, wait)
		if err != nil || inserted {
			return nil, err
		}
		var held struct {
			Request
			Expired, Overdue, Waiting bool
		}
		// A parked send keeps its key while its approval is open and for
		// the retention after it is decided: a retry days later must not
		// park a second approval a human could also approve.
		err = db.NewRaw(`SELECT r.*,
				r.created_at < now() - ?0 * interval '1 microsecond' AND NOT EXISTS (
					SELECT 1 FROM approvals AS a WHERE a.request_id = r.id
					AND (a.status IN ('pending', 'signing') OR a.decided_at >= now() - ?0 * interval '1 microsecond')) AS expired,
				r.deadline < now() AS overdue, r.deadline + ?1 * interval '1 microsecond' > now() AS waiting
			FROM send_requests AS r WHERE r.account_id = ?2 AND r.idempotency_scope = ?3 AND r.idempotency_key = ?4 AND `+liveKey,
			IdempotencyRetention.Microseconds(), grace.Microseconds(), r.AccountID, r.IdempotencyScope, r.IdempotencyKey).
			Scan(ctx, &held)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue // released meanwhile: try again
		case err != nil:
			return nil, fmt.Errorf("read idempotent request: %w", err)
		case held.Expired:
			if _, err := db.NewUpdate().Table("send_requests").Set("idempotency_key = NULL").
				Where("id = ?", held.ID).Exec(ctx); err != nil {
				return nil, fmt.Errorf("release expired idempotency key: %w", err)
			}
			continue
		case !sameSend(&held.Request, r):
			return nil, ErrKeyReused
		case held.State == StateQueued && held.Overdue:
			// Its API gave up without abandoning it (it crashed, or the
			// database was unreachable then): it must never run now.
			if _, err := Abandon(ctx, db, held.ID); err != nil {
				return nil, err
			}
			continue
		case held.Outcome == nil || held.Outcome.Broadcasting && held.Waiting:
			return nil, ErrInFlight
		}
		o := *held.Outcome
		o.Broadcasting = false
		return &o, nil
	}
	return nil, ErrInFlight
}

// sameSend reports whether two requests ask for the same payment.
func sameSend(a, b *Request) bool {
	memo := func(m *string) string {
		if m == nil {
			return ""
		}
		return *m
	}
	return a.WalletID == b.WalletID && a.To == b.To && a.Asset == b.Asset && a.Amount == b.Amount && memo(a.Memo) == memo(b.Memo) &&
		(a.X402 == nil) == (b.X402 == nil) && a.X402.digest() == b.X402.digest()
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
	err := postgres.QueryRow(ctx, db, []any{&r}, `SELECT state, outcome FROM send_requests WHERE id = $1`, id)
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

// waitPoll is how often a waiting caller reads its request (or approval)
// between announcements on the outcome bus: a lost announcement costs
// this much.
const waitPoll = 200 * time.Millisecond

// Wait waits for the outcome of request id: handed over by notified (see
// Waiter), or polled from the database as a fallback. At timeout it
// abandons the request; if a worker won that race, it waits up to grace
// more for the broadcast's answer, then answers the signed transaction as
// sent. ErrAbandoned means the send will never execute; ErrUnknown that
// its fate could not be established.
func Wait(ctx context.Context, db bun.IDB, id uuid.UUID, notified <-chan *Outcome, timeout, grace time.Duration) (*Outcome, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(waitPoll)
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
