//go:build pkcs11

package pkcs11_test

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/signer/pkcs11/softhsmtest"
)

// BenchmarkSign compares a signature by the envelope keystore (open the
// sealed seed, sign in memory) with one by a SoftHSM2 token (a C_Sign on a
// pool session, then the signature checked against the wallet's key).
func BenchmarkSign(b *testing.B) {
	ctx := context.Background()
	message := make([]byte, 400) // a typical Solana transfer's message
	_, _ = rand.Read(message)

	b.Run("local", func(b *testing.B) {
		private, public, err := signer.GenerateMasterKey()
		if err != nil {
			b.Fatal(err)
		}
		sealer, err := signer.NewSealer(public)
		if err != nil {
			b.Fatal(err)
		}
		ks, err := signer.NewKeystore(private)
		if err != nil {
			b.Fatal(err)
		}
		pub, sealed, err := sealer.NewWallet()
		if err != nil {
			b.Fatal(err)
		}
		key := signer.Key{Public: pub, Sealed: sealed}
		for b.Loop() {
			if _, err := ks.Sign(ctx, key, message); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("pkcs11", func(b *testing.B) {
		s := newSigner(b, softhsmtest.Token(b))
		key := mustMake(b, s)
		for b.Loop() {
			if _, err := s.Sign(ctx, key, message); err != nil {
				b.Fatal(err)
			}
		}
	})

	// All of the pool's sessions busy at once.
	b.Run("pkcs11-parallel", func(b *testing.B) {
		s := newSigner(b, softhsmtest.Token(b))
		key := mustMake(b, s)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Sign(ctx, key, message); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
