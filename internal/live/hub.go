package live

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
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
