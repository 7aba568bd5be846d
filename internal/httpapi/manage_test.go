package httpapi_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
)

// PATCH /agents/{id}/policy changes only the given fields, validates the
// result like creation, refuses bad input without changing anything, and
// records the before and after.
func TestPatchPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.agent(nil, 0)
	path := "/api/public/v1/agents/" + id + "/policy"

	a := e.patchPolicy(id, map[string]any{"max_tx_usdc": 40.5, "allowlist": []string{addrA}})
	want := withoutRules(map[string]any{"daily_limit_usdc": 100.0, "max_tx_usdc": 40.5, "approval_threshold_usdc": 10.0, "allowlist": []any{addrA}, "allowlist_labels": map[string]any{}})
	if fmt.Sprint(a["policy"]) != fmt.Sprint(want) || a["id"] != id || a["balance"] != nil {
		t.Fatalf("patched %v", a)
	}
	es := e.auditOf(audit.ActionPolicyUpdated)
	if len(es) != 1 || es[0].Actor != "key_"+keyIDOf(t, e, e.key) || es[0].Target != "wallet:"+id {
		t.Fatalf("audit %v", es)
	}
	if d := details(t, es[0]); fmt.Sprint(d["before"]) != fmt.Sprint(withoutRules(map[string]any{"daily_limit_usdc": 100.0, "max_tx_usdc": 25.0, "approval_threshold_usdc": 10.0, "allowlist": []any{}, "allowlist_labels": map[string]any{}})) ||
		fmt.Sprint(d["after"]) != fmt.Sprint(want) {
		t.Fatalf("audit details %v", d)
	}

	// null and omitted keep; [] clears the allowlist.
	a = e.patchPolicy(id, map[string]any{"daily_limit_usdc": nil, "allowlist": []string{}})
	want["allowlist"] = []any{}
	if fmt.Sprint(a["policy"]) != fmt.Sprint(want) {
		t.Fatalf("patched %v", a)
	}
	// A patch that changes nothing writes nothing.
	e.patchPolicy(id, map[string]any{"max_tx_usdc": 40.5})
	if n := len(e.auditOf(audit.ActionPolicyUpdated)); n != 2 {
		t.Fatalf("%d policy.updated entries", n)
	}

	for _, c := range []struct {
		name   string
		body   any
		status int
		want   string
	}{
		{"negative", map[string]any{"daily_limit_usdc": -1}, 422, "daily_limit_usdc"},
		{"too precise", map[string]any{"max_tx_usdc": 1.0000001}, 422, "max_tx_usdc"},
		{"bad address", map[string]any{"allowlist": []string{"nope"}}, 422, "allowlist[0]"},
		{"duplicate address", map[string]any{"allowlist": []string{addrA, addrA}}, 422, "allowlist[1]"},
		{"unknown field", map[string]any{"max_tx": 1}, 422, "max_tx"},
		{"not JSON", "{", 400, "malformed JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := e.with(t).do("PATCH", path, e.key, c.body)
			wantError(t, status, body, c.status, c.want)
		})
	}
	status, got := e.do("GET", "/api/public/v1/agents/"+id, e.key, nil)
	if status != 200 || fmt.Sprint(got["policy"]) != fmt.Sprint(want) {
		t.Fatalf("bad patches changed the policy: %v", got["policy"])
	}

	_, otherKey := e.newAccount("devnet")
	for _, p := range []string{path, "/api/public/v1/agents/not-a-uuid/policy"} {
		status, body := e.do("PATCH", p, otherKey, map[string]any{"max_tx_usdc": 1})
		wantError(t, status, body, 404, "agent not found")
	}
}

// A frozen wallet blocks every send with wallet_frozen (and says so in
// tx.blocked); freezing twice changes nothing; unfreezing restores sends.
// Each change is an audit entry with the before and after.
func TestFreezeUnfreeze(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(nil, 10_000_000)
	to := newAddress()
	freeze := "/api/public/v1/agents/" + id + "/freeze"
	unfreeze := "/api/public/v1/agents/" + id + "/unfreeze"

	for range 2 {
		status, a := e.do("POST", freeze, e.key, nil)
		if status != 200 || a["state"] != "frozen" {
			t.Fatalf("freeze: %d %v", status, a)
		}
	}
	for _, amount := range []float64{1, 50} { // within policy, and over it: frozen comes first
		status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": amount})
		wantError(t, status, body, http.StatusForbidden, "Blocked by policy")
		if body["reason"] != "wallet_frozen" {
			t.Fatalf("reason %v", body)
		}
	}
	if ev := e.events("tx.blocked"); len(ev) != 2 || ev[0]["reason"] != "wallet_frozen" {
		t.Fatalf("tx.blocked %v", ev)
	}
	status, a := e.do("GET", "/api/public/v1/agents/"+id, e.key, nil)
	if status != 200 || a["state"] != "frozen" {
		t.Fatalf("get: %v", a)
	}

	status, a = e.do("POST", unfreeze, e.key, nil)
	if status != 200 || a["state"] != "active" {
		t.Fatalf("unfreeze: %d %v", status, a)
	}
	if status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1}); status != 200 {
		t.Fatalf("send after unfreeze: %d %v", status, body)
	}
	frozen, unfrozen := e.auditOf(audit.ActionWalletFrozen), e.auditOf(audit.ActionWalletUnfrozen)
	if len(frozen) != 1 || len(unfrozen) != 1 {
		t.Fatalf("%d frozen, %d unfrozen entries", len(frozen), len(unfrozen))
	}
	if d := details(t, frozen[0]); d["before"] != "active" || d["after"] != "frozen" || frozen[0].Target != "wallet:"+id {
		t.Fatalf("frozen entry %v", d)
	}
	if d := details(t, unfrozen[0]); d["before"] != "frozen" || d["after"] != "active" {
		t.Fatalf("unfrozen entry %v", d)
	}

	_, otherKey := e.newAccount("devnet")
	for _, p := range []string{freeze, unfreeze} {
		status, body := e.do("POST", p, otherKey, nil)
		wantError(t, status, body, 404, "agent not found")
	}
	if status, a := e.do("GET", "/api/public/v1/agents/"+id, e.key, nil); status != 200 || a["state"] != "active" {
		t.Fatalf("another account changed the state: %v", a)
	}
}

// POST /keys makes a second working key of the same account, shown once
// and stored only as a hash, with an audit entry.
func TestCreateKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, k := e.do("POST", "/api/public/v1/keys", e.key, nil)
	if status != http.StatusCreated || !strings.HasPrefix(k["key"].(string), "svc_test_") || !strings.HasPrefix(k["id"].(string), "key_") ||
		!strings.HasPrefix(k["key"].(string), k["prefix"].(string)) || k["created_at"] == nil {
		t.Fatalf("create key: %d %v", status, k)
	}
	if k["can_approve"] != false {
		t.Fatalf("can_approve %v", k["can_approve"])
	}
	key2 := k["key"].(string)
	if got := "key_" + keyIDOf(t, e, key2); got != k["id"] {
		t.Fatalf("key id %s, answered %v", got, k["id"])
	}
	// Same account: it sees the first key's agents.
	id, _ := e.agent(nil, 0)
	if status, a := e.do("GET", "/api/public/v1/agents", key2, nil); status != 200 || len(a["agents"].([]any)) != 1 ||
		a["agents"].([]any)[0].(map[string]any)["id"] != id {
		t.Fatalf("second key lists %v", a)
	}
	var withPrefix, withKey int
	if err := e.db.QueryRowContext(context.Background(), "SELECT count(*) FILTER (WHERE k.prefix = ?), count(*) FILTER (WHERE strpos(k::text, ?) > 0) FROM api_keys AS k",
		k["prefix"], key2).Scan(&withPrefix, &withKey); err != nil || withPrefix != 1 || withKey != 0 {
		t.Fatalf("keys with its prefix %d, holding its text %d (%v)", withPrefix, withKey, err)
	}
	es := e.auditOf(audit.ActionKeyCreated)
	if len(es) != 1 || es[0].Target != "key:"+k["id"].(string) || strings.Contains(string(es[0].Details), key2) {
		t.Fatalf("audit %v", es)
	}
}

// GET /audit-log pages newest first by cursor, filters by action and
// target, refuses a bad filter or cursor, and shows only the account's
// own entries, each with its chain hashes.
func TestAuditLogRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w1, _ := e.agent(nil, 0)
	w2, _ := e.agent(nil, 0)
	e.patchPolicy(w1, map[string]any{"max_tx_usdc": 1})
	e.patchPolicy(w2, map[string]any{"max_tx_usdc": 2})
	e.patchPolicy(w1, map[string]any{"max_tx_usdc": 3})
	// 5 entries: created w1, created w2, policy w1, policy w2, policy w1.

	var seen []float64
	cursor := ""
	for page := 0; ; page++ {
		q := "/api/public/v1/audit-log?limit=2"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		status, body := e.do("GET", q, e.key, nil)
		if status != 200 {
			t.Fatalf("page %d: %d %v", page, status, body)
		}
		for _, x := range body["entries"].([]any) {
			en := x.(map[string]any)
			seen = append(seen, en["seq"].(float64))
			if len(en["hash"].(string)) != 64 || len(en["prev_hash"].(string)) != 64 || en["details"] == nil {
				t.Fatalf("entry %v", en)
			}
		}
		if body["next_cursor"] == nil {
			break
		}
		cursor = body["next_cursor"].(string)
	}
	if fmt.Sprint(seen) != "[5 4 3 2 1]" {
		t.Fatalf("seqs %v", seen)
	}

	status, body := e.do("GET", "/api/public/v1/audit-log?action=policy.updated&target=wallet:"+w1, e.key, nil)
	entries := body["entries"].([]any)
	if status != 200 || len(entries) != 2 || entries[0].(map[string]any)["seq"] != 5.0 || entries[1].(map[string]any)["seq"] != 3.0 {
		t.Fatalf("filtered: %d %v", status, body)
	}
	first := entries[1].(map[string]any)
	if first["action"] != "policy.updated" || first["target"] != "wallet:"+w1 || !strings.HasPrefix(first["actor"].(string), "key_") {
		t.Fatalf("entry %v", first)
	}

	for _, c := range []struct {
		query, want string
		status      int
	}{
		{"?action=send.everything", "action", 422},
		{"?cursor=MA", "cursor", 400},
		{"?cursor=***", "cursor", 400},
		{"?limit=1000", "limit", 422},
	} {
		status, body := e.do("GET", "/api/public/v1/audit-log"+c.query, e.key, nil)
		wantError(t, status, body, c.status, c.want)
	}

	_, otherKey := e.newAccount("devnet")
	status, body = e.do("GET", "/api/public/v1/audit-log", otherKey, nil)
	if status != 200 || len(body["entries"].([]any)) != 0 {
		t.Fatalf("another account sees %v", body)
	}
}

// GET /audit-log/verification walks the account's chain: intact through
// its last entry; after an entry past that checkpoint is edited in the
// database, broken at that entry and verified through the one before; another account's chain is
// not involved; agent keys are refused.
func TestAuditLogVerification(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := client.New(e.url, e.key, client.WithRetries(0))
	_, otherKey := e.newAccount("devnet")
	empty, err := client.New(e.url, otherKey).VerifyAuditLog(t.Context())
	if err != nil || !empty.Intact || empty.Entries != 0 || empty.VerifiedThrough != 0 || empty.FirstBreak != nil {
		t.Fatalf("empty chain: %+v %v", empty, err)
	}
	w1, _ := e.agent(nil, 0)
	e.patchPolicy(w1, map[string]any{"max_tx_usdc": 1})
	v, err := admin.VerifyAuditLog(t.Context())
	if err != nil || !v.Intact || v.Entries != 2 || v.VerifiedThrough != 2 || v.FirstBreak != nil || v.VerifiedAt.IsZero() {
		t.Fatalf("intact chain: %+v %v", v, err)
	}
	for i := range 3 {
		e.patchPolicy(w1, map[string]any{"max_tx_usdc": i + 2})
	}
	// 5 entries: created w1, four policy updates; verified through 2.

	acct, err := auth.Authenticate(t.Context(), e.db, e.key)
	if err != nil {
		t.Fatal(err)
	}
	// An edit as a database superuser would make it, past the append-only
	// trigger (disabled for this transaction only).
	var edited string
	if _, err := audit.Seal(t.Context(), e.db, acct.AccountID); err != nil {
		t.Fatal(err)
	}
	err = e.db.RunInTx(t.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
			return err
		}
		return tx.NewRaw(`UPDATE audit_log SET details = '{"before":{"max_tx_usdc":1},"after":{"max_tx_usdc":1000}}'::json
			WHERE account_id = ? AND seq = 3 RETURNING id::text`, acct.AccountID).Scan(ctx, &edited)
	})
	if err != nil {
		t.Fatal(err)
	}
	status, body := e.do("GET", "/api/public/v1/audit-log/verification", e.key, nil)
	brk, _ := body["first_break"].(map[string]any)
	if status != 200 || body["intact"] != false || body["verified_through_seq"] != 2.0 || body["from_seq"] != 2.0 || body["entries"] != 1.0 || brk == nil ||
		brk["seq"] != 3.0 || brk["entry_id"] != edited || !strings.Contains(brk["problem"].(string), "edited") {
		t.Fatalf("edited chain: %d %v", status, body)
	}
	if v, err := client.New(e.url, otherKey).VerifyAuditLog(t.Context()); err != nil || !v.Intact {
		t.Fatalf("another account's chain: %+v %v", v, err)
	}

	_, agentKey := e.agentKey()
	scoped := e.newKey(e.key, map[string]any{"wallet_ids": []string{w1}})["key"].(string)
	for name, key := range map[string]string{"agent key": agentKey, "scoped agent key": scoped} {
		t.Run(name, func(t *testing.T) {
			status, body := e.do("GET", "/api/public/v1/audit-log/verification", key, nil)
			wantError(t, status, body, 403, "verify the audit log")
		})
	}
}

// Any cursor, status or action filter or analytics range answers a page or a 4xx with an
// error body, never a 500; the policy patch parser likewise.
func FuzzListQueries(f *testing.F) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, s := range []string{"", b64("1763812800000000_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"), b64("-62135596800000001_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"),
		b64("9223372036854775807_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"), b64("42"), b64("0"), b64("-1"), "%", "\x00", b64("99999999999999999999999")} {
		f.Add(s, "policy.updated", "wallet:x")
	}
	f.Add("", "", "\x00")
	f.Add("", "", "")
	f.Add("2026-01-01", "", "2026-12-31")
	f.Add("0001-01-01", "", "9999-12-31")
	f.Add("", "%_\\", "'; DROP TABLE wallets; --")
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, cursor, action, target string) {
		for _, path := range []string{
			"/api/public/v1/approvals?cursor=" + url.QueryEscape(cursor),
			"/api/public/v1/approvals?status=" + url.QueryEscape(action),
			"/api/public/v1/audit-log?cursor=" + url.QueryEscape(cursor),
			"/api/public/v1/audit-log?action=" + url.QueryEscape(action),
			"/api/public/v1/audit-log?target=" + url.QueryEscape(target),
			"/api/public/v1/analytics?from=" + url.QueryEscape(cursor) + "&to=" + url.QueryEscape(target),
			"/api/public/v1/agents?limit=5&q=" + url.QueryEscape(target),
			"/api/public/v1/wallets?q=" + url.QueryEscape(action) + "&cursor=" + url.QueryEscape(cursor),
		} {
			status, raw := e.with(t).doRaw("GET", path, e.key, nil)
			if status != 200 && (status < 400 || status >= 500 || !strings.Contains(string(raw), `"error"`)) {
				t.Fatalf("%s → %d %s", path, status, raw)
			}
		}
	})
}

func FuzzPatchPolicy(f *testing.F) {
	for _, s := range []string{`{}`, `{"max_tx_usdc":1}`, `{"allowlist":[]}`, `{"allowlist":null}`, `{"daily_limit_usdc":1e999}`, `[]`, `{`, `{"max_tx_usdc":"1"}`,
		`{"allowlist_labels":{}}`, `{"allowlist_labels":null}`, `{"allowlist_labels":{"x":"y"}}`, `{"allowlist_labels":[]}`, `{"allowlist_labels":{"a":1}}`} {
		f.Add(s)
	}
	e := newEnv(f)
	id, _ := e.agent(nil, 0)
	f.Fuzz(func(t *testing.T, body string) {
		status, raw := e.with(t).doRaw("PATCH", "/api/public/v1/agents/"+id+"/policy", e.key, body)
		if status != 200 && (status < 400 || status >= 500 || !strings.Contains(string(raw), `"error"`)) {
			t.Fatalf("%q → %d %s", body, status, raw)
		}
	})
}
