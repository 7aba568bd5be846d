package vault_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/vault/api"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/signer/kmstest"
	"github.com/agentwallet/agentwallet/internal/signer/vault"
)

func newSigner(t *testing.T, cfg vault.Config) *vault.Signer {
	t.Helper()
	s, err := vault.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func vaultSigner(t *testing.T, v *kmstest.Vault) *vault.Signer {
	t.Helper()
	return newSigner(t, vault.Config{Address: v.Addr, Token: v.Token})
}

func makeKey(t *testing.T, s *vault.Signer) signer.Key {
	t.Helper()
	key, err := s.Make(t.Context(), uuid.NewString())
	if err != nil {
		t.Fatalf("Make: %v", err)
	}
	return key
}

func mustUnavailable(t *testing.T, err error, reason string) *signer.UnavailableError {
	t.Helper()
	u, ok := signer.Unavailable(err)
	if !ok {
		t.Fatalf("error = %v, want an UnavailableError", err)
	}
	t.Log(err)
	if u.Backend != signer.Vault {
		t.Errorf("Backend = %q, want vault", u.Backend)
	}
	if !strings.Contains(u.Reason, reason) {
		t.Errorf("Reason = %q, want it to mention %q", u.Reason, reason)
	}
	return u
}

func TestVault_MadeKeySignsAndVerifies(t *testing.T) {
	t.Parallel()
	v := kmstest.NewVault(t)
	s := vaultSigner(t, v)
	name := uuid.NewString()

	key, err := s.Make(t.Context(), name)
	if err != nil {
		t.Fatalf("Make: %v", err)
	}
	if key.Backend != signer.Vault || key.Ref != name || len(key.Sealed.Ciphertext) != 0 {
		t.Fatalf("key = %+v, want backend vault, ref %s, nothing sealed", key, name)
	}
	held, ok := v.Key(name)
	if !ok {
		t.Fatalf("vault holds no key %s", name)
	}
	if !key.Public.Equal(held.Public[0]) {
		t.Errorf("public key %x, vault's version 1 is %x", key.Public, held.Public[0])
	}
	if held.Exportable || held.AllowPlaintextBackup {
		t.Errorf("key made exportable=%v allow_plaintext_backup=%v, want neither", held.Exportable, held.AllowPlaintextBackup)
	}

	message := []byte("a solana message to sign")
	sig, err := s.Sign(t.Context(), key, message)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if !ed25519.Verify(key.Public, message, sig) {
		t.Fatal("signature does not verify against the key's public key")
	}

	// Through the caller's path, which verifies every signature again.
	sig, err = signer.For(s, key)(t.Context(), key.Public, message)
	if err != nil || !ed25519.Verify(key.Public, message, sig) {
		t.Fatalf("signer.For: %v", err)
	}
	if got := v.Signed(); got != 2 {
		t.Errorf("vault signed %d times, want 2", got)
	}
}

func TestVault_MadeKeyCannotBeExported(t *testing.T) {
	t.Parallel()
	v := kmstest.NewVault(t)
	key := makeKey(t, vaultSigner(t, v))

	client, err := api.NewClient(&api.Config{Address: v.Addr})
	if err != nil {
		t.Fatal(err)
	}
	client.SetToken(v.Token)
	secret, err := client.Logical().ReadWithContext(t.Context(), "transit/export/signing-key/"+key.Ref)
	var re *api.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest {
		t.Fatalf("export answered %v, %v; want a 400 refusal", secret, err)
	}
}

func TestVault_SealedIsUnavailableAtOnce(t *testing.T) {
	t.Parallel()
	v := kmstest.NewVault(t)
	s := vaultSigner(t, v)
	key := makeKey(t, s)

	v.Seal(true)
	before := v.Requests()
	start := time.Now()
	_, err := s.Sign(t.Context(), key, []byte("message"))
	elapsed := time.Since(start)
	mustUnavailable(t, err, "sealed")
	if elapsed > 2*time.Second {
		t.Errorf("a sealed vault took %v to answer, want under 2s", elapsed)
	}
	if n := v.Requests() - before; n != 1 {
		t.Errorf("sign sent %d requests to a sealed vault, want 1 (no retries)", n)
	}
	if v.Signed() != 0 {
		t.Errorf("vault signed %d times while sealed", v.Signed())
	}

	_, err = s.Make(t.Context(), uuid.NewString())
	mustUnavailable(t, err, "sealed")
	mustUnavailable(t, s.Check(t.Context()), "sealed")

	v.Seal(false)
	if _, err := s.Sign(t.Context(), key, []byte("message")); err != nil {
		t.Fatalf("Sign after unseal: %v", err)
	}
}

func TestVault_CannotSignNowIsUnavailable(t *testing.T) {
	t.Parallel()

	t.Run("PermissionDenied", func(t *testing.T) {
		t.Parallel()
		v := kmstest.NewVault(t)
		s := vaultSigner(t, v)
		key := makeKey(t, s)
		v.Deny(true)
		_, err := s.Sign(t.Context(), key, []byte("m"))
		mustUnavailable(t, err, "permission")
		if v.Signed() != 0 {
			t.Errorf("vault signed %d times while denying", v.Signed())
		}
	})

	t.Run("WrongToken", func(t *testing.T) {
		t.Parallel()
		v := kmstest.NewVault(t)
		key := makeKey(t, vaultSigner(t, v))
		s := newSigner(t, vault.Config{Address: v.Addr, Token: "hvs.not-the-token"})
		_, err := s.Sign(t.Context(), key, []byte("m"))
		mustUnavailable(t, err, "permission")
	})

	t.Run("Unreachable", func(t *testing.T) {
		t.Parallel()
		s := newSigner(t, vault.Config{Address: closedAddr(t), Token: "hvs.token"})
		_, err := s.Sign(t.Context(), someKey(t), []byte("m"))
		mustUnavailable(t, err, "cannot reach")
	})

	t.Run("TooSlow", func(t *testing.T) {
		t.Parallel()
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // then a closed connection cancels r's context
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}))
		t.Cleanup(slow.Close)
		s := newSigner(t, vault.Config{Address: slow.URL, Token: "hvs.token", Timeout: 200 * time.Millisecond})
		start := time.Now()
		_, err := s.Sign(t.Context(), someKey(t), []byte("m"))
		mustUnavailable(t, err, "in time")
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("took %v, want the 200ms timeout to hold", elapsed)
		}
	})

	for _, tc := range []struct {
		name   string
		status int
		reason string
	}{
		{"RateLimited", http.StatusTooManyRequests, "rate"},
		{"ServerError", http.StatusInternalServerError, "server error"},
		{"Unavailable", http.StatusServiceUnavailable, "server error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := answering(t, tc.status, map[string]any{"errors": []string{"no"}})
			s := newSigner(t, vault.Config{Address: addr, Token: "hvs.token"})
			_, err := s.Sign(t.Context(), someKey(t), []byte("m"))
			mustUnavailable(t, err, tc.reason)
		})
	}
}

func TestVault_MissingKeyIsAnErrorNotUnavailable(t *testing.T) {
	t.Parallel()
	v := kmstest.NewVault(t)
	s := vaultSigner(t, v)
	_, err := s.Sign(t.Context(), someKey(t), []byte("m"))
	if err == nil {
		t.Fatal("signed with a key vault does not hold")
	}
	if _, ok := signer.Unavailable(err); ok {
		t.Errorf("error %v is an UnavailableError; a missing key is not fixed by retrying", err)
	}
}

func TestVault_PinsKeyVersionOne(t *testing.T) {
	t.Parallel()

	t.Run("RotatedKeyStillSignsWithVersionOne", func(t *testing.T) {
		t.Parallel()
		v := kmstest.NewVault(t)
		s := vaultSigner(t, v)
		key := makeKey(t, s)
		if err := v.Rotate(key.Ref); err != nil {
			t.Fatal(err)
		}
		held, _ := v.Key(key.Ref)
		if len(held.Public) != 2 || held.Public[1].Equal(key.Public) {
			t.Fatal("rotation did not make a second, different version")
		}
		message := []byte("after rotation")
		sig, err := s.Sign(t.Context(), key, message)
		if err != nil {
			t.Fatalf("Sign: %v", err)
		}
		if !ed25519.Verify(key.Public, message, sig) {
			t.Fatal("signature is not by version 1, the wallet's address")
		}
	})

	t.Run("RefusesASignatureOfAnotherVersion", func(t *testing.T) {
		t.Parallel()
		key := someKey(t)
		addr := answering(t, http.StatusOK, map[string]any{"data": map[string]any{
			"signature": "vault:v2:" + base64.StdEncoding.EncodeToString(make([]byte, 64)),
		}})
		s := newSigner(t, vault.Config{Address: addr, Token: "hvs.token"})
		if _, err := s.Sign(t.Context(), key, []byte("m")); err == nil {
			t.Fatal("accepted a version 2 signature")
		}
	})

	t.Run("SendsKeyVersionOne", func(t *testing.T) {
		t.Parallel()
		got := make(chan map[string]any, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body map[string]any
			_ = json.NewDecoder(r.Body).Decode(&body)
			got <- body
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"errors":["stop here"]}`))
		}))
		t.Cleanup(srv.Close)
		s := newSigner(t, vault.Config{Address: srv.URL, Token: "hvs.token"})
		_, _ = s.Sign(t.Context(), someKey(t), []byte("m"))
		body := <-got
		if v, _ := body["key_version"].(float64); v != 1 {
			t.Errorf("key_version = %v, want 1", body["key_version"])
		}
	})

	t.Run("RefusesASignatureByAnotherKey", func(t *testing.T) {
		t.Parallel()
		_, other, _ := ed25519.GenerateKey(rand.Reader)
		sig := ed25519.Sign(other, []byte("m"))
		addr := answering(t, http.StatusOK, map[string]any{"data": map[string]any{
			"signature": "vault:v1:" + base64.StdEncoding.EncodeToString(sig),
		}})
		s := newSigner(t, vault.Config{Address: addr, Token: "hvs.token"})
		_, err := s.Sign(t.Context(), someKey(t), []byte("m"))
		if !errors.Is(err, signer.ErrBadSignature) {
			t.Fatalf("error = %v, want ErrBadSignature", err)
		}
	})
}

func TestVault_MakeRefusesANameInUse(t *testing.T) {
	t.Parallel()
	v := kmstest.NewVault(t)
	s := vaultSigner(t, v)

	t.Run("MadeByThisSigner", func(t *testing.T) {
		key := makeKey(t, s)
		_, err := s.Make(t.Context(), key.Ref)
		if !errors.Is(err, vault.ErrNameInUse) {
			t.Fatalf("second Make: %v, want ErrNameInUse", err)
		}
	})

	t.Run("MadeExportableByAnother", func(t *testing.T) {
		name := uuid.NewString()
		client, err := api.NewClient(&api.Config{Address: v.Addr})
		if err != nil {
			t.Fatal(err)
		}
		client.SetToken(v.Token)
		if _, err := client.Logical().WriteWithContext(t.Context(), "transit/keys/"+name,
			map[string]any{"type": "ed25519", "exportable": true}); err != nil {
			t.Fatal(err)
		}
		_, err = s.Make(t.Context(), name)
		if !errors.Is(err, vault.ErrNameInUse) {
			t.Fatalf("Make over an exportable key: %v, want ErrNameInUse", err)
		}
	})

	t.Run("NotAName", func(t *testing.T) {
		for _, name := range []string{"", "../sys/seal", "a/b", "a b", strings.Repeat("x", 129)} {
			if _, err := s.Make(t.Context(), name); err == nil {
				t.Errorf("Make(%q) made a key", name)
			}
		}
	})
}

func TestVault_TokenNeverInErrors(t *testing.T) {
	t.Parallel()
	const token = "hvs.CAESIJ-a-secret-token-never-to-be-shown"

	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"errors": []string{"permission denied for token " + r.Header.Get("X-Vault-Token")},
		})
	}))
	t.Cleanup(echo.Close)
	sealed := kmstest.NewVault(t)
	sealed.Seal(true)
	denying := kmstest.NewVault(t)
	denying.Deny(true)

	for name, addr := range map[string]string{
		"Echoing":     echo.URL,
		"Sealed":      sealed.Addr,
		"Denying":     denying.Addr,
		"Unreachable": closedAddr(t),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSigner(t, vault.Config{Address: addr, Token: token})
			errs := []error{s.Check(t.Context())}
			_, err := s.Make(t.Context(), uuid.NewString())
			errs = append(errs, err)
			_, err = s.Sign(t.Context(), someKey(t), []byte("m"))
			errs = append(errs, err)
			for _, err := range errs {
				if err == nil {
					continue
				}
				if strings.Contains(err.Error(), "CAESIJ") {
					t.Errorf("error shows the token: %v", err)
				}
				if u, ok := signer.Unavailable(err); ok && strings.Contains(u.Reason, "CAESIJ") {
					t.Errorf("reason shows the token: %q", u.Reason)
				}
			}
			if errs[2] == nil {
				t.Error("Sign succeeded")
			}
		})
	}
}

func TestVault_CheckReportsHealth(t *testing.T) {
	t.Parallel()
	v := kmstest.NewVault(t)
	s := vaultSigner(t, v)
	if err := s.Check(t.Context()); err != nil {
		t.Fatalf("Check of a healthy vault: %v", err)
	}
	v.Standby(true)
	mustUnavailable(t, s.Check(t.Context()), "standby")
	v.Standby(false)
	v.Seal(true)
	mustUnavailable(t, s.Check(t.Context()), "sealed")

	down := newSigner(t, vault.Config{Address: closedAddr(t), Token: "hvs.token"})
	mustUnavailable(t, down.Check(t.Context()), "cannot reach")
}

func TestVault_UsesTheConfiguredNamespace(t *testing.T) {
	t.Parallel()
	v := kmstest.NewVault(t)
	v.RequireNamespace("team-a")

	s := newSigner(t, vault.Config{Address: v.Addr, Token: v.Token, Namespace: "team-a/"})
	key := makeKey(t, s)
	if _, err := s.Sign(t.Context(), key, []byte("m")); err != nil {
		t.Fatalf("Sign in the namespace: %v", err)
	}

	root := vaultSigner(t, v)
	_, err := root.Sign(t.Context(), key, []byte("m"))
	mustUnavailable(t, err, "permission")
}

func TestVault_SignRefusesAnotherBackendsKey(t *testing.T) {
	t.Parallel()
	v := kmstest.NewVault(t)
	s := vaultSigner(t, v)
	key := makeKey(t, s)
	key.Backend = signer.AWSKMS
	if _, err := s.Sign(t.Context(), key, []byte("m")); err == nil {
		t.Fatal("signed a key of another backend")
	}
	if v.Signed() != 0 {
		t.Error("vault was asked to sign")
	}
}

func TestNew_RefusesAnUnusableAddress(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"", "vault:8200", "ftp://vault", "http://"} {
		if _, err := vault.New(vault.Config{Address: addr, Token: "t"}); err == nil {
			t.Errorf("New(%q) accepted it", addr)
		}
	}
}

// someKey is a key of the vault backend that no server holds.
func someKey(t *testing.T) signer.Key {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer.Key{Public: pub, Backend: signer.Vault, Ref: uuid.NewString()}
}

// closedAddr is the address of a server that has stopped: connections to
// it are refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	return addr
}

// answering is a server that answers every request with status and body.
func answering(t *testing.T, status int, body any) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestVault_MakeReadsTheKeyWhenCreateAnswersNothing(t *testing.T) {
	t.Parallel()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var made atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case r.Method == http.MethodGet && !made.Load():
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"errors":[]}`))
		case r.Method == http.MethodGet:
			_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{
				"type": "ed25519", "exportable": false, "allow_plaintext_backup": false,
				"keys": map[string]any{"1": map[string]any{"public_key": base64.StdEncoding.EncodeToString(pub)}},
			}})
		default: // an older Vault's create: 204, no body
			made.Store(true)
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	s := newSigner(t, vault.Config{Address: srv.URL, Token: "hvs.token"})
	key, err := s.Make(t.Context(), uuid.NewString())
	if err != nil {
		t.Fatalf("Make: %v", err)
	}
	if !key.Public.Equal(pub) {
		t.Errorf("public key %x, want %x", key.Public, pub)
	}
}
