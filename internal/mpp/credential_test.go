package mpp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// The credential is "Payment " and base64url without padding of the JSON
// the official server reads: the challenge's parameters echoed verbatim
// (the request string as sent, optional ones only when present) and the
// pull mode's payload with the standard base64 transaction; it goes in
// Authorization, or the field header= names. ParseCredential reads it
// back.
func TestCredential(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	c := choose(t, w, sponsored(request(s.pub, "1000"), f.pub))
	c.Challenge.Description = `Météo "☀" \ 🌦 <b>&`
	tx, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name, value := Credential(c, tx)
	token, ok := strings.CutPrefix(value, "Payment ")
	if name != HeaderAuthorization || !ok || strings.ContainsAny(token, "+/=") {
		t.Fatalf("%s: %s", name, value)
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"challenge": map[string]any{
			"id": c.Challenge.ID, "realm": "seller.example", "method": "solana", "intent": "charge",
			"request": c.Challenge.Request, "expires": testExpires, "description": `Météo "☀" \ 🌦 <b>&`,
		},
		"payload": map[string]any{"type": "transaction", "transaction": tx.Base64},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("credential\n got %v\nwant %v", got, want)
	}
	if !bytes.Contains(raw, []byte("<b>&")) {
		t.Fatal("HTML characters were escaped: the echo is not verbatim")
	}
	p, err := ParseCredential(value)
	if err != nil || p.Challenge != c.Challenge || p.Type != PayloadTransaction || p.Transaction != tx.Base64 {
		t.Fatalf("parsed back %+v %v", p, err)
	}

	c.Challenge.Header, c.Challenge.Opaque, c.Challenge.Digest = HeaderPaymentAuthorization, "eyJvcmRlciI6IjQyIn0", "sha-256=abc"
	name, value = Credential(c, tx)
	p, err = ParseCredential(value)
	if name != HeaderPaymentAuthorization || err != nil || p.Challenge != c.Challenge {
		t.Fatalf("with header=: %s %+v %v", name, p, err)
	}
}

func TestParseCredential_Refuses(t *testing.T) {
	t.Parallel()
	enc := func(s string) string { return "Payment " + base64.RawURLEncoding.EncodeToString([]byte(s)) }
	ch := `"challenge":{"id":"a","realm":"r","method":"solana","intent":"charge","request":"e30"}`
	if _, err := ParseCredential(enc(`{` + ch + `,"payload":{"type":"transaction","transaction":"AQ=="}}`)); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{
		"another scheme":     "Bearer abc",
		"no token":           "Payment",
		"not base64":         "Payment ***",
		"not JSON":           enc("{"),
		"no payload":         enc(`{` + ch + `}`),
		"no challenge":       enc(`{"payload":{"type":"transaction"}}`),
		"no payload type":    enc(`{` + ch + `,"payload":{"transaction":"AQ=="}}`),
		"no request":         enc(`{"challenge":{"id":"a","realm":"r","method":"solana","intent":"charge"},"payload":{"type":"transaction"}}`),
		"an id not a string": enc(`{"challenge":{"id":1,"realm":"r","method":"solana","intent":"charge","request":"e30"},"payload":{"type":"transaction"}}`),
		"too long":           "Payment " + strings.Repeat("A", maxCredentialBytes+1),
	} {
		if _, err := ParseCredential(v); !errors.Is(err, ErrInvalidCredential) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParseReceipt(t *testing.T) {
	t.Parallel()
	sig := sol.SignatureFromBytes(bytes.Repeat([]byte{7}, 64))
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	// Captured from the official server.
	official := "eyJtZXRob2QiOiJzb2xhbmEiLCJyZWZlcmVuY2UiOiIyYXRSV3pRUExHRGt3TDJydHQ0cDVWM0J5S2VIRnpnYkdqQmFERHN5VXBoeXNjNDdIcVhpQzduMnRuS3p1R01FaUxUTWp3ZDJSM00yN3NmTUpyMUxIYkhtIiwic3RhdHVzIjoic3VjY2VzcyIsInRpbWVzdGFtcCI6IjIwMjYtMTEtMjhUMDU6MjI6MDUuMjU0WiIsImNoYWxsZW5nZUlkIjoiS28zVHU2ZHNaVmRwanR1aW5pMTFxX002X01qVmJWcnRMaWdXOV95dWctNCJ9"
	r, err := ParseReceipt(official)
	if err != nil || r.Method != "solana" || r.Status != "success" || r.ChallengeID != "Ko3Tu6dsZVdpjtuini11q_M6_MjVbVrtLigW9_yug-4" ||
		r.Reference != "2atRWzQPLGDkwL2rtt4p5V3ByKeHFzgbGjBaDDsyUphysc47HqXiC7n2tnKzuGMEiLTMjwd2R3M27sfMJr1LHbHm" || r.Signature.String() != r.Reference {
		t.Fatalf("%+v %v", r, err)
	}
	r, err = ParseReceipt(base64.StdEncoding.EncodeToString([]byte(`{"method":"solana","reference":"` + sig.String() + `","status":"success","timestamp":"2026-11-28T05:12:43Z","externalId":"order-42","future":1}`)))
	if err != nil || r.Signature != sig || r.ExternalID != "order-42" {
		t.Fatalf("%+v %v", r, err)
	}
	if r, err := ParseReceipt(enc(`{"method":"tempo","reference":"0xabc","status":"success","timestamp":"2026-11-28T05:12:43Z"}`)); err != nil || !r.Signature.IsZero() {
		t.Fatalf("another method's receipt: %+v %v", r, err)
	}
	for name, v := range map[string]string{
		"not base64":              "{}",
		"not JSON":                enc("{"),
		"no reference":            enc(`{"method":"solana","status":"success","timestamp":"2026-11-28T05:12:43Z"}`),
		"a failure":               enc(`{"method":"solana","reference":"` + sig.String() + `","status":"failed","timestamp":"2026-11-28T05:12:43Z"}`),
		"no timestamp":            enc(`{"method":"solana","reference":"` + sig.String() + `","status":"success"}`),
		"a timestamp of no zone":  enc(`{"method":"solana","reference":"` + sig.String() + `","status":"success","timestamp":"2026-11-28T05:12:43"}`),
		"a reference not a sig":   enc(`{"method":"solana","reference":"0x1234","status":"success","timestamp":"2026-11-28T05:12:43Z"}`),
		"a reference as a number": enc(`{"method":"solana","reference":5,"status":"success","timestamp":"2026-11-28T05:12:43Z"}`),
		"too long":                strings.Repeat("A", maxReceiptBytes+4),
	} {
		if _, err := ParseReceipt(v); !errors.Is(err, ErrInvalidReceipt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
