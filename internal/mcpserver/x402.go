package mcpserver

import (
	"context"
	"encoding/base64"
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
	"github.com/agentwallet/agentwallet/internal/x402"
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

// Bounds of x402_fetch: the text a model gets, the request body it may
// send, and the time one fetch (both requests and the payment) may take.
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

// X402PaymentOut is what x402_fetch paid, or why it did not.
type X402PaymentOut struct {
	Status      string `json:"status" jsonschema:"paid, pending_approval or blocked"`
	PaymentID   string `json:"payment_id,omitempty"`
	Amount      string `json:"amount,omitempty" jsonschema:"what was paid, in whole units of the asset the seller asked for"`
	PayTo       string `json:"pay_to,omitempty" jsonschema:"the seller's address"`
	Network     string `json:"network,omitempty"`
	Transaction string `json:"transaction,omitempty" jsonschema:"the settled transaction's signature, from the seller"`
	Settled     bool   `json:"settled,omitempty" jsonschema:"whether the seller says it settled the payment"`
	ApprovalID  string `json:"approval_id,omitempty"`
	ApproveURL  string `json:"approve_url,omitempty"`
	Reason      string `json:"reason,omitempty" jsonschema:"when blocked: the policy rule"`
}

// X402FetchOutput is x402_fetch's answer.
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
	fetch *http.Client
	admit Admit
}

// WithX402 enables x402_fetch, whose requests to sellers go through fetch
// (the caller bounds where it may connect: the API process passes the
// webhook SSRF guard); payments go through the service's pay operation
// with the server's client, as every tool acts.
func WithX402(fetch *http.Client) Option {
	return func(o *options) { o.fetch = fetch }
}

// Admit decides whether one x402_fetch call, whose arguments are valid,
// may fetch: it runs before anything is fetched, within the call's
// X402FetchTimeout. An error refuses the call with its text (a tool
// error) and nothing is fetched; otherwise release is called once the
// call is over.
type Admit func(ctx context.Context, walletID string) (release func(), err error)

// WithX402Admission makes every x402_fetch ask admit first. A server that
// fetches on its callers' behalf (the API's /mcp) counts and bounds the
// calls there; without it (stdio, fetching from the agent's own machine)
// a call fetches at once.
func WithX402Admission(admit Admit) Option {
	return func(o *options) { o.admit = admit }
}

func addX402(s *mcp.Server, c *client.Client, o options, dashboard string) {
	yes := true
	mcp.AddTool(s, &mcp.Tool{Name: ToolX402Fetch, Title: "Fetch a URL, paying x402", Description: x402Description,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in X402FetchInput) (*mcp.CallToolResult, X402FetchOutput, error) {
			out, err := x402Fetch(ctx, c, o, dashboard, in)
			if err != nil {
				return nil, X402FetchOutput{}, toolError(err)
			}
			return nil, out, nil
		})
}

func x402Fetch(ctx context.Context, c *client.Client, o options, dashboard string, in X402FetchInput) (X402FetchOutput, error) {
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
	ctx, cancel := context.WithTimeout(ctx, X402FetchTimeout)
	defer cancel()
	if o.admit != nil {
		release, err := o.admit(ctx, in.WalletID)
		if err != nil {
			return X402FetchOutput{}, err
		}
		defer release()
	}
	request := func(header, value string) (*http.Response, error) {
		var body io.Reader
		if in.Body != "" {
			body = strings.NewReader(in.Body)
		}
		req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
		if err != nil {
			return nil, err
		}
		if in.Body != "" && json.Valid([]byte(in.Body)) {
			req.Header.Set("Content-Type", "application/json")
		}
		if header != "" {
			req.Header.Set(header, value)
		}
		resp, err := o.fetch.Do(req)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
		}
		return resp, nil
	}
	resp, err := request("", "")
	if err != nil {
		return X402FetchOutput{}, err
	}
	if resp.StatusCode != http.StatusPaymentRequired {
		return answerOf(resp, nil, "done"), nil
	}
	// The resource is where the 402 came from, after any redirect.
	resource := u.String()
	if resp.Request != nil && resp.Request.URL != nil {
		resource = resp.Request.URL.String()
	}
	challenge, err := readChallenge(resp)
	if err != nil {
		return X402FetchOutput{}, err
	}
	paid, err := c.X402Pay(ctx, in.WalletID, client.X402PayRequest{PaymentRequired: challenge, Resource: resource,
		MaxUSDC: client.Amount(in.MaxUSDC), ApprovalID: in.ApprovalID})
	var blocked *client.BlockedError
	switch {
	case errors.As(err, &blocked):
		return X402FetchOutput{Status: http.StatusPaymentRequired, Payment: &X402PaymentOut{Status: "blocked", Reason: blocked.Reason},
			Next: "the policy refused this payment: " + nextForBlock(blocked.Reason)}, nil
	case err != nil:
		return X402FetchOutput{}, err
	case paid.Status != client.StatusPendingApproval && (paid.Header == "" || paid.PaymentSignature == ""):
		return X402FetchOutput{}, fmt.Errorf("the service answered %q without a payment header", paid.Status)
	case paid.Status == client.StatusPendingApproval:
		return X402FetchOutput{Status: http.StatusPaymentRequired, Payment: &X402PaymentOut{Status: "pending_approval", ApprovalID: paid.ApprovalID,
			ApproveURL: strings.TrimSuffix(dashboard, "/") + "/dashboard/approvals/" + paid.ApprovalID},
			Next: "the seller asked for payment, at or over the approval threshold: a human must approve; once approved call x402_fetch again with approval_id"}, nil
	}
	resp, err = request(paid.Header, paid.PaymentSignature)
	if err != nil {
		return X402FetchOutput{}, fmt.Errorf("the payment %s was signed but the paid request failed: %w", paid.PaymentID, err)
	}
	p := &X402PaymentOut{Status: "paid", PaymentID: paid.PaymentID, Amount: paid.Amount.String(), PayTo: paid.PayTo, Network: paid.Network}
	for _, h := range []string{x402.HeaderPaymentResponse, x402.HeaderXPaymentResponse} {
		if v := resp.Header.Get(h); v != "" {
			if s, err := x402.DecodePaymentResponseHeader(v); err == nil {
				p.Transaction, p.Settled = s.Transaction, s.Success
			}
			break
		}
	}
	next := "done"
	if resp.StatusCode == http.StatusPaymentRequired {
		next = "the seller refused the payment: do not retry unchanged"
	}
	return answerOf(resp, p, next), nil
}

// readChallenge is a 402's PaymentRequired object as the seller sent it:
// the decoded PAYMENT-REQUIRED header (v2), else the JSON body when it
// says x402Version 1. The service validates it in full; this only tells an
// x402 challenge from any other 402.
func readChallenge(resp *http.Response) (json.RawMessage, error) {
	defer resp.Body.Close()
	var raw []byte
	if v := strings.TrimSpace(resp.Header.Get(x402.HeaderPaymentRequired)); v != "" {
		if len(v) > base64.StdEncoding.EncodedLen(x402.MaxChallengeBytes) {
			return nil, errors.New("the seller's PAYMENT-REQUIRED header is too large")
		}
		enc := base64.StdEncoding
		if len(v)%4 != 0 {
			enc = base64.RawStdEncoding
		}
		b, err := enc.DecodeString(v)
		if err != nil {
			return nil, errors.New("the seller's PAYMENT-REQUIRED header is not base64")
		}
		raw = b
	} else {
		b, err := io.ReadAll(io.LimitReader(resp.Body, x402.MaxChallengeBytes+1))
		if err != nil {
			return nil, fmt.Errorf("read the seller's 402: %w", err)
		}
		raw = b
	}
	pr, err := x402.ParsePaymentRequired(raw)
	if err != nil {
		return nil, fmt.Errorf("the seller answered 402 without an x402 challenge we can read: %w", err)
	}
	if pr.Version != 1 && resp.Header.Get(x402.HeaderPaymentRequired) == "" {
		return nil, errors.New("the seller answered 402 with an x402 v2 body but no PAYMENT-REQUIRED header")
	}
	return raw, nil
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
