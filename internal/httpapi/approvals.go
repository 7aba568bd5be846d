package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/payment"
)

// Approval is a payment parked for a human (docs/decisions/approvals.md).
type Approval struct {
	ID           string     `json:"id" doc:"Approval id." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
	WalletID     string     `json:"wallet_id" format:"uuid" doc:"The paying wallet." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	AgentLabel   string     `json:"agent_label" doc:"The paying wallet's label." example:"research-bot"`
	Amount       Quantity   `json:"amount" doc:"The amount in whole units of asset." example:"250"`
	Asset        string     `json:"asset" doc:"What it pays: a symbol of GET /assets (USDC for every payment made before other assets)." example:"USDC"`
	To           string     `json:"to" doc:"Recipient's address (base58)." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	Memo         *string    `json:"memo" nullable:"true" doc:"The send's memo, or null." example:"invoice 1234"`
	Status       string     `json:"status" enum:"pending,signing,sent,rejected,expired" doc:"pending: waiting for a human; signing: approved, the policy is being checked again and the transaction broadcast; sent: broadcast, signature available; rejected: closed without spending (by a human, or by the system when the policy no longer allows it); expired: pending longer than 7 days." example:"sent"`
	Reason       *string    `json:"reason" nullable:"true" enum:"policy_violation_at_approval,refused_by_node,account_frozen,transaction_failed" doc:"Why the system rejected it, or null: policy_violation_at_approval (the policy, checked again at approval, blocks it; reason_detail names the rule), refused_by_node (the node's simulation refused it, e.g. not enough USDC), account_frozen (the wallet's or the recipient's token account of the asset is frozen by its mint's freeze authority; reason_detail says whose; nothing was signed), transaction_failed (it expired or failed before it was sent)." example:"policy_violation_at_approval"`
	ReasonDetail *string    `json:"reason_detail" nullable:"true" doc:"The rule (exceeds_daily_limit, exceeds_weekly_limit, exceeds_monthly_limit, exceeds_max_tx, asset_not_allowed, recipient_not_allowed, wallet_frozen) or the node's message behind reason, or null." example:"exceeds_daily_limit"`
	Signature    *string    `json:"signature" nullable:"true" doc:"The transaction's signature once signed, or null." example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
	RequestedBy  *string    `json:"requested_by" nullable:"true" doc:"Who made the send: the API key (key_…) or the dashboard user (user:<address>); null for sends recorded before people were. Neither it nor any key descending from it (rotated from it, or minted by it or by such a key) may approve it. Agent keys read a person as user, without the address." example:"key_8a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"`
	ApprovedBy   *string    `json:"approved_by" nullable:"true" doc:"Who approved it: key_<uuid> (API key), user:<address> (dashboard user), slack:<user id>; null unless approved. Agent keys read a person as user or slack, without the address or id." example:"key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"`
	RejectedBy   *string    `json:"rejected_by" nullable:"true" doc:"Who rejected it: key_<uuid>, user:<address>, slack:<user id>, or system; null unless rejected. Agent keys read a person as user or slack, without the address or id." example:"system"`
	Note         *string    `json:"note" nullable:"true" doc:"The approver's or rejecter's note, or null." example:"over budget this week"`
	CreatedAt    time.Time  `json:"created_at" doc:"When the send was parked, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	ExpiresAt    time.Time  `json:"expires_at" doc:"When it expires if still pending (7 days after creation)." example:"2026-04-08T12:00:00Z"`
	DecidedAt    *time.Time `json:"decided_at" nullable:"true" doc:"When it was approved, rejected or expired; null while pending." example:"2026-04-01T12:05:00Z"`
	// An approval stays sent when its transaction later fails: this says
	// so beside it.
	TransactionStatus *string `json:"transaction_status" nullable:"true" enum:"pending,confirmed,failed" doc:"Its transaction's status once signed (a sent approval whose transaction failed on chain spent nothing; tx.failed was emitted), or null." example:"confirmed"`
	// A payment to a seller's approval says what is bought, and from whom.
	Kind        string     `json:"kind" enum:"send,x402,mpp" doc:"send: a send to an address; x402: an x402 payment to the seller at to; mpp: an MPP charge of the seller at to (and its splits). Approving an x402 or mpp payment grants it: the agent pays with approval_id within 15 minutes; status sent, no signature." example:"send"`
	Resource    *string    `json:"resource" nullable:"true" doc:"For kind x402 or mpp: the URL paid for; else null." example:"https://api.example.com/weather"`
	Description *string    `json:"description" nullable:"true" doc:"For kind x402 or mpp: the seller's description of the resource, or null." example:"Weather report"`
	Realm       *string    `json:"realm" nullable:"true" doc:"For kind mpp: the seller as its challenge names itself; else null." example:"api.example.com"`
	Splits      []MPPSplit `json:"splits" doc:"For kind mpp: the charge's further recipients and their shares (amount is the total); else empty."`
	// m-of-n approvals.
	Approvals       []ApprovalVote `json:"approvals" doc:"Who approved it so far, oldest first: one entry per person (a wallet's approvals_required above 1 needs several). The last approve of a sent approval is also approved_by. Empty while nobody has."`
	ApprovalsNeeded int            `json:"approvals_needed" minimum:"1" doc:"How many distinct people must approve it: while pending, the wallet's approvals_required now (at most the account's owners and approvers: when people leave, those who remain suffice); once decided, the number it was decided with. The requester never counts." example:"2"`
}

// ApprovalVote is one person's approve.
type ApprovalVote struct {
	By     string    `json:"by" doc:"Who approved: key_<uuid> (an admin key, counted as the person who made it), user:<address> (a dashboard user) or slack:<member id>. Agent keys read a person as user or slack, without the address or id." example:"user:9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	Person *string   `json:"person" nullable:"true" doc:"The person this approve counts as (user:<address>): the dashboard user, the person an admin key descends from, or the user a Slack member is linked to; null when it is none (a command-line key or an unlinked Slack member, which may approve only wallets needing one approve). Agent keys read user, without the address." example:"user:9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	At     time.Time `json:"at" doc:"When, ISO 8601 UTC." example:"2026-04-01T12:04:00Z"`
	Note   *string   `json:"note" nullable:"true" doc:"The approver's note, or null." example:"invoice checked"`
}

func approvalOf(a *approval.Approval) Approval {
	out := Approval{
		ID: approval.PublicID(a.ID), WalletID: a.WalletID.String(), AgentLabel: a.AgentLabel,
		Amount: paidQuantity(a.Amount), Asset: a.Asset, To: a.To, Memo: a.Memo, Status: a.Status,
		Reason: a.Reason, ReasonDetail: a.ReasonDetail, Signature: a.Signature,
		ApprovedBy: a.ApprovedBy, RejectedBy: a.RejectedBy, Note: a.Note, TransactionStatus: a.TransactionStatus,
		CreatedAt: a.CreatedAt.UTC(), ExpiresAt: a.ExpiresAt.UTC(),
		Kind: "send", Resource: a.Resource, Description: a.Description,
	}
	if a.X402 {
		out.Kind = cmp.Or(a.Protocol, "x402")
	}
	out.Realm, out.Splits = a.Realm, []MPPSplit{}
	var splits []payment.Split
	if len(a.Splits) > 0 && json.Unmarshal(a.Splits, &splits) == nil {
		out.Splits = splitsOf(splits)
	}
	out.ApprovalsNeeded = max(1, a.Needed)
	out.Approvals = make([]ApprovalVote, len(a.Votes))
	for i, v := range a.Votes {
		out.Approvals[i] = ApprovalVote{By: v.By, At: v.At.UTC(), Note: v.Note}
		if audit.Actor(v.Person).IsPerson() {
			p := v.Person
			out.Approvals[i].Person = &p
		}
	}
	if r := a.Requester(); r != "" {
		out.RequestedBy = &r
	}
	if !a.DecidedAt.IsZero() {
		t := a.DecidedAt.Time.UTC()
		out.DecidedAt = &t
	}
	return out
}

// seenBy is a as pr may read it: to a principal that may not read about
// people (agent keys), a person who decided is user or slack, without the
// address or id.
func (a Approval) seenBy(pr auth.Principal) Approval {
	if !pr.ReadsPeople() {
		ps := []**string{&a.RequestedBy, &a.ApprovedBy, &a.RejectedBy}
		a.Approvals = slices.Clone(a.Approvals)
		for i := range a.Approvals {
			a.Approvals[i].By = hidePerson(a.Approvals[i].By)
			ps = append(ps, &a.Approvals[i].Person)
		}
		for _, p := range ps {
			if *p != nil {
				v := hidePerson(**p)
				*p = &v
			}
		}
	}
	return a
}

type approvalIDInput struct {
	ID string `path:"id" doc:"Approval id (ap_…)." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
}

type approvalActionInput struct {
	ID   string `path:"id" doc:"Approval id (ap_…)." example:"ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
	Body *struct {
		Note *string `json:"note,omitempty" maxLength:"500" doc:"Optional note, kept on the approval and in the audit log (at most 500 characters)." example:"checked the invoice"`
	}
}

// parseAction validates an approve or reject: the note, then the id.
func (s *server) parseAction(ctx context.Context, in *approvalActionInput) (uuid.UUID, *string, error) {
	var note *string
	if in.Body != nil && in.Body.Note != nil && *in.Body.Note != "" {
		if utf8.RuneCountInString(*in.Body.Note) > approval.MaxNote {
			return uuid.Nil, nil, fieldError("note", fmt.Sprintf("must be at most %d characters", approval.MaxNote))
		}
		if err := checkText("body", "note", *in.Body.Note); err != nil {
			return uuid.Nil, nil, err
		}
		note = in.Body.Note
	}
	id, ok := approval.ParseID(in.ID)
	if !ok {
		return uuid.Nil, nil, s.fail(ctx, approval.ErrNotFound)
	}
	return id, note, nil
}

type approvalOutput struct {
	Status int
	Body   Approval
}

type listApprovalsInput struct {
	Status   string `query:"status" enum:"pending,signing,sent,rejected,expired" doc:"Only approvals with this status." example:"pending"`
	WalletID string `query:"wallet_id" doc:"Only this wallet's approvals (UUIDv4). Another account's wallet answers 404." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	PageQuery
}

type listApprovalsOutput struct {
	Body struct {
		Approvals  []Approval `json:"approvals" doc:"Newest first."`
		NextCursor *string    `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

func (s *server) registerApprovals(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "list-approvals",
		Method:      http.MethodGet,
		Path:        Prefix + "/approvals",
		Summary:     "List approvals",
		Description: "The account's approvals, newest first, optionally by status; `next_cursor` continues the list.",
		Tags:        []string{"Approvals"},
		Errors:      []int{400, 401, 422},
	}, s.listApprovals)

	huma.Register(api, huma.Operation{
		OperationID: "get-approval",
		Method:      http.MethodGet,
		Path:        Prefix + "/approvals/{id}",
		Summary:     "Get an approval",
		Tags:        []string{"Approvals"},
		Errors:      []int{401, 404},
	}, s.getApproval)

	huma.Register(api, huma.Operation{
		OperationID: "approve",
		Method:      http.MethodPost,
		Path:        Prefix + "/approvals/{id}/approve",
		Summary:     "Approve a pending payment",
		Description: "Records the caller's approve. When the wallet needs several people (`approvals_required` above 1) and this approve leaves it short, " +
			"answers 200 with the approval still `pending`, the approve in `approvals` (an `approval.vote` event and an `approval.voted` audit entry); " +
			"every approve must then count as a distinct person of the account who may approve (an admin key counts as the person who made it: one made on the command line, " +
			"or by a person no longer owner or approver, is refused with 403), and a person who already approved is refused with 409 (nothing changes). " +
			"The approve that completes the quorum moves the approval to `signing`; the policy is checked again in full (the day may have been used up, limits may have changed), " +
			"then the payment is signed and broadcast (200, status `sent`) or rejected by the system (200, status `rejected`, reason `policy_violation_at_approval`). " +
			"202 with status `signing` when the broadcast has not reported in time (it continues; poll GET /approvals/{id}). " +
			"Only admin keys, owners and approvers may approve (403 for agent keys and viewers). The payment's requester (`requested_by`) may not approve it, " +
			"nor may any key descending from the requester: the requesting key's rotations, every key the requester (key or person) minted, directly or through keys it minted, " +
			"and every key it rotated; nor, when the requester is an admin key, the key or person that made it and their other keys " +
			"(403 `Requester cannot approve`, audited as permission.denied). A person may approve the payments of an agent key they made. " +
			"409 when the approval is not pending (already decided, or expired); 503 when it could not be executed in time (it stays pending, nothing was sent), " +
			"or with `reason` `fee_cap_below_market` when the network's priority fee is above the service's cap, or `fee_payer_budget_exceeded` when the account's fee payer " +
			"has used up its daily budget (it stays pending, nothing was signed or reserved).",
		Tags:         []string{"Approvals"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Responses: map[string]*huma.Response{
			"202": {Description: "Approved and signed; the broadcast has not reported yet."},
		},
		Errors: []int{400, 401, 403, 404, 409, 413, 422, 503},
	}, s.approve)

	huma.Register(api, huma.Operation{
		OperationID:  "reject",
		Method:       http.MethodPost,
		Path:         Prefix + "/approvals/{id}/reject",
		Summary:      "Reject a pending payment",
		Description:  "Closes the approval without spending (`rejected`, `rejected_by` the calling key). The key that made the send may reject it. 409 when it is not pending.",
		Tags:         []string{"Approvals"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Errors:       []int{400, 401, 404, 409, 413, 422},
	}, s.reject)
}

func (s *server) listApprovals(ctx context.Context, in *listApprovalsInput) (*listApprovalsOutput, error) {
	var after *approval.Cursor
	if in.Cursor != "" {
		at, id, err := parseTimeCursor(in.Cursor)
		if err != nil {
			return nil, err
		}
		after = &approval.Cursor{CreatedAt: at, ID: id}
	}
	n := in.size()
	pr := principal(ctx)
	wallets := pr.Wallets
	if in.WalletID != "" {
		id, err := s.walletFilter(ctx, in.WalletID)
		if err != nil {
			return nil, err
		}
		wallets = []uuid.UUID{id}
	}
	as, err := approval.List(ctx, s.DB, pr.AccountID, wallets, in.Status, after, n+1)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &listApprovalsOutput{}
	out.Body.Approvals, out.Body.NextCursor = page(as, n, func(a *approval.Approval) string { return timeCursor(a.CreatedAt, a.ID) },
		func(a *approval.Approval) Approval { return approvalOf(a).seenBy(pr) })
	return out, nil
}

func (s *server) getApproval(ctx context.Context, in *approvalIDInput) (*approvalOutput, error) {
	a, err := s.approval(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &approvalOutput{Status: http.StatusOK, Body: approvalOf(&a).seenBy(principal(ctx))}, nil
}

// approval reads an approval of a wallet the caller reaches; any other id
// is 404.
func (s *server) approval(ctx context.Context, rawID string) (approval.Approval, error) {
	id, ok := approval.ParseID(rawID)
	if !ok {
		return approval.Approval{}, s.fail(ctx, approval.ErrNotFound)
	}
	pr := principal(ctx)
	a, err := approval.Get(ctx, s.DB, pr.AccountID, id)
	if err == nil && !pr.Reaches(a.WalletID) {
		err = approval.ErrNotFound
	}
	if err != nil {
		return approval.Approval{}, s.fail(ctx, err)
	}
	return a, nil
}

// inScope refuses (404) an approval outside a scoped key's wallets; an
// unscoped principal reaches every approval of its account, and the
// account is checked by the action itself.
func (s *server) inScope(ctx context.Context, id uuid.UUID) error {
	if !principal(ctx).Scoped() {
		return nil
	}
	_, err := s.approval(ctx, approval.PublicID(id))
	return err
}

// actionOn reads an approve's or reject's approval and note, and checks
// the approval is one the caller reaches.
func (s *server) actionOn(ctx context.Context, in *approvalActionInput) (uuid.UUID, *string, error) {
	id, note, err := s.parseAction(ctx, in)
	if err != nil {
		return uuid.Nil, nil, err
	}
	return id, note, s.inScope(ctx, id)
}

func (s *server) reject(ctx context.Context, in *approvalActionInput) (*approvalOutput, error) {
	id, note, err := s.actionOn(ctx, in)
	if err != nil {
		return nil, err
	}
	pr := principal(ctx)
	a, err := approval.Reject(ctx, s.DB, pr.AccountID, id, pr.ActorID(), note)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "approval rejected", "approval_id", id, "by", pr.ActorID())
	return &approvalOutput{Status: http.StatusOK, Body: approvalOf(&a).seenBy(pr)}, nil
}

// approve moves the approval to signing, hands it to a worker and waits
// for the outcome like a send: at the wait's end an approval not yet
// executed returns to pending (503, nothing sent).
func (s *server) approve(ctx context.Context, in *approvalActionInput) (*approvalOutput, error) {
	id, note, err := s.actionOn(ctx, in)
	if err != nil {
		return nil, err
	}
	pr := principal(ctx)
	a, err := s.approveAs(ctx, pr.AccountID, id, voterOf(pr), note)
	if err != nil {
		return nil, err
	}
	out := &approvalOutput{Status: http.StatusOK, Body: approvalOf(&a).seenBy(pr)}
	if a.Status == approval.Signing {
		out.Status = http.StatusAccepted
	}
	return out, nil
}

// voterOf is a principal as an approver: a dashboard user is its own
// person; an admin key counts as the person it descends from (the first
// user:<address> of its ancestry: the person who made it, or who made the
// key that made it; a key rotated by another person descends from both
// and its vote speaks for both), or as no person when it was made on the
// command line.
func voterOf(pr auth.Principal) approval.Voter {
	v := approval.Voter{Actor: pr.ActorID(), Ancestry: pr.Ancestry}
	if pr.User != "" {
		v.Person = auth.UserActorID(pr.User)
	} else if i := slices.IndexFunc(pr.Ancestry, func(a string) bool { return audit.Actor(a).IsPerson() }); i >= 0 {
		v.Person = pr.Ancestry[i]
	}
	return v
}

// approveAs is every approve (API key, dashboard user, Slack button): the
// Gateway casts the vote and, when it completes the quorum, hands the
// execution to a worker and waits for it; this maps its refusals.
func (s *server) approveAs(ctx context.Context, accountID, id uuid.UUID, voter approval.Voter, note *string) (approval.Approval, error) {
	a, err := s.payments.Approve(ctx, accountID, id, voter, note)
	var np *approval.NoPersonError
	var ns *payment.NotSignedError
	var unknown *payment.UnknownApprovalError
	switch {
	case err == nil:
		return a, nil
	case errors.As(err, &np):
		return a, s.denied(ctx, &auth.Denied{Op: "approve", Target: "approval:" + approval.PublicID(id), Reason: np.Reason})
	case errors.Is(err, approval.ErrRequester):
		reason := "Requester cannot approve: this payment was requested by this key, a key it was rotated from, the key or person that made or rotated it " +
			"(directly or through other keys), or an admin key made by the same; approve with another admin key, or as a person"
		if audit.Actor(voter.Actor).IsPerson() {
			reason = "Requester cannot approve: you asked for this payment, or an admin key you made did; another person, or an admin key you did not make, must approve it"
		}
		return a, s.denied(ctx, &auth.Denied{Op: "approve", Target: "approval:" + approval.PublicID(id), Reason: reason})
	case errors.Is(err, payment.ErrQueueUnavailable):
		return a, errorf(http.StatusServiceUnavailable, "the payment queue is unavailable; the approval is still pending and nothing was sent, try again")
	case errors.Is(err, payment.ErrNotExecuted):
		return a, errorf(http.StatusServiceUnavailable, "the approval was not executed in time; it is still pending and nothing was sent, try again")
	case errors.As(err, &ns):
		return a, notSigned(ns.Outcome, "the approval is still pending")
	case errors.As(err, &unknown):
		return a, errorf(http.StatusServiceUnavailable, "the approval's outcome could not be established; check GET /approvals/"+approval.PublicID(id)+" before acting again")
	}
	return a, s.fail(ctx, err)
}

// approvalErr maps the approval package's refusals; nil when err is not
// one of them.
func approvalErr(err error) *Error {
	var np *approval.NotPendingError
	var av *approval.AlreadyVotedError
	switch {
	case errors.Is(err, approval.ErrNotFound):
		return errorf(http.StatusNotFound, "approval not found")
	case errors.As(err, &np):
		return errorf(http.StatusConflict, np.Error())
	case errors.As(err, &av):
		return &Error{status: http.StatusConflict, Message: av.Error(), cause: av}
	}
	return nil
}
