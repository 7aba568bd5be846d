// Package handoff gives a payment's decision, or an approval's execution,
// to the next free worker at once. asynq has no blocking pop: its servers
// poll, and the poll a send could wait for (2 ms) cost an idle worker about
// 9% of a core and Redis 5%. Here the API pushes the task on a Redis list
// and a worker blocks on it (BRPOP), so it wakes the moment a task arrives
// and costs nothing while idle. A task that fails goes at once to asynq's
// payments queue, which carries its retries (the worker's RetryDelay):
// nothing here waits or retries on its own.
//
// A hand-off lost with Redis or with a killed worker is what a lost asynq
// task was: the request stays queued and the API abandons it at its
// deadline (an approval: nothing signed, the approve's wait returns it to
// pending).
package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/tasks"
)

// Key is the Redis list of hand-offs.
const Key = "agentwallet:payments:direct"

// capacity bounds the list: entries nobody pops (no worker running) are
// past their deadline long before it fills, and harmless when popped.
const capacity = 100_000

// entry is one element of Key: an asynq task's type and payload.
type entry struct {
	Type    string `json:"type"`
	Payload []byte `json:"payload"`
}

// Hand pushes t onto Key for the next free worker, in one round trip.
func Hand(ctx context.Context, rdb *redis.Client, t *asynq.Task) error {
	raw, err := json.Marshal(entry{Type: t.Type(), Payload: t.Payload()})
	if err != nil {
		return err
	}
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, Key, raw)
		p.LTrim(ctx, Key, 0, capacity-1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("hand %s to a worker: %w", t.Type(), err)
	}
	return nil
}

// parse decodes an element of Key.
func parse(raw string) (*asynq.Task, error) {
	var e entry
	if err := json.Unmarshal([]byte(raw), &e); err != nil || e.Type == "" {
		return nil, fmt.Errorf("malformed hand-off %.80q", raw)
	}
	return asynq.NewTask(e.Type, e.Payload), nil
}

// retry is the task a failed hand-off becomes on the payments queue, with
// the retries and timeout of a queued decision.
func retry(t *asynq.Task) *asynq.Task {
	switch t.Type() {
	case tasks.TypeSendDecide:
		if p, err := tasks.ParseSendDecide(t); err == nil {
			return tasks.NewSendDecideTask(p.RequestID)
		}
	}
	return asynq.NewTask(t.Type(), t.Payload(), asynq.Queue(tasks.QueuePayments), asynq.MaxRetry(3))
}

// Redis is the API's side of the hand-off (payment.Handoff).
type Redis struct{ Client *redis.Client }

// Decide hands a payment request's decision to a worker.
func (h Redis) Decide(ctx context.Context, requestID uuid.UUID) error {
	return Hand(ctx, h.Client, tasks.NewSendDecideTask(requestID))
}

// Execute hands an approved approval's execution to a worker.
func (h Redis) Execute(ctx context.Context, approvalID uuid.UUID) error {
	return Hand(ctx, h.Client, tasks.NewApprovalExecuteTask(approvalID))
}

// Run is the worker's side: it pops hand-offs while a slot of concurrency
// is free and runs each through mux, until ctx ends; it then waits for the
// tasks it started, up to grace. A task that fails goes to the payments
// queue at once. One connection blocks on the list; a Redis outage is
// retried every second.
func Run(ctx context.Context, rdb *redis.Client, mux *asynq.ServeMux, concurrency int, grace time.Duration, log *slog.Logger) (wait func()) {
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
	run := func(t *asynq.Task) {
		defer func() { <-slots }()
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err := process(tctx, t)
		if err == nil || errors.Is(err, asynq.SkipRetry) {
			return
		}
		log.WarnContext(tctx, "task failed; queued for retries", "type", t.Type(), "err", err)
		if _, qerr := queue.EnqueueContext(tctx, retry(t)); qerr != nil && !tasks.IsDuplicate(qerr) {
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
			res, err := rdb.BRPop(context.WithoutCancel(ctx), time.Second, Key).Result()
			if err != nil {
				<-slots
				if ctx.Err() != nil {
					return
				}
				if !errors.Is(err, redis.Nil) {
					log.WarnContext(ctx, "hand-offs: pop failed", "err", err)
					select {
					case <-time.After(time.Second):
					case <-ctx.Done():
						return
					}
				}
				continue
			}
			t, err := parse(res[1])
			if err != nil {
				<-slots
				log.ErrorContext(ctx, "hand-offs: dropped", "err", err)
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
