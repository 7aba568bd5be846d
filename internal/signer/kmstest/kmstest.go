// Package kmstest runs in-memory stand-ins for the key services the
// signer backends talk to: Vault's Transit secrets engine and AWS KMS. Each
// is an httptest server that speaks the service's documented wire protocol
// and holds real crypto/ed25519 keys, so a signer's test exercises the
// official client end to end and verifies real signatures. They are written
// from the public API documentation, not from the services themselves:
// they answer what the docs say, and no more.
package kmstest

import (
	"encoding/json"
	"net/http"
)

func writeJSON(w http.ResponseWriter, contentType string, status int, body any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
