package tasks

import (
	"time"

	"github.com/hibiken/asynq"
)

// TypeAuditSeal seals the audit entries committed since the last seal onto
// their accounts' chains (audit.SealAll). Readers of the log seal first
// anyway; this keeps the chain's tail at most AuditSealEvery behind when
// nobody reads.
const TypeAuditSeal = "audit:seal"

// AuditSealEvery is the scheduler's period for TypeAuditSeal.
const AuditSealEvery = 2 * time.Second

// NewAuditSealTask makes a seal; like the sweeps, at most one waits per
// period.
func NewAuditSealTask() *asynq.Task {
	return asynq.NewTask(TypeAuditSeal, nil, asynq.Unique(AuditSealEvery),
		asynq.Queue(QueueSweeps), asynq.MaxRetry(0), asynq.Timeout(SweepBudget+15*time.Second))
}
