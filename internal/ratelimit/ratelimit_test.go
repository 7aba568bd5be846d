package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/redistest"
)

// Concurrent requests of one key: exactly the limit pass per window; the
// next window starts afresh; keys and buckets count apart.
func TestFixedWindow(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	now := time.Date(2026, 11, 22, 10, 0, 30, 0, time.UTC)
	l := &ratelimit.Limiter{Redis: rdb, Limits: ratelimit.Limits{Read: 5, Write: 3, Send: 2}, Now: func() time.Time { return now }}
	ctx := context.Background()
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			r, err := l.Allow(ctx, "k1", ratelimit.Send)
			if err != nil {
				t.Error(err)
			}
			if r.Allowed {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if allowed.Load() != 2 {
		t.Fatalf("%d allowed, want 2", allowed.Load())
	}
	r, _ := l.Allow(ctx, "k1", ratelimit.Send)
	if r.Allowed || r.Remaining != 0 || r.Limit != 2 || !r.Reset.Equal(time.Date(2026, 11, 22, 10, 1, 0, 0, time.UTC)) || r.RetryAfter(now) != 30*time.Second {
		t.Fatalf("over the limit: %+v", r)
	}
	if r, _ := l.Allow(ctx, "k2", ratelimit.Send); !r.Allowed || r.Remaining != 1 {
		t.Fatalf("other key: %+v", r)
	}
	if r, _ := l.Allow(ctx, "k1", ratelimit.Read); !r.Allowed || r.Remaining != 4 || r.Limit != 5 {
		t.Fatalf("other bucket: %+v", r)
	}
	now = now.Add(30 * time.Second) // the next window
	if r, _ := l.Allow(ctx, "k1", ratelimit.Send); !r.Allowed || r.Remaining != 1 {
		t.Fatalf("next window: %+v", r)
	}
	ttl, err := rdb.PTTL(ctx, "agentwallet:ratelimit:send:k1:1795341660").Result()
	if err != nil || ttl <= 0 || ttl > 70*time.Second {
		t.Fatalf("window key ttl %v %v", ttl, err)
	}
}

// n requests counted at once (a batch's messages) fit only whole: the
// window holds them all, and the next count sees them.
func TestAllowN(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	now := time.Date(2026, 11, 22, 10, 0, 30, 0, time.UTC)
	l := &ratelimit.Limiter{Redis: rdb, Limits: ratelimit.Limits{Read: 5}, Now: func() time.Time { return now }}
	ctx := context.Background()
	if r, err := l.AllowN(ctx, "k", ratelimit.Read, 3); err != nil || !r.Allowed || r.Remaining != 2 {
		t.Fatalf("3 of 5: %+v %v", r, err)
	}
	if r, _ := l.AllowN(ctx, "k", ratelimit.Read, 3); r.Allowed || r.Remaining != 0 {
		t.Fatalf("3 more: %+v", r)
	}
	if r, _ := l.Allow(ctx, "k", ratelimit.Read); r.Allowed {
		t.Fatalf("one more after the refused batch: %+v", r)
	}
	ttl, err := rdb.PTTL(ctx, "agentwallet:ratelimit:read:k:1795341600").Result()
	if err != nil || ttl <= 0 || ttl > 70*time.Second {
		t.Fatalf("window key ttl %v %v", ttl, err)
	}
}
