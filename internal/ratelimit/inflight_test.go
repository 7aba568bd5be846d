package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/ratelimit"
)

// Many requests of one key run at most Max at a time, and all of them run;
// another key has its own slots; a waiter gives up when its context ends.
func TestInFlight_BoundsEachKey(t *testing.T) {
	t.Parallel()
	f := &ratelimit.InFlight{Max: 3}
	var running, most, done atomic.Int32
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			release, err := f.Acquire(context.Background(), "k1")
			if err != nil {
				t.Error(err)
				return
			}
			defer release()
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			running.Add(-1)
			done.Add(1)
		})
	}
	wg.Wait()
	if most.Load() > 3 || done.Load() != 30 {
		t.Fatalf("at most %d ran at once (want ≤ 3), %d ran (want 30)", most.Load(), done.Load())
	}

	var held []func()
	for range 3 {
		release, err := f.Acquire(context.Background(), "k1")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}
	other, err := f.Acquire(context.Background(), "k2")
	if err != nil {
		t.Fatalf("another key: %v", err)
	}
	other()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := f.Acquire(ctx, "k1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a fourth of k1 while three run: %v, want the context's deadline", err)
	}
	held[0]()
	held[0]() // twice is once: one slot is free, not two
	release, err := f.Acquire(context.Background(), "k1")
	if err != nil {
		t.Fatalf("after one released: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := f.Acquire(ctx, "k1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a release called twice freed two slots: %v", err)
	}
	release()
	held[1]()
	held[2]()
}
