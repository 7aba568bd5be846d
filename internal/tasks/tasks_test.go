package tasks_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/agentwallet/agentwallet/internal/tasks"
)

// Each task's payload round-trips; a malformed or id-less one is an error
// asynq never retries.
func TestPayloads(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	if p, err := tasks.ParseSendDecide(tasks.NewSendDecideTask(id)); err != nil || p.RequestID != id {
		t.Fatalf("send: %+v %v", p, err)
	}
	if p, err := tasks.ParseApprovalExecute(tasks.NewApprovalExecuteTask(id)); err != nil || p.ApprovalID != id {
		t.Fatalf("approval: %+v %v", p, err)
	}
	if p, err := tasks.ParseWebhookDeliver(tasks.NewWebhookDeliverTask(id)); err != nil || p.DeliveryID != id {
		t.Fatalf("delivery: %+v %v", p, err)
	}
	for _, payload := range []string{"", "{", `{}`, `{"delivery_id":"00000000-0000-0000-0000-000000000000"}`, `{"delivery_id":"x"}`} {
		_, err := tasks.ParseWebhookDeliver(asynq.NewTask(tasks.TypeWebhookDeliver, []byte(payload)))
		if !errors.Is(err, asynq.SkipRetry) {
			t.Errorf("%q: %v", payload, err)
		}
	}
}
