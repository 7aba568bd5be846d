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

// heartbeat records that a worker is consuming tasks, and which master
// keys it holds.
func (d Deps) heartbeat(ctx context.Context, _ *asynq.Task) error {
	ttl := 10 * tasks.HeartbeatEvery
	_, err := d.Redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, tasks.HeartbeatKey, d.Now().Unix(), ttl)
		if d.Keystore != nil {
			for _, id := range d.Keystore.KeyIDs() {
				p.SAdd(ctx, tasks.WorkerKeysKey, id)
			}
			p.Expire(ctx, tasks.WorkerKeysKey, ttl)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record heartbeat: %w", err)
	}
	return nil
}

// CheckKeystore fails when wallets exist whose secrets no key of ks opens:
// a worker missing a master key must not start and fail every payment.
func CheckKeystore(ctx context.Context, db bun.IDB, ks *signer.Keystore) error {
	var ids []string
	if err := db.NewSelect().Table("wallets").ColumnExpr("DISTINCT secret_key_id").Scan(ctx, &ids); err != nil {
		return fmt.Errorf("list wallet key ids: %w", err)
	}
	var missing []string
	for _, id := range ids {
		if !ks.Has(id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("wallets are sealed to master key(s) %v that WALLET_MASTER_KEY does not hold (it holds %v)", missing, ks.KeyIDs())
	}
	return nil
}
