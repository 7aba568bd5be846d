package custody

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// ActionKeyMoved is the audit action of a wallet's key moved into an HSM.
const ActionKeyMoved = audit.ActionKeyMoved

// ErrNotLocal refuses to move a wallet whose key is not an envelope.
var ErrNotLocal = errors.New("the wallet's key is not a local envelope")

// LocalWallets lists the ids of the wallets whose keys are envelopes.
func LocalWallets(ctx context.Context, db bun.IDB) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := db.NewSelect().Table("wallets").Column("id").Where("signer = 'local'").OrderExpr("created_at, id").Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("list local wallets: %w", err)
	}
	return ids, nil
}

// Move moves an envelope wallet's key into the keeper to, keeping its
// address: the seed is imported (named by the wallet's id), the keeper is
// made to sign a probe that must verify against the wallet's public key,
// and only then does the row name the keeper and drop its sealed secret,
// in one conditional statement with its audit entry. A run stopped after
// the import is finished by the next: a key already in the keeper that
// signs for the wallet is used as it is.
func Move(ctx context.Context, db *bun.DB, ks *signer.Keystore, to signer.Importer, id uuid.UUID) error {
	w, err := wallet.Read(ctx, db, id, false)
	if err != nil {
		return err
	}
	if w.Signer != signer.Local {
		return fmt.Errorf("%w (%s)", ErrNotLocal, w.Signer)
	}
	local := w.Key()
	name := id.String()
	moved := signer.Key{Public: local.Public, Backend: to.Backend(), Ref: name}
	if err := probe(ctx, to, moved); err != nil {
		if moved, err = ks.MoveTo(ctx, local, to, name); err != nil {
			return fmt.Errorf("import wallet %s: %w", id, err)
		}
		if err := probe(ctx, to, moved); err != nil {
			return fmt.Errorf("the %s key of wallet %s does not sign for it: %w", to.Backend(), id, err)
		}
	}
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(`UPDATE wallets SET signer = ?, key_ref = ?, secret_key_id = NULL, secret_sealed = NULL
			WHERE id = ? AND signer = 'local' AND secret_sealed = ?`, moved.Backend, moved.Ref, id, w.SecretSealed).Exec(ctx)
		if err != nil {
			return fmt.Errorf("store moved wallet %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("wallet %s changed while it was moved; run again", id)
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: w.AccountID,
			At:        time.Now().UTC(),
			Actor:     audit.System,
			Action:    ActionKeyMoved,
			Target:    wallet.Target(id),
			Details:   map[string]any{"wallet_id": id, "pubkey": w.Pubkey, "from": signer.Local, "to": moved.Backend},
		})
	})
}

// probe has k sign random bytes and checks the signature against the
// key's public key.
func probe(ctx context.Context, s signer.Signer, key signer.Key) error {
	msg := make([]byte, 32)
	if _, err := rand.Read(msg); err != nil {
		return err
	}
	sig, err := s.Sign(ctx, key, msg)
	if err != nil {
		return err
	}
	if !ed25519.Verify(key.Public, msg, sig) {
		return signer.ErrBadSignature
	}
	return nil
}
