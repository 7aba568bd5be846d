package client

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// MPP: the Machine Payments Protocol's Solana charge (the "Payment" HTTP
// authentication scheme).

// MPPPayRequest is an MPP payment: the seller's 402 challenges and the URL
// paid for.
type MPPPayRequest struct {
	// Challenge is the 402's WWW-Authenticate value as received (several
	// header lines joined with ", "): the service reads every Payment
	// challenge in it and chooses the Solana charge the wallet can pay.
	Challenge string `json:"challenge"`
	// Resource is the URL paid for (an MPP challenge does not name it).
	Resource string `json:"resource"`
	// MaxUSDC caps this payment in whole units of the asset paid ("" for
	// none).
	MaxUSDC Amount `json:"max_usdc,omitempty"`
	// ApprovalID redeems an approved MPP approval (ap_…) with the seller's
	// fresh challenge.
	ApprovalID string `json:"approval_id,omitempty"`
	// IdempotencyKey makes a retry safe; empty: a fresh one per call.
	IdempotencyKey string `json:"-"`
}

// MPPSplit is a further recipient of an MPP charge and its share.
type MPPSplit struct {
	To     string      `json:"to"`
	Amount json.Number `json:"amount"`
}

// MPPPayResult is an MPP payment's answer: signed (retry the seller's URL
// with Header: Authorization) or pending_approval (ApprovalID).
type MPPPayResult struct {
	Status    string `json:"status"` // signed or pending_approval
	PaymentID string `json:"payment_id"`
	// Header and Authorization, when signed: retry the request with this
	// header (Authorization, or the one the challenge names) and value
	// ("Payment " and the credential).
	Header        string `json:"header,omitempty"`
	Authorization string `json:"authorization,omitempty"`
	// Amount is paid in all (splits included), in whole units of Asset.
	Amount     json.Number `json:"amount"`
	Asset      string      `json:"asset"`
	PayTo      string      `json:"pay_to"`
	Splits     []MPPSplit  `json:"splits"`
	Network    string      `json:"network"`
	Resource   string      `json:"resource"`
	ApprovalID string      `json:"approval_id,omitempty"`
	// Replayed: the stored answer to an earlier request with this key.
	Replayed       bool   `json:"-"`
	IdempotencyKey string `json:"-"`
}

// MPPReceipt is a seller's Payment-Receipt as the service keeps it.
type MPPReceipt struct {
	// Reference is the transaction's signature, as the seller gives it.
	Reference   string `json:"reference"`
	Status      string `json:"status"`
	Timestamp   string `json:"timestamp"`
	ChallengeID string `json:"challenge_id"`
	ExternalID  string `json:"external_id,omitempty"`
}

// MPPPayment is an MPP payment as the service keeps it: State follows the
// chain (signed, settled, expired, failed; pending_approval, approved,
// rejected while parked), Signature is set once it landed, Receipt once
// the agent reported the seller's.
type MPPPayment struct {
	ID          string      `json:"id"`
	WalletID    string      `json:"wallet_id"`
	State       string      `json:"state"`
	Amount      json.Number `json:"amount"`
	Asset       string      `json:"asset"`
	PayTo       string      `json:"pay_to"`
	Splits      []MPPSplit  `json:"splits"`
	Network     string      `json:"network"`
	Realm       string      `json:"realm"`
	ChallengeID string      `json:"challenge_id"`
	Resource    string      `json:"resource"`
	Description *string     `json:"description"`
	// FeePayer is who pays the network fee: the seller's fee payer, or the
	// wallet; nil while parked.
	FeePayer   *string     `json:"fee_payer"`
	Signature  *string     `json:"signature"`
	Receipt    *MPPReceipt `json:"receipt"`
	Error      *string     `json:"error"`
	ApprovalID *string     `json:"approval_id"`
	PaidBy     *string     `json:"paid_by"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
}

// MPPFilter selects MPP payments; zero fields select all.
type MPPFilter struct {
	WalletID     string
	State        string
	Asset        string // a symbol of GET /assets
	Since, Until time.Time
	Page
}

// MPPPay pays an MPP challenge from wallet id under its policy: signed
// (retry the seller's URL with Header: Authorization) or
// pending_approval; a policy block is a *BlockedError, a challenge the
// wallet cannot pay an *APIError 422.
func (c *Client) MPPPay(ctx context.Context, id string, r MPPPayRequest) (*MPPPayResult, error) {
	if r.IdempotencyKey == "" {
		r.IdempotencyKey = NewIdempotencyKey()
	}
	var out MPPPayResult
	h, err := c.call(ctx, http.MethodPost, "/agents/"+pathID(id)+"/mpp/pay", nil, r, &out, http.Header{"Idempotency-Key": {r.IdempotencyKey}}, true)
	if err != nil {
		return nil, err
	}
	out.Replayed = h.Get("Idempotent-Replayed") == "true"
	out.IdempotencyKey = r.IdempotencyKey
	return &out, nil
}

// GetMPPPayment reads one MPP payment.
func (c *Client) GetMPPPayment(ctx context.Context, id string) (*MPPPayment, error) {
	var out MPPPayment
	_, err := c.call(ctx, http.MethodGet, "/mpp/payments/"+pathID(id), nil, nil, &out, nil, false)
	return &out, err
}

// ListMPPPayments answers a page of MPP payments, newest first, and the
// next cursor ("" on the last page).
func (c *Client) ListMPPPayments(ctx context.Context, f MPPFilter) ([]MPPPayment, string, error) {
	q := f.query()
	if f.WalletID != "" {
		q.Set("wallet_id", f.WalletID)
	}
	if f.State != "" {
		q.Set("state", f.State)
	}
	if f.Asset != "" {
		q.Set("asset", f.Asset)
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.UTC().Format(time.RFC3339Nano))
	}
	var out struct {
		Payments   []MPPPayment
		NextCursor *string `json:"next_cursor"`
	}
	_, err := c.call(ctx, http.MethodGet, "/mpp/payments", q, nil, &out, nil, false)
	return out.Payments, deref(out.NextCursor), err
}

// RecordMPPReceipt keeps the seller's Payment-Receipt header value for
// MPP payment id (once: a second report changes nothing) and answers the
// payment; a receipt that does not answer the payment's challenge is an
// *APIError 422.
func (c *Client) RecordMPPReceipt(ctx context.Context, id, receipt string) (*MPPPayment, error) {
	var out MPPPayment
	_, err := c.call(ctx, http.MethodPost, "/mpp/payments/"+pathID(id)+"/receipt", nil, map[string]string{"receipt": receipt}, &out, nil, true)
	return &out, err
}
