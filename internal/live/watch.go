package live

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
)

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

// watched reports whether account has an open subscription here.
func (h *Hub) watched(account uuid.UUID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.accounts[account]
	return w != nil && len(w.subs) > 0
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
