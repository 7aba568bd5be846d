package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

const x402Path = "/api/public/v1/agents/%s/x402/pay"

// x402Agent creates an agent with policy p (nil: defaults) holding
// usdcMicros and no SOL: x402 payments need none.
func (e *env) x402Agent(p map[string]any, usdcMicros uint64) (id, pubkey string) {
	e.t.Helper()
	id, pubkey = e.agent(p, usdcMicros)
	e.ln.SetLamports(e.t, pubkey, 0)
	return id, pubkey
}

// pay asks the service to pay challenge from wallet id.
func (e *env) pay(id string, challenge json.RawMessage, extra map[string]any, hdr http.Header) (int, map[string]any, http.Header) {
	e.t.Helper()
	body := map[string]any{"payment_required": challenge}
	for k, v := range extra {
		body[k] = v
	}
	status, raw, h := e.request("POST", fmt.Sprintf(x402Path, id), e.key, body, hdr)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		e.t.Fatalf("pay: %d %q", status, raw)
	}
	return status, m, h
}

// x402State sweeps until payment id is in state want and returns it.
func (e *env) x402State(eng *payment.Engine, id, want string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := eng.Sweep(context.Background()); err != nil {
			e.t.Fatal(err)
		}
		status, p := e.do("GET", "/api/public/v1/x402/payments/"+id, e.key, nil)
		if status != 200 {
			e.t.Fatalf("get x402 payment: %d %v", status, p)
		}
		if p["state"] == want {
			return p
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("x402 payment %s is %v, want %s", id, p["state"], want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// An agent pays the official seller's challenge through the service: the
// seller's facilitator verifies and settles the signed payment, serves the
// content, the seller's USDC grows by exactly the price, the wallet never
// held SOL, and the sweep finds the landed transaction: settled with its
// on-chain signature, a confirmed transaction of kind x402, and tx.sent.
func TestX402Pay_EndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{})
	id, pub := e.x402Agent(nil, 5_000_000)
	price := seller.Price(t, x402test.Weather)
	before := seller.USDC(t, seller.PayTo)

	status, body, _ := e.pay(id, seller.Challenge(t, x402test.Weather), nil, nil)
	if status != 200 || body["status"] != "signed" || body["header"] != "PAYMENT-SIGNATURE" {
		t.Fatalf("pay: %d %v", status, body)
	}
	if body["pay_to"] != seller.PayTo || body["network"] != seller.Network || body["amount"] != float64(price)/1e6 ||
		!strings.HasSuffix(body["resource"].(string), x402test.Weather) {
		t.Fatalf("pay answer %v", body)
	}
	pid := body["payment_id"].(string)
	if r := e.reservedToday(id); r != money.Micros[money.USD](price) {
		t.Fatalf("reserved %d while signed, want %d", r, price)
	}
	paid := seller.Pay(t, x402test.Weather, body["header"].(string), body["payment_signature"].(string))
	if paid.Status != 200 || paid.Response == nil || !paid.Response.Success {
		t.Fatalf("seller: %d %s %+v (%s)", paid.Status, paid.Body, paid.Response, paid.Error)
	}
	if got := seller.USDC(t, seller.PayTo) - before; got != price {
		t.Fatalf("seller's USDC grew by %d, want %d", got, price)
	}
	if l := seller.Lamports(t, pub); l != 0 {
		t.Fatalf("the wallet holds %d lamports", l)
	}
	p := e.x402State(eng, pid, "settled")
	if p["signature"] != paid.Response.Transaction || p["pay_to"] != seller.PayTo {
		t.Fatalf("settled payment %v, seller's settlement %+v", p, paid.Response)
	}
	if r := e.reservedToday(id); r != money.Micros[money.USD](price) {
		t.Fatalf("reserved %d once settled, want %d", r, price)
	}
	sent := e.events("tx.sent")
	if len(sent) != 1 || sent[0]["kind"] != "x402" || sent[0]["signature"] != paid.Response.Transaction || sent[0]["resource"] != p["resource"] {
		t.Fatalf("tx.sent %v", sent)
	}
	status, list := e.do("GET", "/api/public/v1/transactions?wallet_id="+id, e.key, nil)
	txs, _ := list["transactions"].([]any)
	if status != 200 || len(txs) != 1 || txs[0].(map[string]any)["kind"] != "x402" || txs[0].(map[string]any)["status"] != "confirmed" ||
		txs[0].(map[string]any)["counterparty"] != seller.PayTo || txs[0].(map[string]any)["resource"] != p["resource"] {
		t.Fatalf("transactions %d %v", status, list)
	}
	status, pays := e.do("GET", "/api/public/v1/x402/payments?state=settled&wallet_id="+id, e.key, nil)
	if ps, _ := pays["payments"].([]any); status != 200 || len(ps) != 1 || ps[0].(map[string]any)["id"] != pid {
		t.Fatalf("list %d %v", status, pays)
	}
	// Analytics count it as an x402 payment of the day.
	status, an := e.do("GET", "/api/public/v1/analytics", e.key, nil)
	if sp, _ := an["spend"].([]any); status != 200 || len(sp) != 1 || sp[0].(map[string]any)["x402_payments"] != 1.0 ||
		sp[0].(map[string]any)["x402_amount_usdc"] != float64(price)/1e6 {
		t.Fatalf("analytics %d %v", status, an)
	}
	// Another account does not see it.
	_, other := e.newAccount(solana.Devnet)
	if status, _ := e.do("GET", "/api/public/v1/x402/payments/"+pid, other, nil); status != 404 {
		t.Fatalf("another account's read: %d", status)
	}
}

// The policy applies to the price as to a send to payTo: over max_tx_usdc
// → 403 exceeds_max_tx; payTo outside a non-empty allowlist →
// recipient_not_allowed (with tx.blocked naming the resource); nothing is
// signed.
func TestX402Pay_PolicyApplies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{PremiumPrice: 2_000_000})
	id, _ := e.x402Agent(map[string]any{"max_tx_usdc": 1}, 5_000_000)
	status, body, _ := e.pay(id, seller.Challenge(t, x402test.Premium), nil, nil)
	if status != 403 || body["reason"] != "exceeds_max_tx" {
		t.Fatalf("over max_tx: %d %v", status, body)
	}
	id2, _ := e.x402Agent(map[string]any{"allowlist": []string{newAddress()}}, 5_000_000)
	status, body, _ = e.pay(id2, seller.Challenge(t, x402test.Weather), nil, nil)
	if status != 403 || body["reason"] != "recipient_not_allowed" {
		t.Fatalf("outside allowlist: %d %v", status, body)
	}
	blocked := e.events("tx.blocked")
	if len(blocked) != 2 || blocked[1]["kind"] != "x402" || blocked[1]["to"] != seller.PayTo {
		t.Fatalf("tx.blocked %v", blocked)
	}
	e.wantRows("x402_payments", 0)
}

// A challenge naming another network, another asset, or the wallet as
// fee payer is refused with 422 naming why, and nothing is signed; so is
// one over max_usdc.
func TestX402Pay_NotPayableIs422(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{})
	id, pub := e.x402Agent(nil, 5_000_000)
	base := seller.Challenge(t, x402test.Weather)
	edit := func(f func(entry map[string]any)) json.RawMessage {
		var c map[string]any
		if err := json.Unmarshal(base, &c); err != nil {
			t.Fatal(err)
		}
		f(c["accepts"].([]any)[0].(map[string]any))
		raw, _ := json.Marshal(c)
		return raw
	}
	for _, tc := range []struct {
		name, want string
		challenge  json.RawMessage
		extra      map[string]any
	}{
		{"network", "network", edit(func(a map[string]any) { a["network"] = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" }), nil},
		{"asset", "asset", edit(func(a map[string]any) { a["asset"] = newAddress() }), nil},
		{"fee payer", "fee_payer_is_wallet", edit(func(a map[string]any) { a["extra"].(map[string]any)["feePayer"] = pub }), nil},
		{"scheme", "scheme", edit(func(a map[string]any) { a["scheme"] = "upto" }), nil},
		{"over max", "amount_over_max", base, map[string]any{"max_usdc": 0.001}},
		{"shape", "payment_required", json.RawMessage(`{"x402Version":3,"accepts":[]}`), nil},
	} {
		status, body, _ := e.pay(id, tc.challenge, tc.extra, nil)
		if status != 422 || !strings.Contains(fmt.Sprint(body), tc.want) {
			t.Fatalf("%s: %d %v", tc.name, status, body)
		}
	}
	e.wantRows("x402_payments", 0)
	if n := e.countRows("send_requests"); n != 0 {
		t.Fatalf("%d requests recorded", n)
	}
}

// The same Idempotency-Key answers the first answer again and signs once;
// with another challenge it is refused.
func TestX402Pay_Idempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{})
	id, _ := e.x402Agent(nil, 5_000_000)
	challenge := seller.Challenge(t, x402test.Weather)
	hdr := http.Header{"Idempotency-Key": {"x402-key-1"}}
	var wg sync.WaitGroup
	answers := make([]map[string]any, 5)
	statuses := make([]int, 5)
	for i := range answers {
		wg.Go(func() { statuses[i], answers[i], _ = e.pay(id, challenge, nil, hdr) })
	}
	wg.Wait()
	var first map[string]any
	for i, a := range answers {
		switch statuses[i] {
		case 200:
			if first == nil {
				first = a
			} else if a["payment_signature"] != first["payment_signature"] || a["payment_id"] != first["payment_id"] {
				t.Fatalf("two answers: %v / %v", first, a)
			}
		case 409:
		default:
			t.Fatalf("%d %v", statuses[i], a)
		}
	}
	status, again, h := e.pay(id, challenge, nil, hdr)
	if status != 200 || h.Get("Idempotent-Replayed") != "true" || again["payment_signature"] != first["payment_signature"] {
		t.Fatalf("replay: %d %v", status, again)
	}
	e.wantRows("x402_payments", 1)
	status, body, _ := e.pay(id, seller.Challenge(t, x402test.MemoWeather), nil, hdr)
	if status != 422 || !strings.Contains(fmt.Sprint(body), "Idempotency-Key") {
		t.Fatalf("other body: %d %v", status, body)
	}
}

// fakeChallenge is a v2 devnet challenge of amount atomic USDC to a fresh
// seller: enough to select, sign or park (no seller settles it).
func fakeChallenge(amount string) map[string]any {
	return map[string]any{"x402Version": 2, "resource": map[string]any{"url": "https://example.com/r", "description": "a test resource"},
		"accepts": []any{map[string]any{"scheme": "exact", "network": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "amount": amount,
			"asset": solana.DevnetUSDCMint.String(), "payTo": newAddress(), "maxTimeoutSeconds": 60,
			"extra": map[string]any{"feePayer": newAddress()}}}}
}

// parkX402 asks key to pay 2 USDC from wallet w, whose approval threshold
// is below it: the payment's id (pending_approval).
func (e *env) parkX402(key, w string) string {
	e.t.Helper()
	status, body := e.do("POST", fmt.Sprintf(x402Path, w), key, map[string]any{"payment_required": fakeChallenge("2000000")})
	if status != http.StatusAccepted || body["payment_id"] == nil {
		e.t.Fatalf("park x402: %d %v", status, body)
	}
	return body["payment_id"].(string)
}

// Sends and x402 payments share one daily budget under the wallet's lock:
// 5 x402 payments of 1 USDC are signed first, then 50 concurrent attempts
// of 1 USDC each, half of each kind, against a limit of 10 USDC: exactly 5
// more go through, whichever kind, and the rest are blocked. (Were the
// budgets apart, the sends alone would pass 10.) Which kind of the 50 is
// decided first is up to the scheduler: sends, cheaper to read, often all
// reach the queue first.
func TestX402Pay_SharesTheDailyLimitWithSends(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 10, "max_tx_usdc": 10, "approval_threshold_usdc": 1000}, 100_000_000)
	to := newAddress()
	for range 5 {
		status, body := e.do("POST", fmt.Sprintf(x402Path, id), e.key, map[string]any{"payment_required": fakeChallenge("1000000")})
		if status != 200 || body["status"] != "signed" {
			t.Fatalf("x402 within the limit: %d %v", status, body)
		}
	}
	counts := tally(50, retried(func(i int) (int, map[string]any) {
		if i%2 == 0 {
			return e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1})
		}
		return e.do("POST", fmt.Sprintf(x402Path, id), e.key, map[string]any{"payment_required": fakeChallenge("1000000")})
	}), func(status int, body map[string]any) string {
		switch {
		case status == 200 && (body["status"] == "sent" || body["status"] == "signed"):
			return "passed"
		case status == 403 && body["reason"] == "exceeds_daily_limit":
			return "blocked"
		}
		return ""
	})
	if counts["passed"] != 5 || counts["blocked"] != 45 || len(counts) != 2 {
		t.Fatalf("outcomes %v", counts)
	}
	if r := e.reservedToday(id); r != 10_000_000 {
		t.Fatalf("reserved %d", r)
	}
}

// A signed payment never presented to the seller keeps its reservation
// while its blockhash may still land; once the chain is past it, the
// sweep releases the reservation, ends it expired and emits x402.expired.
func TestX402Pay_UnsettledExpires(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	eng, _ := e.startWorker()
	seller := x402test.Start(t, ln.URL, x402test.Options{})
	id, _ := e.x402Agent(nil, 5_000_000)
	status, body, _ := e.pay(id, seller.Challenge(t, x402test.Weather), nil, nil)
	if status != 200 || body["status"] != "signed" {
		t.Fatalf("pay: %d %v", status, body)
	}
	pid := body["payment_id"].(string)
	price := money.Micros[money.USD](seller.Price(t, x402test.Weather))
	if _, err := eng.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	status, p := e.do("GET", "/api/public/v1/x402/payments/"+pid, e.key, nil)
	if status != 200 || p["state"] != "signed" || e.reservedToday(id) != price {
		t.Fatalf("before expiry: %d %v, reserved %d", status, p, e.reservedToday(id))
	}
	if ev := e.events("x402.expired"); len(ev) != 0 {
		t.Fatalf("x402.expired before expiry: %v", ev)
	}
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	p = e.x402State(eng, pid, "expired")
	if p["signature"] != nil || p["error"] == nil {
		t.Fatalf("expired payment %v", p)
	}
	if r := e.reservedToday(id); r != 0 {
		t.Fatalf("reserved %d after expiry", r)
	}
	ev := e.events("x402.expired")
	if len(ev) != 1 || ev[0]["payment_id"] != pid || ev[0]["pay_to"] != seller.PayTo {
		t.Fatalf("x402.expired %v", ev)
	}
	// Presented now, the seller's facilitator refuses it: nothing moves.
	before := seller.USDC(t, seller.PayTo)
	if paid := seller.Pay(t, x402test.Weather, body["header"].(string), body["payment_signature"].(string)); paid.Status == 200 {
		t.Fatalf("an expired payment was served: %+v", paid)
	}
	if got := seller.USDC(t, seller.PayTo); got != before {
		t.Fatalf("seller's USDC moved: %d → %d", before, got)
	}
}

// A price at the approval threshold parks the payment (approval.pending
// with the resource and the seller's description); a human's approval
// grants it: the agent pays the seller's fresh challenge with approval_id,
// once, bound to the approved resource; the policy holds at that moment.
func TestX402Pay_ApprovalGrantsOnePayment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: 1_000_000, PremiumPrice: 1_000_000})
	id, _ := e.x402Agent(map[string]any{"approval_threshold_usdc": 1}, 5_000_000)
	_, key := e.agentKey()
	agent := *e
	agent.key = key

	status, body, _ := agent.pay(id, seller.Challenge(t, x402test.Weather), nil, nil)
	if status != 202 || body["status"] != "pending_approval" || body["payment_id"] == nil {
		t.Fatalf("pay at the threshold: %d %v", status, body)
	}
	apID, parked := body["approval_id"].(string), body["payment_id"].(string)
	pending := e.events("approval.pending")
	if len(pending) != 1 || pending[0]["kind"] != "x402" || pending[0]["description"] != "Weather report" ||
		!strings.HasSuffix(pending[0]["resource"].(string), x402test.Weather) {
		t.Fatalf("approval.pending %v", pending)
	}
	if status, a := e.do("GET", approvalsPath+"/"+apID, e.key, nil); status != 200 || a["kind"] != "x402" || a["description"] != "Weather report" ||
		a["to"] != seller.PayTo || a["amount"] != 1.0 || !strings.HasSuffix(a["resource"].(string), x402test.Weather) {
		t.Fatalf("the approval: %d %v", status, a)
	}
	if status, p := e.do("GET", "/api/public/v1/x402/payments/"+parked, key, nil); status != 200 || p["state"] != "pending_approval" {
		t.Fatalf("parked: %d %v", status, p)
	}
	// Not approved yet: the grant cannot be used.
	status, body, _ = agent.pay(id, seller.Challenge(t, x402test.Weather), map[string]any{"approval_id": apID}, nil)
	if status != 422 || !strings.Contains(body["error"].(string), "not approved") {
		t.Fatalf("before approval: %d %v", status, body)
	}
	if status, a := e.approve(apID, e.key, nil); status != 200 || a["status"] != "sent" {
		t.Fatalf("approve: %d %v", status, a)
	}
	if status, p := e.do("GET", "/api/public/v1/x402/payments/"+parked, key, nil); status != 200 || p["state"] != "approved" {
		t.Fatalf("granted: %d %v", status, p)
	}
	e.wantRows("x402_payments", 0)
	// Another resource is not what was approved.
	status, body, _ = agent.pay(id, seller.Challenge(t, x402test.Premium), map[string]any{"approval_id": apID}, nil)
	if status != 422 || !strings.Contains(body["error"].(string), "resource") {
		t.Fatalf("another resource: %d %v", status, body)
	}
	// The policy is evaluated again when the grant is used: frozen, refused.
	if status, b := e.do("POST", "/api/public/v1/agents/"+id+"/freeze", e.key, nil); status != 200 {
		t.Fatalf("freeze: %d %v", status, b)
	}
	status, body, _ = agent.pay(id, seller.Challenge(t, x402test.Weather), map[string]any{"approval_id": apID}, nil)
	if status != 403 || body["reason"] != "wallet_frozen" {
		t.Fatalf("frozen: %d %v", status, body)
	}
	if status, b := e.do("POST", "/api/public/v1/agents/"+id+"/unfreeze", e.key, nil); status != 200 {
		t.Fatalf("unfreeze: %d %v", status, b)
	}
	before := seller.USDC(t, seller.PayTo)
	status, body, _ = agent.pay(id, seller.Challenge(t, x402test.Weather), map[string]any{"approval_id": apID}, nil)
	if status != 200 || body["status"] != "signed" {
		t.Fatalf("redeem: %d %v", status, body)
	}
	paid := seller.Pay(t, x402test.Weather, body["header"].(string), body["payment_signature"].(string))
	if paid.Status != 200 || seller.USDC(t, seller.PayTo)-before != 1_000_000 {
		t.Fatalf("seller: %d %s (%s)", paid.Status, paid.Body, paid.Error)
	}
	paidID := body["payment_id"].(string)
	p := e.x402State(eng, paidID, "settled")
	if p["approval_id"] != apID {
		t.Fatalf("redeemed payment %v", p)
	}
	status, body, _ = agent.pay(id, seller.Challenge(t, x402test.Weather), map[string]any{"approval_id": apID}, nil)
	if status != 422 || !strings.Contains(body["error"].(string), "already used") {
		t.Fatalf("second use: %d %v", status, body)
	}
	e.wantRows("x402_payments", 1)
	// The parked payment names the payment that used its grant, and stays
	// approved after the grant's lifetime.
	e.backdateDecision(apID, 16*time.Minute)
	if status, p := e.do("GET", "/api/public/v1/x402/payments/"+parked, key, nil); status != 200 || p["state"] != "approved" || p["paid_by"] != paidID {
		t.Fatalf("used grant: %d %v", status, p)
	}
}

// A grant not used within its lifetime lapses: the parked payment reads
// expired (and is listed so), and the grant no longer pays.
func TestX402Pay_GrantLapses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: 1_000_000, PremiumPrice: 1_000_000})
	id, _ := e.x402Agent(map[string]any{"approval_threshold_usdc": 1}, 5_000_000)
	_, key := e.agentKey()
	agent := *e
	agent.key = key
	status, body, _ := agent.pay(id, seller.Challenge(t, x402test.Weather), nil, nil)
	if status != 202 {
		t.Fatalf("pay at the threshold: %d %v", status, body)
	}
	apID, parked := body["approval_id"].(string), body["payment_id"].(string)
	if status, a := e.approve(apID, e.key, nil); status != 200 {
		t.Fatalf("approve: %d %v", status, a)
	}
	e.backdateDecision(apID, 14*time.Minute)
	if status, p := e.do("GET", "/api/public/v1/x402/payments/"+parked, key, nil); status != 200 || p["state"] != "approved" || p["paid_by"] != nil {
		t.Fatalf("within the grant: %d %v", status, p)
	}
	e.backdateDecision(apID, 2*time.Minute) // 16 minutes ago
	if status, p := e.do("GET", "/api/public/v1/x402/payments/"+parked, key, nil); status != 200 || p["state"] != "expired" || p["paid_by"] != nil {
		t.Fatalf("lapsed: %d %v", status, p)
	}
	if status, l := e.do("GET", "/api/public/v1/x402/payments?state=expired", key, nil); status != 200 || len(l["payments"].([]any)) != 1 {
		t.Fatalf("listed expired: %d %v", status, l)
	}
	status, body, _ = agent.pay(id, seller.Challenge(t, x402test.Weather), map[string]any{"approval_id": apID}, nil)
	if status != 422 || !strings.Contains(body["error"].(string), "more than 15m0s ago") {
		t.Fatalf("a lapsed grant: %d %v", status, body)
	}
	e.wantRows("x402_payments", 0)
}

// backdateDecision moves the approval's decision back by d.
func (e *env) backdateDecision(apID string, d time.Duration) {
	e.t.Helper()
	aid, ok := approval.ParseID(apID)
	if !ok {
		e.t.Fatalf("approval id %q", apID)
	}
	if _, err := e.db.ExecContext(context.Background(), "UPDATE approvals SET decided_at = decided_at - ? * interval '1 second' WHERE id = ?",
		int(d/time.Second), aid); err != nil {
		e.t.Fatal(err)
	}
}

// The Go client's x402 methods against the service and the official
// seller: pay, use the header, read the payment back settled, list it.
func TestX402Pay_GoClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{})
	id, _ := e.x402Agent(nil, 5_000_000)
	ctx := context.Background()
	c := client.New(e.url, e.key, client.WithRetries(0))

	_, err := c.X402Pay(ctx, id, client.X402PayRequest{PaymentRequired: seller.Challenge(t, x402test.Weather), MaxUSDC: "0.001"})
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 422 || !strings.Contains(apiErr.Message, "amount_over_max") && !strings.Contains(fmt.Sprint(apiErr.Details), "amount_over_max") {
		t.Fatalf("over max_usdc: %v", err)
	}
	r, err := c.X402Pay(ctx, id, client.X402PayRequest{PaymentRequired: seller.Challenge(t, x402test.Weather), MaxUSDC: "0.05"})
	if err != nil || r.Status != "signed" || r.Header != "PAYMENT-SIGNATURE" || r.PayTo != seller.PayTo || r.Amount.String() != "0.01" {
		t.Fatalf("pay: %+v %v", r, err)
	}
	// The seller's challenge is the same bytes again: a replay.
	again, err := c.X402Pay(ctx, id, client.X402PayRequest{PaymentRequired: seller.Challenge(t, x402test.Weather), MaxUSDC: "0.05", IdempotencyKey: r.IdempotencyKey})
	if err != nil || !again.Replayed || again.PaymentSignature != r.PaymentSignature || again.PaymentID != r.PaymentID {
		t.Fatalf("replay: %+v %v", again, err)
	}
	if paid := seller.Pay(t, x402test.Weather, r.Header, r.PaymentSignature); paid.Status != 200 {
		t.Fatalf("seller: %d %s", paid.Status, paid.Body)
	}
	e.x402State(eng, r.PaymentID, "settled")
	p, err := c.GetX402Payment(ctx, r.PaymentID)
	if err != nil || p.State != "settled" || p.Signature == nil || p.Resource != r.Resource {
		t.Fatalf("get: %+v %v", p, err)
	}
	list, next, err := c.ListX402Payments(ctx, client.X402Filter{WalletID: id, State: "settled"})
	if err != nil || len(list) != 1 || list[0].ID != r.PaymentID || next != "" {
		t.Fatalf("list: %+v %q %v", list, next, err)
	}
}

// x402 v1: the 402's JSON body as the challenge, X-PAYMENT as the header;
// the official seller serves it and the sweep settles it.
func TestX402Pay_V1(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{})
	id, _ := e.x402Agent(nil, 5_000_000)
	before := seller.USDC(t, seller.PayTo)
	status, body, _ := e.pay(id, seller.Challenge(t, x402test.V1Weather), nil, nil)
	if status != 200 || body["header"] != "X-PAYMENT" || body["network"] != seller.NetworkV1 {
		t.Fatalf("pay: %d %v", status, body)
	}
	paid := seller.Pay(t, x402test.V1Weather, body["header"].(string), body["payment_signature"].(string))
	if paid.Status != 200 || seller.USDC(t, seller.PayTo)-before != seller.Price(t, x402test.V1Weather) {
		t.Fatalf("seller: %d %s (%s)", paid.Status, paid.Body, paid.Error)
	}
	if p := e.x402State(eng, body["payment_id"].(string), "settled"); p["signature"] != paid.Response.Transaction {
		t.Fatalf("settled %v, seller %+v", p, paid.Response)
	}
}

// A seller's memo with a direction override, a newline or NUL is refused
// at once with 422 naming extra.memo and the character, before anything
// is recorded or signed; the same challenge with its memo as the seller
// sent it is paid.
func TestX402Pay_MemoWithControlOrFormatCharacterIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	seller := x402test.Start(t, e.ln.URL, x402test.Options{Memo: "order 42"})
	id, _ := e.x402Agent(nil, 5_000_000)
	base := seller.Challenge(t, x402test.MemoWeather)
	withMemo := func(memo string) json.RawMessage {
		var c map[string]any
		if err := json.Unmarshal(base, &c); err != nil {
			t.Fatal(err)
		}
		c["accepts"].([]any)[0].(map[string]any)["extra"].(map[string]any)["memo"] = memo
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	for _, tc := range []struct{ name, memo, char string }{
		{"right-to-left override", "order \u202e24", "U+202E"},
		{"newline", "order 42\nPaid in full", "U+000A"},
		{"NUL", "order\x0042", "U+0000"},
	} {
		start := time.Now()
		status, body, _ := e.pay(id, withMemo(tc.memo), nil, nil)
		took := time.Since(start)
		msg, _ := body["error"].(string)
		if status != 422 || !strings.Contains(msg, "extra.memo") || !strings.Contains(msg, tc.char) {
			t.Fatalf("%s: %d %v", tc.name, status, body)
		}
		if took > time.Second {
			t.Fatalf("%s: answered after %s", tc.name, took)
		}
	}
	e.wantRows("send_requests", 0)
	if n := e.countRows("x402_payments"); n != 0 {
		t.Fatalf("%d payments signed", n)
	}
	if status, body, _ := e.pay(id, base, nil, nil); status != 200 || body["status"] != "signed" {
		t.Fatalf("the seller's own memo: %d %v", status, body)
	}
}

// An x402 payment the seller settled while the node's history backend
// lags from a slot before it (getSignaturesForAddress leaves it out and
// refuses a later minContextSlot, getTransaction null, the height
// current), for longer than its blockhash lives: no sweep expires it or
// releases its reservation; once the node catches up it ends settled with
// the seller's signature, and tx.sent, never x402.expired.
func TestX402_LandedPaymentIsNotExpiredWhileTheNodeLags(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	eng, _ := e.startWorker()
	seller := x402test.Start(t, ln.URL, x402test.Options{})
	id, _ := e.x402Agent(nil, 5_000_000)
	price := money.Micros[money.USD](seller.Price(t, x402test.Weather))
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 1})
	var stuck uint64
	ln.Call(t, &stuck, "getSlot")
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 1})

	status, body, _ := e.pay(id, seller.Challenge(t, x402test.Weather), nil, nil)
	if status != http.StatusOK || body["status"] != "signed" {
		t.Fatalf("pay: %d %v", status, body)
	}
	pid := body["payment_id"].(string)
	paid := seller.Pay(t, x402test.Weather, body["header"].(string), body["payment_signature"].(string))
	if paid.Status != http.StatusOK || paid.Response == nil || !paid.Response.Success {
		t.Fatalf("seller: %d %s %+v (%s)", paid.Status, paid.Body, paid.Response, paid.Error)
	}
	ln.SetFaults(t, localnettest.Faults{HistorySlot: &stuck})

	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	for i := range 5 {
		if _, err := eng.Sweep(context.Background()); err != nil {
			t.Fatalf("sweep %d: %v", i, err)
		}
		status, p := e.do("GET", "/api/public/v1/x402/payments/"+pid, e.key, nil)
		if status != http.StatusOK || p["state"] != "signed" {
			t.Fatalf("sweep %d while the node lags: %d %v", i, status, p)
		}
		if r := e.reservedToday(id); r != price {
			t.Fatalf("sweep %d: reserved %d, want %d", i, r, price)
		}
		ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 200})
	}

	ln.SetFaults(t, localnettest.Faults{})
	p := e.x402State(eng, pid, "settled")
	if p["signature"] != paid.Response.Transaction {
		t.Fatalf("settled as %v, the seller's settlement is %s", p["signature"], paid.Response.Transaction)
	}
	if r := e.reservedToday(id); r != price {
		t.Fatalf("reserved %d once settled, want %d", r, price)
	}
	if ev := e.events("x402.expired"); len(ev) != 0 {
		t.Fatalf("x402.expired %v", ev)
	}
	if sent := e.events("tx.sent"); len(sent) != 1 || sent[0]["signature"] != paid.Response.Transaction {
		t.Fatalf("tx.sent %v", sent)
	}
}

// An official seller pricing in PYUSD (Token-2022) is paid under the
// policy: the payment counts under the USD limits, its transfer goes
// through Token-2022, the seller's facilitator settles it, and the
// payment and its transaction name PYUSD. A wallet whose policy does not
// list PYUSD finds the challenge not payable.
func TestX402Pay_InPYUSDUnderThePolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	pyusd, _ := asset.Defaults().Find(solana.Devnet, "PYUSD")
	seller := x402test.Start(t, e.ln.URL, x402test.Options{Asset: pyusd.Mint.String()})
	price := seller.Price(t, x402test.Weather)

	id, pub := e.x402Agent(nil, 0)
	e.ln.SetTokenBalance(t, pub, pyusd.Mint.String(), 5_000_000)
	status, body, _ := e.pay(id, seller.Challenge(t, x402test.Weather), nil, nil)
	if status != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(body), "asset") {
		t.Fatalf("PYUSD challenge, policy without PYUSD: %d %v", status, body)
	}

	if status, body := e.do("PATCH", "/api/public/v1/agents/"+id+"/policy", e.key, map[string]any{"assets": []string{"USDC", "PYUSD"}}); status != 200 {
		t.Fatalf("allow PYUSD: %d %v", status, body)
	}
	before := seller.USDC(t, seller.PayTo) // the seller's holding of its asset: PYUSD
	status, body, _ = e.pay(id, seller.Challenge(t, x402test.Weather), nil, nil)
	if status != 200 || body["status"] != "signed" {
		t.Fatalf("pay: %d %v", status, body)
	}
	if r := e.reservedToday(id); r != money.Micros[money.USD](price) {
		t.Fatalf("reserved %d USD while signed, want %d", r, price)
	}
	pid := body["payment_id"].(string)
	paid := seller.Pay(t, x402test.Weather, body["header"].(string), body["payment_signature"].(string))
	if paid.Status != 200 || paid.Response == nil || !paid.Response.Success {
		t.Fatalf("seller: %d %s %+v (%s)", paid.Status, paid.Body, paid.Response, paid.Error)
	}
	if got := seller.USDC(t, seller.PayTo) - before; got != price {
		t.Fatalf("the seller's PYUSD grew by %d, want %d", got, price)
	}
	if ps := e.ln.Programs(t, paid.Response.Transaction); !slices.Contains(ps, sol.Token2022ProgramID.String()) {
		t.Fatalf("the landed payment has no Token-2022 instruction: %v", ps)
	}
	e.x402State(eng, pid, "settled")
	status, list := e.do("GET", "/api/public/v1/transactions?wallet_id="+id+"&asset=PYUSD", e.key, nil)
	txs, _ := list["transactions"].([]any)
	if status != 200 || len(txs) != 1 || txs[0].(map[string]any)["kind"] != "x402" || txs[0].(map[string]any)["asset"] != "PYUSD" {
		t.Fatalf("transactions %d %v", status, list)
	}
	// The payment names its asset, and the list selects by it.
	for q, want := range map[string]int{"pyusd": 1, "PYUSD": 1, "USDC": 0} {
		status, list = e.do("GET", "/api/public/v1/x402/payments?wallet_id="+id+"&asset="+q, e.key, nil)
		ps, _ := list["payments"].([]any)
		if status != 200 || len(ps) != want {
			t.Fatalf("x402 payments of %s: %d %v, want %d", q, status, list, want)
		}
		if want == 1 && (ps[0].(map[string]any)["asset"] != "PYUSD" || ps[0].(map[string]any)["amount"] != float64(price)/1e6) {
			t.Fatalf("x402 payment %v, want %d base units of PYUSD", ps[0], price)
		}
	}
	if r := e.reservedToday(id); r != money.Micros[money.USD](price) {
		t.Fatalf("reserved %d USD once settled, want %d", r, price)
	}
}
