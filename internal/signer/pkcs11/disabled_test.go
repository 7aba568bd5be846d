//go:build !pkcs11

package pkcs11_test

import (
	"errors"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer/pkcs11"
)

func TestPKCS11_WithoutTheTagNewSaysHowToBuild(t *testing.T) {
	t.Parallel()
	s, err := pkcs11.New(pkcs11.Config{Module: "/usr/lib/softhsm/libsofthsm2.so", TokenLabel: "t", PIN: "1"})
	if s != nil || !errors.Is(err, pkcs11.ErrNotBuilt) {
		t.Fatalf("New = %v, %v; want nil, ErrNotBuilt", s, err)
	}
}
