// Command scheduler enqueues the periodic tasks (asynq Scheduler). It does
// no work itself; workers run what it enqueues.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/tasks"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "scheduler:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv config.Getenv) error {
	cfg, err := config.LoadScheduler(getenv)
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	redis.SetLogger(tasks.Logger{L: log}) // go-redis logs in JSON too
	rdb, _, err := cfg.Redis.Open(0)
	if err != nil {
		return err
	}
	defer rdb.Close() // after Shutdown, which leaves a given client open
	s := asynq.NewSchedulerFromRedisClient(rdb, &asynq.SchedulerOpts{
		Logger: tasks.Logger{L: log},
		// Entries show up in asynqmon within this period.
		HeartbeatInterval: 2 * time.Second,
		PostEnqueueFunc: func(info *asynq.TaskInfo, err error) {
			if err != nil && !tasks.IsDuplicate(err) {
				log.Warn("enqueue periodic task", "err", err)
			}
		},
	})
	for _, e := range []struct {
		every time.Duration
		task  *asynq.Task
	}{
		{tasks.HeartbeatEvery, tasks.NewHeartbeatTask()},
		{tasks.ConfirmEvery, tasks.NewConfirmSweepTask()},
		{tasks.DepositsEvery, tasks.NewDepositsScanTask()},
		{tasks.SnapshotsEvery, tasks.NewBalancesSnapshotTask()},
		{tasks.ExpireEvery, tasks.NewApprovalsExpireTask()},
		{tasks.RedriveEvery, tasks.NewWebhooksRedriveTask()},
		{tasks.AuditSealEvery, tasks.NewAuditSealTask()},
	} {
		if _, err := s.Register(fmt.Sprintf("@every %s", e.every), e.task); err != nil {
			return err
		}
	}
	if err := s.Start(); err != nil {
		return err
	}
	log.Info("scheduler started")
	<-ctx.Done()
	log.Info("scheduler shutting down")
	s.Shutdown()
	return nil
}
