package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeSendDecide decides one send request (payment.Engine.Decide).
const TypeSendDecide = "send:decide"

// TypeConfirmSweep settles pending transactions (payment.Engine.Sweep).
const TypeConfirmSweep = "payments:confirm"

// ConfirmEvery is the scheduler's period for TypeConfirmSweep.
const ConfirmEvery = 2 * time.Second

// SendDecide is the payload of TypeSendDecide.
type SendDecide struct {
	RequestID uuid.UUID `json:"request_id"`
}

// NewSendDecideTask makes the decision task of a request. Its TaskID is
// the request id, so it is enqueued at most once. A late or repeated run
// is harmless: the request row's state and deadline decide.
func NewSendDecideTask(requestID uuid.UUID) *asynq.Task {
	payload, _ := json.Marshal(SendDecide{RequestID: requestID})
	return asynq.NewTask(TypeSendDecide, payload,
		asynq.TaskID(requestID.String()), asynq.Queue(QueuePayments),
		asynq.MaxRetry(3), asynq.Timeout(30*time.Second))
}

// ParseSendDecide decodes a TypeSendDecide payload.
func ParseSendDecide(t *asynq.Task) (SendDecide, error) {
	var p SendDecide
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.RequestID == uuid.Nil {
		return p, fmt.Errorf("bad %s payload: %w", TypeSendDecide, asynq.SkipRetry)
	}
	return p, nil
}

// SweepBudget bounds one sweep's work; its task times out later.
const SweepBudget = 45 * time.Second

// NewConfirmSweepTask makes a sweep. Uniqueness (not a fixed TaskID, which
// an archived failure would hold forever) keeps at most one queued per
// period; a duplicate is ErrDuplicateTask, which callers treat as success.
func NewConfirmSweepTask() *asynq.Task {
	return asynq.NewTask(TypeConfirmSweep, nil, asynq.Unique(ConfirmEvery),
		asynq.Queue(QueuePayments), asynq.MaxRetry(0), asynq.Timeout(SweepBudget+15*time.Second))
}

// IsDuplicate reports an enqueue refused because the same periodic task is
// already waiting: nothing to do.
func IsDuplicate(err error) bool {
	return errors.Is(err, asynq.ErrDuplicateTask) || errors.Is(err, asynq.ErrTaskIDConflict)
}
