// Package pkcs11 is the signer backend that keeps wallet keys inside a
// PKCS#11 token (an HSM, or SoftHSM2 for development): Ed25519 key pairs
// are generated there, marked sensitive and non-extractable, and sign there
// with CKM_EDDSA. The service holds only each key's label and public key.
//
// The real backend needs cgo (the module is a C library loaded with
// dlopen), so it is built only with the pkcs11 build tag; without it, New
// reports that the binary lacks PKCS#11 support and everything else still
// compiles, which keeps the default build CGO_ENABLED=0 friendly.
package pkcs11

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// DefaultSessions is the session pool's size when Config.Sessions is 0.
const DefaultSessions = 4

// Config says which token signs and how to log in to it.
type Config struct {
	// Module is the path of the PKCS#11 library, e.g.
	// /usr/lib/softhsm/libsofthsm2.so.
	Module string
	// TokenLabel names the token (the HSM partition) that holds the keys.
	TokenLabel string
	// PIN is the token's user PIN (PKCS11_PIN, or read from
	// PKCS11_PIN_FILE with PINFromFile).
	PIN string
	// Sessions is how many sessions sign at once; 0 means DefaultSessions.
	Sessions int
}

// PINFromFile reads a PIN kept in a file (a mounted secret), without the
// trailing newline an editor or `echo` leaves.
func PINFromFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("pkcs11: read PIN file: %w", err)
	}
	pin := strings.TrimRight(string(b), "\r\n")
	if pin == "" {
		return "", fmt.Errorf("pkcs11: PIN file %s is empty", path)
	}
	return pin, nil
}

// ErrNotBuilt is New's answer in a binary built without the pkcs11 tag.
var ErrNotBuilt = errors.New("this binary was built without PKCS#11 support: build with -tags pkcs11")

// ErrLabelInUse means Make or Import was asked for a name the token
// already has an object under: a label names one wallet's key, never two.
var ErrLabelInUse = errors.New("pkcs11: the token already has a key with this label")

// ErrKeyMismatch means the key under a wallet's label is not the wallet's
// key (another public key, or a private half that does not sign for it):
// nothing signed with it is returned.
var ErrKeyMismatch = errors.New("pkcs11: the key under this label is not the wallet's key")

// ErrPINRefused is wrapped in the *signer.UnavailableError of a login the
// token refused for the PIN itself: retrying can only bring a real token
// closer to locking the PIN, so only a restart with another PIN may.
var ErrPINRefused = errors.New("pkcs11: PIN refused")

// ErrClosed means the Signer was closed.
var ErrClosed = errors.New("pkcs11: signer closed")
