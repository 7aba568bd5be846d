package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/x402"
)

// maxResource bounds a resource URL (shown to approvers, stored).
const maxResource = 2048

// maxDescription bounds the seller's description kept for approvers.
const maxDescription = 500

// maxRealm bounds an MPP seller's realm kept for approvers, like its
// description: it names the seller (a host name has at most 253
// characters). The challenge echoed to the seller keeps it whole.
const maxRealm = 255

type x402PayInput struct {
	ID             string `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Optional, as on POST /agents/{id}/send: a repeat with the same body within 24 hours answers the first answer again (Idempotent-Replayed: true) and signs nothing more; with another body 422; while the first is in progress 409." example:"6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"`
	Body           X402PayBody
}

// Challenge is a seller's PaymentRequired object, kept byte for byte: the
// payment echoes parts of it that the seller compares.
type Challenge json.RawMessage

// UnmarshalJSON keeps the object's bytes.
func (c *Challenge) UnmarshalJSON(b []byte) error {
	*c = append((*c)[:0], b...)
	return nil
}

// Schema documents it as an object.
func (Challenge) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeObject, AdditionalProperties: true}
}

// X402PayBody is the body of an x402 payment.
type X402PayBody struct {
	PaymentRequired Challenge `json:"payment_required" doc:"The seller's PaymentRequired object as it sent it: the decoded PAYMENT-REQUIRED header (x402 v2) or the 402's JSON body (v1)." example:"{\"x402Version\":2,\"resource\":{\"url\":\"https://api.example.com/weather\"},\"accepts\":[{\"scheme\":\"exact\",\"network\":\"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1\",\"amount\":\"10000\",\"asset\":\"4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU\",\"payTo\":\"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM\",\"maxTimeoutSeconds\":60,\"extra\":{\"feePayer\":\"2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4\"}}]}"`
	Resource        *string   `json:"resource,omitempty" maxLength:"2048" doc:"The URL paid for, when the object does not carry it (v2 carries resource.url, v1 each entry's resource; theirs wins)." example:"https://api.example.com/weather"`
	MaxUSDC         *Amount   `json:"max_usdc,omitempty" doc:"Optional cap on this payment, in whole units of the asset paid (USDC, or another asset the policy lists: a stablecoin unit is a dollar or a euro): entries above it are not payable (422 amount_over_max). The wallet's policy applies besides." example:"0.05"`
	ApprovalID      *string   `json:"approval_id,omitempty" maxLength:"64" doc:"An approved x402 approval (ap_…) of this wallet: pays the seller's fresh challenge for what was approved (same pay_to, network, asset and resource, amount at most the approved one), once, within 15 minutes of the approval." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
}

type x402PayOutput struct {
	Status   int
	Replayed string `header:"Idempotent-Replayed" doc:"true when this is the stored answer to an earlier request with the same Idempotency-Key."`
	Body     struct {
		Status           string   `json:"status" enum:"signed,pending_approval" doc:"signed: retry the request to the seller with header: payment_signature. pending_approval: a human must approve; then pay again with approval_id and a fresh challenge." example:"signed"`
		PaymentID        string   `json:"payment_id" format:"uuid" doc:"The payment's id (GET /x402/payments/{id})." example:"0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"`
		Header           string   `json:"header,omitempty" enum:"PAYMENT-SIGNATURE,X-PAYMENT" doc:"When signed: the header to send the payment in (PAYMENT-SIGNATURE for x402 v2, X-PAYMENT for v1)." example:"PAYMENT-SIGNATURE"`
		PaymentSignature string   `json:"payment_signature,omitempty" doc:"When signed: the header's value, the base64 PaymentPayload carrying the partially signed transaction (the seller's fee payer signs and submits it)." example:"eyJ4NDAyVmVyc2lvbiI6Mn0="`
		Amount           Quantity `json:"amount" doc:"Paid, in whole units of asset." example:"0.01"`
		Asset            string   `json:"asset" doc:"The asset paid: a symbol of GET /assets." example:"USDC"`
		PayTo            string   `json:"pay_to" doc:"The seller's address (payTo)." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
		Network          string   `json:"network" doc:"The network as the challenge names it (CAIP-2 for v2, solana/solana-devnet for v1)." example:"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"`
		Resource         string   `json:"resource" doc:"The URL paid for." example:"https://api.example.com/weather"`
		ApprovalID       string   `json:"approval_id,omitempty" doc:"When pending_approval: the approval's id." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
	}
}

// X402Payment is an x402 payment as GET /x402/payments answers it.
type X402Payment struct {
	ID          string    `json:"id" format:"uuid" doc:"The payment's id (payment_id of the pay answer)." example:"0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"`
	WalletID    string    `json:"wallet_id" format:"uuid" doc:"The paying wallet." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	State       string    `json:"state" enum:"signed,settled,expired,failed,pending_approval,approved,rejected" doc:"signed: handed to the agent, its amount reserved until the chain says; settled: landed (signature); expired: its blockhash expired before the seller settled it (reservation released), or, for a parked payment, its grant lapsed unused; failed: landed failed on chain, nothing spent; pending_approval: waits for a human; approved: granted, to be paid with approval_id within 15 minutes of the decision (paid_by names the payment once it is); rejected: the approval was rejected or expired." example:"settled"`
	Amount      Quantity  `json:"amount" doc:"In whole units of asset." example:"0.01"`
	Asset       string    `json:"asset" doc:"The asset paid: a symbol of GET /assets." example:"USDC"`
	PayTo       string    `json:"pay_to" doc:"The seller's address." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	Network     string    `json:"network" doc:"As the challenge names it." example:"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"`
	Resource    string    `json:"resource" doc:"The URL paid for." example:"https://api.example.com/weather"`
	Description *string   `json:"description" nullable:"true" doc:"The seller's description of the resource, or null." example:"Weather report"`
	Signature   *string   `json:"signature" nullable:"true" doc:"When settled (or failed on chain): the transaction's on-chain signature (the seller's fee payer's); else null." example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
	Error       *string   `json:"error" nullable:"true" doc:"Why it expired or failed, or null." example:"its blockhash expired before the seller settled it"`
	ApprovalID  *string   `json:"approval_id" nullable:"true" doc:"The approval it waited for, or the grant it was paid with (ap_…), or null." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
	PaidBy      *string   `json:"paid_by" nullable:"true" format:"uuid" doc:"When approved and the grant was used: the payment that used it (its id); else null." example:"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"`
	CreatedAt   time.Time `json:"created_at" doc:"When it was asked for, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	UpdatedAt   time.Time `json:"updated_at" doc:"Its last change." example:"2026-04-01T12:00:05Z"`
}

type getX402Input struct {
	ID string `path:"id" doc:"The payment's id." example:"0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"`
}

type getX402Output struct {
	Body X402Payment
}

type listX402Input struct {
	WalletID string    `query:"wallet_id" doc:"Only this wallet's payments (UUIDv4). Another account's wallet answers 404." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	State    string    `query:"state" enum:"signed,settled,expired,failed,pending_approval,approved,rejected" doc:"Only payments in this state." example:"settled"`
	Asset    string    `query:"asset" maxLength:"10" doc:"Only payments of this asset (a symbol of GET /assets; any case)." example:"EURC"`
	Since    time.Time `query:"since" doc:"Only payments asked for at or after this time (ISO 8601)." example:"2026-04-01T00:00:00Z"`
	Until    time.Time `query:"until" doc:"Only payments asked for before this time (ISO 8601)." example:"2026-04-02T00:00:00Z"`
	Limit    int       `query:"limit" minimum:"1" maximum:"500" doc:"Page size, 1 to 500 (100 when omitted)." example:"100"`
	Cursor   string    `query:"cursor" maxLength:"200" doc:"The next_cursor of the previous page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
}

type listX402Output struct {
	Body struct {
		Payments   []X402Payment `json:"payments" doc:"Newest first."`
		NextCursor *string       `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

func (s *server) registerX402(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "x402-pay",
		Method:      http.MethodPost,
		Path:        Prefix + "/agents/{id}/x402/pay",
		Summary:     "Pay an x402 challenge",
		Description: "Chooses the challenge's `accepts` entry the wallet can pay (scheme `exact`, the wallet's network, an asset its policy lists (assets, most preferred first: the cheapest entry in the first such asset a challenge offers), a fee payer other than the wallet, at most `max_usdc`; 422 naming each entry's reason when none is) " +
			"and puts it through the wallet's policy as a send of that amount to `payTo` would go: 403 `Blocked by policy` with `reason`, 202 `pending_approval`, " +
			"or 200 `signed`: the worker signed the scheme's transaction with the wallet's key (partially: the seller's fee payer signs and pays the fee at settlement; the wallet needs no SOL) " +
			"and the answer carries the header to retry the request with. The amount stays reserved against the daily limit until the chain shows the payment landed (settled) " +
			"or its blockhash expired (expired, `x402.expired`). Idempotency-Key as on sends.",
		Tags:         []string{"x402"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Responses:    map[string]*huma.Response{"202": {Description: "Parked for human approval."}},
		Errors:       []int{400, 401, 403, 404, 409, 413, 422, 502, 503},
	}, s.payX402)
	huma.Register(api, huma.Operation{
		OperationID: "get-x402-payment",
		Method:      http.MethodGet,
		Path:        Prefix + "/x402/payments/{id}",
		Summary:     "Get an x402 payment",
		Description: "One x402 payment of the account: its state, amount, payTo, resource, and its on-chain signature once settled. Another account's id answers 404.",
		Tags:        []string{"x402"},
		Errors:      []int{401, 404, 422},
	}, s.getX402)
	huma.Register(api, huma.Operation{
		OperationID: "list-x402-payments",
		Method:      http.MethodGet,
		Path:        Prefix + "/x402/payments",
		Summary:     "List x402 payments",
		Description: "The account's x402 payments, newest first, with the filters `wallet_id`, `state`, `asset`, `since`, `until` and keyset pagination (`limit`, `cursor`) as GET /transactions.",
		Tags:        []string{"x402"},
		Errors:      []int{400, 401, 404, 422},
	}, s.listX402)
}

// shown is seller text kept for approvers, clipped to n characters
// (x402.ParsePaymentRequired refuses control and invisible formatting
// characters in it).
func shown(s string, n int) string {
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n])
	}
	return strings.TrimSpace(s)
}

// parseX402 validates a pay request into a request of the caller's
// account (not yet recorded): the challenge is parsed and the entry
// selected here, with the wallet's address; the worker selects again.
func (s *server) parseX402(ctx context.Context, walletParam string, in *X402PayBody) (payment.Request, error) {
	raw := json.RawMessage(in.PaymentRequired)
	if len(raw) == 0 || string(raw) == "null" {
		return payment.Request{}, fieldError("payment_required", "is required: the seller's PaymentRequired object")
	}
	pr, err := x402.ParsePaymentRequired(raw)
	if err != nil {
		return payment.Request{}, fieldError("payment_required", err.Error())
	}
	b, err := s.buyer(ctx, walletParam, in.MaxUSDC, in.ApprovalID)
	if err != nil {
		return payment.Request{}, err
	}
	c, err := pr.Select(x402.Wallet{Network: b.network, Owner: b.owner, Tokens: b.tokens}, (*money.Quantity)(b.max))
	var np *x402.NotPayableError
	if errors.As(err, &np) {
		e := &Error{status: http.StatusUnprocessableEntity, Message: np.Error()}
		for _, r := range np.Rejections {
			e.Details = append(e.Details, ErrorDetail{
				Location: fmt.Sprintf("body.payment_required.accepts[%d]", r.Index), Message: string(r.Reason) + ": " + r.Detail,
			})
		}
		return payment.Request{}, e
	}
	if err != nil {
		return payment.Request{}, fieldError("payment_required", err.Error())
	}
	resource := c.Resource.URL
	if resource == "" && in.Resource != nil {
		resource = *in.Resource
	}
	if err := checkResource(resource, "the challenge names no resource URL"); err != nil {
		return payment.Request{}, err
	}
	r := b.request
	r.To, r.Amount, r.Asset = c.PayTo.String(), c.Amount, c.Token.Symbol
	r.X402 = &payment.X402Request{
		Challenge: raw, Index: c.Index, Max: b.maxMicros(), Resource: resource,
		Description: shown(c.Resource.Description, maxDescription), Version: c.Version,
		NetworkID: c.Requirement.Network, ApprovalID: b.grant,
	}
	return r, nil
}

// buyer is what a pay request to a seller (x402 or MPP) names besides the
// challenge, read and checked: the paying wallet of the caller's account
// (its network, address and the tokens its policy lets it pay in), the
// caller's cap and the grant it presents; request is the caller's request
// of that wallet, to be completed.
type buyer struct {
	request payment.Request
	network solana.Network
	owner   sol.PublicKey
	tokens  []solana.Token
	max     *money.Micros[money.USD]
	grant   uuid.NullUUID
}

// maxMicros is the cap as the stored request keeps it.
func (b *buyer) maxMicros() *int64 {
	if b.max == nil {
		return nil
	}
	m := int64(*b.max)
	return &m
}

func (s *server) buyer(ctx context.Context, walletParam string, maxUSDC *Amount, approvalID *string) (*buyer, error) {
	b := &buyer{}
	if maxUSDC != nil {
		m, err := maxUSDC.Micros("max_usdc")
		if err != nil {
			return nil, err
		}
		if m <= 0 {
			return nil, fieldError("max_usdc", "must be greater than 0")
		}
		b.max = &m
	}
	if approvalID != nil {
		id, ok := approval.ParseID(*approvalID)
		if !ok {
			return nil, fieldError("approval_id", "must be an approval id (ap_…)")
		}
		b.grant = uuid.NullUUID{UUID: id, Valid: true}
	}
	w, err := s.wallet(ctx, walletParam)
	if err != nil {
		return nil, err
	}
	pri := principal(ctx)
	if b.owner, err = sol.PublicKeyFromBase58(w.Pubkey); err != nil {
		return nil, s.fail(ctx, fmt.Errorf("wallet %s address: %w", w.ID, err))
	}
	b.request, b.network = requestBy(pri, w.ID), pri.Network
	b.tokens = payment.PayableTokens(s.Assets, pri.Network, w.Policy())
	return b, nil
}

// checkResource refuses a resource URL that is missing (missing says
// why), too long, or holds characters that would make it read as another
// to an approver.
func checkResource(resource, missing string) error {
	switch {
	case resource == "":
		return fieldError("resource", "is required: "+missing)
	case len(resource) > maxResource:
		return fieldError("resource", fmt.Sprintf("must be at most %d bytes", maxResource))
	case !utf8.ValidString(resource) || strings.ContainsFunc(resource, policy.Deceptive):
		return fieldError("resource", "must not contain control characters or invisible formatting characters")
	}
	return nil
}

func (s *server) payX402(ctx context.Context, in *x402PayInput) (*x402PayOutput, error) {
	r, err := s.parseX402(ctx, in.ID, &in.Body)
	if err != nil {
		return nil, err
	}
	paid, err := s.pay(ctx, &r, in.IdempotencyKey, "nothing was signed")
	if err != nil {
		return nil, err
	}
	if paid.Replayed {
		s.log.InfoContext(ctx, "x402 pay replayed", "wallet_id", r.WalletID, "status", paid.Outcome.Status)
		out, err := x402Answer(&r, paid.Outcome)
		if err != nil {
			return nil, huma.ErrorWithHeaders(err, http.Header{"Idempotent-Replayed": {"true"}})
		}
		out.Replayed = "true"
		return out, nil
	}
	s.log.InfoContext(ctx, "x402 pay decided", "send_request_id", r.ID, "wallet_id", r.WalletID, "status", paid.Outcome.Status)
	return x402Answer(&r, paid.Outcome)
}

// x402Answer maps a pay request's outcome to its HTTP answer; r is the
// request as asked (a replay's is the same body).
func x402Answer(r *payment.Request, o *payment.Outcome) (*x402PayOutput, error) {
	out := &x402PayOutput{}
	b := &out.Body
	b.Amount, b.Asset, b.PayTo, b.Network, b.Resource = paidQuantity(r.Amount), r.Asset, r.To, r.X402.NetworkID, r.X402.Resource
	switch o.Status {
	case payment.Signed:
		out.Status = http.StatusOK
		x := o.X402
		b.Status, b.PaymentID, b.Header, b.PaymentSignature = string(payment.Signed), x.PaymentID.String(), x.Header, x.Value
		b.Amount, b.PayTo, b.Network, b.Resource = paidQuantity(x.Amount), x.PayTo, x.Network, x.Resource
		return out, nil
	case payment.PendingApproval:
		out.Status = http.StatusAccepted
		b.Status, b.ApprovalID = string(payment.PendingApproval), approval.PublicID(o.ApprovalID)
		if o.X402 != nil {
			b.PaymentID = o.X402.PaymentID.String()
		}
		return out, nil
	case payment.Blocked:
		left := USDC(o.RemainingToday)
		return nil, &Error{status: http.StatusForbidden, Message: "Blocked by policy", Reason: string(o.Reason), RemainingTodayUSDC: &left}
	case payment.Refused:
		if o.Cause == payment.CauseAccountFrozen {
			return nil, accountFrozen(o)
		}
		return nil, errorf(http.StatusUnprocessableEntity, "not signed: "+o.Detail)
	case payment.Unavailable:
		if o.NotSigned() {
			return nil, notSigned(o, "")
		}
		return nil, errorf(http.StatusServiceUnavailable, "no Solana RPC node of this network answered; nothing was signed, it is safe to retry")
	}
	return nil, fmt.Errorf("unknown x402 outcome %q", o.Status)
}

func x402Of(v *payment.X402View) X402Payment {
	out := X402Payment{
		ID: v.ID.String(), WalletID: v.WalletID.String(), State: v.State, Amount: paidQuantity(v.Amount), Asset: v.Asset, PayTo: v.PayTo,
		Signature: v.Signature, Error: v.Error, CreatedAt: v.CreatedAt.UTC(), UpdatedAt: v.UpdatedAt.UTC(),
	}
	if v.X402 != nil {
		out.Network, out.Resource = v.X402.NetworkID, v.X402.Resource
		if v.X402.Description != "" {
			d := v.X402.Description
			out.Description = &d
		}
	}
	if id := cmp.Or(v.ApprovalID, v.GrantApproval); id.Valid {
		p := approval.PublicID(id.UUID)
		out.ApprovalID = &p
	}
	if v.PaidBy.Valid {
		p := v.PaidBy.UUID.String()
		out.PaidBy = &p
	}
	return out
}

func (s *server) getX402(ctx context.Context, in *getX402Input) (*getX402Output, error) {
	pr := principal(ctx)
	id, err := uuid.Parse(in.ID)
	if err != nil {
		return nil, errorf(http.StatusNotFound, "x402 payment not found")
	}
	v, err := payment.GetX402(ctx, s.DB, payment.ProtocolX402, pr.AccountID, id)
	if errors.Is(err, payment.ErrX402NotFound) || err == nil && !pr.Reaches(v.WalletID) {
		return nil, errorf(http.StatusNotFound, "x402 payment not found")
	}
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &getX402Output{Body: x402Of(&v)}, nil
}

func (s *server) listX402(ctx context.Context, in *listX402Input) (*listX402Output, error) {
	pr := principal(ctx)
	f := payment.X402Filter{State: in.State, Asset: strings.ToUpper(in.Asset), Since: in.Since, Until: in.Until, Limit: cmp.Or(in.Limit, TransactionsLimit), Wallets: pr.Wallets}
	sc, err := s.listScope(ctx, in.Since, in.Until, in.WalletID, in.Cursor)
	if err != nil {
		return nil, err
	}
	f.WalletID, f.AfterTime, f.AfterID = sc.walletID, sc.afterTime, sc.afterID
	n := f.Limit
	f.Limit = n + 1
	vs, err := payment.ListX402(ctx, s.DB, pr.AccountID, f)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &listX402Output{}
	out.Body.Payments, out.Body.NextCursor = page(vs, n, func(v *payment.X402View) string { return timeCursor(v.CreatedAt, v.ID) }, x402Of)
	return out, nil
}
