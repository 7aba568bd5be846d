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
		asynq.Queue(QueueDeposits), asynq.MaxRetry(0), asynq.Timeout(SweepBudget+15*time.Second))
}

// TypeBalancesSnapshot checks the balances of the wallets due a snapshot
// against their ledgers (deposit.Watcher.Snapshot).
const TypeBalancesSnapshot = "balances:snapshot"

// SnapshotsEvery is the scheduler's period for TypeBalancesSnapshot: each
// run checks the wallets whose last snapshot is a day old, a bounded
// number of them, so a day's snapshots spread over the runs.
const SnapshotsEvery = 5 * time.Minute

// NewBalancesSnapshotTask makes a snapshot run, at most one queued per
// period; overlapping runs are harmless (each account is examined under
// its row lock, and a wallet snapshotted meanwhile is no longer due).
func NewBalancesSnapshotTask() *asynq.Task {
	return asynq.NewTask(TypeBalancesSnapshot, nil, asynq.Unique(SnapshotsEvery),
		asynq.Queue(QueueDeposits), asynq.MaxRetry(0), asynq.Timeout(SnapshotsEvery))
}
