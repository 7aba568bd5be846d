// Package mcpserver is the service's Model Context Protocol server: the
// agent tools (send USDC or another stablecoin, wallet info, recent transactions with the
// deposits, a wallet's balance history, preview, an approval's status,
// x402_fetch: fetch a URL, paying its x402 challenge, and pay_fetch: fetch
// a URL, paying its MPP or x402 challenge) for MCP hosts. Every tool acts through the public REST API
// with the caller's own key (package client), so it has exactly the API's
// permissions, limits and answers; no tool approves, changes a policy or
// manages keys.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
)

// Tool names, shared with the LangChain tools.
const (
	ToolSendUSDC               = "send_usdc"
	ToolGetWalletInfo          = "get_wallet_info"
	ToolListRecentTransactions = "list_recent_transactions"
	ToolGetBalanceHistory      = "get_balance_history"
	ToolPreviewSend            = "preview_send"
	ToolGetApprovalStatus      = "get_approval_status"
)

// Descriptions written for a model: what each tool does and what its
// answers mean.
const (
	sendDescription = "Send USDC from an agent wallet on Solana, or another stablecoin its policy lists (asset: USDT, PYUSD, USDG " +
		"or EURC; get_wallet_info shows policy.assets), under the wallet's spending policy: USD stablecoins count together under its " +
		"_usdc limits, EURC under its _eur limits. " +
		"Answers status \"sent\" (signed and broadcast; signature given), \"pending_approval\" (a human must approve: do not retry, " +
		"check later with get_approval_status using approval_id), or \"blocked\" with a reason: exceeds_max_tx (the amount is over the " +
		"per-payment cap), exceeds_daily_limit (today's remaining allowance, remaining_today_usdc, or remaining_today_eur for a EUR " +
		"stablecoin, is too small), asset_not_allowed (the wallet's policy does not list the asset), recipient_not_allowed " +
		"(the recipient is not on the wallet's allowlist), wallet_frozen (a human froze the wallet), exceeds_weekly_limit or " +
		"exceeds_monthly_limit (the last 7 or 30 days' total is at the wallet's limit), exceeds_velocity (the wallet made as many " +
		"payments in the last hour or 24 hours as its policy allows), outside_active_hours (the wallet may only pay during its " +
		"active hours; outside them a payment may also be parked for a human). Pass the same idempotency_key to " +
		"retry a send safely: it never pays twice."
	walletDescription = "Get an agent wallet: its label, Solana address, state (active or frozen), spending policy " +
		"(assets: the stablecoins it may spend; daily_limit_usdc, max_tx_usdc, approval_threshold_usdc for USD stablecoins, " +
		"daily_limit_eur, max_tx_eur, approval_threshold_eur for EUR ones (absent: no EUR spending), allowlist, and when set " +
		"weekly_limit_usdc, monthly_limit_usdc, weekly_limit_eur, monthly_limit_eur, " +
		"max_tx_per_hour, max_tx_per_day, active_hours with outside_active_hours; approvals_required: how many people approve a payment " +
		"that waits for a human) and live balance: sol, usdc, and assets (each stablecoin the wallet holds, with its amount)."
	transactionsDescription = "List recent transactions, newest first, optionally of one wallet, one direction and one asset: payments out " +
		"(direction send, the recipient in to) and deposits, money that came into the wallet from anyone (direction receive, the " +
		"sender in from). Each has asset (the stablecoin's symbol in lower case: usdc, usdt, pyusd, usdg, eurc; or sol: a deposit may " +
		"be SOL) and amount in that asset, status (pending, confirmed, " +
		"failed; a deposit is listed once confirmed, and failed if the chain dropped it), memo, signature and time."
	historyDescription = "Get an agent wallet's balance of one asset over time (asset: USDC by default, USDT, PYUSD, USDG, EURC, SOL, or all for " +
		"a series of each), from its ledger of every change (payments out with their fees, deposits): the balance at one instant (at), or " +
		"one point per day or hour (interval) from from to to (default: the last 30 days), each in whole units of its asset. Shows when " +
		"money came in or went out; get_wallet_info has the live balance."
	previewDescription = "Check what send_usdc would do now for this payment (in asset, USDC by default), without sending: outcome " +
		"(sent, pending_approval, blocked), the blocking reason if any, the policy rule that decides (rule), today's spent and " +
		"remaining allowance (in the payment's currency: the _eur figures for a EUR stablecoin), " +
		"the week's and month's when the wallet limits them, the payments made in the last hour and 24 hours, and whether " +
		"now is within the wallet's active hours."
	approvalDescription = "Get the status of a payment waiting for a human (its amount and asset): pending (still waiting), sent (approved and sent; " +
		"signature given), rejected (closed without paying; reason when the system rejected it), expired (nobody decided within 7 days); " +
		"approvals (who approved so far) and approvals_needed (how many people must approve before it is sent)."
)

// SendInput is send_usdc's input.
type SendInput struct {
	WalletID       string `json:"wallet_id" jsonschema:"the paying agent wallet's id (UUID)"`
	To             string `json:"to" jsonschema:"the recipient's Solana address (base58)"`
	Amount         string `json:"amount" jsonschema:"how much to send in whole units of asset as a decimal string, e.g. \"1.5\" (at most 6 decimals)"`
	Asset          string `json:"asset,omitempty" jsonschema:"optional: the stablecoin to send, USDC (default), USDT, PYUSD, USDG or EURC; the wallet's policy must list it"`
	Memo           string `json:"memo,omitempty" jsonschema:"an optional public note written on-chain (at most 200 characters)"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"optional: reuse the same key to retry this payment safely; one is made when empty"`
}

// SendOutput is send_usdc's answer.
type SendOutput struct {
	Status             string `json:"status" jsonschema:"sent, pending_approval or blocked"`
	Asset              string `json:"asset" jsonschema:"the asset of the payment"`
	Signature          string `json:"signature,omitempty" jsonschema:"when sent: the transaction's signature"`
	ApprovalID         string `json:"approval_id,omitempty" jsonschema:"when pending_approval: the approval to check with get_approval_status"`
	ExpiresAt          string `json:"expires_at,omitempty" jsonschema:"when pending_approval: when the approval expires if nobody decides"`
	ApproveURL         string `json:"approve_url,omitempty" jsonschema:"when pending_approval: the page where a human decides"`
	Reason             string `json:"reason,omitempty" jsonschema:"when blocked: the policy rule"`
	RemainingTodayUSDC string `json:"remaining_today_usdc,omitempty" jsonschema:"when a USD stablecoin is blocked: what today's USD limit still allows"`
	RemainingTodayEUR  string `json:"remaining_today_eur,omitempty" jsonschema:"when a EUR stablecoin is blocked: what today's EUR limit still allows"`
	IdempotencyKey     string `json:"idempotency_key" jsonschema:"the key this send went under: pass it again to retry safely"`
	Next               string `json:"next" jsonschema:"what to do next"`
}

// WalletInput names a wallet.
type WalletInput struct {
	WalletID string `json:"wallet_id" jsonschema:"the agent wallet's id (UUID)"`
}

// WalletOutput is get_wallet_info's answer (amounts as decimal strings).
type WalletOutput struct {
	ID      string    `json:"id"`
	Label   string    `json:"label"`
	Address string    `json:"address" jsonschema:"the wallet's Solana address: send it USDC and SOL to fund it"`
	State   string    `json:"state" jsonschema:"active, or frozen (every send blocked)"`
	Policy  PolicyOut `json:"policy"`
	SOL     string    `json:"sol" jsonschema:"SOL balance (pays network fees)"`
	USDC    string    `json:"usdc" jsonschema:"USDC balance"`
	Assets  []Holding `json:"assets" jsonschema:"every stablecoin the wallet holds an account of, USDC first, each in its own units"`
}

// Holding is a wallet's balance of one asset.
type Holding struct {
	Symbol string `json:"symbol" jsonschema:"the asset: USDC, USDT, PYUSD, USDG, EURC"`
	Amount string `json:"amount" jsonschema:"in whole units of the asset"`
}

// PolicyOut is a wallet's spending policy.
type PolicyOut struct {
	DailyLimitUSDC        string   `json:"daily_limit_usdc" jsonschema:"the most the wallet may send in a UTC day"`
	MaxTxUSDC             string   `json:"max_tx_usdc" jsonschema:"the most one payment may be"`
	ApprovalThresholdUSDC string   `json:"approval_threshold_usdc" jsonschema:"payments of at least this wait for a human"`
	Allowlist             []string `json:"allowlist" jsonschema:"the only recipients allowed; empty means any"`
	WeeklyLimitUSDC       string   `json:"weekly_limit_usdc,omitempty" jsonschema:"when set: the most the wallet may send in the last 7 days (rolling)"`
	MonthlyLimitUSDC      string   `json:"monthly_limit_usdc,omitempty" jsonschema:"when set: the most the wallet may send in the last 30 days (rolling)"`
	MaxTxPerHour          *int     `json:"max_tx_per_hour,omitempty" jsonschema:"when set: how many payments the last hour may hold"`
	MaxTxPerDay           *int     `json:"max_tx_per_day,omitempty" jsonschema:"when set: how many payments the last 24 hours may hold"`
	ActiveHours           *Hours   `json:"active_hours,omitempty" jsonschema:"when set: the only hours the wallet may pay"`
	OutsideActiveHours    string   `json:"outside_active_hours" jsonschema:"outside the active hours a payment is blocked (block) or waits for a human (approve)"`
	ApprovalsRequired     int      `json:"approvals_required" jsonschema:"how many distinct people must approve a payment that waits for a human"`
	Assets                []string `json:"assets" jsonschema:"the stablecoins the wallet may spend; USD ones count under the _usdc limits, EUR ones under the _eur limits"`
	DailyLimitEUR         string   `json:"daily_limit_eur,omitempty" jsonschema:"when set: the most the wallet may send in EUR stablecoins in a UTC day; absent: no EUR spending"`
	MaxTxEUR              string   `json:"max_tx_eur,omitempty" jsonschema:"when set: the most one EUR payment may be"`
	ApprovalThresholdEUR  string   `json:"approval_threshold_eur,omitempty" jsonschema:"when set: EUR payments of at least this wait for a human"`
	WeeklyLimitEUR        string   `json:"weekly_limit_eur,omitempty" jsonschema:"when set: the most in EUR stablecoins in the last 7 days (rolling)"`
	MonthlyLimitEUR       string   `json:"monthly_limit_eur,omitempty" jsonschema:"when set: the most in EUR stablecoins in the last 30 days (rolling)"`
}

// Hours are a wallet's active hours.
type Hours struct {
	Timezone string   `json:"timezone" jsonschema:"the IANA time zone the hours are read in"`
	Days     []string `json:"days" jsonschema:"the days (mon … sun) the window opens"`
	From     string   `json:"from" jsonschema:"opening time HH:MM, inclusive"`
	To       string   `json:"to" jsonschema:"closing time HH:MM, exclusive; before from it closes the next day"`
}

// TransactionsInput is list_recent_transactions's input.
type TransactionsInput struct {
	WalletID  string `json:"wallet_id,omitempty" jsonschema:"only this wallet's transactions (UUID); all wallets when empty"`
	Direction string `json:"direction,omitempty" jsonschema:"send (payments out) or receive (deposits: money that came in); both when empty"`
	Asset     string `json:"asset,omitempty" jsonschema:"only this asset's: usdc, usdt, pyusd, usdg, eurc or sol (any case); every asset when empty"`
	Limit     int    `json:"limit,omitempty" jsonschema:"how many, 1 to 50 (default 10)"`
}

// TransactionOut is one transaction for a model.
type TransactionOut struct {
	Direction string `json:"direction" jsonschema:"send (a payment out) or receive (a deposit)"`
	Asset     string `json:"asset" jsonschema:"what moved: the stablecoin's symbol in lower case (usdc, usdt, pyusd, usdg, eurc), or sol"`
	Amount    string `json:"amount" jsonschema:"in whole units of asset"`
	To        string `json:"to,omitempty" jsonschema:"a send's recipient"`
	From      string `json:"from,omitempty" jsonschema:"a deposit's sender"`
	Status    string `json:"status"`
	Memo      string `json:"memo,omitempty"`
	Signature string `json:"signature"`
	At        string `json:"at"`
	WalletID  string `json:"wallet_id"`
}

// TransactionsOutput is list_recent_transactions's answer.
type TransactionsOutput struct {
	Transactions []TransactionOut `json:"transactions"`
}

// HistoryInput is get_balance_history's input: the asset, and at or a
// range.
type HistoryInput struct {
	WalletID string `json:"wallet_id" jsonschema:"the agent wallet's id (UUID)"`
	Asset    string `json:"asset,omitempty" jsonschema:"optional: USDC (default), another stablecoin (USDT, PYUSD, USDG, EURC), SOL, or all for a series of each"`
	At       string `json:"at,omitempty" jsonschema:"one instant (ISO 8601, e.g. 2026-04-15T12:00:00Z): the balance then; leave from, to and interval empty"`
	From     string `json:"from,omitempty" jsonschema:"the first instant (ISO 8601); default: 30 intervals before to"`
	To       string `json:"to,omitempty" jsonschema:"the last instant (ISO 8601); default: now"`
	Interval string `json:"interval,omitempty" jsonschema:"day (default) or hour: the step between points (at most 1,000 points)"`
}

// SeriesOut is a wallet's balance of one asset over time.
type SeriesOut struct {
	Asset    string     `json:"asset"`
	Decimals int        `json:"decimals" jsonschema:"the asset's decimals (SOL 9)"`
	Points   []PointOut `json:"points" jsonschema:"oldest first"`
}

// PointOut is a wallet's balance of an asset at an instant.
type PointOut struct {
	At     string `json:"at"`
	Asset  string `json:"asset"`
	Amount string `json:"amount" jsonschema:"held then, in whole units of asset"`
}

// HistoryOutput is get_balance_history's answer.
type HistoryOutput struct {
	WalletID string      `json:"wallet_id"`
	Series   []SeriesOut `json:"series" jsonschema:"one per asset asked"`
}

// PreviewInput is preview_send's input.
type PreviewInput struct {
	WalletID string `json:"wallet_id" jsonschema:"the paying agent wallet's id (UUID)"`
	To       string `json:"to" jsonschema:"the recipient's Solana address (base58)"`
	Amount   string `json:"amount" jsonschema:"in whole units of asset as a decimal string, e.g. \"1.5\""`
	Asset    string `json:"asset,omitempty" jsonschema:"optional: the stablecoin, USDC (default), USDT, PYUSD, USDG or EURC"`
	Memo     string `json:"memo,omitempty" jsonschema:"the memo the send would carry"`
}

// PreviewOutput is preview_send's answer.
type PreviewOutput struct {
	Outcome            string `json:"outcome" jsonschema:"sent, pending_approval or blocked"`
	Reason             string `json:"reason,omitempty" jsonschema:"when blocked: the policy rule"`
	Rule               string `json:"rule,omitempty" jsonschema:"the policy field that decides (e.g. daily_limit_usdc, daily_limit_eur, assets, max_tx_per_hour, active_hours, approval_threshold_usdc); empty when sent"`
	Asset              string `json:"asset" jsonschema:"the asset previewed"`
	Currency           string `json:"currency" jsonschema:"USD (the _usdc limits apply) or EUR (the _eur limits apply)"`
	SpentTodayEUR      string `json:"spent_today_eur,omitempty" jsonschema:"for a EUR stablecoin: sent or reserved today in EUR stablecoins"`
	RemainingTodayEUR  string `json:"remaining_today_eur,omitempty" jsonschema:"for a EUR stablecoin: what today's EUR limit still allows"`
	SpentTodayUSDC     string `json:"spent_today_usdc"`
	RemainingTodayUSDC string `json:"remaining_today_usdc"`
	MaxTxUSDC          string `json:"max_tx_usdc"`
	ApprovalThreshold  string `json:"approval_threshold_usdc"`
	RemainingWeekUSDC  string `json:"remaining_week_usdc,omitempty" jsonschema:"when the wallet has a weekly limit: what it still allows"`
	RemainingMonthUSDC string `json:"remaining_month_usdc,omitempty" jsonschema:"when the wallet has a monthly limit: what it still allows"`
	PaymentsLastHour   int    `json:"payments_last_hour" jsonschema:"payments sent or parked in the last hour"`
	MaxTxPerHour       *int   `json:"max_tx_per_hour,omitempty" jsonschema:"when set: how many the last hour may hold"`
	PaymentsLastDay    int    `json:"payments_last_day" jsonschema:"payments sent or parked in the last 24 hours"`
	MaxTxPerDay        *int   `json:"max_tx_per_day,omitempty" jsonschema:"when set: how many the last 24 hours may hold"`
	WithinActiveHours  *bool  `json:"within_active_hours,omitempty" jsonschema:"when the wallet has active hours: whether now is within them"`
}

// ApprovalInput names an approval.
type ApprovalInput struct {
	ApprovalID string `json:"approval_id" jsonschema:"the approval's id (ap_…), from send_usdc"`
}

// ApprovalOutput is get_approval_status's answer.
type ApprovalOutput struct {
	ApprovalID        string `json:"approval_id"`
	Status            string `json:"status" jsonschema:"pending, signing, sent, rejected or expired"`
	Amount            string `json:"amount" jsonschema:"in whole units of asset"`
	Asset             string `json:"asset" jsonschema:"what the payment pays: USDC, USDT, PYUSD, USDG or EURC"`
	Signature         string `json:"signature,omitempty"`
	Reason            string `json:"reason,omitempty"`
	TransactionStatus string `json:"transaction_status,omitempty"`
	ExpiresAt         string `json:"expires_at"`
	// Approvals are who approved so far; ApprovalsNeeded how many must.
	Approvals       []VoteOut `json:"approvals" jsonschema:"who approved so far, oldest first"`
	ApprovalsNeeded int       `json:"approvals_needed" jsonschema:"how many distinct people must approve before it is sent"`
	Next            string    `json:"next"`
}

// VoteOut is one person's approve.
type VoteOut struct {
	By   string `json:"by" jsonschema:"who approved: an admin key (key_…), a person (user) or a Slack member (slack)"`
	At   string `json:"at"`
	Note string `json:"note,omitempty"`
}

// New is the MCP server whose tools act with c (the caller's key).
// dashboard is the dashboard's origin, for approve_url. x402_fetch and
// pay_fetch are offered when WithX402 is given.
func New(c *client.Client, dashboard string, opts ...Option) *mcp.Server {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "agentwallet", Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions: "Stablecoin payments (USDC, and the others a wallet's policy lists) from agent wallets on Solana, each under a spending policy set by humans. " +
			"Payments at or above a wallet's approval threshold wait for a human: never retry them, check their status.",
	})
	yes, no := true, false
	mcp.AddTool(s, &mcp.Tool{Name: ToolSendUSDC, Title: "Send USDC", Description: sendDescription,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &yes}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in SendInput) (*mcp.CallToolResult, SendOutput, error) {
			return send(ctx, c, dashboard, in)
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolGetWalletInfo, Title: "Get wallet info", Description: walletDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in WalletInput) (*mcp.CallToolResult, WalletOutput, error) {
			a, err := c.GetAgent(ctx, in.WalletID)
			if err != nil {
				return nil, WalletOutput{}, toolError(err)
			}
			out := WalletOutput{ID: a.ID, Label: a.Label, Address: a.Pubkey, State: a.State, Policy: policyOut(a.Policy)}
			if a.Balance != nil {
				out.SOL, out.USDC = a.Balance.SOL.String(), a.Balance.USDC.String()
				out.Assets = make([]Holding, len(a.Balance.Assets))
				for i, h := range a.Balance.Assets {
					out.Assets[i] = Holding{Symbol: h.Symbol, Amount: h.Amount.String()}
				}
			}
			return nil, out, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolListRecentTransactions, Title: "List recent transactions", Description: transactionsDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in TransactionsInput) (*mcp.CallToolResult, TransactionsOutput, error) {
			n := in.Limit
			if n <= 0 {
				n = 10
			}
			switch in.Direction {
			case "", client.DirectionSend, client.DirectionReceive:
			default:
				return nil, TransactionsOutput{}, fmt.Errorf("direction %q: use send, receive, or leave it empty for both", in.Direction)
			}
			ts, _, err := c.ListTransactions(ctx, client.TransactionFilter{WalletID: in.WalletID, Direction: in.Direction, Asset: in.Asset, Page: client.Page{Limit: min(n, 50)}})
			if err != nil {
				return nil, TransactionsOutput{}, toolError(err)
			}
			out := TransactionsOutput{Transactions: make([]TransactionOut, len(ts))}
			for i, t := range ts {
				out.Transactions[i] = transactionOut(t)
			}
			return nil, out, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolGetBalanceHistory, Title: "Get a wallet's balance history", Description: historyDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in HistoryInput) (*mcp.CallToolResult, HistoryOutput, error) {
			q := client.HistoryQuery{Asset: in.Asset, Interval: in.Interval}
			for _, f := range []struct {
				name, text string
				to         *time.Time
			}{{"at", in.At, &q.At}, {"from", in.From, &q.From}, {"to", in.To, &q.To}} {
				if f.text == "" {
					continue
				}
				t, err := time.Parse(time.RFC3339Nano, f.text)
				if err != nil {
					return nil, HistoryOutput{}, fmt.Errorf("%s: want an instant in ISO 8601, e.g. 2026-04-15T12:00:00Z", f.name)
				}
				*f.to = t
			}
			h, err := c.GetWalletBalanceHistory(ctx, in.WalletID, q)
			if err != nil {
				return nil, HistoryOutput{}, toolError(err)
			}
			out := HistoryOutput{WalletID: h.WalletID, Series: make([]SeriesOut, len(h.Series))}
			for i, sr := range h.Series {
				o := SeriesOut{Asset: sr.Asset, Decimals: sr.Decimals, Points: make([]PointOut, len(sr.Points))}
				for j, p := range sr.Points {
					o.Points[j] = PointOut{At: p.At.UTC().Format("2006-01-02T15:04:05Z"), Asset: p.Asset, Amount: p.Amount.String()}
				}
				out.Series[i] = o
			}
			return nil, out, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolPreviewSend, Title: "Preview a send", Description: previewDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in PreviewInput) (*mcp.CallToolResult, PreviewOutput, error) {
			p, err := c.PreviewSend(ctx, in.WalletID, client.SendRequest{To: in.To, Amount: client.Amount(in.Amount), Asset: in.Asset, Memo: memo(in.Memo)})
			if err != nil {
				return nil, PreviewOutput{}, toolError(err)
			}
			out := PreviewOutput{Outcome: p.Outcome, Reason: deref(p.Reason), Rule: deref(p.Rule),
				SpentTodayUSDC: p.SpentTodayUSDC.String(), RemainingTodayUSDC: p.RemainingTodayUSDC.String(),
				MaxTxUSDC: p.MaxTxUSDC.String(), ApprovalThreshold: p.ApprovalThresholdUSDC.String(),
				RemainingWeekUSDC: number(p.RemainingWeekUSDC), RemainingMonthUSDC: number(p.RemainingMonthUSDC),
				PaymentsLastHour: p.PaymentsLastHour, MaxTxPerHour: p.MaxTxPerHour, PaymentsLastDay: p.PaymentsLastDay, MaxTxPerDay: p.MaxTxPerDay,
				WithinActiveHours: p.WithinActiveHours, Asset: p.Asset, Currency: p.Currency}
			if p.Currency == "EUR" {
				out.SpentTodayEUR, out.RemainingTodayEUR = p.SpentTodayEUR.String(), p.RemainingTodayEUR.String()
			}
			return nil, out, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: ToolGetApprovalStatus, Title: "Get an approval's status", Description: approvalDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in ApprovalInput) (*mcp.CallToolResult, ApprovalOutput, error) {
			a, err := c.GetApproval(ctx, in.ApprovalID)
			if err != nil {
				return nil, ApprovalOutput{}, toolError(err)
			}
			out := ApprovalOutput{ApprovalID: a.ID, Status: a.Status, Amount: a.Amount.String(), Asset: a.Asset, ExpiresAt: a.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z")}
			out.Signature, out.Reason, out.TransactionStatus = deref(a.Signature), deref(a.ReasonDetail), deref(a.TransactionStatus)
			if out.Reason == "" {
				out.Reason = deref(a.Reason)
			}
			out.ApprovalsNeeded, out.Approvals = a.ApprovalsNeeded, make([]VoteOut, len(a.Approvals))
			for i, v := range a.Approvals {
				out.Approvals[i] = VoteOut{By: v.By, At: v.At.UTC().Format("2006-01-02T15:04:05Z"), Note: deref(v.Note)}
			}
			switch a.Status {
			case "pending", "signing":
				out.Next = "a human has not decided yet: check again later; do not send the payment again"
				if a.Status == "pending" && a.ApprovalsNeeded > 1 {
					out.Next = fmt.Sprintf("%d of %d people have approved; the others have not decided yet: check again later; do not send the payment again", len(a.Approvals), a.ApprovalsNeeded)
				}
			case "sent":
				out.Next = "the payment was approved and sent"
			default:
				out.Next = "the payment was not made; a new send_usdc would ask again"
			}
			return nil, out, nil
		})
	if o.fetch != nil {
		addX402(s, c, o, dashboard)
		addPayFetch(s, c, o, dashboard)
	}
	return s
}

func send(ctx context.Context, c *client.Client, dashboard string, in SendInput) (*mcp.CallToolResult, SendOutput, error) {
	asset := strings.ToUpper(in.Asset)
	if asset == "" {
		asset = "USDC"
	}
	r, err := c.Send(ctx, in.WalletID, client.SendRequest{To: in.To, Amount: client.Amount(in.Amount), Asset: asset, Memo: memo(in.Memo), IdempotencyKey: in.IdempotencyKey})
	var blocked *client.BlockedError
	switch {
	case errors.As(err, &blocked):
		return nil, SendOutput{Status: "blocked", Asset: asset, Reason: blocked.Reason,
			RemainingTodayUSDC: blocked.RemainingTodayUSDC.String(), RemainingTodayEUR: blocked.RemainingTodayEUR.String(),
			IdempotencyKey: in.IdempotencyKey, Next: "the policy refused this payment: " + nextForBlock(blocked.Reason)}, nil
	case err != nil:
		return nil, SendOutput{}, toolError(err)
	}
	out := SendOutput{Status: r.Status, Asset: asset, Signature: r.Signature, ApprovalID: r.ApprovalID, IdempotencyKey: r.IdempotencyKey}
	if r.Status == client.StatusPendingApproval {
		out.ApproveURL = strings.TrimSuffix(dashboard, "/") + "/dashboard/approvals/" + r.ApprovalID
		if a, err := c.GetApproval(ctx, r.ApprovalID); err == nil {
			out.ExpiresAt = a.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z")
		}
		out.Next = "a human must approve this payment: do not retry; check later with get_approval_status"
	} else {
		out.Next = "sent: the transaction confirms within seconds (list_recent_transactions shows it)"
	}
	return nil, out, nil
}

// transactionOut is a transaction for a model: a send names its
// recipient (to), a deposit its sender (from).
func transactionOut(t client.Transaction) TransactionOut {
	out := TransactionOut{Direction: t.Direction, Asset: strings.ToLower(t.Asset), Amount: t.Amount.String(), Status: t.Status,
		Signature: t.Signature, At: t.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), WalletID: t.WalletID, Memo: deref(t.Memo)}
	if t.Direction == client.DirectionReceive {
		out.From = t.Counterparty
	} else {
		out.To = t.Counterparty
	}
	return out
}

func nextForBlock(reason string) string {
	switch reason {
	case "exceeds_max_tx":
		return "the amount is over the wallet's per-payment cap; send less"
	case "exceeds_daily_limit":
		return "today's allowance is used up (remaining_today_usdc, or remaining_today_eur for a EUR stablecoin); send at most that, or wait for tomorrow (UTC)"
	case "asset_not_allowed":
		return "the wallet's policy does not list this asset (get_wallet_info shows policy.assets); pay in one it lists, or a human must add it"
	case "recipient_not_allowed":
		return "the recipient is not on the wallet's allowlist; a human must add it"
	case "wallet_frozen":
		return "a human froze the wallet; do not retry"
	case "exceeds_weekly_limit":
		return "the last 7 days' allowance is used up; send less (preview_send shows what remains) or wait"
	case "exceeds_monthly_limit":
		return "the last 30 days' allowance is used up; send less (preview_send shows what remains) or wait"
	case "exceeds_velocity":
		return "the wallet has made as many payments as its policy allows in the last hour or day; wait before paying again"
	case "outside_active_hours":
		return "the wallet may only pay during its active hours (get_wallet_info shows them); try again within them"
	}
	return "do not retry unchanged"
}

// policyOut is a wallet's policy for a model (amounts as decimal text).
func policyOut(p client.Policy) PolicyOut {
	out := PolicyOut{
		DailyLimitUSDC: p.DailyLimitUSDC.String(), MaxTxUSDC: p.MaxTxUSDC.String(),
		ApprovalThresholdUSDC: p.ApprovalThresholdUSDC.String(), Allowlist: p.Allowlist,
		WeeklyLimitUSDC: number(p.WeeklyLimitUSDC), MonthlyLimitUSDC: number(p.MonthlyLimitUSDC),
		MaxTxPerHour: p.MaxTxPerHour, MaxTxPerDay: p.MaxTxPerDay, OutsideActiveHours: p.OutsideActiveHours,
		ApprovalsRequired: p.ApprovalsRequired, Assets: p.Assets,
		DailyLimitEUR: number(p.DailyLimitEUR), MaxTxEUR: number(p.MaxTxEUR), ApprovalThresholdEUR: number(p.ApprovalThresholdEUR),
		WeeklyLimitEUR: number(p.WeeklyLimitEUR), MonthlyLimitEUR: number(p.MonthlyLimitEUR),
	}
	if h := p.ActiveHours; h != nil {
		out.ActiveHours = &Hours{Timezone: h.Timezone, Days: h.Days, From: h.From, To: h.To}
	}
	return out
}

// number is an optional amount as text ("" when nil).
func number(n *json.Number) string {
	if n == nil {
		return ""
	}
	return n.String()
}

// toolError is a failure the model can read (a tool error, not a crash).
func toolError(err error) error {
	var api *client.APIError
	if errors.As(err, &api) {
		msg := api.Message
		for _, d := range api.Details {
			msg += fmt.Sprintf("; %s: %s", d.Location, d.Message)
		}
		return fmt.Errorf("the service answered %d: %s", api.Status, msg)
	}
	return err
}

func memo(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
