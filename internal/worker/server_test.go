package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/worker"
)

// A deposit scan that runs long (many wallets, a catch-up, a slow node)
// does not hold up the confirmation sweep enqueued after it: each has a
// server of its own, so payments that landed are still confirmed every
// period.
func TestStart_LongDepositScanDoesNotDelayConfirmationSweep(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	scanning, release, swept := make(chan struct{}), make(chan struct{}), make(chan struct{})
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeDepositsScan, func(ctx context.Context, _ *asynq.Task) error {
		close(scanning)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	})
	mux.HandleFunc(tasks.TypeConfirmSweep, func(context.Context, *asynq.Task) error {
		close(swept)
		return nil
	})
	stop, err := worker.Start(rdb, mux, worker.Options{Concurrency: 2, ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	defer close(release)
	client := asynq.NewClientFromRedisClient(rdb)
	defer client.Close()
	if _, err := client.Enqueue(tasks.NewDepositsScanTask()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-scanning:
	case <-time.After(10 * time.Second):
		t.Fatal("the deposit scan did not start")
	}
	if _, err := client.Enqueue(tasks.NewConfirmSweepTask()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-swept:
	case <-time.After(5 * time.Second):
		t.Fatal("the confirmation sweep waited for the deposit scan")
	}
}
