package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/mr-tron/base58"

	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// The wallet row holds the secret only sealed: neither the raw key nor any
// usual encoding of it appears. The worker's configuration opens it; the
// API's configuration has nothing that can.
func TestWalletSecretIsSealed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "sealed"})
	id := uuid.MustParse(a["id"].(string))
	pub := sol.MustPublicKeyFromBase58(a["pubkey"].(string))

	env := map[string]string{"WALLET_PUBLIC_KEY": e.publicKey, "WALLET_MASTER_KEY": e.masterKey}
	getenv := func(k string) string { return env[k] }
	apiCfg, err := config.LoadAPI(getenv)
	if err != nil {
		t.Fatal(err)
	}
	workerCfg, err := config.LoadWorker(getenv)
	if err != nil {
		t.Fatal(err)
	}

	sealed, err := wallet.SealedSecret(context.Background(), e.db, id)
	if err != nil {
		t.Fatal(err)
	}
	// The worker opens it and gets the wallet's own key.
	ks, err := signer.NewKeystore(workerCfg.WalletMasterKey.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	key := signer.Key{Public: ed25519.PublicKey(pub.Bytes()), Sealed: sealed}
	msg := []byte("the worker signs with the wallet's own key")
	if sig, err := ks.Sign(context.Background(), key, msg); err != nil || !ed25519.Verify(key.Public, msg, sig) {
		t.Fatalf("the worker cannot sign with the wallet's key: %v", err)
	}

	// No value in the API's configuration opens it: try every string field
	// as key material.
	tried := 0
	forEachString(reflect.ValueOf(apiCfg), func(v string) {
		for _, part := range strings.Split(v, ",") {
			tried++
			if ks, err := signer.NewKeystore(part); err == nil {
				if _, err := ks.Sign(context.Background(), key, msg); err == nil {
					t.Fatalf("the API configuration opened a wallet secret with %q", part)
				}
			}
		}
	})
	if tried < 5 {
		t.Fatalf("only %d API config values tried", tried)
	}

	// The raw row, every column as text, holds no form of the secret.
	var row string
	if err := e.db.NewRaw("SELECT row_to_json(w)::text FROM wallets w WHERE id = ?", id).Scan(context.Background(), &row); err != nil {
		t.Fatal(err)
	}
	secret := openSealedSecret(t, workerCfg.WalletMasterKey.Reveal(), sealed, key.Public)
	seed := secret.Seed()
	for name, form := range map[string]string{
		"base58 secret": base58.Encode(secret),
		"base58 seed":   base58.Encode(seed),
		"hex secret":    hex.EncodeToString(secret),
		"hex seed":      hex.EncodeToString(seed),
		"base64 secret": base64.StdEncoding.EncodeToString(secret),
		"base64 seed":   base64.StdEncoding.EncodeToString(seed),
		"json array":    strings.ReplaceAll(strings.Trim(fmt.Sprint([]byte(secret[:8])), "[]"), " ", ","),
	} {
		if strings.Contains(row, form) {
			t.Fatalf("wallet row contains the %s", name)
		}
	}
	if !strings.Contains(row, hex.EncodeToString(sealed.Ciphertext[:16])) {
		t.Fatalf("row does not hold the sealed secret (bytea hex): %.200s", row)
	}
}

func forEachString(v reflect.Value, f func(string)) {
	switch v.Kind() {
	case reflect.String:
		f(v.String())
	case reflect.Struct:
		for i := range v.NumField() {
			forEachString(v.Field(i), f)
		}
	}
}
