//go:build pkcs11

package main

import (
	"context"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/signer/pkcs11/softhsmtest"
)

// `worker keys import --to pkcs11` moves a local wallet into the token:
// same address, no sealed secret left, the key labelled with the wallet's
// id; `worker recover` then signs through the token. A second import
// finds nothing left to move.
func TestKeysImport_MovesALocalWalletIntoTheTokenKeepingItsAddress(t *testing.T) {
	t.Parallel()
	tok := softhsmtest.Token(t)
	o := newOffline(t, 2_500_000, 1_000_000_000)
	o.env["PKCS11_MODULE"], o.env["PKCS11_TOKEN_LABEL"], o.env["PKCS11_PIN"] = tok.Module, tok.TokenLabel, tok.PIN

	out, err := o.run(t, "keys", "import", "--to", "pkcs11")
	if err != nil || !strings.Contains(out, "1 wallets moved into pkcs11") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	var signer, pubkey string
	var ref *string
	var sealed []byte
	if err := o.db.NewRaw(`SELECT signer, key_ref, secret_sealed, pubkey FROM wallets WHERE id = ?`, o.w.ID).
		Scan(context.Background(), &signer, &ref, &sealed, &pubkey); err != nil {
		t.Fatal(err)
	}
	if signer != "pkcs11" || ref == nil || *ref != o.w.ID.String() || sealed != nil || pubkey != o.w.Pubkey {
		t.Fatalf("after import: signer %s, key_ref %v, %d sealed bytes, pubkey %s (was %s)", signer, ref, len(sealed), pubkey, o.w.Pubkey)
	}
	if out, err := o.run(t, "keys", "import", "--to", "pkcs11"); err != nil || !strings.Contains(out, "0 wallets moved") {
		t.Fatalf("second import: %v\n%s", err, out)
	}

	to := sol.NewWallet().PublicKey().String()
	if out, err := o.run(t, "recover", "--wallet", o.w.ID.String(), "--to", to, "--operator", "ops", "--reason", "test"); err != nil {
		t.Fatalf("recover through the token: %v (%s)", err, out)
	}
	if got := o.usdc(t, to); got != 2_500_000 {
		t.Fatalf("received %d", got)
	}
}
