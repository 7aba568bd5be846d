package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// WalletExport is an owner's request to export a wallet's secret.
type WalletExport struct {
	ID       string `json:"id" format:"uuid" doc:"Export request id." example:"0b6f3c2e-5d4a-4e7b-9c1d-2a3b4c5d6e7f"`
	WalletID string `json:"wallet_id" format:"uuid" doc:"The wallet whose secret is exported." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	State    string `json:"state" enum:"pending,approved,exported,rejected,void" doc:"pending until another owner approves or rejects it; approved until a worker has sealed the secret (exported); void when, before that, the owner who asked stopped being an owner or the approver stopped qualifying." example:"pending"`
	// The approver sees what they agree to: the key the secret goes to.
	RecipientPublicKey string     `json:"recipient_public_key" doc:"The X25519 public key (32 bytes, base64) the secret is sealed to, as the owner who asked gave it." example:"q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80="`
	RequestedBy        string     `json:"requested_by" doc:"The owner who asked (user:<address>)." example:"user:9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	RequestedAt        time.Time  `json:"requested_at" doc:"When it was asked, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	DecidedBy          *string    `json:"decided_by,omitempty" doc:"The owner who approved or rejected it." example:"user:7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"`
	DecidedAt          *time.Time `json:"decided_at,omitempty" doc:"When it was approved, rejected or voided, ISO 8601 UTC." example:"2026-04-01T12:05:00Z"`
	SealedAt           *time.Time `json:"sealed_at,omitempty" doc:"When a worker sealed the secret, ISO 8601 UTC." example:"2026-04-01T12:05:01Z"`
	VoidReason         *string    `json:"void_reason,omitempty" doc:"Why the request is void." example:"the owner who asked for the export is no longer an owner"`
	// The secret, sealed: only the recipient key's holder opens it.
	SealedSecret *string `json:"sealed_secret,omitempty" example:"BASE64..." doc:"Once exported: the wallet's 32-byte Ed25519 seed sealed with HPKE (RFC 9180: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-256-GCM, base mode; info \"agentwallet/wallet-export/v1/\" followed by the wallet's 32-byte public key) to recipient_public_key, base64: the encapsulated key followed by the ciphertext."`
}

func exportOf(e *wallet.Export) WalletExport {
	out := WalletExport{ID: e.ID.String(), WalletID: e.WalletID.String(), State: string(e.State), RequestedBy: e.RequestedBy,
		RequestedAt: e.RequestedAt.UTC(), DecidedBy: e.DecidedBy, DecidedAt: e.DecidedAt, SealedAt: e.SealedAt, VoidReason: e.VoidReason,
		RecipientPublicKey: base64.StdEncoding.EncodeToString(e.Recipient)}
	if e.Sealed != nil {
		s := base64.StdEncoding.EncodeToString(e.Sealed)
		out.SealedSecret = &s
	}
	return out
}

type exportOutput struct {
	Status int
	Body   WalletExport
}

type requestExportInput struct {
	ID   string `path:"id" doc:"Wallet id (UUIDv4)."`
	Body struct {
		RecipientPublicKey string `json:"recipient_public_key" doc:"The X25519 public key (32 bytes, base64) the secret is sealed to; the owner holds its private half." example:"q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80="`
	}
}

type listExportsInput struct {
	WalletID string `query:"wallet_id" doc:"Only this wallet's requests." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	State    string `query:"state" enum:"pending,approved,exported,rejected,void" doc:"Only requests in this state." example:"pending"`
	PageQuery
}

type listExportsOutput struct {
	Body struct {
		Exports    []WalletExport `json:"exports" doc:"Newest first."`
		NextCursor *string        `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

type exportInput struct {
	ID       string `path:"id" doc:"Wallet id (UUIDv4)."`
	ExportID string `path:"export_id" doc:"Export request id."`
}

// registerExports mounts the export of a wallet's secret: asked by an
// owner, approved by another, sealed to a key the first one supplies.
func (s *server) registerExports(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "request-wallet-export",
		Method:      http.MethodPost,
		Path:        Prefix + "/wallets/{id}/exports",
		Summary:     "Ask to export a wallet's secret",
		Description: "An owner asks for the wallet's secret, to be sealed to an X25519 public key they hold the private half of. Nothing leaves until another owner approves. " +
			"A wallet whose key is kept in an HSM or a KMS (signer pkcs11, vault, awskms) is never exported (409). Audited.",
		Tags:          []string{"Custody"},
		DefaultStatus: http.StatusCreated,
		MaxBodyBytes:  MaxBodyBytes + 1,
		Errors:        []int{400, 401, 404, 409, 413, 422},
	}, s.requestExport)
	huma.Register(api, huma.Operation{
		OperationID: "list-wallet-exports",
		Method:      http.MethodGet,
		Path:        Prefix + "/exports",
		Summary:     "List export requests",
		Description: "The account's requests to export a wallet's secret, newest first: what an owner looks at before approving one (the wallet, who asked, and the recipient key).",
		Tags:        []string{"Custody"},
		Errors:      []int{400, 401, 403, 422},
	}, s.listExports)
	huma.Register(api, huma.Operation{
		OperationID: "get-wallet-export",
		Method:      http.MethodGet,
		Path:        Prefix + "/wallets/{id}/exports/{export_id}",
		Summary:     "Read an export request",
		Description: "The request's state and, once approved, the secret sealed to the recipient key.",
		Tags:        []string{"Custody"},
		Errors:      []int{401, 404},
	}, s.getExport)
	huma.Register(api, huma.Operation{
		OperationID: "approve-wallet-export",
		Method:      http.MethodPost,
		Path:        Prefix + "/wallets/{id}/exports/{export_id}/approve",
		Summary:     "Approve an export",
		Description: "Another owner than the one who asked approves: a worker then seals the wallet's secret to the recipient key, and the wallet is marked exported for good (`exported_at`). " +
			"The approver must have been an owner before the export was asked, and must not have been added by the owner who asked (403 otherwise, and for the owner who asked). " +
			"The answer is the request once a worker sealed it (exported), or, when none did within a few seconds, approved: a worker seals it as soon as one runs. 409 when already decided or void. Audited.",
		Tags:   []string{"Custody"},
		Errors: []int{401, 403, 404, 409},
	}, s.decideExport(true))
	huma.Register(api, huma.Operation{
		OperationID: "reject-wallet-export",
		Method:      http.MethodPost,
		Path:        Prefix + "/wallets/{id}/exports/{export_id}/reject",
		Summary:     "Reject an export",
		Description: "An owner rejects the request; nothing is exported. 409 when already decided. Audited.",
		Tags:        []string{"Custody"},
		Errors:      []int{401, 404, 409},
	}, s.decideExport(false))
}

func (s *server) requestExport(ctx context.Context, in *requestExportInput) (*exportOutput, error) {
	id, err := s.walletID(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	recipient, err := base64.StdEncoding.DecodeString(in.Body.RecipientPublicKey)
	if err != nil || len(recipient) != 32 {
		return nil, fieldError("recipient_public_key", "must be a base64 X25519 public key (32 bytes)")
	}
	pr := principal(ctx)
	e, err := wallet.RequestExport(ctx, s.DB, pr.AccountID, id, audit.Actor(pr.ActorID()), recipient)
	if err != nil {
		return nil, s.exportFailed(ctx, err)
	}
	s.log.InfoContext(ctx, "wallet export requested", "wallet_id", id, "export_id", e.ID, "by", pr.ActorID())
	return &exportOutput{Status: http.StatusCreated, Body: exportOf(&e)}, nil
}

func (s *server) getExport(ctx context.Context, in *exportInput) (*exportOutput, error) {
	id, exportID, err := s.exportIDs(ctx, in)
	if err != nil {
		return nil, err
	}
	e, err := wallet.GetExport(ctx, s.DB, principal(ctx).AccountID, id, exportID)
	if err != nil {
		return nil, s.exportFailed(ctx, err)
	}
	return &exportOutput{Status: http.StatusOK, Body: exportOf(&e)}, nil
}

func (s *server) decideExport(approve bool) func(context.Context, *exportInput) (*exportOutput, error) {
	return func(ctx context.Context, in *exportInput) (*exportOutput, error) {
		id, exportID, err := s.exportIDs(ctx, in)
		if err != nil {
			return nil, err
		}
		pr := principal(ctx)
		e, err := wallet.DecideExport(ctx, s.DB, pr.AccountID, id, exportID, audit.Actor(pr.ActorID()), approve)
		if err != nil {
			return nil, s.exportFailed(ctx, err)
		}
		if approve && s.Exports != nil {
			if sealed, err := s.Exports.Sealed(ctx, pr.AccountID, id, exportID); err == nil {
				e = sealed
			} else {
				// The approval is committed; a worker seals it later.
				s.log.WarnContext(ctx, "approved export not read back", "export_id", exportID, "err", err)
			}
		}
		s.log.InfoContext(ctx, "wallet export decided", "wallet_id", id, "export_id", e.ID, "state", e.State, "by", pr.ActorID())
		return &exportOutput{Status: http.StatusOK, Body: exportOf(&e)}, nil
	}
}

func (s *server) listExports(ctx context.Context, in *listExportsInput) (*listExportsOutput, error) {
	f := wallet.ExportFilter{State: wallet.ExportState(in.State), Limit: in.size() + 1}
	if in.WalletID != "" {
		id, err := s.walletFilter(ctx, in.WalletID)
		if err != nil {
			return nil, err
		}
		f.WalletID = id
	}
	if in.Cursor != "" {
		at, cid, err := parseTimeCursor(in.Cursor)
		if err != nil {
			return nil, err
		}
		f.Before = &wallet.Export{RequestedAt: at, ID: cid}
	}
	es, err := wallet.ListExports(ctx, s.DB, principal(ctx).AccountID, f)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &listExportsOutput{}
	out.Body.Exports, out.Body.NextCursor = page(es, in.size(), func(e *wallet.Export) string { return timeCursor(e.RequestedAt, e.ID) }, exportOf)
	return out, nil
}

func (s *server) exportIDs(ctx context.Context, in *exportInput) (uuid.UUID, uuid.UUID, error) {
	id, err := s.walletID(ctx, in.ID)
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	exportID, err := uuid.Parse(in.ExportID)
	if err != nil {
		return uuid.Nil, uuid.Nil, errorf(http.StatusNotFound, "export request not found")
	}
	return id, exportID, nil
}

func (s *server) exportFailed(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, wallet.ErrNotExportable):
		return errorf(http.StatusConflict, err.Error())
	case errors.Is(err, wallet.ErrExportNotFound):
		return errorf(http.StatusNotFound, "export request not found")
	case errors.Is(err, wallet.ErrExportDecided), errors.Is(err, wallet.ErrExportVoid):
		return errorf(http.StatusConflict, err.Error())
	case errors.Is(err, wallet.ErrExportSameOwner), errors.Is(err, wallet.ErrExportApprover):
		return errorf(http.StatusForbidden, err.Error())
	}
	return s.fail(ctx, err)
}

// ExportSealing has a worker seal an export an owner approved, and
// answers it as PostgreSQL has it after a short wait (keymaker.Client).
type ExportSealing interface {
	Sealed(ctx context.Context, accountID, walletID, exportID uuid.UUID) (wallet.Export, error)
}
