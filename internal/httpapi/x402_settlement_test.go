package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/usdc"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

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
	price := usdc.Micros(seller.Price(t, x402test.Weather))
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
