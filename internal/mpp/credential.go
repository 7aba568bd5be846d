package mpp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/seller"
)

// Bounds of what ParseCredential and ParseReceipt read (a credential
// carries one transaction of at most 1,232 bytes beside its challenge;
// a receipt is about 300 bytes).
const (
	maxCredentialBytes = 64 << 10
	maxReceiptBytes    = 8 << 10
)

// PayloadTransaction is the pull mode's payload type: the server
// broadcasts the signed transaction.
const PayloadTransaction = "transaction"

// Errors of ParseCredential and ParseReceipt.
var (
	ErrInvalidCredential = errors.New("invalid MPP credential")
	ErrInvalidReceipt    = errors.New("invalid MPP receipt")
)

// wireChallenge is a challenge as a credential echoes it (mppx's
// Credential.serialize: every parameter the challenge has).
type wireChallenge struct {
	ID          string `json:"id"`
	Realm       string `json:"realm"`
	Method      string `json:"method"`
	Intent      string `json:"intent"`
	Request     string `json:"request"`
	Description string `json:"description,omitempty"`
	Digest      string `json:"digest,omitempty"`
	Expires     string `json:"expires,omitempty"`
	Header      string `json:"header,omitempty"`
	Opaque      string `json:"opaque,omitempty"`
}

type wirePayload struct {
	Type        string `json:"type"`
	Transaction string `json:"transaction,omitempty"`
	Signature   string `json:"signature,omitempty"`
}

type wireCredential struct {
	Challenge wireChallenge `json:"challenge"`
	Payload   wirePayload   `json:"payload"`
	Source    string        `json:"source,omitempty"`
}

// Credential is the request field to retry with and its value: the field
// is Authorization, or the one the challenge's header= names; the value
// is "Payment " and base64url without padding of the JSON
// {"challenge": the challenge's parameters echoed verbatim (its request
// string as sent, which the seller re-canonicalizes before checking its
// HMAC), "payload": {"type": "transaction", "transaction": the standard
// base64 wire transaction}}.
func Credential(c Choice, tx *Transaction) (header, value string) {
	ch := c.Challenge
	header = HeaderAuthorization
	if ch.Header != "" {
		header = ch.Header
	}
	w := wireCredential{
		Challenge: wireChallenge{
			ID: ch.ID, Realm: ch.Realm, Method: ch.Method, Intent: ch.Intent, Request: ch.Request,
			Description: ch.Description, Digest: ch.Digest, Expires: ch.Expires, Header: ch.Header, Opaque: ch.Opaque,
		},
		Payload: wirePayload{Type: PayloadTransaction, Transaction: tx.Base64},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(w) // strings only: cannot fail
	return header, Scheme + " " + base64.RawURLEncoding.EncodeToString(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// ParsedCredential is a decoded Payment credential.
type ParsedCredential struct {
	Challenge Challenge
	// Type is the payload's type: PayloadTransaction (Transaction is the
	// standard base64 wire transaction) or "signature" (push mode:
	// Signature is the landed transaction's, base58).
	Type, Transaction, Signature string
	Source                       string
}

// ParseCredential decodes an Authorization (or header=) value back into
// the challenge it answers and its payload, as the official server reads
// it: the "Payment" scheme, then base64url or base64 of a JSON object
// whose challenge carries id, realm, method, intent and request, and
// whose payload has a type. For tests, and for the service to check what
// it handed out.
func ParseCredential(value string) (ParsedCredential, error) {
	bad := func(format string, a ...any) (ParsedCredential, error) {
		return ParsedCredential{}, fmt.Errorf("%w: "+format, append([]any{ErrInvalidCredential}, a...)...)
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(value), " ")
	if !ok || !strings.EqualFold(scheme, Scheme) {
		return bad("not the %s scheme", Scheme)
	}
	raw, err := decodeBase64URL(strings.TrimSpace(token), maxCredentialBytes)
	if err != nil {
		return bad("%v", err)
	}
	var w struct {
		Challenge map[string]json.RawMessage `json:"challenge"`
		Payload   map[string]json.RawMessage `json:"payload"`
		Source    json.RawMessage            `json:"source"`
	}
	if err := json.Unmarshal(raw, &w); err != nil || w.Challenge == nil || w.Payload == nil {
		return bad("not a JSON object with a challenge and a payload")
	}
	str := func(m map[string]json.RawMessage, name string, required bool) (string, error) {
		v, ok := m[name]
		if !ok || seller.Null(v) {
			if required {
				return "", fmt.Errorf("%s is missing", name)
			}
			return "", nil
		}
		s, ok := seller.String(v)
		if !ok {
			return "", fmt.Errorf("%s is not a string", name)
		}
		return s, nil
	}
	var p ParsedCredential
	var errs []error
	field := func(dst *string, m map[string]json.RawMessage, name string, required bool) {
		s, err := str(m, name, required)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = s
	}
	c := &p.Challenge
	field(&c.ID, w.Challenge, "id", true)
	field(&c.Realm, w.Challenge, "realm", true)
	field(&c.Method, w.Challenge, "method", true)
	field(&c.Intent, w.Challenge, "intent", true)
	field(&c.Request, w.Challenge, "request", true)
	field(&c.Expires, w.Challenge, "expires", false)
	field(&c.Description, w.Challenge, "description", false)
	field(&c.Digest, w.Challenge, "digest", false)
	field(&c.Opaque, w.Challenge, "opaque", false)
	field(&c.Header, w.Challenge, "header", false)
	field(&p.Type, w.Payload, "type", true)
	field(&p.Transaction, w.Payload, "transaction", false)
	field(&p.Signature, w.Payload, "signature", false)
	if !seller.Null(w.Source) {
		s, ok := seller.String(w.Source)
		if !ok {
			errs = append(errs, errors.New("source is not a string"))
		}
		p.Source = s
	}
	if err := errors.Join(errs...); err != nil {
		return bad("%v", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return p, nil
}

// Receipt is the seller's Payment-Receipt: its claim that the payment
// settled, to be checked on chain.
type Receipt struct {
	Method, Reference, Status, Timestamp, ChallengeID, ExternalID string
	// Signature is Reference parsed when Method is "solana": the landed
	// transaction's id (the first signature: the seller's fee payer's when
	// it paid the fee, else the wallet's).
	Signature sol.Signature
}

// ParseReceipt reads a Payment-Receipt value: base64url or base64 of a
// JSON object with method, reference, status "success" and an RFC 3339
// timestamp, and optionally challengeId and externalId; a Solana receipt's
// reference must be a transaction signature.
func ParseReceipt(v string) (Receipt, error) {
	bad := func(format string, a ...any) (Receipt, error) {
		return Receipt{}, fmt.Errorf("%w: "+format, append([]any{ErrInvalidReceipt}, a...)...)
	}
	raw, err := decodeBase64URL(strings.TrimSpace(v), maxReceiptBytes)
	if err != nil {
		return bad("%v", err)
	}
	var w map[string]json.RawMessage
	if err := json.Unmarshal(raw, &w); err != nil || w == nil {
		return bad("not a JSON object")
	}
	var r Receipt
	for _, f := range []struct {
		name     string
		dst      *string
		required bool
	}{
		{"method", &r.Method, true}, {"reference", &r.Reference, true}, {"status", &r.Status, true},
		{"timestamp", &r.Timestamp, true}, {"challengeId", &r.ChallengeID, false}, {"externalId", &r.ExternalID, false},
	} {
		raw, ok := w[f.name]
		if !ok || seller.Null(raw) {
			if f.required {
				return bad("%s is missing", f.name)
			}
			continue
		}
		s, ok := seller.String(raw)
		if !ok {
			return bad("%s is not a string", f.name)
		}
		*f.dst = s
	}
	if r.Status != "success" {
		return bad("status %q is not success", seller.Clip(r.Status))
	}
	if r.Method == "" || r.Reference == "" {
		return bad("method and reference must not be empty")
	}
	if _, err := parseTime(r.Timestamp); err != nil {
		return bad("timestamp %q: %v", seller.Clip(r.Timestamp), err)
	}
	if r.Method == MethodSolana {
		sig, err := sol.SignatureFromBase58(r.Reference)
		if err != nil || sig.IsZero() || sig.String() != r.Reference {
			return bad("reference %q is not a Solana transaction signature", seller.Clip(r.Reference))
		}
		r.Signature = sig
	}
	return r, nil
}
