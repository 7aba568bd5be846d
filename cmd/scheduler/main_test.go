package main

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/waitfor"
)

// The scheduler registers its periodic tasks and stops when its context ends.
func TestSchedulerRegistersAndStops(t *testing.T) {
	t.Parallel()
	rdb, redisURL := redistest.New(t)
	registersAndStops(t, map[string]string{"REDIS_URL": redisURL, "LOG_LEVEL": "error"}, rdb)
}

// registersAndStops runs the scheduler with env, finds its five entries
// through rdb, and stops it.
func registersAndStops(t *testing.T, env map[string]string, rdb *redis.Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, func(k string) string { return env[k] }) }()

	insp := asynq.NewInspectorFromRedisClient(rdb)
	deadline := time.Now().Add(15 * time.Second)
	for {
		entries, err := insp.SchedulerEntries()
		if err == nil && len(entries) == 7 {
			got := map[string]string{}
			for _, e := range entries {
				got[e.Task.Type()] = e.Spec
			}
			if got[tasks.TypeHeartbeat] != "@every 30s" || got[tasks.TypeConfirmSweep] != "@every 2s" || got[tasks.TypeApprovalsExpire] != "@every 1m0s" || got[tasks.TypeWebhooksRedrive] != "@every 1m0s" ||
				got[tasks.TypeAuditSeal] != "@every 2s" || got[tasks.TypeDepositsScan] != "@every 2s" ||
				got[tasks.TypeBalancesSnapshot] != "@every 5m0s" {
				t.Fatalf("entries %v", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scheduler entries: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	waitfor.Returned(t, "the scheduler to stop", done)
}
