package httpapi_test

import (
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/signer"
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

	status, done := e.doAs(second, "POST", approve, nil)
	if status != http.StatusOK || done["state"] != "exported" || done["sealed_secret"] == nil {
		t.Fatalf("approve: %d %v", status, done)
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

// An approve whose worker cannot seal the secret (here the wallet's key
// moved out of the envelope after the request) answers 503, never 500:
// nothing is exported, the request stays pending, the wallet unmarked.
func TestWalletExport_WorkerRefusalIs503AndNothingLeaves(t *testing.T) {
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
	if status, body := e.doAs(second, "POST", path+"/approve", nil); status != http.StatusServiceUnavailable || body["error"] == nil {
		t.Fatalf("approve: %d %v", status, body)
	}
	if _, got := e.doAs(first, "GET", path, nil); got["state"] != "pending" || got["sealed_secret"] != nil {
		t.Fatalf("after the refusal: %v", got)
	}
	if _, a := e.do("GET", agentsPath+"/"+id, e.key, nil); a["exported_at"] != nil {
		t.Fatalf("marked exported: %v", a)
	}
}
