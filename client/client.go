// Package client is a Go client of the agent wallet service's public REST
// API (/api/public/v1): one method per operation of its OpenAPI document,
// typed answers, and typed errors an agent can act on.
//
//	c := client.New("http://127.0.0.1:8080", os.Getenv("AGENTWALLET_API_KEY"))
//	res, err := c.Send(ctx, walletID, client.SendRequest{To: addr, Amount: "1.5"})
//	switch {
//	case errors.As(err, &blocked): // a policy block: res is nil, blocked.Reason says why
//	case res.Status == client.StatusPendingApproval: // a human decides
//	}
//
// Amounts are decimal strings on the way in and json.Number on the way
// out: money never goes through float64 here.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Prefix is where the public API lives below the service's base URL.
const Prefix = "/api/public/v1"

// Client calls one service with one API key. The zero value is not
// usable: make one with New. It is safe for concurrent use.
type Client struct {
	base    string
	key     string
	http    *http.Client
	retries int
	sleep   func(context.Context, time.Duration) error
}

// Option changes a new Client.
type Option func(*Client)

// WithHTTPClient uses hc for every call (default: a client with a 60 s
// timeout).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithRetries sets how many times a call answered 429, 502 or 503 (or cut
// off by the network) is retried with backoff; sends only ever under their
// Idempotency-Key. Default 3; 0 never retries.
func WithRetries(n int) Option { return func(c *Client) { c.retries = max(n, 0) } }

// New is a client of the service at baseURL (e.g. http://127.0.0.1:8080,
// with or without /api/public/v1) with apiKey.
func New(baseURL, apiKey string, opts ...Option) *Client {
	base := strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), Prefix)
	c := &Client{base: base + Prefix, key: apiKey, http: &http.Client{Timeout: 60 * time.Second}, retries: 3, sleep: sleepCtx}
	for _, o := range opts {
		o(c)
	}
	return c
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// APIError is an error answer of the service ({"error": ...}).
type APIError struct {
	Status    int
	Message   string
	RequestID string
	// Details name the failing fields of a validation error.
	Details []ErrorDetail
	// RetryAfter is the wait a 429 or 503 asked for.
	RetryAfter time.Duration
	// Reason is the answer's reason, when it gives one: on a 503 send,
	// fee_cap_below_market (the network's priority fee is above the
	// service's cap) or fee_payer_budget_exceeded (the account's fee
	// payer has used up its daily budget); nothing was signed.
	Reason string
}

// ErrorDetail names one failing field.
type ErrorDetail struct {
	Location string `json:"location"`
	Message  string `json:"message"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("agentwallet: %d %s", e.Status, e.Message)
}

// BlockedError is a send the policy blocked (403): an answer to act on,
// not a fault. Reason is the rule (the Reason constants: exceeds_max_tx,
// exceeds_daily_limit, exceeds_weekly_limit, exceeds_monthly_limit,
// exceeds_velocity, outside_active_hours, recipient_not_allowed,
// asset_not_allowed, wallet_frozen). What the day still allows is in the
// payment's currency: RemainingTodayUSDC for a USD stablecoin,
// RemainingTodayEUR (and RemainingTodayUSDC "") for a EUR one.
type BlockedError struct {
	APIError
	Reason             string
	RemainingTodayUSDC json.Number
	RemainingTodayEUR  json.Number
}

func (e *BlockedError) Error() string {
	if e.RemainingTodayEUR != "" {
		return fmt.Sprintf("agentwallet: blocked by policy (%s; %s EUR left today)", e.Reason, e.RemainingTodayEUR)
	}
	return fmt.Sprintf("agentwallet: blocked by policy (%s; %s USD left today)", e.Reason, e.RemainingTodayUSDC)
}

// ChallengePaidError is a payment to a seller the service did not sign
// because this account already paid the seller's challenge (409, reason
// ReasonAlreadyPaid): a challenge is paid once, whichever wallet asks.
// PaymentID is that earlier payment (GetMPPPayment reads it); "" when a
// wallet out of the key's reach paid it.
type ChallengePaidError struct {
	APIError
	PaymentID string
}

func (e *ChallengePaidError) Error() string {
	if e.PaymentID == "" {
		return "agentwallet: the seller's challenge was already paid by another wallet of this account; not paid again"
	}
	return "agentwallet: the seller's challenge was already paid (payment " + e.PaymentID + "); not paid again"
}

// IsNotFound reports whether err is a 404 (unknown, foreign or out-of-
// scope id).
func IsNotFound(err error) bool {
	var e *APIError
	if errors.As(err, &e) {
		return e.Status == http.StatusNotFound
	}
	var b *BlockedError
	return errors.As(err, &b) && b.Status == http.StatusNotFound
}

// call is one request: path below the prefix, query, JSON body (nil for
// none), extra headers; out receives the JSON answer. 429/502/503 and
// network failures are retried (idempotent says whether that is safe for a
// POST/PATCH/DELETE: keyed sends and the idempotent operations).
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any, hdr http.Header, idempotent bool) (http.Header, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	retry := method == http.MethodGet || idempotent
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+c.key)
		req.Header.Set("Accept", "application/json")
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := c.http.Do(req)
		if err != nil {
			if retry && attempt < c.retries && ctx.Err() == nil {
				if err := c.sleep(ctx, backoff(attempt, 0)); err != nil {
					return nil, err
				}
				continue
			}
			return nil, fmt.Errorf("agentwallet: %s %s: %w", method, path, err)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("agentwallet: read answer: %w", err)
		}
		if resp.StatusCode >= 400 {
			apiErr := errorOf(resp, data)
			transient := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable
			var ae *APIError
			if errors.As(apiErr, &ae) && transient && retry && attempt < c.retries {
				if err := c.sleep(ctx, backoff(attempt, ae.RetryAfter)); err != nil {
					return nil, err
				}
				continue
			}
			return resp.Header, apiErr
		}
		if out != nil && len(data) > 0 {
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if err := dec.Decode(out); err != nil {
				return nil, fmt.Errorf("agentwallet: decode %s %s: %w", method, path, err)
			}
		}
		return resp.Header, nil
	}
}

// backoff is the wait before retry attempt+1: Retry-After when given,
// else 0.5 s, 1 s, 2 s … capped at 10 s.
func backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	return time.Duration(math.Min(float64(500*time.Millisecond)*math.Pow(2, float64(attempt)), float64(10*time.Second)))
}

func errorOf(resp *http.Response, data []byte) error {
	var body struct {
		Error              string        `json:"error"`
		Details            []ErrorDetail `json:"details"`
		Reason             string        `json:"reason"`
		RemainingTodayUSDC json.Number   `json:"remaining_today_usdc"`
		RemainingTodayEUR  json.Number   `json:"remaining_today_eur"`
		PaymentID          string        `json:"payment_id"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil || body.Error == "" {
		body.Error = http.StatusText(resp.StatusCode)
	}
	e := APIError{Status: resp.StatusCode, Message: body.Error, Details: body.Details, RequestID: resp.Header.Get("X-Request-Id"), Reason: body.Reason}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	if resp.StatusCode == http.StatusConflict && body.Reason == ReasonAlreadyPaid {
		return &ChallengePaidError{APIError: e, PaymentID: body.PaymentID}
	}
	if resp.StatusCode == http.StatusForbidden && body.Reason != "" {
		return &BlockedError{APIError: e, Reason: body.Reason, RemainingTodayUSDC: body.RemainingTodayUSDC, RemainingTodayEUR: body.RemainingTodayEUR}
	}
	return &e
}

// NewIdempotencyKey is a random key for a send (32 hex characters).
func NewIdempotencyKey() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func pathID(s string) string { return url.PathEscape(s) }
