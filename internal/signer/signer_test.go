package signer

import (
	"crypto/ed25519"
	"errors"
	"testing"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	priv, pub, err := GenerateMasterKey()
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := NewSealer(pub)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := NewKeystore(priv)
	if err != nil {
		t.Fatal(err)
	}
	walletPub, sealed, err := sealer.NewWallet()
	if err != nil {
		t.Fatal(err)
	}
	if sealed.KeyID != sealer.KeyID() {
		t.Fatalf("key id %q, want %q", sealed.KeyID, sealer.KeyID())
	}
	secret, err := ks.open(sealed, walletPub)
	if err != nil {
		t.Fatal(err)
	}
	if !secret.Public().(ed25519.PublicKey).Equal(walletPub) {
		t.Fatal("opened secret is not the wallet's")
	}

	// Bound to the wallet: the same ciphertext read for another wallet fails.
	otherPub, _, _ := sealer.NewWallet()
	if _, err := ks.open(sealed, otherPub); !errors.Is(err, ErrOpen) {
		t.Fatalf("open for another wallet: %v, want ErrOpen", err)
	}
	// Tampering is detected.
	bad := Sealed{KeyID: sealed.KeyID, Ciphertext: append([]byte(nil), sealed.Ciphertext...)}
	bad.Ciphertext[len(bad.Ciphertext)-1] ^= 1
	if _, err := ks.open(bad, walletPub); !errors.Is(err, ErrOpen) {
		t.Fatalf("tampered: %v, want ErrOpen", err)
	}
	// Another master key cannot open it.
	priv2, _, _ := GenerateMasterKey()
	ks2, _ := NewKeystore(priv2)
	if _, err := ks2.open(sealed, walletPub); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("other keystore: %v, want ErrUnknownKey", err)
	}
	// Rotation: a keystore holding the new and the old key opens old secrets.
	ks3, err := NewKeystore(priv2 + "," + priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks3.open(sealed, walletPub); err != nil {
		t.Fatalf("rotated keystore: %v", err)
	}
}

func TestBadKeyMaterial(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "not base64!", "AAAA", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		if _, err := NewSealer(in); err == nil {
			t.Errorf("NewSealer(%q) accepted", in)
		}
		if _, err := NewKeystore(in); err == nil {
			t.Errorf("NewKeystore(%q) accepted", in)
		}
	}
}

// A sealed value opens only with its binding and its master key.
func TestSealOpenValue(t *testing.T) {
	t.Parallel()
	priv, pub, _ := GenerateMasterKey()
	otherPriv, _, _ := GenerateMasterKey()
	sealer, _ := NewSealer(pub)
	ks, _ := NewKeystore(priv)
	other, _ := NewKeystore(otherPriv)
	s, err := sealer.SealValue("endpoint:1", []byte("whsec_x"))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ks.OpenValue(s, "endpoint:1"); err != nil || string(v) != "whsec_x" {
		t.Fatalf("open: %q %v", v, err)
	}
	if _, err := ks.OpenValue(s, "endpoint:2"); err == nil {
		t.Fatal("opened with another binding")
	}
	if _, err := other.OpenValue(s, "endpoint:1"); err == nil {
		t.Fatal("opened with another master key")
	}
}
