// Package wallet owns agent wallets: their label, state and policy, and a
// reference to their sealed secret key. It never holds key material in the
// clear: new secrets arrive already sealed (see internal/signer).
package wallet

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentwallet/agentwallet/internal/postgres"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// Kind values; only agent wallets exist so far.
const KindAgent = "agent"

// State of a wallet: a frozen wallet is blocked from every send.
type State string

// Wallet states.
const (
	Active State = "active"
	Frozen State = "frozen"
)

// ErrNotFound means no wallet with that id in that account: another
// account's wallet is indistinguishable from a missing one.
var ErrNotFound = errors.New("wallet not found")

// MaxLabel is the longest label, in characters.
const MaxLabel = 100

// FieldError names the field of a new wallet that is invalid: "label" or
// "policy.<field>".
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// LabelProblem says what is wrong with a label for humans (a wallet's, a
// key's), or "" when nothing is.
func LabelProblem(label string) string {
	switch {
	case strings.TrimSpace(label) == "":
		return "must not be blank"
	case utf8.RuneCountInString(label) > MaxLabel:
		return fmt.Sprintf("must be at most %d characters", MaxLabel)
	case strings.ContainsFunc(label, policy.Deceptive):
		// Approvers read labels: an invisible or direction-changing
		// character could make one read as another.
		return "must not contain control or invisible formatting characters"
	}
	return ""
}

// validate checks a new wallet's label and policy; the first problem is a
// *FieldError.
func validate(label string, p policy.Policy) error {
	if msg := LabelProblem(label); msg != "" {
		return &FieldError{"label", msg}
	}
	return CheckPolicy(p, "policy.")
}

// CheckPolicy validates p; a problem is a *FieldError naming the field
// under prefix (where the policy sits in the request).
func CheckPolicy(p policy.Policy, prefix string) error {
	err := p.Validate()
	var fe *policy.FieldError
	if errors.As(err, &fe) {
		return &FieldError{prefix + fe.Field, fe.Msg}
	}
	return err
}

// Wallet is an agent wallet row. The sealed secret is not loaded by Get or
// List; only the worker reads it, through SealedSecret.
type Wallet struct {
	bun.BaseModel `bun:"table:wallets"`

	ID                uuid.UUID               `bun:"id,pk,type:uuid"`
	AccountID         uuid.UUID               `bun:"account_id,type:uuid"`
	Kind              string                  `bun:"kind"`
	Label             string                  `bun:"label"`
	Pubkey            string                  `bun:"pubkey"`
	State             State                   `bun:"state"`
	DailyLimit        money.Micros[money.USD] `bun:"daily_limit_micros"`
	MaxTx             money.Micros[money.USD] `bun:"max_tx_micros"`
	ApprovalThreshold money.Micros[money.USD] `bun:"approval_threshold_micros"`
	Allowlist         []string                `bun:"allowlist,array"`
	AllowlistLabels   map[string]string       `bun:"allowlist_labels,type:jsonb"`
	// The optional rules (NULL: none) and what happens outside the
	// active hours (policy.Policy documents them). The limits are
	// micro-USDC as *int64: bun writes a pointer to a json.Marshaler
	// (*money.Micros[money.USD]) as JSON text.
	WeeklyLimit  *int64 `bun:"weekly_limit_micros"`
	MonthlyLimit *int64 `bun:"monthly_limit_micros"`
	// Assets the wallet may spend (every row has its list); EURLimits
	// its EUR limits (NULL: no EUR spending).
	Assets             []string            `bun:"assets,array"`
	EURLimits          *EURLimits          `bun:"eur_limits,type:jsonb"`
	MaxTxPerHour       *int                `bun:"max_tx_per_hour"`
	MaxTxPerDay        *int                `bun:"max_tx_per_day"`
	ActiveHours        *policy.ActiveHours `bun:"active_hours,type:jsonb"`
	OutsideActiveHours policy.Outside      `bun:"outside_active_hours,nullzero,default:'block'"`
	// ApprovalsRequired is how many distinct people approve a parked
	// payment (at least 1).
	ApprovalsRequired int `bun:"approvals_required,nullzero,default:1"`
	// Signer is the backend holding the wallet's key; KeyRef names the key
	// there (an HSM's or a KMS's), or the sealed secret is the key (local).
	Signer       signer.Backend `bun:"signer,nullzero,default:'local'"`
	KeyRef       string         `bun:"key_ref,nullzero"`
	SecretKeyID  string         `bun:"secret_key_id,nullzero"`
	SecretSealed []byte         `bun:"secret_sealed"`
	// ExportedAt marks, for good, a wallet whose secret an owner exported.
	ExportedAt *time.Time `bun:"exported_at"`
	CreatedAt  time.Time  `bun:"created_at"`
	// CreatedBy is the API key that created the wallet; none for a person.
	CreatedBy uuid.NullUUID `bun:"created_by,type:uuid"`
}

// Policy returns the wallet's spending policy.
func (w *Wallet) Policy() policy.Policy {
	return policy.Policy{
		DailyLimit:         w.DailyLimit,
		MaxTx:              w.MaxTx,
		ApprovalThreshold:  w.ApprovalThreshold,
		Allowlist:          w.Allowlist,
		Labels:             w.AllowlistLabels,
		WeeklyLimit:        convert[int64, money.Micros[money.USD]](w.WeeklyLimit),
		MonthlyLimit:       convert[int64, money.Micros[money.USD]](w.MonthlyLimit),
		MaxTxPerHour:       w.MaxTxPerHour,
		MaxTxPerDay:        w.MaxTxPerDay,
		ActiveHours:        w.ActiveHours,
		OutsideActiveHours: w.OutsideActiveHours,
		ApprovalsRequired:  max(1, w.ApprovalsRequired),
		Assets:             w.Assets,
		EUR:                w.EURLimits.limits(),
	}
}

// EURLimits are a wallet's EUR limits as stored (micro-euros).
type EURLimits struct {
	DailyLimit        int64  `json:"daily"`
	MaxTx             int64  `json:"max_tx"`
	ApprovalThreshold int64  `json:"approval_threshold"`
	WeeklyLimit       *int64 `json:"weekly,omitempty"`
	MonthlyLimit      *int64 `json:"monthly,omitempty"`
}

func (l *EURLimits) limits() *policy.Limits[money.EUR] {
	if l == nil {
		return nil
	}
	return &policy.Limits[money.EUR]{
		DailyLimit: money.Micros[money.EUR](l.DailyLimit), MaxTx: money.Micros[money.EUR](l.MaxTx),
		ApprovalThreshold: money.Micros[money.EUR](l.ApprovalThreshold),
		WeeklyLimit:       convert[int64, money.Micros[money.EUR]](l.WeeklyLimit),
		MonthlyLimit:      convert[int64, money.Micros[money.EUR]](l.MonthlyLimit),
	}
}

func eurLimitsOf(l *policy.Limits[money.EUR]) *EURLimits {
	if l == nil {
		return nil
	}
	return &EURLimits{
		DailyLimit: int64(l.DailyLimit), MaxTx: int64(l.MaxTx), ApprovalThreshold: int64(l.ApprovalThreshold),
		WeeklyLimit: convert[money.Micros[money.EUR], int64](l.WeeklyLimit), MonthlyLimit: convert[money.Micros[money.EUR], int64](l.MonthlyLimit),
	}
}

// setPolicy stores p in w's policy columns.
func (w *Wallet) setPolicy(p policy.Policy) {
	w.DailyLimit, w.MaxTx, w.ApprovalThreshold = p.DailyLimit, p.MaxTx, p.ApprovalThreshold
	w.Allowlist = p.Allowlist
	if w.Allowlist == nil {
		w.Allowlist = []string{}
	}
	w.AllowlistLabels = labelsOf(p)
	w.WeeklyLimit, w.MonthlyLimit = convert[money.Micros[money.USD], int64](p.WeeklyLimit), convert[money.Micros[money.USD], int64](p.MonthlyLimit)
	w.MaxTxPerHour, w.MaxTxPerDay = p.MaxTxPerHour, p.MaxTxPerDay
	w.ActiveHours = p.ActiveHours
	w.OutsideActiveHours = cmp.Or(p.OutsideActiveHours, policy.OutsideBlock)
	w.ApprovalsRequired = p.Approvals()
	w.Assets = p.SpendableAssets()
	w.EURLimits = eurLimitsOf(p.EUR)
}

// convert is an optional integer as another integer type.
func convert[From, To ~int64](v *From) *To {
	if v == nil {
		return nil
	}
	t := To(*v)
	return &t
}

// policyColumns are the columns setPolicy writes.
var policyColumns = []string{
	"daily_limit_micros", "max_tx_micros", "approval_threshold_micros", "allowlist", "allowlist_labels",
	"weekly_limit_micros", "monthly_limit_micros", "max_tx_per_hour", "max_tx_per_day", "active_hours", "outside_active_hours", "approvals_required",
	"assets", "eur_limits",
}

// labelsOf is p's labels as stored: never NULL.
func labelsOf(p policy.Policy) map[string]string {
	if p.Labels == nil {
		return map[string]string{}
	}
	return p.Labels
}

// PublicKey is the wallet's Solana address.
func (w *Wallet) PublicKey() sol.PublicKey { return sol.MustPublicKeyFromBase58(w.Pubkey) }

// Key names the wallet's key for a signer (its public key, backend and
// reference or sealed secret, as read with the row).
func (w *Wallet) Key() signer.Key {
	pub := w.PublicKey()
	return signer.Key{
		Public: ed25519.PublicKey(pub[:]), Backend: w.Signer, Ref: w.KeyRef,
		Sealed: signer.Sealed{KeyID: w.SecretKeyID, Ciphertext: w.SecretSealed},
	}
}

// Sealer makes a new keypair and returns its public key and sealed secret.
// *signer.Sealer implements it (the fee payer's key is always sealed).
type Sealer interface {
	NewWallet() (ed25519.PublicKey, signer.Sealed, error)
	KeyID() string
}

// DefaultMaxWallets is how many wallets an account may hold unless
// configured otherwise: well above normal use, yet a bound.
const DefaultMaxWallets = 10_000

// DefaultMaxByAgents is how many wallets agent keys may create in an
// account unless configured otherwise: enough for an agent to make its own
// wallets, small next to DefaultMaxWallets, so agents cannot fill it.
const DefaultMaxByAgents = 100

// TooManyError refuses a wallet past the account's cap, or (ByAgents) past
// the cap of the wallets agent keys created.
type TooManyError struct {
	Max      int
	ByAgents bool
}

func (e *TooManyError) Error() string {
	if e.ByAgents {
		return fmt.Sprintf("agent keys have created %d wallets in this account, the most they may; an admin key or an owner may create more", e.Max)
	}
	return fmt.Sprintf("the account holds %d wallets, the most it may", e.Max)
}

// Caps bound an account's wallets: Total, whoever created them, and
// ByAgents, those agent keys created (0: no cap).
type Caps struct {
	Total, ByAgents int
}

// Creator is who makes a wallet: Actor as the audit log names it; Key the
// API key (none for a person), and Agent whether that key is an agent key
// (its wallets count against Caps.ByAgents).
type Creator struct {
	Actor string
	Key   uuid.NullUUID
	Agent bool
}

// Create makes a wallet as CreateBy does, by actor without a key, with at
// most max wallets in the account (0: no cap).
func Create(ctx context.Context, db bun.IDB, keys signer.Maker, accountID uuid.UUID, actor, label string, p policy.Policy, max int) (Wallet, error) {
	return CreateBy(ctx, db, keys, accountID, Creator{Actor: actor}, label, p, Caps{Total: max})
}

// CreateBy makes a new agent wallet: a fresh key made by keys (sealed
// before it is stored, or kept in an HSM or a KMS), with its audit entry
// by the creator. A key that could not be made creates no wallet. An
// invalid label or policy is a *FieldError; past a cap a *TooManyError,
// counted under the account row's lock so concurrent creates cannot pass
// it.
func CreateBy(ctx context.Context, db bun.IDB, keys signer.Maker, accountID uuid.UUID, by Creator, label string, p policy.Policy, caps Caps) (Wallet, error) {
	if err := validate(label, p); err != nil {
		return Wallet{}, err
	}
	id := uuid.New()
	key, err := keys.Make(ctx, id.String())
	if err != nil {
		return Wallet{}, err
	}
	w := Wallet{
		ID:           id,
		AccountID:    accountID,
		Kind:         KindAgent,
		Label:        label,
		Pubkey:       sol.PublicKeyFromBytes(key.Public).String(),
		State:        Active,
		Signer:       cmp.Or(key.Backend, signer.Local),
		KeyRef:       key.Ref,
		SecretKeyID:  key.Sealed.KeyID,
		SecretSealed: key.Sealed.Ciphertext,
		CreatedAt:    nowUTC(),
		CreatedBy:    by.Key,
	}
	w.setPolicy(p)
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := checkCaps(ctx, tx, accountID, by, caps); err != nil {
			return err
		}
		if err := checkApprovers(ctx, tx, accountID, p.Approvals(), "policy."); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(&w).Exec(ctx); err != nil {
			return fmt.Errorf("insert wallet: %w", err)
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: accountID,
			At:        w.CreatedAt,
			Actor:     audit.Actor(by.Actor),
			Action:    audit.ActionWalletCreated,
			Target:    Target(w.ID),
			Details:   map[string]any{"wallet_id": w.ID, "label": label, "pubkey": w.Pubkey, "signer": w.Signer, "policy": w.Policy().Doc()},
		})
	})
	if err != nil {
		return Wallet{}, err
	}
	w.SecretSealed = nil
	return w, nil
}

// checkCaps refuses a wallet past caps, under the account row's lock:
// FOR NO KEY UPDATE, the account-wide lock of auth.AddUser, which
// serializes the capped creates but lets the foreign-key checks of other
// writers to the account through.
func checkCaps(ctx context.Context, tx bun.Tx, accountID uuid.UUID, by Creator, caps Caps) error {
	byAgents := by.Agent && caps.ByAgents > 0
	if caps.Total <= 0 && !byAgents {
		return nil
	}
	if _, err := tx.NewRaw("SELECT 1 FROM accounts WHERE id = ? FOR NO KEY UPDATE", accountID).Exec(ctx); err != nil {
		return fmt.Errorf("lock account: %w", err)
	}
	// Statements of their own: their snapshots follow the lock.
	if caps.Total > 0 {
		n, err := tx.NewSelect().Table("wallets").Where("account_id = ?", accountID).Count(ctx)
		if err != nil {
			return fmt.Errorf("count wallets: %w", err)
		}
		if n >= int64(caps.Total) {
			return &TooManyError{Max: caps.Total}
		}
	}
	if byAgents {
		// A key's role never changes (a rotation keeps it). The role's
		// text: this package cannot import auth, which imports it.
		n, err := tx.NewSelect().TableExpr("wallets AS w").Join("JOIN api_keys AS k ON k.id = w.created_by").
			Where("w.account_id = ? AND k.role = 'agent'", accountID).Count(ctx)
		if err != nil {
			return fmt.Errorf("count wallets by agent keys: %w", err)
		}
		if n >= int64(caps.ByAgents) {
			return &TooManyError{Max: caps.ByAgents, ByAgents: true}
		}
	}
	return nil
}

// approverRoles are the dashboard roles that may approve (auth.RoleOwner
// and auth.RoleApprover; this package cannot import auth, which imports
// it).
const approverRoles = "('owner', 'approver')"

// Approvers counts the account's people who can approve: its dashboard
// users whose role is owner or approver. Admin keys and Slack members are
// not counted apart: a key counts as the person who made it, a Slack
// member as the user it is linked to.
func Approvers(ctx context.Context, db bun.IDB, accountID uuid.UUID) (int, error) {
	n, err := db.NewSelect().Table("users").Where("account_id = ? AND role IN "+approverRoles, accountID).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count approvers: %w", err)
	}
	return int(n), nil
}

// checkApprovers refuses approvals_required above the account's people who
// can approve (at least 1 is always allowed): a *FieldError under prefix.
func checkApprovers(ctx context.Context, db bun.IDB, accountID uuid.UUID, required int, prefix string) error {
	if required <= 1 {
		return nil
	}
	n, err := Approvers(ctx, db, accountID)
	if err != nil {
		return err
	}
	if required > max(1, n) {
		return &FieldError{prefix + "approvals_required", fmt.Sprintf("must be 1 to %d: the account has %d people who can approve (dashboard owners and approvers)", max(1, n), n)}
	}
	return nil
}

// nowUTC is the time as Postgres keeps it (microseconds).
func nowUTC() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Read reads wallet id's whole row, its key's backend and reference or
// sealed secret with it, in one prepared statement; forUpdate locks the
// row until db's transaction ends (a decision's serialisation).
func Read(ctx context.Context, db bun.IDB, id uuid.UUID, forUpdate bool) (Wallet, error) {
	var w Wallet
	q := `SELECT ` + postgres.Columns(db, &w) + ` FROM wallets WHERE id = $1`
	if forUpdate {
		q += ` FOR UPDATE`
	}
	if err := postgres.QueryRow(ctx, db, []any{&w}, q, id); err != nil {
		return w, fmt.Errorf("read wallet %s: %w", id, err)
	}
	return w, nil
}

// Get loads a wallet of the account.
func Get(ctx context.Context, db bun.IDB, accountID, id uuid.UUID) (Wallet, error) {
	var w Wallet
	err := db.NewSelect().Model(&w).ExcludeColumn("secret_sealed").
		Where("id = ? AND account_id = ?", id, accountID).
		Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Wallet{}, ErrNotFound
	}
	if err != nil {
		return Wallet{}, fmt.Errorf("select wallet %s: %w", id, err)
	}
	return w, nil
}

// Page selects a page of wallets, newest first (creation time, then id):
// Limit rows (0: all) strictly after (AfterTime, AfterID) when AfterTime
// is set.
type Page struct {
	Limit     int
	AfterTime time.Time
	AfterID   uuid.UUID
	// Search keeps wallets whose label contains it (any case) or whose
	// address starts with it.
	Search string
}

// List returns the account's wallets that p selects, newest first: only
// those of only when it is not nil (a key's wallet scope).
func List(ctx context.Context, db bun.IDB, accountID uuid.UUID, only []uuid.UUID, p Page) ([]Wallet, error) {
	ws := []Wallet{}
	q := db.NewSelect().Model(&ws).ExcludeColumn("secret_sealed").
		Where("account_id = ?", accountID).
		Order("created_at DESC", "id DESC")
	if only != nil {
		q = q.Where("id IN (?)", bun.List(only))
	}
	if p.Limit > 0 {
		q = q.Limit(int64(p.Limit))
	}
	if !p.AfterTime.IsZero() {
		q = q.Where("(created_at, id) < (?, ?)", p.AfterTime, p.AfterID)
	}
	if p.Search != "" {
		// Literal text, no pattern: strpos and starts_with know no wildcards.
		q = q.Where("(strpos(lower(label), lower(?)) > 0 OR starts_with(pubkey, ?))", p.Search, p.Search)
	}
	err := q.Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list wallets: %w", err)
	}
	return ws, nil
}

// SealedSecret reads the sealed secret of a wallet, for the worker to open.
func SealedSecret(ctx context.Context, db bun.IDB, id uuid.UUID) (signer.Sealed, error) {
	var s signer.Sealed
	err := db.NewSelect().Table("wallets").Column("secret_key_id", "secret_sealed").
		Where("id = ?", id).Scan(ctx, &s.KeyID, &s.Ciphertext)
	if errors.Is(err, sql.ErrNoRows) {
		return signer.Sealed{}, ErrNotFound
	}
	if err != nil {
		return signer.Sealed{}, fmt.Errorf("select sealed secret %s: %w", id, err)
	}
	return s, nil
}
