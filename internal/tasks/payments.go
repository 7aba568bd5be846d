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
	return parse(t, func(p *SendDecide) uuid.UUID { return p.RequestID })
}

// parse decodes a payload that names one id; a malformed one (or a nil
// id) is never retried.
func parse[T any](t *asynq.Task, id func(*T) uuid.UUID) (T, error) {
	var p T
	if err := json.Unmarshal(t.Payload(), &p); err != nil || id(&p) == uuid.Nil {
		return p, fmt.Errorf("bad %s payload: %w", t.Type(), asynq.SkipRetry)
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
		asynq.Queue(QueueSweeps), asynq.MaxRetry(0), asynq.Timeout(SweepBudget+15*time.Second))
}

// IsDuplicate reports an enqueue refused because the same periodic task is
// already waiting: nothing to do.
func IsDuplicate(err error) bool {
	return errors.Is(err, asynq.ErrDuplicateTask) || errors.Is(err, asynq.ErrTaskIDConflict)
}

// TypeApprovalExecute carries out an approved approval
// (payment.Engine.Execute).
const TypeApprovalExecute = "approval:execute"

// ApprovalExecute is the payload of TypeApprovalExecute.
type ApprovalExecute struct {
	ApprovalID uuid.UUID `json:"approval_id"`
}

// NewApprovalExecuteTask makes the execution task of an approval. No fixed
// TaskID: an approval returned to pending may be approved again, and a run
// finding nothing to execute does nothing.
func NewApprovalExecuteTask(approvalID uuid.UUID) *asynq.Task {
	payload, _ := json.Marshal(ApprovalExecute{ApprovalID: approvalID})
	return asynq.NewTask(TypeApprovalExecute, payload,
		asynq.Queue(QueuePayments), asynq.MaxRetry(3), asynq.Timeout(30*time.Second))
}

// ParseApprovalExecute decodes a TypeApprovalExecute payload.
func ParseApprovalExecute(t *asynq.Task) (ApprovalExecute, error) {
	return parse(t, func(p *ApprovalExecute) uuid.UUID { return p.ApprovalID })
}

// TypeApprovalsExpire expires approvals pending past their lifetime and
// returns abandoned approves to pending (approval.Sweep).
const TypeApprovalsExpire = "approvals:expire"

// ExpireEvery is the scheduler's period for TypeApprovalsExpire.
const ExpireEvery = time.Minute

// NewApprovalsExpireTask makes an expiry run; at most one is queued per
// period (see NewConfirmSweepTask).
func NewApprovalsExpireTask() *asynq.Task {
	return asynq.NewTask(TypeApprovalsExpire, nil, asynq.Unique(ExpireEvery),
		asynq.Queue(QueueDefault), asynq.MaxRetry(0), asynq.Timeout(50*time.Second))
}
