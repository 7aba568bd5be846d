package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
)

// ToolX402Fetch fetches a URL and pays its x402 challenge.
const ToolX402Fetch = "x402_fetch"

var decimalText = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

const x402Description = "Fetch a URL and pay for it from an agent wallet if it asks (HTTP 402 with an x402 challenge on Solana in USDC or another stablecoin the wallet's policy lists), under the " +
	"wallet's spending policy. Answers the HTTP status, content_type and text of the response (the first 64 KiB; truncated says " +
	"when more was cut) and payment: null when nothing was paid; status \"paid\" with amount, pay_to and the settlement transaction; " +
	"\"pending_approval\" (a human must approve: once approved, call again with approval_id; do not retry before); or \"blocked\" " +
	"with a reason (exceeds_max_tx, exceeds_daily_limit, exceeds_weekly_limit, exceeds_monthly_limit, exceeds_velocity, " +
	"outside_active_hours, asset_not_allowed, recipient_not_allowed, wallet_frozen). Set max_usdc to cap the price (in whole units " +
	"of the asset paid: a dollar or a euro)."

// Bounds of x402_fetch and pay_fetch: the text a model gets, the request
// body it may send, and the time one fetch (both requests and the
// payment) may take.
const (
	X402TextLimit    = 64 << 10
	x402BodyLimit    = 64 << 10
	X402FetchTimeout = 60 * time.Second
)

// X402FetchInput is x402_fetch's input.
type X402FetchInput struct {
	WalletID   string `json:"wallet_id" jsonschema:"the paying agent wallet's id (UUID)"`
	URL        string `json:"url" jsonschema:"the http(s) URL to fetch"`
	Method     string `json:"method,omitempty" jsonschema:"the HTTP method: GET (default), POST, PUT, PATCH or DELETE"`
	Body       string `json:"body,omitempty" jsonschema:"the request body, e.g. JSON text (at most 64 KiB)"`
	MaxUSDC    string `json:"max_usdc,omitempty" jsonschema:"the most to pay for this request, in whole units of the asset paid (USDC unless the wallet pays in another stablecoin) as a decimal string, e.g. \"0.05\""`
	ApprovalID string `json:"approval_id,omitempty" jsonschema:"after a human approved a pending payment: its approval id (ap_…)"`
}

// X402PaymentOut is what x402_fetch or pay_fetch paid, or why it did not.
type X402PaymentOut struct {
	Status      string `json:"status" jsonschema:"paid, pending_approval, blocked or already_paid"`
	Protocol    string `json:"protocol,omitempty" jsonschema:"the protocol paid, parked or blocked: mpp or x402"`
	PaymentID   string `json:"payment_id,omitempty"`
	Amount      string `json:"amount,omitempty" jsonschema:"what was paid, in whole units of the asset the seller asked for"`
	Asset       string `json:"asset,omitempty" jsonschema:"the asset paid (MPP payments name it)"`
	PayTo       string `json:"pay_to,omitempty" jsonschema:"the seller's address"`
	Network     string `json:"network,omitempty"`
	Transaction string `json:"transaction,omitempty" jsonschema:"the settled transaction's signature, from the seller (x402's settlement, MPP's receipt)"`
	Settled     bool   `json:"settled,omitempty" jsonschema:"whether the seller says it settled the payment"`
	ApprovalID  string `json:"approval_id,omitempty"`
	ApproveURL  string `json:"approve_url,omitempty"`
	Reason      string `json:"reason,omitempty" jsonschema:"when blocked: the policy rule"`
	State       string `json:"state,omitempty" jsonschema:"when already_paid: the earlier payment's state (signed, settled, expired or failed)"`
}

// X402FetchOutput is x402_fetch's answer, and pay_fetch's.
type X402FetchOutput struct {
	Status      int             `json:"status" jsonschema:"the HTTP status of the (last) response"`
	ContentType string          `json:"content_type,omitempty"`
	Text        string          `json:"text,omitempty" jsonschema:"the response body as text, at most 64 KiB"`
	Truncated   bool            `json:"truncated,omitempty" jsonschema:"true when the body was longer than text"`
	Payment     *X402PaymentOut `json:"payment" jsonschema:"null when nothing was paid"`
	Next        string          `json:"next"`
}

// Option configures New.
type Option func(*options)

type options struct {
	fetch  *http.Client
	admit  Admit
	prefer string
}

// WithX402 enables x402_fetch and pay_fetch, whose requests to sellers go
// through fetch (the caller bounds where it may connect: the API process
// passes the webhook SSRF guard); payments go through the service's pay
// operations with the server's client, as every tool acts.
func WithX402(fetch *http.Client) Option {
	return func(o *options) { o.fetch = fetch }
}

// Admit decides whether one x402_fetch or pay_fetch call, whose arguments
// are valid, may fetch: it runs before anything is fetched, within the
// call's X402FetchTimeout. An error refuses the call with its text (a
// tool error) and nothing is fetched; otherwise release is called once
// the call is over.
type Admit func(ctx context.Context, walletID string) (release func(), err error)

// WithX402Admission makes every x402_fetch and pay_fetch ask admit first.
// A server that fetches on its callers' behalf (the API's /mcp) counts and
// bounds the calls there; without it (stdio, fetching from the agent's own
// machine) a call fetches at once.
func WithX402Admission(admit Admit) Option {
	return func(o *options) { o.admit = admit }
}

func addX402(s *mcp.Server, c *client.Client, o options, dashboard string) {
	yes := true
	mcp.AddTool(s, &mcp.Tool{Name: ToolX402Fetch, Title: "Fetch a URL, paying x402", Description: x402Description,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in X402FetchInput) (*mcp.CallToolResult, X402FetchOutput, error) {
			out, err := fetchPaying(ctx, c, o, dashboard, ToolX402Fetch, in, client.PayOptions{Only: client.ProtocolX402})
			if err != nil {
				return nil, X402FetchOutput{}, err
			}
			return nil, out, nil
		})
}

// fetchPaying is x402_fetch and pay_fetch (tool names which): it checks
// the arguments, is admitted, and fetches in.URL with client.PayFetch
// under po, answering what a model reads.
func fetchPaying(ctx context.Context, c *client.Client, o options, dashboard, tool string, in X402FetchInput, po client.PayOptions) (X402FetchOutput, error) {
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return X402FetchOutput{}, errors.New("url must be an absolute http(s) URL")
	}
	method := strings.ToUpper(in.Method)
	switch method {
	case "":
		method = http.MethodGet
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return X402FetchOutput{}, fmt.Errorf("method %q: use GET, POST, PUT, PATCH or DELETE", in.Method)
	}
	if len(in.Body) > x402BodyLimit {
		return X402FetchOutput{}, fmt.Errorf("body is larger than %d KiB", x402BodyLimit>>10)
	}
	if in.MaxUSDC != "" && (!decimalText.MatchString(in.MaxUSDC) || strings.Trim(in.MaxUSDC, "0.") == "") {
		return X402FetchOutput{}, fmt.Errorf("max_usdc %q: want a positive decimal string, e.g. \"0.05\"", in.MaxUSDC)
	}
	if po.Prefer != "" && po.Prefer != client.ProtocolMPP && po.Prefer != client.ProtocolX402 {
		return X402FetchOutput{}, fmt.Errorf("prefer %q: use mpp or x402, or leave it empty", po.Prefer)
	}
	ctx, cancel := context.WithTimeout(ctx, X402FetchTimeout)
	defer cancel()
	if o.admit != nil {
		release, err := o.admit(ctx, in.WalletID)
		if err != nil {
			return X402FetchOutput{}, err
		}
		defer release()
	}
	var body io.Reader
	if in.Body != "" {
		body = strings.NewReader(in.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return X402FetchOutput{}, err
	}
	if in.Body != "" && json.Valid([]byte(in.Body)) {
		req.Header.Set("Content-Type", "application/json")
	}
	po.MaxUSDC, po.ApprovalID, po.HTTPClient = client.Amount(in.MaxUSDC), in.ApprovalID, o.fetch
	res, err := c.PayFetch(ctx, in.WalletID, req, po)
	var blocked *client.BlockedError
	var paidBefore *client.ChallengePaidError
	switch {
	case errors.As(err, &paidBefore):
		return X402FetchOutput{Status: http.StatusPaymentRequired, Payment: earlierPayment(ctx, c, err, paidBefore),
			Next: "the seller asked again for a challenge this account already paid: nothing more was paid; do not retry, " +
				"report the earlier payment (the seller should give what it sold for it, or a fresh challenge)"}, nil
	case errors.As(err, &blocked):
		p := &X402PaymentOut{Status: "blocked", Reason: blocked.Reason}
		var pe *client.PayError
		if errors.As(err, &pe) {
			p.Protocol = pe.Protocol
		}
		return X402FetchOutput{Status: http.StatusPaymentRequired, Payment: p, Next: "the policy refused this payment: " + nextForBlock(blocked.Reason)}, nil
	case err != nil:
		return X402FetchOutput{}, payToolError(err)
	case res.Payment == nil:
		return answerOf(res.Response, nil, "done"), nil
	}
	paid := res.Payment
	p := &X402PaymentOut{Protocol: paid.Protocol, PaymentID: paid.PaymentID, Amount: paid.Amount.String(), Asset: paid.Asset, PayTo: paid.PayTo, Network: paid.Network}
	if paid.Status == client.StatusPendingApproval {
		res.Response.Body.Close()
		return X402FetchOutput{Status: http.StatusPaymentRequired, Payment: &X402PaymentOut{Status: "pending_approval", Protocol: paid.Protocol, ApprovalID: paid.ApprovalID,
			ApproveURL: strings.TrimSuffix(dashboard, "/") + "/dashboard/approvals/" + paid.ApprovalID},
			Next: "the seller asked for payment, at or over the approval threshold: a human must approve; once approved call " + tool + " again with approval_id"}, nil
	}
	p.Status = "paid"
	switch {
	case paid.Settlement != nil:
		p.Transaction, p.Settled = paid.Settlement.Transaction, paid.Settlement.Success
	case paid.Receipt != nil:
		p.Transaction, p.Settled = paid.Receipt.Reference, paid.Receipt.Status == "success"
	}
	next := "done"
	switch {
	case res.Response.StatusCode == http.StatusPaymentRequired:
		next = "the seller refused the payment: do not retry unchanged"
	case paid.ReceiptErr != nil:
		next = "done; the seller's receipt was not recorded: " + toolError(paid.ReceiptErr).Error()
	}
	return answerOf(res.Response, p, next), nil
}

// earlierPayment is the answer's payment when the seller's challenge was
// paid before: that payment as the service reads it (its state, amount,
// recipient and signature), or only its id when it cannot be read; no id
// when a wallet out of the key's reach paid it.
func earlierPayment(ctx context.Context, c *client.Client, err error, paid *client.ChallengePaidError) *X402PaymentOut {
	p := &X402PaymentOut{Status: "already_paid", PaymentID: paid.PaymentID}
	var pe *client.PayError
	if errors.As(err, &pe) {
		p.Protocol = pe.Protocol
	}
	if paid.PaymentID == "" || p.Protocol != client.ProtocolMPP {
		return p
	}
	got, gerr := c.GetMPPPayment(ctx, paid.PaymentID)
	if gerr != nil {
		return p
	}
	p.State, p.Amount, p.Asset, p.PayTo, p.Network, p.Settled = got.State, got.Amount.String(), got.Asset, got.PayTo, got.Network, got.State == "settled"
	if got.Signature != nil {
		p.Transaction = *got.Signature
	} else if got.Receipt != nil {
		p.Transaction = got.Receipt.Reference
	}
	return p
}

// payToolError words a failed payment for a model: each protocol tried
// and the service's answer to it.
func payToolError(err error) error {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	parts := make([]string, len(errs))
	for i, e := range errs {
		var pe *client.PayError
		if errors.As(e, &pe) {
			parts[i] = pe.Protocol + ": " + toolError(pe.Err).Error()
		} else {
			parts[i] = toolError(e).Error()
		}
	}
	return errors.New(strings.Join(parts, "; "))
}

// answerOf reads at most X402TextLimit bytes of resp's body as text.
func answerOf(resp *http.Response, p *X402PaymentOut, next string) X402FetchOutput {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, X402TextLimit+1))
	out := X402FetchOutput{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Payment: p, Next: next}
	if len(b) > X402TextLimit {
		b, out.Truncated = b[:X402TextLimit], true
	}
	out.Text = strings.ToValidUTF8(string(b), string(utf8.RuneError))
	return out
}

// FetchClient is the HTTP client of x402_fetch where the caller cannot
// reach anything the fetcher can (stdio, on the agent's own machine): a
// timeout and at most 5 redirects.
func FetchClient() *http.Client {
	return &http.Client{Timeout: X402FetchTimeout, CheckRedirect: LimitRedirects}
}

// LimitRedirects is the redirect policy of x402_fetch's clients: at most
// 5, each new connection still subject to the client's dialer.
func LimitRedirects(_ *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	return nil
}
