package httpapi_test

import (
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/keymaker"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/waitfor"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

const exportsPath = "/api/public/v1/wallets/%s/exports"

// exportAs asks, as the owner of hdr, for wallet id's secret sealed to
// recipient; it answers the status and body.
func (e *env) exportAs(hdr http.Header, id string, recipient *ecdh.PrivateKey) (int, map[string]any) {
	e.t.Helper()
	return e.doAs(hdr, "POST", fmt.Sprintf(exportsPath, id), map[string]any{
		"recipient_public_key": base64.StdEncoding.EncodeToString(recipient.PublicKey().Bytes()),
	})
}

// doAs calls the API as the dashboard session of hdr.
func (e *env) doAs(hdr http.Header, method, path string, body any) (int, map[string]any) {
	e.t.Helper()
	status, raw, _ := e.request(method, path, "", body, hdr)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return status, out
}

// An owner's export needs another owner's approval: the asking owner, an
// admin key, an approver and a viewer are refused and nothing leaves;
// approved by the second owner, the sealed secret opens with the owner's
// key to the wallet's own key, the wallet shows exported for good, and
// every step is in the audit log. A decided request is decided for good.
func TestWalletExport_NeedsASecondOwnersApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, pubkey := e.agent(nil, 0)
	first, firstAddr := e.session(auth.RoleOwner)
	second, _ := e.session(auth.RoleOwner)
	approver, _ := e.session(auth.RoleApprover)
	recipient, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}

	status, x := e.exportAs(first, id, recipient)
	if status != http.StatusCreated || x["state"] != "pending" || x["sealed_secret"] != nil || x["requested_by"] != "user:"+firstAddr {
		t.Fatalf("request: %d %v", status, x)
	}
	approve := fmt.Sprintf(exportsPath, id) + "/" + x["id"].(string) + "/approve"
	for name, try := range map[string]func() (int, map[string]any){
		"the asking owner": func() (int, map[string]any) { return e.doAs(first, "POST", approve, nil) },
		"an admin key":     func() (int, map[string]any) { return e.do("POST", approve, e.key, nil) },
		"an approver":      func() (int, map[string]any) { return e.doAs(approver, "POST", approve, nil) },
	} {
		if status, body := try(); status != http.StatusForbidden {
			t.Fatalf("approved by %s: %d %v", name, status, body)
		}
	}
	if _, a := e.do("GET", agentsPath+"/"+id, e.key, nil); a["exported_at"] != nil {
		t.Fatalf("exported before approval: %v", a)
	}

	// The approver sees the recipient key they agree to.
	if _, list := e.doAs(second, "GET", "/api/public/v1/exports?state=pending", nil); len(list["exports"].([]any)) != 1 ||
		list["exports"].([]any)[0].(map[string]any)["recipient_public_key"] != x["recipient_public_key"] ||
		x["recipient_public_key"] != base64.StdEncoding.EncodeToString(recipient.PublicKey().Bytes()) {
		t.Fatalf("pending exports: %v (asked %v)", list, x)
	}
	status, done := e.doAs(second, "POST", approve, nil)
	if status != http.StatusOK || (done["state"] != "exported" && done["state"] != "approved") {
		t.Fatalf("approve: %d %v", status, done)
	}
	done = e.exportSettled(second, id, x["id"].(string))
	if done["state"] != "exported" || done["sealed_secret"] == nil {
		t.Fatalf("sealed: %v", done)
	}
	sealed, _ := base64.StdEncoding.DecodeString(done["sealed_secret"].(string))
	pub := sol.MustPublicKeyFromBase58(pubkey)
	seed, err := signer.OpenExport(recipient, ed25519.PublicKey(pub[:]), sealed)
	if err != nil {
		t.Fatalf("the sealed secret does not open with the owner's key: %v", err)
	}
	if got := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey); !got.Equal(ed25519.PublicKey(pub[:])) {
		t.Fatal("the exported secret is not the wallet's key")
	}
	if status, body := e.doAs(second, "POST", approve, nil); status != http.StatusConflict {
		t.Fatalf("approved twice: %d %v", status, body)
	}
	if _, a := e.do("GET", agentsPath+"/"+id, e.key, nil); a["exported_at"] == nil {
		t.Fatalf("the wallet does not show exported: %v", a)
	}
	if _, got := e.doAs(first, "GET", fmt.Sprintf(exportsPath, id)+"/"+x["id"].(string), nil); got["sealed_secret"] != done["sealed_secret"] {
		t.Fatalf("the asking owner reads %v", got)
	}
	if n, m := len(e.auditOf(wallet.ActionExportRequested)), len(e.auditOf(wallet.ActionExported)); n != 1 || m != 1 {
		t.Fatalf("%d export requests and %d exports audited", n, m)
	}
	for _, action := range []string{wallet.ActionExportRequested, wallet.ActionExportApproved, wallet.ActionExported} {
		en := e.auditOf(action)
		if len(en) != 1 || details(t, en[0])["recipient_public_key"] != x["recipient_public_key"] {
			t.Fatalf("%s audited without the recipient key: %v", action, en)
		}
	}

	// Rejected: nothing leaves, and it cannot be approved after.
	_, y := e.exportAs(first, id, recipient)
	reject := fmt.Sprintf(exportsPath, id) + "/" + y["id"].(string) + "/reject"
	if status, body := e.doAs(second, "POST", reject, nil); status != http.StatusOK || body["state"] != "rejected" || body["sealed_secret"] != nil {
		t.Fatalf("reject: %d %v", status, body)
	}
	if status, _ := e.doAs(second, "POST", fmt.Sprintf(exportsPath, id)+"/"+y["id"].(string)+"/approve", nil); status != http.StatusConflict {
		t.Fatalf("approve after reject: %d", status)
	}
}

// exportSettled reads export xid of wallet id until a worker has done
// with it (no longer approved).
func (e *env) exportSettled(hdr http.Header, id, xid string) map[string]any {
	e.t.Helper()
	var got map[string]any
	waitfor.True(e.t, "the export to be sealed", func() bool {
		_, got = e.doAs(hdr, "GET", fmt.Sprintf(exportsPath, id)+"/"+xid, nil)
		return got["state"] != "approved"
	})
	return got
}

// An approved export whose wallet the worker finds it cannot seal (here
// its key moved out of the envelope after the request) is void, never a
// 500: nothing is exported, the wallet is not marked.
func TestWalletExport_UnsealableWalletIsVoidAndNothingLeaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(nil, 0)
	first, _ := e.session(auth.RoleOwner)
	second, _ := e.session(auth.RoleOwner)
	recipient, _ := ecdh.X25519().GenerateKey(rand.Reader)
	_, x := e.exportAs(first, id, recipient)
	if _, err := e.db.NewRaw(`UPDATE wallets SET signer = 'vault', key_ref = 'k', secret_key_id = NULL, secret_sealed = NULL WHERE id = ?`, id).
		Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf(exportsPath, id) + "/" + x["id"].(string)
	if status, body := e.doAs(second, "POST", path+"/approve", nil); status != http.StatusOK {
		t.Fatalf("approve: %d %v", status, body)
	}
	if got := e.exportSettled(first, id, x["id"].(string)); got["state"] != "void" || got["sealed_secret"] != nil || got["void_reason"] == nil {
		t.Fatalf("after the refusal: %v", got)
	}
	if _, a := e.do("GET", agentsPath+"/"+id, e.key, nil); a["exported_at"] != nil {
		t.Fatalf("marked exported: %v", a)
	}
}

// The two-person rule needs two people: an owner the asker added, or one
// who became an owner after the request, cannot approve it (403, and it
// stays pending); an owner who was one before and was added by someone
// else can.
func TestWalletExport_ApproverMustPredateTheRequestAndNotBeTheAskersPick(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(nil, 0)
	asker, _ := e.session(auth.RoleOwner)
	independent, _ := e.session(auth.RoleOwner)
	// The asker makes a second owner of their own, then signs in as it.
	picked := newAddress()
	if status, body := e.doAs(asker, "POST", "/api/public/v1/users", map[string]any{"address": picked, "role": "owner"}); status != http.StatusCreated {
		t.Fatalf("add owner: %d %v", status, body)
	}
	pickedHdr := e.sessionOf(picked)
	recipient, _ := ecdh.X25519().GenerateKey(rand.Reader)
	_, x := e.exportAs(asker, id, recipient)
	late, _ := e.session(auth.RoleOwner)
	path := fmt.Sprintf(exportsPath, id) + "/" + x["id"].(string)
	for name, hdr := range map[string]http.Header{"an owner the asker added": pickedHdr, "an owner since after the request": late} {
		if status, body := e.doAs(hdr, "POST", path+"/approve", nil); status != http.StatusForbidden || body["error"] == nil {
			t.Fatalf("approved by %s: %d %v", name, status, body)
		}
	}
	if _, got := e.doAs(asker, "GET", path, nil); got["state"] != "pending" {
		t.Fatalf("after the refusals: %v", got)
	}
	if status, body := e.doAs(independent, "POST", path+"/approve", nil); status != http.StatusOK {
		t.Fatalf("approved by an independent owner: %d %v", status, body)
	}
	if got := e.exportSettled(asker, id, x["id"].(string)); got["state"] != "exported" {
		t.Fatalf("after the approval: %v", got)
	}
}

// Whoever can write to Redis gets no secret: a request in the format
// workers once took from Redis, for a wallet nobody asked to export and
// sealed to the attacker's key, yields nothing: no reply, nothing on
// Redis that opens with the attacker's key, no export row, no audit
// entry, the wallet not marked.
func TestWalletExport_RequestOnRedisExportsNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, pubkey := e.agent(nil, 0)
	attacker, _ := ecdh.X25519().GenerateKey(rand.Reader)
	ctx := t.Context()
	reqID := uuid.New()
	raw, _ := json.Marshal(map[string]any{"id": reqID, "backend": "local", "deadline": time.Now().Add(time.Minute),
		"export": id, "recipient": attacker.PublicKey().Bytes()})
	for _, list := range []string{"agentwallet:keys:make", keymaker.WakeKey} {
		if err := e.rdb.LPush(ctx, list, raw).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A worker that took the request would answer within this wait.
	if res, err := e.rdb.BLPop(ctx, 5*time.Second, "agentwallet:keys:made:"+reqID.String()).Result(); err == nil {
		t.Fatalf("a worker answered a request from Redis: %s", res[1])
	}
	pub := sol.MustPublicKeyFromBase58(pubkey)
	keys, err := e.rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		for _, v := range redisValues(t, e.rdb, k) {
			for _, blob := range blobsIn(v) {
				if _, err := signer.OpenExport(attacker, ed25519.PublicKey(pub[:]), blob); err == nil {
					t.Fatalf("Redis key %s holds the wallet's secret sealed to the attacker", k)
				}
			}
		}
	}
	var n int
	if err := e.db.NewSelect().Table("wallet_exports").ColumnExpr("count(*)").Scan(ctx, &n); err != nil || n != 0 {
		t.Fatalf("%d export rows (%v)", n, err)
	}
	if len(e.auditOf(wallet.ActionExported)) != 0 {
		t.Fatal("an export audited")
	}
	if _, a := e.do("GET", agentsPath+"/"+id, e.key, nil); a["exported_at"] != nil {
		t.Fatalf("marked exported: %v", a)
	}
}

// redisValues is every value stored under key k, whatever its type.
func redisValues(t *testing.T, rdb *redis.Client, k string) []string {
	t.Helper()
	ctx := t.Context()
	switch rdb.Type(ctx, k).Val() {
	case "string":
		return []string{rdb.Get(ctx, k).Val()}
	case "list":
		return rdb.LRange(ctx, k, 0, -1).Val()
	case "set":
		return rdb.SMembers(ctx, k).Val()
	case "zset":
		return rdb.ZRange(ctx, k, 0, -1).Val()
	case "hash":
		var out []string
		for _, v := range rdb.HGetAll(ctx, k).Val() {
			out = append(out, v)
		}
		return out
	case "stream":
		var out []string
		for _, m := range rdb.XRange(ctx, k, "-", "+").Val() {
			for _, v := range m.Values {
				out = append(out, fmt.Sprint(v))
			}
		}
		return out
	}
	return nil
}

// blobsIn is v, and every base64 string within v's JSON, as bytes: the
// shapes a sealed secret could take.
func blobsIn(v string) [][]byte {
	out := [][]byte{[]byte(v)}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				out = append(out, b)
			}
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	var j any
	if json.Unmarshal([]byte(v), &j) == nil {
		walk(j)
	}
	return out
}

// A recipient key nothing can be sealed to (a low-order X25519 point) is
// refused when asked (422, nothing recorded); and an approved request
// whose sealing fails anyway is void, never ahead of the others for good:
// the request approved after it is still exported.
func TestWalletExport_UnsealableRecipientHoldsBackNoOtherExport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.agent(nil, 0)
	first, firstAddr := e.session(auth.RoleOwner)
	second, secondAddr := e.session(auth.RoleOwner)
	zero := base64.StdEncoding.EncodeToString(make([]byte, 32))
	status, body := e.doAs(first, "POST", fmt.Sprintf(exportsPath, id), map[string]any{"recipient_public_key": zero})
	wantError(t, status, body, http.StatusUnprocessableEntity, "recipient_public_key")

	// One slipped in before the check, approved first.
	bad := uuid.New()
	if _, err := e.db.NewRaw(`INSERT INTO wallet_exports (id, account_id, wallet_id, recipient, state, requested_by, requested_at, decided_by, decided_at)
		VALUES (?, ?, ?, ?, 'approved', ?, now(), ?, now() - interval '1 minute')`,
		bad, e.account.ID, id, make([]byte, 32), "user:"+firstAddr, "user:"+secondAddr).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	recipient, _ := ecdh.X25519().GenerateKey(rand.Reader)
	_, x := e.exportAs(first, id, recipient)
	if status, body := e.doAs(second, "POST", fmt.Sprintf(exportsPath, id)+"/"+x["id"].(string)+"/approve", nil); status != http.StatusOK {
		t.Fatalf("approve: %d %v", status, body)
	}
	e.startWorker()
	if got := e.exportSettled(first, id, bad.String()); got["state"] != "void" || got["sealed_secret"] != nil ||
		!strings.Contains(fmt.Sprint(got["void_reason"]), "could not be sealed") {
		t.Fatalf("the unsealable request: %v", got)
	}
	if got := e.exportSettled(first, id, x["id"].(string)); got["state"] != "exported" {
		t.Fatalf("the request approved after it: %v", got)
	}
}
