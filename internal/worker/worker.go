// Package worker holds the asynq handlers: each decodes its payload, calls
// the domain, and decides whether a failure is retried or skipped.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// Deps is what the handlers use.
type Deps struct {
	DB       *bun.DB
	Redis    *redis.Client
	Keystore *signer.Keystore
	// Signers, when set, report their health with the heartbeat.
	Signers  *signer.Set
	Log      *slog.Logger
	Now      func() time.Time
	Payments *payment.Engine  // nil: payment tasks are not registered
	Deposits *deposit.Watcher // nil: deposits are not watched
	Webhooks *Webhooks        // nil: webhook tasks are not registered
}

// Webhooks is what the webhook tasks use.
type Webhooks struct {
	Deliverer  *webhook.Deliverer
	Dispatcher *webhook.Dispatcher
}

// NewMux registers every handler.
func NewMux(d Deps) *asynq.ServeMux {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeHeartbeat, d.heartbeat)
	if d.Payments != nil {
		mux.HandleFunc(tasks.TypeSendDecide, d.sendDecide)
		mux.HandleFunc(tasks.TypeConfirmSweep, d.confirmSweep)
		mux.HandleFunc(tasks.TypeApprovalExecute, d.approvalExecute)
	}
	if d.Deposits != nil {
		mux.HandleFunc(tasks.TypeDepositsScan, d.depositsScan)
		mux.HandleFunc(tasks.TypeBalancesSnapshot, d.balancesSnapshot)
	}
	mux.HandleFunc(tasks.TypeApprovalsExpire, d.approvalsExpire)
	mux.HandleFunc(tasks.TypeAuditSeal, d.auditSeal)
	if d.Webhooks != nil {
		mux.HandleFunc(tasks.TypeWebhookDeliver, d.webhookDeliver)
		mux.HandleFunc(tasks.TypeWebhooksRedrive, d.webhooksRedrive)
	}
	return mux
}

func (d Deps) sendDecide(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.ParseSendDecide(t)
	if err != nil {
		return err
	}
	return d.Payments.Decide(ctx, p.RequestID)
}

func (d Deps) approvalExecute(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.ParseApprovalExecute(t)
	if err != nil {
		return err
	}
	return d.Payments.Execute(ctx, p.ApprovalID)
}

// approvalsExpire fails the task on error; the next minute's run tries
// again.
func (d Deps) approvalsExpire(ctx context.Context, _ *asynq.Task) error {
	st, err := approval.Sweep(ctx, d.DB, d.Now(), approval.AbandonedAfter)
	if st.Expired+st.Released > 0 {
		d.Log.InfoContext(ctx, "approvals swept", "expired", st.Expired, "released", st.Released)
	}
	return err
}

// auditSeal fails the task on error; the next period's seal (or the next
// read of the log) seals what this one left.
func (d Deps) auditSeal(ctx context.Context, _ *asynq.Task) error {
	ctx, cancel := context.WithTimeout(ctx, tasks.SweepBudget)
	defer cancel()
	_, err := audit.SealAll(ctx, d.DB)
	return err
}

// webhookDeliver makes one attempt; a failed one is retried on the spec's
// schedule until the last, after which nothing retries it.
func (d Deps) webhookDeliver(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.ParseWebhookDeliver(t)
	if err != nil {
		return err
	}
	err = d.Webhooks.Deliverer.Deliver(ctx, p.DeliveryID)
	if errors.Is(err, webhook.ErrGaveUp) {
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	return err
}

// redriveAfter is how long a delivery may wait in the queue before the
// re-drive checks that its task still exists.
const redriveAfter = 5 * time.Minute

func (d Deps) webhooksRedrive(ctx context.Context, _ *asynq.Task) error {
	n, err := d.Webhooks.Dispatcher.Redrive(ctx, redriveAfter)
	if n > 0 {
		d.Log.WarnContext(ctx, "re-drove webhook deliveries whose task was lost", "count", n)
	}
	return err
}

// confirmSweep logs what it could not do instead of failing the task: the
// next sweep, two seconds later, tries again anyway.
func (d Deps) confirmSweep(ctx context.Context, _ *asynq.Task) error {
	ctx, cancel := context.WithTimeout(ctx, tasks.SweepBudget)
	defer cancel()
	st, err := d.Payments.Sweep(ctx)
	if err != nil {
		d.Log.WarnContext(ctx, "confirmation sweep incomplete", "err", err)
	}
	if st.Skipped {
		d.Log.DebugContext(ctx, "confirmation sweep skipped: another is running")
		return nil
	}
	if st.Confirmed+st.Failed+st.Rebroadcast+st.Resigned > 0 {
		d.Log.InfoContext(ctx, "confirmation sweep", "checked", st.Checked, "confirmed", st.Confirmed,
			"failed", st.Failed, "rebroadcast", st.Rebroadcast, "resigned", st.Resigned)
	}
	return nil
}

// depositsScan looks for deposits once; a node's failure is logged and
// the next period's scan resumes from the cursors.
func (d Deps) depositsScan(ctx context.Context, _ *asynq.Task) error {
	ctx, cancel := context.WithTimeout(ctx, tasks.SweepBudget)
	defer cancel()
	st, err := d.Deposits.Scan(ctx)
	if err != nil {
		d.Log.WarnContext(ctx, "deposit scan incomplete", "err", err, "watched", st.Watched, "read", st.Read, "resting", st.Resting,
			"changed", st.Changed, "deposits", st.Deposits)
		return nil
	}
	if st.Deposits > 0 {
		d.Log.InfoContext(ctx, "deposit scan", "watched", st.Watched, "changed", st.Changed, "examined", st.Examined, "deposits", st.Deposits)
	}
	return nil
}

// balancesSnapshot checks the wallets due a snapshot against their
// ledgers; a node's failure is logged and the wallets stay due.
func (d Deps) balancesSnapshot(ctx context.Context, _ *asynq.Task) error {
	st, err := d.Deposits.Snapshot(ctx)
	if err != nil {
		d.Log.WarnContext(ctx, "balance snapshot incomplete", "err", err, "wallets", st.Wallets, "differences", st.Differences)
		return nil
	}
	if st.Wallets > 0 || st.Deferred > 0 {
		d.Log.InfoContext(ctx, "balance snapshot", "wallets", st.Wallets, "differences", st.Differences, "deferred", st.Deferred)
	}
	return nil
}

// heartbeat records that a worker is consuming tasks, which master keys
// it holds, and its signers' health and signing latency (for the API's
// /readyz and /metrics). A failure is logged, not retried: a missed beat shows as
// an old timestamp in /readyz.
func (d Deps) heartbeat(ctx context.Context, _ *asynq.Task) error {
	ttl := 10 * tasks.HeartbeatEvery
	var health []signer.Health
	if d.Signers != nil {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		health = d.Signers.Health(cctx)
		cancel()
	}
	_, err := d.Redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, tasks.HeartbeatKey, d.Now().Unix(), ttl)
		if d.Keystore != nil {
			for _, id := range d.Keystore.KeyIDs() {
				p.SAdd(ctx, tasks.WorkerKeysKey, id)
			}
			p.Expire(ctx, tasks.WorkerKeysKey, ttl)
		}
		for _, h := range health {
			raw, _ := json.Marshal(h)
			p.HSet(ctx, tasks.SignersKey, string(h.Backend), raw)
		}
		if len(health) > 0 {
			p.Expire(ctx, tasks.SignersKey, ttl)
		}
		return nil
	})
	if err != nil {
		d.Log.WarnContext(ctx, "record heartbeat", "err", err)
	}
	return nil
}

// CheckKeystore fails when secrets exist (wallets', fee payers', webhook
// endpoints') that no key of ks opens: a worker missing a master key must
// not start and fail every payment.
func CheckKeystore(ctx context.Context, db bun.IDB, ks *signer.Keystore) error {
	ids, err := SealedKeyIDs(ctx, db)
	if err != nil {
		return err
	}
	var missing []string
	for _, id := range ids {
		if !ks.Has(id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("secrets are sealed to master key(s) %v that WALLET_MASTER_KEY does not hold (it holds %v)", missing, ks.KeyIDs())
	}
	return nil
}

// SealedKeyIDs lists the master keys any stored secret is sealed to.
func SealedKeyIDs(ctx context.Context, db bun.IDB) ([]string, error) {
	var ids []string
	err := db.NewRaw(`SELECT secret_key_id FROM wallets WHERE secret_key_id IS NOT NULL
		UNION SELECT secret_key_id FROM fee_payers WHERE secret_key_id IS NOT NULL
		UNION SELECT secret_key_id FROM webhook_endpoints
		UNION SELECT previous_key_id FROM webhook_endpoints WHERE previous_key_id IS NOT NULL
		ORDER BY 1`).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("list sealed key ids: %w", err)
	}
	return ids, nil
}

// CheckSigners fails when wallets exist whose keys live in a backend set
// has no keeper for: they could not pay.
func CheckSigners(ctx context.Context, db bun.IDB, set *signer.Set) error {
	var backends []signer.Backend
	if err := db.NewRaw(`SELECT DISTINCT signer FROM wallets WHERE signer <> 'local' ORDER BY 1`).Scan(ctx, &backends); err != nil {
		return fmt.Errorf("list wallet signers: %w", err)
	}
	for _, b := range backends {
		if _, ok := set.Keeper(b); !ok {
			return fmt.Errorf("wallets hold keys in %s, which this worker is not configured for", b)
		}
	}
	return nil
}

// EnqueueDelivery queues delivery tasks over rdb. An id already queued,
// running or waiting to retry is a duplicate, not an error. An archived
// task holding the id of a delivery still pending (its retries spent
// before an attempt was recorded) is replaced, so a re-drive reaches it.
func EnqueueDelivery(rdb *redis.Client) webhook.Enqueue {
	client := asynq.NewClientFromRedisClient(rdb)
	insp := asynq.NewInspectorFromRedisClient(rdb)
	return func(ctx context.Context, id uuid.UUID) (bool, error) {
		_, err := client.EnqueueContext(ctx, tasks.NewWebhookDeliverTask(id))
		if !tasks.IsDuplicate(err) {
			return false, err
		}
		info, ierr := insp.GetTaskInfo(tasks.QueueWebhooks, id.String())
		if ierr != nil || info.State != asynq.TaskStateArchived {
			return true, nil
		}
		if err := insp.DeleteTask(tasks.QueueWebhooks, id.String()); err != nil {
			return false, fmt.Errorf("replace archived task: %w", err)
		}
		_, err = client.EnqueueContext(ctx, tasks.NewWebhookDeliverTask(id))
		if tasks.IsDuplicate(err) {
			return true, nil
		}
		return false, err
	}
}
