package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/live"
	"github.com/agentwallet/agentwallet/internal/waitfor"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// sseEvent is one server-sent event a stream received.
type sseEvent struct {
	ID, Event, Data string
	HasID           bool
	At              time.Time // when it arrived
}

// field is a top-level field of the event's JSON data.
func (ev sseEvent) field(t testing.TB, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(ev.Data), &v); err != nil {
		t.Fatalf("event %s: data is not JSON: %q", ev.Event, ev.Data)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// sseStream is an open GET /api/dashboard/v1/events, read as EventSource
// reads it.
type sseStream struct {
	t       testing.TB
	header  http.Header
	events  chan sseEvent
	ended   chan struct{}
	cancel  context.CancelFunc
	mu      sync.Mutex
	seen    []sseEvent
	comment int // heartbeat comments read
}

// openStream opens the stream with hdr (a session's cookie), sending
// lastID as Last-Event-ID when set. A refusal returns nil with its status
// and body.
func (e *env) openStream(hdr http.Header, lastID string) (*sseStream, int, map[string]any) {
	e.t.Helper()
	return e.openStreamAt(httpapi.EventsPath, hdr, lastID)
}

func (e *env) openStreamAt(path string, hdr http.Header, lastID string) (*sseStream, int, map[string]any) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.url+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			e.t.Fatalf("refused stream: %d %q (%s), want a JSON body", resp.StatusCode, raw, resp.Header.Get("Content-Type"))
		}
		return nil, resp.StatusCode, body
	}
	s := &sseStream{t: e.t, header: resp.Header, events: make(chan sseEvent, 1024), ended: make(chan struct{}), cancel: cancel}
	go s.read(resp.Body)
	e.t.Cleanup(s.close)
	return s, resp.StatusCode, nil
}

// mustOpen opens a stream that must be served.
func (e *env) mustOpen(hdr http.Header, lastID string) *sseStream {
	e.t.Helper()
	s, status, body := e.openStream(hdr, lastID)
	if s == nil {
		e.t.Fatalf("open stream: %d %v", status, body)
	}
	return s
}

// read parses the body as the EventSource spec does (fields id, event,
// data; comments; a blank line dispatches).
func (s *sseStream) read(body io.ReadCloser) {
	defer close(s.ended)
	defer close(s.events)
	defer body.Close()
	r := bufio.NewReader(body)
	var cur sseEvent
	var data []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if len(data) > 0 {
				cur.Data, cur.At = strings.Join(data, "\n"), time.Now()
				if cur.Event == "" {
					cur.Event = "message"
				}
				s.mu.Lock()
				s.seen = append(s.seen, cur)
				s.mu.Unlock()
				s.events <- cur
			}
			cur, data = sseEvent{}, nil
		case strings.HasPrefix(line, ":"):
			s.mu.Lock()
			s.comment++
			s.mu.Unlock()
		default:
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "id":
				cur.ID, cur.HasID = value, true
			case "event":
				cur.Event = value
			case "data":
				data = append(data, value)
			}
		}
	}
}

// close drops the connection, and checks that no event id came twice.
func (s *sseStream) close() {
	s.cancel()
	<-s.ended
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := map[string]int{}
	for _, ev := range s.seen {
		if ev.HasID && ev.ID != "" && ev.Event != "reset" {
			ids[ev.ID]++
			if ids[ev.ID] == 2 {
				s.t.Errorf("event %s (%s) arrived twice on one stream", ev.ID, ev.Event)
			}
		}
	}
}

// streamWait bounds every wait for an event: generous, so a busy machine
// does not fail the tests (the latencies are logged).
const streamWait = 15 * time.Second

// waitFor reads events until one of kind whose data contains has, and
// returns it with those read before it.
func (s *sseStream) waitFor(kind, has string) (sseEvent, []sseEvent) {
	s.t.Helper()
	var before []sseEvent
	deadline := time.After(streamWait)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatalf("the stream ended while waiting for %s %s (read %v)", kind, has, before)
			}
			if ev.Event == kind && strings.Contains(ev.Data, has) {
				return ev, before
			}
			before = append(before, ev)
		case <-deadline:
			s.t.Fatalf("waited %v in vain for %s %s (read %v)", streamWait, kind, has, before)
		}
	}
}

// endReason waits for the stream's close event and its end, and returns
// the reason it gave.
func (s *sseStream) endReason() string {
	s.t.Helper()
	deadline := time.After(streamWait)
	reason := ""
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				if reason == "" {
					s.t.Fatal("the stream ended without a close event")
				}
				return reason
			}
			if ev.Event == "close" {
				if ev.HasID {
					s.t.Errorf("the close event carries an id: %+v", ev)
				}
				reason, _ = ev.field(s.t, "reason").(string)
			}
		case <-deadline:
			s.t.Fatalf("the stream did not end within %v", streamWait)
		}
	}
}

// quiet checks that nothing but heartbeats arrives for d.
func (s *sseStream) quiet(d time.Duration) {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if ok {
			s.t.Fatalf("unexpected event %+v", ev)
		}
		s.t.Fatal("the stream ended")
	case <-time.After(d):
	}
}

// otherAccount makes a second devnet account with a key and a signed-in
// person of role, as an env that acts in it.
func (e *env) otherAccount(role auth.Role) (*env, http.Header) {
	e.t.Helper()
	o := *e
	o.account, o.key = e.newAccount("devnet")
	hdr, _ := o.session(role)
	return &o, hdr
}

// TestEvents_ApproverSeesParkAndDecision: a payment parked by an
// agent reaches a signed-in approver's stream as approval.pending, its
// body the webhook body of that event, and another person's decision
// follows as approval.approved.
func TestEvents_ApproverSeesParkAndDecision(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	approver, _ := e.session(auth.RoleApprover)
	other, _ := e.session(auth.RoleApprover)
	w, _ := e.agent(map[string]any{"approval_threshold_usdc": 1}, 10_000_000)
	_, agentKey := e.agentKey()
	st := e.mustOpen(approver, "")
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
		if got := st.header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}

	start := time.Now()
	status, body := e.do("POST", fmt.Sprintf(sendPath, w), agentKey, map[string]any{"to": newAddress(), "amount": 2})
	if status != http.StatusAccepted {
		t.Fatalf("park: %d %v", status, body)
	}
	answered := time.Since(start)
	ap := body["approval_id"].(string)
	ev, _ := st.waitFor(webhook.KindApprovalPending, ap)
	t.Logf("approval.pending on the approver's stream %v after the agent's send started (the send answered after %v)", ev.At.Sub(start), answered)
	if !strings.HasPrefix(ev.ID, "evt_") || ev.field(t, "event_id") != ev.ID || ev.field(t, "event") != webhook.KindApprovalPending {
		t.Fatalf("event %+v: want id evt_… equal to its event_id", ev)
	}
	if ev.field(t, "data", "approval_id") != ap || ev.field(t, "data", "wallet_id") != w {
		t.Fatalf("event data %s", ev.Data)
	}
	var stored int
	if err := e.db.NewRaw("SELECT count(*) FROM events WHERE id = ?", strings.TrimPrefix(ev.ID, "evt_")).Scan(t.Context(), &stored); err != nil || stored != 1 {
		t.Fatalf("the stream's id is not the outbox's event (%d rows, %v)", stored, err)
	}

	start = time.Now()
	status, raw, _ := e.request("POST", approvalsPath+"/"+ap+"/approve", "", map[string]any{"note": "fine"}, other)
	if status != http.StatusOK {
		t.Fatalf("approve as another person: %d %s", status, raw)
	}
	ev, _ = st.waitFor(webhook.KindApprovalApproved, ap)
	t.Logf("approval.approved on the first approver's stream %v after the other person's approve started", ev.At.Sub(start))
	if sig, _ := ev.field(t, "data", "signature").(string); sig == "" {
		t.Fatalf("approval.approved without its signature: %s", ev.Data)
	}
}

// TestEvents_OnlyWhatThePersonMayRead: a viewer receives the
// account's events (of every wallet: people are not scoped), never
// another account's; and the filter applies the permission table and
// the wallet scope to each kind.
func TestEvents_OnlyWhatThePersonMayRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	viewer, _ := e.session(auth.RoleViewer)
	o, theirs := e.otherAccount(auth.RoleOwner)
	policy := map[string]any{"approval_threshold_usdc": 1, "max_tx_usdc": 5}
	w1, _ := e.agent(policy, 10_000_000)
	w2, _ := e.agent(policy, 10_000_000)
	wo, _ := o.agent(policy, 10_000_000)
	mine, other := e.mustOpen(viewer, ""), o.mustOpen(theirs, "")

	apOther := o.park(wo, newAddress(), 2)
	ap1 := e.park(w1, newAddress(), 2)
	if status, body := e.do("POST", fmt.Sprintf(sendPath, w2), e.key, map[string]any{"to": newAddress(), "amount": 6}); status != http.StatusForbidden {
		t.Fatalf("blocked send: %d %v", status, body)
	}
	_, before := mine.waitFor(webhook.KindApprovalPending, ap1)
	blocked, during := mine.waitFor(webhook.KindTxBlocked, w2)
	if blocked.field(t, "data", "reason") == nil {
		t.Fatalf("tx.blocked without a reason: %s", blocked.Data)
	}
	_, theirsBefore := other.waitFor(webhook.KindApprovalPending, apOther)
	// The other account's park committed first: had it crossed, it
	// would have arrived before.
	for _, ev := range append(before, during...) {
		if strings.Contains(ev.Data, apOther) || strings.Contains(ev.Data, wo) {
			t.Fatalf("another account's event reached the viewer: %+v", ev)
		}
	}
	for _, ev := range theirsBefore {
		t.Fatalf("the other account's stream read an event before its own: %+v", ev)
	}
	other.quiet(300 * time.Millisecond)

	// The filter, principal by principal (people are unscoped today; a
	// scoped principal reaches only its wallets' items, and no item about
	// no wallet).
	in, out := uuid.New(), uuid.New()
	pending := live.Item{ID: "evt_1", Kind: webhook.KindApprovalPending, WalletID: in}
	elsewhere := live.Item{ID: "evt_2", Kind: webhook.KindTxSent, WalletID: out}
	expired := live.Item{ID: "evt_3", Kind: webhook.KindX402Expired, WalletID: in}
	failed := live.Item{ID: uuid.NewString(), Kind: live.KindDeliveryFailed}
	test := live.Item{ID: "evt_4", Kind: webhook.KindTest}
	scopedViewer := auth.Principal{Role: auth.RoleViewer, User: newAddress(), Wallets: auth.WalletScope{in}}
	for _, c := range []struct {
		name string
		p    auth.Principal
		it   live.Item
		want bool
	}{
		{"viewer, approval", auth.Principal{Role: auth.RoleViewer}, pending, true},
		{"viewer, failed delivery", auth.Principal{Role: auth.RoleViewer}, failed, true},
		{"approver, x402 expired", auth.Principal{Role: auth.RoleApprover}, expired, true},
		{"owner, transaction", auth.Principal{Role: auth.RoleOwner}, elsewhere, true},
		{"scoped viewer, its wallet's approval", scopedViewer, pending, true},
		{"scoped viewer, another wallet's transaction", scopedViewer, elsewhere, false},
		{"scoped viewer, its wallet's x402 payment", scopedViewer, expired, true},
		// list-deliveries is not scoped to wallets: neither are its items.
		{"scoped viewer, a failed delivery", scopedViewer, failed, true},
		{"agent key, failed delivery", auth.Principal{Role: auth.RoleAgent}, failed, false},
		{"owner, a webhook test event", auth.Principal{Role: auth.RoleOwner}, test, false},
	} {
		if got := httpapi.MayRead(c.p, &c.it); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestEvents_ReplayFromLastEventID: a page that reconnects with
// Last-Event-ID gets what it missed, once each and in order, then the stream
// goes on live; an id the stream cannot replay from says reset, with the id
// to go on from.
func TestEvents_ReplayFromLastEventID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	hdr, _ := e.session(auth.RoleApprover)
	w, _ := e.agent(map[string]any{"approval_threshold_usdc": 1}, 10_000_000)
	st := e.mustOpen(hdr, "")
	ap1 := e.park(w, newAddress(), 2)
	first, _ := st.waitFor(webhook.KindApprovalPending, ap1)
	st.close()

	missed := []string{e.park(w, newAddress(), 2), e.park(w, newAddress(), 3), e.park(w, newAddress(), 4)}
	re := e.mustOpen(hdr, first.ID)
	last, before := re.waitFor(webhook.KindApprovalPending, missed[2])
	got := []string{}
	for _, ev := range append(before, last) {
		got = append(got, fmt.Sprint(ev.field(t, "data", "approval_id")))
	}
	if strings.Join(got, " ") != strings.Join(missed, " ") {
		t.Fatalf("replayed %v, want exactly %v", got, missed)
	}
	live1 := e.park(w, newAddress(), 2)
	if _, between := re.waitFor(webhook.KindApprovalPending, live1); len(between) != 0 {
		t.Fatalf("after the replay: %v before the live event", between)
	}

	// The query parameter serves a page that opens a new EventSource.
	// What came before the page's last event, within
	// live.ReplayOverlap, comes first and without an id: the page may
	// have it (it drops what it has), and its position stays.
	q, status, body := e.openStreamAt(httpapi.EventsPath+"?last_event_id="+last.ID, hdr, "")
	if q == nil {
		t.Fatalf("?last_event_id: %d %v", status, body)
	}
	ev, between := q.waitFor(webhook.KindApprovalPending, live1)
	earlier := []string{}
	for _, b := range between {
		if b.HasID {
			t.Fatalf("?last_event_id replayed %+v with an id before the live event", b)
		}
		earlier = append(earlier, fmt.Sprint(b.field(t, "data", "approval_id")))
	}
	if want := append([]string{ap1}, missed[:2]...); strings.Join(earlier, " ") != strings.Join(want, " ") || !ev.HasID || ev.ID == last.ID {
		t.Fatalf("?last_event_id replayed %v then %+v, want %v without ids then the live event", earlier, ev, want)
	}
	q.close() // a session has at most 5 streams

	// Unknown, or another account's: reset, continuing from the newest.
	o, theirs := e.otherAccount(auth.RoleOwner)
	wo, _ := o.agent(map[string]any{"approval_threshold_usdc": 1}, 10_000_000)
	ot := o.mustOpen(theirs, "")
	theirEvent, _ := ot.waitFor(webhook.KindApprovalPending, o.park(wo, newAddress(), 2))
	newest, _ := re.waitFor(webhook.KindApprovalPending, e.park(w, newAddress(), 2))
	for _, id := range []string{"evt_" + uuid.NewString(), theirEvent.ID, "garbage"} {
		r := e.mustOpen(hdr, id)
		ev, _ := r.waitFor("reset", "unknown_id")
		if !ev.HasID || ev.ID != newest.ID {
			t.Fatalf("reset after %s: id %q, want the newest %q", id, ev.ID, newest.ID)
		}
		r.quiet(200 * time.Millisecond)
		r.close()
	}
	// Older than the window: reset too.
	if _, err := e.db.NewRaw("UPDATE events SET created_at = created_at - interval '2 hours' WHERE id = ?",
		strings.TrimPrefix(first.ID, "evt_")).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := e.mustOpen(hdr, first.ID)
	old.waitFor("reset", "too_old")
}

// TestEvents_CappedPerSessionAndAccount: streams are capped per session and
// per account (429 {"error"} past them), a closed stream frees its place,
// and an idle stream sends heartbeats.
func TestEvents_CappedPerSessionAndAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{streams: httpapi.EventStreams{PerSession: 2, PerAccount: 3, Heartbeat: 200 * time.Millisecond}})
	a, _ := e.session(auth.RoleViewer)
	b, _ := e.session(auth.RoleApprover)
	c, _ := e.session(auth.RoleOwner)
	a1, a2 := e.mustOpen(a, ""), e.mustOpen(a, "")
	_, status, body := e.openStream(a, "")
	wantError(t, status, body, http.StatusTooManyRequests, "too many event streams for this session (at most 2)")
	e.mustOpen(b, "")
	for _, h := range []http.Header{b, c} {
		_, status, body = e.openStream(h, "")
		wantError(t, status, body, http.StatusTooManyRequests, "too many event streams for this account (at most 3)")
	}
	// Another account has its own count.
	_, theirs := e.otherAccount(auth.RoleViewer)
	e.mustOpen(theirs, "")

	a1.close()
	waitfor.True(t, "a closed stream's place is free", func() bool {
		s, status, _ := e.openStream(c, "")
		if s != nil {
			return true
		}
		if status != http.StatusTooManyRequests {
			t.Fatalf("status %d", status)
		}
		return false
	})
	waitfor.True(t, "heartbeats", func() bool {
		a2.mu.Lock()
		defer a2.mu.Unlock()
		return a2.comment >= 3
	})
}

// TestEvents_CappedPerPerson: a person's sessions in the account (a
// laptop and a phone) share a cap below the account's.
func TestEvents_CappedPerPerson(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{streams: httpapi.EventStreams{PerSession: 2, PerPerson: 3, PerAccount: 10}})
	laptop, address := e.session(auth.RoleViewer)
	s, err := auth.StartSession(t.Context(), e.db, address, e.account.ID)
	if err != nil {
		t.Fatal(err)
	}
	phone := http.Header{"Cookie": {"aw_session=" + s.Token}}
	e.mustOpen(laptop, "")
	e.mustOpen(laptop, "")
	e.mustOpen(phone, "")
	_, status, body := e.openStream(phone, "")
	wantError(t, status, body, http.StatusTooManyRequests, "too many event streams for this person (at most 3 across their sessions)")
	other, _ := e.session(auth.RoleViewer)
	e.mustOpen(other, "")
}

// TestEvents_CloseWithTheSession: sign-out, removal from the
// account and a new role end the stream at once (notified, not waited
// for), saying why; a signed-out session cannot reopen it; an expired
// session's stream ends at the periodic re-check.
func TestEvents_CloseWithTheSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{streams: httpapi.EventStreams{Recheck: time.Hour}})

	hdr, _ := e.session(auth.RoleApprover)
	st := e.mustOpen(hdr, "")
	start := time.Now()
	if status, raw, _ := e.request("DELETE", httpapi.SessionPath, "", nil, hdr); status != http.StatusNoContent {
		t.Fatalf("sign out: %d %s", status, raw)
	}
	if r := st.endReason(); r != live.ReasonSessionEnded {
		t.Fatalf("after sign-out: %q", r)
	}
	t.Logf("sign-out ended the stream after %v", time.Since(start))
	_, status, body := e.openStream(hdr, "")
	wantError(t, status, body, http.StatusUnauthorized, "Unauthorized")

	hdr, address := e.session(auth.RoleViewer)
	st = e.mustOpen(hdr, "")
	if status, body := e.do("DELETE", usersPath+"/"+address, e.key, nil); status != http.StatusNoContent {
		t.Fatalf("remove user: %d %v", status, body)
	}
	if r := st.endReason(); r != live.ReasonSessionEnded {
		t.Fatalf("after removal: %q", r)
	}

	hdr, address = e.session(auth.RoleViewer)
	st = e.mustOpen(hdr, "")
	if status, body := e.do("PATCH", usersPath+"/"+address, e.key, map[string]any{"role": "approver"}); status != http.StatusOK {
		t.Fatalf("change role: %d %v", status, body)
	}
	if r := st.endReason(); r != live.ReasonRoleChanged {
		t.Fatalf("after a role change: %q", r)
	}
	e.mustOpen(hdr, "") // with the new role

	// Another person's sign-out re-checks every stream, and ends only its own.
	mine, _ := e.session(auth.RoleViewer)
	kept := e.mustOpen(mine, "")
	hdr, _ = e.session(auth.RoleViewer)
	gone := e.mustOpen(hdr, "")
	if status, raw, _ := e.request("DELETE", httpapi.SessionPath, "", nil, hdr); status != http.StatusNoContent {
		t.Fatalf("sign out: %d %s", status, raw)
	}
	gone.endReason()
	kept.quiet(300 * time.Millisecond)

	// Expiry sends no notification: the periodic re-check ends it.
	x := newEnv(t, envOpts{streams: httpapi.EventStreams{Recheck: 200 * time.Millisecond}})
	hdr, address = x.session(auth.RoleOwner)
	st = x.mustOpen(hdr, "")
	if _, err := x.db.NewRaw("UPDATE sessions SET last_seen_at = now() - interval '13 hours' WHERE address = ?", address).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := st.endReason(); r != live.ReasonSessionEnded {
		t.Fatalf("after expiry: %q", r)
	}
}

// TestEvents_RefuseAPIKeys: the stream is a person's: an API key (with
// or without a cookie beside it) gets the 401 the dashboard routes give.
func TestEvents_RefuseAPIKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, agentKey := e.agentKey()
	hdr, _ := e.session(auth.RoleOwner)
	for name, h := range map[string]http.Header{
		"admin key":        {"Authorization": {"Bearer " + e.key}},
		"agent key":        {"Authorization": {"Bearer " + agentKey}},
		"key and a cookie": {"Authorization": {"Bearer " + e.key}, "Cookie": hdr["Cookie"]},
		"nothing":          {},
		"unknown cookie":   {"Cookie": {"aw_session=" + strings.Repeat("x", 44)}},
	} {
		_, status, body := e.openStream(h, "")
		if status != http.StatusUnauthorized || body["error"] != "Unauthorized" || len(body) != 1 {
			t.Errorf("%s: %d %v, want 401 {\"error\":\"Unauthorized\"}", name, status, body)
		}
	}
	if status, _ := e.doRaw("POST", httpapi.EventsPath, "", nil); status != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", status)
	}
}

// TestEvents_OutageClosesAndHeals: with PostgreSQL or Redis gone an open stream
// ends with `event: close` (reason unavailable) rather than hanging, a new
// one answers 503 {"error"}, and streams are served again once they are
// back.
func TestEvents_OutageClosesAndHeals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{proxied: true, streams: httpapi.EventStreams{Heartbeat: 300 * time.Millisecond, Recheck: 300 * time.Millisecond}})
	hdr, _ := e.session(auth.RoleOwner)
	reopen := func(what string) *sseStream {
		var s *sseStream
		waitfor.True(t, what, func() bool { s, _, _ = e.openStream(hdr, ""); return s != nil })
		return s
	}

	for _, c := range []struct {
		name string
		p    *proxy
		mode proxyMode
	}{
		{"PostgreSQL refused", e.pgProxy, proxyRefuse},
		{"PostgreSQL blackholed", e.pgProxy, proxyBlackhole},
		{"Redis refused", e.redisProxy, proxyRefuse},
		{"Redis blackholed", e.redisProxy, proxyBlackhole},
	} {
		st := reopen("a stream before " + c.name)
		start := time.Now()
		c.p.set(c.mode)
		if r := st.endReason(); r != live.ReasonUnavailable {
			t.Fatalf("%s: the stream ended with %q", c.name, r)
		}
		t.Logf("%s: the stream ended after %v", c.name, time.Since(start))
		_, status, body := e.openStream(hdr, "")
		if status != http.StatusServiceUnavailable || body["error"] == nil {
			t.Fatalf("%s: a new stream answered %d %v", c.name, status, body)
		}
		c.p.set(proxyUp)
	}
	st := reopen("a stream after the outages")
	w := uuid.New()
	if _, err := webhook.Emit(t.Context(), e.db, e.account.ID, time.Now(), webhook.KindTxBlocked, map[string]any{"wallet_id": w, "reason": "frozen"}); err != nil {
		t.Fatal(err)
	}
	st.waitFor(webhook.KindTxBlocked, w.String())
}

// TestEvents_OutliveServerTimeouts: the server's read and write
// timeouts (cmd/api: 30 s, 60 s) cut requests, not streams.
func TestEvents_OutliveServerTimeouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{serverTimeouts: 500 * time.Millisecond})
	hdr, _ := e.session(auth.RoleViewer)
	st := e.mustOpen(hdr, "")
	st.quiet(1500 * time.Millisecond)
	w := uuid.New()
	if _, err := webhook.Emit(t.Context(), e.db, e.account.ID, time.Now(), webhook.KindTxSent, map[string]any{"wallet_id": w}); err != nil {
		t.Fatal(err)
	}
	st.waitFor(webhook.KindTxSent, w.String())
}

// TestEvents_FailedDeliveryIsStreamed: a webhook delivery that fails for good
// reaches the people's streams as delivery.failed, named by the
// delivery's id as the webhooks API shows it, and is replayed like events.
func TestEvents_FailedDeliveryIsStreamed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(retryFast)
	hdr, _ := e.session(auth.RoleViewer)
	st := e.mustOpen(hdr, "")
	rc := newReceiver(t, func(int, received) int { return http.StatusServiceUnavailable })
	ep, _ := e.createEndpoint(rc.URL, "tx.sent")
	ev, _ := st.waitFor(live.KindDeliveryFailed, ep)
	ds := e.deliveries(e.key, ep, "?status=failed")
	if len(ds) != 1 || ev.ID != ds[0]["id"] || ev.field(t, "data", "delivery_id") != ds[0]["id"] ||
		ev.field(t, "data", "event") != webhook.KindTest || ev.field(t, "data", "attempts") != 6.0 {
		t.Fatalf("event %+v, deliveries %v", ev, ds)
	}
	// Replayed after an event that came before it.
	w := uuid.New()
	earlier, err := webhook.Emit(t.Context(), e.db, e.account.ID, time.Now().Add(-time.Minute), webhook.KindTxSent, map[string]any{"wallet_id": w})
	if err != nil {
		t.Fatal(err)
	}
	re := e.mustOpen(hdr, webhook.PublicEventID(earlier.ID))
	if got, before := re.waitFor(live.KindDeliveryFailed, ep); got.ID != ev.ID || len(before) != 0 {
		t.Fatalf("replay: %v then %+v", before, got)
	}
}

// TestEvents_CommitToPageLatency measures commit-to-page latency over the real
// server: an event committed to the outbox reaches an open stream through
// the PostgreSQL notification. It asserts receipt only; the numbers are
// logged (docs/decisions/webhooks.md, "Transport", quotes them).
func TestEvents_CommitToPageLatency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hdr, _ := e.session(auth.RoleViewer)
	st := e.mustOpen(hdr, "")
	var took []time.Duration
	for range 30 {
		w := uuid.New()
		start := time.Now()
		if _, err := webhook.Emit(t.Context(), e.db, e.account.ID, start, webhook.KindTxSent, map[string]any{"wallet_id": w}); err != nil {
			t.Fatal(err)
		}
		ev, _ := st.waitFor(webhook.KindTxSent, w.String())
		took = append(took, ev.At.Sub(start))
	}
	slices.Sort(took)
	t.Logf("commit to page over %d events: median %v, 90th %v, max %v", len(took), took[len(took)/2], took[len(took)*9/10], took[len(took)-1])
}

// next reads the stream's events until one of kind whose data contains
// has, for at most d; ok false when none came.
func (s *sseStream) next(kind, has string, d time.Duration) (sseEvent, []sseEvent, bool) {
	s.t.Helper()
	var before []sseEvent
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return sseEvent{}, before, false
			}
			if ev.Event == kind && strings.Contains(ev.Data, has) {
				return ev, before, true
			}
			before = append(before, ev)
		case <-deadline:
			return sseEvent{}, before, false
		}
	}
}

// TestEvents_LateCommitReachesTheReconnectedPage: an event whose transaction
// began before another's and commits after it, while the page is
// reconnecting, still reaches the page. Producers take the event's time when
// their transaction's work starts (Decide: the claim's now(), then the
// wallet lock and the node's fee read), so commit order and created_at order
// differ by as long as a transaction lasts. The replay starts
// live.ReplayOverlap before the page's last event, and sends what comes
// before that event without an id (the page's position stays; the page drops
// ids it has handled).
func TestEvents_LateCommitReachesTheReconnectedPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hdr, _ := e.session(auth.RoleApprover)
	st := e.mustOpen(hdr, "")
	ctx := t.Context()

	// A parked payment's transaction: its event is written with the time
	// its work started; it commits after another that started later.
	slow, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Rollback()
	parked := uuid.New()
	if _, err := webhook.Emit(ctx, slow, e.account.ID, time.Now(), webhook.KindApprovalPending,
		map[string]any{"approval_id": "apr_" + parked.String(), "wallet_id": uuid.New(), "amount": 2_000_000}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)

	// Meanwhile another wallet's send commits; the page sees it.
	w := uuid.New()
	if _, err := webhook.Emit(ctx, e.db, e.account.ID, time.Now(), webhook.KindTxSent, map[string]any{"wallet_id": w}); err != nil {
		t.Fatal(err)
	}
	seen, _ := st.waitFor(webhook.KindTxSent, w.String())

	// The page's connection drops (a deploy, a hub reconnection, a
	// slow_reader close...) and the slow transaction commits meanwhile.
	st.close()
	if err := slow.Commit(); err != nil {
		t.Fatal(err)
	}

	re := e.mustOpen(hdr, seen.ID)
	ev, before, ok := re.next(webhook.KindApprovalPending, parked.String(), streamWait)
	if !ok {
		t.Fatalf("reconnected with Last-Event-ID %s: approval.pending %s committed while the page reconnected never came (read %v)",
			seen.ID, parked, before)
	}
	if ev.HasID || len(before) != 0 {
		t.Fatalf("the late event came with id %q after %v; want it first, without an id (it is older than the page's last event)", ev.ID, before)
	}
	// The page's own last event is not sent again.
	w2 := uuid.New()
	if _, err := webhook.Emit(ctx, e.db, e.account.ID, time.Now(), webhook.KindTxSent, map[string]any{"wallet_id": w2}); err != nil {
		t.Fatal(err)
	}
	if next, between := re.waitFor(webhook.KindTxSent, w2.String()); len(between) != 0 || !next.HasID {
		t.Fatalf("after the replay: %v, then %+v", between, next)
	}
}

// TestEvents_RequestWithABodyIs400: a stream request that declares a body it
// never sends is answered 400 at once and its connection closed. The
// stream clears the read deadline, and before its first response bytes
// net/http reads the unread request body (up to 256 KiB) to keep the
// connection reusable: with no deadline left, the handler would block in
// its first Flush, past sign-out and the caps (its lease lapses after 3
// heartbeats, so one session could open such requests without bound).
func TestEvents_RequestWithABodyIs400(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{serverTimeouts: 500 * time.Millisecond,
		streams: httpapi.EventStreams{PerSession: 1, PerAccount: 1, Heartbeat: 100 * time.Millisecond}})
	host := strings.TrimPrefix(e.url, "http://")
	hdr, _ := e.session(auth.RoleViewer)
	answered, held := 0, 0
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\nAccept: text/event-stream\r\nContent-Length: 10\r\n\r\n",
			httpapi.EventsPath, host, hdr.Get("Cookie"))
		// The answer, then the end of the connection.
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		if raw, err := io.ReadAll(c); err == nil {
			answered++
			if !strings.HasPrefix(string(raw), "HTTP/1.1 400 ") || !strings.Contains(string(raw), `{"error":"the event stream takes no request body"}`) {
				t.Errorf("answered %q, want 400 {\"error\"}", raw)
			}
		}
		time.Sleep(500 * time.Millisecond) // the lease (TTL 300 ms) lapses
	}
	if s, raw, _ := e.request("DELETE", httpapi.SessionPath, "", nil, hdr); s != http.StatusNoContent {
		t.Fatalf("sign out: %d %s", s, raw)
	}
	time.Sleep(2 * time.Second)
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				held++
			}
		}
	}
	if answered < 3 || held > 0 {
		t.Fatalf("3 stream requests declaring a 10-byte body never sent (cap 1 per session, ReadTimeout 500 ms): "+
			"%d answered within 1 s; 2 s after the session was signed out the server still holds %d of their connections open in silence", answered, held)
	}
}
