package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/live"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// EventsPath is the dashboard's live event stream: server-sent events of
// the session's account, those the person may read.
const EventsPath = "/api/dashboard/v1/events"

// EventsOperation names the stream in the permission table.
const EventsOperation = "stream-events"

// DashboardOperation is an operation of /api/dashboard/v1 that the
// permission table governs; these are outside the OpenAPI document (they
// take a dashboard session, never a key). The sign-in routes are not
// among them: they make the session.
type DashboardOperation struct {
	ID, Method, Path string
}

// DashboardOperations lists them.
var DashboardOperations = []DashboardOperation{{ID: EventsOperation, Method: http.MethodGet, Path: EventsPath}}

// EventStreams bounds and paces the event streams; a zero field takes its
// default.
type EventStreams struct {
	// PerSession, PerPerson (a person's sessions in the account together)
	// and PerAccount cap the streams open at once, across API processes
	// (EVENT_STREAMS_PER_SESSION, EVENT_STREAMS_PER_PERSON,
	// EVENT_STREAMS_PER_ACCOUNT; live.DefaultPerSession,
	// live.DefaultPerPerson, live.DefaultPerAccount). Past them: 429.
	PerSession, PerPerson, PerAccount int
	// Heartbeat is how often an idle stream sends a comment (and renews
	// its lease), and how often the hub renews the accounts it watches
	// (live.Hub.WatchEvery); DefaultHeartbeat.
	Heartbeat time.Duration
	// Recheck is how often open streams' sessions are re-read without a
	// notification; live.DefaultRecheck.
	Recheck time.Duration
}

// DefaultHeartbeat keeps proxies from closing an idle stream (most cut
// after 60 s of silence).
const DefaultHeartbeat = 15 * time.Second

// streamWriteWait bounds one write to a stream: a page that stops reading
// is dropped after it.
const streamWriteWait = 10 * time.Second

// streamRetry is the reconnection delay the stream asks of EventSource.
const streamRetry = time.Second

func (c EventStreams) withDefaults() EventStreams {
	c.PerSession = cmp.Or(c.PerSession, live.DefaultPerSession)
	c.PerPerson = cmp.Or(c.PerPerson, live.DefaultPerPerson)
	c.PerAccount = cmp.Or(c.PerAccount, live.DefaultPerAccount)
	c.Heartbeat = cmp.Or(c.Heartbeat, DefaultHeartbeat)
	c.Recheck = cmp.Or(c.Recheck, live.DefaultRecheck)
	return c
}

// streamReads is the read operation whose permission (role, and wallet
// scope when its row has Wallets) decides who receives each kind: a
// stream shows what the person could list, nothing more.
var streamReads = map[string]string{
	webhook.KindApprovalPending:    "list-approvals",
	webhook.KindApprovalVote:       "list-approvals",
	webhook.KindApprovalApproved:   "list-approvals",
	webhook.KindApprovalRejected:   "list-approvals",
	webhook.KindApprovalExpired:    "list-approvals",
	webhook.KindTxSent:             "list-transactions",
	webhook.KindTxReceived:         "list-transactions",
	webhook.KindUnexplainedOutflow: "list-transactions",
	webhook.KindReceiveFailed:      "list-transactions",
	webhook.KindBalanceMismatch:    "list-transactions",
	webhook.KindTxBlocked:          "list-transactions",
	webhook.KindTxFailed:           "list-transactions",
	webhook.KindX402Expired:        "list-x402-payments",
	webhook.KindMPPExpired:         "list-mpp-payments",
	live.KindDeliveryFailed:        "list-deliveries",
	// Every person may read the users; owners above all need to see a
	// new one.
	webhook.KindUserAdded: "list-users",
}

// mayRead reports whether p receives it: p may use the kind's read
// operation, and reaches its wallet when that operation is scoped (an
// item about no wallet reaches only unscoped principals).
func mayRead(p auth.Principal, it *live.Item) bool {
	op, ok := streamReads[it.Kind]
	if !ok || auth.Can(p, op) == auth.Refused {
		return false
	}
	if auth.Permissions[op].Wallets && p.Scoped() {
		return it.WalletID != uuid.Nil && p.Reaches(it.WalletID)
	}
	return true
}

// startStreams runs the hub that feeds the streams; the returned func
// stops it (every stream ends).
func (s *server) startStreams() func() {
	s.streams = s.EventStreams.withDefaults()
	if s.DB == nil || s.Redis == nil {
		return func() {}
	}
	s.hub = live.NewHub(s.DB, s.log, s.streams.Recheck)
	s.hub.WatchEvery = s.streams.Heartbeat
	s.leases = &live.Leases{Redis: s.Redis, PerSession: s.streams.PerSession, PerPerson: s.streams.PerPerson,
		PerAccount: s.streams.PerAccount, TTL: 3 * s.streams.Heartbeat}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.hub.Run(ctx) }()
	return func() { cancel(); <-done }
}

// events serves GET /api/dashboard/v1/events: the session's account's
// events as they commit (see docs/decisions/webhooks.md, "Live events").
//
// A request with a body (declared by Content-Length or Transfer-Encoding)
// is 400 and its connection closed: the stream clears the read deadline,
// and net/http would wait, with no deadline, for a body never sent before
// writing the first byte. Only a dashboard session: a request with an
// Authorization header is 401, as the other dashboard routes answer keys.
// Before the stream starts every failure is a plain answer: 429 past a
// cap, 503 when Redis or PostgreSQL cannot serve it. Once it has started
// it ends with an `event: close` naming why (live.Reason*) when the
// session ends, the person's role changes or they are removed, PostgreSQL
// or Redis fails, or the server stops; never with an error status, and
// never hanging.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		// Closing, net/http does not read the body before answering.
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusBadRequest, "the event stream takes no request body")
		return
	}
	if r.Header.Get("Authorization") != "" {
		writeError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	// The stream's request has no deadline (instrument): each step before
	// it starts has its own.
	ctx := r.Context()
	actx, cancel := context.WithTimeout(ctx, authTimeout)
	p, _ := s.session(w, r.WithContext(actx))
	cancel()
	if p == nil {
		return
	}
	if auth.Can(*p, EventsOperation) == auth.Refused {
		e := s.denied(context.WithValue(ctx, principalKey{}, *p), auth.Deny(*p, EventsOperation))
		writeError(w, e.status, e.Message)
		return
	}
	if !s.limitHTTP(w, r, p.ActorID(), ratelimit.Read, true) {
		return
	}
	if s.hub == nil {
		writeError(w, http.StatusServiceUnavailable, "live events are unavailable; poll instead")
		return
	}
	stream, holder := uuid.New(), live.Holder{Session: p.SessionID, Person: p.User, Account: p.AccountID}
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	over, err := s.leases.Acquire(lctx, holder, stream)
	cancel()
	tooMany := func(format string, limit int) {
		w.Header().Set("Retry-After", strconv.Itoa(int(s.streams.Heartbeat.Seconds())))
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf(format, limit))
	}
	switch {
	case err != nil:
		s.log.WarnContext(ctx, "event stream refused: leases unavailable", "err", err)
		writeError(w, http.StatusServiceUnavailable, "live events are unavailable; poll instead")
		return
	case over == live.OverSession:
		tooMany("too many event streams for this session (at most %d): close another tab, or poll", s.streams.PerSession)
		return
	case over == live.OverPerson:
		tooMany("too many event streams for this person (at most %d across their sessions): close another tab, or poll", s.streams.PerPerson)
		return
	case over == live.OverAccount:
		tooMany("too many event streams for this account (at most %d): poll instead", s.streams.PerAccount)
		return
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := s.leases.Release(rctx, holder, stream); err != nil {
			s.log.WarnContext(ctx, "release an event stream's lease (it lapses on its own)", "err", err)
		}
	}()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	sub, err := s.hub.Subscribe(sctx, p.SessionID, p.AccountID, p.Role)
	cancel()
	if err != nil {
		s.log.WarnContext(ctx, "event stream refused: not subscribed", "err", err)
		writeError(w, http.StatusServiceUnavailable, "live events are unavailable; poll instead")
		return
	}
	defer s.hub.Unsubscribe(sub)
	// The session once more: a sign-out or a new role committed since it
	// was read notified the hub before this subscription was there.
	cctx, cancel := context.WithTimeout(ctx, authTimeout)
	err = s.hub.Check(cctx, sub)
	cancel()
	switch {
	case err != nil:
		s.log.WarnContext(ctx, "event stream refused: sessions unavailable", "err", err)
		writeError(w, http.StatusServiceUnavailable, "live events are unavailable; poll instead")
		return
	case sub.Reason() == live.ReasonSessionEnded:
		writeError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}

	// Subscribed (and the account watched) first, then the replay read:
	// nothing committed between them is lost, and what both carry is sent
	// once.
	lastID := cmp.Or(r.Header.Get("Last-Event-ID"), r.URL.Query().Get("last_event_id"))
	var replay []live.Item
	var reset *live.Reset
	if lastID != "" {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		replay, err = live.Replay(qctx, s.DB, p.AccountID, lastID)
		cancel()
		if err != nil && !errors.As(err, &reset) {
			s.log.WarnContext(ctx, "event stream refused: replay unavailable", "err", err)
			writeError(w, http.StatusServiceUnavailable, "live events are unavailable; poll instead")
			return
		}
	}

	rc := http.NewResponseController(w)
	// The server's read and write timeouts bound requests, not streams:
	// a read deadline would cancel the request, the write deadline is
	// set anew for each write. The connection gets a read deadline back
	// when the stream ends (net/http sets its own when it reads another
	// request).
	_ = rc.SetReadDeadline(time.Time{})
	defer func() { _ = rc.SetReadDeadline(time.Now().Add(RequestTimeout)) }()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	out := sseWriter{w: w, rc: rc}
	if out.send(fmt.Sprintf("retry: %d\n\n", streamRetry.Milliseconds())) != nil {
		return
	}
	if reason := sub.Reason(); reason != "" {
		// A new role: the page reconnects and reads with it.
		out.close(reason)
		return
	}
	if reset != nil {
		body, _ := json.Marshal(map[string]string{"reason": reset.Reason})
		if out.send(frame(reset.Latest, "reset", body, true)) != nil {
			return
		}
	}
	sent := make(map[string]bool, len(replay))
	for i := range replay {
		it := &replay[i]
		sent[it.ID] = true
		if mayRead(*p, it) && out.send(frame(it.ID, it.Kind, it.Body, !it.Earlier)) != nil {
			return
		}
	}

	beat := time.NewTicker(s.streams.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case it := <-sub.C():
			if sent[it.ID] {
				delete(sent, it.ID)
				continue
			}
			if mayRead(*p, &it) && out.send(frame(it.ID, it.Kind, it.Body, true)) != nil {
				return
			}
		case <-beat.C:
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := s.leases.Renew(rctx, holder, stream)
			cancel()
			if err != nil {
				s.log.WarnContext(ctx, "event stream ends: its lease could not be renewed", "err", err)
				out.close(live.ReasonUnavailable)
				return
			}
			if out.send(": heartbeat\n\n") != nil {
				return
			}
		case <-sub.Done():
			out.close(sub.Reason())
			return
		case <-s.Draining:
			out.close(live.ReasonShutdown)
			return
		case <-ctx.Done():
			return
		}
	}
}

// frame is one server-sent event; data is JSON on one line. withID false
// leaves the page's last event id as it is.
func frame(id, event string, data []byte, withID bool) string {
	f := ""
	if withID {
		f = "id: " + id + "\n"
	}
	return f + "event: " + event + "\ndata: " + string(data) + "\n\n"
}

// sseWriter writes a stream, each write flushed and bounded by
// streamWriteWait.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (o sseWriter) send(text string) error {
	_ = o.rc.SetWriteDeadline(time.Now().Add(streamWriteWait))
	if _, err := o.w.Write([]byte(text)); err != nil {
		return err
	}
	return o.rc.Flush()
}

// close ends the stream saying why; the page's EventSource reconnects by
// itself (and a session that ended answers it 401).
func (o sseWriter) close(reason string) {
	body, _ := json.Marshal(map[string]string{"reason": reason})
	_ = o.send(frame("", "close", body, false))
}
