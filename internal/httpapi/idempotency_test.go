package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/payment"
)

// sendOnce sends body to wallet id with Idempotency-Key idem.
func (e *env) sendOnce(id, idem string, body any) (int, []byte, http.Header) {
	e.t.Helper()
	return e.request("POST", fmt.Sprintf(sendPath, id), e.key, body, http.Header{"Idempotency-Key": {idem}})
}

// sameAnswer reports whether replay is the first answer again: the same
// bytes, but for the transaction's current status a replay of a sent
// payment adds.
func sameAnswer(t testing.TB, first, replay []byte) bool {
	t.Helper()
	strip := func(raw []byte) []byte {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
		delete(m, "transaction_status")
		delete(m, "message")
		b, _ := json.Marshal(m)
		return b
	}
	return bytes.Equal(strip(first), strip(replay))
}

// Two identical sends with one key: one transfer on chain, two identical
// answers, the second marked as a replay.
func TestIdempotentSendPaysOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(nil, 10_000_000)
	to := newAddress()
	body := map[string]any{"to": to, "amount": 1.25, "memo": "invoice 7"}
	idem := uuid.NewString()

	s1, b1, h1 := e.sendOnce(id, idem, body)
	if s1 != http.StatusOK || h1.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %s %v", s1, b1, h1)
	}
	s2, b2, h2 := e.sendOnce(id, idem, body)
	if s2 != s1 || !sameAnswer(t, b1, b2) || !bytes.Contains(b2, []byte(`"transaction_status":"pending"`)) || h2.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s (%v), first %d %s", s2, b2, h2, s1, b1)
	}
	// The same amount written differently is the same request.
	s3, b3, _ := e.sendOnce(id, idem, map[string]any{"to": to, "amount": 1.250000, "memo": "invoice 7"})
	if s3 != s1 || !sameAnswer(t, b1, b3) {
		t.Fatalf("replay with 1.250000: %d %s", s3, b3)
	}
	e.wantRows("transactions", 1)
	var sig string
	if err := e.db.NewSelect().Table("transactions").Column("signature").Scan(context.Background(), &sig); err != nil {
		t.Fatal(err)
	}
	e.settle(eng, sig, payment.TxConfirmed)
	if got := e.chainUSDC(to); got != 1_250_000 {
		t.Fatalf("recipient holds %d micro-USDC", got)
	}

	// Another body with the key: 422, nothing recorded.
	requests := e.countRows("send_requests")
	for _, other := range []map[string]any{
		{"to": to, "amount": 1.26, "memo": "invoice 7"},
		{"to": newAddress(), "amount": 1.25, "memo": "invoice 7"},
		{"to": to, "amount": 1.25},
	} {
		status, raw, _ := e.sendOnce(id, idem, other)
		if status != http.StatusUnprocessableEntity || !bytes.Contains(raw, []byte("different request")) {
			t.Fatalf("other body %v: %d %s", other, status, raw)
		}
	}
	// The same key on another wallet is another request too.
	other, _ := e.agent(nil, 0)
	if status, raw, _ := e.sendOnce(other, idem, body); status != http.StatusUnprocessableEntity {
		t.Fatalf("other wallet: %d %s", status, raw)
	}
	e.wantRows("send_requests", requests)
	// Without the key the send is not idempotent (the spec's behaviour).
	for range 2 {
		if status, raw, _ := e.request("POST", fmt.Sprintf(sendPath, id), e.key, body, nil); status != 200 {
			t.Fatalf("plain send: %d %s", status, raw)
		}
	}
	e.wantRows("transactions", 3)
}

// A blocked send replays its 403 with the same reason and figures.
func TestIdempotentBlockedReplays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"max_tx_usdc": 2}, 10_000_000)
	body := map[string]any{"to": newAddress(), "amount": 3}
	s1, b1, _ := e.sendOnce(id, "blocked-1", body)
	s2, b2, h2 := e.sendOnce(id, "blocked-1", body)
	if s1 != 403 || s2 != 403 || !bytes.Equal(b1, b2) || h2.Get("Idempotent-Replayed") != "true" ||
		!bytes.Contains(b1, []byte(`"reason":"exceeds_max_tx"`)) {
		t.Fatalf("blocked replay: %d %s / %d %s %v", s1, b1, s2, b2, h2)
	}
	if ev := e.events("tx.blocked"); len(ev) != 1 {
		t.Fatalf("%d tx.blocked events", len(ev))
	}
}

// While the first request is undecided a repeat is 409; once it was
// cancelled (503, nothing sent) the key is free again and a retry pays.
func TestIdempotentInFlightThenRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{sendWait: 2 * time.Second})
	id, _ := e.agent(nil, 10_000_000)
	body := map[string]any{"to": newAddress(), "amount": 1}

	// No worker: the first waits, then is cancelled.
	first := make(chan int)
	go func() {
		status, _, _ := e.sendOnce(id, "retry-me", body)
		first <- status
	}()
	deadline := time.Now().Add(5 * time.Second)
	for e.countRows("send_requests") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("first request never recorded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	status, raw, _ := e.sendOnce(id, "retry-me", body)
	if status != http.StatusConflict || !bytes.Contains(raw, []byte("in progress")) {
		t.Fatalf("in flight: %d %s", status, raw)
	}
	if s := <-first; s != http.StatusServiceUnavailable {
		t.Fatalf("first without worker: %d", s)
	}
	e.startWorker()
	status, raw, h := e.sendOnce(id, "retry-me", body)
	if status != http.StatusOK || h.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry after 503: %d %s", status, raw)
	}
	e.wantRows("transactions", 1)
}

// Many identical requests at once: one payment; every answer is the
// payment's or 409.
func TestIdempotentConcurrentSends(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(nil, 10_000_000)
	body := map[string]any{"to": newAddress(), "amount": 0.5}
	const n = 12
	var wg sync.WaitGroup
	type answer struct {
		status int
		raw    []byte
	}
	answers := make(chan answer, n)
	for range n {
		wg.Go(func() {
			status, raw, _ := e.sendOnce(id, "race", body)
			answers <- answer{status, raw}
		})
	}
	wg.Wait()
	close(answers)
	var paid []byte
	for a := range answers {
		switch a.status {
		case http.StatusConflict:
		case http.StatusOK:
			if paid != nil && !sameAnswer(t, paid, a.raw) {
				t.Fatalf("two different answers: %s / %s", paid, a.raw)
			}
			paid = a.raw
		default:
			t.Fatalf("answer %d %s", a.status, a.raw)
		}
	}
	if paid == nil {
		t.Fatal("no request answered the payment")
	}
	e.wantRows("transactions", 1)
	// Afterwards the answer is the payment's.
	status, raw, _ := e.sendOnce(id, "race", body)
	if status != 200 || !sameAnswer(t, paid, raw) {
		t.Fatalf("after the race: %d %s", status, raw)
	}
}

// A malformed key is a 422 naming the header; nothing is recorded.
func TestIdempotencyKeyValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.agent(nil, 0)
	body := map[string]any{"to": newAddress(), "amount": 1}
	for _, k := range []string{strings.Repeat("a", 256), "tab\there", "é"} {
		status, raw, _ := e.sendOnce(id, k, body)
		if status != http.StatusUnprocessableEntity || !bytes.Contains(raw, []byte("Idempotency-Key")) {
			t.Fatalf("key %q: %d %s", k, status, raw)
		}
	}
	e.wantRows("send_requests", 0)
}

// Past 24 hours a key starts a new payment.
func TestIdempotencyKeyExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(nil, 10_000_000)
	body := map[string]any{"to": newAddress(), "amount": 1}
	if status, raw, _ := e.sendOnce(id, "daily", body); status != 200 {
		t.Fatalf("first: %d %s", status, raw)
	}
	if _, err := e.db.NewUpdate().Table("send_requests").Set("created_at = created_at - interval '24 hours 1 second'").
		Where("idempotency_key = 'daily'").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Concurrent retries of the expired key: one new payment, the others
	// its replay or 409.
	const n = 6
	var wg sync.WaitGroup
	fresh := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			status, raw, h := e.with(t).sendOnce(id, "daily", body)
			switch {
			case status == 200 && h.Get("Idempotent-Replayed") == "":
				fresh[i] = true
			case status == 200 || status == http.StatusConflict:
			default:
				t.Errorf("after 24 h: %d %s %v", status, raw, h)
			}
		})
	}
	wg.Wait()
	if got := len(slices.DeleteFunc(fresh, func(b bool) bool { return !b })); got != 1 {
		t.Fatalf("%d of %d retries after 24 h paid anew", got, n)
	}
	e.wantRows("transactions", 2)
}

// A parked send holds its key while its approval is open, however old,
// and for 24 hours after the approval is decided: a late retry never parks
// a second approval for the same payment.
func TestIdempotencyKeyHeldWhileApprovalOpen(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 2}, 10_000_000)
	body := map[string]any{"to": newAddress(), "amount": 3}
	status, first, _ := e.sendOnce(id, "parked", body)
	if status != 202 {
		t.Fatalf("first: %d %s", status, first)
	}
	age := func(table, column, by string) {
		t.Helper()
		if _, err := e.db.NewRaw(fmt.Sprintf("UPDATE %s SET %s = %s - interval '%s'", table, column, column, by)).
			Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	age("send_requests", "created_at", "3 days")
	status, again, h := e.sendOnce(id, "parked", body)
	if status != 202 || !bytes.Equal(first, again) || h.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry while the approval is open: %d %s %v", status, again, h)
	}
	var ap map[string]any
	_ = json.Unmarshal(first, &ap)
	if status, body := e.reject(ap["approval_id"].(string), e.key, nil); status != 200 {
		t.Fatalf("reject: %d %v", status, body)
	}
	if status, again, _ := e.sendOnce(id, "parked", body); status != 202 || !bytes.Equal(first, again) {
		t.Fatalf("retry just after the decision: %d %s", status, again)
	}
	age("approvals", "decided_at", "24 hours 1 second")
	status, fresh, h := e.sendOnce(id, "parked", body)
	if status != 202 || bytes.Equal(first, fresh) || h.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry 24 h after the decision: %d %s %v", status, fresh, h)
	}
	e.wantRows("approvals", 2)
}

// One Idempotency-Key value used by two keys scoped to different wallets:
// each key gets its own payment and never hears of the other's (no 422, no
// replay); a key's own repeat, and its rotated successor's, replay its
// answer. A dashboard user's value is its own too.
func TestIdempotencyKey_BelongsToItsCaller(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	w1, _ := e.agent(nil, 10_000_000)
	w2, _ := e.agent(nil, 10_000_000)
	k1 := e.newKey(e.key, map[string]any{"wallet_ids": []string{w1}})
	k2 := e.newKey(e.key, map[string]any{"wallet_ids": []string{w2}})
	idem := uuid.NewString()
	// sendTo sends 1 USDC to `to` from wallet with idem, authenticated by
	// key or by a session's headers.
	sendTo := func(to, key, wallet string, hdr http.Header) (int, map[string]any, string) {
		t.Helper()
		h := http.Header{"Idempotency-Key": {idem}}
		for k, v := range hdr {
			h[k] = v
		}
		status, raw, got := e.request("POST", fmt.Sprintf(sendPath, wallet), key, map[string]any{"to": to, "amount": 1}, h)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		return status, body, got.Get("Idempotent-Replayed")
	}
	to := newAddress()

	s1, b1, r1 := sendTo(to, k1["key"].(string), w1, nil)
	if s1 != http.StatusOK || b1["status"] != "sent" || r1 != "" {
		t.Fatalf("first key: %d %v %q", s1, b1, r1)
	}
	// The squatting attempt in reverse: the other key's value is not
	// visible, it just pays (another body, another wallet).
	s2, b2, r2 := sendTo(newAddress(), k2["key"].(string), w2, nil)
	if s2 != http.StatusOK || b2["status"] != "sent" || r2 != "" || b2["signature"] == b1["signature"] {
		t.Fatalf("second key, same value: %d %v %q (first %v)", s2, b2, r2, b1)
	}
	e.wantRows("transactions", 2)
	// Each key's repeat replays its own answer.
	if s, b, r := sendTo(to, k1["key"].(string), w1, nil); s != http.StatusOK || r != "true" || b["signature"] != b1["signature"] {
		t.Fatalf("first key's replay: %d %v %q", s, b, r)
	}
	// Another body under the first key's value is still 422 for it.
	if s, b, _ := sendTo(newAddress(), k1["key"].(string), w1, nil); s != http.StatusUnprocessableEntity {
		t.Fatalf("first key, other body: %d %v", s, b)
	}
	// A rotated key keeps its predecessor's replays.
	status, rotated := e.do("POST", keysPath+"/"+k1["id"].(string)+"/rotate", e.key, nil)
	if status != http.StatusOK {
		t.Fatalf("rotate: %d %v", status, rotated)
	}
	if s, b, r := sendTo(to, rotated["key"].(string), w1, nil); s != http.StatusOK || r != "true" || b["signature"] != b1["signature"] {
		t.Fatalf("rotated key's replay: %d %v %q", s, b, r)
	}
	// A dashboard user's value is the user's: the same value pays anew.
	owner, _ := e.session(auth.RoleOwner)
	s3, b3, r3 := sendTo(to, "", w1, owner)
	if s3 != http.StatusOK || r3 != "" || b3["signature"] == b1["signature"] {
		t.Fatalf("owner session, same value: %d %v %q", s3, b3, r3)
	}
	if s, b, r := sendTo(to, "", w1, owner); s != http.StatusOK || r != "true" || b["signature"] != b3["signature"] {
		t.Fatalf("owner session's replay: %d %v %q", s, b, r)
	}
	e.wantRows("transactions", 3)
}
