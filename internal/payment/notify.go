package payment

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// DecidedChannel is the Redis pub/sub channel on which workers announce
// a request's final outcome: "<request id> <outcome JSON>". The outcome is
// already committed; the message only saves the waiter a read.
const DecidedChannel = "agentwallet:send:decided"

// Publish announces request id's final outcome. A lost message only
// costs the waiter its polling interval.
func Publish(ctx context.Context, rdb *redis.Client, id uuid.UUID, o *Outcome) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return rdb.Publish(ctx, DecidedChannel, id.String()+" "+string(b)).Err()
}

// Waiter wakes API requests waiting on their outcome. One subscription
// per process serves every waiter.
type Waiter struct {
	mu      sync.Mutex
	waiting map[uuid.UUID]chan *Outcome
}

// NewWaiter makes a Waiter; Run feeds it.
func NewWaiter() *Waiter {
	return &Waiter{waiting: map[uuid.UUID]chan *Outcome{}}
}

// Register returns a channel that receives id's outcome when it is
// announced, and a func to call when done waiting.
func (w *Waiter) Register(id uuid.UUID) (<-chan *Outcome, func()) {
	ch := make(chan *Outcome, 1)
	w.mu.Lock()
	w.waiting[id] = ch
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.waiting, id)
		w.mu.Unlock()
	}
}

func (w *Waiter) wake(payload string) {
	rawID, rawOutcome, _ := strings.Cut(payload, " ")
	id, err := uuid.Parse(rawID)
	if err != nil {
		return
	}
	w.mu.Lock()
	ch, ok := w.waiting[id]
	delete(w.waiting, id)
	w.mu.Unlock()
	if !ok {
		return
	}
	var o Outcome
	if json.Unmarshal([]byte(rawOutcome), &o) == nil && o.Status != "" {
		ch <- &o
	} else {
		ch <- nil // read it from the database
	}
}

// Run subscribes to DecidedChannel until ctx ends, resubscribing after
// Redis errors (go-redis reconnects; waiters poll meanwhile).
func (w *Waiter) Run(ctx context.Context, rdb *redis.Client, log *slog.Logger) {
	for ctx.Err() == nil {
		ps := rdb.Subscribe(ctx, DecidedChannel)
		// A blocked receive does not watch ctx; closing the
		// subscription ends it.
		unwatch := context.AfterFunc(ctx, func() { _ = ps.Close() })
		for {
			msg, err := ps.ReceiveMessage(ctx)
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("decision notifications interrupted; waiters fall back to polling", "err", err)
				}
				break
			}
			w.wake(msg.Payload)
		}
		unwatch()
		_ = ps.Close()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
