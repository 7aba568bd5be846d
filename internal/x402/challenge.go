// Package x402 is the buyer's side of the x402 payment protocol on Solana:
// it reads a seller's 402 challenge (v2's PAYMENT-REQUIRED header or v1's
// JSON body), chooses the one requirement the wallet can pay (scheme
// `exact`, the wallet's network, that network's USDC), builds and partially
// signs the scheme's transaction exactly as the official facilitator
// verifies it, and encodes the payment header. It is pure: no RPC, no
// storage, no policy decisions (of package policy it uses only the rule
// on text people read). The caller gives the blockhash and the wallet's
// key, so signing happens where keys are unsealed (the worker), and the
// policy, reservations and approvals stay in the service around it.
//
// The protocol's sources: specs/transports-v2/http.md and
// specs/schemes/exact/scheme_exact_svm.md in x402-foundation/x402, and the
// @x402/svm 2.27 client and facilitator, which the tests run on this
// package's output (scripts/x402-check).
package x402

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/seller"
)

// The HTTP headers of the exchange, by protocol version.
const (
	HeaderPaymentRequired   = "PAYMENT-REQUIRED"   // v2 challenge (v1 sends a JSON body)
	HeaderPaymentSignature  = "PAYMENT-SIGNATURE"  // v2 payment
	HeaderXPayment          = "X-PAYMENT"          // v1 payment
	HeaderPaymentResponse   = "PAYMENT-RESPONSE"   // v2 settlement answer
	HeaderXPaymentResponse  = "X-PAYMENT-RESPONSE" // v1 settlement answer
	SchemeExact             = "exact"
	maxAccepts              = 32
	maxNetworkLen           = 128
	maxSchemeLen            = 64
	maxAmountDigits         = 20 // len("18446744073709551615")
	maxChallengeHeaderBytes = (MaxChallengeBytes + 2) / 3 * 4
)

// MaxChallengeBytes bounds a challenge's JSON: real ones are well under
// 4 KiB, and a seller's text reaches our logs, approvals and webhooks.
const MaxChallengeBytes = 64 << 10

// ErrInvalidChallenge is wrapped by every parsing failure of a challenge
// (not JSON, too large, wrong version, no accepts): the seller's answer is
// not an x402 challenge we can read.
var ErrInvalidChallenge = errors.New("invalid x402 challenge")

// Resource is what the seller charges for.
type Resource struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// PaymentRequired is a parsed challenge of either version.
type PaymentRequired struct {
	// Version is 1 (the 402's JSON body) or 2 (the PAYMENT-REQUIRED header).
	Version int
	// Error is the seller's message, if any. Unlike the other fields it is
	// not held to the rule on seller text (see sellerText): it is neither
	// stored nor shown.
	Error string
	// Resource is v2's top-level resource; v1 carries one per requirement
	// (Requirement.Resource).
	Resource Resource
	// Accepts are the seller's requirements in its order.
	Accepts []Requirement

	rawResource   json.RawMessage // v2: echoed into the payment as the official client does
	rawExtensions json.RawMessage
}

// Requirement is one entry of `accepts`. Its fields are the seller's text;
// only the entry that is chosen is validated in full (Select), so an entry
// for another chain (EVM addresses, other schemes) never fails the parse.
// A field of the wrong type, or carrying a character the rule on seller
// text refuses (sellerText), is left empty and makes the entry malformed.
type Requirement struct {
	Scheme  string
	Network string
	// AmountText is `amount ?? maxAmountRequired` as the seller wrote it
	// (see readAmount), empty when neither is present.
	AmountText        string
	Asset             string
	PayTo             string
	MaxTimeoutSeconds int64
	// FeePayer is extra.feePayer, Memo extra.memo ("" when absent).
	FeePayer string
	Memo     string
	// Resource is v1's per-entry resource, description and mime type.
	Resource Resource
	// Raw is the entry exactly as the seller sent it: v2 echoes it as the
	// payment's `accepted`, which the seller matches by deep equality.
	Raw json.RawMessage

	malformed string // why the entry cannot be read, if it cannot
}

// DecodePaymentRequiredHeader reads a v2 PAYMENT-REQUIRED header value:
// base64 (standard alphabet, padding optional) of the PaymentRequired JSON.
func DecodePaymentRequiredHeader(value string) (*PaymentRequired, error) {
	raw, err := decodeBase64(value, maxChallengeHeaderBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrInvalidChallenge, err)
	}
	pr, err := ParsePaymentRequired(raw)
	if err != nil {
		return nil, err
	}
	if pr.Version != 2 {
		return nil, fmt.Errorf("%w: the %s header carries x402Version %d (want 2)", ErrInvalidChallenge, HeaderPaymentRequired, pr.Version)
	}
	return pr, nil
}

// decodeBase64 accepts standard base64 with or without padding (the
// official encoder pads; some servers strip it), bounded before decoding.
func decodeBase64(value string, limit int) ([]byte, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, errors.New("empty")
	}
	if len(value) > limit {
		return nil, fmt.Errorf("longer than %d bytes", limit)
	}
	enc := base64.StdEncoding
	if len(value)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	out, err := enc.Strict().DecodeString(value)
	if err != nil {
		return nil, errors.New("not base64")
	}
	return out, nil
}

// wirePaymentRequired is the JSON of both versions' challenge.
type wirePaymentRequired struct {
	X402Version json.RawMessage   `json:"x402Version"`
	Error       json.RawMessage   `json:"error"`
	Resource    json.RawMessage   `json:"resource"`
	Accepts     []json.RawMessage `json:"accepts"`
	Extensions  json.RawMessage   `json:"extensions"`
}

// ParsePaymentRequired reads a challenge's JSON: the decoded v2 header or
// the v1 402 body. It checks the envelope strictly (size, UTF-8, version
// 1 or 2, 1 to 32 entries, each a JSON object, v2's resource held to the
// rule on seller text) and reads the entries' fields without judging
// them beyond their type and that rule (an entry that breaks either is
// malformed); Select judges the one it may pay.
func ParsePaymentRequired(data []byte) (*PaymentRequired, error) {
	if len(data) > MaxChallengeBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrInvalidChallenge, MaxChallengeBytes)
	}
	if !utf8.Valid(data) {
		// encoding/json would replace bad bytes silently: a memo or an
		// address would then differ from what the seller sent.
		return nil, fmt.Errorf("%w: not UTF-8", ErrInvalidChallenge)
	}
	var w wirePaymentRequired
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %s", ErrInvalidChallenge, seller.JSONError(err))
	}
	version, ok := seller.Uint(w.X402Version)
	if !ok || (version != 1 && version != 2) {
		return nil, fmt.Errorf("%w: x402Version must be 1 or 2", ErrInvalidChallenge)
	}
	pr := &PaymentRequired{Version: int(version)}
	if s, ok := seller.String(w.Error); ok {
		pr.Error = s
	}
	if len(w.Accepts) == 0 {
		return nil, fmt.Errorf("%w: accepts is empty or missing", ErrInvalidChallenge)
	}
	if len(w.Accepts) > maxAccepts {
		return nil, fmt.Errorf("%w: more than %d accepts", ErrInvalidChallenge, maxAccepts)
	}
	if pr.Version == 2 {
		if seller.Null(w.Resource) {
			return nil, fmt.Errorf("%w: v2 challenge without resource", ErrInvalidChallenge)
		}
		if err := json.Unmarshal(w.Resource, &pr.Resource); err != nil || pr.Resource.URL == "" {
			return nil, fmt.Errorf("%w: resource must be an object with a url", ErrInvalidChallenge)
		}
		for _, f := range []struct{ name, text string }{
			{"resource.url", pr.Resource.URL}, {"resource.description", pr.Resource.Description}, {"resource.mimeType", pr.Resource.MimeType},
		} {
			if err := seller.Text(f.name, f.text); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrInvalidChallenge, err)
			}
		}
		pr.rawResource = w.Resource
		if !seller.Null(w.Extensions) {
			if !seller.Object(w.Extensions) {
				return nil, fmt.Errorf("%w: extensions must be an object", ErrInvalidChallenge)
			}
			pr.rawExtensions = w.Extensions
		}
	}
	for i, raw := range w.Accepts {
		if !seller.Object(raw) {
			return nil, fmt.Errorf("%w: accepts[%d] is not an object", ErrInvalidChallenge, i)
		}
		pr.Accepts = append(pr.Accepts, parseRequirement(raw))
	}
	return pr, nil
}

// wireRequirement is one `accepts` entry of either version; fields are
// raw so a wrong type marks the entry, not the whole challenge.
type wireRequirement struct {
	Scheme            json.RawMessage `json:"scheme"`
	Network           json.RawMessage `json:"network"`
	Amount            json.RawMessage `json:"amount"`
	MaxAmountRequired json.RawMessage `json:"maxAmountRequired"`
	Asset             json.RawMessage `json:"asset"`
	PayTo             json.RawMessage `json:"payTo"`
	MaxTimeoutSeconds json.RawMessage `json:"maxTimeoutSeconds"`
	Extra             json.RawMessage `json:"extra"`
	Resource          json.RawMessage `json:"resource"` // v1: a URL string
	Description       json.RawMessage `json:"description"`
	MimeType          json.RawMessage `json:"mimeType"`
}

func parseRequirement(raw json.RawMessage) Requirement {
	r := Requirement{Raw: raw}
	var w wireRequirement
	if err := json.Unmarshal(raw, &w); err != nil {
		r.malformed = seller.JSONError(err)
		return r
	}
	var bad []string
	str := func(name string, field json.RawMessage, dst *string, limit int) {
		if seller.Null(field) {
			return
		}
		s, ok := seller.String(field)
		if !ok {
			bad = append(bad, name+" is not a string")
			return
		}
		if limit > 0 && len(s) > limit {
			bad = append(bad, fmt.Sprintf("%s is longer than %d bytes", name, limit))
			return
		}
		if err := seller.Text(name, s); err != nil {
			bad = append(bad, err.Error())
			return
		}
		*dst = s
	}
	str("scheme", w.Scheme, &r.Scheme, maxSchemeLen)
	str("network", w.Network, &r.Network, maxNetworkLen)
	str("asset", w.Asset, &r.Asset, 0)
	str("payTo", w.PayTo, &r.PayTo, 0)
	str("resource", w.Resource, &r.Resource.URL, 0)
	str("description", w.Description, &r.Resource.Description, 0)
	str("mimeType", w.MimeType, &r.Resource.MimeType, 0)
	if amount, err := readAmount(w.Amount, w.MaxAmountRequired); err != nil {
		bad = append(bad, err.Error())
	} else {
		r.AmountText = amount
	}
	if n, ok := seller.Uint(w.MaxTimeoutSeconds); ok {
		r.MaxTimeoutSeconds = int64(min(n, 1<<31))
	}
	if !seller.Null(w.Extra) {
		var extra struct {
			FeePayer json.RawMessage `json:"feePayer"`
			Memo     json.RawMessage `json:"memo"`
		}
		if !seller.Object(w.Extra) || json.Unmarshal(w.Extra, &extra) != nil {
			bad = append(bad, "extra is not an object")
		} else {
			str("extra.feePayer", extra.FeePayer, &r.FeePayer, 0)
			str("extra.memo", extra.Memo, &r.Memo, 0)
		}
	}
	r.malformed = strings.Join(bad, "; ")
	return r
}

// readAmount is `amount ?? maxAmountRequired`: a present amount wins, even
// "0" (nullish, not falsy: `||` let "0" fall through to a larger
// maxAmountRequired, a reported cap bypass). When both are present they
// must agree: v2's verifier reads `amount`, v1's `maxAmountRequired`, and
// paying one while a policy checked the other is how caps get bypassed.
func readAmount(amount, maxAmountRequired json.RawMessage) (string, error) {
	a, aok := seller.String(amount)
	m, mok := seller.String(maxAmountRequired)
	if !seller.Null(amount) && !aok {
		return "", errors.New("amount is not a string")
	}
	if !seller.Null(maxAmountRequired) && !mok {
		return "", errors.New("maxAmountRequired is not a string")
	}
	switch {
	case aok && mok && a != m:
		return "", fmt.Errorf("amount %q and maxAmountRequired %q disagree", seller.Clip(a), seller.Clip(m))
	case aok:
		return a, nil
	case mok:
		return m, nil
	}
	return "", nil
}

// ParseAtomicAmount reads an amount in the asset's atomic units: decimal
// digits only (no sign, no exponent, no leading zeros), into a uint64
// without overflow.
func ParseAtomicAmount(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("amount is missing")
	}
	if len(s) > maxAmountDigits {
		return 0, fmt.Errorf("amount %q is too large", seller.Clip(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("amount %q is not a whole number of atomic units", seller.Clip(s))
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("amount %q has leading zeros", seller.Clip(s))
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q is too large", seller.Clip(s))
	}
	return n, nil
}

// atomicToMicros converts a USDC atomic amount (6 decimals: one atomic
// unit is one micro-USDC) to the service's money type, bounded by
// money.Quantity(money.MaxMicros) so sums stay inside int64.
func atomicToMicros(n uint64) (money.Quantity, bool) {
	if n > uint64(money.Quantity(money.MaxMicros)) {
		return 0, false
	}
	return money.Quantity(n), true
}
