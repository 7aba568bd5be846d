// Package live carries an account's events to the dashboard as they
// commit: the outbox's events (internal/webhook) and the deliveries that
// ended failed, read from the tables that hold them (no second record),
// woken by PostgreSQL notifications (migration 0019; only for the accounts
// a hub watches, migration 0022), replayed after a reconnection (at least
// once), and bounded per session and per account.
package live

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/webhook"
)

// Channel is the PostgreSQL channel the triggers of migration 0019
// notify: "e <account> <event id>", "d <account> <delivery id>" (for an
// account some hub watches: migration 0022), or "s" (a session ended or
// moved, a user removed or given another role).
const Channel = "agentwallet_stream"

// KindDeliveryFailed is the stream's item for a webhook delivery that
// ended failed (every attempt failed, or its endpoint was disabled).
const KindDeliveryFailed = "delivery.failed"

// Kinds are the outbox events a stream carries: those endpoints may
// subscribe to (not webhook.test).
var Kinds = webhook.Subscribable

// Replay bounds: a reconnection replays what it missed of the last
// ReplayWindow, at most ReplayMax items; past either it is told to reset.
const (
	ReplayWindow = time.Hour
	ReplayMax    = 500
)

// ReplayOverlap is how long before the page's last item a replay starts.
// An item's time is taken when its transaction's work starts (a decision's
// claim, a sweep's start), and the item is visible when that transaction
// commits: one can commit after items with later times, up to as long as a
// transaction that writes events may last. Each runs under a deadline
// that ends it (a transaction never commits past its context): an API
// request 30 s (httpapi.RequestTimeout), a Slack action 40 s, the worker's
// send:decide, approval:execute and webhook:deliver 30 s, approvals:expire
// 50 s (its events carry the sweep's start), the confirmation sweep 60 s
// (tasks.SweepBudget and its task's 15 s more). Two minutes covers the
// longest, and clocks of different hosts a few seconds apart. A replay
// therefore sends items the page may have had already: delivery is at
// least once, and the page drops ids it has handled.
const ReplayOverlap = 2 * time.Minute

// Item is one message of a stream.
type Item struct {
	// ID is the stream's event id: the event's public id (evt_…), or the
	// failed delivery's id (a bare UUID, as the webhooks API names it).
	ID   string
	Kind string
	// WalletID is the wallet the item is about; uuid.Nil for none (a
	// delivery).
	WalletID uuid.UUID
	At       time.Time
	// Body is the JSON the page receives: for an event, exactly a webhook
	// delivery's body ({event, event_id, timestamp, data}); for a failed
	// delivery the same envelope with data {delivery_id, endpoint_id,
	// event_id, event, attempts}.
	Body json.RawMessage
	// Earlier marks an item of a replay that comes before the page's last
	// item (ReplayOverlap): the page may have had it, and it is sent
	// without an id so the page's position stays where it was.
	Earlier bool

	rank int // 0 an event, 1 a delivery: the order of items at one instant
	key  uuid.UUID
}

// before orders items as replays send them: by time, events before
// deliveries at one instant, then by id.
func (a *Item) before(b *Item) bool {
	return a.compare(b) < 0
}

func (a *Item) compare(b *Item) int {
	return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.rank, b.rank), strings.Compare(a.key.String(), b.key.String()))
}

func eventItem(ev *webhook.Event) (Item, error) {
	body, err := webhook.Body(ev)
	if err != nil {
		return Item{}, err
	}
	var d struct {
		WalletID uuid.UUID `json:"wallet_id"`
	}
	_ = json.Unmarshal(ev.Data, &d) // a kind without a wallet leaves it Nil
	return Item{ID: webhook.PublicEventID(ev.ID), Kind: ev.Kind, WalletID: d.WalletID, At: ev.CreatedAt, Body: body, key: ev.ID}, nil
}

// failedDelivery is a delivery row as the stream reads it.
type failedDelivery struct {
	ID          uuid.UUID `bun:"id"`
	EndpointID  uuid.UUID `bun:"endpoint_id"`
	EventID     uuid.UUID `bun:"event_id"`
	EventKind   string    `bun:"event_kind"`
	Attempts    int       `bun:"attempts"`
	CompletedAt time.Time `bun:"completed_at"`
}

func (d *failedDelivery) item() (Item, error) {
	body, err := json.Marshal(map[string]any{
		"event": KindDeliveryFailed, "event_id": d.ID.String(), "timestamp": d.CompletedAt.UTC().Format(time.RFC3339Nano),
		"data": map[string]any{"delivery_id": d.ID, "endpoint_id": d.EndpointID, "event_id": webhook.PublicEventID(d.EventID),
			"event": d.EventKind, "attempts": d.Attempts},
	})
	if err != nil {
		return Item{}, err
	}
	return Item{ID: d.ID.String(), Kind: KindDeliveryFailed, At: d.CompletedAt, Body: body, rank: 1, key: d.ID}, nil
}

const deliveryColumns = `SELECT d.id, d.endpoint_id, d.event_id, ev.kind AS event_kind, d.attempts, d.completed_at
	FROM deliveries AS d JOIN events AS ev ON ev.id = d.event_id`

// readEvents reads the streamed events among ids (of any account).
func readEvents(ctx context.Context, db bun.IDB, ids []uuid.UUID) (map[uuid.UUID]Item, error) {
	var evs []webhook.Event
	if err := db.NewSelect().Model(&evs).Where("id IN (?) AND kind IN (?)", bun.List(ids), bun.List(Kinds)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	out := make(map[uuid.UUID]Item, len(evs))
	for i := range evs {
		it, err := eventItem(&evs[i])
		if err != nil {
			return nil, err
		}
		out[evs[i].ID] = it
	}
	return out, nil
}

// readDeliveries reads the failed deliveries among ids.
func readDeliveries(ctx context.Context, db bun.IDB, ids []uuid.UUID) (map[uuid.UUID]Item, error) {
	var ds []failedDelivery
	if err := db.NewRaw(deliveryColumns+` WHERE d.id IN (?) AND d.status = ?`, bun.List(ids), webhook.DeliveryFailed).Scan(ctx, &ds); err != nil {
		return nil, fmt.Errorf("read deliveries: %w", err)
	}
	out := make(map[uuid.UUID]Item, len(ds))
	for i := range ds {
		it, err := ds[i].item()
		if err != nil {
			return nil, err
		}
		out[ds[i].ID] = it
	}
	return out, nil
}

// Reset is why a reconnection gets no replay: the page should read its
// state again. Latest is the stream id to continue from ("" when the
// account has no item yet).
type Reset struct {
	Reason string // "unknown_id", "too_old" or "too_many"
	Latest string
}

func (r *Reset) Error() string { return "replay impossible: " + r.Reason }

// Replay is what account's stream may have sent after lastID (a stream
// id), oldest first: every item from ReplayOverlap before it on, except
// lastID itself; those before it are marked Earlier. Bounded by ReplayWindow and ReplayMax: it is a *Reset
// error when lastID is not the account's, is older than the window, or
// the replay would hold more items than ReplayMax.
func Replay(ctx context.Context, db bun.IDB, accountID uuid.UUID, lastID string) ([]Item, error) {
	cursor, err := find(ctx, db, accountID, lastID)
	if err != nil {
		return nil, err
	}
	reset := func(reason string) error {
		latest, err := Latest(ctx, db, accountID)
		if err != nil {
			return err
		}
		return &Reset{Reason: reason, Latest: latest}
	}
	if cursor == nil {
		return nil, reset("unknown_id")
	}
	if time.Since(cursor.At) > ReplayWindow {
		return nil, reset("too_old")
	}
	const limit = ReplayMax + 2 // the cursor itself, and one too many
	from := cursor.At.Add(-ReplayOverlap)
	var evs []webhook.Event
	err = db.NewSelect().Model(&evs).
		Where("account_id = ? AND kind IN (?) AND created_at >= ?", accountID, bun.List(Kinds), from).
		OrderExpr("created_at, id").Limit(limit).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("replay events: %w", err)
	}
	var ds []failedDelivery
	err = db.NewRaw(deliveryColumns+` WHERE d.account_id = ? AND d.status = ? AND d.completed_at >= ?
		ORDER BY d.completed_at, d.id LIMIT ?`, accountID, webhook.DeliveryFailed, from, limit).Scan(ctx, &ds)
	if err != nil {
		return nil, fmt.Errorf("replay deliveries: %w", err)
	}
	if len(evs) == limit || len(ds) == limit {
		return nil, reset("too_many")
	}
	items := make([]Item, 0, len(evs)+len(ds))
	for i := range evs {
		it, err := eventItem(&evs[i])
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	for i := range ds {
		it, err := ds[i].item()
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	items = slices.DeleteFunc(items, func(it Item) bool { return it.compare(cursor) == 0 })
	for i := range items {
		items[i].Earlier = items[i].before(cursor)
	}
	slices.SortFunc(items, func(a, b Item) int { return a.compare(&b) })
	if len(items) > ReplayMax {
		return nil, reset("too_many")
	}
	return items, nil
}

// find is the item lastID names in the account, or nil.
func find(ctx context.Context, db bun.IDB, accountID uuid.UUID, lastID string) (*Item, error) {
	raw, isEvent := strings.CutPrefix(lastID, "evt_")
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return nil, nil
	}
	it := Item{key: id}
	if isEvent {
		err = db.NewSelect().Table("events").Column("created_at").
			Where("id = ? AND account_id = ? AND kind IN (?)", id, accountID, bun.List(Kinds)).Scan(ctx, &it.At)
	} else {
		it.rank = 1
		err = db.NewSelect().Table("deliveries").Column("completed_at").
			Where("id = ? AND account_id = ? AND status = ?", id, accountID, webhook.DeliveryFailed).Scan(ctx, &it.At)
	}
	if errors.Is(err, errNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find the last event id: %w", err)
	}
	return &it, nil
}

// Latest is the account's newest stream id, "" when it has none.
func Latest(ctx context.Context, db bun.IDB, accountID uuid.UUID) (string, error) {
	var latest *Item
	var ev webhook.Event
	err := db.NewSelect().Model(&ev).Where("account_id = ? AND kind IN (?)", accountID, bun.List(Kinds)).
		OrderExpr("created_at DESC, id DESC").Limit(1).Scan(ctx)
	switch {
	case err == nil:
		it, err := eventItem(&ev)
		if err != nil {
			return "", err
		}
		latest = &it
	case !errors.Is(err, errNoRows):
		return "", fmt.Errorf("latest event: %w", err)
	}
	var d failedDelivery
	err = db.NewRaw(deliveryColumns+` WHERE d.account_id = ? AND d.status = ? ORDER BY d.completed_at DESC, d.id DESC LIMIT 1`,
		accountID, webhook.DeliveryFailed).Scan(ctx, &d)
	switch {
	case err == nil:
		it, err := d.item()
		if err != nil {
			return "", err
		}
		if latest == nil || latest.before(&it) {
			latest = &it
		}
	case !errors.Is(err, errNoRows):
		return "", fmt.Errorf("latest delivery: %w", err)
	}
	if latest == nil {
		return "", nil
	}
	return latest.ID, nil
}
