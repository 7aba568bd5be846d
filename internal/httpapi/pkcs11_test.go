//go:build pkcs11

package httpapi_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/custody"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/signer/pkcs11"
	"github.com/agentwallet/agentwallet/internal/signer/pkcs11/softhsmtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// hsm is the worker's keepers over a SoftHSM2 token, as custody.Open
// builds them from the PKCS11_* settings; close logs them out.
func hsm(t *testing.T, tok pkcs11.Config) (keepers map[signer.Backend]signer.Keeper, close func()) {
	t.Helper()
	set, closeSigners, err := custody.Open(context.Background(), config.Signers{Default: signer.PKCS11, PKCS11: config.PKCS11{
		Module: tok.Module, TokenLabel: tok.TokenLabel, PIN: config.Secret(tok.PIN), Sessions: 4,
	}}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeSigners)
	return set.Keepers, closeSigners
}

// With WALLET_SIGNER=pkcs11, a new wallet's key is made in the token: a
// private key labelled with the wallet's id, sensitive and never
// extractable (as pkcs11-tool lists it); the database holds no secret for
// it; a send from it lands on the localnet, and a local wallet pays
// beside it. With the token's PIN wrong, a send answers 503 at once and
// nothing is signed. The token's key is never exported.
func TestPKCS11_WalletKeyLivesInTheTokenAndPays(t *testing.T) {
	t.Parallel()
	tok := softhsmtest.Token(t)
	keepers, closeHSM := hsm(t, tok)
	e := newEnv(t, envOpts{keepers: keepers, walletSigner: signer.PKCS11})
	eng, halt := e.startWorker()
	id, pubkey := e.agent(nil, 10_000_000)

	var w struct {
		Signer string  `bun:"signer"`
		Ref    *string `bun:"key_ref"`
		Sealed []byte  `bun:"secret_sealed"`
	}
	if err := e.db.NewSelect().Table("wallets").Column("signer", "key_ref", "secret_sealed").Where("id = ?", id).Scan(context.Background(), &w); err != nil {
		t.Fatal(err)
	}
	if w.Signer != "pkcs11" || w.Ref == nil || *w.Ref != id || w.Sealed != nil {
		t.Fatalf("wallet row: signer %q, key_ref %v, %d sealed bytes", w.Signer, w.Ref, len(w.Sealed))
	}
	if _, a := e.do("GET", agentsPath+"/"+id, e.key, nil); a["signer"] != "pkcs11" {
		t.Fatalf("agent %v", a)
	}
	listed := listObjects(t, tok)
	private := objectOf(listed, "Private Key Object", id)
	if access := accessOf(private); !slices.Contains(access, "sensitive") || !slices.Contains(access, "never extractable") ||
		slices.Contains(access, "extractable") {
		t.Fatalf("pkcs11-tool does not list a sensitive, never extractable private key labelled %s:\n%s", id, listed)
	}

	// A key in the token never leaves it, not even sealed to an owner.
	owner, _ := e.session(auth.RoleOwner)
	recipient, _ := ecdh.X25519().GenerateKey(rand.Reader)
	if status, body := e.exportAs(owner, id, recipient); status != http.StatusConflict {
		t.Fatalf("export of a token's wallet: %d %v", status, body)
	}

	to := newAddress()
	status, sent := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1.5})
	if status != http.StatusOK || sent["status"] != "sent" {
		t.Fatalf("send from the token's wallet: %d %v", status, sent)
	}
	e.settle(eng, sent["signature"].(string), "confirmed")
	if got := e.chainUSDC(to); got != 1_500_000 {
		t.Fatalf("recipient holds %d", got)
	}

	// A fleet: an envelope wallet (made before WALLET_SIGNER changed)
	// pays through the same worker, beside the token's.
	sealer, err := signer.NewSealer(e.publicKey)
	if err != nil {
		t.Fatal(err)
	}
	lw, err := wallet.Create(context.Background(), e.db, sealer, e.account.ID, "system", "local", policy.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	e.ln.SetLamports(t, lw.Pubkey, 1_000_000_000)
	e.ln.SetTokenBalance(t, lw.Pubkey, solana.DevnetUSDCMint.String(), 10_000_000)
	status, lsent := e.do("POST", fmt.Sprintf(sendPath, lw.ID), e.key, map[string]any{"to": to, "amount": 1})
	if status != http.StatusOK {
		t.Fatalf("send from the local wallet: %d %v", status, lsent)
	}
	e.settle(eng, lsent["signature"].(string), "confirmed")
	if got := e.chainUSDC(to); got != 2_500_000 {
		t.Fatalf("recipient holds %d after both sends", got)
	}
	_ = pubkey

	// The PIN wrong: 503 signer_unavailable at once, nothing signed. (The
	// first worker logs out first: a token's login is the process's.)
	halt()
	closeHSM()
	wrong := tok
	wrong.PIN = "not-the-pin"
	e.keepers, _ = hsm(t, wrong)
	e.startWorker()
	before := e.countRows("transactions")
	start := time.Now()
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1})
	took := time.Since(start)
	if status != http.StatusServiceUnavailable || body["reason"] != "signer_unavailable" {
		t.Fatalf("send with the PIN wrong: %d %v", status, body)
	}
	if n := e.countRows("transactions"); n != before {
		t.Fatalf("%d transactions signed with the PIN wrong", n-before)
	}
	if took > 2*time.Second {
		t.Fatalf("the refusal took %v", took)
	}
	t.Logf("with the PIN wrong the send answered %d in %v: %v", status, took, body["error"])
}

// accessOf is the attributes on an object's "Access:" line.
func accessOf(object string) []string {
	for _, line := range strings.Split(object, "\n") {
		if a, ok := strings.CutPrefix(strings.TrimSpace(line), "Access:"); ok {
			return strings.Split(strings.TrimSpace(a), ", ")
		}
	}
	return nil
}

// listObjects is pkcs11-tool's listing of the token's objects.
func listObjects(t *testing.T, tok pkcs11.Config) string {
	t.Helper()
	out, err := exec.Command("pkcs11-tool", "--module", tok.Module, "--token-label", tok.TokenLabel,
		"--login", "--pin", tok.PIN, "--list-objects").CombinedOutput()
	if err != nil {
		t.Fatalf("pkcs11-tool: %v\n%s", err, out)
	}
	return string(out)
}

// objectOf is the block of pkcs11-tool's listing that describes the
// object of kind (e.g. "Private Key Object") labelled label.
func objectOf(listing, kind, label string) string {
	var blocks []string
	for _, line := range strings.Split(listing, "\n") {
		if strings.Contains(line, "Object;") || len(blocks) == 0 {
			blocks = append(blocks, "")
		}
		blocks[len(blocks)-1] += line + "\n"
	}
	for _, b := range blocks {
		if strings.HasPrefix(b, kind) && strings.Contains(b, "label:      "+label+"\n") {
			return b
		}
	}
	return ""
}
