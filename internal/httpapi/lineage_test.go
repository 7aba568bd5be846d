package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
)

const usersPath = "/api/public/v1/users"

// as sends a request with a dashboard session's headers (hdr) or a key.
func (e *env) as(method, path, key string, hdr http.Header, body any) (int, map[string]any) {
	e.t.Helper()
	status, raw, _ := e.request(method, path, key, body, hdr)
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			e.t.Fatalf("%s %s: %q", method, path, raw)
		}
	}
	return status, m
}

// parkAs sends 2 USDC from wallet id as key or session hdr; the send must
// park. It returns the approval id.
func (e *env) parkAs(id, key string, hdr http.Header) string {
	e.t.Helper()
	status, body := e.as("POST", fmt.Sprintf(sendPath, id), key, hdr, map[string]any{"to": newAddress(), "amount": 2})
	if status != http.StatusAccepted || body["status"] != "pending_approval" {
		e.t.Fatalf("send did not park: %d %v", status, body)
	}
	return body["approval_id"].(string)
}

// mint makes a key through POST /keys as key or session hdr.
func (e *env) mint(key string, hdr http.Header, body any) (id, secret string, k map[string]any) {
	e.t.Helper()
	status, k := e.as("POST", keysPath, key, hdr, body)
	if status != http.StatusCreated {
		e.t.Fatalf("create key: %d %v", status, k)
	}
	return k["id"].(string), k["key"].(string), k
}

// approveRefusedToRequester checks that approving apID as key or hdr
// answers 403 naming the requester rule, leaves the approval pending and
// writes a permission.denied entry by actor on the approval.
func (e *env) approveRefusedToRequester(apID, key string, hdr http.Header, actor string) {
	e.t.Helper()
	before := len(e.auditOf(audit.ActionPermissionDenied))
	status, body := e.as("POST", approvalsPath+"/"+apID+"/approve", key, hdr, nil)
	wantError(e.t, status, body, http.StatusForbidden, "Requester cannot approve")
	if s := e.approvalStatus(apID); s != approval.Pending {
		e.t.Fatalf("status %s after a refused approve", s)
	}
	denied := e.auditOf(audit.ActionPermissionDenied)
	if len(denied) != before+1 {
		e.t.Fatalf("%d permission.denied entries, want %d", len(denied), before+1)
	}
	if d := denied[len(denied)-1]; d.Actor != actor || d.Target != "approval:"+apID || details(e.t, d)["operation"] != "approve" {
		e.t.Fatalf("permission.denied entry %+v %v", d, details(e.t, d))
	}
}

// An owner's payment from the dashboard names the owner as requester (on
// the approval, its context and the send's audit entry); the same
// session's approve is refused (403, audited, still pending); another
// owner approves it and it lands on chain.
func TestRequester_OwnerCannotApproveOwnPayment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 1}, 10_000_000)
	owner, address := e.session(auth.RoleOwner)
	me := auth.UserActorID(address)
	to := newAddress()
	status, body := e.as("POST", fmt.Sprintf(sendPath, id), "", owner, map[string]any{"to": to, "amount": 2})
	if status != http.StatusAccepted || body["status"] != "pending_approval" {
		t.Fatalf("send: %d %v", status, body)
	}
	apID := body["approval_id"].(string)

	status, a := e.do("GET", approvalsPath+"/"+apID, e.key, nil)
	if status != 200 || a["requested_by"] != me {
		t.Errorf("approval: %d %v", status, a)
	}
	status, c := e.as("GET", approvalsPath+"/"+apID+"/context", "", owner, nil)
	if r, _ := c["requester"].(map[string]any); status != 200 || r["id"] != me || r["prefix"] != nil {
		t.Errorf("context: %d %v", status, c)
	}
	if es := e.auditOf(audit.ActionSendPendingApproval); len(es) != 1 || es[0].Actor != me {
		t.Errorf("send.pending_approval entries %+v", es)
	}

	e.approveRefusedToRequester(apID, "", owner, me)

	other, otherAddress := e.session(auth.RoleOwner)
	status, a = e.as("POST", approvalsPath+"/"+apID+"/approve", "", other, nil)
	if status != 200 || a["status"] != "sent" || a["approved_by"] != auth.UserActorID(otherAddress) || a["requested_by"] != me {
		t.Fatalf("another owner's approve: %d %v", status, a)
	}
	e.paidOnce(eng, apID, a["signature"].(string), to, 2_000_000)

	// A direct send of a person is audited under their name too.
	status, body = e.as("POST", fmt.Sprintf(sendPath, id), "", owner, map[string]any{"to": to, "amount": 0.5})
	if status != 200 || body["status"] != "sent" {
		t.Fatalf("small send: %d %v", status, body)
	}
	if es := e.auditOf(audit.ActionSendSent); len(es) != 1 || es[0].Actor != me {
		t.Fatalf("send.sent entries %+v", es)
	}
}

// A key minted by a payment's requester, or by a key it minted, never
// approves that payment, whoever the requester is (an admin key, an
// owner in the dashboard); a person may still approve the payments of an
// agent key they made, and an admin key of another line approves.
func TestLineage_MintedKeysCannotApproveTheirCreatorsPayments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 1}, 20_000_000)
	admin := map[string]any{"role": "admin"}

	// An admin key requests, mints K2, which mints K3.
	k1ID, k1 := e.adminKey()
	apID := e.parkAs(id, k1, nil)
	k2ID, k2, k := e.mint(k1, nil, admin)
	if k["created_by"] != k1ID {
		t.Errorf("K2 %v", k)
	}
	k3ID, k3, k := e.mint(k2, nil, admin)
	if k["created_by"] != k2ID {
		t.Errorf("K3 %v", k)
	}
	e.approveRefusedToRequester(apID, k2, nil, k2ID)
	e.approveRefusedToRequester(apID, k3, nil, k3ID)
	// A rotation of a minted key descends from the requester too.
	status, r := e.do("POST", keysPath+"/"+k2ID+"/rotate", k2, nil)
	if status != 200 {
		t.Fatalf("rotate K2: %d %v", status, r)
	}
	if r["created_by"] != k1ID {
		t.Errorf("K2's successor %v", r)
	}
	e.approveRefusedToRequester(apID, r["key"].(string), nil, r["id"].(string))

	// An owner requests in the dashboard, mints an admin key, and tries
	// with it.
	owner, address := e.session(auth.RoleOwner)
	ownerAp := e.parkAs(id, "", owner)
	mintedID, minted, k := e.mint("", owner, admin)
	if k["created_by"] != auth.UserActorID(address) {
		t.Errorf("owner's key %v", k)
	}
	e.approveRefusedToRequester(ownerAp, minted, nil, mintedID)

	// The owner's agent key asks; the owner may approve it (the agent is
	// not in the owner's ancestry).
	_, agent, _ := e.mint("", owner, nil)
	agentAp := e.parkAs(id, agent, nil)
	status, a := e.as("POST", approvalsPath+"/"+agentAp+"/approve", "", owner, nil)
	if status != 200 || a["status"] != "sent" {
		t.Fatalf("owner approves its agent's payment: %d %v", status, a)
	}
	e.settle(eng, a["signature"].(string), "confirmed")

	// The env's admin key is of another line: it approves both.
	for _, ap := range []string{apID, ownerAp} {
		status, a := e.approve(ap, e.key, nil)
		if status != 200 || a["status"] != "sent" {
			t.Fatalf("another admin's approve of %s: %d %v", ap, status, a)
		}
		if n := e.transactionsOfApproval(ap); n != 1 {
			t.Fatalf("%d transactions for %s", n, ap)
		}
	}
}

// Removing a person revokes, in the same change, every key that descends
// from them (made by them, by a key they made, or rotated from such a
// key): each answers 401 afterwards and has a key.revoked entry by the
// remover; other keys keep working. The user list counts them first.
func TestLineage_RemovingAPersonRevokesTheirKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The account keeps an owner, who removes the other (no key removes
	// an owner).
	keeper, keeperAddr := e.session(auth.RoleOwner)
	owner, address := e.session(auth.RoleOwner)
	adminID, adminKey, _ := e.mint("", owner, map[string]any{"role": "admin"})
	agentID, agentKey, _ := e.mint("", owner, nil)
	grandID, grandKey, _ := e.mint(adminKey, nil, nil)
	status, r := e.do("POST", keysPath+"/"+grandID+"/rotate", adminKey, nil)
	if status != 200 {
		t.Fatalf("rotate: %d %v", status, r)
	}
	rotatedID, rotatedKey := r["id"].(string), r["key"].(string)
	if status, _ := e.do("GET", agentsPath, grandKey, nil); status != http.StatusUnauthorized {
		t.Fatalf("rotated-away key: %d", status)
	}
	_, bystander, _ := e.mint(e.key, nil, nil)

	status, us := e.do("GET", usersPath, e.key, nil)
	if status != 200 {
		t.Fatalf("users: %d %v", status, us)
	}
	for _, u := range us["users"].([]any) {
		if u := u.(map[string]any); u["address"] == address && u["live_keys"] != float64(3) {
			t.Errorf("user %v, want 3 live keys", u)
		}
	}

	if status, body := e.doAs(keeper, "DELETE", usersPath+"/"+address, nil); status != http.StatusNoContent {
		t.Fatalf("remove: %d %v", status, body)
	}
	for _, k := range []string{adminKey, agentKey, rotatedKey} {
		if status, _ := e.do("GET", agentsPath, k, nil); status != http.StatusUnauthorized {
			t.Fatalf("a key of the removed person answers %d", status)
		}
	}
	if status, _ := e.do("GET", agentsPath, bystander, nil); status != 200 {
		t.Fatalf("another key answers %d", status)
	}
	remover := auth.UserActorID(keeperAddr)
	var revoked []string
	for _, en := range e.auditOf(audit.ActionKeyRevoked) {
		if en.Actor != remover {
			t.Fatalf("key.revoked by %s", en.Actor)
		}
		revoked = append(revoked, details(t, en)["key_id"].(string))
	}
	slices.Sort(revoked)
	want := []string{adminID, agentID, rotatedID}
	slices.Sort(want)
	if !slices.Equal(revoked, want) {
		t.Fatalf("key.revoked for %v, want %v", revoked, want)
	}
	if es := e.auditOf(audit.ActionUserRemoved); len(es) != 1 || len(details(t, es[0])["revoked_keys"].([]any)) != 3 {
		t.Fatalf("user.removed %+v", es)
	}
}

// Keys record who made them: the person in the dashboard (user:<addr>),
// the key through the API (key_…), nobody for the command line.
func TestLineage_KeysRecordTheirCreator(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner, address := e.session(auth.RoleOwner)
	userKeyID, _, k := e.mint("", owner, map[string]any{"label": "from the dashboard"})
	if k["created_by"] != auth.UserActorID(address) {
		t.Fatalf("made in the dashboard: %v", k)
	}
	keyKeyID, _, _ := e.mint(e.key, nil, nil)
	cliID, _ := e.adminKey()
	status, list := e.as("GET", keysPath, "", owner, nil)
	if status != 200 {
		t.Fatalf("keys: %d %v", status, list)
	}
	want := map[string]any{userKeyID: auth.UserActorID(address), keyKeyID: "key_" + keyIDOf(t, e, e.key), cliID: nil}
	seen := 0
	for _, k := range list["keys"].([]any) {
		k := k.(map[string]any)
		if w, ok := want[k["id"].(string)]; ok {
			seen++
			if c, present := k["created_by"]; !present || c != w {
				t.Fatalf("key %v: created_by %v, want %v", k["id"], c, w)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("listed %d of %d keys: %v", seen, len(want), list)
	}
}

// A person's removal racing their keys' mints and rotations leaves no
// live key descending from them: every key made or rotated before the
// removal is revoked by it, every one after is refused (401).
func TestLineage_RemovalRacingMintsLeavesNoLiveKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keeper, _ := e.session(auth.RoleOwner)
	owner, address := e.session(auth.RoleOwner)
	_, adminKey, _ := e.mint("", owner, map[string]any{"role": "admin"})
	var agents []string
	for range 4 {
		id, _, _ := e.mint(adminKey, nil, nil)
		agents = append(agents, id)
	}
	var wg sync.WaitGroup
	statuses := make(chan int, 16)
	for i := range 8 {
		wg.Go(func() {
			var status int
			if i%2 == 0 {
				status, _ = e.do("POST", keysPath, adminKey, map[string]any{"role": "admin"})
			} else {
				status, _ = e.do("POST", keysPath+"/"+agents[i/2]+"/rotate", adminKey, nil)
			}
			statuses <- status
		})
	}
	wg.Go(func() {
		status, raw, _ := e.request("DELETE", usersPath+"/"+address, "", nil, keeper)
		if status != http.StatusNoContent {
			t.Errorf("remove: %d %s", status, raw)
		}
	})
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusCreated && s != http.StatusOK && s != http.StatusUnauthorized && s != http.StatusConflict {
			t.Fatalf("a racing mint or rotation answered %d", s)
		}
	}
	live, err := e.db.NewSelect().Table("api_keys").
		Where("account_id = ? AND revoked_at IS NULL AND ancestors @> ARRAY[?]::text[]", e.account.ID, auth.UserActorID(address)).Count(t.Context())
	if err != nil || live != 0 {
		t.Fatalf("%d live keys descend from the removed person (%v)", live, err)
	}
}

// Whoever rotates a key is handed its new secret, so the successor
// descends from them too: an admin key that requested a payment cannot
// approve it with a key it rotated (one it did not make), nor can an
// owner with a key they rotated; and removing the owner revokes the key
// they rotated.
func TestLineage_RotatedKeysDescendFromTheirRotator(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 1}, 20_000_000)
	_, requester := e.adminKey()
	byKey := e.parkAs(id, requester, nil)
	otherID, _ := e.adminKey()
	status, rotated := e.do("POST", keysPath+"/"+otherID+"/rotate", requester, nil)
	if status != http.StatusOK {
		t.Fatalf("rotate: %d %v", status, rotated)
	}
	status, body := e.approve(byKey, rotated["key"].(string), nil)
	wantError(t, status, body, http.StatusForbidden, "Requester cannot approve")

	owner, address := e.session(auth.RoleOwner)
	byOwner := e.parkAs(id, "", owner)
	other2ID, _ := e.adminKey()
	status, rotated2 := e.as("POST", keysPath+"/"+other2ID+"/rotate", "", owner, nil)
	if status != http.StatusOK {
		t.Fatalf("owner rotate: %d %v", status, rotated2)
	}
	status, body = e.approve(byOwner, rotated2["key"].(string), nil)
	wantError(t, status, body, http.StatusForbidden, "Requester cannot approve")

	keeper, _ := e.session(auth.RoleOwner) // the last owner stays: another one, who removes this one
	if status, body := e.doAs(keeper, "DELETE", usersPath+"/"+address, nil); status != http.StatusNoContent {
		t.Fatalf("remove: %d %v", status, body)
	}
	if status, _ := e.do("GET", keysPath, rotated2["key"].(string), nil); status != http.StatusUnauthorized {
		t.Fatalf("the key a removed owner rotated: GET /keys %d, want 401", status)
	}
	// Another admin key approves both.
	_, approver := e.adminKey()
	for _, ap := range []string{byKey, byOwner} {
		if status, body := e.approve(ap, approver, nil); status != http.StatusOK || body["status"] != "sent" {
			t.Fatalf("approve %s by another admin key: %d %v", ap, status, body)
		}
	}
}

// An admin key's payment is its creator's own (the creator holds the key):
// the admin key that minted it, and the owner who made it, are refused;
// another owner approves. (A person may still approve the payments of an
// agent key they made: agent keys cannot approve, and that delegation is
// what they are for; the permission matrix covers it.)
func TestLineage_CreatorsCannotApproveTheirAdminKeysPayments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 1}, 20_000_000)
	_, creator := e.adminKey()
	_, minted, _ := e.mint(creator, nil, map[string]any{"role": "admin"})
	byMinted := e.parkAs(id, minted, nil)
	status, body := e.approve(byMinted, creator, nil)
	wantError(t, status, body, http.StatusForbidden, "Requester cannot approve")

	owner, _ := e.session(auth.RoleOwner)
	_, ownersKey, _ := e.mint("", owner, map[string]any{"role": "admin"})
	byOwnersKey := e.parkAs(id, ownersKey, nil)
	status, body = e.as("POST", approvalsPath+"/"+byOwnersKey+"/approve", "", owner, nil)
	wantError(t, status, body, http.StatusForbidden, "Requester cannot approve")

	other, _ := e.session(auth.RoleOwner)
	for _, ap := range []string{byMinted, byOwnersKey} {
		if status, body := e.as("POST", approvalsPath+"/"+ap+"/approve", "", other, nil); status != http.StatusOK || body["status"] != "sent" {
			t.Fatalf("approve %s by another owner: %d %v", ap, status, body)
		}
	}
}

// An agent key made in the dashboard reads its maker as "user", never the
// person's address: in GET /keys, its rotation's answer and the audit log.
func TestLineage_AgentKeysReadNoMakersAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner, address := e.session(auth.RoleOwner)
	agentID, agentKey, _ := e.mint("", owner, nil)
	status, raw, _ := e.request("GET", keysPath, agentKey, nil, nil)
	if status != http.StatusOK || strings.Contains(string(raw), address) || !strings.Contains(string(raw), `"created_by":"user"`) {
		t.Fatalf("GET /keys as the agent key: %d %s", status, raw)
	}
	status, raw, _ = e.request("POST", keysPath+"/"+agentID+"/rotate", agentKey, nil, nil)
	if status != http.StatusOK || strings.Contains(string(raw), address) {
		t.Fatalf("rotate as the agent key: %d %s", status, raw)
	}
	var rotated map[string]any
	_ = json.Unmarshal(raw, &rotated)
	if _, raws := e.readAudit(auditReader{key: rotated["key"].(string)}, ""); strings.Contains(raws, address) {
		t.Fatalf("the audit log names the person to the agent key: %s", raws)
	}
	// The owner reads the address.
	status, raw, _ = e.request("GET", keysPath, "", nil, owner)
	if status != http.StatusOK || !strings.Contains(string(raw), `"created_by":"user:`+address+`"`) {
		t.Fatalf("GET /keys as the owner: %d %s", status, raw)
	}
}
