package wallet

import (
	"context"
	"database/sql"
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
	ActionExportRequested = "wallet.export_requested"
	ActionExported        = "wallet.exported"
	ActionExportRejected  = "wallet.export_rejected"
)

// ExportState is where an export request is.
type ExportState string

// The export states.
const (
	ExportPending  ExportState = "pending"
	ExportDone     ExportState = "exported"
	ExportRejected ExportState = "rejected"
)

// Export is an owner's request to export an envelope wallet's secret,
// sealed to Recipient (an X25519 public key the owner holds the private
// half of). Sealed is set once another owner approved it.
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
)

// RequestExport records an owner's request to export wallet id's secret
// to recipient, with its audit entry. A wallet whose key is not an
// envelope is ErrNotExportable.
func RequestExport(ctx context.Context, db *bun.DB, accountID, id uuid.UUID, by audit.Actor, recipient []byte) (Export, error) {
	if len(recipient) != 32 {
		return Export{}, &FieldError{"recipient_public_key", "must be a base64 X25519 public key (32 bytes)"}
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
			Details: map[string]any{"wallet_id": id, "export_id": e.ID},
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

// ExportSealer seals a wallet's secret to a recipient: a worker's keystore,
// reached through the API (keymaker).
type ExportSealer func(ctx context.Context, walletID uuid.UUID, recipient []byte) ([]byte, error)

// DecideExport approves (seal is called, under the request's lock, and
// its answer stored; the wallet is marked exported for good) or rejects
// an export request, by an owner other than the one who asked. Both are
// audited.
func DecideExport(ctx context.Context, db *bun.DB, accountID, id, exportID uuid.UUID, by audit.Actor, approve bool, seal ExportSealer) (Export, error) {
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
		case approve && e.RequestedBy == string(by):
			return ErrExportSameOwner
		}
		at := nowUTC()
		who := string(by)
		e.DecidedBy, e.DecidedAt = &who, &at
		action := ActionExportRejected
		e.State = ExportRejected
		if approve {
			if e.Sealed, err = seal(ctx, id, e.Recipient); err != nil {
				return err
			}
			e.State, action = ExportDone, ActionExported
			if _, err := tx.NewRaw(`UPDATE wallets SET exported_at = COALESCE(exported_at, ?) WHERE id = ?`, at, id).Exec(ctx); err != nil {
				return fmt.Errorf("mark wallet exported: %w", err)
			}
		}
		if _, err := tx.NewUpdate().Model(&e).Column("state", "decided_by", "decided_at", "sealed").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("store export decision: %w", err)
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: accountID, At: at, Actor: by, Action: action, Target: Target(id),
			Details: map[string]any{"wallet_id": id, "export_id": e.ID, "requested_by": e.RequestedBy},
		})
	})
	return e, err
}
