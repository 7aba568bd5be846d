package webhook_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/webhook"
)

// Slack's published example request verifies; a changed byte, another
// secret or a stale timestamp does not.
func TestVerifySlack(t *testing.T) {
	t.Parallel()
	const (
		secret = "8f742231b10e8888abcd99yyyzzz85a5"
		ts     = "1531420618"
		body   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
		sig    = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
	)
	at := time.Unix(1531420618, 0).Add(time.Minute)
	if err := webhook.VerifySlack(secret, ts, sig, []byte(body), at); err != nil {
		t.Fatalf("Slack's example: %v", err)
	}
	for name, c := range map[string]struct {
		secret, ts, sig, body string
		at                    time.Time
	}{
		"changed body":  {secret, ts, sig, body + "x", at},
		"other secret":  {"x" + secret, ts, sig, body, at},
		"stale":         {secret, ts, sig, body, at.Add(5 * time.Minute)},
		"future":        {secret, ts, sig, body, time.Unix(1531420618, 0).Add(-6 * time.Minute)},
		"no timestamp":  {secret, "", sig, body, at},
		"no secret set": {"", ts, sig, body, at},
	} {
		if err := webhook.VerifySlack(c.secret, c.ts, c.sig, []byte(c.body), c.at); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}

type textObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// The approval.pending message carries buttons whose click parses back to
// the approval and the endpoint; user text is escaped, in plain_text.
func TestSlackMessageAndClick(t *testing.T) {
	t.Parallel()
	ep := uuid.New()
	ev := webhook.Event{ID: uuid.New(), Kind: webhook.KindApprovalPending,
		Data: json.RawMessage(`{"approval_id":"ap_1","wallet_id":"w","agent_label":"bot <!channel>","amount":1000000,"to":"9WzD","memo":"a&b"}`)}
	body, err := webhook.SlackBody(&ev, ep, "tok", "https://wallet.example.com")
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type     string       `json:"type"`
			Text     textObject   `json:"text"`
			Fields   []textObject `json:"fields"`
			Elements []struct {
				ActionID string `json:"action_id"`
				Value    string `json:"value"`
			} `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Text != "Approval needed: 1000000 USDC to 9WzD" {
		t.Fatalf("text %q", msg.Text)
	}
	// The label and memo are escaped plain_text fields; the section's
	// mrkdwn is the service's own text and the dashboard link.
	if s := msg.Blocks[0]; s.Text.Type != "mrkdwn" || !strings.Contains(s.Text.Text, "<https://wallet.example.com/dashboard/approvals/ap_1|Open it in the dashboard>") ||
		strings.Contains(s.Text.Text, "bot") || len(s.Fields) != 2 || s.Fields[0] != (textObject{"plain_text", "Agent: bot &lt;!channel&gt;"}) ||
		s.Fields[1] != (textObject{"plain_text", "Memo: a&amp;b"}) {
		t.Fatalf("section %+v", s)
	}
	if len(msg.Blocks) != 2 || msg.Blocks[1].Type != "actions" || len(msg.Blocks[1].Elements) != 2 {
		t.Fatalf("blocks %s", body)
	}
	b := msg.Blocks[1].Elements[0]
	press := func(user, team map[string]any) []byte {
		p := map[string]any{"type": "block_actions", "user": user,
			"actions": []any{map[string]any{"action_id": b.ActionID, "value": b.Value}}, "response_url": "https://hooks.slack.com/actions/x"}
		if team != nil {
			p["team"] = team
		}
		payload, _ := json.Marshal(p)
		return []byte("payload=" + url.QueryEscape(string(payload)))
	}
	click, err := webhook.ParseSlackClick(press(map[string]any{"id": "U123", "team_id": "T0USER"}, map[string]any{"id": "T0TEAM"}))
	if err != nil || click.Action != webhook.SlackApprove || click.ApprovalID != "ap_1" || click.EndpointID != ep || click.UserID != "U123" ||
		click.Token != "tok" || click.TeamID != "T0TEAM" {
		t.Fatalf("click %+v %v", click, err)
	}
	// An org-wide app's click may carry the workspace on the user only.
	if click, err := webhook.ParseSlackClick(press(map[string]any{"id": "U123", "team_id": "T0USER"}, nil)); err != nil || click.TeamID != "T0USER" {
		t.Fatalf("click without team %+v %v", click, err)
	}
	for _, bad := range []string{"", "payload=%7B", "payload=" + url.QueryEscape(`{"type":"view_submission"}`), string(press(map[string]any{"id": "U123"}, nil))} {
		if _, err := webhook.ParseSlackClick([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A message names the asset paid; an event made before other assets
// names none and reads USDC.
func TestSlackMessage_NamesTheAsset(t *testing.T) {
	t.Parallel()
	for data, want := range map[string]string{
		`{"approval_id":"ap_1","amount":2.5,"asset":"PYUSD","to":"9WzD"}`: "Approval needed: 2.5 PYUSD to 9WzD",
		`{"approval_id":"ap_1","amount":2.5,"asset":"EURC","to":"9WzD"}`:  "Approval needed: 2.5 EURC to 9WzD",
		`{"approval_id":"ap_1","amount":2.5,"to":"9WzD"}`:                 "Approval needed: 2.5 USDC to 9WzD",
	} {
		slackTextIs(t, webhook.KindApprovalPending, data, want)
	}
}

// An unexplained outflow names its asset, and the mint's permanent
// delegate when the delegate moved the money rather than the wallet's key.
func TestSlackMessage_AnOutflowNamesItsAssetAndDelegate(t *testing.T) {
	t.Parallel()
	for data, want := range map[string]string{
		`{"amount":3,"asset":"pyusd","to":"9WzD","signature":"5x"}`:                   "Money left a wallet without the service: 3 PYUSD to 9WzD (5x); freeze the wallet and move its funds if this was not you",
		`{"amount":3,"asset":"pyusd","to":"9WzD","signature":"5x","delegate":"B34b"}`: "Money left a wallet without the service: 3 PYUSD to 9WzD by the mint's permanent delegate B34b (5x); freeze the wallet and move its funds if this was not you",
	} {
		slackTextIs(t, webhook.KindUnexplainedOutflow, data, want)
	}
}

// slackTextIs checks the text of the Slack message of an event of kind
// with data.
func slackTextIs(t *testing.T, kind, data, want string) {
	t.Helper()
	ev := webhook.Event{ID: uuid.New(), Kind: kind, Data: json.RawMessage(data)}
	body, err := webhook.SlackBody(&ev, uuid.New(), "tok", "https://wallet.example.com")
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Text != want {
		t.Errorf("%s: text %q (%v), want %q", data, msg.Text, err, want)
	}
}

// An MPP charge's approval message names what it buys, the seller's realm
// and every further recipient with its share, so the approver sees where
// each part of the amount goes.
func TestSlackMessage_ShowsAnMPPChargesSplits(t *testing.T) {
	t.Parallel()
	data := `{"approval_id":"ap_1","amount":2,"asset":"USDC","to":"9WzD","kind":"mpp","resource":"https://s.example/w","realm":"s.example",` +
		`"splits":[{"to":"Fee1","amount_micros":250000},{"to":"Ref2","amount_micros":50000}]}`
	ev := webhook.Event{ID: uuid.New(), Kind: webhook.KindApprovalPending, Data: json.RawMessage(data)}
	body, err := webhook.SlackBody(&ev, uuid.New(), "tok", "https://wallet.example.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Buys (MPP): https://s.example/w", "Seller says it is: s.example", "Also to Fee1: 0.25 USDC", "Also to Ref2: 0.05 USDC"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %q in %s", want, body)
		}
	}
}

// slackWithinLimits reports every place where a Slack message passes
// Block Kit's limits (Slack refuses the whole message past one): a
// section's text 3000 characters, its fields 10 and each field's text
// 2000, a button's value 2000 and its label 75. Lengths are in bytes,
// never fewer than Slack's characters.
func slackWithinLimits(body []byte) []string {
	var m struct {
		Blocks []struct {
			Type     string
			Text     *textObject
			Fields   []textObject
			Elements []struct {
				Value string
				Text  textObject
			}
		}
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return []string{err.Error()}
	}
	var over []string
	for i, b := range m.Blocks {
		if b.Text != nil && len(b.Text.Text) > 3000 {
			over = append(over, fmt.Sprintf("block %d: text of %d", i, len(b.Text.Text)))
		}
		if len(b.Fields) > 10 {
			over = append(over, fmt.Sprintf("block %d: %d fields", i, len(b.Fields)))
		}
		for j, f := range b.Fields {
			if len(f.Text) > 2000 {
				over = append(over, fmt.Sprintf("block %d: field %d of %d", i, j, len(f.Text)))
			}
		}
		for j, e := range b.Elements {
			if len(e.Value) > 2000 || len(e.Text.Text) > 75 {
				over = append(over, fmt.Sprintf("block %d: element %d value of %d, label of %d", i, j, len(e.Value), len(e.Text.Text)))
			}
		}
	}
	return over
}

// An approval message with every field at its longest (a resource URL of
// 2048 characters, a 500-character description, memo and label), an MPP
// charge's eight split recipients and a 3000-character realm from an
// event recorded before realms were bounded stays within Slack's limits,
// whether first posted or replaced after a vote: every recipient is still
// listed, and what is cut ends in "…", never inside an entity.
func TestSlackMessage_StaysWithinBlockKitLimits(t *testing.T) {
	t.Parallel()
	splits := make([]map[string]any, 8)
	for i := range splits {
		splits[i] = map[string]any{"to": fmt.Sprintf("Recipient%d%s", i, strings.Repeat("x", 34)), "amount_micros": 10_000 * (i + 1)}
	}
	data := map[string]any{
		"approval_id": "ap_1", "amount": 2, "asset": "USDC", "to": "9WzD", "kind": "mpp",
		"agent_label": strings.Repeat("é", 100), "memo": strings.Repeat("<&>", 67),
		"resource":    "https://s.example/" + strings.Repeat("&", 2030),
		"description": strings.Repeat("a&b ", 125),
		"realm":       strings.Repeat("r", 2999) + "&",
		"splits":      splits, "approvals_needed": 2,
	}
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	ev := webhook.Event{ID: uuid.New(), Kind: webhook.KindApprovalPending, Data: raw}
	first, err := webhook.SlackBody(&ev, uuid.New(), "tok", "https://wallet.example.com")
	if err != nil {
		t.Fatal(err)
	}
	status := "1 of 2 approvals: " + strings.TrimSuffix(strings.Repeat("<@U0APPROVER>, ", 250), ", ")
	after, err := webhook.SlackPendingBody(data, uuid.New(), "tok", "https://wallet.example.com", status)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"posted": first, "after a vote": after} {
		if over := slackWithinLimits(body); len(over) > 0 {
			t.Errorf("%s: over Slack's limits: %v", name, over)
		}
		var m struct {
			Blocks []struct {
				Text   textObject
				Fields []textObject
			}
		}
		if err := json.Unmarshal(body, &m); err != nil || len(m.Blocks) != 2 {
			t.Fatalf("%s: %s %v", name, body, err)
		}
		// Escaped text: every & starts an entity, every < a mention.
		cutInside := func(s string) bool {
			i, j := strings.LastIndexByte(s, '&'), strings.LastIndexByte(s, '<')
			return i >= 0 && !strings.Contains(s[i:], ";") || j >= 0 && !strings.Contains(s[j:], ">")
		}
		section := m.Blocks[0]
		text, link, ok := strings.Cut(section.Text.Text, "\n<https://wallet.example.com/dashboard/approvals/ap_1|")
		if !ok || link != "Open it in the dashboard>" {
			t.Errorf("%s: the dashboard link was cut: %q", name, section.Text.Text)
		}
		if name == "after a vote" && (!strings.HasSuffix(text, "…") || cutInside(text)) {
			t.Errorf("%s: the text's cut: …%q", name, text[len(text)-30:])
		}
		var all []string
		for _, f := range section.Fields {
			all = append(all, f.Text)
			if cutInside(f.Text) {
				t.Errorf("%s: a field cut inside an entity: …%q", name, f.Text[len(f.Text)-20:])
			}
		}
		text = strings.Join(all, "\n")
		for i, sp := range splits {
			if want := fmt.Sprintf("Also to %s: 0.0%d USDC", sp["to"], i+1); !strings.Contains(text, want) {
				t.Errorf("%s: no %q in %q", name, want, text)
			}
		}
		if !strings.Contains(text, "Seller says it is: rrrr") || !strings.Contains(text, "Buys (MPP): https://s.example/&amp;") {
			t.Errorf("%s: fields %q", name, text)
		}
	}
}
