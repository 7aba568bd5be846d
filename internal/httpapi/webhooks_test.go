package httpapi_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/waitfor"
	"github.com/agentwallet/agentwallet/internal/webhook"
	"github.com/agentwallet/agentwallet/internal/worker"
)

const endpointsPath = "/api/public/v1/webhook-endpoints"

// received is one POST a test receiver got.
type received struct {
	Headers http.Header
	Body    []byte
}

// receiver is a local webhook receiver; answer decides each response
// (nil: 200).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	arrive chan received
	answer func(n int, r received) int
}

func newReceiver(t testing.TB, answer func(n int, r received) int) *receiver {
	rc := &receiver{arrive: make(chan received, 100), answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got := received{Headers: r.Header.Clone(), Body: body}
		rc.mu.Lock()
		rc.got = append(rc.got, got)
		n := len(rc.got)
		rc.mu.Unlock()
		status := 200
		if rc.answer != nil {
			status = rc.answer(n, got)
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "answer %d", n)
		rc.arrive <- got
	}))
	t.Cleanup(rc.Close)
	return rc
}

// any waits for the next POST, whatever it is.
func (rc *receiver) any(t testing.TB) received {
	t.Helper()
	select {
	case r := <-rc.arrive:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("nothing arrived")
	}
	return received{}
}

// next waits for the next POST of kind (others are skipped).
func (rc *receiver) next(t testing.TB, kind string) received {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case r := <-rc.arrive:
			if r.Headers.Get("X-Service-Event") == kind {
				return r
			}
		case <-deadline:
			t.Fatalf("no %s delivery arrived", kind)
		}
	}
}

// deliveries is an endpoint's delivery log, newest first (query may
// filter it, e.g. "?status=failed").
func (e *env) deliveries(key, epID, query string) []map[string]any {
	e.t.Helper()
	status, page := e.do("GET", endpointsPath+"/"+epID+"/deliveries"+query, key, nil)
	if status != 200 {
		e.t.Fatalf("deliveries: %d %v", status, page)
	}
	var out []map[string]any
	for _, d := range page["deliveries"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// waitDelivered waits until the endpoint's one delivery succeeded.
func (e *env) waitDelivered(key, epID string) {
	e.t.Helper()
	waitfor.True(e.t, "the one delivery succeeded", func() bool {
		ds := e.deliveries(key, epID, "")
		return len(ds) == 1 && ds[0]["status"] == "succeeded"
	})
}

func (e *env) createEndpoint(url string, events ...string) (id, secret string) {
	e.t.Helper()
	status, body := e.do("POST", endpointsPath, e.key, map[string]any{"url": url, "events": events})
	if status != http.StatusCreated {
		e.t.Fatalf("create endpoint: %d %v", status, body)
	}
	return body["id"].(string), body["secret"].(string)
}

// verifyWithNode checks a delivery's signatures with @octokit/webhooks-methods
// and standardwebhooks (scripts/webhook-verify).
func verifyWithNode(t testing.TB, secret string, r received) {
	t.Helper()
	headers := map[string]string{}
	for _, h := range []string{"X-Service-Signature", "webhook-id", "webhook-timestamp", "webhook-signature"} {
		headers[h] = r.Headers.Get(h)
	}
	in, _ := json.Marshal(map[string]any{"secret": secret, "body_base64": base64.StdEncoding.EncodeToString(r.Body), "headers": headers})
	cmd := exec.Command("node", "../../scripts/webhook-verify/verify.mjs")
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verifier: %v (%s); run `make deps`", err, out)
	}
	var res struct {
		Octokit, Standard bool
		Error             *string
	}
	if err := json.Unmarshal(out, &res); err != nil || !res.Octokit || !res.Standard {
		t.Fatalf("verification %s (%v)", out, err)
	}
}

// An endpoint receives a webhook.test when saved, then the events it
// subscribed to, each signed so that libraries we did not write verify
// it, with exactly the spec's data fields; the delivery log shows each
// attempt.
func TestWebhookDeliveryEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	rc := newReceiver(t, nil)
	epID, secret := e.createEndpoint(rc.URL+"/hook?token=x", "tx.sent", "tx.blocked")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q", secret)
	}

	test := rc.next(t, "webhook.test")
	verifyWithNode(t, secret, test)
	if got := test.Headers.Get("X-Service-Signature"); got != webhook.Signature(secret, test.Body) {
		t.Fatalf("signature %s", got)
	}

	id, _ := e.agent(map[string]any{"max_tx_usdc": 5}, 10_000_000)
	to := newAddress()
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1.25, "memo": "m"})
	if status != 200 {
		t.Fatalf("send: %d %v", status, body)
	}
	e.settle(eng, body["signature"].(string), payment.TxConfirmed)
	sent := rc.next(t, "tx.sent")
	verifyWithNode(t, secret, sent)
	var env struct {
		Event     string         `json:"event"`
		EventID   string         `json:"event_id"`
		Timestamp string         `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal(sent.Body, &env); err != nil {
		t.Fatal(err)
	}
	if env.Event != "tx.sent" || !strings.HasPrefix(env.EventID, "evt_") || env.EventID != sent.Headers.Get("webhook-id") ||
		fmt.Sprint(env.Data) != fmt.Sprint(map[string]any{"amount": 1.25, "memo": "m", "signature": body["signature"], "to": to, "wallet_id": id}) {
		t.Fatalf("envelope %s", sent.Body)
	}
	if _, err := time.Parse(time.RFC3339Nano, env.Timestamp); err != nil {
		t.Fatalf("timestamp %q", env.Timestamp)
	}
	sentEventID := env.EventID

	// A blocked send: tx.blocked with the spec's fields (memo null).
	e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 6})
	blocked := rc.next(t, "tx.blocked")
	env.Data = nil
	if err := json.Unmarshal(blocked.Body, &env); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(env.Data) != fmt.Sprint(map[string]any{"amount": 6.0, "memo": nil, "reason": "exceeds_max_tx", "to": to, "wallet_id": id}) {
		t.Fatalf("tx.blocked data %v", env.Data)
	}

	// The log: three deliveries, succeeded, each with its attempt.
	var ds []map[string]any
	waitfor.True(t, "three succeeded deliveries", func() bool {
		ds = e.deliveries(e.key, epID, "?status=succeeded")
		return len(ds) == 3
	})
	if ds[0]["event"] != "tx.blocked" || ds[2]["event"] != "webhook.test" {
		t.Fatalf("deliveries %v", ds)
	}
	first := ds[1]
	status, d := e.do("GET", "/api/public/v1/deliveries/"+first["id"].(string), e.key, nil)
	log := d["attempt_log"].([]any)
	if status != 200 || d["status"] != "succeeded" || d["attempts"] != 1.0 || d["event_id"] != sentEventID || d["event"] != "tx.sent" || len(log) != 1 {
		t.Fatalf("delivery %d %v", status, d)
	}
	if a := log[0].(map[string]any); a["status_code"] != 200.0 || a["response_head"] != "answer 2" || a["error"] != nil {
		t.Fatalf("attempt %v", a)
	}
	if sent.Headers.Get("X-Service-Delivery") != first["id"] {
		t.Fatalf("X-Service-Delivery %s, log %s", sent.Headers.Get("X-Service-Delivery"), first["id"])
	}
}

// A receiver that fails twice then answers 200 gets exactly 3 attempts;
// the task layer is asked for the spec's delays (30 s, then 2 min), which
// the test shortens; the log shows all three. A replay is a new delivery
// of the same event_id.
func TestWebhookRetriesAndReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var asked []time.Duration
	e.startWorker(retryFastRecording(&mu, &asked))
	rc := newReceiver(t, func(n int, _ received) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	epID, _ := e.createEndpoint(rc.URL, "tx.sent")
	var ids []string
	for range 3 {
		ids = append(ids, rc.next(t, "webhook.test").Headers.Get("X-Service-Delivery"))
	}
	if ids[0] != ids[1] || ids[1] != ids[2] {
		t.Fatalf("attempts of different deliveries: %v", ids)
	}
	var d map[string]any
	waitfor.True(t, "the delivery succeeded", func() bool {
		_, d = e.do("GET", "/api/public/v1/deliveries/"+ids[0], e.key, nil)
		return d["status"] == "succeeded"
	})
	log := d["attempt_log"].([]any)
	if d["status"] != "succeeded" || d["attempts"] != 3.0 || len(log) != 3 {
		t.Fatalf("delivery %v", d)
	}
	for i, want := range []float64{500, 500, 200} {
		if a := log[i].(map[string]any); a["status_code"] != want || a["n"] != float64(i+1) {
			t.Fatalf("attempt %d: %v", i+1, a)
		}
	}
	mu.Lock()
	if fmt.Sprint(asked) != fmt.Sprint([]time.Duration{30 * time.Second, 2 * time.Minute}) {
		t.Fatalf("retry delays asked %v", asked)
	}
	mu.Unlock()
	select {
	case r := <-rc.arrive:
		t.Fatalf("a 4th POST: %s", r.Body)
	case <-time.After(200 * time.Millisecond):
	}

	status, rep := e.do("POST", "/api/public/v1/deliveries/"+ids[0]+"/replay", e.key, nil)
	if status != http.StatusCreated || rep["id"] == ids[0] || rep["replay_of"] != ids[0] || rep["event_id"] != d["event_id"] {
		t.Fatalf("replay: %d %v", status, rep)
	}
	again := rc.next(t, "webhook.test")
	var env1, env2 map[string]any
	json.Unmarshal(rc.got[0].Body, &env1)
	json.Unmarshal(again.Body, &env2)
	if again.Headers.Get("X-Service-Delivery") != rep["id"] || env2["event_id"] != env1["event_id"] || again.Headers.Get("webhook-id") != env1["event_id"] {
		t.Fatalf("replayed delivery %v / %v", again.Headers, env2)
	}
	_, page := e.do("GET", endpointsPath+"/"+epID+"/deliveries", e.key, nil)
	if n := len(page["deliveries"].([]any)); n != 2 {
		t.Fatalf("%d deliveries", n)
	}
}

// A worker stopped in the middle of a delivery: the event is delivered
// after it restarts (at least once).
func TestWebhookDeliveredAfterWorkerRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := make(chan struct{})
	var once sync.Once
	rc := newReceiver(t, func(n int, _ received) int {
		if n == 1 {
			<-release // hangs until the worker is gone
		}
		return 200
	})
	_, stop := e.startWorker(retryFast, func(o *worker.Options) { o.ShutdownTimeout = 500 * time.Millisecond })
	epID, _ := e.createEndpoint(rc.URL, "tx.sent")
	waitfor.True(t, "the first attempt arrived", func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return len(rc.got) == 1
	})
	stop()
	once.Do(func() { close(release) })
	e.startWorker(retryFast)
	e.waitDelivered(e.key, epID)
	rc.mu.Lock()
	posts := len(rc.got)
	rc.mu.Unlock()
	if posts < 2 {
		t.Fatalf("%d POSTs", posts)
	}
	// Every attempt is logged, the interrupted one too: its handler, cut
	// off by the shutdown, writes its row once its POST returns, which may
	// be after the second attempt's.
	var last string
	waitfor.True(t, "every attempt logged", func() bool {
		_, page := e.do("GET", endpointsPath+"/"+epID+"/deliveries", e.key, nil)
		d := page["deliveries"].([]any)[0].(map[string]any)
		_, full := e.do("GET", "/api/public/v1/deliveries/"+d["id"].(string), e.key, nil)
		log := full["attempt_log"].([]any)
		last = fmt.Sprintf("attempts %v, log %v", d["attempts"], log)
		return float64(len(log)) == d["attempts"] && len(log) >= 2
	})
	t.Log(last)
}

// Endpoint management: validation, reads without the secret, the secret
// stored only sealed, disabled and deleted endpoints get nothing new,
// rotation signs with both secrets, and another account sees 404.
func TestWebhookEndpointManagement(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	rc := newReceiver(t, nil)
	for _, c := range []struct {
		body   any
		status int
		want   string
	}{
		{map[string]any{"events": []string{"tx.sent"}}, 422, "url"},
		{map[string]any{"url": rc.URL}, 422, "events"},
		{map[string]any{"url": "ftp://x", "events": []string{"tx.sent"}}, 422, "url"},
		{map[string]any{"url": "https://u:p@example.com", "events": []string{"tx.sent"}}, 422, "url"},
		{map[string]any{"url": rc.URL, "events": []string{"tx.everything"}}, 422, "events[0]"},
		{map[string]any{"url": rc.URL, "events": []string{"tx.sent", "tx.sent"}}, 422, "events[1]"},
		{map[string]any{"url": rc.URL, "events": []string{}}, 422, "events"},
		{map[string]any{"url": rc.URL, "events": []string{"webhook.test"}}, 422, "events[0]"},
		{map[string]any{"url": rc.URL, "events": []string{"tx.sent"}, "format": "xml"}, 422, "format"},
		{map[string]any{"url": rc.URL, "events": []string{"tx.sent"}, "format": "slack", "slack_approvers": []string{"bob"}}, 422, "slack_approvers[0]"},
		{"{", 400, "malformed JSON"},
	} {
		status, body := e.do("POST", endpointsPath, e.key, c.body)
		wantError(t, status, body, c.status, c.want)
	}

	epID, secret := e.createEndpoint(rc.URL, "tx.sent")
	rc.next(t, "webhook.test")
	status, ep := e.do("GET", endpointsPath+"/"+epID, e.key, nil)
	if status != 200 || ep["secret"] != nil || ep["url"] != rc.URL || ep["enabled"] != true || ep["format"] != "json" {
		t.Fatalf("get: %d %v", status, ep)
	}
	var leaked int
	if err := e.db.QueryRowContext(context.Background(), "SELECT count(*) FROM webhook_endpoints AS w WHERE strpos(w::text, ?) > 0", secret).Scan(&leaked); err != nil || leaked != 0 {
		t.Fatalf("secret stored in the clear (%d, %v)", leaked, err)
	}
	if status, list := e.do("GET", endpointsPath, e.key, nil); status != 200 || len(list["endpoints"].([]any)) != 1 {
		t.Fatalf("list: %v", list)
	}

	// Rotation: both secrets sign for 24 h.
	status, rot := e.do("POST", endpointsPath+"/"+epID+"/rotate-secret", e.key, nil)
	if status != 200 || rot["secret"] == secret || rot["previous_secret_expires_at"] == nil {
		t.Fatalf("rotate: %d %v", status, rot)
	}
	newSecret := rot["secret"].(string)
	id, _ := e.agent(nil, 10_000_000)
	status, sent := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 1})
	if status != 200 {
		t.Fatalf("send: %d %v", status, sent)
	}
	e.settle(eng, sent["signature"].(string), payment.TxConfirmed)
	r := rc.next(t, "tx.sent")
	verifyWithNode(t, newSecret, r)
	verifyWithNode(t, secret, received{Headers: http.Header{
		"X-Service-Signature": {r.Headers.Get("X-Service-Signature-Previous")},
		"Webhook-Id":          {r.Headers.Get("webhook-id")}, "Webhook-Timestamp": {r.Headers.Get("webhook-timestamp")},
		"Webhook-Signature": {r.Headers.Get("webhook-signature")},
	}, Body: r.Body})

	// Disabled: nothing new. Enabled again: a webhook.test.
	status, ep = e.do("PATCH", endpointsPath+"/"+epID, e.key, map[string]any{"enabled": false})
	if status != 200 || ep["enabled"] != false {
		t.Fatalf("disable: %d %v", status, ep)
	}
	status, sent = e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 1})
	if status != 200 {
		t.Fatalf("send: %d %v", status, sent)
	}
	e.settle(eng, sent["signature"].(string), payment.TxConfirmed)
	if status, _ := e.do("PATCH", endpointsPath+"/"+epID, e.key, map[string]any{"enabled": true, "events": []string{"tx.blocked"}}); status != 200 {
		t.Fatal("enable")
	}
	rc.next(t, "webhook.test")

	// Deleted: 404 and nothing new; the log stays readable.
	if status, _ := e.do("DELETE", endpointsPath+"/"+epID, e.key, nil); status != http.StatusNoContent {
		t.Fatalf("delete: %d", status)
	}
	if status, body := e.do("GET", endpointsPath+"/"+epID, e.key, nil); status != 404 {
		t.Fatalf("get deleted: %d %v", status, body)
	}
	e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 500}) // blocked
	select {
	case r := <-rc.arrive:
		t.Fatalf("a deleted or disabled endpoint received %s", r.Headers.Get("X-Service-Event"))
	case <-time.After(1500 * time.Millisecond):
	}
	if status, page := e.do("GET", endpointsPath+"/"+epID+"/deliveries", e.key, nil); status != 200 || len(page["deliveries"].([]any)) != 3 {
		t.Fatalf("deleted endpoint's log: %d %v", status, page)
	}

	_, otherKey := e.newAccount("devnet")
	for _, c := range []struct{ method, path string }{
		{"GET", endpointsPath + "/" + epID}, {"PATCH", endpointsPath + "/" + epID}, {"DELETE", endpointsPath + "/" + epID},
		{"POST", endpointsPath + "/" + epID + "/rotate-secret"}, {"GET", endpointsPath + "/" + epID + "/deliveries"},
	} {
		var body any
		if c.method == "PATCH" {
			body = map[string]any{"enabled": true}
		}
		status, b := e.do(c.method, c.path, otherKey, body)
		wantError(t, status, b, 404, "not found")
	}
}

// A live (mainnet) account cannot register a URL resolving to 127.0.0.1,
// or plain http; and an endpoint that reaches a private address anyway (a
// name re-pointed after saving) is refused at connect time.
func TestWebhookSSRFGuard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(func(o *worker.Options) {
		o.RetryDelay = func(int, error, *asynq.Task) time.Duration { return time.Hour }
	})
	rc := newReceiver(t, nil)
	live, liveKey := e.newAccount("mainnet")
	for _, url := range []string{"https://localhost/hook", "https://127.0.0.1/hook", "https://[::1]/hook", "https://169.254.169.254/x", "http://8.8.8.8/hook"} {
		status, body := e.do("POST", endpointsPath, liveKey, map[string]any{"url": url, "events": []string{"tx.sent"}})
		wantError(t, status, body, 422, "url")
	}
	// Saved when it pointed elsewhere; it now reaches the local receiver.
	sealer, _ := signer.NewSealer(e.publicKey)
	ep, _, err := webhook.CreateEndpoint(context.Background(), e.db, sealer, live.ID, webhook.Settings{URL: &rc.URL, Events: []string{"tx.sent"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	waitfor.True(t, "a refused attempt", func() bool {
		ds := e.deliveries(liveKey, ep.ID.String(), "")
		if len(ds) != 1 || ds[0]["attempts"] != 1.0 {
			return false
		}
		_, full := e.do("GET", "/api/public/v1/deliveries/"+ds[0]["id"].(string), liveKey, nil)
		a := full["attempt_log"].([]any)
		return len(a) == 1 && strings.Contains(fmt.Sprint(a[0].(map[string]any)["error"]), "public address")
	})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 0 {
		t.Fatalf("the private receiver got %d POSTs", len(rc.got))
	}
}

// slackClick posts a signed Slack button press to the interactions route.
func (e *env) slackClick(buttonValue, action, team, user, responseURL string, at time.Time, secret string) int {
	e.t.Helper()
	payload, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": user}, "team": map[string]any{"id": team},
		"actions": []any{map[string]any{"action_id": action, "value": buttonValue}}, "response_url": responseURL})
	body := "payload=" + url.QueryEscape(string(payload))
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + ts + ":" + body))
	req, _ := http.NewRequest("POST", e.url+"/integrations/slack/interactions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A Slack-format endpoint gets approval.pending as a Block Kit message
// with buttons. Forged or stale clicks are 401 and change nothing; a click
// by someone outside the endpoint's approvers changes nothing; a valid
// click approves as slack:<user>, the chain shows the transfer, and the
// message is replaced with the outcome.
func TestSlackApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	slack := newReceiver(t, nil)     // the incoming-webhook URL
	responses := newReceiver(t, nil) // response_url
	status, ep := e.do("POST", endpointsPath, e.key, map[string]any{"url": slack.URL, "format": "slack",
		"events": []string{"approval.pending"}, "slack_approvers": []string{"U0APPROVER"}})
	if status != http.StatusCreated || ep["format"] != "slack" {
		t.Fatalf("create: %d %v", status, ep)
	}
	slack.next(t, "webhook.test")
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 0}, 10_000_000)
	to := newAddress()
	apID := e.park(id, to, 3)
	msg := slack.next(t, "approval.pending")
	var m struct {
		Text   string
		Blocks []struct {
			Elements []struct {
				ActionID string `json:"action_id"`
				Value    string
			}
		}
	}
	if err := json.Unmarshal(msg.Body, &m); err != nil || len(m.Blocks) != 2 || !strings.Contains(m.Text, "3 USDC") {
		t.Fatalf("slack message %s (%v)", msg.Body, err)
	}
	approve := m.Blocks[1].Elements[0]
	if approve.ActionID != "approve" {
		t.Fatalf("first button %v", approve)
	}

	now := time.Now()
	for name, c := range map[string]struct {
		at     time.Time
		secret string
	}{
		"forged": {now, "not-the-secret"},
		"stale":  {now.Add(-6 * time.Minute), slackSecret},
	} {
		if status := e.slackClick(approve.Value, "approve", "T0HUMANS", "U0APPROVER", responses.URL, c.at, c.secret); status != 401 {
			t.Fatalf("%s click: %d", name, status)
		}
	}
	// A button forged in another workspace names this endpoint and the
	// approval but cannot carry the endpoint's token.
	var v map[string]string
	json.Unmarshal([]byte(approve.Value), &v)
	v["token"] = strings.Repeat("0", 64)
	forged, _ := json.Marshal(v)
	if status := e.slackClick(string(forged), "approve", "T0HUMANS", "U0APPROVER", responses.URL, now, slackSecret); status != 200 {
		t.Fatalf("forged-button click: %d", status)
	}
	if r := responses.any(t); !strings.Contains(string(r.Body), "no longer configured") {
		t.Fatalf("forged-button answer %s", r.Body)
	}
	if status := e.slackClick(approve.Value, "approve", "T0HUMANS", "U0STRANGER", responses.URL, now, slackSecret); status != 200 {
		t.Fatalf("stranger click: %d", status)
	}
	r := responses.any(t)
	if !strings.Contains(string(r.Body), "not one of the approvers") {
		t.Fatalf("stranger answer %s", r.Body)
	}
	// The stranger's click bound the endpoint to its workspace: an
	// approver's click from another one is refused and audited.
	if status := e.slackClick(approve.Value, "approve", "T0AGENTS", "U0APPROVER", responses.URL, now, slackSecret); status != 401 {
		t.Fatalf("click from another workspace: %d", status)
	}
	denied := e.auditOf(audit.ActionPermissionDenied)
	if len(denied) != 1 || denied[0].Actor != "slack:U0APPROVER" || denied[0].Target != "webhook_endpoint:"+ep["id"].(string) ||
		details(t, denied[0])["team_id"] != "T0AGENTS" || details(t, denied[0])["bound_team_id"] != "T0HUMANS" {
		t.Fatalf("permission.denied entries %+v", denied)
	}
	if s := e.approvalStatus(apID); s != "pending" {
		t.Fatalf("refused clicks changed the approval: %s", s)
	}

	if status := e.slackClick(approve.Value, "approve", "T0HUMANS", "U0APPROVER", responses.URL, now, slackSecret); status != 200 {
		t.Fatalf("click: %d", status)
	}
	r = responses.any(t)
	if !strings.Contains(string(r.Body), "Approved by <@U0APPROVER> and sent") || !strings.Contains(string(r.Body), `"replace_original":true`) {
		t.Fatalf("update %s", r.Body)
	}
	status, a := e.do("GET", approvalsPath+"/"+apID, e.key, nil)
	if status != 200 || a["status"] != "sent" || a["approved_by"] != "slack:U0APPROVER" {
		t.Fatalf("approval %v", a)
	}
	e.paidOnce(eng, apID, a["signature"].(string), to, 3_000_000)

	// A new URL issues a new button token and unbinds the workspace: the
	// old message's buttons do nothing, and the new workspace's first
	// click binds it.
	moved := newReceiver(t, nil)
	if status, body := e.do("PATCH", endpointsPath+"/"+ep["id"].(string), e.key, map[string]any{"url": moved.URL}); status != 200 {
		t.Fatalf("move: %d %v", status, body)
	}
	moved.next(t, "webhook.test")
	apID = e.park(id, to, 2)
	moved.next(t, "approval.pending")
	json.Unmarshal([]byte(approve.Value), &v)
	v["approval_id"] = apID
	old, _ := json.Marshal(v)
	if status := e.slackClick(string(old), "approve", "T0HUMANS", "U0APPROVER", responses.URL, now, slackSecret); status != 200 {
		t.Fatalf("old button: %d", status)
	}
	if r := responses.any(t); !strings.Contains(string(r.Body), "no longer configured") {
		t.Fatalf("old button answer %s", r.Body)
	}
	var fresh map[string]string
	json.Unmarshal([]byte(approve.Value), &fresh)
	var token string
	if err := e.db.NewSelect().Table("webhook_endpoints").Column("slack_token").Where("id = ?", ep["id"]).Scan(t.Context(), &token); err != nil || token == v["token"] {
		t.Fatalf("token after the move: %v (%v)", token, err)
	}
	fresh["token"] = token
	fresh["approval_id"] = apID
	button, _ := json.Marshal(fresh)
	if status := e.slackClick(string(button), "reject", "T0NEWTEAM", "U0APPROVER", responses.URL, now, slackSecret); status != 200 {
		t.Fatalf("new workspace's click: %d", status)
	}
	if r := responses.any(t); !strings.Contains(string(r.Body), "Rejected by <@U0APPROVER>") {
		t.Fatalf("reject answer %s", r.Body)
	}
	if status := e.slackClick(string(button), "reject", "T0HUMANS", "U0APPROVER", responses.URL, now, slackSecret); status != 401 {
		t.Fatalf("the old workspace after the move: %d", status)
	}
}

// A receiver that always fails: exactly 6 attempts, then the delivery is
// failed for good and nothing retries it.
func TestWebhookGivesUpAfterSixAttempts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var asked []time.Duration
	e.startWorker(retryFastRecording(&mu, &asked))
	rc := newReceiver(t, func(int, received) int { return http.StatusServiceUnavailable })
	epID, _ := e.createEndpoint(rc.URL, "tx.sent")
	var d map[string]any
	waitfor.True(t, "the delivery failed for good", func() bool {
		ds := e.deliveries(e.key, epID, "")
		if len(ds) != 1 {
			return false
		}
		d = ds[0]
		return d["status"] == "failed"
	})
	_, full := e.do("GET", "/api/public/v1/deliveries/"+d["id"].(string), e.key, nil)
	if d["attempts"] != 6.0 || len(full["attempt_log"].([]any)) != 6 {
		t.Fatalf("delivery %v", full)
	}
	time.Sleep(200 * time.Millisecond)
	rc.mu.Lock()
	posts := len(rc.got)
	rc.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	want := []time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour, 6 * time.Hour}
	if posts != 6 || fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Fatalf("%d POSTs, delays asked %v", posts, asked)
	}
}

// A delivery whose task the queue lost (Redis flushed, or the task
// archived before the delivery ended) is queued again by the re-drive and
// delivered.
func TestWebhookRedrive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t, nil)
	// Saved with no worker running: the test delivery waits in the queue.
	epID, _ := e.createEndpoint(rc.URL, "tx.sent")
	ctx := context.Background()
	disp := &webhook.Dispatcher{DB: e.db, Enqueue: worker.EnqueueDelivery(e.rdb)}
	if n, err := disp.DispatchNew(ctx); err != nil || n != 1 {
		t.Fatalf("dispatch %d %v", n, err)
	}
	var id string
	if err := e.db.NewSelect().Table("deliveries").ColumnExpr("id::text").Scan(ctx, &id); err != nil {
		t.Fatal(err)
	}
	// The queue loses it: archive it (as when its retries ran out), then
	// delete it outright for a second delivery.
	insp := asynq.NewInspectorFromRedisClient(e.rdb)
	if err := insp.ArchiveTask("webhooks", id); err != nil {
		t.Fatal(err)
	}
	// Not yet old enough to be re-driven.
	if n, err := disp.Redrive(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("early redrive %d %v", n, err)
	}
	if n, err := disp.Redrive(ctx, 0); err != nil || n != 1 {
		t.Fatalf("redrive %d %v", n, err)
	}
	if info, err := insp.GetTaskInfo("webhooks", id); err != nil || info.State != asynq.TaskStatePending {
		t.Fatalf("task %v %v", info, err)
	}
	if err := insp.DeleteTask("webhooks", id); err != nil {
		t.Fatal(err)
	}
	if n, err := disp.Redrive(ctx, 0); err != nil || n != 1 {
		t.Fatalf("redrive of a deleted task %d %v", n, err)
	}
	e.startWorker()
	rc.next(t, "webhook.test")
	e.waitDelivered(e.key, epID)
}
