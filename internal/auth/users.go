package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/mr-tron/base58"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// Dashboard roles of a user in an account: an owner may do everything
// (users and admin keys included), an approver approves, rejects, freezes
// and reads, a viewer only reads.
const (
	RoleOwner    Role = "owner"
	RoleApprover Role = "approver"
	RoleViewer   Role = "viewer"
)

// UserRoles are the roles a user may have.
var UserRoles = []Role{RoleOwner, RoleApprover, RoleViewer}

// User is a Solana address with a role in an account.
type User struct {
	bun.BaseModel `bun:"table:users,alias:u"`

	AccountID uuid.UUID `bun:"account_id,pk,type:uuid"`
	Address   string    `bun:"address,pk"`
	Role      Role      `bun:"role"`
	CreatedAt time.Time `bun:"created_at"`
	// SlackUserID is the user's Slack member id (U…/W…): a click on an
	// approval message by that member counts as this person. nil: none.
	SlackUserID *string `bun:"slack_user_id"`
	// AddedBy is the actor who added the user (user:<address>, key:<id>,
	// operator); nil for users added before it was recorded.
	AddedBy *string `bun:"added_by"`
	// RoleSince is when the user got its present role: an export's
	// approver must have been an owner before it was asked.
	RoleSince time.Time `bun:"role_since"`

	// LiveKeys counts, on reads, the live keys that descend from the user
	// (made by them, or by a key they made): removing the user revokes
	// them.
	LiveKeys int `bun:"live_keys,scanonly"`
}

// UserActorID names a user in audit entries and approvals.
func UserActorID(address string) string { return string(audit.UserActor(address)) }

// Users' refusals.
var (
	ErrUserNotFound = errors.New("user not found")
	ErrUserExists   = errors.New("this address is already a user of the account")
	ErrLastOwner    = errors.New("the account's last owner cannot be removed or demoted; make another owner first")
)

// CheckUser validates a user's address and role; the first problem is a
// *FieldError.
func CheckUser(address string, role Role) error {
	raw, err := base58.Decode(address)
	if err != nil || len(raw) != 32 || base58.Encode(raw) != address {
		return &FieldError{"address", "must be a Solana address (base58 of 32 bytes)"}
	}
	switch role {
	case RoleOwner, RoleApprover, RoleViewer:
		return nil
	}
	return &FieldError{"role", "must be owner, approver or viewer"}
}

// newAddressProbe is a valid address, to check a role on its own.
const newAddressProbe = "11111111111111111111111111111111"

// MaxUsers bounds an account's dashboard users: GET /users lists them
// whole (about 130 bytes each).
const MaxUsers = 1000

// ErrTooManyUsers refuses a user past MaxUsers.
var ErrTooManyUsers = fmt.Errorf("the account has %d users, the most it may; remove one first", MaxUsers)

// AddUser makes address a user of the account with role. It counts the
// account's users under the account row's lock (past MaxUsers
// ErrTooManyUsers): in a transaction, concurrent adds cannot pass it.
// The lock is FOR NO KEY UPDATE, as everywhere the account row
// serializes (RemoveUser, CreateKeyBy, the wallet and webhook endpoint
// caps): it excludes the others and FOR SHARE, but not the FOR KEY SHARE
// of a foreign-key check, so a row that references the account (an
// event, an audit entry, a payment) is written meanwhile instead of
// waiting for the holder's commit. FOR UPDATE made it wait, and a holder
// that then waited on that writer (a removal withdrawing votes from the
// approval a vote has locked) deadlocked.
func AddUser(ctx context.Context, db bun.IDB, accountID uuid.UUID, address string, role Role, by string) (User, error) {
	if err := CheckUser(address, role); err != nil {
		return User{}, err
	}
	if _, err := db.NewRaw("SELECT 1 FROM accounts WHERE id = ? FOR NO KEY UPDATE", accountID).Exec(ctx); err != nil {
		return User{}, fmt.Errorf("lock account: %w", err)
	}
	n, err := db.NewSelect().Table("users").Where("account_id = ?", accountID).Count(ctx)
	if err != nil {
		return User{}, fmt.Errorf("count users: %w", err)
	}
	if n >= MaxUsers {
		return User{}, ErrTooManyUsers
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	u := User{AccountID: accountID, Address: address, Role: role, CreatedAt: now, AddedBy: &by, RoleSince: now}
	res, err := db.NewInsert().Model(&u).On("CONFLICT DO NOTHING").Exec(ctx)
	if err != nil {
		return User{}, fmt.Errorf("insert user: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return User{}, ErrUserExists
	}
	return u, nil
}

// lockOwners locks the account's owners, so that two changes cannot each
// leave the other the last owner and remove it.
func lockOwners(ctx context.Context, tx bun.Tx, accountID uuid.UUID) (int, error) {
	var owners []string
	err := tx.NewSelect().Table("users").Column("address").
		Where("account_id = ? AND role = ?", accountID, RoleOwner).For("UPDATE").Scan(ctx, &owners)
	return len(owners), err
}

// lockUser reads a user for update; a missing one is ErrUserNotFound.
func lockUser(ctx context.Context, tx bun.Tx, accountID uuid.UUID, address string) (User, error) {
	var u User
	err := tx.NewSelect().Model(&u).Where("account_id = ? AND address = ?", accountID, address).For("UPDATE").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrUserNotFound
	}
	return u, err
}

// LockRole reads the role of the user at address under the locks SetRole
// and RemoveUser take, in their order (the owners, then the user): a
// check of the role (CheckOwnerChange) holds until tx ends. A missing user
// is ErrUserNotFound.
func LockRole(ctx context.Context, tx bun.Tx, accountID uuid.UUID, address string) (Role, error) {
	if _, err := lockOwners(ctx, tx, accountID); err != nil {
		return "", err
	}
	u, err := lockUser(ctx, tx, accountID, address)
	return u.Role, err
}

// SetRole changes a user's role; the last owner keeps being one.
func SetRole(ctx context.Context, tx bun.Tx, accountID uuid.UUID, address string, role Role) (before, after User, err error) {
	// A malformed address is simply no user (404), like a malformed id.
	if err = CheckUser(newAddressProbe, role); err != nil {
		return
	}
	owners, err := lockOwners(ctx, tx, accountID)
	if err != nil {
		return
	}
	if before, err = lockUser(ctx, tx, accountID, address); err != nil {
		return
	}
	if before.Role == RoleOwner && role != RoleOwner && owners <= 1 {
		err = ErrLastOwner
		return
	}
	after = before
	if role == before.Role {
		return
	}
	after.Role = role
	after.RoleSince = time.Now().UTC().Truncate(time.Microsecond)
	_, err = tx.NewUpdate().Model(&after).Column("role", "role_since").WherePK().Exec(ctx)
	return
}

// RemoveUser removes a user from the account (never its last owner) and
// revokes, in tx, the live keys that descend from them: the keys they
// made, the keys those made, and so on, rotations included. It returns
// the user and the keys it revoked. A person who leaves takes the power
// they handed out with them.
func RemoveUser(ctx context.Context, tx bun.Tx, accountID uuid.UUID, address string) (User, []APIKey, error) {
	owners, err := lockOwners(ctx, tx, accountID)
	if err != nil {
		return User{}, nil, err
	}
	u, err := lockUser(ctx, tx, accountID, address)
	if err != nil {
		return User{}, nil, err
	}
	if u.Role == RoleOwner && owners <= 1 {
		return User{}, nil, ErrLastOwner
	}
	// Key creation (CreateKeyBy, the same lock) and rotation (FOR SHARE,
	// which conflicts with it) wait on the account row: none can add a
	// descendant of the user that the revocation below would not see. NO
	// KEY UPDATE (see AddUser) lets a vote by another person write its
	// event while this waits for that vote's approval (WithdrawPerson).
	if _, err := tx.NewRaw("SELECT 1 FROM accounts WHERE id = ? FOR NO KEY UPDATE", accountID).Exec(ctx); err != nil {
		return User{}, nil, fmt.Errorf("lock account: %w", err)
	}
	if _, err := tx.NewDelete().Model(&u).WherePK().Exec(ctx); err != nil {
		return User{}, nil, fmt.Errorf("delete user: %w", err)
	}
	// Its sessions in this account end now.
	_, err = tx.NewUpdate().Table("sessions").Set("ended_at = now()").
		Where("address = ? AND account_id = ? AND ended_at IS NULL", address, accountID).Exec(ctx)
	if err != nil {
		return User{}, nil, fmt.Errorf("end sessions: %w", err)
	}
	revoked := []APIKey{}
	err = tx.NewRaw(`UPDATE api_keys SET revoked_at = now()
		WHERE account_id = ? AND revoked_at IS NULL AND ancestors @> ARRAY[?]::text[]
		RETURNING id, account_id, prefix, created_at, revoked_at, created_by, created_by_user, role, label, lineage, ancestors`,
		accountID, UserActorID(address)).Scan(ctx, &revoked)
	if err != nil {
		return User{}, nil, fmt.Errorf("revoke the user's keys: %w", err)
	}
	return u, revoked, nil
}

// ErrSlackMemberTaken refuses linking a Slack member already linked to
// another user of the account: one member is one person.
var ErrSlackMemberTaken = errors.New("this Slack member id is already linked to another user of the account")

// slackMemberID is the shape of a Slack member id: U… or W… and upper-case
// letters and digits.
var slackMemberID = regexp.MustCompile(`^[UW][A-Z0-9]{1,31}$`)

// CheckSlackMember validates a Slack member id; a *FieldError names
// field.
func CheckSlackMember(field, id string) error {
	if !slackMemberID.MatchString(id) {
		return &FieldError{field, "must be a Slack member id: U or W then upper-case letters and digits (in Slack: the member's profile, ⋮, Copy member ID)"}
	}
	return nil
}

// SetSlackMember links the user to Slack member id (nil unlinks it), in
// tx: a click by that member on an approval message counts as this
// person. It answers the user before and after.
func SetSlackMember(ctx context.Context, tx bun.Tx, accountID uuid.UUID, address string, id *string) (before, after User, err error) {
	if id != nil {
		if err = CheckSlackMember("slack_user_id", *id); err != nil {
			return
		}
	}
	if before, err = lockUser(ctx, tx, accountID, address); err != nil {
		return
	}
	after = before
	after.SlackUserID = id
	_, err = tx.NewUpdate().Model(&after).Column("slack_user_id").WherePK().Exec(ctx)
	if err != nil && strings.Contains(err.Error(), "users_slack_member") {
		err = ErrSlackMemberTaken
	}
	return
}

// GetUser reads one user of the account.
func GetUser(ctx context.Context, db bun.IDB, accountID uuid.UUID, address string) (User, error) {
	var u User
	err := db.NewSelect().Model(&u).Where("account_id = ? AND address = ?", accountID, address).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrUserNotFound
	}
	return u, err
}

// SlackPerson is the address of the account's user linked to Slack member
// id, or "" when none is.
func SlackPerson(ctx context.Context, db bun.IDB, accountID uuid.UUID, id string) (string, error) {
	var address string
	err := db.NewSelect().Table("users").Column("address").Where("account_id = ? AND slack_user_id = ?", accountID, id).Scan(ctx, &address)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find the Slack member's user: %w", err)
	}
	return address, nil
}

// ListUsers returns the account's users, owners first, then by address.
func ListUsers(ctx context.Context, db bun.IDB, accountID uuid.UUID) ([]User, error) {
	us := []User{}
	err := db.NewSelect().Model(&us).ColumnExpr("u.*").
		ColumnExpr(`(SELECT count(*) FROM api_keys AS k WHERE k.account_id = u.account_id AND k.revoked_at IS NULL
			AND k.ancestors @> ARRAY['user:' || u.address]) AS live_keys`).
		Where("account_id = ?", accountID).
		OrderExpr("role = 'owner' DESC, role = 'approver' DESC, address").Scan(ctx)
	return us, err
}

// Membership is one account an address belongs to.
type Membership struct {
	AccountID uuid.UUID      `json:"account_id"`
	Network   solana.Network `json:"network"`
	Role      Role           `json:"role"`
}

// Memberships lists the accounts address belongs to, oldest first.
func Memberships(ctx context.Context, db bun.IDB, address string) ([]Membership, error) {
	ms := []Membership{}
	err := db.NewRaw(`SELECT u.account_id, a.network, u.role FROM users AS u JOIN accounts AS a ON a.id = u.account_id
		WHERE u.address = ? ORDER BY u.created_at, u.account_id`, address).Scan(ctx, &ms)
	return ms, err
}

// Session lifetimes: idle, and absolute from sign-in.
const (
	SessionIdle     = 12 * time.Hour
	SessionAbsolute = 7 * 24 * time.Hour
)

// Session is a signed-in dashboard user, acting in one of its accounts.
type Session struct {
	ID        uuid.UUID
	Token     string // the cookie's value: shown once, stored hashed
	CSRFToken string
	Address   string
	AccountID uuid.UUID
}

func randomToken() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return base58.Encode(raw), nil
}

// StartSession signs address in, acting in accountID.
func StartSession(ctx context.Context, db bun.IDB, address string, accountID uuid.UUID) (Session, error) {
	s := Session{ID: uuid.New(), Address: address, AccountID: accountID}
	var err error
	if s.Token, err = randomToken(); err != nil {
		return Session{}, err
	}
	if s.CSRFToken, err = randomToken(); err != nil {
		return Session{}, err
	}
	sum := sha256.Sum256([]byte(s.Token))
	_, err = db.NewRaw("INSERT INTO sessions (id, token_hash, address, account_id, csrf_token) VALUES (?, ?, ?, ?, ?)",
		s.ID, sum[:], address, accountID, s.CSRFToken).Exec(ctx)
	if err != nil {
		return Session{}, fmt.Errorf("insert session: %w", err)
	}
	return s, nil
}

// SessionPrincipal resolves a session cookie to its principal (the user's
// role in the session's account now) and its CSRF token. A missing,
// ended, idle or too old session, or a user no longer of the account, is
// ErrUnauthorized. Use refreshes last_seen_at at most once a minute.
func SessionPrincipal(ctx context.Context, db bun.IDB, token string) (Principal, string, error) {
	if len(token) < 32 || len(token) > 64 {
		return Principal{}, "", ErrUnauthorized
	}
	sum := sha256.Sum256([]byte(token))
	var p Principal
	var csrf string
	err := db.NewRaw(`WITH s AS (
			SELECT s.id, s.address, s.account_id, s.csrf_token, s.last_seen_at, a.network, u.role
			FROM sessions AS s JOIN users AS u ON u.account_id = s.account_id AND u.address = s.address
			JOIN accounts AS a ON a.id = s.account_id
			WHERE s.token_hash = ? AND s.ended_at IS NULL
			AND s.last_seen_at > now() - ? * interval '1 second' AND s.created_at > now() - ? * interval '1 second'),
		touch AS (
			UPDATE sessions SET last_seen_at = now() FROM s
			WHERE sessions.id = s.id AND s.last_seen_at < now() - interval '1 minute')
		SELECT id, address, account_id, network, role, csrf_token FROM s`,
		sum[:], int64(SessionIdle.Seconds()), int64(SessionAbsolute.Seconds())).
		Scan(ctx, &p.SessionID, &p.User, &p.AccountID, &p.Network, &p.Role, &csrf)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, "", ErrUnauthorized
	}
	if err != nil {
		return Principal{}, "", fmt.Errorf("look up session: %w", err)
	}
	p.Ancestry = []string{UserActorID(p.User)}
	return p, csrf, nil
}

// LiveSession is what a session is now: the account it acts in and the
// role its address has there.
type LiveSession struct {
	AccountID uuid.UUID
	Role      Role
}

// LiveSessions says which of the sessions ids are still valid, by the
// rules of SessionPrincipal (not ended, neither idle nor too old, the
// address still a user of the session's account), and what each is now.
// It touches nothing: a long-lived reader (the event stream) does not keep
// a session from going idle.
func LiveSessions(ctx context.Context, db bun.IDB, ids []uuid.UUID) (map[uuid.UUID]LiveSession, error) {
	out := make(map[uuid.UUID]LiveSession, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT s.id, s.account_id, u.role
		FROM sessions AS s JOIN users AS u ON u.account_id = s.account_id AND u.address = s.address
		WHERE s.id IN (?) AND s.ended_at IS NULL
		AND s.last_seen_at > now() - ? * interval '1 second' AND s.created_at > now() - ? * interval '1 second'`,
		bun.List(ids), int64(SessionIdle.Seconds()), int64(SessionAbsolute.Seconds()))
	if err != nil {
		return nil, fmt.Errorf("check sessions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var s LiveSession
		if err := rows.Scan(&id, &s.AccountID, &s.Role); err != nil {
			return nil, fmt.Errorf("check sessions: %w", err)
		}
		out[id] = s
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("check sessions: %w", err)
	}
	return out, nil
}

// SwitchAccount moves a session to another account of its address.
func SwitchAccount(ctx context.Context, db bun.IDB, sessionID uuid.UUID, address string, accountID uuid.UUID) error {
	res, err := db.NewRaw(`UPDATE sessions SET account_id = ? WHERE id = ? AND ended_at IS NULL
		AND EXISTS (SELECT 1 FROM users WHERE account_id = ? AND address = ?)`, accountID, sessionID, accountID, address).Exec(ctx)
	if err != nil {
		return fmt.Errorf("switch account: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrUserNotFound
	}
	return nil
}

// EndSession signs a session out.
func EndSession(ctx context.Context, db bun.IDB, sessionID uuid.UUID) error {
	_, err := db.NewUpdate().Table("sessions").Set("ended_at = now()").Where("id = ? AND ended_at IS NULL", sessionID).Exec(ctx)
	return err
}
