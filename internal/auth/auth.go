// Package auth owns accounts and their API keys. A key is shown once; only
// its SHA-256 hash and a short display prefix are stored.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/mr-tron/base58"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/solana"
)

// Key prefixes tell the network of a key's account.
const (
	TestPrefix = "svc_test_"
	LivePrefix = "svc_live_"
)

// keyBytes is the random part of a key: 256 bits.
const keyBytes = 32

// ErrUnauthorized covers a missing, malformed, unknown or revoked key; the
// caller learns nothing about which.
var ErrUnauthorized = errors.New("unauthorized")

// Account is a tenant: it owns wallets and keys on one network.
type Account struct {
	bun.BaseModel `bun:"table:accounts"`

	ID        uuid.UUID      `bun:"id,pk,type:uuid"`
	Network   solana.Network `bun:"network"`
	CreatedAt time.Time      `bun:"created_at"`
}

// APIKey is a stored key: never the key itself.
type APIKey struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID        uuid.UUID  `bun:"id,pk,type:uuid"`
	AccountID uuid.UUID  `bun:"account_id,type:uuid"`
	Prefix    string     `bun:"prefix"`
	Hash      []byte     `bun:"hash"`
	CreatedAt time.Time  `bun:"created_at"`
	RevokedAt *time.Time `bun:"revoked_at"`
	// CreatedBy is the key that made this one through the API (an agent
	// key); nil for operator keys.
	CreatedBy uuid.NullUUID `bun:"created_by,type:uuid"`
	// LastUsedAt is refreshed by authentication at most once a minute.
	LastUsedAt *time.Time `bun:"last_used_at"`
	// ReplacedBy is the key a rotation made in this one's place.
	ReplacedBy uuid.NullUUID `bun:"replaced_by,type:uuid"`
}

// CanApprove reports whether the key is an operator key (one no other key
// created), the only kind that may approve payments.
func (k *APIKey) CanApprove() bool { return !k.CreatedBy.Valid }

// Principal is who a request acts as: an API key of an account.
type Principal struct {
	AccountID uuid.UUID
	Network   solana.Network
	KeyID     uuid.UUID
	// CanApprove: an operator key. A key created through the API by
	// another key cannot approve payments.
	CanApprove bool
}

// ActorID names the principal in audit entries and `rejected_by`.
func (p Principal) ActorID() string { return KeyActorID(p.KeyID) }

// KeyActorID is how a key is named on the wire and in the audit log.
func KeyActorID(id uuid.UUID) string { return "key_" + id.String() }

// CreateAccount makes an account on network.
func CreateAccount(ctx context.Context, db bun.IDB, network solana.Network) (Account, error) {
	a := Account{ID: uuid.New(), Network: network, CreatedAt: time.Now().UTC()}
	if _, err := db.NewInsert().Model(&a).Exec(ctx); err != nil {
		return Account{}, fmt.Errorf("insert account: %w", err)
	}
	return a, nil
}

// CreateKey makes an operator key for account and returns its full text,
// which is never stored and cannot be shown again.
func CreateKey(ctx context.Context, db bun.IDB, account Account) (APIKey, string, error) {
	return createKey(ctx, db, account, uuid.NullUUID{})
}

// MaxAgentKeys bounds an account's live agent keys: rate limits count per
// key, so unbounded keys would be unbounded requests.
const MaxAgentKeys = 100

// ErrTooManyKeys refuses an agent key past MaxAgentKeys.
var ErrTooManyKeys = fmt.Errorf("the account holds %d live agent keys, the most it may; revoke one first", MaxAgentKeys)

// CreateAgentKey makes a key on behalf of key `by`: it may send and
// reject, but never approve. It locks the account row to count its live
// agent keys, so tx must be a transaction.
func CreateAgentKey(ctx context.Context, tx bun.Tx, account Account, by uuid.UUID) (APIKey, string, error) {
	if _, err := tx.NewRaw("SELECT 1 FROM accounts WHERE id = ? FOR UPDATE", account.ID).Exec(ctx); err != nil {
		return APIKey{}, "", fmt.Errorf("lock account: %w", err)
	}
	// A statement of its own: its snapshot, taken after the lock, sees
	// the keys that creates which held it committed.
	live, err := tx.NewSelect().Table("api_keys").
		Where("account_id = ? AND revoked_at IS NULL AND created_by IS NOT NULL", account.ID).Count(ctx)
	if err != nil {
		return APIKey{}, "", fmt.Errorf("count agent keys: %w", err)
	}
	if live >= MaxAgentKeys {
		return APIKey{}, "", ErrTooManyKeys
	}
	return createKey(ctx, tx, account, uuid.NullUUID{UUID: by, Valid: true})
}

func createKey(ctx context.Context, db bun.IDB, account Account, by uuid.NullUUID) (APIKey, string, error) {
	raw := make([]byte, keyBytes)
	if _, err := rand.Read(raw); err != nil {
		return APIKey{}, "", err
	}
	secret := prefixFor(account.Network) + base58.Encode(raw)
	sum := sha256.Sum256([]byte(secret))
	k := APIKey{
		ID:        uuid.New(),
		AccountID: account.ID,
		Prefix:    secret[:len(TestPrefix)+6],
		Hash:      sum[:],
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond),
		CreatedBy: by,
	}
	if _, err := db.NewInsert().Model(&k).Exec(ctx); err != nil {
		return APIKey{}, "", fmt.Errorf("insert api key: %w", err)
	}
	return k, secret, nil
}

func prefixFor(n solana.Network) string {
	if n == solana.Mainnet {
		return LivePrefix
	}
	return TestPrefix
}

// WellFormed reports whether s has the shape of a key, so malformed input
// is refused without touching the database.
func WellFormed(s string) bool {
	var rest string
	switch {
	case strings.HasPrefix(s, TestPrefix):
		rest = s[len(TestPrefix):]
	case strings.HasPrefix(s, LivePrefix):
		rest = s[len(LivePrefix):]
	default:
		return false
	}
	if len(rest) < 32 || len(rest) > 44 { // base58 of 32 bytes
		return false
	}
	b, err := base58.Decode(rest)
	return err == nil && len(b) == keyBytes
}

// Authenticate resolves a bearer key to its principal. Any failure to
// match is ErrUnauthorized; other errors mean the check could not run.
func Authenticate(ctx context.Context, db bun.IDB, key string) (Principal, error) {
	if !WellFormed(key) {
		return Principal{}, ErrUnauthorized
	}
	sum := sha256.Sum256([]byte(key))
	var p Principal
	// One round trip: the lookup, and last_used_at refreshed when it is a
	// minute old (so a busy key is not rewritten on every request). A
	// revoked key matches nothing: rotation and revocation take effect on
	// the next request, on every api instance, since nothing is cached.
	err := db.NewRaw(`WITH k AS (
			SELECT k.id, k.account_id, a.network, k.created_by IS NULL AS can_approve, k.last_used_at
			FROM api_keys AS k JOIN accounts AS a ON a.id = k.account_id
			WHERE k.hash = ? AND k.revoked_at IS NULL),
		touch AS (
			UPDATE api_keys SET last_used_at = now() FROM k
			WHERE api_keys.id = k.id AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute'))
		SELECT id, account_id, network, can_approve FROM k`, sum[:]).
		Scan(ctx, &p.KeyID, &p.AccountID, &p.Network, &p.CanApprove)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, ErrUnauthorized
	}
	if err != nil {
		return Principal{}, fmt.Errorf("look up api key: %w", err)
	}
	// A key's prefix must agree with its account's network.
	if !strings.HasPrefix(key, prefixFor(p.Network)) {
		return Principal{}, ErrUnauthorized
	}
	return p, nil
}
