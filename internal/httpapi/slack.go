package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// SlackInteractionsPath receives the Slack app's button clicks (its
// interactivity request URL).
const SlackInteractionsPath = "/integrations/slack/interactions"

// slackActTimeout bounds acting on a click: the approve's wait and the
// message update.
const slackActTimeout = 40 * time.Second

// slackInteraction verifies a click (X-Slack-Signature with the app's
// signing secret, at most 5 minutes old: else 401 and nothing changes),
// acknowledges it at once (Slack wants an answer within 3 s), then acts on
// the approval as slack:<user id> through the same path as the API and
// replaces the message through response_url with the outcome.
func (s *server) slackInteraction(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d KiB", MaxBodyBytes>>10))
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "could not read request body")
		return
	}
	signature := r.Header.Get("X-Slack-Signature")
	err = webhook.VerifySlack(s.SlackSigningSecret, r.Header.Get("X-Slack-Request-Timestamp"), signature, body, time.Now())
	if err != nil {
		writeError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	first, answered, err := s.firstClick(r.Context(), signature)
	if err != nil {
		s.log.WarnContext(r.Context(), "record a Slack click", "err", err)
		writeError(w, http.StatusServiceUnavailable, "the service could not check this click; try again")
		return
	}
	if !first {
		// A replay of a request already taken (Slack's retry, or a copy
		// replayed within the window): the first one acted, this one
		// gets its answer and does nothing.
		if answered/100 == 2 || answered == 0 {
			w.WriteHeader(http.StatusOK)
		} else {
			writeError(w, answered, "this Slack request was already answered")
		}
		return
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	w = rec
	defer s.answeredClick(signature, rec)
	click, err := webhook.ParseSlackClick(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "not an approval button press: "+err.Error())
		return
	}
	if !s.slackResponseURLAllowed(click.ResponseURL) {
		writeError(w, http.StatusBadRequest, "response_url is not a Slack address")
		return
	}
	ep, err := s.slackEndpoint(r.Context(), click)
	switch {
	case errors.Is(err, webhook.ErrSlackTeam):
		writeError(w, http.StatusUnauthorized, "Unauthorized")
		return
	case err != nil && !errors.Is(err, webhook.ErrEndpointNotFound):
		s.log.WarnContext(r.Context(), "read Slack endpoint", "err", err)
		writeError(w, http.StatusServiceUnavailable, "the service could not check this click; try again")
		return
	}
	w.WriteHeader(http.StatusOK)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), slackActTimeout)
		defer cancel()
		msg := s.slackAct(ctx, ep, click)
		if err := s.slackRespond(ctx, click.ResponseURL, msg); err != nil {
			s.log.WarnContext(ctx, "update Slack message", "approval_id", click.ApprovalID, "err", err)
		}
	}()
}

// slackClickTTL is how long a click is remembered: its signature is
// accepted while its timestamp is within webhook.SlackWindow of now, at
// most twice the window after it is first seen.
const slackClickTTL = 2 * webhook.SlackWindow

// firstClick records a signed click (its signature stands for its
// timestamp and body) and reports whether it is the first time it is seen;
// if not, answered is the status the first one got (0 while it is being
// answered). A replay must not act, audit or update the message twice.
func (s *server) firstClick(ctx context.Context, signature string) (first bool, answered int, err error) {
	if s.Redis == nil {
		return true, 0, nil
	}
	key := slackClickKey(signature)
	first, err = s.Redis.SetNX(ctx, key, 0, slackClickTTL).Result()
	if err != nil || first {
		return first, 0, err
	}
	answered, err = s.Redis.Get(ctx, key).Int()
	if errors.Is(err, redis.Nil) {
		return false, 0, nil
	}
	return false, answered, err
}

// answeredClick records the status a first click got, for its replays; a
// 503 (the service could not check it) is forgotten so a retry is served.
func (s *server) answeredClick(signature string, rec *statusRecorder) {
	if s.Redis == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var err error
	if rec.status == http.StatusServiceUnavailable {
		err = s.Redis.Del(ctx, slackClickKey(signature)).Err()
	} else {
		err = s.Redis.SetArgs(ctx, slackClickKey(signature), rec.status, redis.SetArgs{KeepTTL: true, Mode: "XX"}).Err()
	}
	if err != nil {
		s.log.WarnContext(ctx, "record a Slack click's answer", "err", err)
	}
}

func slackClickKey(signature string) string { return "slack:click:" + signature }

// slackResponseURLAllowed keeps the message update on Slack's own host,
// always (tests name their receivers with SlackResponseURLPrefix): a
// response_url elsewhere would make the service POST where the clicker
// says.
func (s *server) slackResponseURLAllowed(u string) bool {
	return strings.HasPrefix(u, cmp.Or(s.SlackResponseURLPrefix, "https://hooks.slack.com/"))
}

// slackMessage replaces the original message, or, when replace is false,
// is shown only to the clicker.
type slackMessage struct {
	Text    string
	Replace bool
	// Body, when set, is the whole replacement message (text and
	// blocks, webhook.SlackPendingBody): an approval still pending keeps
	// its buttons.
	Body []byte
}

// slackEndpoint is the endpoint whose button was clicked:
// ErrEndpointNotFound when none carries the button's token (it was
// deleted, or its URL changed since the message), and ErrSlackTeam when
// the click came from another workspace than the endpoint's first
// accepted click (that refusal is audited in the endpoint's account).
func (s *server) slackEndpoint(ctx context.Context, c webhook.SlackClick) (*webhook.Endpoint, error) {
	ep, err := webhook.SlackEndpoint(ctx, s.DB, c.EndpointID)
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(ep.SlackToken), []byte(c.Token)) != 1 {
		return nil, webhook.ErrEndpointNotFound
	}
	err = webhook.BindSlackTeam(ctx, s.DB, ep.ID, c.TeamID)
	if errors.Is(err, webhook.ErrSlackTeam) {
		bound := ""
		if ep.SlackTeamID != nil {
			bound = *ep.SlackTeamID
		}
		s.log.WarnContext(ctx, "Slack click from another workspace", "endpoint_id", ep.ID, "team_id", c.TeamID)
		if aerr := audit.Append(ctx, s.DB, audit.Entry{AccountID: ep.AccountID, At: time.Now(), Actor: audit.Actor("slack:" + c.UserID), Action: audit.ActionPermissionDenied, Target: "webhook_endpoint:" + ep.ID.String(), Details: map[string]any{"operation": "slack-interaction", "approval_id": c.ApprovalID,
			"team_id": c.TeamID, "bound_team_id": bound, "reason": webhook.ErrSlackTeam.Error()}}); aerr != nil {
			s.log.ErrorContext(ctx, "audit a Slack refusal", "err", aerr)
		}
	}
	if err != nil {
		return nil, err
	}
	return &ep, nil
}

// slackAct applies a click on ep's button (nil: no endpoint carries its
// token) and says how it went.
func (s *server) slackAct(ctx context.Context, ep *webhook.Endpoint, c webhook.SlackClick) slackMessage {
	if ep == nil {
		return slackMessage{Text: "This approval channel is no longer configured."}
	}
	if len(ep.SlackApprovers) > 0 && !slices.Contains(ep.SlackApprovers, c.UserID) {
		return slackMessage{Text: "You are not one of the approvers of this channel; nothing was changed."}
	}
	id, ok := approval.ParseID(c.ApprovalID)
	if !ok {
		return slackMessage{Text: "Unknown approval."}
	}
	actor := "slack:" + c.UserID
	var a approval.Approval
	var err error
	if c.Action == webhook.SlackApprove {
		var voter approval.Voter
		if voter, err = s.slackVoter(ctx, ep.AccountID, c.UserID); err == nil {
			a, err = s.approveAs(ctx, ep.AccountID, id, voter, nil)
		}
		var av *approval.AlreadyVotedError
		if errors.As(err, &av) {
			// A second click of the same person: the message shows
			// where the approval stands, nothing changes.
			if cur, gerr := approval.Get(ctx, s.DB, ep.AccountID, id); gerr == nil && cur.Status == approval.Pending {
				return s.slackPending(ep, &cur, "You already approved it; it waits for another person.")
			}
		}
	} else {
		a, err = approval.Reject(ctx, s.DB, ep.AccountID, id, actor, nil)
		err = s.failQuiet(ctx, err)
	}
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			return slackMessage{Text: "Nothing changed: " + ae.Message}
		}
		return slackMessage{Text: "Nothing changed: the service could not act on it; try again."}
	}
	who := "<@" + c.UserID + ">"
	amount := a.Amount
	amt, _ := amount.MarshalJSON()
	line := fmt.Sprintf("%s %s to %s", amt, a.Asset, a.To)
	quorum := ""
	if a.Needed > 1 {
		quorum = fmt.Sprintf(" (%d of %d approvals)", len(a.Votes), a.Needed)
	}
	switch {
	case a.Status == approval.Pending:
		// A vote answers the approval's own row: what a payment to a
		// seller buys, and from whom, comes with a read.
		if cur, err := approval.Get(ctx, s.DB, ep.AccountID, id); err == nil {
			a.X402, a.Resource, a.Description, a.Protocol, a.Realm, a.Splits = cur.X402, cur.Resource, cur.Description, cur.Protocol, cur.Realm, cur.Splits
		}
		return s.slackPending(ep, &a, "")
	case a.Status == approval.Sent:
		return slackMessage{Replace: true, Text: fmt.Sprintf("Approved by %s%s and sent: %s (signature %s)", who, quorum, line, *a.Signature)}
	case a.Status == approval.Signing:
		return slackMessage{Replace: true, Text: fmt.Sprintf("Approved by %s%s; signed and being broadcast: %s", who, quorum, line)}
	case a.Status == approval.Rejected && a.Reason != nil:
		return slackMessage{Replace: true, Text: fmt.Sprintf("Approved by %s%s but rejected by the policy check (%s): %s", who, quorum, deref(a.ReasonDetail), line)}
	default:
		return slackMessage{Replace: true, Text: fmt.Sprintf("Rejected by %s: %s", who, line)}
	}
}

// slackVoter is Slack member id of the account as an approver: it counts
// as the user linked to it (users.slack_user_id), whose ancestry it
// carries (the requester rule sees the person behind the click), or, when
// none is, as no person (enough only while one approve suffices).
func (s *server) slackVoter(ctx context.Context, accountID uuid.UUID, id string) (approval.Voter, error) {
	actor := "slack:" + id
	v := approval.Voter{Actor: actor, Ancestry: []string{actor}}
	address, err := auth.SlackPerson(ctx, s.DB, accountID, id)
	if err != nil {
		return v, err
	}
	if address != "" {
		v.Person = auth.UserActorID(address)
		v.Ancestry = append(v.Ancestry, v.Person)
	}
	return v, nil
}

// slackPending is the message of an approval still pending after a vote:
// the approval message again, its buttons kept for the next person, with
// the count and who approved so far, and note (if any) below.
func (s *server) slackPending(ep *webhook.Endpoint, a *approval.Approval, note string) slackMessage {
	// The approval.pending event's fields (payment.decide), so the
	// message reads as the first one did: the asset, and an MPP charge's
	// seller and further recipients.
	data := map[string]any{
		"approval_id": approval.PublicID(a.ID), "wallet_id": a.WalletID, "agent_label": a.AgentLabel,
		"amount": a.Amount, "asset": a.Asset, "to": a.To, "memo": a.Memo,
	}
	if a.X402 {
		data["kind"], data["resource"], data["description"] = cmp.Or(a.Protocol, "x402"), a.Resource, a.Description
		if a.Protocol == payment.ProtocolMPP {
			data["realm"], data["splits"] = a.Realm, a.Splits
		}
	}
	by := make([]string, len(a.Votes))
	for i, v := range a.Votes {
		by[i] = webhook.SlackActor(v.By)
	}
	status := fmt.Sprintf("%d of %d approvals", len(a.Votes), max(1, a.Needed))
	if len(by) > 0 {
		status += ": " + strings.Join(by, ", ")
	}
	if note != "" {
		status += "\n" + note
	}
	body, err := webhook.SlackPendingBody(data, ep.ID, ep.SlackToken, s.DashboardOrigin, status)
	if err != nil {
		return slackMessage{Text: status}
	}
	return slackMessage{Replace: true, Text: status, Body: body}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// failQuiet maps an error like fail, for a caller that is not an HTTP
// handler.
func (s *server) failQuiet(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return s.fail(ctx, err)
}

// slackClient is the client for response_url updates, made once.
func (s *server) slackClient() *http.Client {
	s.slackOnce.Do(func() { s.slackHTTP = webhook.Client(s.SlackResponseURLPrefix != "") })
	return s.slackHTTP
}

// slackRespond posts msg to a click's response_url.
func (s *server) slackRespond(ctx context.Context, responseURL string, m slackMessage) error {
	payload := map[string]any{"text": m.Text, "replace_original": m.Replace}
	if m.Body != nil {
		var msg map[string]any
		if err := json.Unmarshal(m.Body, &msg); err != nil {
			return err
		}
		payload["text"], payload["blocks"] = msg["text"], msg["blocks"]
	}
	if !m.Replace {
		payload["response_type"] = "ephemeral"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // Slack's mentions are <@U…>
	if err := enc.Encode(payload); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, responseURL, &b)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.slackClient().Do(req)
	if err != nil {
		// response_url is a credential of sorts: log its host only.
		return errors.New(webhook.RedactURL(err, responseURL, req.URL))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("response_url answered %d", resp.StatusCode)
	}
	return nil
}
