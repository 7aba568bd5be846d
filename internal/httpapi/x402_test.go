package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/usdc"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

const x402Path = "/api/public/v1/agents/%s/x402/pay"

// x402Agent creates an agent with policy p (nil: defaults) holding
// usdcMicros and no SOL: x402 payments need none.
func (e *env) x402Agent(p map[string]any, usdcMicros uint64) (id, pubkey string) {
	e.t.Helper()
	body := map[string]any{"label": "buyer"}
	if p != nil {
		body["policy"] = p
	}
	status, a := e.do("POST", "/api/public/v1/agents", e.key, body)
	if status != http.StatusCreated {
		e.t.Fatalf("create agent: %d %v", status, a)
	}
	id, pubkey = a["id"].(string), a["pubkey"].(string)
	if usdcMicros > 0 {
		e.ln.SetTokenBalance(e.t, pubkey, solana.DevnetUSDCMint.String(), usdcMicros)
	}
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
func TestIssue23X402PayEndToEnd(t *testing.T) {
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
	if r := e.reservedToday(id); r != usdc.Micros(price) {
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
	if r := e.reservedToday(id); r != usdc.Micros(price) {
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
func TestIssue23X402PayPolicy(t *testing.T) {
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
	if n := e.countRows("x402_payments"); n != 0 {
		t.Fatalf("%d payments signed", n)
	}
}

// A challenge naming another network, another asset, or the wallet as
// fee payer is refused with 422 naming why, and nothing is signed; so is
// one over max_usdc.
func TestIssue23X402PayNotPayable(t *testing.T) {
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
	if n := e.countRows("x402_payments"); n != 0 {
		t.Fatalf("%d payments signed", n)
	}
	if n := e.countRows("send_requests"); n != 0 {
		t.Fatalf("%d requests recorded", n)
	}
}

// The same Idempotency-Key answers the first answer again and signs once;
// with another challenge it is refused.
func TestIssue23X402PayIdempotent(t *testing.T) {
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
	if n := e.countRows("x402_payments"); n != 1 {
		t.Fatalf("%d payments signed", n)
	}
	status, body, _ := e.pay(id, seller.Challenge(t, x402test.MemoWeather), nil, hdr)
	if status != 422 || !strings.Contains(fmt.Sprint(body), "Idempotency-Key") {
		t.Fatalf("other body: %d %v", status, body)
	}
}
