package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// Delivery is one event to one endpoint.
type Delivery struct {
	bun.BaseModel `bun:"table:deliveries,alias:d"`

	ID            uuid.UUID     `bun:"id,pk,type:uuid"`
	AccountID     uuid.UUID     `bun:"account_id,type:uuid"`
	EndpointID    uuid.UUID     `bun:"endpoint_id,type:uuid"`
	EventID       uuid.UUID     `bun:"event_id,type:uuid"`
	Status        string        `bun:"status"`
	Attempts      int           `bun:"attempts"`
	ReplayOf      uuid.NullUUID `bun:"replay_of,type:uuid"`
	CreatedAt     time.Time     `bun:"created_at,nullzero,default:now()"`
	EnqueuedAt    bun.NullTime  `bun:"enqueued_at"`
	LastAttemptAt bun.NullTime  `bun:"last_attempt_at"`
	CompletedAt   bun.NullTime  `bun:"completed_at"`

	EventKind string `bun:"event_kind,scanonly"` // on reads
	// The event's data and time, read by GetDelivery only.
	EventData json.RawMessage `bun:"event_data,scanonly"`
	EventAt   time.Time       `bun:"event_at,scanonly"`
}

// Event is the delivery's event as GetDelivery read it.
func (d *Delivery) Event() Event {
	return Event{ID: d.EventID, AccountID: d.AccountID, Kind: d.EventKind, Data: d.EventData, CreatedAt: d.EventAt}
}

// Attempt is one POST of a delivery.
type Attempt struct {
	bun.BaseModel `bun:"table:delivery_attempts"`

	DeliveryID   uuid.UUID `bun:"delivery_id,pk,type:uuid"`
	N            int       `bun:"n,pk"`
	At           time.Time `bun:"at"`
	StatusCode   *int      `bun:"status_code"`
	LatencyMs    int       `bun:"latency_ms"`
	Error        *string   `bun:"error"`
	ResponseHead *string   `bun:"response_head"`
}

func insertDelivery(ctx context.Context, db bun.IDB, d *Delivery) error {
	d.Status = DeliveryPending
	if _, err := db.NewInsert().Model(d).Returning("created_at").Exec(ctx); err != nil {
		return fmt.Errorf("insert delivery: %w", err)
	}
	return nil
}

// MaxAttempts is how many POSTs a delivery gets (docs/decisions/webhooks.md,
// "Attempts").
const MaxAttempts = 6

// retryDelays are the waits before the 2nd … 6th attempts.
var retryDelays = [MaxAttempts - 1]time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour}

// RetryDelay is the wait before a delivery's next attempt after `retried`
// retries (asynq's count: 0 after the first attempt failed).
func RetryDelay(retried int) time.Duration {
	return retryDelays[min(max(retried, 0), len(retryDelays)-1)]
}

// Timeout bounds one attempt: an answer after it is a failure.
const Timeout = 10 * time.Second

// responseHeadBytes is how much of an answer the log keeps.
const responseHeadBytes = 1024

// ErrAttemptFailed wraps a failed attempt that will be retried.
var ErrAttemptFailed = errors.New("webhook attempt failed")

// ErrGaveUp marks a delivery's last failed attempt: nothing retries it.
var ErrGaveUp = errors.New("webhook delivery failed for good")

// AttemptError is a failed attempt: N is its number, from which the wait
// before the next one follows (the delivery's own count, not the task
// queue's, which restarts when a lost task is queued again).
type AttemptError struct {
	N   int
	err error
}

func (e *AttemptError) Error() string { return e.err.Error() }
func (e *AttemptError) Unwrap() error { return e.err }

// NextDelay is the wait after a failed attempt: the spec's schedule by the
// attempt's number; ok is false for an error that was not an attempt.
func NextDelay(err error) (time.Duration, bool) {
	var ae *AttemptError
	if !errors.As(err, &ae) {
		return 0, false
	}
	return RetryDelay(ae.N - 1), true
}

// Deliverer makes delivery attempts. Only the worker holds one: it opens
// the endpoints' signing secrets.
type Deliverer struct {
	DB   *bun.DB
	Keys *signer.Keystore
	// AllowPrivate lets test (devnet) accounts' deliveries reach private
	// addresses; live accounts' never do.
	AllowPrivate bool
	Log          *slog.Logger
	// DashboardOrigin links approval messages to their dashboard page
	// ("" links nothing).
	DashboardOrigin string

	once            sync.Once
	public, private *http.Client
	openedOnce      sync.Once
	opened          *expirable.LRU[string, string] // endpoint id + hash of the sealed secret → secret
}

// Bounds of the opened-secret cache: endpoints are capped per account,
// not across accounts, and a secret rotated out (or an endpoint deleted)
// must not stay in memory for the process's life.
const (
	openedSecrets   = 4096
	openedSecretTTL = time.Hour
)

// client is the HTTP client for an account's network.
func (d *Deliverer) client(live bool) *http.Client {
	d.once.Do(func() {
		d.public = Client(false)
		d.private = d.public
		if d.AllowPrivate {
			d.private = Client(true)
		}
	})
	if live {
		return d.public
	}
	return d.private
}

func (d *Deliverer) log() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

// Deliver makes the next attempt of a pending delivery. Success (any 2xx
// within Timeout) completes it; a failure is ErrAttemptFailed (retry) or,
// at the last attempt, ErrGaveUp. A delivery that is no longer pending, or
// whose endpoint was disabled or deleted, gets no attempt.
func (d *Deliverer) Deliver(ctx context.Context, id uuid.UUID) error {
	// One statement counts the attempt (before making it: a crash
	// mid-POST still counts) and reads what the POST needs.
	var (
		n       int
		del     Delivery
		ep      Endpoint
		ev      Event
		network string
	)
	err := d.DB.QueryRowContext(ctx, `WITH c AS (
			UPDATE deliveries AS d SET attempts = attempts + 1, last_attempt_at = now()
			FROM webhook_endpoints AS e
			WHERE d.id = ? AND d.status = ? AND d.attempts < ?
				AND e.id = d.endpoint_id AND e.enabled AND e.deleted_at IS NULL
			RETURNING d.attempts, d.account_id, d.endpoint_id, d.event_id)
		SELECT c.attempts, c.account_id, e.id, e.url, e.format, e.slack_token, e.secret_key_id, e.secret_sealed,
			e.previous_key_id, e.previous_sealed, e.previous_expires_at, ev.id, ev.kind, ev.data, ev.created_at, a.network
		FROM c JOIN webhook_endpoints AS e ON e.id = c.endpoint_id JOIN events AS ev ON ev.id = c.event_id
			JOIN accounts AS a ON a.id = c.account_id`,
		id, DeliveryPending, MaxAttempts).Scan(&n, &del.AccountID, &ep.ID, &ep.URL, &ep.Format, &ep.SlackToken, &ep.SecretKeyID, &ep.SecretSealed,
		&ep.PreviousKeyID, &ep.PreviousSealed, &ep.PreviousExpiresAt, &ev.ID, &ev.Kind, &ev.Data, &ev.CreatedAt, &network)
	if errors.Is(err, sql.ErrNoRows) {
		// Not pending, out of attempts, or its endpoint is disabled or
		// deleted: close it in the last two cases.
		return d.closeUnattemptable(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("claim delivery attempt: %w", err)
	}
	del.ID = id
	secrets, err := d.secrets(&ep)
	if err != nil {
		return err
	}
	body, err := Body(&ev)
	if ep.Format == FormatSlack {
		body, err = SlackBody(&ev, ep.ID, ep.SlackToken, d.DashboardOrigin)
	}
	if err != nil {
		return err
	}

	a := d.post(ctx, d.client(network == "mainnet"), &ep, &del, &ev, body, secrets)
	a.DeliveryID, a.N = id, n
	ok := a.StatusCode != nil && *a.StatusCode/100 == 2
	status := DeliveryPending
	switch {
	case ok:
		status = DeliverySucceeded
	case n >= MaxAttempts:
		status = DeliveryFailed
	}
	// The attempt's log row and the delivery's end, in one statement,
	// even when the task was cancelled (a worker shutting down) while the
	// POST ran.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err = d.DB.ExecContext(rctx, `WITH a AS (
			INSERT INTO delivery_attempts (delivery_id, n, at, status_code, latency_ms, error, response_head)
			VALUES (?, ?, ?, ?, ?, ?, ?))
		UPDATE deliveries SET status = ?, completed_at = now() WHERE id = ? AND status = ? AND ? <> ?`,
		a.DeliveryID, a.N, a.At, a.StatusCode, a.LatencyMs, a.Error, a.ResponseHead,
		status, id, DeliveryPending, status, DeliveryPending)
	if err != nil {
		return fmt.Errorf("record attempt: %w", err)
	}
	switch status {
	case DeliverySucceeded:
		return nil
	case DeliveryFailed:
		return &AttemptError{N: n, err: fmt.Errorf("%w: attempt %d of %d: %s", ErrGaveUp, n, MaxAttempts, describe(&a))}
	}
	return &AttemptError{N: n, err: fmt.Errorf("%w: attempt %d of %d: %s", ErrAttemptFailed, n, MaxAttempts, describe(&a))}
}

func describe(a *Attempt) string {
	if a.Error != nil {
		return *a.Error
	}
	return "HTTP " + strconv.Itoa(*a.StatusCode)
}

// closeUnattemptable fails a pending delivery that gets no more attempts:
// its endpoint is disabled or deleted, or its attempts are used up (the
// last one's worker died before recording it).
func (d *Deliverer) closeUnattemptable(ctx context.Context, id uuid.UUID) error {
	res, err := d.DB.ExecContext(ctx, `UPDATE deliveries AS d SET status = ?, completed_at = now()
		FROM webhook_endpoints AS e
		WHERE d.id = ? AND d.status = ? AND e.id = d.endpoint_id
			AND (NOT e.enabled OR e.deleted_at IS NOT NULL OR d.attempts >= ?)`,
		DeliveryFailed, id, DeliveryPending, MaxAttempts)
	if err != nil {
		return fmt.Errorf("close delivery: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		d.log().InfoContext(ctx, "delivery closed without an attempt: endpoint disabled or deleted, or attempts used up", "delivery_id", id)
	}
	return nil
}

// secrets opens the endpoint's signing secret and, during a rotation, the
// previous one.
func (d *Deliverer) secrets(ep *Endpoint) ([]string, error) {
	cur, err := d.open(ep.ID, ep.SecretKeyID, ep.SecretSealed)
	if err != nil {
		return nil, fmt.Errorf("open endpoint %s secret: %w", ep.ID, err)
	}
	out := []string{cur}
	if ep.PreviousKeyID != nil && ep.PreviousExpiresAt.After(time.Now()) {
		prev, err := d.open(ep.ID, *ep.PreviousKeyID, ep.PreviousSealed)
		if err != nil {
			return nil, fmt.Errorf("open endpoint %s previous secret: %w", ep.ID, err)
		}
		out = append(out, prev)
	}
	return out, nil
}

// open unseals a secret, once per sealed value: every delivery of an
// endpoint signs with it, and HPKE costs more than the POST.
func (d *Deliverer) open(endpointID uuid.UUID, keyID string, sealed []byte) (string, error) {
	d.openedOnce.Do(func() { d.opened = expirable.NewLRU[string, string](openedSecrets, nil, openedSecretTTL) })
	sum := sha256.Sum256(sealed)
	k := endpointID.String() + "/" + hex.EncodeToString(sum[:])
	if v, ok := d.opened.Get(k); ok {
		return v, nil
	}
	v, err := d.Keys.OpenValue(signer.Sealed{KeyID: keyID, Ciphertext: sealed}, SecretBinding(endpointID))
	if err != nil {
		return "", err
	}
	d.opened.Add(k, string(v))
	return string(v), nil
}

// post makes one signed POST and describes how it went.
func (d *Deliverer) post(ctx context.Context, client *http.Client, ep *Endpoint, del *Delivery, ev *Event, body []byte, secrets []string) Attempt {
	start := time.Now()
	a := Attempt{At: start.UTC().Truncate(time.Microsecond)}
	fail := func(msg string) Attempt {
		a.LatencyMs = int(time.Since(start).Milliseconds())
		a.Error = &msg
		return a
	}
	actx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return fail("bad request: " + err.Error())
	}
	for k, v := range Headers(ev, del.ID, body, secrets, start) {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fail(RedactURL(err, ep.URL, req.URL))
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, responseHeadBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	a.LatencyMs = int(time.Since(start).Milliseconds())
	code := resp.StatusCode
	a.StatusCode = &code
	h := strings.ToValidUTF8(strings.ReplaceAll(string(head), "\x00", ""), "?")
	a.ResponseHead = &h
	return a
}

// MaskURL is a Slack incoming-webhook URL as shown to those who may not
// post with it: scheme, host and the path's last 4 characters
// (https://hooks.slack.com/…/abcd), enough to tell two apart. The path is
// the credential: whoever holds it posts into the approvers' channel.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "…"
	}
	tail := strings.TrimRight(u.EscapedPath(), "/")
	if r := []rune(tail); len(r) > 4 {
		tail = string(r[len(r)-4:])
	} else {
		tail = ""
	}
	return u.Scheme + "://" + u.Host + "/…/" + tail
}

// RedactURL keeps an endpoint URL's path and query, which may hold a
// token (a Slack webhook's is in its path), out of the log: only the
// scheme and host remain.
func RedactURL(err error, raw string, u *url.URL) string {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Err.Error()
	}
	msg = strings.ReplaceAll(msg, raw, u.Scheme+"://"+u.Host+"/…")
	return u.Scheme + "://" + u.Host + ": " + msg
}

// specFields are the `data` fields the spec lists per kind; a delivery
// sends exactly these. Kinds the spec does not list are sent as stored.
var specFields = map[string][]string{
	KindApprovalPending:  {"approval_id", "wallet_id", "agent_label", "amount", "to", "memo"},
	KindApprovalApproved: {"approval_id", "wallet_id", "signature", "amount", "to"},
	KindApprovalRejected: {"approval_id", "wallet_id", "amount", "to", "rejected_by"},
	KindTxSent:           {"wallet_id", "signature", "amount", "to", "memo"},
	KindTxBlocked:        {"wallet_id", "amount", "to", "reason", "memo"},
}

// x402Fields are sent beside a spec kind's fields when the event has them:
// an x402 or MPP payment's tx.sent, tx.blocked and approval.pending say
// what is bought (kind "x402" or "mpp", resource, the seller's
// description, payment_id; an MPP charge's approval.pending also its
// realm and splits). A send's events never carry them, so its deliveries
// stay the spec's.
var x402Fields = []string{"kind", "resource", "description", "payment_id", "realm", "splits"}

// quorumFields are sent beside an approval kind's spec fields: who
// approved so far (approvals: [{by, at, note}], oldest first) and how many
// people must (approvals_needed; 1 unless the wallet's approvals_required
// is higher). Approval events recorded before quorums have neither.
var quorumFields = []string{"approvals", "approvals_needed"}

// PublicEventID is how receivers see an event's id.
func PublicEventID(id uuid.UUID) string { return "evt_" + id.String() }

// Body is the bytes POSTed for an event: the JSON envelope {event,
// event_id, timestamp, data}.
func Body(ev *Event) ([]byte, error) {
	data := ev.Data
	if fields, ok := specFields[ev.Kind]; ok {
		var all map[string]json.RawMessage
		if err := json.Unmarshal(ev.Data, &all); err != nil {
			return nil, fmt.Errorf("event %s data: %w", ev.ID, err)
		}
		kept := make(map[string]json.RawMessage, len(fields))
		for _, f := range fields {
			if v, ok := all[f]; ok {
				kept[f] = v
			} else {
				kept[f] = json.RawMessage("null")
			}
		}
		for _, f := range slices.Concat(x402Fields, quorumFields) {
			if v, ok := all[f]; ok {
				kept[f] = v
			}
		}
		var err error
		if data, err = json.Marshal(kept); err != nil {
			return nil, err
		}
	}
	return json.Marshal(struct {
		Event     string          `json:"event"`
		EventID   string          `json:"event_id"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{ev.Kind, PublicEventID(ev.ID), ev.CreatedAt.UTC().Format(time.RFC3339Nano), data})
}

// Headers are a delivery's HTTP headers. X-Service-Signature is
// "sha256=" + hex HMAC-SHA256 of the raw body keyed by the secret string
// (the GitHub convention); the Standard Webhooks headers sign
// "<webhook-id>.<webhook-timestamp>.<body>" keyed by the secret's base64
// part. During a rotation both secrets sign: the previous one in
// X-Service-Signature-Previous and as a second webhook-signature.
func Headers(ev *Event, deliveryID uuid.UUID, body []byte, secrets []string, at time.Time) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	id := PublicEventID(ev.ID)
	h := map[string]string{
		"Content-Type":        "application/json",
		"User-Agent":          "agentwallet-webhooks/1",
		"X-Service-Event":     ev.Kind,
		"X-Service-Delivery":  deliveryID.String(),
		"X-Service-Signature": Signature(secrets[0], body),
		"webhook-id":          id,
		"webhook-timestamp":   ts,
	}
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sigs = append(sigs, StandardSignature(s, id, ts, body))
	}
	h["webhook-signature"] = strings.Join(sigs, " ")
	if len(secrets) > 1 {
		h["X-Service-Signature-Previous"] = Signature(secrets[1], body)
	}
	return h
}

// Signature is "sha256=" + lowercase hex HMAC-SHA256(secret, body).
func Signature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// StandardSignature is the Standard Webhooks "v1,<base64>" signature.
func StandardSignature(secret, id, ts string, body []byte) string {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		key = []byte(secret)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}
