package wallet

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// Audit actions of an export.
const (
	ActionExportRequested = audit.ActionExportRequested
	ActionExportApproved  = audit.ActionExportApproved
	ActionExported        = audit.ActionExported
	ActionExportRejected  = audit.ActionExportRejected
	ActionExportVoided    = audit.ActionExportVoided
)

// ExportState is where an export request is.
type ExportState string

// The export states: pending until an owner decides; approved until a
// worker seals it (exported); rejected; void when, before it was sealed,
// the owner who asked stopped being an owner or the approver stopped
// qualifying.
const (
	ExportPending  ExportState = "pending"
	ExportApproved ExportState = "approved"
	ExportDone     ExportState = "exported"
	ExportRejected ExportState = "rejected"
	ExportVoid     ExportState = "void"
)

// Export is an owner's request to export an envelope wallet's secret,
// sealed to Recipient (an X25519 public key the owner holds the private
// half of). Sealed is set once a worker sealed it, after another owner
// approved it.
type Export struct {
	bun.BaseModel `bun:"table:wallet_exports"`

	ID          uuid.UUID   `bun:"id,pk,type:uuid"`
	AccountID   uuid.UUID   `bun:"account_id,type:uuid"`
	WalletID    uuid.UUID   `bun:"wallet_id,type:uuid"`
	Recipient   []byte      `bun:"recipient"`
	State       ExportState `bun:"state"`
	RequestedBy string      `bun:"requested_by"`
	RequestedAt time.Time   `bun:"requested_at"`
	DecidedBy   *string     `bun:"decided_by"`
	DecidedAt   *time.Time  `bun:"decided_at"`
	Sealed      []byte      `bun:"sealed"`
	SealedAt    *time.Time  `bun:"sealed_at"`
	VoidReason  *string     `bun:"void_reason"`
}

// Export errors.
var (
	// ErrNotExportable: the wallet's key lives in an HSM or a KMS, which
	// never lets it out.
	ErrNotExportable = errors.New("this wallet's key is kept in a signer that never exports it")
	// ErrExportNotFound: no such export request of this wallet.
	ErrExportNotFound = errors.New("export request not found")
	// ErrExportDecided: the request was approved or rejected already.
	ErrExportDecided = errors.New("the export request was already decided")
	// ErrExportSameOwner: the owner who asked cannot approve their own
	// request; another owner must.
	ErrExportSameOwner = errors.New("another owner must approve an export; the owner who requested it cannot")
	// ErrExportApprover: the approver was not an owner before the export
	// was asked, or was added by the owner who asked: one person could
	// otherwise meet the two-person rule with a second owner of their own.
	// ErrExportVoid: the request was voided (its asker is no longer an
	// owner) and can no longer be approved.
	ErrExportVoid     = errors.New("the export request is void")
	ErrExportApprover = errors.New("only an owner who was an owner before the export was asked, and who was not added by the owner who asked, may approve it")
)

// recipientText is how a recipient key is shown: base64, as asked.
func recipientText(r []byte) string { return base64.StdEncoding.EncodeToString(r) }

// RequestExport records an owner's request to export wallet id's secret
// to recipient, with its audit entry. A wallet whose key is not an
// envelope is ErrNotExportable.
func RequestExport(ctx context.Context, db *bun.DB, accountID, id uuid.UUID, by audit.Actor, recipient []byte) (Export, error) {
	if len(recipient) != 32 || signer.CheckExportRecipient(recipient) != nil {
		return Export{}, &FieldError{"recipient_public_key", "must be a base64 X25519 public key (32 bytes) that is not a low-order point"}
	}
	e := Export{ID: uuid.New(), AccountID: accountID, WalletID: id, Recipient: recipient, State: ExportPending,
		RequestedBy: string(by), RequestedAt: nowUTC()}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var b signer.Backend
		err := tx.NewSelect().Table("wallets").Column("signer").Where("id = ? AND account_id = ?", id, accountID).Scan(ctx, &b)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if b != signer.Local {
			return fmt.Errorf("%w (%s)", ErrNotExportable, b)
		}
		if _, err := tx.NewInsert().Model(&e).Exec(ctx); err != nil {
			return fmt.Errorf("insert export request: %w", err)
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: accountID, At: e.RequestedAt, Actor: by, Action: ActionExportRequested, Target: Target(id),
			Details: map[string]any{"wallet_id": id, "export_id": e.ID, "recipient_public_key": recipientText(recipient)},
		})
	})
	return e, err
}

// GetExport reads one export request of wallet id.
func GetExport(ctx context.Context, db bun.IDB, accountID, id, exportID uuid.UUID) (Export, error) {
	var e Export
	err := db.NewSelect().Model(&e).Where("id = ? AND wallet_id = ? AND account_id = ?", exportID, id, accountID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return e, ErrExportNotFound
	}
	return e, err
}

// ExportFilter selects an account's export requests; zero fields select
// all.
type ExportFilter struct {
	WalletID uuid.UUID
	State    ExportState
	// Before: only requests asked before this one (the next page).
	Before *Export
	Limit  int
}

// ListExports lists an account's export requests, newest first.
func ListExports(ctx context.Context, db bun.IDB, accountID uuid.UUID, f ExportFilter) ([]Export, error) {
	out := []Export{}
	q := db.NewSelect().Model(&out).Where("account_id = ?", accountID).
		OrderExpr("requested_at DESC, id DESC").Limit(int64(f.Limit))
	if f.WalletID != uuid.Nil {
		q = q.Where("wallet_id = ?", f.WalletID)
	}
	if f.State != "" {
		q = q.Where("state = ?", f.State)
	}
	if f.Before != nil {
		q = q.Where("(requested_at, id) < (?, ?)", f.Before.RequestedAt, f.Before.ID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// checkApprover applies the two-person rule to by approving e, from the
// users as PostgreSQL has them now: by is not the owner who asked, that
// owner still is one, and by is an owner who was one before the export
// was asked and was not added by the owner who asked. The API checks it
// when the approval is given and the worker again before it seals.
func checkApprover(ctx context.Context, db bun.IDB, e *Export, by string) error {
	if by == e.RequestedBy {
		return ErrExportSameOwner
	}
	owner := func(actor string) (addedBy *string, since time.Time, ok bool, err error) {
		address, isUser := audit.Actor(actor).Person()
		if !isUser {
			return nil, since, false, nil
		}
		err = db.NewSelect().Table("users").Column("added_by", "role_since").
			Where("account_id = ? AND address = ? AND role = 'owner'", e.AccountID, address).Scan(ctx, &addedBy, &since)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, since, false, nil
		}
		return addedBy, since, err == nil, err
	}
	if _, _, ok, err := owner(e.RequestedBy); err != nil {
		return err
	} else if !ok {
		return errExportAskerGone
	}
	addedBy, since, ok, err := owner(by)
	switch {
	case err != nil:
		return err
	case !ok || !since.Before(e.RequestedAt) || (addedBy != nil && *addedBy == e.RequestedBy):
		return ErrExportApprover
	}
	return nil
}

// errExportAskerGone: the owner who asked is no longer an owner; the
// request is void.
var errExportAskerGone = errors.New("the owner who asked for the export is no longer an owner")

// DecideExport approves or rejects an export request. An approval, by an
// owner the two-person rule admits (checkApprover), leaves it approved
// for a worker to seal (SealApproved): nothing here touches the secret.
// Both are audited, the approval with the recipient key the approver
// agreed to.
func DecideExport(ctx context.Context, db *bun.DB, accountID, id, exportID uuid.UUID, by audit.Actor, approve bool) (Export, error) {
	var e Export
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		err := tx.NewSelect().Model(&e).Where("id = ? AND wallet_id = ? AND account_id = ?", exportID, id, accountID).For("UPDATE").Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrExportNotFound
		}
		switch {
		case err != nil:
			return err
		case e.State != ExportPending:
			return ErrExportDecided
		}
		if approve {
			err := checkApprover(ctx, tx, &e, string(by))
			if errors.Is(err, errExportAskerGone) {
				return voidExport(ctx, tx, &e, err.Error())
			}
			if err != nil {
				return err
			}
		}
		at := nowUTC()
		who := string(by)
		e.DecidedBy, e.DecidedAt = &who, &at
		action := ActionExportRejected
		e.State = ExportRejected
		if approve {
			e.State, action = ExportApproved, ActionExportApproved
		}
		if _, err := tx.NewUpdate().Model(&e).Column("state", "decided_by", "decided_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("store export decision: %w", err)
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: accountID, At: at, Actor: by, Action: action, Target: Target(id),
			Details: map[string]any{"wallet_id": id, "export_id": e.ID, "requested_by": e.RequestedBy,
				"recipient_public_key": recipientText(e.Recipient)},
		})
	})
	if err == nil && e.State == ExportVoid {
		return e, fmt.Errorf("%w: %s", ErrExportVoid, *e.VoidReason)
	}
	return e, err
}

// voidExport makes e void for reason, audited, in tx.
func voidExport(ctx context.Context, tx bun.Tx, e *Export, reason string) error {
	at := nowUTC()
	e.State, e.DecidedAt, e.VoidReason = ExportVoid, &at, &reason
	if e.DecidedBy == nil {
		sys := string(audit.System)
		e.DecidedBy = &sys
	}
	if _, err := tx.NewUpdate().Model(e).Column("state", "decided_by", "decided_at", "void_reason").WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("void export: %w", err)
	}
	return audit.Append(ctx, tx, audit.Entry{
		AccountID: e.AccountID, At: at, Actor: audit.System, Action: ActionExportVoided, Target: Target(e.WalletID),
		Details: map[string]any{"wallet_id": e.WalletID, "export_id": e.ID, "requested_by": e.RequestedBy, "reason": reason},
	})
}

// VoidExportsOf voids, in tx, the export requests that actor asked for or
// approved and that are not sealed yet: called when actor stops being an
// owner (removed or demoted).
func VoidExportsOf(ctx context.Context, tx bun.Tx, accountID uuid.UUID, actor, reason string) (int, error) {
	var es []Export
	err := tx.NewSelect().Model(&es).Where("account_id = ? AND state IN ('pending', 'approved')", accountID).
		Where("requested_by = ? OR (state = 'approved' AND decided_by = ?)", actor, actor).For("UPDATE").Scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("read exports of %s: %w", actor, err)
	}
	for i := range es {
		if err := voidExport(ctx, tx, &es[i], reason); err != nil {
			return 0, err
		}
	}
	return len(es), nil
}

// SealFunc seals wallet w's secret to recipient: a worker's keystore.
type SealFunc func(ctx context.Context, w *Wallet, recipient []byte) ([]byte, error)

// SealApproved is the worker's side of an export: it seals one approved
// export request, the oldest, in one transaction of its own. It re-reads
// everything from PostgreSQL (the request, its approval, the owners): a
// message that woke the worker decides nothing. An approval the
// two-person rule no longer admits voids the request instead. It
// reports whether it found one to do; the error is the sealing's.
func SealApproved(ctx context.Context, db *bun.DB, seal SealFunc) (bool, error) {
	found := false
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var e Export
		err := tx.NewSelect().Model(&e).Where("state = ?", ExportApproved).
			OrderExpr("decided_at").Limit(1).For("UPDATE SKIP LOCKED").Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		if e.DecidedBy == nil {
			return voidExport(ctx, tx, &e, "no approver is recorded")
		}
		if err := checkApprover(ctx, tx, &e, *e.DecidedBy); errors.Is(err, errExportAskerGone) || errors.Is(err, ErrExportApprover) || errors.Is(err, ErrExportSameOwner) {
			return voidExport(ctx, tx, &e, err.Error())
		} else if err != nil {
			return err
		}
		w, err := Read(ctx, tx, e.WalletID, true)
		if err != nil {
			return err
		}
		if w.AccountID != e.AccountID {
			return voidExport(ctx, tx, &e, "the wallet is not the account's")
		}
		if w.Signer != signer.Local {
			return voidExport(ctx, tx, &e, fmt.Sprintf("%s (%s)", ErrNotExportable, w.Signer))
		}
		sealed, err := seal(ctx, &w, e.Recipient)
		if err != nil && ctx.Err() == nil {
			// Sealing to this row's key fails every time: void it, so it
			// does not hold back the approved requests behind it.
			return voidExport(ctx, tx, &e, fmt.Sprintf("the secret could not be sealed to the recipient key: %v", err))
		}
		if err != nil {
			return err
		}
		at := nowUTC()
		e.State, e.Sealed, e.SealedAt = ExportDone, sealed, &at
		if _, err := tx.NewUpdate().Model(&e).Column("state", "sealed", "sealed_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("store sealed export: %w", err)
		}
		if _, err := tx.NewRaw(`UPDATE wallets SET exported_at = COALESCE(exported_at, ?) WHERE id = ?`, at, e.WalletID).Exec(ctx); err != nil {
			return fmt.Errorf("mark wallet exported: %w", err)
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: e.AccountID, At: at, Actor: audit.System, Action: ActionExported, Target: Target(e.WalletID),
			Details: map[string]any{"wallet_id": e.WalletID, "export_id": e.ID, "requested_by": e.RequestedBy,
				"approved_by": *e.DecidedBy, "recipient_public_key": recipientText(e.Recipient)},
		})
	})
	return found, err
}
