package custody

import (
	"context"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// Exporter seals an envelope wallet's secret to an owner's key: the
// worker's side of an export (wallet.SealApproved decides which, from an
// approved row in PostgreSQL, and to whom). A wallet whose key is in an
// HSM or a KMS never exports.
func Exporter(ks *signer.Keystore) wallet.SealFunc {
	return func(_ context.Context, w *wallet.Wallet, recipient []byte) ([]byte, error) {
		return ks.Export(w.Key(), recipient)
	}
}
