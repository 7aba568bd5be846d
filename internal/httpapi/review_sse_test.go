package httpapi_test

import (
	"bufio"
	"fmt"
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

// TestReview24SSEReplayMissesLateCommit: an event whose transaction began
// before another's and commits after it, while the page is reconnecting,
// is never sent to the page. Producers take the event's time when their
// transaction's work starts (Decide: the claim's now(), then the wallet
// lock and the node's fee read), so commit order and created_at order
// differ by as long as a transaction lasts, not an instant. The replay
// reads created_at >= the cursor's time, the live path had already
// dropped the connection, and no reset is sent: an approver's inbox misses
// the parked payment (the page polls nothing while the stream is up).
func TestReview24SSEReplayMissesLateCommit(t *testing.T) {
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
	if _, before, ok := re.next(webhook.KindApprovalPending, parked.String(), 3*time.Second); !ok {
		t.Fatalf("reconnected with Last-Event-ID %s: approval.pending %s committed while the page reconnected never came (read %v)",
			seen.ID, parked, before)
	}
}

// TestReview24SSEBodyHoldsConnection: a stream request that declares a
// body it never sends hangs for ever, past sign-out and the caps. The
// handler clears the read deadline (the server's ReadTimeout) and then
// writes; before the first response bytes net/http reads the unread
// request body (up to 256 KiB) to keep the connection reusable, with no
// deadline left, so the handler blocks in its first Flush: it never
// reaches its select (no heartbeat, no lease renewal, no close on
// sign-out or Draining) and holds its goroutine, its connection and its
// hub subscription until the client goes. Its lease lapses after 3
// heartbeats, so one session opens such requests without bound.
func TestReview24SSEBodyHoldsConnection(t *testing.T) {
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
		// Any answer will do (a 400 for the body, a 429 past the cap,
		// or the stream), as long as there is one.
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
			answered++
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
