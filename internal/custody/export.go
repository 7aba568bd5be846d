package custody

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/keymaker"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// Exporter seals envelope wallets' secrets to an owner's key for an
// approved export: the worker's side (keymaker.Serve). The API checks the
// approval; a wallet whose key is in an HSM or a KMS never exports.
func Exporter(db bun.IDB, ks *signer.Keystore) keymaker.ExportFunc {
	return func(ctx context.Context, id uuid.UUID, recipient []byte) ([]byte, error) {
		w, err := wallet.Read(ctx, db, id, false)
		if err != nil {
			return nil, err
		}
		if w.Signer != signer.Local {
			return nil, fmt.Errorf("%w (%s)", wallet.ErrNotExportable, w.Signer)
		}
		return ks.Export(w.Key(), recipient)
	}
}
