package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// ApprovalContext is what a human needs beside an approval to decide it.
type ApprovalContext struct {
	Wallet    Wallet `json:"wallet" doc:"The paying wallet."`
	Recipient struct {
		Address        string  `json:"address" doc:"The recipient." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
		FirstPayment   bool    `json:"first_payment" doc:"No payment from this wallet has gone to this address before (pending or confirmed)." example:"true"`
		OnAllowlist    bool    `json:"on_allowlist" doc:"The address is on the wallet's allowlist." example:"false"`
		AllowlistEmpty bool    `json:"allowlist_empty" doc:"The wallet's allowlist is empty: any recipient is allowed." example:"true"`
		Label          *string `json:"label" nullable:"true" doc:"The address's label in the wallet's address book (allowlist_labels), or null." example:"Acme invoices"`
	} `json:"recipient" doc:"The recipient and what the wallet knows of it."`
	Requester     *RequesterRef `json:"requester" doc:"Who made the send (a key, or a dashboard user), or null when unknown."`
	IfApprovedNow struct {
		Outcome                 string  `json:"outcome" enum:"sent,blocked" doc:"What approving would do now: the policy is checked again at approval." example:"sent"`
		Reason                  *string `json:"reason" nullable:"true" enum:"wallet_frozen,asset_not_allowed,recipient_not_allowed,exceeds_max_tx,exceeds_daily_limit,exceeds_weekly_limit,exceeds_monthly_limit,exceeds_velocity,outside_active_hours" doc:"When blocked: the rule. Approving judges every amount limit again, not the payment count or the active hours (those were judged when it was parked)." example:"exceeds_daily_limit"`
		RemainingTodayUSDC      USDC    `json:"remaining_today_usdc" doc:"What the USD daily limit (daily_limit_usdc, shared by every USD stablecoin) allows today before it." example:"90"`
		RemainingTodayAfterUSDC USDC    `json:"remaining_today_after_usdc" doc:"What would remain of the USD daily limit after it (0 when blocked by the day; unchanged by a payment in a EUR stablecoin)." example:"40"`
		RemainingTodayEUR       *EUR    `json:"remaining_today_eur" nullable:"true" doc:"Only for a payment in a EUR stablecoin: what the EUR daily limit allows today before it; else null." example:"30"`
		RemainingTodayAfterEUR  *EUR    `json:"remaining_today_after_eur" nullable:"true" doc:"Only for a payment in a EUR stablecoin: what would remain of the EUR daily limit after it (0 when blocked by the day); else null." example:"10"`
	} `json:"if_approved_now" doc:"What approving would do now (the policy is checked again at approval)."`
	Webhook struct {
		Event      json.RawMessage    `json:"event" nullable:"true" doc:"The approval.pending event as delivered to JSON endpoints (the signed body), or null." example:"{\"event\":\"approval.pending\",\"event_id\":\"evt_1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9\",\"timestamp\":\"2026-06-02T12:00:00Z\",\"data\":{\"approval_id\":\"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5\"}}"`
		Deliveries []EventDeliveryOut `json:"deliveries" doc:"Its delivery to each endpoint."`
	} `json:"webhook" doc:"The approval.pending event and where it was delivered."`
}

// RequesterRef names who asked for a payment, for humans: an API key or a
// person.
type RequesterRef struct {
	ID     string  `json:"id" doc:"The key (key_…) or the dashboard user (user:<address>)." example:"key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"`
	Label  *string `json:"label" nullable:"true" doc:"The key's label, or null (always null for a person)." example:"research bot"`
	Prefix *string `json:"prefix" nullable:"true" doc:"The key's first characters; null for a person." example:"svc_test_4vJ9JU"`
}

// EventDeliveryOut is an event's delivery to one endpoint.
type EventDeliveryOut struct {
	EndpointID string `json:"endpoint_id" format:"uuid" doc:"The endpoint." example:"7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"`
	URL        string `json:"url" doc:"The endpoint's URL; a Slack one masked (https://hooks.slack.com/…/abcd) for viewers and approvers." example:"https://hooks.slack.com/services/T000/B000/XXXX"`
	Format     string `json:"format" enum:"json,slack" doc:"Its format." example:"slack"`
	DeliveryID string `json:"delivery_id" format:"uuid" doc:"The (newest) delivery." example:"3c2b1a0f-9e8d-4c7b-a6f5-e4d3c2b1a0f9"`
	Status     string `json:"status" enum:"pending,succeeded,failed" doc:"Where the delivery stands." example:"succeeded"`
	Attempts   int    `json:"attempts" doc:"POSTs made so far." example:"1"`
}

type approvalContextOutput struct{ Body ApprovalContext }

func (s *server) registerApprovalContext(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "get-approval-context",
		Method:      http.MethodGet,
		Path:        Prefix + "/approvals/{id}/context",
		Summary:     "Get what a human needs to decide an approval",
		Description: "The wallet, whether the recipient is new or on the allowlist, the key or person that asked, what approving would do now " +
			"(the policy checked as at approval), and the approval.pending event as delivered with its delivery per endpoint. For humans and admin keys.",
		Tags:   []string{"Approvals"},
		Errors: []int{401, 403, 404},
	}, s.approvalContext)
}

func (s *server) approvalContext(ctx context.Context, in *approvalIDInput) (*approvalContextOutput, error) {
	a, err := s.approval(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	pr := principal(ctx)
	w, err := s.wallet(ctx, a.WalletID.String())
	if err != nil {
		return nil, err
	}
	out := &approvalContextOutput{}
	c := &out.Body
	c.Wallet = walletOf(&w)
	c.Recipient.Address = a.To
	c.Recipient.AllowlistEmpty = len(w.Allowlist) == 0
	c.Recipient.OnAllowlist = slices.Contains(w.Allowlist, a.To)
	if l, ok := w.AllowlistLabels[a.To]; ok && c.Recipient.OnAllowlist {
		c.Recipient.Label = &l
	}
	prior, err := s.DB.NewSelect().Table("transactions").
		Where("wallet_id = ? AND counterparty = ? AND status IN (?, ?)", w.ID, a.To, payment.TxPending, payment.TxConfirmed).Exists(ctx)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	c.Recipient.FirstPayment = !prior
	switch {
	case a.RequestedBy.Valid:
		if k, err := auth.GetKey(ctx, s.DB, pr.AccountID, a.RequestedBy.UUID); err == nil {
			c.Requester = &RequesterRef{ID: auth.KeyActorID(k.ID), Label: k.Label, Prefix: &k.Prefix}
		}
	case a.RequestedByUser != nil:
		c.Requester = &RequesterRef{ID: auth.UserActorID(*a.RequestedByUser)}
	}
	as, err := s.assetNamed(pr.Network, &a.Asset)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	p, err := payment.PreviewSend(ctx, s.DB, payment.PreviewQuery{AccountID: pr.AccountID, WalletID: w.ID, To: a.To, Asset: as, Amount: a.Amount, Approved: true, At: s.policyTime()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	now := &c.IfApprovedNow
	sent := p.Decision.Outcome != policy.Blocked
	usd := max(0, p.Policy.DailyLimit-p.Usage.USD.Today)
	now.RemainingTodayUSDC, now.RemainingTodayAfterUSDC = USDC(usd), USDC(usd)
	paid := as.Amount(a.Amount)
	if left, ok := money.As[money.EUR](p.Decision.RemainingToday); ok {
		after := EUR(0)
		if e, ok := money.As[money.EUR](paid); ok && sent {
			after = EUR(left - e)
		}
		now.RemainingTodayEUR, now.RemainingTodayAfterEUR = ptr(EUR(left)), &after
	} else if d, ok := money.As[money.USD](paid); ok && sent {
		now.RemainingTodayAfterUSDC = USDC(usd - d)
	} else {
		now.RemainingTodayAfterUSDC = 0
	}
	if sent {
		now.Outcome = "sent"
	} else {
		now.Outcome = "blocked"
		r := string(p.Decision.Reason)
		now.Reason = &r
	}
	ev, ds, err := webhook.ApprovalPendingEvent(ctx, s.DB, pr.AccountID, approval.PublicID(a.ID))
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	c.Webhook.Deliveries = make([]EventDeliveryOut, len(ds))
	for i, d := range ds {
		c.Webhook.Deliveries[i] = EventDeliveryOut{EndpointID: d.EndpointID.String(), URL: hookURL(pr, d.Format, d.URL), Format: d.Format,
			DeliveryID: d.DeliveryID.String(), Status: d.Status, Attempts: d.Attempts}
	}
	if ev != nil {
		body, err := webhook.Body(ev)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		c.Webhook.Event = body
	}
	return out, nil
}
