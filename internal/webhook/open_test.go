package webhook

import (
	"testing"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// The opened-secret cache holds at most openedSecrets entries, however
// many endpoints deliver through one worker.
func TestOpenedSecretsAreBounded(t *testing.T) {
	t.Parallel()
	priv, pub, err := signer.GenerateMasterKey()
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := signer.NewSealer(pub)
	ks, _ := signer.NewKeystore(priv)
	d := &Deliverer{Keys: ks}
	for i := range openedSecrets + 50 {
		id := uuid.New()
		sealed, err := sealer.SealValue(SecretBinding(id), []byte("whsec_x"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.open(id, sealed.KeyID, sealed.Ciphertext)
		if err != nil || got != "whsec_x" {
			t.Fatalf("open %d: %q %v", i, got, err)
		}
	}
	if n := d.opened.Len(); n != openedSecrets {
		t.Fatalf("%d opened secrets cached, want at most %d", n, openedSecrets)
	}
}
