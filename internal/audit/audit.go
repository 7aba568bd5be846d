// Package audit writes the append-only audit log: one hash chain per
// account, each entry written inside the caller's transaction so it commits
// with the state change it describes. The table refuses UPDATE and DELETE;
// the chain makes any edit of a stored entry detectable.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Actions. A system rejection of an approval is approval.rejected with
// details.reason policy_violation_at_approval (or why it could not be
// sent).
const (
	ActionWalletCreated       = "wallet.created"
	ActionPolicyUpdated       = "policy.updated"
	ActionWalletFrozen        = "wallet.frozen"
	ActionWalletUnfrozen      = "wallet.unfrozen"
	ActionSendSent            = "send.sent"
	ActionSendBlocked         = "send.blocked"
	ActionSendPendingApproval = "send.pending_approval"
	ActionSendFailed          = "send.failed"
	// ActionSendResigned: a payment's transaction expired unseen and was
	// signed again (a new attempt, a new signature).
	ActionSendResigned     = "send.resigned"
	ActionApprovalApproved = "approval.approved"
	// ActionApprovalVoted: one person's approve short of the quorum
	// (approvals_required above 1); the last one is approval.approved.
	ActionApprovalVoted    = "approval.voted"
	ActionApprovalRejected = "approval.rejected"
	ActionApprovalExpired  = "approval.expired"
	ActionKeyCreated       = "key.created"
	ActionKeyRotated       = "key.rotated"
	ActionKeyRevoked       = "key.revoked"
	// ActionPermissionDenied: the permission table (or the requester
	// rule) refused an operation; details name it and why.
	ActionPermissionDenied = "permission.denied"
	// Dashboard sessions and users.
	ActionSignedIn = "session.signed_in"
	// ActionSignInFailed is no longer written (a refused sign-in proved
	// nothing, so it goes to logs and a metric); older entries carry it.
	ActionSignInFailed = "session.refused"
	ActionSignedOut    = "session.signed_out"
	ActionUserAdded    = "user.added"
	ActionUserChanged  = "user.changed"
	ActionUserRemoved  = "user.removed"
	// ActionFeePayerUpdated: the account's fee payer turned on or off, or
	// its daily budget changed (made, the first time it is enabled).
	ActionFeePayerUpdated = "fee_payer.updated"
	// An x402 payment signed in the worker, and one that ended without
	// landing (its reservation released).
	ActionX402Signed  = "x402.signed"
	ActionX402Expired = "x402.expired"
)

// Actions lists every action, for validating filters.
var Actions = []string{
	ActionWalletCreated, ActionPolicyUpdated, ActionWalletFrozen, ActionWalletUnfrozen,
	ActionSendSent, ActionSendBlocked, ActionSendPendingApproval, ActionSendFailed, ActionSendResigned,
	ActionApprovalApproved, ActionApprovalVoted, ActionApprovalRejected, ActionApprovalExpired,
	ActionKeyCreated, ActionKeyRotated, ActionKeyRevoked, ActionPermissionDenied,
	ActionSignedIn, ActionSignInFailed, ActionSignedOut, ActionUserAdded, ActionUserChanged, ActionUserRemoved,
	ActionFeePayerUpdated, ActionX402Signed, ActionX402Expired,
}

// Entry is one audit record.
type Entry struct {
	bun.BaseModel `bun:"table:audit_log"`

	ID        uuid.UUID       `bun:"id,pk,type:uuid"`
	AccountID uuid.UUID       `bun:"account_id,type:uuid"`
	Seq       int64           `bun:"seq"`
	At        time.Time       `bun:"at"`
	Actor     string          `bun:"actor"`  // key_<uuid>, user:<address>, slack:<user id>, system
	Action    string          `bun:"action"` // e.g. send.sent
	Target    string          `bun:"target"` // what it acted on, e.g. wallet:<id>
	Details   json.RawMessage `bun:"details,type:json"`
	PrevHash  []byte          `bun:"prev_hash"`
	Hash      []byte          `bun:"hash"`
}

// Append adds an entry to the account's chain inside tx, in one round
// trip (the audit_append SQL function). Appends of one account are
// serialized by a transaction-scoped lock, so call it last in a
// transaction: the lock is held until commit.
func Append(ctx context.Context, tx bun.IDB, accountID uuid.UUID, at time.Time, actor, action, target string, details any) error {
	raw, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("audit details: %w", err)
	}
	_, err = tx.ExecContext(ctx, "SELECT audit_append(?, ?, ?, ?, ?, ?, ?)",
		uuid.New(), accountID, at.UTC().Truncate(time.Microsecond), actor, action, target, string(raw))
	if err != nil {
		return fmt.Errorf("append audit entry: %w", err)
	}
	return nil
}

// ComputeHash is what audit_hash computes in the database: SHA-256 over
// the previous hash and every field, each prefixed by its length (8 bytes,
// big endian); the time as microseconds since the epoch.
func (e *Entry) ComputeHash() []byte {
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	field(e.PrevHash)
	field([]byte(e.ID.String()))
	field([]byte(e.AccountID.String()))
	field(binary.BigEndian.AppendUint64(nil, uint64(e.Seq)))
	field(binary.BigEndian.AppendUint64(nil, uint64(e.At.UnixMicro())))
	field([]byte(e.Actor))
	field([]byte(e.Action))
	field([]byte(e.Target))
	field(e.Details)
	return h.Sum(nil)
}
