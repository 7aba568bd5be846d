//go:build !pkcs11

package pkcs11

import (
	"context"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// Signer is the PKCS#11 keeper. This binary was built without the pkcs11
// tag, so New never returns one and its methods only report ErrNotBuilt.
type Signer struct{}

var _ signer.Keeper = (*Signer)(nil)

// New reports ErrNotBuilt: this binary has no PKCS#11 support.
func New(Config) (*Signer, error) { return nil, ErrNotBuilt }

// InitToken reports ErrNotBuilt.
func InitToken(module, label, soPIN, pin string) error { return ErrNotBuilt }

// Backend is signer.PKCS11.
func (*Signer) Backend() signer.Backend { return signer.PKCS11 }

// Make reports ErrNotBuilt.
func (*Signer) Make(context.Context, string) (signer.Key, error) { return signer.Key{}, ErrNotBuilt }

// Import reports ErrNotBuilt.
func (*Signer) Import(context.Context, string, []byte) (signer.Key, error) {
	return signer.Key{}, ErrNotBuilt
}

// Sign reports ErrNotBuilt.
func (*Signer) Sign(context.Context, signer.Key, []byte) ([]byte, error) { return nil, ErrNotBuilt }

// Delete reports ErrNotBuilt.
func (*Signer) Delete(context.Context, string) error { return ErrNotBuilt }

// Check reports ErrNotBuilt.
func (*Signer) Check(context.Context) error { return ErrNotBuilt }

// Close does nothing.
func (*Signer) Close() error { return nil }
