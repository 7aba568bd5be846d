// Package webhook holds the event outbox: every state change inserts its
// event in the same transaction as the change, so no event is lost and
// none describes a change that did not commit. Delivery reads the outbox.
package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Event kinds (docs/decisions/webhooks.md).
const (
	KindTxSent          = "tx.sent"
	KindTxBlocked       = "tx.blocked"
	KindApprovalPending = "approval.pending"
	// KindApprovalApproved: approved, signed and broadcast.
	KindApprovalApproved = "approval.approved"
	// KindApprovalVote: a person approved a payment that needs more
	// people (approvals_required above 1), short of the quorum; the
	// quorum's last approve is approval.approved once sent.
	KindApprovalVote = "approval.vote"
	// KindApprovalRejected: rejected by a human or by the system.
	KindApprovalRejected = "approval.rejected"
	// KindApprovalExpired: pending longer than its lifetime (not in the
	// spec's list; endpoints may subscribe to it).
	KindApprovalExpired = "approval.expired"
	// KindTxFailed: a transaction answered "sent" ended failed (rejected
	// on chain, or expired unseen); nothing was spent. Not in the spec's
	// list; endpoints may subscribe to it.
	KindTxFailed = "tx.failed"
	// KindX402Expired: a signed x402 payment ended without moving money
	// (its blockhash expired before the seller settled it, or it failed
	// on chain); its reservation is released.
	KindX402Expired = "x402.expired"
	// KindMPPExpired: a signed MPP payment ended without moving money
	// (its blockhash expired before the seller broadcast it, or it failed
	// on chain); its reservation is released.
	KindMPPExpired = "mpp.expired"
	// KindTxReceived: money came into a wallet (a deposit of USDC or SOL,
	// confirmed); recorded and announced once.
	KindTxReceived = "tx.received"
	// KindUnexplainedOutflow: money left a wallet in a transaction the
	// service did not make (its key used elsewhere, or a delegate).
	KindUnexplainedOutflow = "wallet.unexplained_outflow"
	// KindReceiveFailed: a deposit announced by tx.received was dropped by
	// a fork (the chain no longer has its transaction once its blockhash
	// expired); it is marked failed and its amount never arrived.
	KindReceiveFailed = "tx.receive_failed"
	// KindBalanceMismatch: a wallet's balance read on chain differs from
	// its ledger at the same slot (money moved in a way no transaction
	// the watcher read shows).
	KindBalanceMismatch = "wallet.balance_mismatch"
	// KindUserAdded: a person was made a user of the account (whoever
	// added them: an owner, an admin key, the operator's command line),
	// or a user was promoted to owner (promoted_from), so that every
	// owner hears of a new owner.
	KindUserAdded = "user.added"
)

// Event is one outbox row; receivers see its id as "evt_" + ID.
type Event struct {
	bun.BaseModel `bun:"table:events"`

	ID        uuid.UUID       `bun:"id,pk,type:uuid"`
	AccountID uuid.UUID       `bun:"account_id,type:uuid"`
	Kind      string          `bun:"kind"`
	Data      json.RawMessage `bun:"data,type:jsonb"`
	CreatedAt time.Time       `bun:"created_at"`
}

// NewEvent makes an event (not yet stored); data is the kind's `data`
// object.
func NewEvent(accountID uuid.UUID, at time.Time, kind string, data any) (Event, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("event %s data: %w", kind, err)
	}
	return Event{ID: uuid.New(), AccountID: accountID, Kind: kind, Data: raw, CreatedAt: at.UTC().Truncate(time.Microsecond)}, nil
}

// Emit records an event inside tx, which must be the transaction of the
// change it reports.
func Emit(ctx context.Context, tx bun.IDB, accountID uuid.UUID, at time.Time, kind string, data any) (Event, error) {
	e, err := NewEvent(accountID, at, kind, data)
	if err != nil {
		return Event{}, err
	}
	if _, err := tx.NewInsert().Model(&e).Exec(ctx); err != nil {
		return Event{}, fmt.Errorf("insert event %s: %w", kind, err)
	}
	return e, nil
}
