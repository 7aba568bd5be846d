// Package approval is the approval state machine
// (docs/decisions/approvals.md): payments a policy allowed but parked for a
// human, and their transitions
//
//	pending → signing → sent | rejected
//	pending → rejected | expired
//	signing → pending (an approve that was never executed)
//
// Every transition is a conditional UPDATE on the expected state, so of two
// concurrent actors exactly one wins, and each writes its event and audit
// entry in the same transaction. Signing itself is the payment engine's
// (internal/payment); this package holds no keys.
package approval

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// Statuses, moved only by the transitions above.
const (
	Pending  = "pending"
	Signing  = "signing"
	Sent     = "sent"
	Rejected = "rejected"
	Expired  = "expired"
)

// Lifetime is how long an approval waits for a human before it expires.
const Lifetime = 7 * 24 * time.Hour

// Reasons a system rejection records.
const (
	// ReasonPolicyViolation: the policy, evaluated again at approval,
	// blocks the payment (ReasonDetail names the rule).
	ReasonPolicyViolation = "policy_violation_at_approval"
	// ReasonRefused: the node's preflight simulation refused the signed
	// transaction (not enough USDC or SOL); nothing was sent.
	ReasonRefused = "refused_by_node"
	// ReasonAccountFrozen: the wallet's or the recipient's token account
	// of the asset is frozen by its mint's freeze authority (ReasonDetail
	// says whose); nothing was signed.
	ReasonAccountFrozen = "account_frozen"
	// ReasonTxFailed: the transaction failed or expired before its first
	// broadcast reported; nothing was spent.
	ReasonTxFailed = "transaction_failed"
)

// SystemActor is the actor of automatic transitions.
const SystemActor = "system"

// MaxNote is the longest note on an approve or reject, in characters.
const MaxNote = 500

// Approval is a payment parked for a human.
type Approval struct {
	bun.BaseModel `bun:"table:approvals,alias:a"`

	ID          uuid.UUID     `bun:"id,pk,type:uuid"`
	AccountID   uuid.UUID     `bun:"account_id,type:uuid"`
	WalletID    uuid.UUID     `bun:"wallet_id,type:uuid"`
	RequestID   uuid.NullUUID `bun:"request_id,type:uuid"`
	RequestedBy uuid.NullUUID `bun:"requested_by,type:uuid"` // the API key of the send
	// RequestedLineage is that key's rotation lineage: no key descending
	// from it may approve.
	RequestedLineage uuid.NullUUID `bun:"requested_lineage,type:uuid"`
	// RequestedByUser is the address of the dashboard user who made the
	// send (RequestedBy is NULL then): no key descending from them, nor
	// they, may approve.
	RequestedByUser *string `bun:"requested_by_user"`
	// Requesters are the actors who may not approve it (payment.Request's
	// Requesters); nil on approvals made before they were recorded: then
	// RequesterLineage alone.
	Requesters []string `bun:"requesters,array"`
	// Asset is the symbol of what the payment pays (USDC before
	// currencies), Amount its base units.
	Asset  string         `bun:"asset,nullzero"`
	Amount money.Quantity `bun:"amount_micros"`
	To     string         `bun:"to_address"`
	Memo   *string        `bun:"memo"`
	Status string         `bun:"status"`
	Reason *string        `bun:"reason"`
	// ReasonDetail is the policy rule or the node's message of a system
	// rejection.
	ReasonDetail *string      `bun:"reason_detail"`
	Signature    *string      `bun:"signature"`
	ApprovedBy   *string      `bun:"approved_by"`
	RejectedBy   *string      `bun:"rejected_by"`
	Note         *string      `bun:"note"`
	CreatedAt    time.Time    `bun:"created_at"`
	ExpiresAt    time.Time    `bun:"expires_at"`
	DecidedAt    bun.NullTime `bun:"decided_at"` // when approved, rejected or expired
	// ApprovalsNeeded is the quorum recorded by the last vote or the
	// decision; nil before any (Needed is the one to show).
	ApprovalsNeeded *int `bun:"approvals_needed"`

	// Votes are its approves, oldest first (on reads; Vote's and the
	// decisions' answers too).
	Votes []Vote `bun:"-"`
	// Needed is how many people must approve it (on reads): a pending
	// approval's quorum now (its wallet's approvals_required, at most the
	// account's people who can approve), else the one it was decided
	// with.
	Needed int `bun:"needed,scanonly"`

	AgentLabel string `bun:"agent_label,scanonly"` // the wallet's label, on reads
	// TransactionStatus is its transaction's status once signed, on reads.
	TransactionStatus *string `bun:"transaction_status,scanonly"`
	// X402 (reads): the approval parks an x402 payment; Resource is what
	// it buys and Description the seller's words for it.
	X402        bool    `bun:"x402,scanonly"`
	Resource    *string `bun:"x402_resource,scanonly"`
	Description *string `bun:"x402_description,scanonly"`
	// Protocol (reads) is mpp when it parks an MPP charge (else x402 or
	// empty); Realm names the seller and Splits its further recipients
	// ([{to, amount_micros}]).
	Protocol string          `bun:"x402_protocol,scanonly"`
	Realm    *string         `bun:"x402_realm,scanonly"`
	Splits   json.RawMessage `bun:"x402_splits,scanonly"`
}

// readColumns are what Get and List read: the approval, its wallet's
// label and its transaction's status.
const readColumns = "a.*, w.label AS agent_label, CASE WHEN a.status = 'pending' THEN " + quorumSQL + " ELSE COALESCE(a.approvals_needed, 1) END AS needed, (SELECT t.status FROM transactions AS t WHERE t.approval_id = a.id ORDER BY t.created_at DESC LIMIT 1) AS transaction_status, " +
	"x.x402 IS NOT NULL AS x402, x.x402 ->> 'resource' AS x402_resource, NULLIF(x.x402 ->> 'description', '') AS x402_description, " +
	"x.x402 ->> 'protocol' AS x402_protocol, NULLIF(x.x402 ->> 'realm', '') AS x402_realm, x.x402 -> 'splits' AS x402_splits"

// PublicID is how an approval is named on the wire: "ap_" + uuid.
func PublicID(id uuid.UUID) string { return "ap_" + id.String() }

// ParseID reads a public approval id ("ap_<uuid>", or the bare uuid).
func ParseID(s string) (uuid.UUID, bool) {
	id, err := uuid.Parse(strings.TrimPrefix(s, "ap_"))
	return id, err == nil
}

// Requester is the actor that made the send: "key_<uuid>" (the key
// itself) or "user:<address>", or "" when unknown (sends recorded before
// people were).
func (a *Approval) Requester() string { return a.actor(a.RequestedBy) }

// RequesterLineage is the requester as the requester rule compares it
// with an approver's ancestry: "key_<lineage root>" or "user:<address>".
func (a *Approval) RequesterLineage() string { return a.actor(a.RequestedLineage) }

// actor names key, or else the requesting person.
func (a *Approval) actor(key uuid.NullUUID) string {
	switch {
	case key.Valid:
		return string(audit.KeyActor(key.UUID))
	case a.RequestedByUser != nil:
		return string(audit.UserActor(*a.RequestedByUser))
	}
	return ""
}

// Refuses reports whether an approver of this ancestry is refused by the
// requester rule: one of the payment's requesters is in it.
func (a *Approval) Refuses(ancestry []string) bool {
	rs := a.Requesters
	if rs == nil {
		rs = []string{a.RequesterLineage()}
	}
	return slices.ContainsFunc(rs, func(r string) bool { return r != "" && slices.Contains(ancestry, r) })
}

// ErrNotFound means no approval with that id in that account; another
// account's approval is indistinguishable from a missing one.
var ErrNotFound = errors.New("approval not found")

// ErrRequester refuses an approve by the payment's requester: the person
// who made the send, or a key descending from the requester (the
// requesting key, one rotated from it, a key it or they minted): no one
// waves their own payments through.
var ErrRequester = errors.New("requester cannot approve")

// NotPendingError refuses acting on an approval that is no longer pending.
type NotPendingError struct{ Status string }

func (e *NotPendingError) Error() string {
	if e.Status == Pending {
		// It left pending and came back while we acted on it.
		return "approval changed while acting on it; try again"
	}
	return fmt.Sprintf("approval is %s, not pending", e.Status)
}

// labelColumn adds the wallet's label to a RETURNING list.
const labelColumn = "(SELECT label FROM wallets WHERE wallets.id = approvals.wallet_id) AS agent_label"

func target(id uuid.UUID) string { return "approval:" + PublicID(id) }

// Start approves as actor, whose ancestry is ancestry and whom the vote
// counts as (VoteFor with the actor as its own person): pending →
// signing when one approve suffices; with a larger quorum the approval
// stays pending with the vote counted.
func Start(ctx context.Context, db *bun.DB, accountID, id uuid.UUID, actor string, ancestry []string, note *string) (Approval, error) {
	person := ""
	if audit.Actor(actor).IsPerson() {
		person = actor
	}
	a, _, err := VoteFor(ctx, db, accountID, id, Voter{Actor: actor, Person: person, Ancestry: ancestry}, note)
	return a, err
}

// refusal explains why a transition from pending did not happen;
// ancestry is the approver's (nil for a reject).
func refusal(ctx context.Context, db *bun.DB, accountID, id uuid.UUID, ancestry []string) error {
	var a Approval
	err := db.NewSelect().Model(&a).Where("id = ? AND account_id = ?", id, accountID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("read approval: %w", err)
	}
	if a.Refuses(ancestry) {
		return ErrRequester
	}
	if a.Status == Pending {
		// Past its lifetime but not yet swept: expire it now.
		expired, err := expireOne(ctx, db, id, time.Time{}, "now()")
		if err != nil {
			return err
		}
		if expired {
			return &NotPendingError{Status: Expired}
		}
	}
	return &NotPendingError{Status: a.Status}
}

// Release returns an approval whose approve was never executed (signing,
// nothing signed) to pending, and withdraws that final approve's vote
// (the voter may approve again). False means the engine got to it first.
func Release(ctx context.Context, db bun.IDB, id uuid.UUID) (bool, error) {
	var n int
	err := db.NewRaw(`WITH old AS (SELECT id, approved_by FROM approvals WHERE id = ? AND status = ? AND signature IS NULL FOR UPDATE),
		up AS (UPDATE approvals AS a SET status = ?, approved_by = NULL, note = NULL, decided_at = NULL FROM old WHERE a.id = old.id RETURNING a.id),
		`+withdrawSQL+`
		SELECT count(*) FROM up`, id, Signing, Pending).Scan(ctx, &n)
	if err != nil {
		return false, fmt.Errorf("release approval: %w", err)
	}
	return n == 1, nil
}

// Reject closes a pending approval without spending, by actor; the
// requester may reject its own payment.
func Reject(ctx context.Context, db *bun.DB, accountID, id uuid.UUID, actor string, note *string) (Approval, error) {
	var a Approval
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		err := tx.NewRaw(`UPDATE approvals SET status = ?, rejected_by = ?, note = ?, decided_at = now(), approvals_needed = `+neededNowSQL+`
			WHERE id = ? AND account_id = ? AND status = ? AND expires_at > now()
			RETURNING *, `+labelColumn, Rejected, actor, note, id, accountID, Pending).Scan(ctx, &a)
		if err != nil {
			return err
		}
		at := a.DecidedAt.Time
		if err := emitRejected(ctx, tx, &a, at); err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: a.AccountID,
			At:        at,
			Actor:     audit.Actor(actor),
			Action:    audit.ActionApprovalRejected,
			Target:    target(a.ID),
			Details:   map[string]any{"approval_id": PublicID(a.ID), "wallet_id": a.WalletID, "amount": a.Amount, "asset": a.Asset, "to": a.To, "note": note},
		})
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, refusal(ctx, db, accountID, id, nil)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("reject approval: %w", err)
	}
	a.Needed = a.neededAtDecision()
	return a, loadVotes(ctx, db, []*Approval{&a})
}

func emitRejected(ctx context.Context, tx bun.IDB, a *Approval, at time.Time) error {
	votes, err := votesOf(ctx, tx, a.ID)
	if err != nil {
		return err
	}
	_, err = webhook.Emit(ctx, tx, a.AccountID, at, webhook.KindApprovalRejected, map[string]any{
		"approval_id": PublicID(a.ID), "wallet_id": a.WalletID, "amount": a.Amount, "asset": a.Asset, "to": a.To,
		"rejected_by": a.RejectedBy, "reason": a.Reason, "approvals": votes, "approvals_needed": a.neededAtDecision(),
	})
	return err
}

// neededSQL is the quorum of the approval being updated, from its
// wallet, for the statement that decides it.
const neededNowSQL = `(SELECT ` + quorumSQL + ` FROM wallets AS w WHERE w.id = approvals.wallet_id)`

// neededAtDecision is the quorum a decided approval recorded (1 for
// those decided before quorums were).
func (a *Approval) neededAtDecision() int {
	if a.ApprovalsNeeded != nil {
		return *a.ApprovalsNeeded
	}
	return 1
}

// ErrNotSigning means the approval is not awaiting execution (already
// executed, or returned to pending): there is nothing to do.
var ErrNotSigning = errors.New("approval is not awaiting execution")

// Claim locks an approval awaiting execution (signing, nothing signed yet)
// inside the engine's transaction; else ErrNotSigning.
func Claim(ctx context.Context, tx bun.Tx, id uuid.UUID) (Approval, error) {
	var a Approval
	err := tx.NewSelect().Model(&a).Where("id = ? AND status = ? AND signature IS NULL", id, Signing).
		For("UPDATE").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, ErrNotSigning
	}
	if err != nil {
		return Approval{}, fmt.Errorf("claim approval: %w", err)
	}
	return a, nil
}

// Signed records the signature of a claimed approval's transaction and the
// approver's audit entry; it stays signing until its broadcast reports.
func Signed(ctx context.Context, tx bun.Tx, a *Approval, transactionID uuid.UUID, signature string, at time.Time) error {
	if _, err := tx.NewUpdate().Table("approvals").Set("signature = ?", signature).Where("id = ?", a.ID).Exec(ctx); err != nil {
		return fmt.Errorf("store approval signature: %w", err)
	}
	a.Signature = &signature
	actor := SystemActor
	if a.ApprovedBy != nil {
		actor = *a.ApprovedBy
	}
	votes, err := votesOf(ctx, tx, a.ID)
	if err != nil {
		return err
	}
	return audit.Append(ctx, tx, audit.Entry{AccountID: a.AccountID, At: at, Actor: audit.Actor(actor), Action: audit.ActionApprovalApproved, Target: target(a.ID), Details: map[string]any{
		"approval_id": PublicID(a.ID), "wallet_id": a.WalletID, "amount": a.Amount, "asset": a.Asset, "to": a.To,
		"transaction_id": transactionID, "signature": signature, "note": a.Note,
		"approvals": votes, "approvals_needed": a.neededAtDecision(),
	}})
}

// MarkSent moves a signing approval to sent once its transaction is
// broadcast (or confirmed), with the approval.approved event. False means
// it was not signing (already sent, or closed).
func MarkSent(ctx context.Context, tx bun.IDB, id uuid.UUID, at time.Time) (bool, error) {
	var a Approval
	err := tx.NewRaw(`UPDATE approvals SET status = ? WHERE id = ? AND status = ? AND signature IS NOT NULL RETURNING *`,
		Sent, id, Signing).Scan(ctx, &a)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mark approval sent: %w", err)
	}
	votes, err := votesOf(ctx, tx, a.ID)
	if err != nil {
		return false, err
	}
	_, err = webhook.Emit(ctx, tx, a.AccountID, at, webhook.KindApprovalApproved, map[string]any{
		"approval_id": PublicID(a.ID), "wallet_id": a.WalletID, "signature": a.Signature, "amount": a.Amount, "asset": a.Asset, "to": a.To,
		"approvals": votes, "approvals_needed": a.neededAtDecision(),
	})
	return err == nil, err
}

// GrantLifetime is how long an approved x402 payment may be paid with its
// approval_id: the agent fetches the seller's challenge again and pays at
// once, so minutes suffice; a grant unused by then cannot be used.
const GrantLifetime = 15 * time.Minute

// Grant moves a signing x402 or MPP approval to sent with nothing signed: the
// human's approval is a grant the agent redeems once, with a fresh
// challenge, within GrantLifetime of decided_at. It emits
// approval.approved (no signature) and the approver's audit entry.
func Grant(ctx context.Context, tx bun.Tx, a *Approval, at time.Time) error {
	res, err := tx.NewUpdate().Table("approvals").Set("status = ?", Sent).
		Where("id = ? AND status = ? AND signature IS NULL", a.ID, Signing).Exec(ctx)
	if err != nil {
		return fmt.Errorf("grant approval: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	actor := SystemActor
	if a.ApprovedBy != nil {
		actor = *a.ApprovedBy
	}
	votes, err := votesOf(ctx, tx, a.ID)
	if err != nil {
		return err
	}
	// The protocol of the parked payment: x402 or mpp.
	kind := "x402"
	if err := tx.NewRaw("SELECT COALESCE(x402 ->> 'protocol', 'x402') FROM send_requests WHERE id = ?", a.RequestID).Scan(ctx, &kind); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read the grant's protocol: %w", err)
	}
	if err := audit.Append(ctx, tx, audit.Entry{AccountID: a.AccountID, At: at, Actor: audit.Actor(actor), Action: audit.ActionApprovalApproved, Target: target(a.ID), Details: map[string]any{
		"approval_id": PublicID(a.ID), "wallet_id": a.WalletID, "amount": a.Amount, "asset": a.Asset, "to": a.To,
		"kind": kind, "note": a.Note, "approvals": votes, "approvals_needed": a.neededAtDecision(),
	}}); err != nil {
		return err
	}
	_, err = webhook.Emit(ctx, tx, a.AccountID, at, webhook.KindApprovalApproved, map[string]any{
		"approval_id": PublicID(a.ID), "wallet_id": a.WalletID, "signature": nil, "amount": a.Amount, "asset": a.Asset, "to": a.To, "kind": kind,
		"approvals": votes, "approvals_needed": a.neededAtDecision(),
	})
	return err
}

// RejectBySystem closes a signing approval without spending: the policy
// no longer allows it, or its transaction could not be sent. It records
// reason in the audit log and emits approval.rejected by "system". False
// means it was not signing.
func RejectBySystem(ctx context.Context, tx bun.IDB, id uuid.UUID, reason, detail string, at time.Time) (bool, error) {
	var a Approval
	err := tx.NewRaw(`UPDATE approvals SET status = ?, rejected_by = ?, reason = ?, reason_detail = ?
		WHERE id = ? AND status = ? RETURNING *`,
		Rejected, SystemActor, reason, detail, id, Signing).Scan(ctx, &a)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reject approval: %w", err)
	}
	if err := emitRejected(ctx, tx, &a, at); err != nil {
		return false, err
	}
	err = audit.Append(ctx, tx, audit.Entry{AccountID: a.AccountID, At: at, Actor: audit.Actor(SystemActor), Action: audit.ActionApprovalRejected, Target: target(a.ID), Details: map[string]any{
		"approval_id": PublicID(a.ID), "wallet_id": a.WalletID, "amount": a.Amount, "asset": a.Asset, "to": a.To,
		"reason": reason, "detail": detail, "approved_by": a.ApprovedBy,
	}})
	return err == nil, err
}

// expireOne closes one pending approval past its lifetime, with its event
// and audit entry. clock is the SQL time compared with expires_at ("?" for
// at, or "now()" for the database's clock).
func expireOne(ctx context.Context, db *bun.DB, id uuid.UUID, at time.Time, clock string) (bool, error) {
	var expired bool
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var a Approval
		q := `UPDATE approvals SET status = ?, decided_at = ` + clock + `, approvals_needed = ` + neededNowSQL + ` WHERE id = ? AND status = ? AND expires_at <= ` + clock + ` RETURNING *`
		args := []any{Expired, id, Pending}
		if clock == "?" {
			args = []any{Expired, at, id, Pending, at}
		}
		err := tx.NewRaw(q, args...).Scan(ctx, &a)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("expire approval: %w", err)
		}
		expired = true
		at := a.DecidedAt.Time
		votes, err := votesOf(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		data := map[string]any{"approval_id": PublicID(a.ID), "wallet_id": a.WalletID, "amount": a.Amount, "asset": a.Asset, "to": a.To, "expires_at": a.ExpiresAt,
			"approvals": votes, "approvals_needed": a.neededAtDecision()}
		if _, err := webhook.Emit(ctx, tx, a.AccountID, at, webhook.KindApprovalExpired, data); err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: a.AccountID,
			At:        at,
			Actor:     audit.Actor(SystemActor),
			Action:    audit.ActionApprovalExpired,
			Target:    target(a.ID),
			Details:   data,
		})
	})
	return expired, err
}

// AbandonedAfter is how long an approval may stay in signing with nothing
// signed before Sweep returns it to pending: longer than any approve waits
// (its wait is at most 20 s plus a grace), so only an approve whose process
// died is affected.
const AbandonedAfter = 2 * time.Minute

// SweepStats counts what one Sweep did.
type SweepStats struct{ Expired, Released int }

// sweepBatch bounds one sweep's work; the next run takes the rest.
const sweepBatch = 1000

// Sweep expires the approvals pending past their lifetime at now, each in
// its own transaction, and returns to pending the approvals held in
// signing, unsigned, for longer than stale on the database's clock (the
// clock that stamped them; their approve died between its two steps, and
// the human may approve again).
func Sweep(ctx context.Context, db *bun.DB, now time.Time, stale time.Duration) (SweepStats, error) {
	var st SweepStats
	var ids []uuid.UUID
	err := db.NewSelect().Table("approvals").Column("id").
		Where("status = ? AND expires_at <= ?", Pending, now).OrderExpr("expires_at").Limit(sweepBatch).
		Scan(ctx, &ids)
	if err != nil {
		return st, fmt.Errorf("find expired approvals: %w", err)
	}
	for _, id := range ids {
		ok, err := expireOne(ctx, db, id, now, "?")
		if err != nil {
			return st, err
		}
		if ok {
			st.Expired++
		}
	}
	err = db.NewRaw(`WITH old AS (SELECT id, approved_by FROM approvals
			WHERE status = ? AND signature IS NULL AND decided_at < now() - ? * interval '1 microsecond' FOR UPDATE SKIP LOCKED),
		up AS (UPDATE approvals AS a SET status = ?, approved_by = NULL, note = NULL, decided_at = NULL FROM old WHERE a.id = old.id RETURNING a.id),
		`+withdrawSQL+`
		SELECT count(*) FROM up`, Signing, stale.Microseconds(), Pending).Scan(ctx, &st.Released)
	if err != nil {
		return st, fmt.Errorf("release stale approvals: %w", err)
	}
	return st, nil
}

// Get reads an approval of the account, with its wallet's label.
func Get(ctx context.Context, db bun.IDB, accountID, id uuid.UUID) (Approval, error) {
	var a Approval
	err := db.NewSelect().Model(&a).ColumnExpr(readColumns).
		Join("JOIN wallets AS w ON w.id = a.wallet_id").
		Join("LEFT JOIN send_requests AS x ON x.id = a.request_id").
		Where("a.id = ? AND a.account_id = ?", id, accountID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, ErrNotFound
	}
	if err != nil {
		return Approval{}, fmt.Errorf("read approval: %w", err)
	}
	if err := loadVotes(ctx, db, []*Approval{&a}); err != nil {
		return Approval{}, err
	}
	return a, nil
}

// Cursor is the position after which a page starts (the last row seen).
type Cursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// List returns up to limit approvals of the account, newest first,
// optionally only those with status, starting after cursor; only those of
// wallets when it is not nil (a key's wallet scope).
func List(ctx context.Context, db bun.IDB, accountID uuid.UUID, wallets []uuid.UUID, status string, after *Cursor, limit int) ([]Approval, error) {
	as := []Approval{}
	q := db.NewSelect().Model(&as).ColumnExpr(readColumns).
		Join("JOIN wallets AS w ON w.id = a.wallet_id").
		Join("LEFT JOIN send_requests AS x ON x.id = a.request_id").
		Where("a.account_id = ?", accountID).
		OrderExpr("a.created_at DESC, a.id DESC").Limit(int64(limit))
	if status != "" {
		q = q.Where("a.status = ?", status)
	}
	if wallets != nil {
		q = q.Where("a.wallet_id IN (?)", bun.List(wallets))
	}
	if after != nil {
		q = q.Where("(a.created_at, a.id) < (?, ?)", after.CreatedAt, after.ID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	ptrs := make([]*Approval, len(as))
	for i := range as {
		ptrs[i] = &as[i]
	}
	if err := loadVotes(ctx, db, ptrs); err != nil {
		return nil, err
	}
	return as, nil
}
