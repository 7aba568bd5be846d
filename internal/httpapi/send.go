package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// DefaultSendWait is how long a send waits for its decision before it is
// cancelled (503). A worker normally answers within milliseconds.
const DefaultSendWait = 10 * time.Second

// sendGrace is how long a send whose decision won the race against the
// timeout still waits for its broadcast to report.
const sendGrace = payment.DefaultGrace

type sendInput struct {
	ID             string `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Optional. A unique string (1 to 255 printable ASCII characters, e.g. a UUID) that makes the send safe to retry for 24 hours (a send parked for approval: while its approval is open and 24 hours after it is decided): a repeat with the same body answers the first answer again (with Idempotent-Replayed: true) and pays nothing more; with another body 422; while the first is still in progress 409. A first attempt that answered 503 \"nothing was sent\" or 502 may be retried with the same key." example:"6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"`
	Body           SendBody
}

// SendBody is the body of a send and of its preview.
type SendBody struct {
	To     string  `json:"to" minLength:"32" maxLength:"64" doc:"Recipient's Solana address (base58, 32 bytes). Its USDC token account is created if missing, paid by the wallet." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	Amount Amount  `json:"amount" doc:"How much of the asset to send (USDC unless asset says otherwise), greater than 0, at most 6 decimal places." example:"1.5"`
	Asset  *string `json:"asset,omitempty" maxLength:"10" doc:"Optional: the asset to send, a symbol of GET /assets (USDC, USDT, PYUSD, USDG, EURC; any case). Default USDC. The wallet's policy must list it (assets), else 403 asset_not_allowed; USD stablecoins count under the _usdc limits at 1:1, EUR ones under the _eur limits." example:"USDC"`
	Memo   *string `json:"memo,omitempty" maxLength:"200" doc:"Optional note of at most 200 characters, without control characters (newlines included) or invisible formatting characters (else 422), written on-chain with the Memo program (public). Its UTF-8 bytes must also fit the transaction in Solana's 1232-byte limit: about 720 bytes of memo fit (200 four-byte characters do not), else 422." example:"invoice 1234"`
}

type sendOutput struct {
	Status   int
	Replayed string `header:"Idempotent-Replayed" doc:"true when this is the stored answer to an earlier request with the same Idempotency-Key."`
	Body     struct {
		Status     string `json:"status" enum:"sent,pending_approval" doc:"sent: signed and broadcast; its confirmation shows in GET /transactions. pending_approval: waiting for a human." example:"sent"`
		Signature  string `json:"signature,omitempty" doc:"When sent: the transaction's signature (its id on-chain)." example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
		ApprovalID string `json:"approval_id,omitempty" doc:"When pending_approval: the approval's id." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
		// Only on an idempotent replay of a sent payment: where it stands
		// now, so a dead signature is never answered as good news.
		TransactionStatus string `json:"transaction_status,omitempty" enum:"pending,confirmed,failed" doc:"Only on an Idempotency-Key replay of a sent payment: the transaction's status now. failed: it never landed and nothing was spent; this key will keep answering so, retry with a new Idempotency-Key." example:"confirmed"`
		Message           string `json:"message,omitempty" doc:"On a replay of a failed payment: what happened and what to do." example:"the transaction failed and nothing was spent; to try again, send with a new Idempotency-Key"`
	}
}

type previewInput struct {
	ID   string `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Body struct {
		SendBody
		Policy *PolicyInput `json:"policy,omitempty" doc:"Optional: a proposed policy change, read like PATCH /agents/{id}/policy (omitted fields keep the wallet's values). The answer is what the send would do were it saved; nothing is saved."`
	}
}

type previewOutput struct {
	Body struct {
		Outcome               string       `json:"outcome" enum:"sent,pending_approval,blocked" doc:"What the send would do now: be sent, wait for approval, or be blocked (403)." example:"blocked"`
		Asset                 string       `json:"asset" doc:"The asset previewed (USDC unless asset was given)." example:"USDC"`
		Currency              string       `json:"currency" enum:"USD,EUR" doc:"Its currency: USD assets meet the _usdc limits, EUR ones the _eur limits." example:"USD"`
		DailyLimitEUR         *EUR         `json:"daily_limit_eur" nullable:"true" doc:"The EUR daily limit; null: no EUR spending." example:"50"`
		SpentTodayEUR         EUR          `json:"spent_today_eur" doc:"Sent or reserved today (UTC) in EUR stablecoins." example:"0"`
		RemainingTodayEUR     EUR          `json:"remaining_today_eur" doc:"What the EUR daily limit still allows today." example:"50"`
		Reason                *string      `json:"reason" nullable:"true" enum:"wallet_frozen,asset_not_allowed,recipient_not_allowed,exceeds_max_tx,exceeds_daily_limit,exceeds_weekly_limit,exceeds_monthly_limit,exceeds_velocity,outside_active_hours" doc:"When blocked: the rule, as the send's 403 would say; else null." example:"exceeds_daily_limit"`
		Rule                  *string      `json:"rule" nullable:"true" enum:"state,assets,allowlist,max_tx_usdc,max_tx_eur,daily_limit_usdc,daily_limit_eur,weekly_limit_usdc,weekly_limit_eur,monthly_limit_usdc,monthly_limit_eur,max_tx_per_hour,max_tx_per_day,active_hours,approval_threshold_usdc,approval_threshold_eur" doc:"The policy field whose rule decides. Blocked: the one behind reason (state: the wallet is frozen; max_tx_per_hour or max_tx_per_day: exceeds_velocity). pending_approval: approval_threshold_usdc, or active_hours (outside them with outside_active_hours approve). null when sent: no rule stops it." example:"daily_limit_usdc"`
		DailyLimitUSDC        USDC         `json:"daily_limit_usdc" doc:"The wallet's daily limit." example:"100"`
		SpentTodayUSDC        USDC         `json:"spent_today_usdc" doc:"Sent or reserved today (UTC): pending and confirmed transactions." example:"97.5"`
		RemainingTodayUSDC    USDC         `json:"remaining_today_usdc" doc:"What the daily limit still allows today, before this send." example:"2.5"`
		ApprovalThresholdUSDC USDC         `json:"approval_threshold_usdc" doc:"Sends of at least this amount wait for a human." example:"10"`
		MaxTxUSDC             USDC         `json:"max_tx_usdc" doc:"The wallet's cap on one send." example:"25"`
		WeeklyLimitUSDC       *USDC        `json:"weekly_limit_usdc" nullable:"true" doc:"The weekly limit (last 7 days, rolling); null: none." example:"300"`
		SpentWeekUSDC         USDC         `json:"spent_week_usdc" doc:"Sent or reserved in the last 7 days (7×24 hours back from now), counted like the day's." example:"120"`
		RemainingWeekUSDC     *USDC        `json:"remaining_week_usdc" nullable:"true" doc:"What the weekly limit still allows, before this send; null without one." example:"180"`
		MonthlyLimitUSDC      *USDC        `json:"monthly_limit_usdc" nullable:"true" doc:"The monthly limit (last 30 days, rolling); null: none." example:"1000"`
		SpentMonthUSDC        USDC         `json:"spent_month_usdc" doc:"Sent or reserved in the last 30 days (30×24 hours back from now)." example:"410"`
		RemainingMonthUSDC    *USDC        `json:"remaining_month_usdc" nullable:"true" doc:"What the monthly limit still allows, before this send; null without one." example:"590"`
		MaxTxPerHour          *int         `json:"max_tx_per_hour" nullable:"true" doc:"The cap on payments in an hour (rolling); null: none." example:"10"`
		PaymentsLastHour      int          `json:"payments_last_hour" doc:"Payments (sends and x402 payments, sent or parked) of the last hour, before this one." example:"3"`
		MaxTxPerDay           *int         `json:"max_tx_per_day" nullable:"true" doc:"The cap on payments in 24 hours (rolling); null: none." example:"50"`
		PaymentsLastDay       int          `json:"payments_last_day" doc:"Payments (sent or parked) of the last 24 hours, before this one." example:"12"`
		ActiveHours           *ActiveHours `json:"active_hours" nullable:"true" doc:"When the agent may pay; null: any time." example:"{\"timezone\":\"America/New_York\",\"days\":[\"mon\",\"tue\",\"wed\",\"thu\",\"fri\"],\"from\":\"09:00\",\"to\":\"18:00\"}"`
		OutsideActiveHours    string       `json:"outside_active_hours" enum:"block,approve" doc:"What becomes of a payment outside active_hours." example:"block"`
		WithinActiveHours     *bool        `json:"within_active_hours" nullable:"true" doc:"Whether now is within active_hours; null without them." example:"true"`
		ApprovalsRequired     int          `json:"approvals_required" doc:"How many distinct people must approve it when it waits for approval (the policy's approvals_required)." example:"1"`
	}
}

func (s *server) registerSend(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "preview-send",
		Method:      http.MethodPost,
		Path:        Prefix + "/agents/{id}/send/preview",
		Summary:     "Preview a send",
		Description: "Answers what POST /agents/{id}/send with this body would do now under the wallet's policy (or under a proposed change of it, `policy`), the rule that decides (`rule`), " +
			"and the figures behind it: the day's, the rolling week's and month's totals, the payments of the last hour and 24 hours, and whether now is within the active hours; " +
			"writing nothing and reserving nothing. It checks the policy only: whether the wallet holds the USDC and SOL is checked by the send itself.",
		Tags:         []string{"Payments"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Errors:       []int{400, 401, 404, 413, 422},
	}, s.previewSend)

	huma.Register(api, huma.Operation{
		OperationID: "send",
		Method:      http.MethodPost,
		Path:        Prefix + "/agents/{id}/send",
		Summary:     "Send USDC",
		Description: "Evaluates the wallet's policy and answers with the outcome: 200 `sent` (signed and broadcast), " +
			"202 `pending_approval` (a human must approve), or 403 `Blocked by policy` with `reason` and `remaining_today_usdc`. " +
			"422 when the wallet lacks the USDC or the SOL for fees (nothing is sent), or with `reason` `account_frozen` when the wallet's or the recipient's token account of the asset is frozen by its mint's freeze authority (nothing signed or reserved); 503 when the decision did not happen in time " +
			"(the payment is cancelled and will never go out; safe to retry), or with `reason` `fee_cap_below_market` when the network's priority fee is above the service's cap " +
			"or `fee_payer_budget_exceeded` when the account's fee payer has used up its daily budget " +
			"(nothing signed or reserved; safe to retry later). Without an Idempotency-Key two calls make two payments; " +
			"with one, a retry answers the first answer again (409 while the first is in progress, 422 if the body differs).",
		Tags:         []string{"Payments"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Responses: map[string]*huma.Response{
			"202": {Description: "Parked for human approval."},
		},
		Errors: []int{400, 401, 403, 404, 409, 413, 422, 502, 503},
	}, s.send)
}

// parseSend validates a send's wallet id and body into a request of the
// caller's account (not yet recorded).
func (s *server) parseSend(ctx context.Context, walletParam string, in *SendBody) (payment.Request, error) {
	// A valid address is the canonical spelling of its key, so it is
	// stored and compared as sent.
	if err := policy.ValidAddress(in.To); err != nil {
		return payment.Request{}, fieldError("to", err.Error())
	}
	amount, err := in.Amount.Quantity("amount")
	if err != nil {
		return payment.Request{}, err
	}
	if amount <= 0 {
		return payment.Request{}, fieldError("amount", "must be greater than 0")
	}
	memo := in.Memo
	if memo != nil {
		if utf8.RuneCountInString(*memo) > payment.MaxMemo {
			return payment.Request{}, fieldError("memo", fmt.Sprintf("must be at most %d characters", payment.MaxMemo))
		}
		if err := checkText("body", "memo", *memo); err != nil {
			return payment.Request{}, err
		}
		// Approvers read the memo (dashboard, Slack): a newline or an
		// invisible character could forge a line or disguise the text.
		if strings.ContainsFunc(*memo, policy.Deceptive) {
			return payment.Request{}, fieldError("memo", "must not contain control characters (newlines included) or invisible formatting characters")
		}
		if *memo == "" {
			memo = nil
		}
	}
	pr := principal(ctx)
	if memo != nil {
		// Multi-byte characters can push the transaction past Solana's
		// packet size; the node would refuse it, so it is refused here.
		var tl *solana.TooLargeError
		if err := solana.CheckTransferSize(pr.Network, *memo); errors.As(err, &tl) {
			return payment.Request{}, &Error{status: http.StatusUnprocessableEntity, Message: tl.Error(),
				Details: []ErrorDetail{{Location: "body.memo", Message: tl.Error()}}}
		} else if err != nil {
			return payment.Request{}, s.fail(ctx, err)
		}
	}
	a, err := s.assetNamed(pr.Network, in.Asset)
	if err != nil {
		return payment.Request{}, err
	}
	// Kept in micros, moved in the asset's base units: an amount finer
	// than its smallest unit could not be moved exactly.
	if _, err := a.BaseUnits(amount); err != nil {
		return payment.Request{}, fieldError("amount", err.Error())
	}
	walletID, err := s.walletID(ctx, walletParam)
	if err != nil {
		return payment.Request{}, err
	}
	r := requestBy(pr, walletID)
	r.To, r.Asset, r.Amount, r.Memo = in.To, a.Symbol, amount, memo
	return r, nil
}

// assetNamed is the network's asset of symbol (any case; nil: USDC), or a
// 422 naming the field.
func (s *server) assetNamed(n solana.Network, symbol *string) (asset.Asset, error) {
	table := s.Assets.OrDefaults()
	sym := "USDC"
	if symbol != nil {
		sym = *symbol
	}
	a, ok := table.Find(n, sym)
	if !ok {
		return asset.Asset{}, fieldError("asset", fmt.Sprintf("%q is not an asset of %s (GET /assets lists them)", sym, n))
	}
	return a, nil
}

// requestBy is a payment request of pr's from a wallet: the key, its
// lineage and the requesters it speaks for, or the person (a person's
// payment has them as requester: audited under their name, and they may
// not approve it).
func requestBy(pr auth.Principal, walletID uuid.UUID) payment.Request {
	r := payment.Request{
		ID: uuid.New(), AccountID: pr.AccountID, WalletID: walletID,
		KeyID:      uuid.NullUUID{UUID: pr.KeyID, Valid: pr.KeyID != uuid.Nil},
		KeyLineage: uuid.NullUUID{UUID: pr.Lineage, Valid: pr.Lineage != uuid.Nil},
		Requesters: pr.Requesters(),
		Network:    pr.Network,
	}
	if pr.User != "" {
		u := pr.User
		r.UserAddress = &u
	}
	return r
}

func (s *server) previewSend(ctx context.Context, in *previewInput) (*previewOutput, error) {
	r, err := s.parseSend(ctx, in.ID, &in.Body.SendBody)
	if err != nil {
		return nil, err
	}
	var proposed *policy.Patch
	if in.Body.Policy != nil {
		c, err := patchFromInput(in.Body.Policy, "policy.")
		if err != nil {
			return nil, err
		}
		proposed = &c
	}
	a, err := s.assetNamed(principal(ctx).Network, in.Body.Asset)
	if err != nil {
		return nil, err
	}
	p, err := payment.PreviewSend(ctx, s.DB, payment.PreviewQuery{
		AccountID: r.AccountID, WalletID: r.WalletID, To: r.To, Asset: a, Amount: r.Amount, Proposed: proposed, At: s.policyTime(),
	})
	if err != nil {
		return nil, s.submitFailed(ctx, err)
	}
	out := &previewOutput{}
	b := &out.Body
	switch p.Decision.Outcome {
	case policy.Send:
		b.Outcome = string(payment.Sent)
	case policy.NeedsApproval:
		b.Outcome = string(payment.PendingApproval)
	default:
		b.Outcome = string(payment.Blocked)
		reason := string(p.Decision.Reason)
		b.Reason = &reason
	}
	if p.Decision.Rule != "" {
		rule := string(p.Decision.Rule)
		b.Rule = &rule
	}
	u, pol := p.Usage, policyOf(p.Policy)
	b.Asset, b.Currency = p.Asset.Symbol, string(p.Asset.Currency)
	b.DailyLimitUSDC, b.SpentTodayUSDC = pol.DailyLimitUSDC, USDC(u.USD.Today)
	b.RemainingTodayUSDC = USDC(max(0, p.Policy.DailyLimit-u.USD.Today))
	b.DailyLimitEUR, b.SpentTodayEUR = pol.DailyLimitEUR, EUR(u.EUR.Today)
	b.RemainingTodayEUR = EUR(max(0, p.Policy.EURLimits().DailyLimit-u.EUR.Today))
	b.ApprovalThresholdUSDC, b.MaxTxUSDC = pol.ApprovalThresholdUSDC, pol.MaxTxUSDC
	remaining := func(limit *money.Micros[money.USD], spent money.Micros[money.USD]) *USDC {
		if limit == nil {
			return nil
		}
		return usdcOf(ptr(max(0, *limit-spent)))
	}
	b.WeeklyLimitUSDC, b.SpentWeekUSDC, b.RemainingWeekUSDC = pol.WeeklyLimitUSDC, USDC(u.USD.Week), remaining(p.Policy.WeeklyLimit, u.USD.Week)
	b.MonthlyLimitUSDC, b.SpentMonthUSDC, b.RemainingMonthUSDC = pol.MonthlyLimitUSDC, USDC(u.USD.Month), remaining(p.Policy.MonthlyLimit, u.USD.Month)
	b.MaxTxPerHour, b.PaymentsLastHour, b.MaxTxPerDay, b.PaymentsLastDay = pol.MaxTxPerHour, u.PaymentsLastHour, pol.MaxTxPerDay, u.PaymentsLastDay
	b.ActiveHours, b.OutsideActiveHours = pol.ActiveHours, pol.OutsideActiveHours
	b.ApprovalsRequired = pol.ApprovalsRequired
	if h := p.Policy.ActiveHours; h != nil {
		b.WithinActiveHours = ptr(h.Contains(p.At))
	}
	return out, nil
}

// validIdempotencyKey: 1 to 255 printable ASCII characters.
func validIdempotencyKey(k string) bool {
	if len(k) == 0 || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func (s *server) send(ctx context.Context, in *sendInput) (*sendOutput, error) {
	r, err := s.parseSend(ctx, in.ID, &in.Body)
	if err != nil {
		return nil, err
	}
	paid, err := s.pay(ctx, &r, in.IdempotencyKey, "nothing was sent")
	if err != nil {
		return nil, err
	}
	if paid.Replayed {
		// The first answer again, byte for byte: the same outcome
		// through the same mapping.
		s.log.InfoContext(ctx, "send replayed", "wallet_id", r.WalletID, "status", paid.Outcome.Status)
		out, err := sendAnswer(paid.Outcome)
		if err != nil {
			return nil, huma.ErrorWithHeaders(err, http.Header{"Idempotent-Replayed": {"true"}})
		}
		out.Replayed = "true"
		out.Body.TransactionStatus = paid.TransactionStatus
		if paid.TransactionStatus == payment.TxFailed {
			out.Body.Message = "the transaction failed and nothing was spent; to try again, send with a new Idempotency-Key"
		}
		return out, nil
	}
	s.log.InfoContext(ctx, "send decided", "send_request_id", r.ID, "wallet_id", r.WalletID, "status", paid.Outcome.Status, "signature", paid.Outcome.Signature)
	return sendAnswer(paid.Outcome)
}

// pay hands a parsed payment to the Gateway under the caller's
// Idempotency-Key (when given), mapping its refusals; nothing says what
// was not done when the queue was unavailable.
func (s *server) pay(ctx context.Context, r *payment.Request, key, nothing string) (*payment.Paid, error) {
	if err := s.idempotent(ctx, r, key); err != nil {
		return nil, err
	}
	paid, err := s.payments.Pay(ctx, r)
	if err != nil {
		return nil, s.payFailed(ctx, err, nothing)
	}
	return paid, nil
}

// idempotent checks an Idempotency-Key header (when given) and scopes it
// to the caller: the key's lineage, or the person.
func (s *server) idempotent(ctx context.Context, r *payment.Request, key string) error {
	if key == "" {
		return nil
	}
	if !validIdempotencyKey(key) {
		return inputError("header", "Idempotency-Key", "must be 1 to 255 printable ASCII characters")
	}
	pr := principal(ctx)
	scope := payment.IdempotencyScope(pr.Lineage, pr.User)
	r.IdempotencyKey, r.IdempotencyScope = &key, &scope
	return nil
}

// payFailed maps the Gateway's refusals of a payment: the queue's
// (nothing done: what says so), then the submission's.
func (s *server) payFailed(ctx context.Context, err error, nothing string) error {
	if errors.Is(err, payment.ErrQueueUnavailable) {
		return errorf(http.StatusServiceUnavailable, "the payment queue is unavailable; "+nothing+", it is safe to retry")
	}
	return s.submitFailed(ctx, err)
}

// submitFailed maps a refusal to record a send.
func (s *server) submitFailed(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, payment.ErrSelfSend):
		return fieldError("to", "is the sending wallet itself")
	case errors.Is(err, payment.ErrKeyReused):
		return errorf(http.StatusUnprocessableEntity, "Idempotency-Key was already used with a different request (wallet, to, asset, amount or memo)")
	case errors.Is(err, payment.ErrInFlight):
		return errorf(http.StatusConflict, "a request with this Idempotency-Key is still in progress; retry shortly")
	}
	return s.fail(ctx, err)
}

// notSigned is the 503 of a payment the worker did not sign because the
// network's priority fee market was above the cap, or the account's fee
// payer had used up its daily budget (o.Cause, the reason); also says what
// became of it (an approval stays pending).
func notSigned(o *payment.Outcome, also string) *Error {
	msg := o.Detail + "; nothing was signed or reserved"
	if also != "" {
		msg += ", " + also
	}
	retry := "; try again later"
	if o.Cause == payment.CauseFeePayerBudgetExceeded {
		retry = "; an owner or admin key may raise the budget (PUT /fee-payer), or try again tomorrow (UTC)"
	}
	return &Error{status: http.StatusServiceUnavailable, Reason: o.Cause, Message: msg + retry}
}

// accountFrozen is the 422 of a payment refused before signing because
// the wallet's or the recipient's token account is frozen.
func accountFrozen(o *payment.Outcome) *Error {
	return &Error{status: http.StatusUnprocessableEntity, Reason: payment.CauseAccountFrozen,
		Message: o.Detail + "; nothing was signed or reserved"}
}

// sendAnswer maps a send's outcome to its HTTP answer.
func sendAnswer(o *payment.Outcome) (*sendOutput, error) {
	out := &sendOutput{}
	switch o.Status {
	case payment.Sent:
		out.Status = http.StatusOK
		out.Body.Status, out.Body.Signature = string(payment.Sent), o.Signature
		return out, nil
	case payment.PendingApproval:
		out.Status = http.StatusAccepted
		out.Body.Status, out.Body.ApprovalID = string(payment.PendingApproval), approval.PublicID(o.ApprovalID)
		return out, nil
	case payment.Blocked:
		e := &Error{status: http.StatusForbidden, Message: "Blocked by policy", Reason: string(o.Reason)}
		if o.Currency == money.CodeEUR {
			left := EUR(o.RemainingToday)
			e.RemainingTodayEUR = &left
		} else {
			left := USDC(o.RemainingToday)
			e.RemainingTodayUSDC = &left
		}
		return nil, e
	case payment.Refused:
		if o.Cause == payment.CauseAccountFrozen {
			return nil, accountFrozen(o)
		}
		switch o.Short {
		case "USDC":
			return nil, errorf(http.StatusUnprocessableEntity, "insufficient USDC: the wallet's USDC balance is below the amount; nothing was sent")
		case "SOL":
			return nil, errorf(http.StatusUnprocessableEntity, "insufficient SOL: the wallet needs SOL for the network fee (and the rent of the recipient's USDC account if it must be created); nothing was sent")
		case payment.ShortFeePayerSOL:
			return nil, errorf(http.StatusUnprocessableEntity, "insufficient SOL: the account's fee payer needs SOL for the network fee (and the rent of the recipient's USDC account if it must be created); fund it (GET /fee-payer shows its address); nothing was sent")
		case "":
		default:
			return nil, errorf(http.StatusUnprocessableEntity, "insufficient "+o.Short+": the wallet's "+o.Short+" balance is below the amount; nothing was sent")
		}
		return nil, errorf(http.StatusUnprocessableEntity, "the Solana node refused the transaction in simulation; nothing was sent: "+o.Detail)
	case payment.Unavailable:
		if o.NotSigned() {
			return nil, notSigned(o, "")
		}
		return nil, errorf(http.StatusServiceUnavailable, "no Solana RPC node of this network answered; nothing was sent, it is safe to retry")
	}
	return nil, fmt.Errorf("unknown send outcome %q", o.Status)
}
