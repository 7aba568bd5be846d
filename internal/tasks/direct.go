package tasks

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// DirectKey is the Redis list through which the API hands a send's
// decision, or an approval's execution, to a worker at once. asynq has no
// blocking pop: its servers poll, and the poll a send could wait for
// (2 ms) cost an idle worker about 9% of a core and Redis 5%. A worker
// blocks on this list instead (BRPOP), so it wakes the moment a task
// arrives and costs nothing while idle. A task that fails goes to the
// payments queue, where asynq retries it (see worker.Start). A hand-off lost with Redis or with a
// killed worker is what a lost asynq task was: the request stays queued
// and the API abandons it at its deadline (an approval: nothing signed,
// the approve's wait returns it to pending).
const DirectKey = "agentwallet:payments:direct"

// directCap bounds the list: entries nobody pops (no worker running) are
// past their deadline long before it fills, and harmless when popped.
const directCap = 100_000

// Handoff is one entry of DirectKey: an asynq task's type and payload.
type Handoff struct {
	Type    string `json:"type"`
	Payload []byte `json:"payload"`
}

// Hand pushes t onto DirectKey for the next free worker, in one round trip.
func Hand(ctx context.Context, rdb *redis.Client, t *asynq.Task) error {
	raw, err := json.Marshal(Handoff{Type: t.Type(), Payload: t.Payload()})
	if err != nil {
		return err
	}
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, DirectKey, raw)
		p.LTrim(ctx, DirectKey, 0, directCap-1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("hand %s to a worker: %w", t.Type(), err)
	}
	return nil
}

// ParseHandoff decodes an entry of DirectKey.
func ParseHandoff(raw string) (*asynq.Task, error) {
	var h Handoff
	if err := json.Unmarshal([]byte(raw), &h); err != nil || h.Type == "" {
		return nil, fmt.Errorf("malformed hand-off %.80q", raw)
	}
	return asynq.NewTask(h.Type, h.Payload), nil
}

// Retry is the task a failed hand-off becomes on the payments queue, with
// the retries and timeout of a queued decision.
func Retry(t *asynq.Task) *asynq.Task {
	switch t.Type() {
	case TypeSendDecide:
		if p, err := ParseSendDecide(t); err == nil {
			return NewSendDecideTask(p.RequestID)
		}
	}
	return asynq.NewTask(t.Type(), t.Payload(), asynq.Queue(QueuePayments), asynq.MaxRetry(3))
}
