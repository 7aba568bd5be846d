package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
)

// NotifyChannel is the PostgreSQL channel the outbox trigger notifies when
// it creates deliveries.
const NotifyChannel = "agentwallet_deliveries"

// Enqueue hands a delivery to the task queue (its task id is the delivery
// id, so a second enqueue of a queued delivery is refused, not doubled).
// Duplicate reports such a refusal.
type Enqueue func(ctx context.Context, deliveryID uuid.UUID) (duplicate bool, err error)

// Dispatcher moves new deliveries onto the task queue, and re-drives the
// ones whose task was lost.
type Dispatcher struct {
	DB      *bun.DB
	Enqueue Enqueue
	Log     *slog.Logger
}

// dispatchBatch bounds one pass.
const dispatchBatch = 500

// DispatchNew enqueues deliveries not yet enqueued, marking each. It
// returns how many it enqueued.
func (d *Dispatcher) DispatchNew(ctx context.Context) (int, error) {
	total := 0
	for {
		var ids []uuid.UUID
		err := d.DB.NewSelect().Table("deliveries").Column("id").
			Where("status = ? AND enqueued_at IS NULL", DeliveryPending).OrderExpr("created_at").Limit(dispatchBatch).
			Scan(ctx, &ids)
		if err != nil {
			return total, fmt.Errorf("find new deliveries: %w", err)
		}
		n, err := d.enqueue(ctx, ids)
		total += n
		if err != nil || len(ids) < dispatchBatch {
			return total, err
		}
	}
}

// Redrive enqueues again pending deliveries enqueued before olderThan ago
// whose task no longer exists (the queue lost it); a task still queued or
// waiting to retry refuses the enqueue and is left alone.
func (d *Dispatcher) Redrive(ctx context.Context, olderThan time.Duration) (int, error) {
	var ids []uuid.UUID
	err := d.DB.NewSelect().Table("deliveries").Column("id").
		Where("status = ? AND enqueued_at < now() - ? * interval '1 second'", DeliveryPending, int64(olderThan.Seconds())).
		OrderExpr("enqueued_at").Limit(dispatchBatch).Scan(ctx, &ids)
	if err != nil {
		return 0, fmt.Errorf("find stale deliveries: %w", err)
	}
	return d.enqueue(ctx, ids)
}

func (d *Dispatcher) enqueue(ctx context.Context, ids []uuid.UUID) (int, error) {
	n := 0
	var done []uuid.UUID
	for _, id := range ids {
		dup, err := d.Enqueue(ctx, id)
		if err != nil {
			d.mark(ctx, done)
			return n, fmt.Errorf("enqueue delivery %s: %w", id, err)
		}
		if !dup {
			n++
		}
		done = append(done, id)
	}
	return n, d.mark(ctx, done)
}

func (d *Dispatcher) mark(ctx context.Context, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := d.DB.NewUpdate().Table("deliveries").Set("enqueued_at = now()").Where("id IN (?)", bun.List(ids)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark deliveries enqueued: %w", err)
	}
	return nil
}

// pollEvery is how often Run looks for new deliveries without a
// notification (one lost, or the listening connection down).
const pollEvery = time.Second

// Run dispatches new deliveries until ctx ends: at once on the outbox
// trigger's notification, and every pollEvery regardless.
func (d *Dispatcher) Run(ctx context.Context, databaseURL string) {
	wake := make(chan struct{}, 1)
	go d.listen(ctx, databaseURL, wake)
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		if _, err := d.DispatchNew(ctx); err != nil && ctx.Err() == nil {
			d.log().WarnContext(ctx, "dispatch webhook deliveries", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-t.C:
		}
	}
}

func (d *Dispatcher) log() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

// listen holds a connection LISTENing on NotifyChannel, reconnecting
// after errors, and signals wake for each notification.
func (d *Dispatcher) listen(ctx context.Context, databaseURL string, wake chan<- struct{}) {
	for ctx.Err() == nil {
		err := func() error {
			conn, err := pgx.Connect(ctx, databaseURL)
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(ctx))
			if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
				return err
			}
			for {
				if _, err := conn.WaitForNotification(ctx); err != nil {
					return err
				}
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}()
		if ctx.Err() != nil {
			return
		}
		d.log().WarnContext(ctx, "webhook notifications interrupted; polling meanwhile", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
