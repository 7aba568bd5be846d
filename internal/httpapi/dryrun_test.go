package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// snapshot is every public table's row count and a digest of its rows.
func (e *env) snapshot() map[string]string {
	e.t.Helper()
	ctx := context.Background()
	var tables []string
	if err := e.db.NewRaw(`SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`).Scan(ctx, &tables); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, tb := range tables {
		var n int
		var digest string
		if err := e.db.NewRaw(fmt.Sprintf(`SELECT count(*), coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '')
			FROM %q AS t`, tb)).Scan(ctx, &n, &digest); err != nil {
			e.t.Fatal(err)
		}
		out[tb] = fmt.Sprintf("%d rows %s", n, digest)
	}
	return out
}

// A preview answers what the send then does, and changes no row.
func TestPreviewMatchesSend(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	allowed := newAddress()
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 12, "max_tx_usdc": 8, "approval_threshold_usdc": 5,
		"allowlist": []string{allowed}}, 100_000_000)
	path := fmt.Sprintf(sendPath, id)

	cases := []struct {
		name      string
		body      map[string]any
		outcome   string
		reason    any
		spent     float64
		remaining float64
	}{
		{"sent", map[string]any{"to": allowed, "amount": 4, "memo": "m"}, "sent", nil, 0, 12},
		{"pending approval", map[string]any{"to": allowed, "amount": 5}, "pending_approval", nil, 4, 8},
		{"over max", map[string]any{"to": allowed, "amount": 8.5}, "blocked", "exceeds_max_tx", 4, 8},
		{"not allowed", map[string]any{"to": newAddress(), "amount": 1}, "blocked", "recipient_not_allowed", 4, 8},
		{"sent again", map[string]any{"to": allowed, "amount": 4.9}, "sent", nil, 4, 8},
		{"over the day", map[string]any{"to": allowed, "amount": 3.2}, "blocked", "exceeds_daily_limit", 8.9, 3.1},
	}
	for _, c := range cases {
		before := e.snapshot()
		status, p := e.do("POST", path+"/preview", e.key, c.body)
		if status != http.StatusOK || p["outcome"] != c.outcome || p["reason"] != c.reason ||
			p["spent_today_usdc"] != c.spent || p["remaining_today_usdc"] != c.remaining ||
			p["daily_limit_usdc"] != 12.0 || p["approval_threshold_usdc"] != 5.0 || p["max_tx_usdc"] != 8.0 {
			t.Fatalf("%s: preview %d %v", c.name, status, p)
		}
		after := e.snapshot()
		for tb, v := range before {
			if after[tb] != v {
				t.Fatalf("%s: the preview changed %s: %s → %s", c.name, tb, v, after[tb])
			}
		}

		status, s := e.do("POST", path, e.key, c.body)
		switch c.outcome {
		case "sent":
			if status != 200 || s["status"] != "sent" {
				t.Fatalf("%s: send %d %v", c.name, status, s)
			}
		case "pending_approval":
			if status != 202 || s["status"] != "pending_approval" {
				t.Fatalf("%s: send %d %v", c.name, status, s)
			}
		case "blocked":
			// The 403 carries the preview's reason and remaining.
			if status != 403 || s["error"] != "Blocked by policy" || s["reason"] != c.reason || s["remaining_today_usdc"] != c.remaining {
				t.Fatalf("%s: send %d %v", c.name, status, s)
			}
		}
	}

	// Frozen is the first rule.
	if status, _ := e.do("POST", fmt.Sprintf("/api/public/v1/agents/%s/freeze", id), e.key, nil); status != 200 {
		t.Fatal("freeze")
	}
	if status, p := e.do("POST", path+"/preview", e.key, map[string]any{"to": newAddress(), "amount": 100}); status != 200 || p["reason"] != "wallet_frozen" {
		t.Fatalf("frozen: %d %v", status, p)
	}
}

func TestPreviewRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, pubkey := e.agent(nil, 0)
	_, otherKey := e.newAccount("devnet")
	path := fmt.Sprintf(sendPath, id) + "/preview"
	status, body := e.do("POST", path, otherKey, map[string]any{"to": newAddress(), "amount": 1})
	wantError(t, status, body, http.StatusNotFound, "agent not found")
	status, body = e.do("POST", path, e.key, map[string]any{"to": pubkey, "amount": 1})
	wantError(t, status, body, http.StatusUnprocessableEntity, "sending wallet itself")
	status, body = e.do("POST", path, e.key, map[string]any{"to": newAddress(), "amount": 0})
	wantError(t, status, body, http.StatusUnprocessableEntity, "amount")
	status, body = e.do("POST", path, e.key, map[string]any{"to": newAddress(), "amount": 1.0000001})
	wantError(t, status, body, http.StatusUnprocessableEntity, "amount")
}
