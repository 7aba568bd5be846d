// Package tasks names the asynq tasks the processes exchange (`domain:verb`),
// their payloads and queues, so the api, worker and scheduler agree.
package tasks

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
)

// Queues and their weights: payments first, then webhooks, then the rest.
// Confirmation sweeps have a queue (and a server) of their own, so a slow
// sweep never holds up a decision; so do the deposit scans, whose length
// grows with the wallets watched (and with a catch-up after many are
// added at once), so a long scan never holds up a confirmation.
const (
	QueuePayments = "payments"
	QueueSweeps   = "sweeps"
	QueueDeposits = "deposits"
	QueueWebhooks = "webhooks"
	QueueDefault  = "default"
)

// QueueWeights is what a worker serves when WORKER_QUEUES is empty.
func QueueWeights() map[string]int {
	return map[string]int{QueuePayments: 6, QueueSweeps: 1, QueueDeposits: 1, QueueWebhooks: 3, QueueDefault: 1}
}

// TypeHeartbeat proves the scheduler → Redis → worker path works: the
// scheduler enqueues it every HeartbeatEvery and the worker records when it
// last ran (see HeartbeatKey), which /readyz reports.
const TypeHeartbeat = "system:heartbeat"

// HeartbeatEvery is the scheduler's period for TypeHeartbeat.
const HeartbeatEvery = 30 * time.Second

// HeartbeatKey is the Redis key holding the Unix time a worker last ran a
// heartbeat.
const HeartbeatKey = "agentwallet:worker:heartbeat"

// WorkerKeysKey is the Redis set of master key ids the running workers
// hold, refreshed with each heartbeat. The API refuses to create wallets
// sealed to a key no worker holds: their funds could never move.
const WorkerKeysKey = "agentwallet:worker:key_ids"

// SignersKey is a Redis hash of the workers' signers' health, by backend:
// a signer.Health as JSON, written with the heartbeat.
const SignersKey = "agentwallet:worker:signers"

// NewHeartbeatTask makes a heartbeat. Uniqueness keeps at most one queued
// per period: with no worker running they do not pile up (a second enqueue
// is ErrDuplicateTask, see IsDuplicate). Not a fixed TaskID: a failed task
// is archived and would hold its id, stopping every later heartbeat.
func NewHeartbeatTask() *asynq.Task {
	return asynq.NewTask(TypeHeartbeat, nil, asynq.Unique(HeartbeatEvery),
		asynq.Queue(QueueDefault), asynq.MaxRetry(0), asynq.Timeout(10*time.Second))
}

// Logger adapts slog to asynq's logger interface.
type Logger struct{ L *slog.Logger }

func (l Logger) Debug(args ...any) { l.L.Debug(fmt.Sprint(args...)) }
func (l Logger) Info(args ...any)  { l.L.Info(fmt.Sprint(args...)) }
func (l Logger) Warn(args ...any)  { l.L.Warn(fmt.Sprint(args...)) }
func (l Logger) Error(args ...any) { l.L.Error(fmt.Sprint(args...)) }

// Fatal logs at error level; asynq calls it before it exits the process.
func (l Logger) Fatal(args ...any) { l.L.Error(fmt.Sprint(args...)) }

// Printf makes Logger go-redis's logger too (redis.SetLogger): its lines
// (failed dials, lost subscriptions) are warnings, in JSON like the rest.
func (l Logger) Printf(ctx context.Context, format string, v ...any) {
	l.L.WarnContext(ctx, fmt.Sprintf(format, v...), "component", "redis")
}
