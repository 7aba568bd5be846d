package tasks

import (
	"time"

	"github.com/hibiken/asynq"
)

// TypeDepositsScan looks for money that came into the wallets
// (deposit.Watcher.Scan).
const TypeDepositsScan = "deposits:scan"

// DepositsEvery is the scheduler's period for TypeDepositsScan: a deposit
// is seen within about this long of its confirmation.
const DepositsEvery = 2 * time.Second

// NewDepositsScanTask makes a scan, at most one queued per period (as a
// sweep); overlapping scans are harmless (each account is examined under
// its row lock).
func NewDepositsScanTask() *asynq.Task {
	return asynq.NewTask(TypeDepositsScan, nil, asynq.Unique(DepositsEvery),
		asynq.Queue(QueueSweeps), asynq.MaxRetry(0), asynq.Timeout(SweepBudget+15*time.Second))
}
