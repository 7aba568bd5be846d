//go:build pkcs11

package softhsmtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer/pkcs11"
)

// DefaultModule is where Debian's softhsm2 package puts the library.
const DefaultModule = "/usr/lib/softhsm/libsofthsm2.so"

// Module is the SoftHSM2 library to load: PKCS11_MODULE, else
// DefaultModule.
func Module() string {
	if m := os.Getenv("PKCS11_MODULE"); m != "" {
		return m
	}
	return DefaultModule
}

var setup struct {
	once sync.Once
	dir  string
	err  error
}

// prepare points SoftHSM2 at a token directory of this process's own.
// SOFTHSM2_CONF is read once, at the library's C_Initialize, so it is set
// once, before any token is made, and the directory lives as long as the
// process (Run removes it at the end).
func prepare() error {
	setup.once.Do(func() {
		if _, err := os.Stat(Module()); err != nil {
			setup.err = fmt.Errorf("no SoftHSM2 library at %s (PKCS11_MODULE): run `make softhsm` to install it", Module())
			return
		}
		dir, err := os.MkdirTemp("", "softhsmtest-")
		if err != nil {
			setup.err = err
			return
		}
		conf := filepath.Join(dir, "softhsm2.conf")
		tokens := filepath.Join(dir, "tokens")
		body := fmt.Sprintf("directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n", tokens)
		if err := os.Mkdir(tokens, 0o700); err != nil {
			setup.err = err
			return
		}
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			setup.err = err
			return
		}
		setup.dir = dir
		setup.err = os.Setenv("SOFTHSM2_CONF", conf)
	})
	return setup.err
}

// Token makes a new token with a unique label and random PINs and returns
// the Config that signs with it. Without SoftHSM2 it fails the test,
// saying to run `make softhsm`: a skipped custody test proves nothing.
func Token(t testing.TB) pkcs11.Config {
	t.Helper()
	if err := prepare(); err != nil {
		t.Fatal(err)
	}
	label := "test-" + random(8)
	pin := random(8)
	// Tokens are made in this process, not with softhsm2-util: SoftHSM2
	// lists only the tokens its directory held at C_Initialize.
	if err := pkcs11.InitToken(Module(), label, random(8), pin); err != nil {
		t.Fatalf("make SoftHSM2 token %s: %v", label, err)
	}
	return pkcs11.Config{Module: Module(), TokenLabel: label, PIN: pin}
}

// Run runs a package's tests and then removes the token directory, for a
// TestMain: os.Exit(softhsmtest.Run(m)).
func Run(m *testing.M) int {
	code := m.Run()
	if setup.dir != "" {
		_ = os.RemoveAll(setup.dir)
	}
	return code
}

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
