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

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/mpp"
	"github.com/agentwallet/agentwallet/internal/payment"
)

type mppPayInput struct {
	ID             string `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Optional, as on POST /agents/{id}/send: a repeat with the same body within 24 hours answers the first answer again (Idempotent-Replayed: true) and signs nothing more; with another body 422; while the first is in progress 409." example:"6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"`
	Body           MPPPayBody
}

// MPPPayBody is the body of an MPP payment.
type MPPPayBody struct {
	Challenge  string  `json:"challenge" maxLength:"49152" doc:"The seller's 402 WWW-Authenticate value as received (several header lines joined with \", \"): every Payment challenge in it is read, and the Solana charge the wallet can pay is chosen." example:"Payment id=\"defTlZ_B5E5HUYzEw61ZM3Mlx8CnfN8grbMlAEYnYFw\", realm=\"api.example.com\", method=\"solana\", intent=\"charge\", request=\"eyJhbW91bnQiOiIxMDAwMCJ9\", expires=\"2026-04-01T12:05:00.000Z\""`
	Resource   string  `json:"resource" maxLength:"2048" doc:"The URL paid for (an MPP challenge does not name it): shown to approvers, and what an approval grants." example:"https://api.example.com/weather"`
	MaxUSDC    *Amount `json:"max_usdc,omitempty" doc:"Optional cap on this payment, in whole units of the asset paid: challenges above it are not payable (422 amount_over_max). The wallet's policy applies besides." example:"0.05"`
	ApprovalID *string `json:"approval_id,omitempty" maxLength:"64" doc:"An approved MPP approval (ap_…) of this wallet: pays the seller's fresh challenge for what was approved (same realm, recipient, split recipients and shares, network, asset and resource, amount at most the approved one), once, within 15 minutes of the approval." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
}

// MPPSplit is a further recipient of an MPP charge.
type MPPSplit struct {
	To     string   `json:"to" doc:"The recipient's address." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	Amount Quantity `json:"amount" doc:"Its share, in whole units of the asset." example:"0.002"`
}

type mppPayOutput struct {
	Status   int
	Replayed string `header:"Idempotent-Replayed" doc:"true when this is the stored answer to an earlier request with the same Idempotency-Key."`
	Body     struct {
		Status        string     `json:"status" enum:"signed,pending_approval" doc:"signed: retry the request to the seller with header: authorization. pending_approval: a human must approve; then pay again with approval_id and a fresh challenge." example:"signed"`
		PaymentID     string     `json:"payment_id" format:"uuid" doc:"The payment's id (GET /mpp/payments/{id})." example:"0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"`
		Header        string     `json:"header,omitempty" doc:"When signed: the header to send the credential in (Authorization, or the one the challenge names)." example:"Authorization"`
		Authorization string     `json:"authorization,omitempty" doc:"When signed: the header's value, \"Payment \" and the credential carrying the signed transaction (the seller broadcasts it)." example:"Payment eyJjaGFsbGVuZ2UiOnt9fQ"`
		Amount        Quantity   `json:"amount" doc:"Paid in all (splits included), in whole units of the asset." example:"0.01"`
		Asset         string     `json:"asset" doc:"The asset paid." example:"USDC"`
		PayTo         string     `json:"pay_to" doc:"The seller's recipient." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
		Splits        []MPPSplit `json:"splits" doc:"Further recipients and their shares (each passed the allowlist)."`
		Network       string     `json:"network" doc:"The network as the challenge names it." example:"devnet"`
		Resource      string     `json:"resource" doc:"The URL paid for." example:"https://api.example.com/weather"`
		ApprovalID    string     `json:"approval_id,omitempty" doc:"When pending_approval: the approval's id." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
	}
}

// MPPReceipt is a seller's Payment-Receipt.
type MPPReceipt struct {
	Reference   string `json:"reference" doc:"The transaction's signature, as the seller gives it." example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
	Status      string `json:"status" doc:"success." example:"success"`
	Timestamp   string `json:"timestamp" doc:"When the seller says it was paid." example:"2026-04-01T12:00:04.000Z"`
	ChallengeID string `json:"challenge_id" doc:"The challenge it answers." example:"defTlZ_B5E5HUYzEw61ZM3Mlx8CnfN8grbMlAEYnYFw"`
	ExternalID  string `json:"external_id,omitempty" doc:"The seller's reference, when it set one." example:"order-42"`
}

// MPPPayment is an MPP payment as GET /mpp/payments answers it.
type MPPPayment struct {
	ID          string      `json:"id" format:"uuid" doc:"The payment's id (payment_id of the pay answer)." example:"0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"`
	WalletID    string      `json:"wallet_id" format:"uuid" doc:"The paying wallet." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	State       string      `json:"state" enum:"signed,settled,expired,failed,pending_approval,approved,rejected" doc:"As an x402 payment's: signed (handed to the agent, its amount reserved until the chain says), settled (landed: signature), expired (its blockhash expired before the seller broadcast it; or, parked, its grant lapsed unused), failed (landed failed on chain), pending_approval, approved (granted; paid_by names the payment that used it), rejected." example:"settled"`
	Amount      Quantity    `json:"amount" doc:"Paid in all, splits included, in whole units of asset." example:"0.01"`
	Asset       string      `json:"asset" doc:"The asset paid." example:"USDC"`
	PayTo       string      `json:"pay_to" doc:"The seller's recipient." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	Splits      []MPPSplit  `json:"splits" doc:"Further recipients and their shares."`
	Network     string      `json:"network" doc:"As the challenge names it." example:"devnet"`
	Realm       string      `json:"realm" doc:"The seller, as its challenge names itself." example:"api.example.com"`
	ChallengeID string      `json:"challenge_id" doc:"The challenge paid (paid once per account)." example:"defTlZ_B5E5HUYzEw61ZM3Mlx8CnfN8grbMlAEYnYFw"`
	Resource    string      `json:"resource" doc:"The URL paid for." example:"https://api.example.com/weather"`
	Description *string     `json:"description" nullable:"true" doc:"The seller's description, or null." example:"Weather report"`
	FeePayer    *string     `json:"fee_payer" nullable:"true" doc:"Who pays the network fee: the seller's fee payer, or the wallet when the seller offers none; null while parked." example:"2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4"`
	Signature   *string     `json:"signature" nullable:"true" doc:"When settled (or failed on chain): the transaction's signature on chain; else null." example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
	Receipt     *MPPReceipt `json:"receipt" doc:"The seller's receipt, once the agent reported it (POST /mpp/payments/{id}/receipt); null before. The state follows the chain, not the receipt."`
	Error       *string     `json:"error" nullable:"true" doc:"Why it expired or failed, or null." example:"its blockhash expired before the seller broadcast it"`
	ApprovalID  *string     `json:"approval_id" nullable:"true" doc:"The approval it waited for, or the grant it was paid with (ap_…), or null." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
	PaidBy      *string     `json:"paid_by" nullable:"true" format:"uuid" doc:"When approved and the grant was used: the payment that used it; else null." example:"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"`
	CreatedAt   time.Time   `json:"created_at" doc:"When it was asked for, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	UpdatedAt   time.Time   `json:"updated_at" doc:"Its last change." example:"2026-04-01T12:00:05Z"`
}

type getMPPOutput struct {
	Body MPPPayment
}

type listMPPOutput struct {
	Body struct {
		Payments   []MPPPayment `json:"payments" doc:"Newest first."`
		NextCursor *string      `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

type mppReceiptInput struct {
	ID   string `path:"id" doc:"The payment's id." example:"0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"`
	Body struct {
		Receipt string `json:"receipt" maxLength:"4096" doc:"The seller's Payment-Receipt header value, as received." example:"eyJtZXRob2QiOiJzb2xhbmEifQ"`
	}
}

type mppReceiptOutput struct {
	Body MPPPayment
}

func (s *server) registerMPP(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "mpp-pay",
		Method:      http.MethodPost,
		Path:        Prefix + "/agents/{id}/mpp/pay",
		Summary:     "Pay an MPP charge",
		Description: "Reads the Payment challenges of a seller's 402 (the Machine Payments Protocol) and chooses the Solana `charge` the wallet can pay (the wallet's network, an asset its policy lists, " +
			"an unexpired challenge, at most `max_usdc`; 422 naming each challenge's reason when none is). " +
			"A 402 carrying a challenge this account already paid (by any of its wallets) answers 409 with reason `already_paid` and that payment's `payment_id` (when the key reaches its wallet): a challenge is paid once, and nothing is judged or signed. " +
			"Otherwise it puts the charge through the wallet's policy as a send of its whole amount would go, every split recipient held to the allowlist: 403 `Blocked by policy` with `reason`, 202 `pending_approval`, " +
			"or 200 `signed`: the worker signed the charge's transaction with the wallet's key (partially when the seller's fee payer pays the fee: the wallet needs no SOL; else the wallet pays it) " +
			"and the answer carries the credential to retry the request with; the seller broadcasts it. The amount stays reserved against the daily limit until the chain shows the payment landed (settled) " +
			"or its blockhash expired (expired, `mpp.expired`). Idempotency-Key as on sends.",
		Tags:         []string{"mpp"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Responses:    map[string]*huma.Response{"202": {Description: "Parked for human approval."}},
		Errors:       []int{400, 401, 403, 404, 409, 413, 422, 502, 503},
	}, s.payMPP)
	huma.Register(api, huma.Operation{
		OperationID: "get-mpp-payment",
		Method:      http.MethodGet,
		Path:        Prefix + "/mpp/payments/{id}",
		Summary:     "Get an MPP payment",
		Description: "One MPP payment of the account: its state, amount, recipients, resource, its signature once settled and the seller's receipt once reported. Another account's id answers 404.",
		Tags:        []string{"mpp"},
		Errors:      []int{401, 404, 422},
	}, s.getMPP)
	huma.Register(api, huma.Operation{
		OperationID: "list-mpp-payments",
		Method:      http.MethodGet,
		Path:        Prefix + "/mpp/payments",
		Summary:     "List MPP payments",
		Description: "The account's MPP payments, newest first, with the filters `wallet_id`, `state`, `asset`, `since`, `until` and keyset pagination (`limit`, `cursor`) as GET /transactions.",
		Tags:        []string{"mpp"},
		Errors:      []int{400, 401, 404, 422},
	}, s.listMPP)
	huma.Register(api, huma.Operation{
		OperationID: "record-mpp-receipt",
		Method:      http.MethodPost,
		Path:        Prefix + "/mpp/payments/{id}/receipt",
		Summary:     "Report an MPP receipt",
		Description: "Keeps the seller's `Payment-Receipt` for the payment, once (a second report changes nothing): it must answer the payment's challenge with status success (else 422). " +
			"The payment's state still follows the chain.",
		Tags:         []string{"mpp"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Errors:       []int{400, 401, 404, 413, 422},
	}, s.recordMPPReceipt)
}

// parseMPP validates an MPP pay request into a request of the caller's
// account (not yet recorded): the challenges are read and the charge
// selected here, with the wallet's address; the worker selects again.
func (s *server) parseMPP(ctx context.Context, walletParam string, in *MPPPayBody) (payment.Request, error) {
	if strings.TrimSpace(in.Challenge) == "" {
		return payment.Request{}, fieldError("challenge", "is required: the seller's WWW-Authenticate value")
	}
	cs, err := mpp.ParseChallenges(in.Challenge)
	if err != nil {
		return payment.Request{}, fieldError("challenge", err.Error())
	}
	if err := checkResource(in.Resource, "the URL paid for"); err != nil {
		return payment.Request{}, err
	}
	b, err := s.buyer(ctx, walletParam, in.MaxUSDC, in.ApprovalID)
	if err != nil {
		return payment.Request{}, err
	}
	c, err := mpp.Select(cs, mpp.Wallet{Network: b.network, Owner: b.owner, Tokens: b.tokens}, (*money.Quantity)(b.max), time.Now())
	var np *mpp.NotPayableError
	if errors.As(err, &np) {
		e := &Error{status: http.StatusUnprocessableEntity, Message: np.Error()}
		for _, r := range np.Rejections {
			e.Details = append(e.Details, ErrorDetail{
				Location: fmt.Sprintf("body.challenge[%d]", r.Index), Message: string(r.Reason) + ": " + r.Detail,
			})
		}
		return payment.Request{}, e
	}
	if err != nil {
		return payment.Request{}, fieldError("challenge", err.Error())
	}
	r := b.request
	r.To, r.Amount, r.Asset = c.Recipient.String(), c.Amount, c.Token.Symbol
	splits := make([]payment.Split, len(c.Splits))
	for i, sp := range c.Splits {
		splits[i] = payment.Split{To: sp.Recipient.String(), Amount: int64(sp.Amount)}
	}
	r.X402 = &payment.X402Request{
		Protocol: payment.ProtocolMPP, Challenge: []byte(in.Challenge), Index: c.Index, Max: b.maxMicros(), Resource: in.Resource,
		Description: shown(c.Challenge.Description, maxDescription), NetworkID: c.Charge.Network, ApprovalID: b.grant,
		ChallengeID: c.Challenge.ID, Realm: shown(c.Challenge.Realm, maxRealm), Splits: splits,
	}
	return r, nil
}

func (s *server) payMPP(ctx context.Context, in *mppPayInput) (*mppPayOutput, error) {
	r, err := s.parseMPP(ctx, in.ID, &in.Body)
	if err != nil {
		return nil, err
	}
	paid, err := s.pay(ctx, &r, in.IdempotencyKey, "nothing was signed")
	if err != nil {
		return nil, err
	}
	out, err := mppAnswer(&r, paid.Outcome)
	if o := paid.Outcome; o.Status == payment.Refused && o.Cause == payment.CauseAlreadyPaid {
		out, err = nil, s.alreadyPaid(ctx, o)
	}
	if paid.Replayed {
		s.log.InfoContext(ctx, "MPP pay replayed", "wallet_id", r.WalletID, "status", paid.Outcome.Status)
		if err != nil {
			return nil, huma.ErrorWithHeaders(err, http.Header{"Idempotent-Replayed": {"true"}})
		}
		out.Replayed = "true"
		return out, nil
	}
	s.log.InfoContext(ctx, "MPP pay decided", "send_request_id", r.ID, "wallet_id", r.WalletID, "status", paid.Outcome.Status)
	return out, err
}

// alreadyPaid is the answer to an MPP charge one of whose challenges the
// account paid before: 409 already_paid, nothing signed, naming that
// payment (its id and state) when the caller reaches the wallet that paid
// it; a wallet out of the key's reach is not named.
func (s *server) alreadyPaid(ctx context.Context, o *payment.Outcome) error {
	e := &Error{status: http.StatusConflict, Reason: payment.CauseAlreadyPaid,
		Message: "the seller's challenge was already paid by another wallet of this account: it is not paid again; ask the seller for a fresh challenge"}
	pr := principal(ctx)
	v, err := payment.GetX402(ctx, s.DB, payment.ProtocolMPP, pr.AccountID, o.EarlierPayment)
	switch {
	case err == nil && pr.Reaches(v.WalletID):
		e.PaymentID = v.ID.String()
		e.Message = fmt.Sprintf("the seller's challenge was already paid (MPP payment %s, %s): it is not paid again; "+
			"that payment answers it, or ask the seller for a fresh challenge", v.ID, v.State)
	case err != nil && !errors.Is(err, payment.ErrX402NotFound):
		return s.fail(ctx, err)
	}
	return e
}

func splitsOf(ss []payment.Split) []MPPSplit {
	out := make([]MPPSplit, len(ss))
	for i, s := range ss {
		out[i] = MPPSplit{To: s.To, Amount: paidQuantity(s.Amount)}
	}
	return out
}

// mppAnswer maps an MPP pay request's outcome to its HTTP answer; r is
// the request as asked (a replay's is the same body).
func mppAnswer(r *payment.Request, o *payment.Outcome) (*mppPayOutput, error) {
	out := &mppPayOutput{}
	b := &out.Body
	b.Amount, b.Asset, b.PayTo, b.Network, b.Resource = paidQuantity(r.Amount), r.Asset, r.To, r.X402.NetworkID, r.X402.Resource
	b.Splits = splitsOf(r.X402.Splits)
	switch o.Status {
	case payment.Signed:
		out.Status = http.StatusOK
		b.Status, b.PaymentID, b.Header, b.Authorization = string(payment.Signed), o.X402.PaymentID.String(), o.X402.Header, o.X402.Value
		return out, nil
	case payment.PendingApproval:
		out.Status = http.StatusAccepted
		b.Status, b.ApprovalID = string(payment.PendingApproval), approval.PublicID(o.ApprovalID)
		if o.X402 != nil {
			b.PaymentID = o.X402.PaymentID.String()
		}
		return out, nil
	}
	_, err := x402Answer(r, o)
	return nil, err
}

func mppOf(v *payment.X402View) MPPPayment {
	out := MPPPayment{
		ID: v.ID.String(), WalletID: v.WalletID.String(), State: v.State, Amount: paidQuantity(v.Amount), Asset: v.Asset, PayTo: v.PayTo,
		Splits: []MPPSplit{}, FeePayer: v.FeePayer, Signature: v.Signature, Error: v.Error, CreatedAt: v.CreatedAt.UTC(), UpdatedAt: v.UpdatedAt.UTC(),
	}
	if x := v.X402; x != nil {
		out.Network, out.Resource, out.Realm, out.ChallengeID, out.Splits = x.NetworkID, x.Resource, x.Realm, x.ChallengeID, splitsOf(x.Splits)
		if x.Description != "" {
			d := x.Description
			out.Description = &d
		}
	}
	if len(v.Receipt) > 0 {
		var rc payment.MPPReceipt
		if err := json.Unmarshal(v.Receipt, &rc); err == nil {
			out.Receipt = &MPPReceipt{Reference: rc.Reference, Status: rc.Status, Timestamp: rc.Timestamp, ChallengeID: rc.ChallengeID, ExternalID: rc.ExternalID}
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

// mppPayment is the caller's MPP payment id, or 404.
func (s *server) mppPayment(ctx context.Context, param string) (*payment.X402View, error) {
	pr := principal(ctx)
	id, err := uuid.Parse(param)
	if err != nil {
		return nil, errorf(http.StatusNotFound, "MPP payment not found")
	}
	v, err := payment.GetX402(ctx, s.DB, payment.ProtocolMPP, pr.AccountID, id)
	if errors.Is(err, payment.ErrX402NotFound) || err == nil && !pr.Reaches(v.WalletID) {
		return nil, errorf(http.StatusNotFound, "MPP payment not found")
	}
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &v, nil
}

func (s *server) getMPP(ctx context.Context, in *getX402Input) (*getMPPOutput, error) {
	v, err := s.mppPayment(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &getMPPOutput{Body: mppOf(v)}, nil
}

func (s *server) listMPP(ctx context.Context, in *listX402Input) (*listMPPOutput, error) {
	pr := principal(ctx)
	f := payment.X402Filter{Protocol: payment.ProtocolMPP, State: in.State, Asset: strings.ToUpper(in.Asset), Since: in.Since, Until: in.Until, Limit: cmp.Or(in.Limit, TransactionsLimit), Wallets: pr.Wallets}
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
	out := &listMPPOutput{}
	out.Body.Payments, out.Body.NextCursor = page(vs, n, func(v *payment.X402View) string { return timeCursor(v.CreatedAt, v.ID) }, mppOf)
	return out, nil
}

func (s *server) recordMPPReceipt(ctx context.Context, in *mppReceiptInput) (*mppReceiptOutput, error) {
	v, err := s.mppPayment(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	rc, err := mpp.ParseReceipt(in.Body.Receipt)
	if err != nil {
		return nil, fieldError("receipt", err.Error())
	}
	recorded, err := payment.RecordMPPReceipt(ctx, s.DB, v.AccountID, v.ID, rc)
	switch {
	case errors.Is(err, payment.ErrReceiptMismatch):
		return nil, fieldError("receipt", err.Error())
	case errors.Is(err, payment.ErrX402NotFound):
		return nil, errorf(http.StatusNotFound, "MPP payment not found")
	case err != nil:
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "MPP receipt reported", "payment_id", v.ID, "recorded", recorded, "reference", rc.Reference)
	if v, err = s.mppPayment(ctx, in.ID); err != nil {
		return nil, err
	}
	return &mppReceiptOutput{Body: mppOf(v)}, nil
}
