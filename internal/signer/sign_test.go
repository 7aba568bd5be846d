package signer

import (
	"context"
	"crypto/ed25519"
	"errors"
	"testing"
)

// signerFunc adapts a function to Signer.
type signerFunc func(ctx context.Context, key Key, message []byte) ([]byte, error)

func (f signerFunc) Sign(ctx context.Context, key Key, message []byte) ([]byte, error) {
	return f(ctx, key, message)
}

// For routes each signature to the key of the public key asked for, and
// verifies what the signer answers before it is used: another key's
// signature, or bytes that are no signature, are ErrBadSignature; a public
// key it holds no key for is ErrNoKey.
func TestFor_VerifiesEverySignatureAgainstTheKey(t *testing.T) {
	ctx := context.Background()
	priv, pub, _ := GenerateMasterKey()
	sealer, _ := NewSealer(pub)
	ks, _ := NewKeystore(priv)
	walletPub, sealed, err := sealer.NewWallet()
	if err != nil {
		t.Fatal(err)
	}
	payerPub, payerSealed, _ := sealer.NewWallet()
	wallet, payer := Key{Public: walletPub, Sealed: sealed}, Key{Public: payerPub, Sealed: payerSealed}
	msg := []byte("a transaction's message")
	otherPub, other, _ := ed25519.GenerateKey(nil)

	for _, tc := range []struct {
		name   string
		signer Signer
		pub    ed25519.PublicKey
		want   error
	}{
		{"the keystore, the wallet's key", ks, walletPub, nil},
		{"the keystore, the fee payer's key", ks, payerPub, nil},
		{"a key it does not hold", ks, otherPub, ErrNoKey},
		{"a signer answering another key's signature", signerFunc(func(context.Context, Key, []byte) ([]byte, error) {
			return ed25519.Sign(other, msg), nil
		}), walletPub, ErrBadSignature},
		{"a signer answering short bytes", signerFunc(func(context.Context, Key, []byte) ([]byte, error) {
			return make([]byte, 10), nil
		}), walletPub, ErrBadSignature},
		{"a signer that fails", signerFunc(func(context.Context, Key, []byte) ([]byte, error) {
			return nil, ErrOpen
		}), walletPub, ErrOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig, err := For(tc.signer, wallet, payer)(ctx, tc.pub, msg)
			switch {
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("err %v, want %v", err, tc.want)
			case tc.want == nil && (err != nil || !ed25519.Verify(tc.pub, msg, sig)):
				t.Fatalf("signature %x, err %v", sig, err)
			}
		})
	}
}

// A sealed secret moved to another wallet's row does not sign for it.
func TestKeystoreSign_RefusesAKeySealedForAnotherWallet(t *testing.T) {
	priv, pub, _ := GenerateMasterKey()
	sealer, _ := NewSealer(pub)
	ks, _ := NewKeystore(priv)
	_, sealed, _ := sealer.NewWallet()
	otherPub, _, _ := sealer.NewWallet()
	if _, err := ks.Sign(context.Background(), Key{Public: otherPub, Sealed: sealed}, []byte("m")); !errors.Is(err, ErrOpen) {
		t.Fatalf("err %v, want ErrOpen", err)
	}
}
