package signer

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
)

// Key names a key a Signer holds: its public key, the backend that holds
// it and that backend's reference (a PKCS#11 label, a Vault key name, a
// KMS key id) or, for the envelope Keystore, its sealed secret. It carries
// no secret a caller could use.
type Key struct {
	Public  ed25519.PublicKey
	Backend Backend // "" is Local
	Ref     string
	Sealed  Sealed
}

// Signer signs message bytes with keys it holds, and never returns a key.
// The Keystore (HPKE envelopes opened for one signature) is one; a signer
// backed by an HSM or a KMS is another.
type Signer interface {
	Sign(ctx context.Context, key Key, message []byte) ([]byte, error)
}

// SignFunc signs message with the key whose public key is pub. A
// transaction's builder asks it once per required signature.
type SignFunc func(ctx context.Context, pub ed25519.PublicKey, message []byte) ([]byte, error)

// ErrNoKey means a message was to be signed by a key the SignFunc does
// not hold.
var ErrNoKey = errors.New("no key for this signer")

// ErrBadSignature means a signer answered with bytes that do not verify
// against the key's public key: never used.
var ErrBadSignature = errors.New("the signature does not verify against the key's public key")

// For is a SignFunc over s with these keys. Every signature it returns
// has been verified against the key's public key: a signer that answers
// with another key's signature, or garbage, fails here, before anything is
// stored or broadcast.
func For(s Signer, keys ...Key) SignFunc {
	return func(ctx context.Context, pub ed25519.PublicKey, message []byte) ([]byte, error) {
		for _, k := range keys {
			if !k.Public.Equal(pub) {
				continue
			}
			sig, err := s.Sign(ctx, k, message)
			if err != nil {
				return nil, err
			}
			if err := verify(pub, message, sig); err != nil {
				return nil, err
			}
			return sig, nil
		}
		return nil, fmt.Errorf("%w %x", ErrNoKey, []byte(pub))
	}
}

func verify(pub ed25519.PublicKey, message, sig []byte) error {
	if len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, message, sig) {
		return ErrBadSignature
	}
	return nil
}

// Plain is a SignFunc over keys held in memory: for tests and local
// tools, which make their own keys (never a wallet's).
func Plain(keys ...ed25519.PrivateKey) SignFunc {
	return func(_ context.Context, pub ed25519.PublicKey, message []byte) ([]byte, error) {
		for _, k := range keys {
			if len(k) == ed25519.PrivateKeySize && k.Public().(ed25519.PublicKey).Equal(pub) {
				return ed25519.Sign(k, message), nil
			}
		}
		return nil, fmt.Errorf("%w %x", ErrNoKey, []byte(pub))
	}
}

// Sign opens key's sealed secret, signs message with it and clears it:
// the secret lives for one signature, inside this package.
func (k *Keystore) Sign(_ context.Context, key Key, message []byte) ([]byte, error) {
	secret, err := k.open(key.Sealed, key.Public)
	if err != nil {
		return nil, err
	}
	defer clear(secret)
	return ed25519.Sign(secret, message), nil
}
