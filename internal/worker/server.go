package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/handoff"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// PaymentsPollInterval is how often an idle payments server looks for a
// task: only decisions and executions that failed in the worker come
// there, for asynq's retries, which wait seconds anyway. A send's
// decision and an approval's execution are handed over directly
// (internal/handoff) and never wait on it.
const PaymentsPollInterval = 500 * time.Millisecond

// PaymentsForwardInterval is how often the payments server moves retries
// that are due back to its queue (asynq's default is 5 s): a decision's
// retry comes a second after it failed, while its caller still waits.
const PaymentsForwardInterval = 250 * time.Millisecond

// OtherPollInterval is the idle poll of the other queues (webhooks,
// housekeeping), where tens of milliseconds do not matter.
const OtherPollInterval = 50 * time.Millisecond

// Options configures the asynq servers of a worker.
type Options struct {
	Concurrency     int           // per server; 0 means asynq's default (CPUs)
	Queues          []string      // empty: every queue
	ShutdownTimeout time.Duration // time given to in-flight tasks
	Log             *slog.Logger
	// RetryDelay overrides the wait before a task's retry (tests shorten
	// it); nil uses RetryDelay.
	RetryDelay asynq.RetryDelayFunc
	// DelayedTaskCheckInterval is how often retries that are due move back
	// to their queue; 0 is asynq's default (5 s).
	DelayedTaskCheckInterval time.Duration
}

// RetryDelay is the wait before retrying a failed task: a webhook
// delivery follows the spec's schedule by its own attempt count
// (webhook.NextDelay); a payment's decision or an approval's execution
// (a caller is waiting) 1 s, doubling; other tasks asynq's exponential
// default.
func RetryDelay(n int, err error, t *asynq.Task) time.Duration {
	switch t.Type() {
	case tasks.TypeSendDecide, tasks.TypeApprovalExecute:
		return time.Second << min(n, 4)
	}
	if t.Type() == tasks.TypeWebhookDeliver {
		if d, ok := webhook.NextDelay(err); ok {
			return d
		}
		// Failed before making an attempt (the database did not
		// answer): try again soon.
		return 10 * time.Second
	}
	return asynq.DefaultRetryDelayFunc(n, err, t)
}

// Start runs the worker's servers over rdb: the sends' decisions handed
// over directly (internal/handoff); one for the payments queue polling
// every PaymentsPollInterval, so webhook backlogs can neither slow nor
// starve payments; one for confirmation sweeps (one at a time: a sweep
// slowed by its node never takes a decision's place); one for deposit
// scans (one at a time, beside the sweeps: a scan of many wallets never
// delays a confirmation); and one for the other queues. stop waits for
// in-flight tasks (up to ShutdownTimeout).
func Start(rdb *redis.Client, mux *asynq.ServeMux, o Options) (stop func(), err error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.RetryDelay == nil {
		o.RetryDelay = RetryDelay
	}
	serve := map[string]bool{}
	if len(o.Queues) == 0 {
		for q := range tasks.QueueWeights() {
			serve[q] = true
		}
	}
	for _, q := range o.Queues {
		serve[q] = true
	}
	weights := tasks.QueueWeights()
	var (
		payments = map[string]int{}
		sweeps   = map[string]int{}
		deposits = map[string]int{}
		others   = map[string]int{}
	)
	for q := range serve {
		w := max(weights[q], 1)
		switch q {
		case tasks.QueuePayments:
			payments[q] = w
		case tasks.QueueSweeps:
			sweeps[q] = w
		case tasks.QueueDeposits:
			deposits[q] = w
		default:
			others[q] = w
		}
	}
	var servers []*asynq.Server
	var waitDirect func()
	stopDirect := func() {}
	stop = func() {
		stopDirect()
		if waitDirect != nil {
			waitDirect()
		}
		for _, s := range servers {
			s.Shutdown()
		}
	}
	if serve[tasks.QueuePayments] {
		ctx, cancel := context.WithCancel(context.Background())
		stopDirect = cancel
		waitDirect = handoff.Run(ctx, rdb, mux, o.Concurrency, o.ShutdownTimeout, o.Log)
	}
	for _, g := range []struct {
		queues      map[string]int
		poll        time.Duration
		concurrency int
		forward     time.Duration
	}{{payments, PaymentsPollInterval, o.Concurrency, PaymentsForwardInterval}, {sweeps, OtherPollInterval, 1, 0}, {deposits, OtherPollInterval, 1, 0}, {others, OtherPollInterval, o.Concurrency, 0}} {
		if len(g.queues) == 0 {
			continue
		}
		forward := o.DelayedTaskCheckInterval
		if forward == 0 {
			forward = g.forward
		}
		s := asynq.NewServerFromRedisClient(rdb, asynq.Config{
			Concurrency:              g.concurrency,
			Queues:                   g.queues,
			ShutdownTimeout:          o.ShutdownTimeout,
			TaskCheckInterval:        g.poll,
			RetryDelayFunc:           o.RetryDelay,
			DelayedTaskCheckInterval: forward,
			Logger:                   tasks.Logger{L: o.Log},
			LogLevel:                 asynq.WarnLevel,
			ErrorHandler: asynq.ErrorHandlerFunc(func(ctx context.Context, t *asynq.Task, err error) {
				retried, _ := asynq.GetRetryCount(ctx)
				maxRetry, _ := asynq.GetMaxRetry(ctx)
				o.Log.WarnContext(ctx, "task failed", "type", t.Type(), "retried", retried, "max_retry", maxRetry, "err", err)
			}),
		})
		if err := s.Start(mux); err != nil {
			stop()
			return nil, fmt.Errorf("start asynq server for %v: %w", g.queues, err)
		}
		servers = append(servers, s)
	}
	return stop, nil
}
