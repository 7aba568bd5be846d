package live

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

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
