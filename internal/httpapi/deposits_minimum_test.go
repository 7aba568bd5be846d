package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/waitfor"
)

// The account's deposit minimums are read by any key and changed by
// admin keys only (an agent key may not silence tx.received). A deposit
// below the USDC minimum is listed with below_minimum true and reaches
// no endpoint; one at or above it is announced and listed as before.
func TestDeposits_BelowTheMinimumListedNotAnnounced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, pubkey := e.agent(nil, 0)
	hook := newReceiver(t, nil)
	ep, _ := e.createEndpoint(hook.URL, "tx.received")
	e.waitDelivered(e.key, ep)

	const path = "/api/public/v1/account/settings"
	_, agentKey := e.agentKey()
	status, got := e.do("GET", path, agentKey, nil)
	if status != http.StatusOK || got["deposit_min_usdc"] != 0.01 || got["deposit_min_eur"] != 0.01 || got["deposit_min_sol"] != 0.001 {
		t.Fatalf("the default settings: %d %v", status, got)
	}
	if status, got := e.do("PATCH", path, agentKey, map[string]any{"deposit_min_usdc": 1000}); status != http.StatusForbidden {
		t.Fatalf("an agent key raising the minimum: %d %v", status, got)
	}
	if status, got := e.do("PATCH", path, e.key, map[string]any{"deposit_min_usdc": 1.5, "deposit_min_sol": 0.002}); status != http.StatusOK ||
		got["deposit_min_usdc"] != 1.5 || got["deposit_min_sol"] != 0.002 || got["deposit_min_eur"] != 0.01 {
		t.Fatalf("an admin key setting the minimums: %d %v", status, got)
	}
	if status, got := e.do("PATCH", path, e.key, map[string]any{"deposit_min_usdc": -1}); status != http.StatusUnprocessableEntity {
		t.Fatalf("a negative minimum: %d %v", status, got)
	}
	// The one change made is in the audit log, with who made it.
	waitfor.True(t, "the change in the audit log", func() bool {
		_, got := e.do("GET", "/api/public/v1/audit-log?action=account.settings_updated", e.key, nil)
		entries, _ := got["entries"].([]any)
		if len(entries) != 1 {
			return false
		}
		d, _ := entries[0].(map[string]any)["details"].(map[string]any)
		return d["deposit_min_usd"] == 1_500_000.0 && d["deposit_min_sol"] == 2_000_000.0
	})
	e.watchDeposits()

	from := chaintest.NewPayer(t, e.ln, 100_000_000, 2*solana.LamportsPerSOL)
	to := sol.MustPublicKeyFromBase58(pubkey)
	dust := from.TransferUSDC(t, to, 1_000_000)
	paid := from.TransferUSDC(t, to, 2_000_000)

	r := hook.next(t, "tx.received")
	var body struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Data["signature"] != paid {
		t.Fatalf("announced %s, want only %s (at the minimum)", r.Body, paid)
	}
	var txs []any
	waitfor.True(t, "both deposits listed", func() bool {
		_, got := e.do("GET", "/api/public/v1/transactions?direction=receive&wallet_id="+id, e.key, nil)
		txs, _ = got["transactions"].([]any)
		return len(txs) == 2
	})
	for _, x := range txs {
		tx := x.(map[string]any)
		below, listed := tx["below_minimum"]
		switch tx["signature"] {
		case dust:
			if below != true || tx["amount"] != 1.0 {
				t.Fatalf("the deposit below the minimum listed as %v", tx)
			}
		case paid:
			if listed {
				t.Fatalf("the deposit at the minimum listed as %v", tx)
			}
		}
	}
	var n int
	if err := e.db.NewRaw(`SELECT count(*) FROM events WHERE kind = 'tx.received' AND data->>'signature' = ?`, dust).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d tx.received events for the deposit below the minimum", n)
	}
}
