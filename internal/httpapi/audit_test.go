package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/pgtest"
)

// auditReader is who reads the audit log in a test: a key, or a session's
// headers.
type auditReader struct {
	key string
	hdr http.Header
}

// read is every entry r sees for query (without limit or cursor), walked in
// pages of three: every page but the last is full, so nothing is left out
// after the page is cut. It returns the entries and the pages' raw bodies.
func (e *env) readAudit(r auditReader, query string) ([]map[string]any, string) {
	e.t.Helper()
	var all []map[string]any
	var raws strings.Builder
	cursor := ""
	for {
		q := url.Values{"limit": {"3"}}
		if query != "" {
			v, _ := url.ParseQuery(query)
			for k := range v {
				q.Set(k, v.Get(k))
			}
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		status, raw, _ := e.request("GET", "/api/public/v1/audit-log?"+q.Encode(), r.key, nil, r.hdr)
		var body struct {
			Entries    []map[string]any `json:"entries"`
			NextCursor *string          `json:"next_cursor"`
		}
		if err := json.Unmarshal(raw, &body); status != 200 || err != nil {
			e.t.Fatalf("audit log %s: %d %s", q.Encode(), status, raw)
		}
		raws.Write(raw)
		all = append(all, body.Entries...)
		if body.NextCursor == nil {
			return all, raws.String()
		}
		if len(body.Entries) != 3 {
			e.t.Fatalf("a short page (%d entries) before the last: %s", len(body.Entries), raw)
		}
		cursor = *body.NextCursor
	}
}

// Agent keys, scoped or not, read in the audit log only their wallets'
// entries, those wallets' approvals and their own keys (lineage and the
// keys they made): no user.added, no session.*, no other key's key.* or
// refusals, no webhook endpoint's entries, and no person's address (a
// person who decided is "user"); the same for an approval's approved_by.
// An admin key and an owner read all of it.
func TestAuditLog_AgentKeysReadNoPeopleOrOtherKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	in, _ := e.agent(map[string]any{"approval_threshold_usdc": 1}, 10_000_000)
	out, _ := e.agent(nil, 0)
	agentID, agentKey := e.agentKey()
	childID := e.newKey(agentKey, map[string]any{"label": "the agent's own"})["id"].(string)
	sk := e.newKey(e.key, map[string]any{"wallet_ids": []string{in}})
	scopedID, scoped := sk["id"].(string), sk["key"].(string)
	scopedChild := e.newKey(scoped, nil)["id"].(string)

	// Another key's history: made, refused (an entry about that key), rotated.
	otherID, otherKey := e.agentKey()
	if status, _ := e.do("GET", "/api/public/v1/users", otherKey, nil); status != 403 {
		t.Fatalf("users as an agent: %d", status)
	}
	status, rotated := e.do("POST", keysPath+"/"+otherID+"/rotate", otherKey, nil)
	if status != 200 {
		t.Fatalf("rotate: %d %v", status, rotated)
	}
	otherNext := rotated["id"].(string)

	// People: an approver added through the API signs in and decides a
	// payment the agent key asked for.
	w := newTestWallet(t)
	if status, body := e.do("POST", "/api/public/v1/users", e.key, map[string]any{"address": w.address, "role": "approver"}); status != 201 {
		t.Fatalf("add user: %d %v", status, body)
	}
	input := e.challenge()
	msg, sig := w.signIn(t, input)
	status, sess, h := e.verify(input["nonce"], w.address, msg, sig)
	if status != 200 {
		t.Fatalf("sign in: %d %v", status, sess)
	}
	owner := http.Header{"Cookie": {strings.SplitN(h.Get("Set-Cookie"), ";", 2)[0]},
		"X-Csrf-Token": {sess["csrf_token"].(string)}, "Origin": {dashboardOrigin}}
	status, parked := e.do("POST", fmt.Sprintf(sendPath, in), agentKey, map[string]any{"to": newAddress(), "amount": 2})
	if status != http.StatusAccepted {
		t.Fatalf("park: %d %v", status, parked)
	}
	apID := parked["approval_id"].(string)
	status, raw, _ := e.request("POST", approvalsPath+"/"+apID+"/approve", "", map[string]any{"note": "ok"}, owner)
	if status != 200 || !strings.Contains(string(raw), `"approved_by":"user:`+w.address+`"`) {
		t.Fatalf("owner approve: %d %s", status, raw)
	}
	// A webhook endpoint's entry, as the Slack route writes a click from
	// another workspace.
	endpoint, _ := e.createEndpoint(newReceiver(t, nil).URL, "tx.sent")
	if err := audit.Append(t.Context(), e.db, audit.Entry{
		AccountID: e.account.ID,
		At:        time.Now(),
		Actor:     audit.Actor("slack:U0OUTSIDER"),
		Action:    audit.ActionPermissionDenied,
		Target:    "webhook_endpoint:" + endpoint,
		Details:   map[string]any{"operation": "slack-interaction", "approval_id": apID},
	}); err != nil {
		t.Fatal(err)
	}

	targets := func(es []map[string]any) []string {
		var ts []string
		for _, en := range es {
			ts = append(ts, en["action"].(string)+" "+en["target"].(string))
		}
		slices.Sort(ts)
		return ts
	}
	for _, c := range []struct {
		name    string
		key     string
		wallets []string // the wallet: targets it reads
		own     []string // the key: targets it reads
		others  []string // key ids it must not read anywhere
	}{
		{"agent key", agentKey, []string{in, out}, []string{agentID, childID}, []string{otherID, otherNext, scopedID, scopedChild}},
		// (The agent key's send on its wallet names the agent key as actor.)
		{"scoped agent key", scoped, []string{in}, []string{scopedID, scopedChild}, []string{otherID, otherNext, childID, out}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.with(t)
			r := auditReader{key: c.key}
			es, raw := e.readAudit(r, "")
			if len(es) == 0 {
				t.Fatal("no entries")
			}
			for _, en := range es {
				target, action, actor := en["target"].(string), en["action"].(string), en["actor"].(string)
				kind, id, _ := strings.Cut(target, ":")
				switch {
				case kind == "wallet" && slices.Contains(c.wallets, id):
				case kind == "approval" && id == apID:
				case kind == "key" && slices.Contains(c.own, id):
				default:
					t.Errorf("entry %s %s by %s", action, target, actor)
				}
				if strings.HasPrefix(action, "user.") || strings.HasPrefix(action, "session.") ||
					action == audit.ActionPermissionDenied && !slices.Contains(c.own, actor) {
					t.Errorf("entry %s %s by %s", action, target, actor)
				}
			}
			for _, secret := range append([]string{w.address, "U0OUTSIDER", endpoint}, c.others...) {
				if strings.Contains(raw, secret) {
					t.Errorf("the log names %s", secret)
				}
			}
			got := targets(es)
			for _, want := range []string{"approval.approved approval:" + apID, "key.created key:" + c.own[0], "key.created key:" + c.own[1]} {
				if !slices.Contains(got, want) {
					t.Errorf("missing %q in %v", want, got)
				}
			}
			for _, en := range es {
				if en["action"] == audit.ActionApprovalApproved && en["actor"] != "user" {
					t.Errorf("the approver is %v", en["actor"])
				}
			}
			for _, q := range []string{"action=user.added", "action=session.signed_in", "target=user:" + w.address,
				"target=webhook_endpoint:" + endpoint, "target=key:" + otherID, "action=permission.denied"} {
				if es, _ := e.readAudit(r, q); len(es) != 0 {
					t.Errorf("%s: %v", q, es)
				}
			}
			want := []string{"key.created key:" + c.own[0], "key.created key:" + c.own[1]}
			slices.Sort(want)
			if es, _ := e.readAudit(r, "action=key.created"); !slices.Equal(targets(es), want) {
				t.Errorf("key.created: %v", targets(es))
			}
			// The approval names its decider as a person, not which one.
			if status, a := e.do("GET", approvalsPath+"/"+apID, c.key, nil); status != 200 || a["approved_by"] != "user" {
				t.Errorf("approval: %d %v", status, a)
			}
			status, raw2 := e.doRaw("GET", approvalsPath, c.key, nil)
			if status != 200 || strings.Contains(string(raw2), w.address) {
				t.Errorf("approvals: %d %s", status, raw2)
			}
			// Analytics hold no people or keys; the context and the
			// deliveries are the humans'.
			status, raw2 = e.doRaw("GET", "/api/public/v1/analytics", c.key, nil)
			if status != 200 || strings.Contains(string(raw2), w.address) || strings.Contains(string(raw2), "key_") {
				t.Errorf("analytics: %d %s", status, raw2)
			}
			for _, path := range []string{approvalsPath + "/" + apID + "/context", endpointsPath + "/" + endpoint + "/deliveries"} {
				if status, _ := e.do("GET", path, c.key, nil); status != 403 {
					t.Errorf("%s: %d", path, status)
				}
			}
		})
	}

	for name, r := range map[string]auditReader{"admin key": {key: e.key}, "owner": {hdr: owner}} {
		t.Run(name, func(t *testing.T) {
			e := e.with(t)
			es, _ := e.readAudit(r, "")
			got := targets(es)
			for _, want := range []string{
				"user.added user:" + w.address, "session.signed_in user:" + w.address,
				"key.created key:" + otherID, "key.rotated key:" + otherID, "permission.denied key:" + otherID,
				"key.created key:" + scopedID, "key.created key:" + agentID,
				"permission.denied webhook_endpoint:" + endpoint, "wallet.created wallet:" + out,
			} {
				if !slices.Contains(got, want) {
					t.Errorf("missing %q", want)
				}
			}
			for _, en := range es {
				if en["action"] == audit.ActionApprovalApproved && en["actor"] != "user:"+w.address {
					t.Errorf("the approver is %v", en["actor"])
				}
			}
			if es, _ := e.readAudit(r, "action=user.added"); len(es) != 1 {
				t.Errorf("user.added: %v", es)
			}
			status, a, _ := e.request("GET", approvalsPath+"/"+apID, r.key, nil, r.hdr)
			if status != 200 || !strings.Contains(string(a), `"approved_by":"user:`+w.address+`"`) {
				t.Errorf("approval: %d %s", status, a)
			}
		})
	}

	// A rotation keeps the agent's history its own: the successor reads its
	// predecessor's entries and lists it among its keys.
	status, next := e.do("POST", keysPath+"/"+agentID+"/rotate", agentKey, nil)
	if status != 200 {
		t.Fatalf("rotate the agent key: %d %v", status, next)
	}
	es, _ := e.readAudit(auditReader{key: next["key"].(string)}, "action=key.rotated")
	if fmt.Sprint(targets(es)) != fmt.Sprint([]string{"key.rotated key:" + agentID}) {
		t.Fatalf("the successor reads %v", targets(es))
	}
	ks := e.listKeys(next["key"].(string))
	if len(ks) != 3 || ks[agentID] == nil || ks[childID] == nil || ks[next["id"].(string)] == nil {
		t.Fatalf("the successor's keys: %v", ks)
	}
}

// GET /audit-log/verification reads only what was appended since the last
// call (its checkpoint), at most httpapi.MaxVerifyEntries a call: a
// second call over a long chain reads only the new entries. A break after
// the checkpoint is found and stays reported.
func TestAuditLog_VerificationReadsOnlyNewEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	appendN := func(n int) {
		t.Helper()
		_, err := e.db.ExecContext(t.Context(), `SELECT audit_append(gen_random_uuid(), ?, now(), 'system', 'policy.updated',
			'wallet:w', json_build_object('i', i)) FROM generate_series(1, ?) AS i`, e.account.ID, n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := audit.Seal(t.Context(), e.db, e.account.ID); err != nil { // so the test names them by seq
			t.Fatal(err)
		}
	}
	verify := func(from, entries, through int, more, intact bool) map[string]any {
		t.Helper()
		status, body := e.do("GET", "/api/public/v1/audit-log/verification", e.key, nil)
		if status != 200 || body["from_seq"] != float64(from) || body["entries"] != float64(entries) ||
			body["verified_through_seq"] != float64(through) || body["more"] != more || body["intact"] != intact {
			t.Fatalf("verification: %d %v, want from %d, %d entries, through %d, more %v, intact %v", status, body, from, entries, through, more, intact)
		}
		return body
	}
	checkpoint := func() int64 {
		t.Helper()
		var seq int64
		if err := e.db.NewRaw("SELECT seq FROM audit_checkpoints WHERE account_id = ?", e.account.ID).Scan(t.Context(), &seq); err != nil {
			t.Fatal(err)
		}
		return seq
	}
	n := httpapi.MaxVerifyEntries + 500
	appendN(n)
	verify(0, httpapi.MaxVerifyEntries, httpapi.MaxVerifyEntries, true, true)
	verify(httpapi.MaxVerifyEntries, 500, n, false, true)
	if seq := checkpoint(); seq != int64(n) {
		t.Fatalf("checkpoint %d", seq)
	}
	appendN(3)
	verify(n, 3, n+3, false, true)
	verify(n+3, 0, n+3, false, true)

	// An edit after the checkpoint, behind the append-only triggers.
	appendN(4)
	pgtest.BehindTriggers(t, e.db, `UPDATE audit_log SET details = '{"i":0}' WHERE account_id = ? AND seq = ?`, e.account.ID, n+5)
	body := verify(n+3, 2, n+4, false, false)
	if brk := body["first_break"].(map[string]any); brk["seq"] != float64(n+5) || !strings.Contains(brk["problem"].(string), "edited") {
		t.Fatalf("break %v", brk)
	}
	appendN(1)
	body = verify(n+4, 0, n+4, false, false)
	if brk := body["first_break"].(map[string]any); brk["seq"] != float64(n+5) {
		t.Fatalf("the break is no longer reported: %v", body)
	}
}

// A read that cannot seal the log first answers 503 at once, never a 500
// or a partial log; the entries that sealed are there again once the seal
// can run. (An entry at an unhashable time stands in for a seal that
// cannot finish: a lock held past its timeout, the database going away.)
func TestAuditReadsThatCannotSealAre503(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if status, body := e.do("GET", "/api/public/v1/audit-log", e.key, nil); status != 200 {
		t.Fatalf("audit log: %d %v", status, body)
	}
	if _, err := e.db.ExecContext(t.Context(), `SELECT audit_append(gen_random_uuid(), ?, 'infinity', 'system', 'policy.updated', 'wallet:x', '{}'::json)`, e.account.ID); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/public/v1/audit-log", "/api/public/v1/audit-log/verification"} {
		status, body := e.do("GET", path, e.key, nil)
		wantError(t, status, body, http.StatusServiceUnavailable, "audit log could not be brought up to date")
	}
	if _, err := e.db.ExecContext(t.Context(), `ALTER TABLE audit_log DISABLE TRIGGER USER`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ExecContext(t.Context(), `DELETE FROM audit_log WHERE at = 'infinity'`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ExecContext(t.Context(), `ALTER TABLE audit_log ENABLE TRIGGER USER`); err != nil {
		t.Fatal(err)
	}
	if status, body := e.do("GET", "/api/public/v1/audit-log/verification", e.key, nil); status != 200 || body["intact"] != true {
		t.Fatalf("verification after the entry left: %d %v", status, body)
	}
}
