package tasks

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeWebhookDeliver makes the next attempt of one delivery
// (webhook.Deliverer.Deliver).
const TypeWebhookDeliver = "webhook:deliver"

// WebhookDeliver is the payload of TypeWebhookDeliver.
type WebhookDeliver struct {
	DeliveryID uuid.UUID `json:"delivery_id"`
}

// NewWebhookDeliverTask makes a delivery's task. Its TaskID is the delivery
// id, so it is queued at most once at a time. The delivery's own attempt
// count decides when to stop (6 attempts; the handler then skips further
// retries) and how long to wait (the worker's RetryDelayFunc); asynq's
// retry budget is only a backstop for failures before an attempt.
func NewWebhookDeliverTask(deliveryID uuid.UUID) *asynq.Task {
	payload, _ := json.Marshal(WebhookDeliver{DeliveryID: deliveryID})
	return asynq.NewTask(TypeWebhookDeliver, payload,
		asynq.TaskID(deliveryID.String()), asynq.Queue(QueueWebhooks),
		asynq.MaxRetry(25), asynq.Timeout(30*time.Second))
}

// ParseWebhookDeliver decodes a TypeWebhookDeliver payload.
func ParseWebhookDeliver(t *asynq.Task) (WebhookDeliver, error) {
	return parse(t, func(p *WebhookDeliver) uuid.UUID { return p.DeliveryID })
}

// TypeWebhooksRedrive enqueues again deliveries whose task was lost.
const TypeWebhooksRedrive = "webhooks:redrive"

// RedriveEvery is the scheduler's period for TypeWebhooksRedrive.
const RedriveEvery = time.Minute

// NewWebhooksRedriveTask makes a re-drive run; at most one is queued per
// period.
func NewWebhooksRedriveTask() *asynq.Task {
	return asynq.NewTask(TypeWebhooksRedrive, nil, asynq.Unique(RedriveEvery),
		asynq.Queue(QueueDefault), asynq.MaxRetry(0), asynq.Timeout(50*time.Second))
}
