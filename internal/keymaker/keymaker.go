// Package keymaker has a worker do for the API what needs keys the API
// never holds: make a key in an HSM or a KMS (the API has no PIN, Vault
// token or KMS role), or seal an envelope wallet's secret to an owner's
// public key for an approved export (the API has no master key).
//
// PostgreSQL carries the requests and their answers; Redis only wakes a
// worker. The API writes a key request row and waits for the worker to
// write the key it made into that row; it never takes a key from a
// message, so whoever can write to Redis cannot hand a wallet their own
// address. An export is sealed only for a wallet_exports row PostgreSQL
// says is approved, to the recipient stored in that row
// (wallet.SealApproved); a message on Redis names nothing, and a worker
// that reads one only looks at PostgreSQL sooner.
//
// A request no worker answers in time is unavailable (503): no wallet is
// created. A worker skips requests whose asker has stopped waiting, so it
// makes no key nobody will use; one it made just as the asker gave up is
// a key no wallet names, which signs nothing.
package keymaker

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// WakeKey is the Redis list whose entries wake a worker to look at the
// requests in PostgreSQL. Their content is ignored.
const WakeKey = "agentwallet:keys:wake"

// wakeBacklog bounds the wake list: one entry wakes a worker as well as
// a thousand.
const wakeBacklog = 16

// DefaultWait bounds how long the API waits for a worker to make a key
// or seal an export.
const DefaultWait = 5 * time.Second

// DefaultSlots bounds the keys a worker makes at once: a KMS key costs
// money and an HSM token holds a finite number of objects, so requests
// beyond it wait for a slot (and, past their deadline, are never made).
const DefaultSlots = 4

// DefaultEvery is how often a worker looks for requests when nothing wakes
// it (Redis down, a wake lost).
const DefaultEvery = 2 * time.Second

// Request states, as key_requests.state holds them.
const (
	statePending     = "pending"
	stateMaking      = "making"
	stateMade        = "made"
	stateUnavailable = "unavailable"
	stateFailed      = "failed"
)

// keyRequest is a row of key_requests: the API's request for a key and,
// once a worker made it, the key.
type keyRequest struct {
	bun.BaseModel `bun:"table:key_requests"`

	ID          uuid.UUID      `bun:"id,pk,type:uuid"`
	Backend     signer.Backend `bun:"backend"`
	Name        string         `bun:"name"`
	State       string         `bun:"state"`
	RequestedAt time.Time      `bun:"requested_at"`
	Deadline    time.Time      `bun:"deadline"`
	ClaimedAt   *time.Time     `bun:"claimed_at"`
	DoneAt      *time.Time     `bun:"done_at"`
	PublicKey   []byte         `bun:"public_key"`
	Ref         *string        `bun:"ref"`
	Reason      *string        `bun:"reason"`
}

// Client asks a worker to make keys in Backend (it is the API's
// signer.Maker when new wallets' keys do not live in the envelope) and to
// seal approved exports.
type Client struct {
	DB      *bun.DB
	Redis   *redis.Client // nil: workers find requests on their own tick
	Backend signer.Backend
	Wait    time.Duration // 0: DefaultWait
}

func (c *Client) wait() time.Duration {
	if c.Wait <= 0 {
		return DefaultWait
	}
	return c.Wait
}

// Make asks a worker for a new key named name and waits for it. The key is
// the one the worker wrote into the request's row.
func (c *Client) Make(ctx context.Context, name string) (signer.Key, error) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	req := keyRequest{ID: uuid.New(), Backend: c.Backend, Name: name, State: statePending, RequestedAt: now, Deadline: now.Add(c.wait())}
	if _, err := c.DB.NewInsert().Model(&req).Exec(ctx); err != nil {
		return signer.Key{}, &signer.UnavailableError{Backend: c.Backend, Reason: "the request could not be recorded", Err: err}
	}
	c.wake(ctx)
	err := poll(ctx, req.Deadline, func(ctx context.Context) (bool, error) {
		err := c.DB.NewSelect().Model(&req).WherePK().Scan(ctx)
		return err == nil && req.State != statePending && req.State != stateMaking, err
	})
	if err != nil {
		return signer.Key{}, &signer.UnavailableError{Backend: c.Backend, Reason: "no worker answered in time", Err: err}
	}
	switch req.State {
	case stateMade:
		if len(req.PublicKey) != ed25519.PublicKeySize || req.Ref == nil || *req.Ref == "" {
			return signer.Key{}, errors.New("make key: the request's row names no key")
		}
		return signer.Key{Public: req.PublicKey, Backend: c.Backend, Ref: *req.Ref}, nil
	case stateUnavailable:
		return signer.Key{}, &signer.UnavailableError{Backend: c.Backend, Reason: reasonOf(req.Reason)}
	}
	return signer.Key{}, &WorkerError{Msg: reasonOf(req.Reason)}
}

func reasonOf(r *string) string {
	if r == nil || *r == "" {
		return "the worker gave no reason"
	}
	return *r
}

// Sealed wakes a worker to seal export exportID of wallet id, which an
// owner has just approved, and waits until a worker has sealed (or voided)
// it or the wait is over. It answers the request as PostgreSQL then has it:
// still approved when no worker sealed it in time (one will).
func (c *Client) Sealed(ctx context.Context, accountID, id, exportID uuid.UUID) (wallet.Export, error) {
	c.wake(ctx)
	var e wallet.Export
	err := poll(ctx, time.Now().Add(c.wait()), func(ctx context.Context) (bool, error) {
		var err error
		e, err = wallet.GetExport(ctx, c.DB, accountID, id, exportID)
		return err == nil && e.State != wallet.ExportApproved, err
	})
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return e, nil
	}
	return e, err
}

// wake tells the workers to look at PostgreSQL now. A lost wake costs at
// most a worker's tick.
func (c *Client) wake(ctx context.Context) {
	if c.Redis == nil {
		return
	}
	_, _ = c.Redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, WakeKey, "1")
		p.LTrim(ctx, WakeKey, 0, wakeBacklog-1)
		return nil
	})
}

// poll calls done, more and more seldom, until it reports true, fails,
// or deadline passes (context.DeadlineExceeded).
func poll(ctx context.Context, deadline time.Time, done func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	pause := 5 * time.Millisecond
	for {
		ok, err := done(ctx)
		switch {
		case ok:
			return nil
		case err != nil && ctx.Err() == nil:
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// WorkerError is a request the worker refused or failed, in its words.
type WorkerError struct{ Msg string }

func (e *WorkerError) Error() string { return e.Msg }

// Server is the worker's side: it makes the keys and seals the exports
// PostgreSQL asks for.
type Server struct {
	DB    *bun.DB
	Redis *redis.Client // nil: only the tick wakes it
	// Signers makes keys with its keepers; a request for a backend this
	// worker does not keep is left for a worker that does.
	Signers *signer.Set
	// Seal seals an approved export; nil: this worker does not export.
	Seal  wallet.SealFunc
	Log   *slog.Logger
	Slots int           // 0: DefaultSlots
	Every time.Duration // 0: DefaultEvery
}

// Run serves until ctx ends, then waits for the keys being made.
func (s *Server) Run(ctx context.Context) {
	slots := make(chan struct{}, orDefault(s.Slots, DefaultSlots))
	every := s.Every
	if every <= 0 {
		every = DefaultEvery
	}
	defer func() {
		for range cap(slots) {
			slots <- struct{}{} // every key being made is done
		}
	}()
	for ctx.Err() == nil {
		s.pass(ctx, slots)
		s.sleep(ctx, every)
	}
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// sleep waits for a wake on Redis, or every, or the end.
func (s *Server) sleep(ctx context.Context, every time.Duration) {
	if s.Redis != nil {
		_, err := s.Redis.BRPop(ctx, every, WakeKey).Result()
		if err == nil || errors.Is(err, redis.Nil) || ctx.Err() != nil {
			return
		}
		// Redis is down: the tick alone drives the work meanwhile.
	}
	select {
	case <-ctx.Done():
	case <-time.After(every):
	}
}

// pass seals every approved export and starts the pending keys' making
// while slots are free.
func (s *Server) pass(ctx context.Context, slots chan struct{}) {
	if s.Seal != nil {
		// Bounded: a pass that finds more leaves them to the next.
		for range 100 {
			found, err := wallet.SealApproved(ctx, s.DB, s.Seal)
			if err != nil && ctx.Err() == nil {
				s.Log.WarnContext(ctx, "export not sealed", "err", err)
				break
			}
			if !found {
				break
			}
		}
	}
	backends := []signer.Backend{}
	if s.Signers != nil {
		for b := range s.Signers.Keepers {
			backends = append(backends, b)
		}
	}
	if len(backends) == 0 {
		return
	}
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		default:
			return // every slot busy: the rest wait
		}
		req, err := s.claim(ctx, backends)
		if err != nil || req == nil {
			<-slots
			if err != nil && ctx.Err() == nil {
				s.Log.WarnContext(ctx, "key requests not read", "err", err)
			}
			return
		}
		go func() {
			defer func() { <-slots }()
			s.make(ctx, req)
		}()
	}
}

// claim takes the oldest pending request of a backend this worker keeps
// whose asker still waits.
func (s *Server) claim(ctx context.Context, backends []signer.Backend) (*keyRequest, error) {
	var req keyRequest
	err := s.DB.NewRaw(`UPDATE key_requests SET state = ?, claimed_at = now()
		WHERE id = (SELECT id FROM key_requests
			WHERE state = ? AND deadline > now() AND backend IN (?)
			ORDER BY requested_at LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING *`, stateMaking, statePending, bun.List(backends)).Scan(ctx, &req)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &req, nil
}

// make makes req's key and writes it into req's row.
func (s *Server) make(ctx context.Context, req *keyRequest) {
	keeper, _ := s.Signers.Keeper(req.Backend)
	mctx, cancel := context.WithDeadline(ctx, req.Deadline)
	defer cancel()
	key, err := keeper.Make(mctx, req.Name)
	state, reason := stateMade, ""
	if u, ok := signer.Unavailable(err); ok {
		state, reason = stateUnavailable, u.Reason
	} else if err != nil {
		state, reason = stateFailed, err.Error()
	} else if len(key.Public) != ed25519.PublicKeySize || key.Ref == "" {
		state, reason = stateFailed, "the signer returned no key"
	}
	if err != nil || state != stateMade {
		s.Log.WarnContext(ctx, "key not made", "backend", req.Backend, "name", req.Name, "err", reason)
	}
	q := s.DB.NewUpdate().Model((*keyRequest)(nil)).Set("state = ?", state).Set("done_at = now()").
		Where("id = ? AND state = ?", req.ID, stateMaking)
	if state == stateMade {
		q = q.Set("public_key = ?", []byte(key.Public)).Set("ref = ?", key.Ref)
	} else {
		q = q.Set("reason = ?", reason)
	}
	// The row is written even as the worker stops: a key made is recorded.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer wcancel()
	if _, err := q.Exec(wctx); err != nil {
		s.Log.ErrorContext(ctx, "key made but not recorded", "backend", req.Backend, "name", req.Name, "err", fmt.Sprint(err))
	}
}
