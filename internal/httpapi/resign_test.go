package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/localnettest"
)

// Through the API: a send whose first transaction the node dropped is
// signed again after its blockhash expired and lands once; GET
// /transactions shows attempts 2 and the first signature among the
// previous ones; the Idempotency-Key replay keeps its first answer and
// reports the payment confirmed; the audit log has the new attempt.
func TestResign_ThroughTheAPI(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	eng, _ := e.startWorker()
	id, _ := e.agent(nil, 10_000_000)
	to := newAddress()
	ln.SetFaults(t, localnettest.Faults{DropRate: 1})
	body := map[string]any{"to": to, "amount": 2}
	status, raw, _ := e.sendOnce(id, "pay-resign", body)
	var sent map[string]any
	json.Unmarshal(raw, &sent)
	if status != 200 || sent["status"] != "sent" {
		t.Fatalf("send: %d %s", status, raw)
	}
	first := sent["signature"].(string)
	ln.SetFaults(t, localnettest.Faults{})
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})

	var txn map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := eng.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		status, list := e.do("GET", transactionsPath, e.key, nil)
		if status != 200 {
			t.Fatalf("GET /transactions: %d %v", status, list)
		}
		txn = list["transactions"].([]any)[0].(map[string]any)
		if txn["status"] == "confirmed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction %v", txn)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if txn["attempts"] != 2.0 || txn["signature"] == first || fmt.Sprint(txn["previous_signatures"]) != fmt.Sprint([]any{first}) {
		t.Fatalf("transaction %v, first signature %s", txn, first)
	}
	if got := e.chainUSDC(to); got != 2_000_000 {
		t.Fatalf("recipient holds %d, want 2 USDC once", got)
	}
	status, raw, hdr := e.sendOnce(id, "pay-resign", body)
	var replay map[string]any
	json.Unmarshal(raw, &replay)
	if status != 200 || hdr.Get("Idempotent-Replayed") != "true" || replay["signature"] != first || replay["transaction_status"] != "confirmed" {
		t.Fatalf("replay: %d %s", status, raw)
	}
	if ev := e.events("tx.sent"); len(ev) != 1 || ev[0]["signature"] != txn["signature"] {
		t.Fatalf("tx.sent %v", ev)
	}
	if a := e.auditActions(); slices.Index(a, "send.resigned") < 0 || slices.Contains(a, "send.failed") {
		t.Fatalf("audit %v", a)
	}
	status, audit := e.do("GET", "/api/public/v1/audit-log?action=send.resigned", e.key, nil)
	if status != 200 || len(audit["entries"].([]any)) != 1 {
		t.Fatalf("GET /audit-log?action=send.resigned: %d %v", status, audit)
	}
	// A transaction signed once shows attempts 1 and no previous
	// signatures (never null).
	status, raw, _ = e.sendOnce(id, "pay-once", map[string]any{"to": to, "amount": 1})
	json.Unmarshal(raw, &sent)
	if status != 200 {
		t.Fatalf("send: %d %s", status, raw)
	}
	_, list := e.do("GET", transactionsPath, e.key, nil)
	once := list["transactions"].([]any)[0].(map[string]any)
	if once["signature"] != sent["signature"] || once["attempts"] != 1.0 || once["previous_signatures"] == nil || len(once["previous_signatures"].([]any)) != 0 {
		t.Fatalf("transaction signed once %v", once)
	}
}
