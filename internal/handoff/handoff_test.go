package handoff_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/agentwallet/agentwallet/internal/handoff"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/waitfor"
	"github.com/agentwallet/agentwallet/internal/worker"
)

// Sends handed over on the direct list each run once, on one of several
// workers; the list is left empty.
func TestHandoff_RunsEachOnce(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	var mu sync.Mutex
	seen := map[uuid.UUID]int{}
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeSendDecide, func(_ context.Context, task *asynq.Task) error {
		p, err := tasks.ParseSendDecide(task)
		if err != nil {
			return err
		}
		mu.Lock()
		seen[p.RequestID]++
		mu.Unlock()
		return nil
	})
	for range 3 {
		stop, err := worker.Start(rdb, mux, worker.Options{Concurrency: 4, Queues: []string{tasks.QueuePayments}, ShutdownTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	const n = 300
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := handoff.Hand(t.Context(), rdb, tasks.NewSendDecideTask(uuid.New())); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	waitfor.True(t, "every hand-off to run", func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == n })
	time.Sleep(200 * time.Millisecond) // room for a duplicate run to show
	mu.Lock()
	defer mu.Unlock()
	for id, runs := range seen {
		if runs != 1 {
			t.Errorf("request %s decided %d times", id, runs)
		}
	}
	if l := rdb.LLen(t.Context(), handoff.Key).Val(); l != 0 {
		t.Errorf("%d hand-offs left on the list", l)
	}
}

// A decision that fails in the worker goes at once to the payments
// queue, where asynq runs its retries: the hand-off never waits or retries
// on its own.
func TestHandoff_FailureGoesToTheQueueAtOnce(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	var direct, queued atomic.Int32
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeSendDecide, func(ctx context.Context, _ *asynq.Task) error {
		if _, fromQueue := asynq.GetTaskID(ctx); fromQueue {
			queued.Add(1)
			return nil
		}
		direct.Add(1)
		return errors.New("database restarting")
	})
	stop, err := worker.Start(rdb, mux, worker.Options{Concurrency: 2, Queues: []string{tasks.QueuePayments}, ShutdownTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if err := handoff.Hand(t.Context(), rdb, tasks.NewSendDecideTask(uuid.New())); err != nil {
		t.Fatal(err)
	}
	waitfor.True(t, "the queued retry", func() bool { return queued.Load() == 1 })
	if got := direct.Load(); got != 1 {
		t.Errorf("tried %d times in the worker, want 1 (the retries are the queue's)", got)
	}
}

// A malformed entry is dropped; the ones after it still run.
func TestHandoff_MalformedEntryIsDropped(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	var ran atomic.Int32
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeSendDecide, func(context.Context, *asynq.Task) error { ran.Add(1); return nil })
	rdb.LPush(t.Context(), handoff.Key, "not json", `{"type":""}`)
	if err := handoff.Hand(t.Context(), rdb, tasks.NewSendDecideTask(uuid.New())); err != nil {
		t.Fatal(err)
	}
	stop, err := worker.Start(rdb, mux, worker.Options{Concurrency: 1, Queues: []string{tasks.QueuePayments}, ShutdownTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	waitfor.True(t, "the valid hand-off", func() bool { return ran.Load() == 1 })
}

// Stopping a worker waits for the decisions it started.
func TestHandoff_StopWaitsForStartedTasks(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	started, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeSendDecide, func(context.Context, *asynq.Task) error {
		close(started)
		<-release
		finished.Store(true)
		return nil
	})
	stop, err := worker.Start(rdb, mux, worker.Options{Concurrency: 1, Queues: []string{tasks.QueuePayments}, ShutdownTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := handoff.Hand(t.Context(), rdb, tasks.NewSendDecideTask(uuid.New())); err != nil {
		t.Fatal(err)
	}
	<-started
	go func() { time.Sleep(100 * time.Millisecond); close(release) }()
	stop()
	if !finished.Load() {
		t.Fatal("stop returned before the decision finished")
	}
}

// A decision that panics is an error like any other, as under asynq: the
// worker lives on and tries it again.
func TestHandoff_PanicIsAnError(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	var runs atomic.Int32
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeSendDecide, func(context.Context, *asynq.Task) error {
		if runs.Add(1) == 1 {
			panic("decision bug")
		}
		return nil
	})
	stop, err := worker.Start(rdb, mux, worker.Options{Concurrency: 1, Queues: []string{tasks.QueuePayments}, ShutdownTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	for range 2 {
		if err := handoff.Hand(t.Context(), rdb, tasks.NewSendDecideTask(uuid.New())); err != nil {
			t.Fatal(err)
		}
	}
	// The first panics then succeeds on its retry; the second runs once.
	waitfor.True(t, "both decisions to run", func() bool { return runs.Load() == 3 })
}
