package httpapi_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

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

// TestEvents_LateCommitReachesTheReconnectedPage: an event whose transaction began
// before another's and commits after it, while the page is reconnecting,
// still reaches the page. Producers take the event's time when their
// transaction's work starts (Decide: the claim's now(), then the wallet
// lock and the node's fee read), so commit order and created_at order
// differ by as long as a transaction lasts. The replay starts
// live.ReplayOverlap before the page's last event, and sends what comes
// before that event without an id (the page's position stays; the page
// drops ids it has handled).
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
