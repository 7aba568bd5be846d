package webhook

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// Formats of an endpoint's payloads.
const (
	FormatJSON  = "json"
	FormatSlack = "slack"
)

// KindTest is the event delivered to an endpoint when it is saved; no
// endpoint subscribes to it.
const KindTest = "webhook.test"

// Subscribable lists the kinds an endpoint may subscribe to.
var Subscribable = []string{KindTxSent, KindTxReceived, KindReceiveFailed, KindUnexplainedOutflow, KindBalanceMismatch, KindTxBlocked, KindTxFailed, KindApprovalPending, KindApprovalVote, KindApprovalApproved, KindApprovalRejected, KindApprovalExpired, KindX402Expired, KindMPPExpired, KindUserAdded}

// SecretPrefix starts every signing secret (the Standard Webhooks form:
// the rest is the base64 of 32 random bytes).
const SecretPrefix = "whsec_"

// Endpoint is a receiver of an account's events.
type Endpoint struct {
	bun.BaseModel `bun:"table:webhook_endpoints,alias:we"`

	ID             uuid.UUID `bun:"id,pk,type:uuid"`
	AccountID      uuid.UUID `bun:"account_id,type:uuid"`
	URL            string    `bun:"url"`
	Format         string    `bun:"format"`
	Events         []string  `bun:"events,array"`
	Description    *string   `bun:"description"`
	Enabled        bool      `bun:"enabled"`
	SlackApprovers []string  `bun:"slack_approvers,array"`
	SlackToken     string    `bun:"slack_token"`
	// SlackTeamID is the Slack workspace its first accepted click came
	// from; clicks from any other workspace are refused.
	SlackTeamID       *string      `bun:"slack_team_id"`
	SecretKeyID       string       `bun:"secret_key_id"`
	SecretSealed      []byte       `bun:"secret_sealed"`
	PreviousKeyID     *string      `bun:"previous_key_id"`
	PreviousSealed    []byte       `bun:"previous_sealed"`
	PreviousExpiresAt bun.NullTime `bun:"previous_expires_at"`
	CreatedAt         time.Time    `bun:"created_at"`
	UpdatedAt         time.Time    `bun:"updated_at"`
	DeletedAt         time.Time    `bun:"deleted_at,soft_delete,nullzero"`
}

// ErrEndpointNotFound means no live endpoint with that id in that account.
var ErrEndpointNotFound = errors.New("webhook endpoint not found")

// FieldError names the invalid field of an endpoint.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Settings are what a client sets on an endpoint; nil fields of an update
// keep their value.
type Settings struct {
	URL         *string
	Format      *string
	Events      []string
	Description *string
	Enabled     *bool
	// SlackApprovers: Slack user ids whose buttons may act (empty: any).
	SlackApprovers []string
}

// slackUserID is the shape of a Slack user id.
var slackUserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)

// MaxURL bounds an endpoint URL.
const MaxURL = 2048

func (s *Settings) validate() error {
	if s.URL != nil {
		u, err := url.Parse(*s.URL)
		switch {
		case len(*s.URL) > MaxURL:
			return &FieldError{"url", fmt.Sprintf("must be at most %d characters", MaxURL)}
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "":
			return &FieldError{"url", "must be an absolute http(s) URL without credentials or fragment"}
		}
	}
	if s.Format != nil && *s.Format != FormatJSON && *s.Format != FormatSlack {
		return &FieldError{"format", "must be json or slack"}
	}
	if len(s.SlackApprovers) > 100 {
		return &FieldError{"slack_approvers", "must have at most 100 entries"}
	}
	for i, u := range s.SlackApprovers {
		if !slackUserID.MatchString(u) {
			return &FieldError{fmt.Sprintf("slack_approvers[%d]", i), "must be a Slack user id such as U024BE7LH"}
		}
	}
	if s.Events != nil {
		if len(s.Events) == 0 {
			return &FieldError{"events", "must name at least one event kind"}
		}
		for i, k := range s.Events {
			if !slices.Contains(Subscribable, k) {
				return &FieldError{fmt.Sprintf("events[%d]", i), "must be one of " + strings.Join(Subscribable, ", ")}
			}
			if slices.Index(s.Events, k) != i {
				return &FieldError{fmt.Sprintf("events[%d]", i), "is a duplicate"}
			}
		}
	}
	if s.Description != nil {
		// Viewers and approvers read it beside the endpoint's events: the
		// same rule as the labels they read.
		if len([]rune(*s.Description)) > 500 {
			return &FieldError{"description", "must be at most 500 characters"}
		}
		if strings.ContainsFunc(*s.Description, policy.Deceptive) {
			return &FieldError{"description", "must not contain control or invisible formatting characters"}
		}
	}
	return nil
}

// Sealer seals signing secrets to the worker's key; *signer.Sealer is one.
type Sealer interface {
	SealValue(binding string, plaintext []byte) (signer.Sealed, error)
}

// SecretBinding is what an endpoint's signing secret is sealed bound to.
func SecretBinding(id uuid.UUID) string { return "webhook-endpoint:" + id.String() }

func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// DefaultMaxEndpoints is how many live endpoints an account may hold
// unless configured otherwise.
const DefaultMaxEndpoints = 50

// TooManyError refuses an endpoint past the account's cap.
type TooManyError struct{ Max int }

func (e *TooManyError) Error() string {
	return fmt.Sprintf("the account holds %d webhook endpoints, the most it may; delete one first", e.Max)
}

// CreateEndpoint saves an endpoint with a fresh signing secret, sealed to
// the worker's key, and queues a webhook.test delivery to it in the same
// commit. The secret is returned once and never again. Past max live
// endpoints in the account (0: no cap) it is a *TooManyError, counted
// under the account row's lock.
func CreateEndpoint(ctx context.Context, db bun.IDB, sealer Sealer, accountID uuid.UUID, s Settings, max int) (Endpoint, string, error) {
	if s.URL == nil || s.Events == nil {
		return Endpoint{}, "", &FieldError{"url", "url and events are required"}
	}
	if s.Format == nil {
		f := FormatJSON
		s.Format = &f
	}
	if err := s.validate(); err != nil {
		return Endpoint{}, "", err
	}
	secret, err := newSecret()
	if err != nil {
		return Endpoint{}, "", err
	}
	token, err := newSlackToken()
	if err != nil {
		return Endpoint{}, "", err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	e := Endpoint{
		ID: uuid.New(), AccountID: accountID, URL: *s.URL, Format: *s.Format, Events: s.Events,
		Description: s.Description, Enabled: s.Enabled == nil || *s.Enabled, SlackApprovers: s.SlackApprovers,
		SlackToken: token, CreatedAt: now, UpdatedAt: now,
	}
	if e.SlackApprovers == nil {
		e.SlackApprovers = []string{}
	}
	sealed, err := sealer.SealValue(SecretBinding(e.ID), []byte(secret))
	if err != nil {
		return Endpoint{}, "", err
	}
	e.SecretKeyID, e.SecretSealed = sealed.KeyID, sealed.Ciphertext
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if max > 0 {
			// FOR NO KEY UPDATE, the account-wide lock of auth.AddUser:
			// it serializes capped creates, not foreign-key checks.
			if _, err := tx.NewRaw("SELECT 1 FROM accounts WHERE id = ? FOR NO KEY UPDATE", accountID).Exec(ctx); err != nil {
				return fmt.Errorf("lock account: %w", err)
			}
			// A statement of its own: its snapshot follows the lock.
			n, err := tx.NewSelect().Model((*Endpoint)(nil)).Where("we.account_id = ?", accountID).Count(ctx)
			if err != nil {
				return fmt.Errorf("count webhook endpoints: %w", err)
			}
			if n >= int64(max) {
				return &TooManyError{Max: max}
			}
		}
		if _, err := tx.NewInsert().Model(&e).Exec(ctx); err != nil {
			return fmt.Errorf("insert webhook endpoint: %w", err)
		}
		return queueTest(ctx, tx, &e, now)
	})
	if err != nil {
		return Endpoint{}, "", err
	}
	return e, secret, nil
}

// newSlackToken is the secret a Slack endpoint's buttons carry back.
func newSlackToken() (string, error) {
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		return "", err
	}
	return hex.EncodeToString(token), nil
}

// queueTest records a webhook.test event and its delivery to e alone.
func queueTest(ctx context.Context, tx bun.Tx, e *Endpoint, at time.Time) error {
	if !e.Enabled {
		return nil
	}
	_, err := queueEvent(ctx, tx, e, at, "test delivery: this endpoint was saved")
	return err
}

// queueEvent records a webhook.test event saying message and its delivery
// to e alone.
func queueEvent(ctx context.Context, tx bun.Tx, e *Endpoint, at time.Time, message string) (Delivery, error) {
	ev, err := Emit(ctx, tx, e.AccountID, at, KindTest, map[string]any{"endpoint_id": e.ID, "message": message})
	if err != nil {
		return Delivery{}, err
	}
	d := Delivery{ID: uuid.New(), AccountID: e.AccountID, EndpointID: e.ID, EventID: ev.ID, EventKind: KindTest}
	if err := insertDelivery(ctx, tx, &d); err != nil {
		return Delivery{}, err
	}
	return d, notify(ctx, tx)
}

// SendTest queues a webhook.test event to a live, enabled endpoint of the
// account (whatever kinds it subscribes to), for a person checking that
// the receiver works.
func SendTest(ctx context.Context, db bun.IDB, accountID, id uuid.UUID) (Delivery, error) {
	var d Delivery
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		e, err := GetEndpoint(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		if !e.Enabled {
			return ErrEndpointDisabled
		}
		d, err = queueEvent(ctx, tx, &e, time.Now().UTC(), "test delivery: sent on request")
		return err
	})
	return d, err
}

// GetEndpoint reads a live endpoint of the account.
func GetEndpoint(ctx context.Context, db bun.IDB, accountID, id uuid.UUID) (Endpoint, error) {
	var e Endpoint
	err := db.NewSelect().Model(&e).Where("we.id = ? AND we.account_id = ?", id, accountID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Endpoint{}, ErrEndpointNotFound
	}
	if err != nil {
		return Endpoint{}, fmt.Errorf("read webhook endpoint: %w", err)
	}
	return e, nil
}

// ListEndpoints returns the account's live endpoints, newest first.
func ListEndpoints(ctx context.Context, db bun.IDB, accountID uuid.UUID) ([]Endpoint, error) {
	es := []Endpoint{}
	err := db.NewSelect().Model(&es).Where("we.account_id = ?", accountID).OrderExpr("we.created_at DESC, we.id DESC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return es, nil
}

// UpdateEndpoint changes the given settings; saving queues a webhook.test
// delivery (when enabled). Deliveries already made keep their course; a
// disabled endpoint gets nothing new. A new URL (perhaps another Slack
// workspace) issues a new button token, so the buttons of messages posted
// to the old one do nothing, and unbinds the Slack workspace.
func UpdateEndpoint(ctx context.Context, db bun.IDB, accountID, id uuid.UUID, s Settings) (Endpoint, error) {
	if err := s.validate(); err != nil {
		return Endpoint{}, err
	}
	var e Endpoint
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		err := tx.NewSelect().Model(&e).Where("we.id = ? AND we.account_id = ?", id, accountID).For("UPDATE").Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrEndpointNotFound
		}
		if err != nil {
			return fmt.Errorf("read webhook endpoint: %w", err)
		}
		if s.URL != nil && *s.URL != e.URL {
			e.URL = *s.URL
			if e.SlackToken, err = newSlackToken(); err != nil {
				return err
			}
			e.SlackTeamID = nil
		}
		if s.Format != nil {
			e.Format = *s.Format
		}
		if s.Events != nil {
			e.Events = s.Events
		}
		if s.Description != nil {
			e.Description = s.Description
		}
		if s.Enabled != nil {
			e.Enabled = *s.Enabled
		}
		if s.SlackApprovers != nil {
			e.SlackApprovers = s.SlackApprovers
		}
		e.UpdatedAt = time.Now().UTC().Truncate(time.Microsecond)
		if _, err := tx.NewUpdate().Model(&e).Column("url", "format", "events", "description", "enabled", "slack_approvers", "slack_token", "slack_team_id", "updated_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("update webhook endpoint: %w", err)
		}
		return queueTest(ctx, tx, &e, e.UpdatedAt)
	})
	return e, err
}

// DeleteEndpoint removes an endpoint (soft: its delivery log stays); it
// gets nothing new.
func DeleteEndpoint(ctx context.Context, db bun.IDB, accountID, id uuid.UUID) error {
	res, err := db.NewDelete().Model((*Endpoint)(nil)).Where("we.id = ? AND we.account_id = ?", id, accountID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrEndpointNotFound
	}
	return nil
}

// RotationOverlap is how long a rotated-out secret keeps signing beside
// the new one.
const RotationOverlap = 24 * time.Hour

// RotateSecret gives the endpoint a new secret, returned once; the old one
// keeps signing alongside it for RotationOverlap.
func RotateSecret(ctx context.Context, db bun.IDB, sealer Sealer, accountID, id uuid.UUID) (Endpoint, string, error) {
	secret, err := newSecret()
	if err != nil {
		return Endpoint{}, "", err
	}
	sealed, err := sealer.SealValue(SecretBinding(id), []byte(secret))
	if err != nil {
		return Endpoint{}, "", err
	}
	var e Endpoint
	err = db.NewRaw(`UPDATE webhook_endpoints AS we SET
			previous_key_id = secret_key_id, previous_sealed = secret_sealed,
			previous_expires_at = now() + ? * interval '1 second',
			secret_key_id = ?, secret_sealed = ?, updated_at = now()
		WHERE id = ? AND account_id = ? AND deleted_at IS NULL RETURNING *`,
		int64(RotationOverlap.Seconds()), sealed.KeyID, sealed.Ciphertext, id, accountID).Scan(ctx, &e)
	if errors.Is(err, sql.ErrNoRows) {
		return Endpoint{}, "", ErrEndpointNotFound
	}
	if err != nil {
		return Endpoint{}, "", fmt.Errorf("rotate webhook secret: %w", err)
	}
	return e, secret, nil
}

// SlackEndpoint reads a live, enabled Slack-format endpoint by id alone: a
// verified Slack click names it, and through it the account.
func SlackEndpoint(ctx context.Context, db bun.IDB, id uuid.UUID) (Endpoint, error) {
	var e Endpoint
	err := db.NewSelect().Model(&e).Where("we.id = ? AND we.format = ? AND we.enabled", id, FormatSlack).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Endpoint{}, ErrEndpointNotFound
	}
	if err != nil {
		return Endpoint{}, fmt.Errorf("read webhook endpoint: %w", err)
	}
	return e, nil
}

// ErrSlackTeam refuses a click from a Slack workspace other than the one
// the endpoint is bound to.
var ErrSlackTeam = errors.New("the click came from another Slack workspace than this endpoint's")

// BindSlackTeam checks a click's workspace against the endpoint's: the
// first accepted click binds it, and clicks from any other workspace are
// ErrSlackTeam.
func BindSlackTeam(ctx context.Context, db bun.IDB, id uuid.UUID, teamID string) error {
	res, err := db.NewUpdate().Table("webhook_endpoints").Set("slack_team_id = ?", teamID).
		Where("id = ? AND (slack_team_id IS NULL OR slack_team_id = ?)", id, teamID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("bind Slack workspace: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrSlackTeam
	}
	return nil
}
