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

// DefaultWatchEvery is how often, by default, a hub renews its rows in
// stream_watchers; each lives three periods without renewal.
const DefaultWatchEvery = 15 * time.Second

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
//
// The triggers notify only for accounts that some hub watches (migration
// 0022): a hub holds a row in stream_watchers for each account it has a
// subscription for, registered before Subscribe returns, renewed every
// WatchEvery, deleted with the account's last subscription. A row that
// lapsed (the hub could not renew it in time) ends the account's
// subscriptions here: events committed meanwhile notified no one, and the
// pages replay them on reconnection.
type Hub struct {
	DB  *bun.DB
	Log *slog.Logger
	// Recheck is how often open streams' sessions are re-read without a
	// notification; 0 takes DefaultRecheck.
	Recheck time.Duration
	// ID names this hub's rows in stream_watchers; NewHub draws one.
	ID uuid.UUID
	// WatchEvery is how often the hub renews its rows in stream_watchers
	// (each lives 3 × WatchEvery); 0 takes DefaultWatchEvery.
	WatchEvery time.Duration

	mu        sync.Mutex
	listening bool
	accounts  map[uuid.UUID]*watch
	recheck   chan struct{}
}

// watch is one account's subscriptions in a hub, and its row in
// stream_watchers.
type watch struct {
	subs map[*Sub]struct{} // Hub.mu
	// reg serialises registering and deleting the row, so a deletion for
	// the last subscription never lands after a new one's registration.
	reg sync.Mutex
	// users counts callers working on this watch outside Hub.mu: it stays
	// in Hub.accounts while they do (Hub.mu).
	users int
	// registered says the row exists, as far as the hub knows; gen counts
	// registrations. Written under reg and Hub.mu, read under either.
	registered bool
	gen        uint64
}

// NewHub makes a hub over db; Run feeds it.
func NewHub(db *bun.DB, log *slog.Logger, recheck time.Duration) *Hub {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if recheck <= 0 {
		recheck = DefaultRecheck
	}
	return &Hub{DB: db, Log: log, Recheck: recheck, ID: uuid.New(),
		accounts: map[uuid.UUID]*watch{}, recheck: make(chan struct{}, 1)}
}

func (h *Hub) watchEvery() time.Duration {
	if h.WatchEvery <= 0 {
		return DefaultWatchEvery
	}
	return h.WatchEvery
}

// Subscribe opens a subscription for a session acting in account with
// role. It is ErrUnavailable while the hub is not listening.
//
// When it returns, the account is watched: every event or failed delivery
// of the account that commits afterwards notifies this hub, and one that
// committed before is in any read made afterwards (the stream's replay,
// the page's first read). See stream_watched in migration 0022: the
// registration waits for the account's transactions that checked for a
// watcher before the row existed, so none of them commits after it
// unannounced. ctx bounds that registration (it is an error past it).
func (h *Hub) Subscribe(ctx context.Context, sessionID, accountID uuid.UUID, role auth.Role) (*Sub, error) {
	s := &Sub{SessionID: sessionID, AccountID: accountID, Role: role, c: make(chan Item, subBuffer), done: make(chan struct{})}
	h.mu.Lock()
	if !h.listening {
		h.mu.Unlock()
		return nil, ErrUnavailable
	}
	w := h.accounts[accountID]
	if w == nil {
		w = &watch{subs: map[*Sub]struct{}{}}
		h.accounts[accountID] = w
	}
	// In the map before the registration: a notification the row causes
	// finds the subscription.
	w.subs[s] = struct{}{}
	w.users++
	h.mu.Unlock()

	err := h.ensureWatched(ctx, accountID, w)

	h.mu.Lock()
	w.users--
	if err != nil {
		delete(w.subs, s)
	}
	h.dropIdle(accountID, w)
	h.mu.Unlock()
	if err != nil {
		s.end(ReasonUnavailable)
		return nil, fmt.Errorf("%w: watch the account: %w", ErrUnavailable, err)
	}
	return s, nil
}

// ensureWatched registers the account's row unless it is registered.
func (h *Hub) ensureWatched(ctx context.Context, account uuid.UUID, w *watch) error {
	w.reg.Lock()
	defer w.reg.Unlock()
	h.mu.Lock()
	done := w.registered
	h.mu.Unlock()
	if done {
		return nil
	}
	if err := h.register(ctx, account); err != nil {
		return err
	}
	h.mu.Lock()
	w.registered = true
	w.gen++
	h.mu.Unlock()
	return nil
}

// registerLockWait bounds how long a registration waits for the account's
// transactions in flight (and holds up the account's next event writers,
// queued behind it).
const registerLockWait = 2 * time.Second

// register writes (or renews) the account's row under the account's
// stream lock taken exclusively: it waits for the transactions that
// checked for a watcher before (they hold the lock shared until they end),
// and the ones that check after wait for its commit and see the row.
func (h *Hub) register(ctx context.Context, account uuid.UUID) error {
	return h.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT set_config('lock_timeout', ?, true)",
			fmt.Sprintf("%dms", registerLockWait.Milliseconds())); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(24, hashtext(?::uuid::text))", account); err != nil {
			return fmt.Errorf("wait for the account's event writers: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO stream_watchers (account_id, hub_id, expires_at)
			VALUES (?, ?, now() + ? * interval '1 millisecond')
			ON CONFLICT (account_id, hub_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
			account, h.ID, h.watchTTL().Milliseconds())
		return err
	})
}

func (h *Hub) watchTTL() time.Duration { return 3 * h.watchEvery() }

// Unsubscribe ends s and forgets it; the account's last subscription here
// deletes its row in stream_watchers (which otherwise lapses).
func (h *Hub) Unsubscribe(s *Sub) {
	s.end(ReasonShutdown)
	h.mu.Lock()
	w := h.accounts[s.AccountID]
	if w == nil {
		h.mu.Unlock()
		return
	}
	delete(w.subs, s)
	if len(w.subs) > 0 {
		h.mu.Unlock()
		return
	}
	w.users++
	h.mu.Unlock()

	w.reg.Lock()
	h.mu.Lock()
	idle := len(w.subs) == 0 && w.registered
	if idle {
		w.registered = false
	}
	h.mu.Unlock()
	if idle {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := h.DB.NewDelete().Table("stream_watchers").Where("account_id = ? AND hub_id = ?", s.AccountID, h.ID).Exec(ctx)
		cancel()
		if err != nil {
			h.Log.Warn("forget a watched account (its row lapses on its own)", "err", err)
		}
	}
	w.reg.Unlock()

	h.mu.Lock()
	w.users--
	h.dropIdle(s.AccountID, w)
	h.mu.Unlock()
}

// dropIdle forgets w once nothing uses it. h.mu is held.
func (h *Hub) dropIdle(account uuid.UUID, w *watch) {
	if len(w.subs) == 0 && w.users == 0 && !w.registered && h.accounts[account] == w {
		delete(h.accounts, account)
	}
}

// Check re-reads s's session now, as the periodic re-check does: s ends
// (ReasonSessionEnded, ReasonRoleChanged) when the session ended, moved
// or has another role. It serves a stream that subscribed after its
// session was read: a change committed in between notified the hub
// before s was there to be checked.
func (h *Hub) Check(ctx context.Context, s *Sub) error {
	live, err := auth.LiveSessions(ctx, h.DB, []uuid.UUID{s.SessionID})
	if err != nil {
		return err
	}
	judge([]*Sub{s}, live)
	return nil
}

// judge ends the subscriptions whose session is not live as it was.
func judge(subs []*Sub, live map[uuid.UUID]auth.LiveSession) {
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

// endAll ends every subscription (of account, or of all when nil).
func (h *Hub) endAll(reason string, accounts map[uuid.UUID]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for a, w := range h.accounts {
		if accounts != nil && !accounts[a] {
			continue
		}
		for s := range w.subs {
			s.end(reason)
		}
	}
}

// Run listens until ctx ends, then ends every subscription.
func (h *Hub) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { h.recheckLoop(ctx) })
	wg.Go(func() { h.watchLoop(ctx) })
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
	// Its streams are ending; their rows would lapse, but the triggers
	// need not notify for them meanwhile.
	dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := h.DB.NewDelete().Table("stream_watchers").Where("hub_id = ?", h.ID).Exec(dctx); err != nil {
		h.Log.Warn("forget the watched accounts (their rows lapse on their own)", "err", err)
	}
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
	w := h.accounts[account]
	return w != nil && len(w.subs) > 0
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
	w := h.accounts[account]
	if w == nil {
		return
	}
	for s := range w.subs {
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
		for _, w := range h.accounts {
			for s := range w.subs {
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
		judge(subs, live)
	}
}

// watchLoop renews the hub's rows in stream_watchers every WatchEvery and
// deletes the rows that lapsed (any hub's: a process that died leaves
// its rows). A row of this hub found lapsed, or a renewal that fails,
// ends the account's subscriptions (ReasonUnavailable): their events may
// have notified no one, and the pages replay them on reconnection.
func (h *Hub) watchLoop(ctx context.Context) {
	t := time.NewTicker(h.watchEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		gens := map[uuid.UUID]uint64{}
		var ids []uuid.UUID
		for a, w := range h.accounts {
			if w.registered {
				gens[a] = w.gen
				ids = append(ids, a)
			}
		}
		h.mu.Unlock()
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		renewed := map[uuid.UUID]bool{}
		var err error
		if len(ids) > 0 {
			var kept []uuid.UUID
			err = h.DB.NewRaw(`UPDATE stream_watchers SET expires_at = now() + ? * interval '1 millisecond'
				WHERE hub_id = ? AND account_id IN (?) AND expires_at > now() RETURNING account_id`,
				h.watchTTL().Milliseconds(), h.ID, bun.List(ids)).Scan(qctx, &kept)
			for _, a := range kept {
				renewed[a] = true
			}
		}
		if err == nil {
			if _, err := h.DB.NewDelete().Table("stream_watchers").Where("expires_at <= now()").Exec(qctx); err != nil && ctx.Err() == nil {
				h.Log.Warn("delete lapsed watchers (the triggers ignore them)", "err", err)
			}
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			h.Log.Warn("watched accounts could not be renewed; their streams end", "err", err)
		}
		h.mu.Lock()
		for a, gen := range gens {
			w := h.accounts[a]
			if renewed[a] || w == nil || !w.registered || w.gen != gen {
				continue
			}
			// Lapsed, or unknown: registered again by the next
			// subscription.
			w.registered = false
			for s := range w.subs {
				s.end(ReasonUnavailable)
			}
			h.dropIdle(a, w)
		}
		h.mu.Unlock()
	}
}
