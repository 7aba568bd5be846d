package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Paying whatever a seller asks: PayFetch reads a 402's challenges of
// either protocol, pays one through the service and retries once.

// The protocols PayFetch pays.
const (
	// ProtocolMPP is the Machine Payments Protocol's Solana charge: a 402
	// with WWW-Authenticate: Payment challenges, paid by retrying with
	// Authorization: Payment <credential>; the seller answers a
	// Payment-Receipt.
	ProtocolMPP = "mpp"
	// ProtocolX402 is x402: a 402 with a PAYMENT-REQUIRED header (v2) or an
	// x402Version 1 JSON body, paid by retrying with PAYMENT-SIGNATURE
	// (X-PAYMENT for v1); the seller answers PAYMENT-RESPONSE.
	ProtocolX402 = "x402"
)

// Payment outcomes of PayFetch beside StatusPendingApproval.
const (
	// StatusSigned: the service signed the payment; the paid retry did not
	// get an answer.
	StatusSigned = "signed"
	// StatusPaid: the paid retry was sent and answered (its status says
	// whether the seller took the payment).
	StatusPaid = "paid"
)

// challengeBodyLimit bounds how much of a 402's body is read for an x402
// v1 challenge; the rest stays in the response.
const challengeBodyLimit = 64 << 10

// PayOptions configure PayFetch.
type PayOptions struct {
	// Prefer is the protocol paid when a 402 offers both: ProtocolMPP (the
	// default) or ProtocolX402. The other is paid only when the service
	// cannot pay the preferred one (422: e.g. an asset the wallet may not
	// spend, a price over MaxUSDC, another network), so never both; a
	// challenge the account already paid (409 *ChallengePaidError) ends
	// the call: that payment answers the 402.
	Prefer string
	// Only, when set, is the one protocol PayFetch may pay: a 402 that
	// offers only the other is ErrNoChallenge.
	Only string
	// MaxUSDC caps the payment in whole units of the asset paid ("" for
	// none).
	MaxUSDC Amount
	// ApprovalID redeems an approved approval (ap_…) of an earlier call
	// that answered StatusPendingApproval: the same call with it pays what
	// was approved, once.
	ApprovalID string
	// HTTPClient reaches the seller (default http.DefaultClient); the
	// service is reached with the Client's own.
	HTTPClient *http.Client
}

// PayFetchResult is what PayFetch did.
type PayFetchResult struct {
	// Response is the seller's last answer: to the paid retry, or to the
	// request when nothing was paid (a 402 that waits for an approval
	// among them, its body intact). The caller closes its Body.
	Response *http.Response
	// Payment is what was paid or parked; nil when the seller asked for
	// nothing.
	Payment *FetchPayment
}

// FetchPayment is a payment PayFetch made or parked.
type FetchPayment struct {
	// Protocol is ProtocolMPP or ProtocolX402: the one paid.
	Protocol string
	// Status is StatusPaid, StatusPendingApproval (nothing was paid: a
	// human decides; call again with PayOptions.ApprovalID once approved)
	// or StatusSigned (the paid retry failed: the error says why).
	Status     string
	PaymentID  string
	ApprovalID string
	// Amount is what was paid in all, in whole units of the asset (Asset,
	// for MPP; the challenge's asset for x402).
	Amount   json.Number
	Asset    string
	PayTo    string
	Network  string
	Resource string
	// Settlement is an x402 seller's decoded PAYMENT-RESPONSE (or
	// X-PAYMENT-RESPONSE); nil when it sent none.
	Settlement *X402Settlement
	// Receipt is an MPP seller's Payment-Receipt as the service recorded
	// it (RecordMPPReceipt); nil when the seller sent none. ReceiptErr is
	// why it could not be recorded (the content was still served).
	Receipt    *MPPReceipt
	ReceiptErr error
	// Declined is why the preferred protocol was not paid when the other
	// one was (its *PayError, a 422); nil otherwise.
	Declined error
	// The service's answer to the pay call, one of them.
	MPP  *MPPPayResult
	X402 *X402PayResult
}

// X402Settlement is an x402 seller's settlement answer.
type X402Settlement struct {
	Success bool `json:"success"`
	// Transaction is the on-chain transaction's signature.
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Payer       string `json:"payer"`
	ErrorReason string `json:"errorReason,omitempty"`
}

// PayError is a payment PayFetch asked the service for and did not get:
// Protocol says which, Err is the service's answer (*BlockedError for a
// policy block, *APIError otherwise). errors.As finds either through it.
type PayError struct {
	Protocol string
	Err      error
}

func (e *PayError) Error() string { return e.Protocol + ": " + e.Err.Error() }

func (e *PayError) Unwrap() error { return e.Err }

var (
	// ErrNoChallenge is wrapped by PayFetch's error when the seller answered
	// 402 without a challenge of a protocol it may pay; nothing was paid.
	ErrNoChallenge = errors.New("agentwallet: the seller answered 402 without a payment challenge this client can pay")
	// ErrAlreadyPaid is PayFetch's error when the request carried a payment
	// header of its own and the seller answered 402: it is not paid again.
	ErrAlreadyPaid = errors.New("agentwallet: the request already carried a payment and the seller answered 402 again")
)

// order is the protocols PayFetch may pay, the preferred first.
func (o PayOptions) order() ([]string, error) {
	for name, p := range map[string]string{"Prefer": o.Prefer, "Only": o.Only} {
		if p != "" && p != ProtocolMPP && p != ProtocolX402 {
			return nil, fmt.Errorf("agentwallet: PayOptions.%s %q: use %q or %q", name, p, ProtocolMPP, ProtocolX402)
		}
	}
	switch {
	case o.Only != "":
		return []string{o.Only}, nil
	case o.Prefer == ProtocolX402:
		return []string{ProtocolX402, ProtocolMPP}, nil
	}
	return []string{ProtocolMPP, ProtocolX402}, nil
}

// PayFetch sends req to the seller and, when it answers 402, pays from
// wallet walletID through the service (the key never leaves it) and sends
// req once more with the credential, answering that retry's response.
//
// It reads both protocols of a 402: MPP (every WWW-Authenticate line's
// Payment challenges) and x402 (the PAYMENT-REQUIRED header of v2, or a
// JSON body of x402Version 1). When both are offered, the preferred one
// (PayOptions.Prefer: MPP unless said otherwise) is paid, and the other
// only when the service cannot pay the preferred one (422): a resource is
// paid once. For MPP it reports the seller's Payment-Receipt to the
// service (FetchPayment.Receipt).
//
// A payment at the wallet's approval threshold is not paid: Payment.Status
// is StatusPendingApproval with its ApprovalID, and Response is the 402;
// once a human approved, the same call with PayOptions.ApprovalID pays it.
// A policy block is a *BlockedError, a payment the service cannot make an
// *APIError (each inside a *PayError naming the protocol; the one that
// ended the call first, then any 422 of the preferred one before it); a
// 402 without a challenge it may pay wraps ErrNoChallenge. An answer other than 402 is
// returned as it is, with no Payment.
//
// A 402 whose MPP challenge this account already paid (a seller that
// answers the same challenge again) is a *ChallengePaidError naming that
// payment, and nothing else is paid: not the other protocol, and the
// earlier credential is not sent again (a credential answers one
// challenge once; the seller that still asks wants a fresh challenge
// paid, which it must offer).
//
// req's body is read into memory once, so the retry sends the same bytes.
// When the service signed a payment but the retry got no answer, the
// result carries the Payment (StatusSigned) beside the error.
func (c *Client) PayFetch(ctx context.Context, walletID string, req *http.Request, o PayOptions) (*PayFetchResult, error) {
	order, err := o.order()
	if err != nil {
		return nil, err
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("agentwallet: read the request body: %w", err)
		}
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	send := func(header, value string) (*http.Response, error) {
		r := req.Clone(ctx)
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("agentwallet: the request body: %w", err)
			}
			r.Body = body
		}
		if header != "" {
			r.Header.Set(header, value)
		}
		resp, err := hc.Do(r)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %w", req.URL.Redacted(), err)
		}
		return resp, nil
	}
	resp, err := send("", "")
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusPaymentRequired {
		return &PayFetchResult{Response: resp}, nil
	}
	if carriesPayment(req.Header) {
		resp.Body.Close()
		return nil, ErrAlreadyPaid
	}
	// The resource is where the 402 came from, after any redirect.
	resource := req.URL.String()
	if resp.Request != nil && resp.Request.URL != nil {
		resource = resp.Request.URL.String()
	}
	offer := readOffers(resp)
	var declined []error
	for _, proto := range order {
		if !offer.has(proto) {
			continue
		}
		p, err := c.payOffer(ctx, walletID, proto, offer, resource, o)
		if err != nil {
			pe := &PayError{Protocol: proto, Err: err}
			// Only a 422 tries the other protocol: a challenge paid before
			// (409 *ChallengePaidError) was this 402's answer, and a block
			// or any other failure is a decision about this purchase.
			var api *APIError
			var paidBefore *ChallengePaidError
			if errors.As(err, &api) && api.Status == http.StatusUnprocessableEntity && !errors.As(err, &paidBefore) {
				declined = append(declined, pe)
				continue
			}
			resp.Body.Close()
			// The refusal that ended the call first: errors.As finds it
			// before an earlier protocol's 422.
			return nil, errors.Join(append([]error{pe}, declined...)...)
		}
		p.Declined = errors.Join(declined...)
		if p.Status == StatusPendingApproval {
			return &PayFetchResult{Response: resp, Payment: p}, nil
		}
		resp.Body.Close()
		paid, err := send(p.header())
		if err != nil {
			return &PayFetchResult{Payment: p}, fmt.Errorf("agentwallet: the %s payment %s was signed but the paid request failed: %w", proto, p.PaymentID, err)
		}
		p.Status = StatusPaid
		c.readPaidAnswer(ctx, p, paid)
		return &PayFetchResult{Response: paid, Payment: p}, nil
	}
	resp.Body.Close()
	if len(declined) > 0 {
		return nil, errors.Join(declined...)
	}
	return nil, offer.missing(order)
}

// payOffer asks the service to pay the 402's offer of proto.
func (c *Client) payOffer(ctx context.Context, walletID, proto string, offer offers, resource string, o PayOptions) (*FetchPayment, error) {
	if proto == ProtocolMPP {
		r, err := c.MPPPay(ctx, walletID, MPPPayRequest{Challenge: offer.mpp, Resource: resource, MaxUSDC: o.MaxUSDC, ApprovalID: o.ApprovalID})
		if err != nil {
			return nil, err
		}
		if r.Status != StatusPendingApproval && (r.Header == "" || r.Authorization == "") {
			return nil, fmt.Errorf("agentwallet: the service answered %q without a credential", r.Status)
		}
		return &FetchPayment{Protocol: proto, Status: r.Status, PaymentID: r.PaymentID, ApprovalID: r.ApprovalID, Amount: r.Amount,
			Asset: r.Asset, PayTo: r.PayTo, Network: r.Network, Resource: r.Resource, MPP: r}, nil
	}
	r, err := c.X402Pay(ctx, walletID, X402PayRequest{PaymentRequired: offer.x402, Resource: resource, MaxUSDC: o.MaxUSDC, ApprovalID: o.ApprovalID})
	if err != nil {
		return nil, err
	}
	if r.Status != StatusPendingApproval && (r.Header == "" || r.PaymentSignature == "") {
		return nil, fmt.Errorf("agentwallet: the service answered %q without a payment header", r.Status)
	}
	return &FetchPayment{Protocol: proto, Status: r.Status, PaymentID: r.PaymentID, ApprovalID: r.ApprovalID, Amount: r.Amount,
		PayTo: r.PayTo, Network: r.Network, Resource: r.Resource, X402: r}, nil
}

// header is the request header, and its value, that carries the payment.
func (p *FetchPayment) header() (string, string) {
	if p.MPP != nil {
		return p.MPP.Header, p.MPP.Authorization
	}
	return p.X402.Header, p.X402.PaymentSignature
}

// readPaidAnswer reads the seller's answer to the paid retry: an x402
// settlement, or an MPP receipt, which it reports to the service.
func (c *Client) readPaidAnswer(ctx context.Context, p *FetchPayment, resp *http.Response) {
	if p.Protocol == ProtocolX402 {
		for _, h := range []string{"PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"} {
			if v := strings.TrimSpace(resp.Header.Get(h)); v != "" {
				var s X402Settlement
				if raw, err := decodeBase64(v); err == nil && json.Unmarshal(raw, &s) == nil {
					p.Settlement = &s
				}
				return
			}
		}
		return
	}
	v := strings.TrimSpace(resp.Header.Get("Payment-Receipt"))
	if v == "" {
		return
	}
	rec, err := c.RecordMPPReceipt(ctx, p.PaymentID, v)
	if err != nil {
		p.ReceiptErr = err
		return
	}
	p.Receipt = rec.Receipt
}

// offers are the challenges of a 402, as the seller sent them.
type offers struct {
	// mpp is every WWW-Authenticate line joined with ", ", when one of
	// them carries a Payment challenge (the service reads those and skips
	// the others).
	mpp string
	// x402 is the PaymentRequired object: the decoded PAYMENT-REQUIRED
	// header, or the x402Version 1 JSON body; x402Err why there is none.
	x402    json.RawMessage
	x402Err error
}

func (o offers) has(proto string) bool {
	if proto == ProtocolMPP {
		return o.mpp != ""
	}
	return o.x402 != nil
}

// missing is the error of a 402 that offers none of the protocols in
// order.
func (o offers) missing(order []string) error {
	switch {
	case len(order) == 1 && order[0] == ProtocolX402:
		return fmt.Errorf("%w: no x402 challenge we can read (%v)", ErrNoChallenge, o.x402Err)
	case len(order) == 1:
		return fmt.Errorf("%w: no MPP Payment challenge in WWW-Authenticate", ErrNoChallenge)
	}
	return fmt.Errorf("%w: no MPP Payment challenge in WWW-Authenticate, and no x402 challenge we can read (%v)", ErrNoChallenge, o.x402Err)
}

// latin1 is a header's octets as text: a header is ISO-8859-1 (as Node
// writes one), and the challenge goes to the service in a JSON string,
// whose encoder would turn an octet above 0x7f into U+FFFD. Valid UTF-8
// is kept as it is.
func latin1(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

// readOffers reads the challenges of a 402. The service validates them in
// full; this only tells which protocols the seller offers. The body read
// stays readable in resp.
func readOffers(resp *http.Response) offers {
	var o offers
	values := resp.Header.Values("WWW-Authenticate")
	for _, v := range values {
		if hasPaymentScheme(v) {
			o.mpp = latin1(strings.Join(values, ", "))
			break
		}
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, challengeBodyLimit+1))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if v := strings.TrimSpace(resp.Header.Get("PAYMENT-REQUIRED")); v != "" {
		raw, err := decodeBase64(v)
		switch {
		case err != nil || len(raw) > challengeBodyLimit:
			o.x402Err = errors.New("the PAYMENT-REQUIRED header is not base64 of at most 64 KiB")
		case !isX402(raw, 0):
			o.x402Err = errors.New("the PAYMENT-REQUIRED header is not an x402 PaymentRequired object")
		default:
			o.x402 = raw
		}
		return o
	}
	switch {
	case err != nil:
		o.x402Err = fmt.Errorf("read the 402's body: %w", err)
	case len(head) <= challengeBodyLimit && isX402(head, 1):
		o.x402 = head
	default:
		o.x402Err = errors.New("no PAYMENT-REQUIRED header, no x402Version 1 body")
	}
	return o
}

// isX402 reports whether raw is a JSON object with an x402Version (of
// version, when not 0) and accepts.
func isX402(raw []byte, version int) bool {
	var pr struct {
		Version *int            `json:"x402Version"`
		Accepts json.RawMessage `json:"accepts"`
	}
	if json.Unmarshal(raw, &pr) != nil || pr.Version == nil || len(pr.Accepts) == 0 {
		return false
	}
	return version == 0 || *pr.Version == version
}

// hasPaymentScheme reports whether a WWW-Authenticate value carries a
// challenge of the Payment scheme: "Payment" followed by a space at the
// start of the value or after a comma, outside quoted strings.
func hasPaymentScheme(v string) bool {
	const scheme = "payment"
	inQuote, escaped, start := false, false, true
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch {
		case inQuote:
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inQuote = false
			}
		case ch == '"':
			inQuote, start = true, false
		case ch == ',':
			start = true
		case ch == ' ' || ch == '\t':
		default:
			if start && len(v) > i+len(scheme) && strings.EqualFold(v[i:i+len(scheme)], scheme) && (v[i+len(scheme)] == ' ' || v[i+len(scheme)] == '\t') {
				return true
			}
			start = false
		}
	}
	return false
}

// carriesPayment reports whether a request already carries a payment of
// either protocol.
func carriesPayment(h http.Header) bool {
	if a := h.Get("Authorization"); len(a) > 8 && strings.EqualFold(a[:8], "payment ") {
		return true
	}
	return h.Get("Payment-Authorization") != "" || h.Get("PAYMENT-SIGNATURE") != "" || h.Get("X-PAYMENT") != ""
}

// decodeBase64 decodes standard base64, padded or not.
func decodeBase64(v string) ([]byte, error) {
	if len(v)%4 != 0 {
		return base64.RawStdEncoding.DecodeString(v)
	}
	return base64.StdEncoding.DecodeString(v)
}
