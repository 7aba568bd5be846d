package webhook

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentwallet/agentwallet/internal/money"

	"github.com/google/uuid"
)

// Slack action ids of the approval buttons.
const (
	SlackApprove = "approve"
	SlackReject  = "reject"
)

// slackButtonValue is what a button carries back: the approval, the
// endpoint whose message it is (its approver list applies), and the
// endpoint's Slack token, which only messages posted to that endpoint
// carry: a valid Slack signature proves the click came through our Slack
// app, the token that it came from this endpoint's channel, not a message
// another customer forged in theirs.
type slackButtonValue struct {
	ApprovalID string `json:"approval_id"`
	EndpointID string `json:"endpoint_id"`
	Token      string `json:"token"`
}

// slackEscape escapes the three characters Slack's mrkdwn reserves, so a
// memo or label cannot inject mentions or links.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Block Kit's limits on a section's text and on each of its fields (Slack
// refuses the whole message past one). A section also has at most ten
// fields: an approval message has at most six.
const (
	slackMaxText  = 3000
	slackMaxField = 2000
)

// slackClip bounds s (already escaped) to limit bytes, "…" included when
// it is cut. Bytes are never fewer than Slack's characters, however it
// counts them. The cut falls on a rune's start and before an entity
// (&amp;) or a mention or link (<…>) it would split, so what is left reads
// as what the service wrote.
func slackClip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const more = "…"
	cut := max(0, limit-len(more))
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	kept := s[:cut]
	if i := strings.LastIndexByte(kept, '&'); i >= 0 && !strings.Contains(kept[i:], ";") {
		kept = kept[:i]
	}
	if i := strings.LastIndexByte(kept, '<'); i >= 0 && !strings.Contains(kept[i:], ">") {
		kept = kept[:i]
	}
	return kept + more
}

// SlackBody is the Slack message for an event: for approval.pending a
// Block Kit message with Approve and Reject buttons; for other kinds a
// plain section. `text` is the notification fallback.
//
// The section's mrkdwn text carries only what the service wrote (amounts,
// addresses, signatures, reasons, actor ids). What people and agents wrote
// (the agent's label, the memo) is each in its own
// plain_text field, where Slack renders no markup, mention or link, so it
// cannot forge a line of the message.
//
// dashboard (the dashboard's origin, "" for none) links the approval's own
// page from an approval.pending message.
func SlackBody(ev *Event, endpointID uuid.UUID, token, dashboard string) ([]byte, error) {
	return slackBody(ev, endpointID, token, dashboard, "")
}

// SlackPendingBody is the message of an approval still pending after a
// vote, for a click's response_url: the approval.pending message of data
// (the event's fields) with its buttons, so the next person can approve,
// and status (what the service says of the votes so far, e.g. "1 of 2
// approvals: <@U1>") below its first line.
func SlackPendingBody(data map[string]any, endpointID uuid.UUID, token, dashboard, status string) ([]byte, error) {
	ev, err := NewEvent(uuid.Nil, time.Now(), KindApprovalPending, data)
	if err != nil {
		return nil, err
	}
	return slackBody(&ev, endpointID, token, dashboard, status)
}

// SlackActor is an actor as a Slack message names it: a Slack member as a
// mention, anyone else by their id (escaped).
func SlackActor(actor string) string {
	if id, ok := strings.CutPrefix(actor, "slack:"); ok && id != "" && !strings.ContainsAny(id, "<>&|") {
		return "<@" + id + ">"
	}
	return slackEscape(actor)
}

// slackQuorum is "n of m approvals" when an approval needs several
// people; "" otherwise.
func slackQuorum(d map[string]any) string {
	needed, _ := strconv.Atoi(fmt.Sprint(d["approvals_needed"]))
	if needed <= 1 {
		return ""
	}
	votes, _ := d["approvals"].([]any)
	line := fmt.Sprintf("%d of %d approvals", len(votes), needed)
	var by []string
	for _, v := range votes {
		if m, ok := v.(map[string]any); ok {
			by = append(by, SlackActor(fmt.Sprint(m["by"])))
		}
	}
	if len(by) > 0 {
		line += ": " + strings.Join(by, ", ")
	}
	return line
}

func slackBody(ev *Event, endpointID uuid.UUID, token, dashboard, status string) ([]byte, error) {
	var d map[string]any
	dec := json.NewDecoder(bytes.NewReader(ev.Data))
	dec.UseNumber() // amounts print as sent: 1000000, not 1e+06
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("event %s data: %w", ev.ID, err)
	}
	raw := func(k string) string {
		if v, ok := d[k]; ok && v != nil {
			return fmt.Sprint(v)
		}
		return ""
	}
	str := func(k string) string { return slackEscape(raw(k)) }
	// The asset's symbol (events before other assets name none: USDC).
	amount := str("amount") + " " + slackEscape(strings.ToUpper(cmp.Or(raw("asset"), "USDC")))
	var text string
	switch ev.Kind {
	case KindApprovalPending:
		text = fmt.Sprintf("Approval needed: %s to %s", amount, str("to"))
		if q := slackQuorum(d); q != "" && status == "" {
			status = q
		}
	case KindApprovalVote:
		text = fmt.Sprintf("Approved by %s: %s to %s; %s, waiting for the next person", SlackActor(raw("by")), amount, str("to"), slackQuorum(d))
	case KindApprovalApproved:
		text = fmt.Sprintf("Approved and sent: %s to %s (%s)", amount, str("to"), str("signature"))
		if q := slackQuorum(d); q != "" {
			text += " after " + q
		}
	case KindApprovalRejected:
		text = fmt.Sprintf("Rejected by %s: %s to %s", str("rejected_by"), amount, str("to"))
	case KindApprovalExpired:
		text = fmt.Sprintf("Expired without a decision: %s to %s", amount, str("to"))
	case KindTxSent:
		text = fmt.Sprintf("Sent: %s to %s (%s)", amount, str("to"), str("signature"))
	case KindUnexplainedOutflow:
		// A mint's permanent delegate (delegate) can move a holder's tokens
		// without the wallet's key: the alarm says so, as the remedy differs.
		by := ""
		if d := str("delegate"); d != "" {
			by = " by the mint's permanent delegate " + d
		}
		text = fmt.Sprintf("Money left a wallet without the service: %s %s to %s%s (%s); freeze the wallet and move its funds if this was not you", str("amount"), strings.ToUpper(str("asset")), str("to"), by, str("signature"))
	case KindReceiveFailed:
		text = fmt.Sprintf("Deposit dropped by a fork: %s %s from %s (%s) never arrived", str("amount"), strings.ToUpper(str("asset")), str("from"), str("signature"))
	case KindBalanceMismatch:
		text = fmt.Sprintf("Balance differs from the ledger: the chain holds %s %s, the ledger %s (%s); money moved in a way the service did not see", str("chain"), strings.ToUpper(str("asset")), str("ledger"), str("difference"))
	case KindTxReceived:
		text = fmt.Sprintf("Received: %s %s from %s (%s)", str("amount"), strings.ToUpper(str("asset")), str("from"), str("signature"))
	case KindTxFailed:
		text = fmt.Sprintf("Failed after it was sent (%s): %s to %s (%s); nothing was spent", str("reason"), amount, str("to"), str("signature"))
	case KindX402Expired:
		text = fmt.Sprintf("x402 payment ended unsettled (%s): %s to %s for %s; nothing was spent", str("reason"), amount, str("pay_to"), str("resource"))
	case KindMPPExpired:
		text = fmt.Sprintf("MPP payment ended unsettled (%s): %s to %s for %s; nothing was spent", str("reason"), amount, str("pay_to"), str("resource"))
	case KindTxBlocked:
		text = fmt.Sprintf("Blocked (%s): %s to %s", str("reason"), amount, str("to"))
	case KindUserAdded:
		text = fmt.Sprintf("New %s of the account: %s, added by %s", str("role"), str("address"), SlackActor(raw("added_by")))
	default:
		text = fmt.Sprintf("%s (%s)", ev.Kind, PublicEventID(ev.ID))
	}
	section := map[string]any{"type": "section"}
	shown := text
	if status != "" {
		shown += "\n" + status
	}
	link := ""
	if ev.Kind == KindApprovalPending && dashboard != "" {
		link = fmt.Sprintf("\n<%s/dashboard/approvals/%s|Open it in the dashboard>", dashboard, url.PathEscape(str("approval_id")))
	}
	// The link is the service's own and short: what gives way to the
	// limit is the text before it (a resource URL can be long).
	section["text"] = map[string]any{"type": "mrkdwn", "text": slackClip(shown, slackMaxText-len(link)) + link}
	var fields []any
	field := func(text string) {
		fields = append(fields, map[string]any{"type": "plain_text", "emoji": false, "text": slackClip(text, slackMaxField)})
	}
	buys := "Buys (x402)"
	if raw("kind") == "mpp" {
		buys = "Buys (MPP)"
	}
	for _, f := range []struct{ key, name string }{{"agent_label", "Agent"}, {"memo", "Memo"}, {"resource", buys}, {"description", "Seller says"}, {"realm", "Seller says it is"}} {
		if v := raw(f.key); v != "" {
			// Slack reads &, < and > as entities in every text object.
			field(f.name + ": " + slackEscape(v))
		}
	}
	// An MPP charge's further recipients, one line each in one field (up
	// to mpp.MaxSplits of them beside five fields would pass Slack's ten):
	// the approver sees where every part of the amount goes.
	if splits, ok := d["splits"].([]any); ok && len(splits) > 0 {
		lines := make([]string, len(splits))
		for i, sp := range splits {
			m, _ := sp.(map[string]any)
			micros, _ := strconv.ParseInt(fmt.Sprint(m["amount_micros"]), 10, 64)
			lines[i] = fmt.Sprintf("Also to %s: %s %s", slackEscape(fmt.Sprint(m["to"])), money.Quantity(micros), slackEscape(strings.ToUpper(cmp.Or(raw("asset"), "USDC"))))
		}
		field(strings.Join(lines, "\n"))
	}
	if len(fields) > 0 {
		section["fields"] = fields
	}
	blocks := []any{section}
	if ev.Kind == KindApprovalPending {
		v, _ := json.Marshal(slackButtonValue{ApprovalID: fmt.Sprint(d["approval_id"]), EndpointID: endpointID.String(), Token: token})
		button := func(id, label, style string) map[string]any {
			return map[string]any{"type": "button", "action_id": id, "style": style, "value": string(v),
				"text": map[string]any{"type": "plain_text", "text": label}}
		}
		blocks = append(blocks, map[string]any{"type": "actions", "block_id": "approval",
			"elements": []any{button(SlackApprove, "Approve", "primary"), button(SlackReject, "Reject", "danger")}})
	}
	// The fallback (notifications) is the service's own line only.
	return json.Marshal(map[string]any{"text": text, "blocks": blocks})
}

// SlackWindow is how old a Slack request may be.
const SlackWindow = 5 * time.Minute

// ErrSlackSignature refuses a request Slack did not sign, or signed too
// long ago.
var ErrSlackSignature = errors.New("invalid Slack signature")

// VerifySlack checks X-Slack-Signature (v0: hex HMAC-SHA256 of
// "v0:<timestamp>:<body>" with the app's signing secret) and that the
// timestamp is within SlackWindow of now.
func VerifySlack(signingSecret, timestamp, signature string, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || signingSecret == "" {
		return ErrSlackSignature
	}
	if age := now.Sub(time.Unix(ts, 0)); age > SlackWindow || age < -SlackWindow {
		return ErrSlackSignature
	}
	m := hmac.New(sha256.New, []byte(signingSecret))
	m.Write([]byte("v0:" + timestamp + ":"))
	m.Write(body)
	want := "v0=" + hex.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(signature)) {
		return ErrSlackSignature
	}
	return nil
}

// SlackClick is an approval button press.
type SlackClick struct {
	UserID      string
	TeamID      string // the clicker's Slack workspace
	Action      string // SlackApprove or SlackReject
	ApprovalID  string // ap_…
	EndpointID  uuid.UUID
	Token       string // must equal the endpoint's SlackToken
	ResponseURL string
}

// ParseSlackClick reads the form-encoded interaction body Slack posts.
func ParseSlackClick(body []byte) (SlackClick, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return SlackClick{}, fmt.Errorf("interaction body: %w", err)
	}
	var p struct {
		Type string `json:"type"`
		User struct {
			ID     string `json:"id"`
			TeamID string `json:"team_id"`
		} `json:"user"`
		Team *struct {
			ID string `json:"id"`
		} `json:"team"`
		Actions []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"actions"`
		ResponseURL string `json:"response_url"`
	}
	if err := json.Unmarshal([]byte(form.Get("payload")), &p); err != nil {
		return SlackClick{}, fmt.Errorf("interaction payload: %w", err)
	}
	if p.Type != "block_actions" || len(p.Actions) != 1 || p.User.ID == "" {
		return SlackClick{}, errors.New("interaction is not one button press")
	}
	team := p.User.TeamID // an org-wide app (Enterprise Grid) may send no team
	if p.Team != nil && p.Team.ID != "" {
		team = p.Team.ID
	}
	if team == "" {
		return SlackClick{}, errors.New("interaction names no Slack workspace")
	}
	a := p.Actions[0]
	if a.ActionID != SlackApprove && a.ActionID != SlackReject {
		return SlackClick{}, fmt.Errorf("unknown action %q", a.ActionID)
	}
	var v slackButtonValue
	if err := json.Unmarshal([]byte(a.Value), &v); err != nil {
		return SlackClick{}, fmt.Errorf("button value: %w", err)
	}
	ep, err := uuid.Parse(v.EndpointID)
	if err != nil {
		return SlackClick{}, fmt.Errorf("button value: %w", err)
	}
	return SlackClick{UserID: p.User.ID, TeamID: team, Action: a.ActionID, ApprovalID: v.ApprovalID, EndpointID: ep, Token: v.Token, ResponseURL: p.ResponseURL}, nil
}
