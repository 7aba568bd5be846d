// Package mpp is the buyer's side of the Machine Payments Protocol's
// "Payment" HTTP authentication scheme with the Solana `charge` intent,
// in pull mode: it reads a seller's 402 challenges (WWW-Authenticate:
// Payment …), decodes the Solana charge request, chooses the one challenge
// the wallet can pay (its network, one of its stablecoins, a fee payer
// that is not the wallet, within the caller's cap), builds and signs the
// transaction exactly as the official server verifies it, and encodes the
// credential to retry with; it also reads the seller's Payment-Receipt.
// It is pure: no RPC, no storage, no policy decisions (of package policy
// it uses only the rule on text people read). The caller gives the
// blockhash and the wallet's key, so signing happens where keys are
// unsealed, and the policy, reservations and approvals stay in the
// service around it.
//
// The protocol's sources are the official npm packages mppx 0.11 (the
// scheme: challenges, credentials, receipts) and @solana/mpp 0.6 (the
// Solana charge's request, the client's transaction and the server's
// checks of it), whose server the tests pay (examples/mpp-seller). Where
// the drafts (tempoxyz/mpp-specs) and that code disagree, this package
// follows the code.
package mpp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentwallet/agentwallet/internal/seller"
)

// The HTTP fields of the exchange, the scheme's name, and the method and
// intent this package pays.
const (
	HeaderWWWAuthenticate      = "WWW-Authenticate"
	HeaderAuthorization        = "Authorization"
	HeaderPaymentAuthorization = "Payment-Authorization" // named by header= when the seller asks for it
	HeaderPaymentReceipt       = "Payment-Receipt"
	Scheme                     = "Payment"
	MethodSolana               = "solana"
	IntentCharge               = "charge"
)

// Bounds of ParseChallenges. A challenge's request is at most 16 KiB, as
// mppx's parser allows; real 402s carry one to three challenges of well
// under 2 KiB each.
const (
	MaxRequestBytes        = 16 << 10
	MaxChallenges          = 16
	MaxChallengeValueBytes = 128 << 10 // all the WWW-Authenticate values together
)

// ErrInvalidChallenge is wrapped by every failure of ParseChallenges and
// Challenge.Charge: the seller's 402 carries a Payment challenge we cannot
// read.
var ErrInvalidChallenge = errors.New("invalid MPP challenge")

// Challenge is one "Payment" challenge of a WWW-Authenticate value, its
// parameters as sent (quoted-strings unescaped); an absent parameter is
// empty. Request is the method's request, base64url JSON: Charge decodes
// a Solana charge's. Header, when set, is the request field the credential
// goes in instead of Authorization.
type Challenge struct {
	ID, Realm, Method, Intent, Request, Expires, Description, Digest, Opaque, Header string
}

// mppx's rules for the parameters it checks (Challenge.js, zod.js).
var (
	methodRe   = regexp.MustCompile(`^[a-z][a-z0-9:_-]*$`)
	datetimeRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$`)
)

// forbiddenHeaders are fields a seller may not name in header=: the
// client's framing of its own request owns them.
var forbiddenHeaders = map[string]bool{
	"host": true, "content-length": true, "transfer-encoding": true, "connection": true, "upgrade": true,
	"te": true, "trailer": true, "keep-alive": true, "proxy-authorization": true, "proxy-connection": true,
	"cookie": true, "expect": true, "content-type": true,
}

// ParseChallenges reads every Payment challenge in the given
// WWW-Authenticate values (a response may carry several fields, and one
// field several challenges joined by commas, as mppx's node server sends
// them). Challenges of other schemes (Bearer, Basic, a token68) are
// skipped. A Payment challenge is read strictly, and any fault fails the
// whole answer with ErrInvalidChallenge naming why: the grammar (RFC 9110
// auth-params, token or quoted-string values, quoted-pairs, and mppx's
// \uXXXX escape of characters above U+00FF; octets above 0x7F are
// ISO-8859-1, as Node writes them), a parameter given twice (names are
// case-insensitive), a missing id, realm, method, intent or request, a
// method mppx would refuse, a request over 16 KiB or that is not base64
// of a JSON object, an expires that is not an RFC 3339 time, a header=
// that is not a field name we may send, and in any parameter a control or
// invisible formatting character (policy.Deceptive). Unknown parameters
// are ignored. At most MaxChallenges Payment challenges; none is not an
// error (the empty list).
func ParseChallenges(values ...string) ([]Challenge, error) {
	total := 0
	for _, v := range values {
		total += len(v)
	}
	if total > MaxChallengeValueBytes {
		return nil, fmt.Errorf("%w: WWW-Authenticate is longer than %d bytes", ErrInvalidChallenge, MaxChallengeValueBytes)
	}
	var out []Challenge
	for _, v := range values {
		raw, err := splitChallenges(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidChallenge, err)
		}
		for _, r := range raw {
			if !strings.EqualFold(r.scheme, Scheme) {
				continue
			}
			if len(out) == MaxChallenges {
				return nil, fmt.Errorf("%w: more than %d Payment challenges", ErrInvalidChallenge, MaxChallenges)
			}
			c, err := r.payment()
			if errors.Is(err, errNotOurs) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%w: challenge %d: %w", ErrInvalidChallenge, len(out), err)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// rawChallenge is one challenge of a field: its scheme and its list
// elements after the scheme (auth-params, or a token68), each trimmed.
type rawChallenge struct {
	scheme   string
	elements []string
}

// splitChallenges splits a field value into challenges: the list is split
// at commas outside quoted-strings; an element that starts with a token
// followed by whitespace and no "=" starts a challenge (its rest is that
// challenge's first element), an element that starts with `token =` is an
// auth-param of the current one.
func splitChallenges(v string) ([]rawChallenge, error) {
	elems, err := splitList(v)
	if err != nil {
		return nil, err
	}
	var out []rawChallenge
	for _, e := range elems {
		name, rest := leadingToken(e)
		switch {
		case name != "" && strings.HasPrefix(strings.TrimLeft(rest, " \t"), "="):
			if len(out) == 0 {
				return nil, fmt.Errorf("the field starts with the parameter %q, not an authentication scheme", seller.Clip(name))
			}
			last := &out[len(out)-1]
			last.elements = append(last.elements, e)
		case name != "" && (rest == "" || rest[0] == ' ' || rest[0] == '\t'):
			c := rawChallenge{scheme: name}
			if r := strings.TrimLeft(rest, " \t"); r != "" {
				c.elements = append(c.elements, r)
			}
			out = append(out, c)
		default:
			if len(out) > 0 && strings.EqualFold(out[len(out)-1].scheme, Scheme) {
				return nil, fmt.Errorf("%q is neither an auth-param nor an authentication scheme", seller.Clip(e))
			}
			if len(out) == 0 {
				return nil, fmt.Errorf("%q is not an authentication scheme", seller.Clip(e))
			}
			// Part of another scheme's challenge (a token68 with odd
			// characters): not ours to judge.
			last := &out[len(out)-1]
			last.elements = append(last.elements, e)
		}
	}
	return out, nil
}

// splitList splits a field value at commas outside quoted-strings,
// dropping empty elements (RFC 9110 §5.6.1) and trimming whitespace.
func splitList(v string) ([]string, error) {
	var out []string
	start, inQuote, escaped := 0, false, false
	flush := func(end int) {
		if e := strings.Trim(v[start:end], " \t"); e != "" {
			out = append(out, e)
		}
	}
	for i := 0; i < len(v); i++ {
		b := v[i]
		if (b < 0x20 && b != '\t') || b == 0x7f {
			return nil, fmt.Errorf("control byte 0x%02x in the field", b)
		}
		switch {
		case escaped:
			escaped = false
		case inQuote && b == '\\':
			escaped = true
		case b == '"':
			inQuote = !inQuote
		case !inQuote && b == ',':
			flush(i)
			start = i + 1
		}
	}
	if inQuote {
		return nil, errors.New("unterminated quoted-string")
	}
	flush(len(v))
	return out, nil
}

// isTchar reports whether b may appear in an RFC 9110 token.
func isTchar(b byte) bool {
	switch {
	case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// leadingToken splits s into its leading token and the rest.
func leadingToken(s string) (string, string) {
	i := 0
	for i < len(s) && isTchar(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// errNotOurs: a malformed Payment challenge of another method or intent
// than the Solana charge. It is skipped, not an error: one seller's odd
// offer of another method must not stop the wallet paying the charge
// beside it (it would never be paid anyway).
var errNotOurs = errors.New("a malformed challenge of another method")

// payment reads a Payment challenge's auth-params strictly; a malformed
// one whose method and intent are not solana and charge is errNotOurs.
func (r rawChallenge) payment() (Challenge, error) {
	c, params, err := r.readPayment()
	if err == nil || params == nil {
		return c, err
	}
	method, intent := params["method"], params["intent"]
	if methodRe.MatchString(method) && method != MethodSolana || method == MethodSolana && intent != "" && intent != IntentCharge {
		return Challenge{}, fmt.Errorf("%w: %w", errNotOurs, err)
	}
	return c, err
}

// readPayment is payment before that judgement: the parameters, when they
// could be read, beside the challenge or the reason it is malformed.
func (r rawChallenge) readPayment() (Challenge, map[string]string, error) {
	if len(r.elements) == 0 {
		return Challenge{}, nil, errors.New("no parameters")
	}
	params := map[string]string{}
	for _, e := range r.elements {
		name, rest := leadingToken(e)
		rest = strings.TrimLeft(rest, " \t")
		if name == "" || !strings.HasPrefix(rest, "=") {
			return Challenge{}, nil, fmt.Errorf("%q is not an auth-param (name=value)", seller.Clip(e))
		}
		name = strings.ToLower(name)
		value, err := paramValue(strings.TrimLeft(rest[1:], " \t"))
		if err != nil {
			return Challenge{}, nil, fmt.Errorf("parameter %s: %w", name, err)
		}
		if _, dup := params[name]; dup {
			return Challenge{}, nil, fmt.Errorf("parameter %s is given twice", name)
		}
		params[name] = value
	}
	c := Challenge{
		ID: params["id"], Realm: params["realm"], Method: params["method"], Intent: params["intent"],
		Request: params["request"], Expires: params["expires"], Description: params["description"],
		Digest: params["digest"], Opaque: params["opaque"], Header: params["header"],
	}
	for _, name := range []string{"id", "realm", "method", "intent", "request"} {
		if _, ok := params[name]; !ok {
			return Challenge{}, params, fmt.Errorf("parameter %s is missing", name)
		}
	}
	for _, f := range []struct{ name, v string }{
		{"id", c.ID}, {"realm", c.Realm}, {"method", c.Method}, {"intent", c.Intent}, {"request", c.Request}, {"expires", c.Expires},
		{"description", c.Description}, {"digest", c.Digest}, {"opaque", c.Opaque}, {"header", c.Header},
	} {
		if err := seller.Text(f.name, f.v); err != nil {
			return Challenge{}, params, err
		}
	}
	switch {
	case c.ID == "":
		return Challenge{}, params, errors.New("id is empty")
	case !methodRe.MatchString(c.Method):
		return Challenge{}, params, fmt.Errorf("method %q is not lowercase letters, digits and :_-", seller.Clip(c.Method))
	case c.Intent == "":
		return Challenge{}, params, errors.New("intent is empty")
	case len(c.Request) > MaxRequestBytes:
		return Challenge{}, params, fmt.Errorf("request is longer than %d bytes", MaxRequestBytes)
	case c.Digest != "" && !strings.HasPrefix(c.Digest, "sha-256="):
		return Challenge{}, params, fmt.Errorf("digest %q does not start with sha-256=", seller.Clip(c.Digest))
	}
	if _, ok := params["expires"]; ok {
		if _, err := parseTime(c.Expires); err != nil {
			return Challenge{}, params, fmt.Errorf("expires %q: %w", seller.Clip(c.Expires), err)
		}
	}
	if _, ok := params["header"]; ok {
		name, rest := leadingToken(c.Header)
		if name == "" || rest != "" {
			return Challenge{}, params, fmt.Errorf("header %q is not a field name", seller.Clip(c.Header))
		}
		if forbiddenHeaders[strings.ToLower(name)] {
			return Challenge{}, params, fmt.Errorf("header %q names a field the request's framing owns", seller.Clip(c.Header))
		}
	}
	raw, err := decodeBase64URL(c.Request, MaxRequestBytes)
	if err != nil {
		return Challenge{}, params, fmt.Errorf("request: %w", err)
	}
	if !utf8.Valid(raw) {
		return Challenge{}, params, errors.New("request: not UTF-8")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Challenge{}, params, errors.New("request: not a JSON object")
	}
	return c, params, nil
}

// paramValue reads an auth-param's value: a quoted-string (the whole of
// v) or an unquoted value of visible ASCII, as mppx reads one. Octets of
// a header are ISO-8859-1 (as Node writes one), but a value that is valid
// UTF-8 is read as such: a challenge that reached the service inside a
// JSON string (POST /agents/{id}/mpp/pay) was already decoded to text by
// its client, and reading its UTF-8 bytes as ISO-8859-1 would garble the
// realm the seller's HMAC covers.
func paramValue(v string) (string, error) {
	if v == "" {
		return "", errors.New("no value")
	}
	if v[0] != '"' {
		for i := 0; i < len(v); i++ {
			if b := v[i]; b <= ' ' || b >= 0x7f || b == '"' || b == '\\' {
				return "", fmt.Errorf("unquoted value %q has a character a token may not", seller.Clip(v))
			}
		}
		return v, nil
	}
	var b strings.Builder
	var pending rune = -1 // a high surrogate waiting for its low half
	write := func(r rune) error {
		if pending >= 0 {
			if !utf16.IsSurrogate(r) || r < 0xdc00 {
				return errors.New(`a \u escape is half of a surrogate pair`)
			}
			b.WriteRune(utf16.DecodeRune(pending, r))
			pending = -1
			return nil
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			pending = r
		case r >= 0xdc00 && r < 0xe000:
			return errors.New(`a \u escape is half of a surrogate pair`)
		default:
			b.WriteRune(r)
		}
		return nil
	}
	text := utf8.ValidString(v)
	// next is the character at i and its length in bytes.
	next := func(i int) (rune, int) {
		if text {
			return utf8.DecodeRuneInString(v[i:])
		}
		return rune(v[i]), 1
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch c {
		case '"':
			if pending >= 0 {
				return "", errors.New(`a \u escape is half of a surrogate pair`)
			}
			if rest := strings.TrimRight(v[i+1:], " \t"); rest != "" {
				return "", fmt.Errorf("%q follows the quoted-string", seller.Clip(rest))
			}
			return b.String(), nil
		case '\\':
			i++
			if i >= len(v) {
				return "", errors.New("unterminated quoted-string")
			}
			if v[i] == 'u' && i+4 < len(v) && isHex(v[i+1:i+5]) {
				n, _ := strconv.ParseUint(v[i+1:i+5], 16, 16)
				i += 4
				if err := write(rune(n)); err != nil {
					return "", err
				}
				continue
			}
			r, n := next(i)
			i += n - 1
			if err := write(r); err != nil {
				return "", err
			}
		default:
			r, n := next(i)
			i += n - 1
			if err := write(r); err != nil {
				return "", err
			}
		}
	}
	return "", errors.New("unterminated quoted-string")
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return false
		}
	}
	return true
}

// parseTime reads an RFC 3339 time as mppx's datetime check accepts it.
func parseTime(s string) (time.Time, error) {
	if !datetimeRe.MatchString(s) {
		return time.Time{}, errors.New("not an RFC 3339 date-time")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errors.New("not an RFC 3339 date-time")
	}
	return t, nil
}

// decodeBase64URL decodes base64 in either alphabet (not both), padded or
// not, as mppx's decoder (ox's Base64) accepts it, bounded before
// decoding.
func decodeBase64URL(s string, limit int) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty")
	}
	if len(s) > limit {
		return nil, fmt.Errorf("longer than %d bytes", limit)
	}
	if strings.ContainsAny(s, "-_") && strings.ContainsAny(s, "+/") {
		return nil, errors.New("mixes the base64 and base64url alphabets")
	}
	s = strings.NewReplacer("-", "+", "_", "/").Replace(s)
	if strings.HasSuffix(s, "=") {
		if len(s)%4 != 0 {
			return nil, errors.New("not base64")
		}
		s = strings.TrimRight(s, "=")
	}
	out, err := base64.RawStdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, errors.New("not base64")
	}
	return out, nil
}
