package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/keymaker"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// Error is the body of every error answer: {"error": "..."}, with
// optional details of which fields failed validation.
type Error struct {
	status  int
	Message string        `json:"error" doc:"What went wrong, in one sentence." example:"label: expected length >= 1"`
	Details []ErrorDetail `json:"details,omitempty" doc:"For validation errors: each failing field."`
	// A blocked send says why and what is left, so an agent can adjust.
	Reason             string `json:"reason,omitempty" enum:"wallet_frozen,asset_not_allowed,recipient_not_allowed,exceeds_max_tx,exceeds_daily_limit,exceeds_weekly_limit,exceeds_monthly_limit,exceeds_velocity,outside_active_hours,fee_cap_below_market,fee_payer_budget_exceeded,signer_unavailable,already_paid,account_frozen" doc:"When a send is blocked by policy (403): the rule that blocked it (exceeds_weekly_limit and exceeds_monthly_limit: the rolling 7 or 30 days' total; exceeds_velocity: max_tx_per_hour or max_tx_per_day payments already made; outside_active_hours: outside the wallet's active hours). When a send answers 503 because the network's priority fee market is above the service's cap: fee_cap_below_market; because the account's fee payer has used up its daily budget: fee_payer_budget_exceeded; because the wallet's key store (an HSM or a KMS) cannot sign now: signer_unavailable (in each, nothing was signed or reserved). When an MPP payment answers 409 because the account already paid one of the seller's challenges: already_paid (payment_id names that payment; nothing was signed). When a send, an x402 or an MPP payment answers 422 because the wallet's or the recipient's token account of the asset is frozen by its mint's freeze authority: account_frozen (nothing was signed or reserved; a recipient without an account is not frozen)." example:"exceeds_daily_limit"`
	PaymentID          string `json:"payment_id,omitempty" format:"uuid" doc:"Only with reason already_paid: the account's earlier payment of the challenge (GET /mpp/payments/{id}); absent when a wallet out of the key's reach paid it." example:"0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"`
	RemainingTodayEUR  *EUR   `json:"remaining_today_eur,omitempty" doc:"Only when a send in a EUR stablecoin is blocked by policy: what the EUR daily limit still allows today (UTC), in euros." example:"4.5"`
	RemainingTodayUSDC *USDC  `json:"remaining_today_usdc,omitempty" doc:"Only when a send is blocked by policy: what the daily limit still allows today (UTC), in USDC." example:"4.5"`
	// cause is the refusal it answers, for callers that branch on it
	// (a Slack click); nil for most.
	cause error
}

// ErrorDetail names one failing field of a request.
type ErrorDetail struct {
	Location string `json:"location" doc:"Where the problem is, e.g. body.policy.max_tx_usdc." example:"body.label"`
	Message  string `json:"message" doc:"What is wrong there." example:"expected length >= 1"`
}

func (e *Error) Error() string  { return e.Message }
func (e *Error) GetStatus() int { return e.status }
func (e *Error) Unwrap() error  { return e.cause }

// errorf answers status with message.
func errorf(status int, msg string) *Error { return &Error{status: status, Message: msg} }

// fieldError answers 422 naming a body field.
func fieldError(field, msg string) *Error { return inputError("body", field, msg) }

// inputError answers 422 naming a field of one part of the request
// (body, query, header), as huma's own validation does.
func inputError(part, field, msg string) *Error {
	return &Error{status: http.StatusUnprocessableEntity, Message: field + ": " + msg,
		Details: []ErrorDetail{{Location: part + "." + field, Message: msg}}}
}

// checkText refuses what PostgreSQL refuses in text (NUL, invalid UTF-8)
// with a 422 naming the field, so it never reaches the database as a 500.
func checkText(part, field, s string) error {
	switch {
	case strings.ContainsRune(s, 0):
		return inputError(part, field, "must not contain NUL characters")
	case !utf8.ValidString(s):
		return inputError(part, field, "must be UTF-8 text")
	}
	return nil
}

var installErrors sync.Once

// useErrorShape makes huma's own errors (bad JSON, validation, body too
// large) answer in our {"error": ...} shape instead of problem+json. huma
// keeps this hook in a package variable, so it is set once.
func useErrorShape() {
	installErrors.Do(func() {
		huma.NewError = newHumaError
		// "Label" must not pass as "label": Go's decoder would take the
		// unvalidated one.
		huma.ValidateStrictCasing = true
		// Lists are answered as [] when empty, never null; an array that
		// may be null says so (nullable:"true"), so generated clients
		// type the others as plain arrays.
		huma.DefaultArrayNullable = false
	})
}

func newHumaError(status int, msg string, errs ...error) huma.StatusError {
	e := &Error{status: status, Message: msg}
	for _, err := range errs {
		if err == nil {
			continue
		}
		var d *huma.ErrorDetail
		if errors.As(err, &d) {
			e.Details = append(e.Details, ErrorDetail{Location: d.Location, Message: d.Message})
		} else {
			e.Details = append(e.Details, ErrorDetail{Message: err.Error()})
		}
	}
	switch {
	case status == http.StatusInternalServerError && msg == "cannot read request body":
		// The client's body broke off or was malformed on the wire.
		e.status, e.Message = http.StatusBadRequest, "could not read request body"
	case status >= 500:
		// Never echo internal error text.
		if msg == "" || msg == "unexpected error occurred" {
			e.Message = "internal error"
		}
	case status == http.StatusRequestEntityTooLarge:
		e.Message = fmt.Sprintf("request body is larger than %d KiB", MaxBodyBytes>>10)
	case status == http.StatusUnsupportedMediaType:
		e.Message = "Content-Type must be application/json"
	case status == http.StatusBadRequest && len(e.Details) > 0 && e.Details[0].Location == "body":
		// The body is not JSON at all (or not of the right top-level shape).
		e.Message = "malformed JSON body: " + e.Details[0].Message
		e.Details = nil
	case status == http.StatusUnprocessableEntity && len(e.Details) > 0:
		d := e.Details[0]
		if field := strings.TrimPrefix(strings.TrimPrefix(d.Location, "body"), "."); field != "" {
			e.Message = field + ": " + d.Message
		} else {
			e.Message = d.Message
		}
	case msg == "":
		e.Message = http.StatusText(status)
	}
	if e.status >= 500 || e.status == http.StatusRequestEntityTooLarge || e.status == http.StatusUnsupportedMediaType {
		e.Details = nil
	}
	return e
}

// fail maps a domain error to its HTTP answer, in one place. Anything
// unexpected is logged and answered 500 without detail.
func (s *server) fail(ctx context.Context, err error) error {
	var fe *wallet.FieldError
	var kfe *auth.FieldError
	var ae *Error
	var denied *auth.Denied
	var wrongChain *solana.WrongChainError
	var tooManyWallets *wallet.TooManyError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &denied):
		return s.denied(ctx, denied)
	case errors.As(err, &kfe):
		return fieldError(kfe.Field, kfe.Msg)
	case errors.As(err, &tooManyWallets):
		return errorf(http.StatusConflict, tooManyWallets.Error())
	case approvalErr(err) != nil:
		return approvalErr(err)
	case webhookErr(err) != nil:
		return webhookErr(err)
	case keyErr(err) != nil:
		return keyErr(err)
	case userErr(err) != nil:
		return userErr(err)
	case errors.Is(err, payment.ErrUnknown):
		s.log.ErrorContext(ctx, "send outcome unknown", "err", err)
		return errorf(http.StatusServiceUnavailable, "the payment's outcome could not be established; check GET /transactions before retrying")
	case errors.Is(err, payment.ErrAbandoned):
		return errorf(http.StatusServiceUnavailable, "the payment was not decided in time and was cancelled; nothing was sent, it is safe to retry")
	case errors.Is(err, wallet.ErrNotFound):
		return errorf(http.StatusNotFound, "agent not found")
	case errors.As(err, &fe):
		return fieldError(fe.Field, fe.Msg)
	case errors.As(err, &wrongChain):
		s.log.ErrorContext(ctx, "the network's Solana node is of the wrong chain", "err", err)
		return errorf(http.StatusServiceUnavailable, "this network's Solana node is unavailable (the service's configuration names a node of another chain); an operator must fix it")
	case errors.Is(err, solana.ErrUnavailable):
		s.log.WarnContext(ctx, "no solana rpc node answered", "err", err)
		return errorf(http.StatusServiceUnavailable, "no Solana RPC node of this network answered; try again")
	case errors.Is(err, solana.ErrRPC):
		s.log.WarnContext(ctx, "solana rpc failed", "err", err)
		return errorf(http.StatusBadGateway, "Solana RPC node did not answer correctly; try again")
	case isWorkerRefusal(err):
		// A worker could not make a key or seal an export (not a
		// passing outage): logged, answered 503, nothing was made.
		s.log.ErrorContext(ctx, "a worker refused a key request", "err", err)
		return errorf(http.StatusServiceUnavailable, "a worker could not carry out the request; nothing was made or exported, try again or ask an operator")
	case isSignerUnavailable(err):
		u, _ := signer.Unavailable(err)
		s.log.WarnContext(ctx, "signer unavailable", "err", err)
		return &Error{status: http.StatusServiceUnavailable, Reason: payment.CauseSignerUnavailable,
			Message: fmt.Sprintf("the %s signer is unavailable: %s; nothing was made or signed, try again", u.Backend, u.Reason)}
	case errors.Is(err, audit.ErrSeal):
		// Readers seal before they read (a lock held by another seal past
		// its timeout, the database going away): never a partial log.
		s.log.WarnContext(ctx, "audit log not sealed", "err", err)
		return errorf(http.StatusServiceUnavailable, "the audit log could not be brought up to date for reading; try again")
	case postgres.IsUnavailable(err):
		s.log.WarnContext(ctx, "database unavailable", "err", err)
		return errorf(http.StatusServiceUnavailable, "database unavailable; try again")
	}
	s.log.ErrorContext(ctx, "request failed", "err", err)
	return errorf(http.StatusInternalServerError, "internal error")
}

func isWorkerRefusal(err error) bool {
	var we *keymaker.WorkerError
	return errors.As(err, &we)
}

func isSignerUnavailable(err error) bool {
	_, ok := signer.Unavailable(err)
	return ok
}

// writeError writes an error body outside huma (mux fallbacks, ops routes).
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
