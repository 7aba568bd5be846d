// Package worker holds the asynq handlers: each decodes its payload, calls
// the domain, and decides whether a failure is retried or skipped.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/tasks"
)

// Deps is what the handlers use.
type Deps struct {
	DB       *bun.DB
	Redis    *redis.Client
	Keystore *signer.Keystore
	Log      *slog.Logger
	Now      func() time.Time
}

// NewMux registers every handler.
func NewMux(d Deps) *asynq.ServeMux {
	if d.Now == nil {
		d.Now = time.Now
	}
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeHeartbeat, d.heartbeat)
	return mux
}

// heartbeat records that a worker is consuming tasks.
func (d Deps) heartbeat(ctx context.Context, _ *asynq.Task) error {
	if err := d.Redis.Set(ctx, tasks.HeartbeatKey, d.Now().Unix(), 10*tasks.HeartbeatEvery).Err(); err != nil {
		return fmt.Errorf("record heartbeat: %w", err)
	}
	return nil
}
