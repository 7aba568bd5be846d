package live

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
)

var errNoRows = sql.ErrNoRows

// ErrUnavailable: the hub is not listening (the database is unreachable,
// or it is starting or stopping); no stream can be served live.
var ErrUnavailable = errors.New("live events are unavailable")

// Reasons a subscription ends, as its stream's last message says.
const (
	// ReasonSessionEnded: signed out, expired, moved to another account,
	// or the person was removed from the account.
	ReasonSessionEnded = "session_ended"
	// ReasonRoleChanged: the person's role changed; a new stream reads
	// with the new one.
	ReasonRoleChanged = "role_changed"
	// ReasonUnavailable: PostgreSQL (or Redis) could not be reached; what
	// happened meanwhile is replayed on reconnection.
	ReasonUnavailable = "unavailable"
	// ReasonSlow: the page did not read fast enough; it reconnects and is
	// replayed what it missed.
	ReasonSlow = "slow_reader"
	// ReasonShutdown: the server is stopping.
	ReasonShutdown = "shutdown"
)

// DefaultRecheck is how often, by default, the hub re-reads every open
// stream's session even without a notification: idle and absolute expiry
// happen without one.
const DefaultRecheck = 30 * time.Second

// subBuffer is how many items a subscription holds for its stream.
const subBuffer = 256

// Sub is one open stream's subscription to its account's items.
type Sub struct {
	SessionID uuid.UUID
	AccountID uuid.UUID
	Role      auth.Role

	c      chan Item
	done   chan struct{}
	once   sync.Once
	reason string
}

// C receives the account's items as they commit.
func (s *Sub) C() <-chan Item { return s.c }

// Done is closed when the subscription ends; Reason then says why.
func (s *Sub) Done() <-chan struct{} { return s.done }

// Reason is why the subscription ended ("" while it is open).
func (s *Sub) Reason() string {
	select {
	case <-s.done:
		return s.reason
	default:
		return ""
	}
}

func (s *Sub) end(reason string) {
	s.once.Do(func() {
		s.reason = reason
		close(s.done)
	})
}

// Hub listens on Channel over one connection of DB and feeds the
// subscriptions of this process. When the connection fails every
// subscription ends (ReasonUnavailable) and no new one is taken until it
// listens again: a stream never waits on a dead connection.
type Hub struct {
	DB  *bun.DB
	Log *slog.Logger
	// Recheck is how often open streams' sessions are re-read without a
	// notification; 0 takes DefaultRecheck.
	Recheck time.Duration

	mu        sync.Mutex
	listening bool
	subs      map[uuid.UUID]map[*Sub]struct{} // by account
	recheck   chan struct{}
}

// NewHub makes a hub over db; Run feeds it.
func NewHub(db *bun.DB, log *slog.Logger, recheck time.Duration) *Hub {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if recheck <= 0 {
		recheck = DefaultRecheck
	}
	return &Hub{DB: db, Log: log, Recheck: recheck, subs: map[uuid.UUID]map[*Sub]struct{}{}, recheck: make(chan struct{}, 1)}
}

// Subscribe opens a subscription for a session acting in account with
// role. It is ErrUnavailable while the hub is not listening.
func (h *Hub) Subscribe(sessionID, accountID uuid.UUID, role auth.Role) (*Sub, error) {
	s := &Sub{SessionID: sessionID, AccountID: accountID, Role: role, c: make(chan Item, subBuffer), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.listening {
		return nil, ErrUnavailable
	}
	if h.subs[accountID] == nil {
		h.subs[accountID] = map[*Sub]struct{}{}
	}
	h.subs[accountID][s] = struct{}{}
	return s, nil
}

// Unsubscribe ends s and forgets it.
func (h *Hub) Unsubscribe(s *Sub) {
	s.end(ReasonShutdown)
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.subs[s.AccountID]; m != nil {
		delete(m, s)
		if len(m) == 0 {
			delete(h.subs, s.AccountID)
		}
	}
}

// endAll ends every subscription (of account, or of all when nil).
func (h *Hub) endAll(reason string, accounts map[uuid.UUID]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for a, m := range h.subs {
		if accounts != nil && !accounts[a] {
			continue
		}
		for s := range m {
			s.end(reason)
		}
	}
}

// Run listens until ctx ends, then ends every subscription.
func (h *Hub) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { h.recheckLoop(ctx) })
	for ctx.Err() == nil {
		err := h.listen(ctx)
		h.mu.Lock()
		h.listening = false
		h.mu.Unlock()
		if ctx.Err() != nil {
			break
		}
		h.endAll(ReasonUnavailable, nil)
		h.Log.Warn("live events interrupted; open streams end and pages fall back to polling", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	h.endAll(ReasonShutdown, nil)
	wg.Wait()
}

// note is one notification of Channel.
type note struct {
	kind    byte // 'e' or 'd'
	account uuid.UUID
	id      uuid.UUID
}

// probeEvery is how long the listening connection may stay silent before
// it is probed: a connection that died without a word fails the probe.
const probeEvery = 10 * time.Second

// listen holds one connection LISTENing on Channel and hands what it hears
// to a reader goroutine, which reads the rows and feeds subscriptions in
// the order of the notifications (commit order).
func (h *Hub) listen(ctx context.Context) error {
	// Bounded: a pooled connection is pinged before use, which on a
	// silent network would wait for ever.
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, err := h.DB.Conn(cctx)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close()
	notes := make(chan note, 4096)
	// A failed read stops the listening too: the hub is down until it
	// listens again, rather than serving streams that miss items.
	lctx, stop := context.WithCancelCause(ctx)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		if err := h.read(lctx, notes); err != nil {
			stop(err)
		}
	}()
	defer func() { stop(nil); <-readerDone }()
	return conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		xctx, cancel := context.WithTimeout(lctx, 5*time.Second)
		_, err := pc.Exec(xctx, "LISTEN "+Channel)
		cancel()
		if err != nil {
			return errors.Join(err, driver.ErrBadConn)
		}
		h.mu.Lock()
		h.listening = true
		h.mu.Unlock()
		for {
			wctx, cancel := context.WithTimeout(lctx, probeEvery)
			n, err := pc.WaitForNotification(wctx)
			cancel()
			switch {
			case lctx.Err() != nil:
				// Never back to the pool: it listens.
				return errors.Join(context.Cause(lctx), driver.ErrBadConn)
			case errors.Is(err, context.DeadlineExceeded):
				pctx, cancel := context.WithTimeout(lctx, 5*time.Second)
				_, err = pc.Exec(pctx, "SELECT 1")
				cancel()
				if err != nil {
					return errors.Join(fmt.Errorf("probe the listening connection: %w", err), driver.ErrBadConn)
				}
				continue
			case err != nil:
				return errors.Join(err, driver.ErrBadConn)
			}
			if n.Payload == "s" {
				h.signalRecheck()
				continue
			}
			kind, rest, _ := strings.Cut(n.Payload, " ")
			rawAccount, rawID, _ := strings.Cut(rest, " ")
			account, err1 := uuid.Parse(rawAccount)
			id, err2 := uuid.Parse(rawID)
			if err1 != nil || err2 != nil || (kind != "e" && kind != "d") || !h.watched(account) {
				continue
			}
			select {
			case notes <- note{kind: kind[0], account: account, id: id}:
			default:
				// The reader is that far behind: every stream of the
				// account reconnects and replays.
				h.endAll(ReasonSlow, map[uuid.UUID]bool{account: true})
			}
		}
	})
}

// watched reports whether account has an open subscription here.
func (h *Hub) watched(account uuid.UUID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[account]) > 0
}

// readBatch bounds the notifications one read handles.
const readBatch = 200

// read turns notifications into items: it takes what is queued (up to
// readBatch), reads those rows in two queries, and hands each item, in
// notification order, to its account's subscriptions. A failed read ends
// the subscriptions of those accounts (their pages replay on reconnection)
// and the listening with them.
func (h *Hub) read(ctx context.Context, notes <-chan note) error {
	for {
		var batch []note
		select {
		case <-ctx.Done():
			return nil
		case n := <-notes:
			batch = append(batch, n)
		}
	more:
		for len(batch) < readBatch {
			select {
			case n := <-notes:
				batch = append(batch, n)
			default:
				break more
			}
		}
		var events, deliveries []uuid.UUID
		for _, n := range batch {
			if n.kind == 'e' {
				events = append(events, n.id)
			} else {
				deliveries = append(deliveries, n.id)
			}
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		evs, err := readIf(qctx, h.DB, events, readEvents)
		var ds map[uuid.UUID]Item
		if err == nil {
			ds, err = readIf(qctx, h.DB, deliveries, readDeliveries)
		}
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			accounts := map[uuid.UUID]bool{}
			for _, n := range batch {
				accounts[n.account] = true
			}
			h.endAll(ReasonUnavailable, accounts)
			return err
		}
		for _, n := range batch {
			it, ok := evs[n.id]
			if n.kind == 'd' {
				it, ok = ds[n.id]
			}
			if ok {
				h.publish(n.account, it)
			}
		}
	}
}

func readIf(ctx context.Context, db bun.IDB, ids []uuid.UUID, read func(context.Context, bun.IDB, []uuid.UUID) (map[uuid.UUID]Item, error)) (map[uuid.UUID]Item, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return read(ctx, db, ids)
}

// publish hands it to every subscription of account; one whose buffer is
// full ends (ReasonSlow) rather than hold up the others.
func (h *Hub) publish(account uuid.UUID, it Item) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[account] {
		select {
		case <-s.done:
		case s.c <- it:
		default:
			s.end(ReasonSlow)
		}
	}
}

func (h *Hub) signalRecheck() {
	select {
	case h.recheck <- struct{}{}:
	default:
	}
}

// recheckLoop re-reads every open stream's session on a notification and
// every Recheck: a session that ended, expired or moved to another account
// ends its streams (ReasonSessionEnded), and so does a role that changed
// (ReasonRoleChanged). When the sessions cannot be read every stream ends
// (ReasonUnavailable): none goes on unchecked.
func (h *Hub) recheckLoop(ctx context.Context) {
	t := time.NewTicker(h.Recheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-h.recheck:
		}
		h.mu.Lock()
		var subs []*Sub
		var ids []uuid.UUID
		for _, m := range h.subs {
			for s := range m {
				subs = append(subs, s)
				ids = append(ids, s.SessionID)
			}
		}
		h.mu.Unlock()
		if len(subs) == 0 {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		live, err := auth.LiveSessions(qctx, h.DB, ids)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				h.Log.Warn("open streams' sessions could not be checked; the streams end", "err", err)
				h.endAll(ReasonUnavailable, nil)
			}
			continue
		}
		for _, s := range subs {
			now, ok := live[s.SessionID]
			switch {
			case !ok || now.AccountID != s.AccountID:
				s.end(ReasonSessionEnded)
			case now.Role != s.Role:
				s.end(ReasonRoleChanged)
			}
		}
	}
}
