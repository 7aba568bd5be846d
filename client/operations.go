package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Agents and wallets.

// ListAgents lists every agent wallet of the account, newest first,
// reading page after page (the service answers GET /agents a page at a
// time). An account may hold 10,000 wallets: ListAgentsPage reads one.
func (c *Client) ListAgents(ctx context.Context) ([]Agent, error) {
	return all(ctx, c.ListAgentsPage)
}

// ListAgentsPage answers a page of the agent wallets, newest first, and
// the next page's cursor ("" after the last).
func (c *Client) ListAgentsPage(ctx context.Context, p Page) ([]Agent, string, error) {
	var out struct {
		Agents     []Agent
		NextCursor *string `json:"next_cursor"`
	}
	_, err := c.call(ctx, http.MethodGet, "/agents", p.query(), nil, &out, nil, false)
	return out.Agents, deref(out.NextCursor), err
}

// all reads every page of a list.
func all[T any](ctx context.Context, page func(context.Context, Page) ([]T, string, error)) ([]T, error) {
	var items []T
	p := Page{Limit: 500}
	for {
		got, next, err := page(ctx, p)
		if err != nil {
			return nil, err
		}
		items = append(items, got...)
		if next == "" {
			return items, nil
		}
		p.Cursor = next
	}
}

// CreateAgent makes an agent wallet with label and policy (nil: defaults).
func (c *Client) CreateAgent(ctx context.Context, label string, policy *PolicyInput) (*Agent, error) {
	body := map[string]any{"label": label}
	if policy != nil {
		body["policy"] = policy
	}
	var out Agent
	_, err := c.call(ctx, http.MethodPost, "/agents", nil, body, &out, nil, false)
	return &out, err
}

// GetAgent reads an agent wallet with its live balance.
func (c *Client) GetAgent(ctx context.Context, id string) (*Agent, error) {
	var out Agent
	_, err := c.call(ctx, http.MethodGet, "/agents/"+pathID(id), nil, nil, &out, nil, false)
	return &out, err
}

// UpdatePolicy changes the given policy fields.
func (c *Client) UpdatePolicy(ctx context.Context, id string, p PolicyInput) (*Agent, error) {
	var out Agent
	_, err := c.call(ctx, http.MethodPatch, "/agents/"+pathID(id)+"/policy", nil, p, &out, nil, true)
	return &out, err
}

// FreezeAgent blocks every send of the wallet.
func (c *Client) FreezeAgent(ctx context.Context, id string) (*Agent, error) {
	var out Agent
	_, err := c.call(ctx, http.MethodPost, "/agents/"+pathID(id)+"/freeze", nil, nil, &out, nil, true)
	return &out, err
}

// UnfreezeAgent lets the wallet send again (admin keys and owners).
func (c *Client) UnfreezeAgent(ctx context.Context, id string) (*Agent, error) {
	var out Agent
	_, err := c.call(ctx, http.MethodPost, "/agents/"+pathID(id)+"/unfreeze", nil, nil, &out, nil, true)
	return &out, err
}

// ListWallets lists every wallet of the account without policies or
// balances, reading page after page.
func (c *Client) ListWallets(ctx context.Context) ([]Wallet, error) {
	return all(ctx, c.ListWalletsPage)
}

// ListWalletsPage answers a page of the wallets, newest first, and the
// next page's cursor ("" after the last).
func (c *Client) ListWalletsPage(ctx context.Context, p Page) ([]Wallet, string, error) {
	var out struct {
		Wallets    []Wallet
		NextCursor *string `json:"next_cursor"`
	}
	_, err := c.call(ctx, http.MethodGet, "/wallets", p.query(), nil, &out, nil, false)
	return out.Wallets, deref(out.NextCursor), err
}

// SearchAgents answers a page of the agents whose label contains q (any
// case) or whose address starts with it, and the next page's cursor.
func (c *Client) SearchAgents(ctx context.Context, q string, p Page) ([]Agent, string, error) {
	var out struct {
		Agents     []Agent
		NextCursor *string `json:"next_cursor"`
	}
	v := p.query()
	v.Set("q", q)
	_, err := c.call(ctx, http.MethodGet, "/agents", v, nil, &out, nil, false)
	return out.Agents, deref(out.NextCursor), err
}

// FundWallet adds test USDC and SOL to a wallet when the service runs on
// a local chain (an *APIError 409 elsewhere), answering the new balance.
func (c *Client) FundWallet(ctx context.Context, id string, usdc, sol Amount) (*Balance, error) {
	body := map[string]Amount{}
	if usdc != "" {
		body["usdc"] = usdc
	}
	if sol != "" {
		body["sol"] = sol
	}
	var out Balance
	_, err := c.call(ctx, http.MethodPost, "/wallets/"+pathID(id)+"/fund", nil, body, &out, nil, false)
	return &out, err
}

// GetWalletBalance reads a wallet's live SOL and USDC, and every asset it
// holds an account of (Assets).
func (c *Client) GetWalletBalance(ctx context.Context, id string) (*Balance, error) {
	var out Balance
	_, err := c.call(ctx, http.MethodGet, "/wallets/"+pathID(id)+"/balance", nil, nil, &out, nil, false)
	return &out, err
}

// Payments.

// Send pays from wallet id under the wallet's policy. It answers sent or
// pending_approval; a policy block is a *BlockedError. It always sends an
// Idempotency-Key (r's, or a new one) and retries 429/502/503 under it, so
// a retry never pays twice.
func (c *Client) Send(ctx context.Context, id string, r SendRequest) (*SendResult, error) {
	if r.IdempotencyKey == "" {
		r.IdempotencyKey = NewIdempotencyKey()
	}
	var out SendResult
	h, err := c.call(ctx, http.MethodPost, "/agents/"+pathID(id)+"/send", nil, r, &out, http.Header{"Idempotency-Key": {r.IdempotencyKey}}, true)
	if err != nil {
		return nil, err
	}
	out.Replayed = h.Get("Idempotent-Replayed") == "true"
	out.IdempotencyKey = r.IdempotencyKey
	return &out, nil
}

// PreviewSend says what a send would do now, writing nothing.
func (c *Client) PreviewSend(ctx context.Context, id string, r SendRequest) (*Preview, error) {
	var out Preview
	_, err := c.call(ctx, http.MethodPost, "/agents/"+pathID(id)+"/send/preview", nil, r, &out, nil, true)
	return &out, err
}

// PreviewSendUnder says what a send would do were the proposed policy
// change saved, writing nothing.
func (c *Client) PreviewSendUnder(ctx context.Context, id string, r SendRequest, proposed PolicyInput) (*Preview, error) {
	body := struct {
		SendRequest
		Policy PolicyInput `json:"policy"`
	}{r, proposed}
	var out Preview
	_, err := c.call(ctx, http.MethodPost, "/agents/"+pathID(id)+"/send/preview", nil, body, &out, nil, true)
	return &out, err
}

// TransactionFilter selects transactions; zero fields select all.
type TransactionFilter struct {
	WalletID string
	Status   string
	// Direction is DirectionSend (payments out) or DirectionReceive
	// (deposits: money that came in, the sender as Counterparty); "" for
	// both.
	Direction string
	// Asset is a symbol of ListAssets, or SOL (any case); "" for every
	// asset.
	Asset        string
	Since, Until time.Time
	Page
}

// Transaction directions.
const (
	DirectionSend    = "send"
	DirectionReceive = "receive"
)

// ListTransactions answers a page of transactions, newest first, and the
// cursor of the next page ("" on the last): payments out (direction send)
// and deposits (receive). Without a filter or page it is the account's
// last 100.
func (c *Client) ListTransactions(ctx context.Context, f TransactionFilter) ([]Transaction, string, error) {
	q := f.query()
	if f.WalletID != "" {
		q.Set("wallet_id", f.WalletID)
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Direction != "" {
		q.Set("direction", f.Direction)
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
		Transactions []Transaction
		NextCursor   *string `json:"next_cursor"`
	}
	_, err := c.call(ctx, http.MethodGet, "/transactions", q, nil, &out, nil, false)
	return out.Transactions, deref(out.NextCursor), err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Approvals.

// ListApprovals answers a page of approvals (status "" for all), newest
// first, and the next cursor.
func (c *Client) ListApprovals(ctx context.Context, status string, p Page) ([]Approval, string, error) {
	return c.ListWalletApprovals(ctx, "", status, p)
}

// ListWalletApprovals is ListApprovals of one wallet ("" for every wallet).
func (c *Client) ListWalletApprovals(ctx context.Context, walletID, status string, p Page) ([]Approval, string, error) {
	q := p.query()
	if status != "" {
		q.Set("status", status)
	}
	if walletID != "" {
		q.Set("wallet_id", walletID)
	}
	var out struct {
		Approvals  []Approval
		NextCursor *string `json:"next_cursor"`
	}
	_, err := c.call(ctx, http.MethodGet, "/approvals", q, nil, &out, nil, false)
	return out.Approvals, deref(out.NextCursor), err
}

// GetApproval reads an approval.
func (c *Client) GetApproval(ctx context.Context, id string) (*Approval, error) {
	var out Approval
	_, err := c.call(ctx, http.MethodGet, "/approvals/"+pathID(id), nil, nil, &out, nil, false)
	return &out, err
}

// GetApprovalContext reads what a human needs to decide an approval.
func (c *Client) GetApprovalContext(ctx context.Context, id string) (*ApprovalContext, error) {
	var out ApprovalContext
	_, err := c.call(ctx, http.MethodGet, "/approvals/"+pathID(id)+"/context", nil, nil, &out, nil, false)
	return &out, err
}

func noteBody(note string) any {
	if note == "" {
		return nil
	}
	return map[string]string{"note": note}
}

// Approve approves a pending approval (admin keys, owners, approvers).
func (c *Client) Approve(ctx context.Context, id, note string) (*Approval, error) {
	var out Approval
	_, err := c.call(ctx, http.MethodPost, "/approvals/"+pathID(id)+"/approve", nil, noteBody(note), &out, nil, false)
	return &out, err
}

// Reject closes a pending approval without spending.
func (c *Client) Reject(ctx context.Context, id, note string) (*Approval, error) {
	var out Approval
	_, err := c.call(ctx, http.MethodPost, "/approvals/"+pathID(id)+"/reject", nil, noteBody(note), &out, nil, false)
	return &out, err
}

// Audit log.

// ListAuditLog answers a page of the audit log (optionally one action or
// target), newest first, and the next cursor.
func (c *Client) ListAuditLog(ctx context.Context, action, target string, p Page) ([]AuditEntry, string, error) {
	q := p.query()
	if action != "" {
		q.Set("action", action)
	}
	if target != "" {
		q.Set("target", target)
	}
	var out struct {
		Entries    []AuditEntry
		NextCursor *string `json:"next_cursor"`
	}
	_, err := c.call(ctx, http.MethodGet, "/audit-log", q, nil, &out, nil, false)
	return out.Entries, deref(out.NextCursor), err
}

// VerifyAuditLog walks the account's whole hash chain and answers how far
// it holds.
func (c *Client) VerifyAuditLog(ctx context.Context) (*AuditVerification, error) {
	var out AuditVerification
	_, err := c.call(ctx, http.MethodGet, "/audit-log/verification", nil, nil, &out, nil, false)
	return &out, err
}

// Analytics.

// GetAnalytics aggregates the days from..to (YYYY-MM-DD, UTC, to included;
// "" for the service's default, the 30 days ending today).
func (c *Client) GetAnalytics(ctx context.Context, from, to string) (*Analytics, error) {
	q := url.Values{}
	if from != "" {
		q.Set("from", from)
	}
	if to != "" {
		q.Set("to", to)
	}
	var out Analytics
	_, err := c.call(ctx, http.MethodGet, "/analytics", q, nil, &out, nil, false)
	return &out, err
}

// Keys.

// ListKeys answers a page of the account's keys and the next cursor.
func (c *Client) ListKeys(ctx context.Context, p Page) ([]Key, string, error) {
	var out struct {
		Keys       []Key
		NextCursor *string `json:"next_cursor"`
	}
	_, err := c.call(ctx, http.MethodGet, "/keys", p.query(), nil, &out, nil, false)
	return out.Keys, deref(out.NextCursor), err
}

// CreateKey makes a key (the full key is in this answer only).
func (c *Client) CreateKey(ctx context.Context, r KeyRequest) (*NewKey, error) {
	var out NewKey
	_, err := c.call(ctx, http.MethodPost, "/keys", nil, r, &out, nil, false)
	return &out, err
}

// RotateKey revokes a key and answers its replacement.
func (c *Client) RotateKey(ctx context.Context, id string) (*NewKey, error) {
	var out NewKey
	_, err := c.call(ctx, http.MethodPost, "/keys/"+pathID(id)+"/rotate", nil, nil, &out, nil, false)
	return &out, err
}

// RevokeKey revokes a key.
func (c *Client) RevokeKey(ctx context.Context, id string) (*Key, error) {
	var out Key
	_, err := c.call(ctx, http.MethodDelete, "/keys/"+pathID(id), nil, nil, &out, nil, true)
	return &out, err
}

// Webhooks.

// CreateWebhookEndpoint subscribes a URL (the answer's Secret is shown
// only now).
func (c *Client) CreateWebhookEndpoint(ctx context.Context, s EndpointSettings) (*WebhookEndpoint, error) {
	var out WebhookEndpoint
	_, err := c.call(ctx, http.MethodPost, "/webhook-endpoints", nil, s, &out, nil, false)
	return &out, err
}

// ListWebhookEndpoints lists the account's endpoints.
func (c *Client) ListWebhookEndpoints(ctx context.Context) ([]WebhookEndpoint, error) {
	var out struct{ Endpoints []WebhookEndpoint }
	_, err := c.call(ctx, http.MethodGet, "/webhook-endpoints", nil, nil, &out, nil, false)
	return out.Endpoints, err
}

// GetWebhookEndpoint reads an endpoint.
func (c *Client) GetWebhookEndpoint(ctx context.Context, id string) (*WebhookEndpoint, error) {
	var out WebhookEndpoint
	_, err := c.call(ctx, http.MethodGet, "/webhook-endpoints/"+pathID(id), nil, nil, &out, nil, false)
	return &out, err
}

// UpdateWebhookEndpoint changes the given settings.
func (c *Client) UpdateWebhookEndpoint(ctx context.Context, id string, s EndpointSettings) (*WebhookEndpoint, error) {
	var out WebhookEndpoint
	_, err := c.call(ctx, http.MethodPatch, "/webhook-endpoints/"+pathID(id), nil, s, &out, nil, true)
	return &out, err
}

// DeleteWebhookEndpoint removes an endpoint.
func (c *Client) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	_, err := c.call(ctx, http.MethodDelete, "/webhook-endpoints/"+pathID(id), nil, nil, nil, nil, true)
	return err
}

// RotateWebhookSecret gives an endpoint a new secret (the old one signs
// beside it for 24 h).
func (c *Client) RotateWebhookSecret(ctx context.Context, id string) (*WebhookEndpoint, error) {
	var out WebhookEndpoint
	_, err := c.call(ctx, http.MethodPost, "/webhook-endpoints/"+pathID(id)+"/rotate-secret", nil, nil, &out, nil, false)
	return &out, err
}

// ListDeliveries answers a page of an endpoint's deliveries (status "" for
// all) and the next cursor.
func (c *Client) ListDeliveries(ctx context.Context, endpointID, status string, p Page) ([]Delivery, string, error) {
	q := p.query()
	if status != "" {
		q.Set("status", status)
	}
	var out struct {
		Deliveries []Delivery
		NextCursor *string `json:"next_cursor"`
	}
	_, err := c.call(ctx, http.MethodGet, "/webhook-endpoints/"+pathID(endpointID)+"/deliveries", q, nil, &out, nil, false)
	return out.Deliveries, deref(out.NextCursor), err
}

// GetDelivery reads a delivery with its attempts.
func (c *Client) GetDelivery(ctx context.Context, id string) (*Delivery, error) {
	var out Delivery
	_, err := c.call(ctx, http.MethodGet, "/deliveries/"+pathID(id), nil, nil, &out, nil, false)
	return &out, err
}

// ReplayDelivery delivers a delivery's event again.
func (c *Client) ReplayDelivery(ctx context.Context, id string) (*Delivery, error) {
	var out Delivery
	_, err := c.call(ctx, http.MethodPost, "/deliveries/"+pathID(id)+"/replay", nil, nil, &out, nil, false)
	return &out, err
}

// TestWebhookEndpoint queues a webhook.test event to the endpoint and
// answers its delivery.
func (c *Client) TestWebhookEndpoint(ctx context.Context, id string) (*Delivery, error) {
	var out Delivery
	_, err := c.call(ctx, http.MethodPost, "/webhook-endpoints/"+pathID(id)+"/test", nil, nil, &out, nil, false)
	return &out, err
}

// Users.

// ListUsers lists the account's dashboard users.
func (c *Client) ListUsers(ctx context.Context) ([]User, error) {
	var out struct{ Users []User }
	_, err := c.call(ctx, http.MethodGet, "/users", nil, nil, &out, nil, false)
	return out.Users, err
}

// CreateUser makes address a dashboard user with role.
func (c *Client) CreateUser(ctx context.Context, address, role string) (*User, error) {
	var out User
	_, err := c.call(ctx, http.MethodPost, "/users", nil, map[string]string{"address": address, "role": role}, &out, nil, false)
	return &out, err
}

// UpdateUser changes a user's role.
func (c *Client) UpdateUser(ctx context.Context, address, role string) (*User, error) {
	var out User
	_, err := c.call(ctx, http.MethodPatch, "/users/"+url.PathEscape(address), nil, map[string]string{"role": role}, &out, nil, true)
	return &out, err
}

// LinkSlackMember links a user to a Slack member id ("" unlinks it): that
// member's clicks on approval messages count as this person.
func (c *Client) LinkSlackMember(ctx context.Context, address, memberID string) (*User, error) {
	var out User
	body := map[string]any{"slack_user_id": nil}
	if memberID != "" {
		body["slack_user_id"] = memberID
	}
	_, err := c.call(ctx, http.MethodPatch, "/users/"+url.PathEscape(address), nil, body, &out, nil, true)
	return &out, err
}

// DeleteUser removes a dashboard user.
func (c *Client) DeleteUser(ctx context.Context, address string) error {
	_, err := c.call(ctx, http.MethodDelete, "/users/"+url.PathEscape(address), nil, nil, nil, nil, true)
	return err
}

// Fee payer.

// GetFeePayer reads the account's fee payer: whether it pays the sends'
// fees and rent, its address and live SOL, its daily budget and today's
// spend.
func (c *Client) GetFeePayer(ctx context.Context) (*FeePayer, error) {
	var out FeePayer
	_, err := c.call(ctx, http.MethodGet, "/fee-payer", nil, nil, &out, nil, false)
	return &out, err
}

// UpdateFeePayer turns the fee payer on or off and, when budget is not
// empty, sets its daily budget in SOL (owners and admin keys). Its wallet
// is made the first time it is enabled.
func (c *Client) UpdateFeePayer(ctx context.Context, enabled bool, budget Amount) (*FeePayer, error) {
	body := map[string]any{"enabled": enabled}
	if budget != "" {
		body["daily_budget_sol"] = budget
	}
	var out FeePayer
	_, err := c.call(ctx, http.MethodPut, "/fee-payer", nil, body, &out, nil, true)
	return &out, err
}

// FundFeePayer adds test SOL to the fee payer when the service runs on a
// local chain (an *APIError 409 elsewhere, or before it was enabled).
func (c *Client) FundFeePayer(ctx context.Context, sol Amount) (*Balance, error) {
	var out Balance
	_, err := c.call(ctx, http.MethodPost, "/fee-payer/fund", nil, map[string]Amount{"sol": sol}, &out, nil, false)
	return &out, err
}

// x402.

// X402PayRequest is an x402 payment: the seller's PaymentRequired object
// as it sent it (the decoded PAYMENT-REQUIRED header of v2, or the 402's
// JSON body of v1).
type X402PayRequest struct {
	PaymentRequired json.RawMessage `json:"payment_required"`
	// Resource is the URL paid for, when the object does not carry it.
	Resource string `json:"resource,omitempty"`
	// MaxUSDC caps this payment in whole units of the asset paid (a
	// dollar or a euro of a stablecoin; "" for none).
	MaxUSDC Amount `json:"max_usdc,omitempty"`
	// ApprovalID redeems an approved x402 approval (ap_…).
	ApprovalID string `json:"approval_id,omitempty"`
	// IdempotencyKey makes a retry safe; empty: a fresh one per call.
	IdempotencyKey string `json:"-"`
}

// X402Pay pays an x402 challenge from wallet id under its policy: signed
// (retry the seller's URL with Header: PaymentSignature) or
// pending_approval; blocked or not payable come back as errors.
func (c *Client) X402Pay(ctx context.Context, id string, r X402PayRequest) (*X402PayResult, error) {
	if r.IdempotencyKey == "" {
		r.IdempotencyKey = NewIdempotencyKey()
	}
	var out X402PayResult
	h, err := c.call(ctx, http.MethodPost, "/agents/"+pathID(id)+"/x402/pay", nil, r, &out, http.Header{"Idempotency-Key": {r.IdempotencyKey}}, true)
	if err != nil {
		return nil, err
	}
	out.Replayed = h.Get("Idempotent-Replayed") == "true"
	out.IdempotencyKey = r.IdempotencyKey
	return &out, nil
}

// GetX402Payment reads one x402 payment.
func (c *Client) GetX402Payment(ctx context.Context, id string) (*X402Payment, error) {
	var out X402Payment
	_, err := c.call(ctx, http.MethodGet, "/x402/payments/"+pathID(id), nil, nil, &out, nil, false)
	return &out, err
}

// X402Filter selects x402 payments; zero fields select all.
type X402Filter struct {
	WalletID     string
	State        string
	Asset        string // a symbol of GET /assets
	Since, Until time.Time
	Page
}

// ListX402Payments answers a page of x402 payments, newest first, and the
// next cursor ("" on the last page).
func (c *Client) ListX402Payments(ctx context.Context, f X402Filter) ([]X402Payment, string, error) {
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
		Payments   []X402Payment
		NextCursor *string `json:"next_cursor"`
	}
	_, err := c.call(ctx, http.MethodGet, "/x402/payments", q, nil, &out, nil, false)
	return out.Payments, deref(out.NextCursor), err
}

// RequestWalletExport asks for wallet id's secret sealed to recipient (a
// base64 X25519 public key). Only a dashboard owner may (a client whose
// HTTP client carries an owner's session); another owner approves.
func (c *Client) RequestWalletExport(ctx context.Context, id, recipient string) (*WalletExport, error) {
	var out WalletExport
	_, err := c.call(ctx, http.MethodPost, "/wallets/"+pathID(id)+"/exports", nil, map[string]string{"recipient_public_key": recipient}, &out, nil, true)
	return &out, err
}

// GetWalletExport reads an export request and, once approved, the sealed
// secret.
func (c *Client) GetWalletExport(ctx context.Context, id, exportID string) (*WalletExport, error) {
	var out WalletExport
	_, err := c.call(ctx, http.MethodGet, "/wallets/"+pathID(id)+"/exports/"+pathID(exportID), nil, nil, &out, nil, false)
	return &out, err
}

// ApproveWalletExport approves another owner's export request.
func (c *Client) ApproveWalletExport(ctx context.Context, id, exportID string) (*WalletExport, error) {
	var out WalletExport
	_, err := c.call(ctx, http.MethodPost, "/wallets/"+pathID(id)+"/exports/"+pathID(exportID)+"/approve", nil, nil, &out, nil, true)
	return &out, err
}

// RejectWalletExport rejects an export request.
func (c *Client) RejectWalletExport(ctx context.Context, id, exportID string) (*WalletExport, error) {
	var out WalletExport
	_, err := c.call(ctx, http.MethodPost, "/wallets/"+pathID(id)+"/exports/"+pathID(exportID)+"/reject", nil, nil, &out, nil, true)
	return &out, err
}

// ListWalletExports lists the account's export requests, newest first
// (owners only); walletID and state, when set, filter them.
func (c *Client) ListWalletExports(ctx context.Context, walletID, state string, p Page) ([]WalletExport, string, error) {
	q := p.query()
	if walletID != "" {
		q.Set("wallet_id", walletID)
	}
	if state != "" {
		q.Set("state", state)
	}
	var out struct {
		Exports    []WalletExport
		NextCursor *string `json:"next_cursor"`
	}
	_, err := c.call(ctx, http.MethodGet, "/exports", q, nil, &out, nil, false)
	return out.Exports, deref(out.NextCursor), err
}

// GetAccountSettings reads the account's settings.
func (c *Client) GetAccountSettings(ctx context.Context) (*AccountSettings, error) {
	var out AccountSettings
	_, err := c.call(ctx, http.MethodGet, "/account/settings", nil, nil, &out, nil, false)
	return &out, err
}

// UpdateAccountSettings sets the settings' fields that are set (owners
// and admin keys).
func (c *Client) UpdateAccountSettings(ctx context.Context, s AccountSettingsInput) (*AccountSettings, error) {
	var out AccountSettings
	_, err := c.call(ctx, http.MethodPatch, "/account/settings", nil, s, &out, nil, true)
	return &out, err
}

// HistoryQuery picks a balance history's asset and instants: At alone
// (the balance then), or a point every Interval from From to To (each
// optional: the service's default is the 30 days ending now).
type HistoryQuery struct {
	// Asset is a symbol of ListAssets or SOL (any case), or "all" for a
	// series of each; "" for USDC.
	Asset    string
	At       time.Time
	From, To time.Time
	// Interval is "day" (the default) or "hour".
	Interval string
}

// GetWalletBalanceHistory reads a wallet's balance over time from its
// ledger: a series per asset asked, each point in its asset's units.
func (c *Client) GetWalletBalanceHistory(ctx context.Context, id string, q HistoryQuery) (*BalanceHistory, error) {
	v := url.Values{}
	if q.Asset != "" {
		v.Set("asset", q.Asset)
	}
	for k, t := range map[string]time.Time{"at": q.At, "from": q.From, "to": q.To} {
		if !t.IsZero() {
			v.Set(k, t.UTC().Format(time.RFC3339Nano))
		}
	}
	if q.Interval != "" {
		v.Set("interval", q.Interval)
	}
	var out BalanceHistory
	_, err := c.call(ctx, http.MethodGet, "/wallets/"+pathID(id)+"/balance/history", v, nil, &out, nil, false)
	return &out, err
}

// DifferenceFilter narrows a wallet's balance differences.
type DifferenceFilter struct {
	// Asset is a symbol of ListAssets, or SOL (any case); "" for every
	// asset.
	Asset string
	Page
}

// ListWalletBalanceDifferences answers a page of the differences between
// wallet id's ledger and the chain, newest first: unexplained outflows and
// the daily snapshots that disagreed, and the cursor of the next page (""
// on the last).
func (c *Client) ListWalletBalanceDifferences(ctx context.Context, id string, f DifferenceFilter) (*BalanceDifferences, error) {
	q := f.query()
	if f.Asset != "" {
		q.Set("asset", f.Asset)
	}
	var out BalanceDifferences
	_, err := c.call(ctx, http.MethodGet, "/wallets/"+pathID(id)+"/balance/differences", q, nil, &out, nil, false)
	return &out, err
}

// ListAssets answers the tokens the service knows on the key's network:
// symbol, mint, token program, decimals and the currency each is pegged
// to.
func (c *Client) ListAssets(ctx context.Context) (*Assets, error) {
	var out Assets
	_, err := c.call(ctx, http.MethodGet, "/assets", nil, nil, &out, nil, false)
	return &out, err
}
