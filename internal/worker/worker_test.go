package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/wallettest"
	"github.com/agentwallet/agentwallet/internal/worker"
)

// A heartbeat enqueued the way the scheduler does is run by a real asynq
// server with the worker's mux, and recorded.
func TestHeartbeatThroughQueue(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues: tasks.QueueWeights(), TaskCheckInterval: 20 * time.Millisecond, LogLevel: asynq.ErrorLevel,
	})
	client := asynq.NewClientFromRedisClient(rdb)
	if _, err := client.Enqueue(tasks.NewHeartbeatTask()); err != nil {
		t.Fatal(err)
	}
	// While one waits, another is a conflict, not a second task: with no
	// worker running, heartbeats do not pile up.
	if _, err := client.Enqueue(tasks.NewHeartbeatTask()); !tasks.IsDuplicate(err) {
		t.Fatalf("second heartbeat: %v, want a duplicate", err)
	}
	if err := srv.Start(worker.NewMux(worker.Deps{Redis: rdb, Now: func() time.Time { return now }})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		v, err := rdb.Get(context.Background(), tasks.HeartbeatKey).Int64()
		if err == nil {
			if v != now.Unix() {
				t.Fatalf("heartbeat %d, want %d", v, now.Unix())
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("heartbeat was not recorded")
}

func TestCheckKeystore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	a, b := wallettest.NewMasterKey(t), wallettest.NewMasterKey(t)
	ksA, ksB := a.Keystore(t), b.Keystore(t)
	ksBA, _ := signer.NewKeystore(b.Private + "," + a.Private)
	if err := worker.CheckKeystore(ctx, db, ksB); err != nil {
		t.Fatalf("no wallets yet: %v", err)
	}
	wallettest.Create(t, db, a.Sealer, wallettest.Account(t, db).ID, "w")
	if err := worker.CheckKeystore(ctx, db, ksB); err == nil || !strings.Contains(err.Error(), a.Sealer.KeyID()) {
		t.Fatalf("missing key: %v", err)
	}
	for _, ks := range []*signer.Keystore{ksA, ksBA} {
		if err := worker.CheckKeystore(ctx, db, ks); err != nil {
			t.Fatal(err)
		}
	}
}

// approvals:expire, enqueued the way the scheduler does, expires an
// approval pending past its lifetime on the worker's (injected) clock.
func TestApprovalsExpireThroughQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	rdb, _ := redistest.New(t)
	acct, w := wallettest.New(t, db)
	created := time.Now().UTC().Truncate(time.Microsecond)
	a := approval.Approval{ID: uuid.New(), AccountID: acct.ID, WalletID: w.ID, Amount: 1, To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
		Status: approval.Pending, CreatedAt: created, ExpiresAt: created.Add(approval.Lifetime)}
	if _, err := db.NewInsert().Model(&a).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues: tasks.QueueWeights(), TaskCheckInterval: 20 * time.Millisecond, LogLevel: asynq.ErrorLevel,
	})
	later := func() time.Time { return created.Add(approval.Lifetime + time.Second) }
	if err := srv.Start(worker.NewMux(worker.Deps{DB: db, Redis: rdb, Now: later})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if _, err := asynq.NewClientFromRedisClient(rdb).Enqueue(tasks.NewApprovalsExpireTask()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		got, err := approval.Get(ctx, db, acct.ID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == approval.Expired {
			if !got.DecidedAt.Time.Equal(later().Truncate(time.Microsecond)) {
				t.Fatalf("decided_at %v", got.DecidedAt)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the approval did not expire")
}
