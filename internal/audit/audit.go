// Package audit writes the append-only audit log: one hash chain per
// account. Each entry is written inside the caller's transaction, so it
// commits with the state change it describes, and is sealed onto the
// chain after that commit (Seal): its seq, the previous entry's hash and
// its own. The table refuses UPDATE and DELETE, but for that one seal; the
// chain makes any edit of a sealed entry detectable.
//
// Sealing after the commit, not inside the writing transaction, is what
// lets one account's decisions run side by side: chaining in the
// transaction took an account-wide lock held to its commit. Readers seal
// before they read (List, Check), and the scheduler seals every account
// every two seconds (tasks.AuditSealEvery), so an entry waits at most
// that long for its place.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/postgres"
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
	// ActionAccountSettingsUpdated: the account's settings changed (the
	// deposit minimums: which deposits are announced).
	ActionAccountSettingsUpdated = "account.settings_updated"
	// An x402 payment signed in the worker, and one that ended without
	// landing (its reservation released).
	ActionX402Signed  = "x402.signed"
	ActionX402Expired = "x402.expired"
	ActionMPPSigned   = "mpp.signed"
	ActionMPPExpired  = "mpp.expired"
	// Custody: an export of a wallet's secret (internal/wallet), a key
	// moved into an HSM and a recovery with the service stopped
	// (internal/custody).
	ActionExportRequested = "wallet.export_requested"
	ActionExportApproved  = "wallet.export_approved"
	ActionExported        = "wallet.exported"
	ActionExportRejected  = "wallet.export_rejected"
	ActionExportVoided    = "wallet.export_voided"
	ActionKeyMoved        = "wallet.key_moved"
	ActionRecoveryStarted = "wallet.recovery_started"
	ActionRecoverySigned  = "wallet.recovery_signed"
	ActionRecovered       = "wallet.recovered"
)

// Actions lists every action, for validating filters.
var Actions = []string{
	ActionWalletCreated, ActionPolicyUpdated, ActionWalletFrozen, ActionWalletUnfrozen,
	ActionSendSent, ActionSendBlocked, ActionSendPendingApproval, ActionSendFailed, ActionSendResigned,
	ActionApprovalApproved, ActionApprovalVoted, ActionApprovalRejected, ActionApprovalExpired,
	ActionKeyCreated, ActionKeyRotated, ActionKeyRevoked, ActionPermissionDenied,
	ActionSignedIn, ActionSignInFailed, ActionSignedOut, ActionUserAdded, ActionUserChanged, ActionUserRemoved,
	ActionFeePayerUpdated, ActionX402Signed, ActionX402Expired, ActionMPPSigned, ActionMPPExpired,
	ActionExportRequested, ActionExportApproved, ActionExported, ActionExportRejected, ActionExportVoided,
	ActionKeyMoved, ActionRecoveryStarted, ActionRecoverySigned, ActionRecovered,
	ActionAccountSettingsUpdated,
}

// Record is one entry of the log as stored: its place in the chain
// (Seq), its hashes, and what Entry appended.
type Record struct {
	bun.BaseModel `bun:"table:audit_log"`

	ID        uuid.UUID       `bun:"id,pk,type:uuid"`
	AccountID uuid.UUID       `bun:"account_id,type:uuid"`
	Seq       int64           `bun:"seq"` // 0 and no hashes until sealed; readers see sealed entries only
	At        time.Time       `bun:"at"`
	Actor     string          `bun:"actor"`  // key_<uuid>, user:<address>, slack:<user id>, system
	Action    string          `bun:"action"` // e.g. send.sent
	Target    string          `bun:"target"` // what it acted on, e.g. wallet:<id>
	Details   json.RawMessage `bun:"details,type:json"`
	PrevHash  []byte          `bun:"prev_hash"`
	Hash      []byte          `bun:"hash"`
}

// Append adds an entry to the account's log inside tx, in one round trip
// (the audit_append SQL function); Seal chains it once tx commits. It
// takes no lock: appends of one account run side by side.
func Append(ctx context.Context, tx bun.IDB, e Entry) error {
	return AppendWith(ctx, tx, "", nil, e)
}

// AppendWith is Append in the same statement as the caller's own last
// change, one round trip instead of two: with is data-modifying common
// table expressions ("name AS (UPDATE ...)", no WITH keyword) whose
// placeholders $1..$n take args. They run whether or not anything reads
// them, before the commit like the entry.
func AppendWith(ctx context.Context, tx bun.IDB, with string, args []any, e Entry) error {
	raw, err := json.Marshal(e.Details)
	if err != nil {
		return fmt.Errorf("audit details: %w", err)
	}
	n := len(args)
	stmt := fmt.Sprintf("SELECT audit_append($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
	if with != "" {
		stmt = "WITH " + with + " " + stmt
	}
	args = append(args[:n:n], uuid.New(), e.AccountID, e.At.UTC().Truncate(time.Microsecond), string(e.Actor), e.Action, e.Target, string(raw))
	if _, err = postgres.Exec(ctx, tx, stmt, args...); err != nil {
		return fmt.Errorf("append audit entry: %w", err)
	}
	return nil
}

// ErrSeal wraps every failure to seal: the lock waited for past its
// timeout, the database gone, or an entry that cannot be hashed. A reader
// that must seal first cannot answer without it (503, not a partial log).
var ErrSeal = errors.New("the audit log could not be sealed")

// Seal chains accountID's committed, unsealed entries, oldest first, and
// says how many it sealed. It runs in a transaction of its own (db should
// not be one: the account's seal lock is held to its end).
func Seal(ctx context.Context, db bun.IDB, accountID uuid.UUID) (int, error) {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT audit_seal(?)", accountID).Scan(&n); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrSeal, err)
	}
	return n, nil
}

// SealAll seals every account's unsealed entries (the scheduler's task),
// one account at a time, and says how many entries it sealed. An account
// that fails does not hold back the others: their errors are joined.
func SealAll(ctx context.Context, db bun.IDB) (int, error) {
	var accounts []uuid.UUID
	if err := db.NewRaw("SELECT DISTINCT account_id FROM audit_log WHERE seq IS NULL").Scan(ctx, &accounts); err != nil {
		return 0, fmt.Errorf("find unsealed audit entries: %w", err)
	}
	total := 0
	var errs []error
	for _, a := range accounts {
		n, err := Seal(ctx, db, a)
		if err != nil {
			if ctx.Err() != nil {
				return total, err
			}
			errs = append(errs, fmt.Errorf("account %s: %w", a, err))
			continue
		}
		total += n
	}
	return total, errors.Join(errs...)
}

// ComputeHash is what audit_hash computes in the database: SHA-256 over
// the previous hash and every field, each prefixed by its length (8 bytes,
// big endian); the time as microseconds since the epoch.
func (e *Record) ComputeHash() []byte {
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
