package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// ErrDeliveryNotFound means no delivery with that id in that account.
var ErrDeliveryNotFound = errors.New("delivery not found")

// DeliveryCursor is the position after which a page of deliveries starts.
type DeliveryCursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// ListDeliveries returns an endpoint's deliveries newest first, optionally
// with one status, after cursor. The endpoint must be the account's (a
// deleted one's log stays readable).
func ListDeliveries(ctx context.Context, db bun.IDB, accountID, endpointID uuid.UUID, status string, after *DeliveryCursor, limit int) ([]Delivery, error) {
	exists, err := db.NewSelect().Model((*Endpoint)(nil)).WhereAllWithDeleted().
		Where("we.id = ? AND we.account_id = ?", endpointID, accountID).Exists(ctx)
	if err != nil {
		return nil, fmt.Errorf("read webhook endpoint: %w", err)
	}
	if !exists {
		return nil, ErrEndpointNotFound
	}
	ds := []Delivery{}
	q := db.NewSelect().Model(&ds).ColumnExpr("d.*, ev.kind AS event_kind").
		Join("JOIN events AS ev ON ev.id = d.event_id").
		Where("d.endpoint_id = ?", endpointID).OrderExpr("d.created_at DESC, d.id DESC").Limit(int64(limit))
	if status != "" {
		q = q.Where("d.status = ?", status)
	}
	if after != nil {
		q = q.Where("(d.created_at, d.id) < (?, ?)", after.CreatedAt, after.ID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return ds, nil
}

// GetDelivery reads a delivery of the account, with its event (Event),
// and its attempts, oldest first.
func GetDelivery(ctx context.Context, db bun.IDB, accountID, id uuid.UUID) (Delivery, []Attempt, error) {
	var d Delivery
	err := db.NewSelect().Model(&d).ColumnExpr("d.*, ev.kind AS event_kind, ev.data AS event_data, ev.created_at AS event_at").
		Join("JOIN events AS ev ON ev.id = d.event_id").
		Where("d.id = ? AND d.account_id = ?", id, accountID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, nil, ErrDeliveryNotFound
	}
	if err != nil {
		return Delivery{}, nil, fmt.Errorf("read delivery: %w", err)
	}
	as := []Attempt{}
	if err := db.NewSelect().Model(&as).Where("delivery_id = ?", id).Order("n").Scan(ctx); err != nil {
		return Delivery{}, nil, fmt.Errorf("read attempts: %w", err)
	}
	return d, as, nil
}

// Replay makes a new delivery of a delivery's event to the same endpoint
// (same event id, so receivers deduplicate it); the endpoint must still
// exist and be enabled.
func Replay(ctx context.Context, db bun.IDB, accountID, id uuid.UUID) (Delivery, error) {
	orig, _, err := GetDelivery(ctx, db, accountID, id)
	if err != nil {
		return Delivery{}, err
	}
	ep, err := GetEndpoint(ctx, db, accountID, orig.EndpointID)
	if err != nil {
		return Delivery{}, err
	}
	if !ep.Enabled {
		return Delivery{}, ErrEndpointDisabled
	}
	d := Delivery{ID: uuid.New(), AccountID: accountID, EndpointID: orig.EndpointID, EventID: orig.EventID,
		ReplayOf: uuid.NullUUID{UUID: orig.ID, Valid: true}, EventKind: orig.EventKind}
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := insertDelivery(ctx, tx, &d); err != nil {
			return err
		}
		return notify(ctx, tx)
	})
	return d, err
}

// ErrEndpointDisabled refuses a replay to a disabled endpoint.
var ErrEndpointDisabled = errors.New("the webhook endpoint is disabled")

// notify wakes the dispatchers when tx commits.
func notify(ctx context.Context, tx bun.IDB) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_notify(?, '')", NotifyChannel)
	return err
}

// EventDelivery is where one event went: an endpoint and its delivery's
// state (the newest, when replayed).
type EventDelivery struct {
	EndpointID uuid.UUID `bun:"endpoint_id"`
	URL        string    `bun:"url"`
	Format     string    `bun:"format"`
	DeliveryID uuid.UUID `bun:"delivery_id"`
	Status     string    `bun:"status"`
	Attempts   int       `bun:"attempts"`
}

// ApprovalPendingEvent is the approval.pending event of an approval of the
// account (nil when none was recorded) with its deliveries per endpoint.
func ApprovalPendingEvent(ctx context.Context, db bun.IDB, accountID uuid.UUID, publicApprovalID string) (*Event, []EventDelivery, error) {
	var ev Event
	err := db.NewSelect().Model(&ev).
		Where("account_id = ? AND kind = ? AND data->>'approval_id' = ?", accountID, KindApprovalPending, publicApprovalID).
		Order("created_at").Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read approval.pending event: %w", err)
	}
	ds := []EventDelivery{}
	err = db.NewRaw(`SELECT DISTINCT ON (d.endpoint_id) d.endpoint_id, e.url, e.format, d.id AS delivery_id, d.status, d.attempts
		FROM deliveries AS d JOIN webhook_endpoints AS e ON e.id = d.endpoint_id
		WHERE d.event_id = ? AND d.account_id = ? ORDER BY d.endpoint_id, d.created_at DESC`, ev.ID, accountID).Scan(ctx, &ds)
	if err != nil {
		return nil, nil, fmt.Errorf("read the event's deliveries: %w", err)
	}
	return &ev, ds, nil
}
