package pkcs11_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer/pkcs11"
)

func TestPKCS11_PINFromFileDropsTheNewline(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pin")
	if err := os.WriteFile(path, []byte("12 34\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pin, err := pkcs11.PINFromFile(path)
	if err != nil || pin != "12 34" {
		t.Fatalf("PINFromFile = %q, %v; want %q", pin, err, "12 34")
	}
}
