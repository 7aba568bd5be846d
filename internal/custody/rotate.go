// Package custody is the operator's side of wallet keys: opening the
// signers a worker is configured with, re-sealing envelope secrets to a new
// master key, moving envelope wallets into an HSM, and recovering a
// wallet's money with the service stopped.
package custody

import (
	"context"
	"crypto/ed25519"
	"fmt"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// Rotated counts what Rotate re-sealed, by kind of secret.
type Rotated struct {
	Wallets, FeePayers, WebhookSecrets int
}

// Total is every secret re-sealed.
func (r Rotated) Total() int { return r.Wallets + r.FeePayers + r.WebhookSecrets }

// rotateBatch is how many rows one round reads.
const rotateBatch = 100

// sealedRow is one secret sealed to a master key other than the current.
type sealedRow struct {
	ID     uuid.UUID
	Pubkey string // wallets and fee payers: what the secret is bound to
	KeyID  string
	Sealed []byte
}

// Rotate re-seals every secret sealed to a master key other than ks's
// current one (the first of WALLET_MASTER_KEY) to the current one: wallet
// and fee payer secrets, webhook signing secrets (current and previous).
//
// It is resumable (a row already under the current key is skipped, so a
// run stopped half-way is finished by the next) and safe while the service
// runs: each row is replaced by one conditional statement, only if it
// still holds what was read, and a worker that read the old seal still
// opens it, since ks holds both keys until the operator removes the old.
// The API's WALLET_PUBLIC_KEY must name the new key before Rotate runs, or
// wallets made meanwhile are sealed to the old one (a second run takes
// them).
func Rotate(ctx context.Context, db bun.IDB, ks *signer.Keystore) (Rotated, error) {
	var r Rotated
	cur := ks.Current()
	for _, t := range []struct {
		count  *int
		query  string
		update string
		reseal func(sealedRow) (signer.Sealed, error)
	}{
		{&r.Wallets,
			`SELECT id, pubkey, secret_key_id, secret_sealed FROM wallets WHERE signer = 'local' AND secret_key_id <> ? ORDER BY id LIMIT ?`,
			`UPDATE wallets SET secret_key_id = ?, secret_sealed = ? WHERE id = ? AND secret_key_id = ? AND secret_sealed = ?`,
			resealKey(ks)},
		{&r.FeePayers,
			`SELECT account_id, pubkey, secret_key_id, secret_sealed FROM fee_payers WHERE secret_key_id IS NOT NULL AND secret_key_id <> ? ORDER BY account_id LIMIT ?`,
			`UPDATE fee_payers SET secret_key_id = ?, secret_sealed = ? WHERE account_id = ? AND secret_key_id = ? AND secret_sealed = ?`,
			resealKey(ks)},
		{&r.WebhookSecrets,
			`SELECT id, '', secret_key_id, secret_sealed FROM webhook_endpoints WHERE secret_key_id <> ? ORDER BY id LIMIT ?`,
			`UPDATE webhook_endpoints SET secret_key_id = ?, secret_sealed = ? WHERE id = ? AND secret_key_id = ? AND secret_sealed = ?`,
			resealWebhook(ks)},
		{&r.WebhookSecrets,
			`SELECT id, '', previous_key_id, previous_sealed FROM webhook_endpoints WHERE previous_key_id IS NOT NULL AND previous_key_id <> ? ORDER BY id LIMIT ?`,
			`UPDATE webhook_endpoints SET previous_key_id = ?, previous_sealed = ? WHERE id = ? AND previous_key_id = ? AND previous_sealed = ?`,
			resealWebhook(ks)},
	} {
		for {
			rows, err := readSealed(ctx, db, t.query, cur)
			if err != nil {
				return r, err
			}
			for _, row := range rows {
				s, err := t.reseal(row)
				if err != nil {
					return r, fmt.Errorf("re-seal %s: %w", row.ID, err)
				}
				res, err := db.NewRaw(t.update, s.KeyID, s.Ciphertext, row.ID, row.KeyID, row.Sealed).Exec(ctx)
				if err != nil {
					return r, fmt.Errorf("store re-sealed %s: %w", row.ID, err)
				}
				if n, _ := res.RowsAffected(); n == 1 {
					*t.count++
				}
			}
			// A row changed under us (by another run, or a webhook secret
			// rotated) is read again next round if it still needs it.
			if len(rows) == 0 {
				break
			}
		}
	}
	return r, nil
}

func readSealed(ctx context.Context, db bun.IDB, query, current string) ([]sealedRow, error) {
	rows, err := db.QueryContext(ctx, db.NewRaw(query, current, rotateBatch).String())
	if err != nil {
		return nil, fmt.Errorf("read sealed secrets: %w", err)
	}
	defer rows.Close()
	var out []sealedRow
	for rows.Next() {
		var r sealedRow
		if err := rows.Scan(&r.ID, &r.Pubkey, &r.KeyID, &r.Sealed); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func resealKey(ks *signer.Keystore) func(sealedRow) (signer.Sealed, error) {
	return func(r sealedRow) (signer.Sealed, error) {
		pub, err := sol.PublicKeyFromBase58(r.Pubkey)
		if err != nil {
			return signer.Sealed{}, err
		}
		return ks.Reseal(signer.Sealed{KeyID: r.KeyID, Ciphertext: r.Sealed}, ed25519.PublicKey(pub[:]))
	}
}

// resealWebhook re-seals a webhook endpoint's signing secret, bound to
// the endpoint as webhook.CreateEndpoint sealed it.
func resealWebhook(ks *signer.Keystore) func(sealedRow) (signer.Sealed, error) {
	return func(r sealedRow) (signer.Sealed, error) {
		return ks.ResealValue(signer.Sealed{KeyID: r.KeyID, Ciphertext: r.Sealed}, webhook.SecretBinding(r.ID))
	}
}
