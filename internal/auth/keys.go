package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// ErrKeyNotFound is a key id unknown to the caller's account (another
// account's key included).
var ErrKeyNotFound = errors.New("api key not found")

// ErrKeyRevoked refuses to rotate a key that is already revoked.
var ErrKeyRevoked = errors.New("api key is revoked")

// KeyPage asks for a page of keys, newest first: Limit rows strictly after
// (AfterTime, AfterID) when AfterTime is set.
type KeyPage struct {
	Limit     int
	AfterTime time.Time
	AfterID   uuid.UUID
}

// ListKeys returns the keys of by's account that by may see (an agent
// key: its own keys, ownKeys), revoked ones included, newest first
// (creation time, then id).
func ListKeys(ctx context.Context, db bun.IDB, by Principal, p KeyPage) ([]APIKey, error) {
	ks := []APIKey{}
	q := db.NewSelect().Model(&ks).ExcludeColumn("hash").
		Where("account_id = ?", by.AccountID).
		Order("created_at DESC", "id DESC").Limit(int64(p.Limit))
	if Can(by, "list-keys") == OwnKeys {
		q = ownKeys(q, by)
	}
	if !p.AfterTime.IsZero() {
		q = q.Where("(created_at, id) < (?, ?)", p.AfterTime, p.AfterID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return ks, nil
}

// ownKeys keeps, of the account's keys, an agent key's own: its rotation
// lineage (itself and the keys it replaced) and the keys it created (a
// rotation hands those to the successor). GET /keys lists them and the
// audit log shows their entries, to the agent key and to no other.
func ownKeys(q *bun.SelectQuery, by Principal) *bun.SelectQuery {
	return q.Where("account_id = ?", by.AccountID).Where("(lineage = ? OR created_by = ?)", by.Lineage, by.KeyID)
}

// OwnKeyActors selects the actor ids (key_<uuid>) of by's own keys
// (ownKeys), as a subquery for the audit log's filter.
func OwnKeyActors(db bun.IDB, by Principal) *bun.SelectQuery {
	return ownKeys(db.NewSelect().Table("api_keys").ColumnExpr("'key_' || id::text"), by)
}

// lockKey reads one key of the account for update.
func lockKey(ctx context.Context, tx bun.Tx, accountID, id uuid.UUID) (APIKey, error) {
	var k APIKey
	err := tx.NewSelect().Model(&k).ExcludeColumn("hash").
		Where("id = ? AND account_id = ?", id, accountID).For("UPDATE").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return APIKey{}, ErrKeyNotFound
	}
	if err != nil {
		return APIKey{}, fmt.Errorf("lock api key: %w", err)
	}
	return k, nil
}

// mayManage is the rule for rotating and revoking (op): an admin key may
// manage any key of its account; an agent key only itself and the keys it
// created (a rotation hands those to the successor). Otherwise an agent
// could lock another agent out, or take its key and act under its name.
func mayManage(by Principal, op string, k *APIKey) error {
	if Can(by, op) == OwnKeys && k.ID != by.KeyID && k.CreatedBy.UUID != by.KeyID {
		return &Denied{Op: op, Reason: fmt.Sprintf("%s may %s only itself and the keys it created", by.Describe(), strings.TrimSuffix(Permissions[op].What, " other keys"))}
	}
	return nil
}

// Rotate revokes key id of by's account and makes its replacement in the
// same lineage, with the same role, scope, label, creator and ancestry
// (plus by's, when by is not of the key's lineage), in tx. The old key is refused from the next request on. It returns the old
// key as revoked, the new one, and the new key's full text.
func Rotate(ctx context.Context, tx bun.Tx, by Principal, id uuid.UUID) (old, fresh APIKey, secret string, err error) {
	// Shared with other rotations, exclusive with RemoveUser's (and
	// CreateKeyBy's) FOR NO KEY UPDATE: a key its creator's removal
	// revokes is not replaced by a successor that removal would miss.
	if _, err = tx.NewRaw("SELECT 1 FROM accounts WHERE id = ? FOR SHARE", by.AccountID).Exec(ctx); err != nil {
		err = fmt.Errorf("lock account: %w", err)
		return
	}
	old, err = lockKey(ctx, tx, by.AccountID, id)
	if err != nil {
		return
	}
	if err = mayManage(by, "rotate-key", &old); err != nil {
		return
	}
	if old.RevokedAt != nil {
		err = ErrKeyRevoked
		return
	}
	spec := KeySpec{Role: old.Role, Wallets: old.Wallets, Label: old.Label}
	// Same lineage and creator: the same ancestry, and the rotator's when
	// it is another principal. It is handed the new secret, so the key
	// descends from it too: it may not approve the key's payments (nor the
	// key its payments), and removing it revokes the key.
	c := creator{key: old.CreatedBy, user: old.CreatedByUser, ancestry: slices.Clone(old.Ancestors)}
	if by.User != "" || by.Lineage != old.Lineage {
		var r creator
		if r, err = creatorOf(ctx, tx, by); err != nil {
			return
		}
		c.ancestry = append(c.ancestry, r.ancestry...)
	}
	fresh, secret, err = createKey(ctx, tx, Account{ID: by.AccountID, Network: by.Network}, spec, c, old.Lineage)
	if err != nil {
		return
	}
	err = tx.NewUpdate().Model(&old).
		Set("revoked_at = now()").Set("replaced_by = ?", fresh.ID).
		WherePK().Returning("revoked_at, replaced_by").Scan(ctx)
	if err != nil {
		err = fmt.Errorf("revoke rotated key: %w", err)
		return
	}
	// The keys the old one created are the new one's to manage. (Who made
	// them stays in the audit log.)
	_, err = tx.NewUpdate().Table("api_keys").Set("created_by = ?", fresh.ID).
		Where("account_id = ? AND created_by = ?", by.AccountID, old.ID).Exec(ctx)
	if err != nil {
		err = fmt.Errorf("hand created keys to the successor: %w", err)
	}
	return
}

// Revoke revokes key id of by's account in tx. Revoking a revoked key
// changes nothing (changed is false).
func Revoke(ctx context.Context, tx bun.Tx, by Principal, id uuid.UUID) (k APIKey, changed bool, err error) {
	k, err = lockKey(ctx, tx, by.AccountID, id)
	if err != nil {
		return
	}
	if err = mayManage(by, "revoke-key", &k); err != nil || k.RevokedAt != nil {
		return
	}
	err = tx.NewUpdate().Model(&k).Set("revoked_at = now()").
		WherePK().Returning("revoked_at").Scan(ctx)
	if err != nil {
		return k, false, fmt.Errorf("revoke api key: %w", err)
	}
	return k, true, nil
}

// GetKey reads one key of the account (never its hash).
func GetKey(ctx context.Context, db bun.IDB, accountID, id uuid.UUID) (APIKey, error) {
	var k APIKey
	err := db.NewSelect().Model(&k).ExcludeColumn("hash").Where("id = ? AND account_id = ?", id, accountID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return APIKey{}, ErrKeyNotFound
	}
	return k, err
}
