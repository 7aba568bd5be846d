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
	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// DefaultSendWait is how long a send waits for its decision before it is
// cancelled (503). A worker normally answers within milliseconds.
const DefaultSendWait = 10 * time.Second

// sendGrace is how long a send whose decision won the race against the
// timeout still waits for its broadcast to report.
const sendGrace = 5 * time.Second

type sendInput struct {
	ID   string `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Body struct {
		To     string  `json:"to" minLength:"32" maxLength:"64" doc:"Recipient's Solana address (base58, 32 bytes). Its USDC token account is created if missing, paid by the wallet." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
		Amount Amount  `json:"amount" doc:"USDC to send, greater than 0, at most 6 decimal places." example:"1.5"`
		Memo   *string `json:"memo,omitempty" maxLength:"200" doc:"Optional note of at most 200 characters, written on-chain with the Memo program (public)." example:"invoice 1234"`
	}
}

type sendOutput struct {
	Status int
	Body   struct {
		Status     string `json:"status" enum:"sent,pending_approval" doc:"sent: signed and broadcast; its confirmation shows in GET /transactions. pending_approval: waiting for a human." example:"sent"`
		Signature  string `json:"signature,omitempty" doc:"When sent: the transaction's signature (its id on-chain)." example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
		ApprovalID string `json:"approval_id,omitempty" doc:"When pending_approval: the approval's id." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
	}
}

func (s *server) registerSend(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "send",
		Method:      http.MethodPost,
		Path:        Prefix + "/agents/{id}/send",
		Summary:     "Send USDC",
		Description: "Evaluates the wallet's policy and answers with the outcome: 200 `sent` (signed and broadcast), " +
			"202 `pending_approval` (a human must approve), or 403 `Blocked by policy` with `reason` and `remaining_today_usdc`. " +
			"422 when the wallet lacks the USDC or the SOL for fees (nothing is sent); 503 when the decision did not happen in time " +
			"(the payment is cancelled and will never go out; safe to retry). Not idempotent: two calls make two payments.",
		Tags:         []string{"Payments"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Responses: map[string]*huma.Response{
			"202": {Description: "Parked for human approval."},
		},
		Errors: []int{400, 401, 403, 404, 413, 422, 502, 503},
	}, s.send)
}

func (s *server) send(ctx context.Context, in *sendInput) (*sendOutput, error) {
	to, err := sol.PublicKeyFromBase58(in.Body.To)
	if err != nil {
		return nil, fieldError("to", "must be a base58 Solana address of 32 bytes")
	}
	amount, err := in.Body.Amount.Micros("amount")
	if err != nil {
		return nil, err
	}
	if amount <= 0 {
		return nil, fieldError("amount", "must be greater than 0")
	}
	if m := in.Body.Memo; m != nil {
		if utf8.RuneCountInString(*m) > payment.MaxMemo {
			return nil, fieldError("memo", fmt.Sprintf("must be at most %d characters", payment.MaxMemo))
		}
		if strings.ContainsRune(*m, 0) {
			return nil, fieldError("memo", "must not contain NUL characters")
		}
		if *m == "" {
			in.Body.Memo = nil
		}
	}
	walletID, ok := parseID(in.ID)
	if !ok {
		return nil, s.fail(ctx, wallet.ErrNotFound)
	}

	pr := principal(ctx)
	r := payment.Request{
		ID: uuid.New(), AccountID: pr.AccountID, WalletID: walletID,
		KeyID:   uuid.NullUUID{UUID: pr.KeyID, Valid: pr.KeyID != uuid.Nil},
		Network: pr.Network, To: to.String(), Amount: amount, Memo: in.Body.Memo,
	}
	if err := payment.Submit(ctx, s.DB, &r, s.sendWait); err != nil {
		if errors.Is(err, payment.ErrSelfSend) {
			return nil, fieldError("to", "is the sending wallet itself")
		}
		return nil, s.fail(ctx, err)
	}
	notified, done := s.waiter.Register(r.ID)
	defer done()
	if _, err := s.tasks.EnqueueContext(ctx, tasks.NewSendDecideTask(r.ID)); err != nil {
		// The enqueue may have reached Redis all the same (a timeout on
		// the answer): only a successful abandon means nothing will run.
		s.log.WarnContext(ctx, "enqueue send decision", "request_id", r.ID, "err", err)
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		abandoned, aerr := payment.Abandon(bg, s.DB, r.ID)
		cancel()
		switch {
		case aerr != nil:
			return nil, s.fail(ctx, fmt.Errorf("%w: %w", payment.ErrUnknown, aerr))
		case abandoned:
			return nil, errorf(http.StatusServiceUnavailable, "the payment queue is unavailable; nothing was sent, it is safe to retry")
		}
		// A worker took it: wait for its outcome like any other.
	}
	out, err := payment.Wait(ctx, s.DB, r.ID, notified, s.sendWait, sendGrace)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "send decided", "request_id", r.ID, "wallet_id", r.WalletID, "status", out.Status, "signature", out.Signature)
	return sendAnswer(out)
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
		left := USDC(o.RemainingToday)
		return nil, &Error{status: http.StatusForbidden, Message: "Blocked by policy", Reason: string(o.Reason), RemainingTodayUSDC: &left}
	case payment.Refused:
		switch o.Short {
		case "USDC":
			return nil, errorf(http.StatusUnprocessableEntity, "insufficient USDC: the wallet's USDC balance is below the amount; nothing was sent")
		case "SOL":
			return nil, errorf(http.StatusUnprocessableEntity, "insufficient SOL: the wallet needs SOL for the network fee (and the rent of the recipient's USDC account if it must be created); nothing was sent")
		}
		return nil, errorf(http.StatusUnprocessableEntity, "the Solana node refused the transaction in simulation; nothing was sent: "+o.Detail)
	case payment.Unavailable:
		return nil, errorf(http.StatusBadGateway, "the Solana RPC node did not answer; nothing was sent, it is safe to retry")
	}
	return nil, fmt.Errorf("unknown send outcome %q", o.Status)
}
