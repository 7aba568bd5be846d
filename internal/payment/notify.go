package payment

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// DecidedChannel is the Redis pub/sub channel on which workers announce
// that a request's outcome is final (the message is the request id).
const DecidedChannel = "agentwallet:send:decided"

// Publish announces that request id has its final outcome. A lost message
// only costs the waiter its polling interval.
func Publish(ctx context.Context, rdb *redis.Client, id uuid.UUID) error {
	return rdb.Publish(ctx, DecidedChannel, id.String()).Err()
}

// Waiter wakes API requests waiting on their outcome. One subscription
// per process serves every waiter.
type Waiter struct {
	mu      sync.Mutex
	waiting map[uuid.UUID]chan struct{}
}

// NewWaiter makes a Waiter; Run feeds it.
func NewWaiter() *Waiter {
	return &Waiter{waiting: map[uuid.UUID]chan struct{}{}}
}

// Register returns a channel closed when id is announced, and a func to
// call when done waiting.
func (w *Waiter) Register(id uuid.UUID) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	w.waiting[id] = ch
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.waiting, id)
		w.mu.Unlock()
	}
}

func (w *Waiter) wake(id uuid.UUID) {
	w.mu.Lock()
	ch, ok := w.waiting[id]
	delete(w.waiting, id)
	w.mu.Unlock()
	if ok {
		close(ch)
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
			if id, err := uuid.Parse(msg.Payload); err == nil {
				w.wake(id)
			}
		}
		unwatch()
		_ = ps.Close()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
