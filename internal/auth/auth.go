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
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/mr-tron/base58"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
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
	// CreatedBy is the key that made this one through the API (after a
	// rotation of that key, its successor, which manages it); nil for keys
	// made by a person or by the command line (`api bootstrap`, `api keys
	// create`).
	CreatedBy uuid.NullUUID `bun:"created_by,type:uuid"`
	// CreatedByUser is the address of the dashboard user who made it, or
	// nil.
	CreatedByUser *string `bun:"created_by_user"`
	// LastUsedAt is refreshed by authentication at most once a minute.
	LastUsedAt *time.Time `bun:"last_used_at"`
	// ReplacedBy is the key a rotation made in this one's place.
	ReplacedBy uuid.NullUUID `bun:"replaced_by,type:uuid"`
	Role       Role          `bun:"role"`
	// Wallets an agent key reaches; nil reaches every wallet.
	Wallets WalletScope `bun:"wallet_ids,array,type:uuid[]"`
	Label   *string     `bun:"label"`
	// Lineage is the first key of its rotation chain (itself, unless a
	// rotation made it).
	Lineage uuid.UUID `bun:"lineage,type:uuid"`
	// Ancestors are the lineage actors the key descends from besides its
	// own lineage: its creator's ancestry (the creating key's, or
	// user:<address>); none for keys of the command line. Removing a
	// person revokes the keys whose ancestors name them.
	Ancestors []string `bun:"ancestors,array"`
}

// Ancestry is the key's lineage (key_<root>) and its ancestors: no key may
// approve a payment whose requester is in its ancestry.
func (k *APIKey) Ancestry() []string {
	return append([]string{KeyActorID(k.Lineage)}, k.Ancestors...)
}

// Creator names who made the key: key_<id>, user:<address>, or "" for
// the command line.
func (k *APIKey) Creator() string {
	switch {
	case k.CreatedByUser != nil:
		return UserActorID(*k.CreatedByUser)
	case k.CreatedBy.Valid:
		return KeyActorID(k.CreatedBy.UUID)
	}
	return ""
}

// CanApprove reports whether the key may approve payments: admin keys
// may, agent keys never.
func (k *APIKey) CanApprove() bool { return k.Role == RoleAdmin }

// WalletScope is the wallets a principal reaches; nil reaches every
// wallet of its account.
type WalletScope []uuid.UUID

// Reaches reports whether the scope includes wallet id.
func (s WalletScope) Reaches(id uuid.UUID) bool { return s == nil || slices.Contains(s, id) }

// Principal is who a request acts as: an API key of an account.
type Principal struct {
	AccountID uuid.UUID
	Network   solana.Network
	KeyID     uuid.UUID
	Role      Role
	// Wallets the principal reaches; nil: every wallet of the account.
	Wallets WalletScope
	// Lineage is the key's rotation lineage: a payment it requests names
	// key_<Lineage> as its requester.
	Lineage uuid.UUID
	// Ancestry is the lineage actors the principal descends from (a key's
	// APIKey.Ancestry; a person's is user:<address>): it may not approve
	// a payment whose requester is among them.
	Ancestry []string
	// User is a dashboard user's address (then KeyID and Lineage are
	// zero), acting through SessionID.
	User      string
	SessionID uuid.UUID
}

// Requesters are who may not approve a payment p requests: p itself (a
// key's lineage, key_<root>, or user:<address>) and, for an admin key,
// everyone it descends from: its creator holds it, so an admin key's
// payment is its creator's own. An agent key's creator may approve its
// payments (agent keys cannot approve; humans delegate spending to them).
func (p Principal) Requesters() []string {
	switch {
	case p.User != "":
		return []string{UserActorID(p.User)}
	case p.Role == RoleAdmin && len(p.Ancestry) > 0:
		return slices.Clone(p.Ancestry)
	}
	return []string{KeyActorID(p.Lineage)}
}

// Scoped reports whether the principal reaches only some wallets.
func (p Principal) Scoped() bool { return p.Wallets != nil }

// Reaches reports whether the principal reaches wallet id.
func (p Principal) Reaches(id uuid.UUID) bool { return p.Wallets.Reaches(id) }

// CanApprove reports whether the principal's role may approve payments.
func (p Principal) CanApprove() bool { return Can(p, "approve") == Allowed }

// ReadsPeople reports whether the principal may read about people and
// other keys: the account's users, their sessions, who decided an approval
// by name, every key's history. Whoever may list the users may (humans,
// admin keys); agent keys read only their wallets' and their own keys'
// history, and a person there without the address.
func (p Principal) ReadsPeople() bool { return Can(p, "list-users") == Allowed }

// Describe names the principal's role in refusals.
func (p Principal) Describe() string {
	if p.User != "" {
		return fmt.Sprintf("this user's role (%s)", p.Role)
	}
	return fmt.Sprintf("this key's role (%s)", p.Role)
}

// ActorID names the principal in audit entries and `rejected_by`:
// key_<id> or user:<address>.
func (p Principal) ActorID() string {
	if p.User != "" {
		return UserActorID(p.User)
	}
	return KeyActorID(p.KeyID)
}

// KeyActorID is how a key is named on the wire and in the audit log.
func KeyActorID(id uuid.UUID) string { return string(audit.KeyActor(id)) }

// CreateAccount makes an account on network.
func CreateAccount(ctx context.Context, db bun.IDB, network solana.Network) (Account, error) {
	a := Account{ID: uuid.New(), Network: network, CreatedAt: time.Now().UTC()}
	if _, err := db.NewInsert().Model(&a).Exec(ctx); err != nil {
		return Account{}, fmt.Errorf("insert account: %w", err)
	}
	return a, nil
}

// CreateKey makes an admin key for account (the command line's `api
// bootstrap` and `api keys create`) and returns its full text, which is
// never stored and cannot be shown again.
func CreateKey(ctx context.Context, db bun.IDB, account Account) (APIKey, string, error) {
	return createKey(ctx, db, account, KeySpec{Role: RoleAdmin}, creator{}, uuid.Nil)
}

// creator is who makes a key: a key (its id and ancestry), a person (its
// address; its ancestry is user:<address>), or neither (the command
// line). A rotation passes the old key's creator record and ancestors.
type creator struct {
	key      uuid.NullUUID
	user     *string
	ancestry []string
}

// creatorOf is the creator record of a key made by p, its ancestry read
// from p's key row (the stored one, whatever p was built from). The
// caller holds the account row's lock, as RemoveUser does: a creator
// revoked or removed while this waited for it is ErrUnauthorized, so no
// key is made that the removal would have revoked.
func creatorOf(ctx context.Context, tx bun.Tx, p Principal) (creator, error) {
	if p.User != "" {
		still, err := tx.NewSelect().Table("users").Where("account_id = ? AND address = ?", p.AccountID, p.User).Exists(ctx)
		if err != nil {
			return creator{}, fmt.Errorf("check the creating user: %w", err)
		}
		if !still {
			return creator{}, ErrUnauthorized
		}
		u := p.User
		return creator{user: &u, ancestry: []string{UserActorID(p.User)}}, nil
	}
	var k APIKey
	err := tx.NewSelect().Model(&k).Column("lineage", "ancestors").Where("id = ? AND revoked_at IS NULL", p.KeyID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return creator{}, ErrUnauthorized
	}
	if err != nil {
		return creator{}, fmt.Errorf("read the creating key's ancestry: %w", err)
	}
	return creator{key: uuid.NullUUID{UUID: p.KeyID, Valid: true}, ancestry: k.Ancestry()}, nil
}

// MaxAgentKeys bounds an account's live agent keys: rate limits count per
// key, so unbounded keys would be unbounded requests.
const MaxAgentKeys = 100

// ErrTooManyKeys refuses an agent key past MaxAgentKeys.
var ErrTooManyKeys = fmt.Errorf("the account holds %d live agent keys, the most it may; revoke one first", MaxAgentKeys)

// DefaultMaxKeysByAgents is how many live keys agent keys may have created
// in an account unless configured otherwise: an agent may mint keys for
// its helpers, but never fill MaxAgentKeys (each key is its own rate-limit
// bucket).
const DefaultMaxKeysByAgents = 20

// TooManyByAgentsError refuses a key an agent key asks for past the live
// keys agent keys may have created.
type TooManyByAgentsError struct{ Max int }

func (e *TooManyByAgentsError) Error() string {
	return fmt.Sprintf("agent keys have created %d live keys in this account, the most they may; revoke one first, or have an admin key or an owner create it", e.Max)
}

// KeySpec is what a new key may do.
type KeySpec struct {
	Role Role // "" makes an agent key
	// Wallets limits an agent key to these wallets of the account; nil
	// reaches every wallet (or, from a scoped key, the creator's wallets).
	Wallets WalletScope
	Label   *string
}

// FieldError names the field of a key request that is invalid.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// CreateKeyBy makes a key on behalf of principal by, within what by may
// give: only an admin makes admin keys, and a scoped key makes keys
// inside its own scope (a key without wallet_ids takes the creator's).
// Refusals are *Denied, bad input *FieldError. An agent key makes one
// only while the live keys agent keys created number fewer than
// maxByAgents (0: no cap; past it *TooManyByAgentsError). It locks the
// account row (FOR NO KEY UPDATE, see AddUser) to count its live keys, so
// tx must be a transaction.
func CreateKeyBy(ctx context.Context, tx bun.Tx, by Principal, spec KeySpec, maxByAgents int) (APIKey, string, error) {
	if spec.Role == "" {
		spec.Role = RoleAgent
	}
	if err := checkSpec(by, &spec); err != nil {
		return APIKey{}, "", err
	}
	if _, err := tx.NewRaw("SELECT 1 FROM accounts WHERE id = ? FOR NO KEY UPDATE", by.AccountID).Exec(ctx); err != nil {
		return APIKey{}, "", fmt.Errorf("lock account: %w", err)
	}
	if len(spec.Wallets) > 0 {
		var known []uuid.UUID
		err := tx.NewSelect().Table("wallets").Column("id").
			Where("account_id = ? AND id IN (?)", by.AccountID, bun.List([]uuid.UUID(spec.Wallets))).Scan(ctx, &known)
		if err != nil {
			return APIKey{}, "", fmt.Errorf("check key scope: %w", err)
		}
		for i, id := range spec.Wallets {
			if !slices.Contains(known, id) {
				return APIKey{}, "", &FieldError{fmt.Sprintf("wallet_ids[%d]", i), "no wallet of this account has this id"}
			}
		}
	}
	if spec.Role == RoleAgent {
		// A statement of its own: its snapshot, taken after the lock,
		// sees the keys that creates which held it committed.
		live, err := tx.NewSelect().Table("api_keys").
			Where("account_id = ? AND revoked_at IS NULL AND role = ?", by.AccountID, RoleAgent).Count(ctx)
		if err != nil {
			return APIKey{}, "", fmt.Errorf("count agent keys: %w", err)
		}
		if live >= MaxAgentKeys {
			return APIKey{}, "", ErrTooManyKeys
		}
	}
	if by.Role == RoleAgent && maxByAgents > 0 {
		// created_by names the key that made a key (a rotation keeps it,
		// and hands a rotated key's keys to its successor, of the same
		// role), so this counts every live key agent keys made.
		live, err := tx.NewSelect().TableExpr("api_keys AS k").Join("JOIN api_keys AS c ON c.id = k.created_by").
			Where("k.account_id = ? AND k.revoked_at IS NULL AND c.role = ?", by.AccountID, RoleAgent).Count(ctx)
		if err != nil {
			return APIKey{}, "", fmt.Errorf("count keys by agent keys: %w", err)
		}
		if live >= int64(maxByAgents) {
			return APIKey{}, "", &TooManyByAgentsError{Max: maxByAgents}
		}
	}
	// A key a user made has no creator key (only keys manage "their"
	// keys), but records the user: it descends from them.
	c, err := creatorOf(ctx, tx, by)
	if err != nil {
		return APIKey{}, "", err
	}
	return createKey(ctx, tx, Account{ID: by.AccountID, Network: by.Network}, spec, c, uuid.Nil)
}

// checkSpec validates a new key's spec against its creator, filling in an
// inherited scope.
func checkSpec(by Principal, spec *KeySpec) error {
	switch spec.Role {
	case RoleAgent:
	case RoleAdmin:
		if by.Role != RoleAdmin && by.Role != RoleOwner {
			return Deny(by, "create-key")
		}
		if spec.Wallets != nil {
			return &FieldError{"wallet_ids", "admin keys reach every wallet; only agent keys are scoped"}
		}
	default:
		return &FieldError{"role", "must be agent or admin"}
	}
	if spec.Label != nil {
		if msg := wallet.LabelProblem(*spec.Label); msg != "" {
			return &FieldError{"label", msg}
		}
	}
	if spec.Wallets != nil && len(spec.Wallets) == 0 {
		return &FieldError{"wallet_ids", "must name at least one wallet (omit it to reach every wallet)"}
	}
	for i, id := range spec.Wallets {
		if j := slices.Index(spec.Wallets, id); j < i {
			return &FieldError{fmt.Sprintf("wallet_ids[%d]", i), fmt.Sprintf("duplicates wallet_ids[%d]", j)}
		}
	}
	if !by.Scoped() {
		return nil
	}
	if spec.Wallets == nil {
		spec.Wallets = slices.Clone(by.Wallets)
		return nil
	}
	for _, id := range spec.Wallets {
		if !by.Reaches(id) {
			return &Denied{Op: "create-key", Reason: "this key is limited to some wallets and cannot give a key a wallet outside them"}
		}
	}
	return nil
}

// createKey inserts a key made by `by` (zero: the command line) in
// lineage (uuid.Nil: a new lineage, rooted at the key itself); its
// ancestors are by's ancestry.
func createKey(ctx context.Context, db bun.IDB, account Account, spec KeySpec, by creator, lineage uuid.UUID) (APIKey, string, error) {
	raw := make([]byte, keyBytes)
	if _, err := rand.Read(raw); err != nil {
		return APIKey{}, "", err
	}
	secret := prefixFor(account.Network) + base58.Encode(raw)
	sum := sha256.Sum256([]byte(secret))
	k := APIKey{
		ID:            uuid.New(),
		AccountID:     account.ID,
		Prefix:        secret[:len(TestPrefix)+6],
		Hash:          sum[:],
		CreatedAt:     time.Now().UTC().Truncate(time.Microsecond),
		CreatedBy:     by.key,
		CreatedByUser: by.user,
		Role:          spec.Role,
		Wallets:       spec.Wallets,
		Label:         spec.Label,
		Lineage:       lineage,
	}
	if k.Lineage == uuid.Nil {
		k.Lineage = k.ID
	}
	k.Ancestors = []string{}
	for _, a := range by.ancestry {
		if a != KeyActorID(k.Lineage) && !slices.Contains(k.Ancestors, a) {
			k.Ancestors = append(k.Ancestors, a)
		}
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
	err := postgres.QueryRow(ctx, db, []any{&p.KeyID, &p.AccountID, &p.Network, &p.Role, pgdialect.Array(&p.Wallets), &p.Lineage, pgdialect.Array(&p.Ancestry)},
		`WITH k AS (
			SELECT k.id, k.account_id, a.network, k.role, k.wallet_ids, k.lineage, k.ancestors, k.last_used_at
			FROM api_keys AS k JOIN accounts AS a ON a.id = k.account_id
			WHERE k.hash = $1 AND k.revoked_at IS NULL),
		touch AS (
			UPDATE api_keys SET last_used_at = now() FROM k
			WHERE api_keys.id = k.id AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute'))
		SELECT id, account_id, network, role, wallet_ids, lineage, ancestors FROM k`, sum[:])
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, ErrUnauthorized
	}
	if err != nil {
		return Principal{}, fmt.Errorf("look up api key: %w", err)
	}
	p.Ancestry = append([]string{KeyActorID(p.Lineage)}, p.Ancestry...)
	// A key's prefix must agree with its account's network.
	if !strings.HasPrefix(key, prefixFor(p.Network)) {
		return Principal{}, ErrUnauthorized
	}
	return p, nil
}
