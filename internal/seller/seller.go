// Package seller reads what a seller answering 402 sends (x402's
// PaymentRequired, MPP's Payment challenges): strict JSON fields, Solana
// addresses, and text that is stored and shown to approvers. Shared by
// internal/x402 and internal/mpp, which read the same kinds of input.
package seller

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/policy"
)

// Text refuses, in the seller's string field name, the characters refused
// in every text people read (policy.Deceptive): control characters (NUL,
// newlines, tabs, DEL and the C1 controls), format characters (Cf: bidi
// overrides and isolates such as U+202E, zero-width ones, U+FEFF) and the
// line and paragraph separators. Seller text (a memo, a resource, a
// description, a realm) is stored, signed (a memo) and shown in the
// dashboard, events and Slack, where such a character can make one text
// read as another or forge a line; NUL cannot be stored at all. The error
// names the field and the character.
func Text(name, s string) error {
	i := strings.IndexFunc(s, policy.Deceptive)
	if i < 0 {
		return nil
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return fmt.Errorf("%s contains %U, a control or invisible formatting character", name, r)
}

// Clip bounds seller text quoted in an error message.
func Clip(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Address reads a base58 Solana address: 32 bytes exactly, written
// canonically, not the zero key.
func Address(s string) (sol.PublicKey, error) {
	if s == "" {
		return sol.PublicKey{}, errors.New("is missing")
	}
	if len(s) < 32 || len(s) > 44 {
		return sol.PublicKey{}, fmt.Errorf("%q is not a Solana address", Clip(s))
	}
	k, err := sol.PublicKeyFromBase58(s)
	if err != nil || k.IsZero() || k.String() != s {
		return sol.PublicKey{}, fmt.Errorf("%q is not a Solana address", Clip(s))
	}
	return k, nil
}

// Null: the field is absent or JSON null.
func Null(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// Object: the field is a JSON object.
func Object(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// String reads a JSON string (not a number or anything else).
func String(raw json.RawMessage) (string, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(t, &s) != nil {
		return "", false
	}
	return s, true
}

// Uint reads a JSON number that is a whole non-negative integer (`6`,
// not `6.0` or `"6"`).
func Uint(raw json.RawMessage) (uint64, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] < '0' || t[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(t), 10, 64)
	return n, err == nil
}

// JSONError says why JSON did not decode, without quoting it.
func JSONError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s has the wrong type", te.Field)
	}
	return "not valid JSON"
}
