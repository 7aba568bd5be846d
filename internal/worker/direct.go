package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/tasks"
)

// directRetries are the waits before trying a failed hand-off again in
// the worker (a database restarting), within the send's deadline; after
// them it goes to the payments queue.
var directRetries = []time.Duration{200 * time.Millisecond, time.Second}

// runDirect pops hand-offs (tasks.DirectKey) while a slot of concurrency
// is free and runs each through mux, until ctx ends; it then waits for
// the tasks it started, up to grace. One connection blocks on the list;
// a Redis outage is retried every second.
func runDirect(ctx context.Context, rdb *redis.Client, mux *asynq.ServeMux, concurrency int, grace time.Duration, log *slog.Logger) (wait func()) {
	var wg sync.WaitGroup
	if concurrency <= 0 {
		concurrency = runtime.NumCPU() // asynq's default
	}
	slots := make(chan struct{}, concurrency)
	queue := asynq.NewClientFromRedisClient(rdb)
	// process runs t as asynq would: a panic is the task's error, not the
	// worker's end.
	process := func(ctx context.Context, t *asynq.Task) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return mux.ProcessTask(ctx, t)
	}
	done := func(err error) bool { return err == nil || errors.Is(err, asynq.SkipRetry) }
	run := func(t *asynq.Task) {
		defer func() { <-slots }()
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err := process(tctx, t)
		for _, d := range directRetries {
			if done(err) {
				return
			}
			log.WarnContext(tctx, "task failed; trying again", "type", t.Type(), "err", err)
			select {
			case <-time.After(d):
			case <-tctx.Done():
			}
			err = process(tctx, t)
		}
		if done(err) {
			return
		}
		log.WarnContext(tctx, "task failed; queued for retries", "type", t.Type(), "err", err)
		if _, qerr := queue.EnqueueContext(tctx, tasks.Retry(t)); qerr != nil && !tasks.IsDuplicate(qerr) {
			log.ErrorContext(tctx, "task failed and could not be queued", "type", t.Type(), "err", qerr)
		}
	}
	wg.Go(func() {
		for {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			// Not ctx: a pop under way when the worker stops still
			// returns its entry, which then runs.
			res, err := rdb.BRPop(context.WithoutCancel(ctx), time.Second, tasks.DirectKey).Result()
			if err != nil {
				<-slots
				if ctx.Err() != nil {
					return
				}
				if !errors.Is(err, redis.Nil) {
					log.WarnContext(ctx, "direct hand-offs: pop failed", "err", err)
					select {
					case <-time.After(time.Second):
					case <-ctx.Done():
						return
					}
				}
				continue
			}
			t, err := tasks.ParseHandoff(res[1])
			if err != nil {
				<-slots
				log.ErrorContext(ctx, "direct hand-offs: dropped", "err", err)
				continue
			}
			wg.Go(func() { run(t) })
		}
	})
	return func() {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(grace):
		}
	}
}
