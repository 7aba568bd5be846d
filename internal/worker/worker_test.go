package worker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/worker"
)

// A heartbeat enqueued the way the scheduler does is run by a real asynq
// server with the worker's mux, and recorded.
func TestHeartbeatThroughQueue(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues: tasks.QueueWeights(), TaskCheckInterval: 20 * time.Millisecond, LogLevel: asynq.ErrorLevel,
	})
	if err := srv.Start(worker.NewMux(worker.Deps{Redis: rdb, Now: func() time.Time { return now }})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()

	client := asynq.NewClientFromRedisClient(rdb)
	if _, err := client.Enqueue(tasks.NewHeartbeatTask()); err != nil {
		t.Fatal(err)
	}
	// A second one within the period is a duplicate, not a second task.
	if _, err := client.Enqueue(tasks.NewHeartbeatTask()); !errors.Is(err, asynq.ErrDuplicateTask) {
		t.Fatalf("second heartbeat: %v, want ErrDuplicateTask", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		v, err := rdb.Get(context.Background(), tasks.HeartbeatKey).Int64()
		if err == nil {
			if v != now.Unix() {
				t.Fatalf("heartbeat %d, want %d", v, now.Unix())
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("heartbeat was not recorded")
}
