package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
)

// ToolPayFetch fetches a URL and pays its 402 in whichever protocol the
// seller asks: MPP or x402.
const ToolPayFetch = "pay_fetch"

const payFetchDescription = "Fetch a URL and pay for it from an agent wallet if it asks (HTTP 402), in either protocol a seller may ask in: MPP " +
	"(the Payment HTTP authentication scheme's Solana charge) or x402, on Solana in USDC or another stablecoin the wallet's policy lists, " +
	"under the wallet's spending policy. A seller that offers both is paid once, never twice: by prefer (mpp or x402; default mpp " +
	"unless the operator chose otherwise), and by the other only when the preferred one cannot be paid. Answers the HTTP status, " +
	"content_type and text of the response (the first 64 KiB; truncated says when more was cut) and payment: null when nothing was " +
	"paid; status \"paid\" with protocol, amount, asset, pay_to and the settled transaction; \"pending_approval\" (a human must approve: " +
	"once approved, call again with approval_id; do not retry before); or \"blocked\" with a reason (exceeds_max_tx, exceeds_daily_limit, " +
	"exceeds_weekly_limit, exceeds_monthly_limit, exceeds_velocity, outside_active_hours, asset_not_allowed, recipient_not_allowed, " +
	"wallet_frozen); or \"already_paid\" (the seller asked again for a challenge this account paid before: nothing more was paid, " +
	"in neither protocol; payment_id and state name the earlier payment; do not retry). Set max_usdc to cap the price (in whole " +
	"units of the asset paid: a dollar or a euro)."

// PayFetchInput is pay_fetch's input: x402_fetch's, and the protocol
// preferred.
type PayFetchInput struct {
	WalletID   string `json:"wallet_id" jsonschema:"the paying agent wallet's id (UUID)"`
	URL        string `json:"url" jsonschema:"the http(s) URL to fetch"`
	Method     string `json:"method,omitempty" jsonschema:"the HTTP method: GET (default), POST, PUT, PATCH or DELETE"`
	Body       string `json:"body,omitempty" jsonschema:"the request body, e.g. JSON text (at most 64 KiB)"`
	MaxUSDC    string `json:"max_usdc,omitempty" jsonschema:"the most to pay for this request, in whole units of the asset paid (USDC unless the wallet pays in another stablecoin) as a decimal string, e.g. \"0.05\""`
	ApprovalID string `json:"approval_id,omitempty" jsonschema:"after a human approved a pending payment: its approval id (ap_…)"`
	Prefer     string `json:"prefer,omitempty" jsonschema:"the protocol to pay when the seller offers both: mpp or x402 (default: the operator's choice, mpp unless set)"`
}

// Pay preferences: the protocol pay_fetch pays when a seller offers both.
const (
	PreferMPP  = client.ProtocolMPP
	PreferX402 = client.ProtocolX402
)

// WithPayPreference sets the protocol pay_fetch pays when a seller offers
// both and the call does not say (PreferMPP, the default, or PreferX402).
// RunStdio reads it from PAY_PREFERENCE.
func WithPayPreference(p string) Option {
	return func(o *options) { o.prefer = p }
}

// ParsePayPreference reads an operator's pay preference: "mpp", "x402",
// or "" for the default (mpp).
func ParsePayPreference(s string) (string, error) {
	switch s {
	case "", PreferMPP, PreferX402:
		return s, nil
	}
	return "", fmt.Errorf("pay preference %q: use %s or %s", s, PreferMPP, PreferX402)
}

func addPayFetch(s *mcp.Server, c *client.Client, o options, dashboard string) {
	yes := true
	mcp.AddTool(s, &mcp.Tool{Name: ToolPayFetch, Title: "Fetch a URL, paying MPP or x402", Description: payFetchDescription,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in PayFetchInput) (*mcp.CallToolResult, X402FetchOutput, error) {
			prefer := in.Prefer
			if prefer == "" {
				prefer = o.prefer
			}
			out, err := fetchPaying(ctx, c, o, dashboard, ToolPayFetch, X402FetchInput{WalletID: in.WalletID, URL: in.URL, Method: in.Method,
				Body: in.Body, MaxUSDC: in.MaxUSDC, ApprovalID: in.ApprovalID}, client.PayOptions{Prefer: prefer})
			if err != nil {
				return nil, X402FetchOutput{}, err
			}
			return nil, out, nil
		})
}
