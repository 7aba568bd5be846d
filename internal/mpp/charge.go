package mpp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/seller"
)

// The Solana charge's limits (@solana/mpp 0.6: Methods.js, server/Charge.js).
const (
	MaxSplits       = 8
	MaxMemoBytes    = 566
	maxAmountDigits = 20 // len("18446744073709551615")
)

// Split is one of a charge's additional payees: Amount (in the charge's
// token's base units) of the total goes to Recipient's token account, with
// a Memo instruction carrying Memo when it is set. ATACreationRequired
// asks the transaction to create Recipient's token account (paid by the
// seller's fee payer when the seller pays the fee).
type Split struct {
	Recipient           sol.PublicKey
	Amount              uint64
	Memo                string
	ATACreationRequired bool
}

// Charge is a decoded Solana charge request (a challenge's `request` when
// its method is "solana" and its intent "charge").
type Charge struct {
	// Amount is the total in base units, splits included; the primary
	// recipient gets Amount minus the splits' sum.
	Amount uint64
	// Currency is as sent: "sol" (any case), a stablecoin symbol (USDC,
	// USDT, USDG, PYUSD, CASH, any case) or a mint address.
	Currency   string
	Recipient  sol.PublicKey
	ExternalID string // the memo the transaction must carry ("" none)
	// Network is methodDetails.network as sent ("mainnet-beta", "devnet",
	// "localnet"; "" when absent).
	Network string
	// Decimals and TokenProgram (zero when absent) are what the seller
	// verifies the transfer against.
	Decimals     *int
	TokenProgram sol.PublicKey
	// FeePayer: the seller pays the fee, its FeePayerKey the transaction's
	// fee payer (it co-signs).
	FeePayer    bool
	FeePayerKey sol.PublicKey
	// RecentBlockhash is the seller's advisory blockhash (zero when absent).
	RecentBlockhash sol.Hash
	Splits          []Split
}

// Primary is what the primary recipient gets: Amount less the splits.
func (c *Charge) Primary() uint64 {
	p := c.Amount
	for _, s := range c.Splits {
		p -= s.Amount
	}
	return p
}

type wireCharge struct {
	Amount        json.RawMessage `json:"amount"`
	Currency      json.RawMessage `json:"currency"`
	Recipient     json.RawMessage `json:"recipient"`
	ExternalID    json.RawMessage `json:"externalId"`
	Description   json.RawMessage `json:"description"`
	MethodDetails json.RawMessage `json:"methodDetails"`
}

type wireDetails struct {
	Network         json.RawMessage   `json:"network"`
	Decimals        json.RawMessage   `json:"decimals"`
	TokenProgram    json.RawMessage   `json:"tokenProgram"`
	FeePayer        json.RawMessage   `json:"feePayer"`
	FeePayerKey     json.RawMessage   `json:"feePayerKey"`
	RecentBlockhash json.RawMessage   `json:"recentBlockhash"`
	Splits          []json.RawMessage `json:"splits"`
}

type wireSplit struct {
	Recipient           json.RawMessage `json:"recipient"`
	Amount              json.RawMessage `json:"amount"`
	Memo                json.RawMessage `json:"memo"`
	ATACreationRequired json.RawMessage `json:"ataCreationRequired"`
}

// Charge decodes c's request as a Solana charge: base64url or base64,
// padded or not, of a JSON object with the fields of @solana/mpp's schema
// (unknown ones ignored), each of its type, and strictly validated: the
// amounts decimal strings of base units, each positive, at most 8 splits
// whose sum is below the amount (the primary recipient gets something),
// memos and externalId at most 566 bytes and held to the rule on seller
// text, every address and the blockhash canonical base58 of 32 bytes, the
// currency "sol", a known symbol or a mint, feePayer with its key, and
// ataCreationRequired only for a currency given as a mint (the official
// client and server refuse it otherwise). Errors wrap ErrInvalidChallenge.
func (c Challenge) Charge() (*Charge, error) {
	ch, err := c.charge()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidChallenge, err)
	}
	return ch, nil
}

func (c Challenge) charge() (*Charge, error) {
	if c.Method != MethodSolana || c.Intent != IntentCharge {
		return nil, fmt.Errorf("method %q intent %q is not %s %s", seller.Clip(c.Method), seller.Clip(c.Intent), MethodSolana, IntentCharge)
	}
	raw, err := decodeBase64URL(c.Request, MaxRequestBytes)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	if !utf8.Valid(raw) {
		// encoding/json would replace bad bytes silently: a memo would
		// then differ from what the seller verifies.
		return nil, errors.New("request: not UTF-8")
	}
	var w wireCharge
	if !seller.Object(raw) || json.Unmarshal(raw, &w) != nil {
		return nil, errors.New("request: not a JSON object of the charge's fields")
	}
	ch := &Charge{}
	if ch.Amount, err = amountField("amount", w.Amount); err != nil {
		return nil, err
	}
	cur, ok := seller.String(w.Currency)
	if !ok || cur == "" {
		return nil, errors.New("currency is missing or not a string")
	}
	if err := seller.Text("currency", cur); err != nil {
		return nil, err
	}
	if !strings.EqualFold(cur, "sol") && stablecoinSymbol(cur) == "" {
		if _, err := seller.Address(cur); err != nil {
			return nil, fmt.Errorf("currency %q is not sol, a stablecoin symbol or a mint address", seller.Clip(cur))
		}
	}
	ch.Currency = cur
	if ch.Recipient, err = addressField("recipient", w.Recipient, true); err != nil {
		return nil, err
	}
	if ch.ExternalID, err = memoField("externalId", w.ExternalID); err != nil {
		return nil, err
	}
	if !seller.Null(w.Description) {
		if _, ok := seller.String(w.Description); !ok {
			return nil, errors.New("description is not a string")
		}
	}
	if !seller.Object(w.MethodDetails) {
		return nil, errors.New("methodDetails is missing or not an object")
	}
	var d wireDetails
	if err := json.Unmarshal(w.MethodDetails, &d); err != nil {
		return nil, fmt.Errorf("methodDetails: %s", seller.JSONError(err))
	}
	if !seller.Null(d.Network) {
		n, ok := seller.String(d.Network)
		if !ok {
			return nil, errors.New("methodDetails.network is not a string")
		}
		if err := seller.Text("methodDetails.network", n); err != nil {
			return nil, err
		}
		ch.Network = n
	}
	if !seller.Null(d.Decimals) {
		n, ok := seller.Uint(d.Decimals)
		if !ok || n > 255 {
			return nil, errors.New("methodDetails.decimals is not a whole number from 0 to 255")
		}
		dec := int(n)
		ch.Decimals = &dec
	}
	if ch.TokenProgram, err = addressField("methodDetails.tokenProgram", d.TokenProgram, false); err != nil {
		return nil, err
	}
	if !seller.Null(d.FeePayer) {
		switch string(bytes.TrimSpace(d.FeePayer)) {
		case "true":
			ch.FeePayer = true
		case "false":
		default:
			return nil, errors.New("methodDetails.feePayer is not a boolean")
		}
	}
	if ch.FeePayerKey, err = addressField("methodDetails.feePayerKey", d.FeePayerKey, ch.FeePayer); err != nil {
		return nil, err
	}
	if !seller.Null(d.RecentBlockhash) {
		s, ok := seller.String(d.RecentBlockhash)
		h, err := sol.HashFromBase58(s)
		if !ok || err != nil || h.IsZero() || h.String() != s {
			return nil, fmt.Errorf("methodDetails.recentBlockhash %q is not a blockhash", seller.Clip(s))
		}
		ch.RecentBlockhash = h
	}
	if len(d.Splits) > MaxSplits {
		return nil, fmt.Errorf("%d splits (at most %d)", len(d.Splits), MaxSplits)
	}
	var sum uint64
	for i, raw := range d.Splits {
		s, err := splitField(i, raw)
		if err != nil {
			return nil, err
		}
		if sum+s.Amount < sum {
			return nil, errors.New("the splits' sum overflows")
		}
		sum += s.Amount
		if s.ATACreationRequired && resolveMint(cur, ch.Network) != cur {
			return nil, fmt.Errorf("splits[%d].ataCreationRequired needs the currency given as a mint address, not %q", i, seller.Clip(cur))
		}
		ch.Splits = append(ch.Splits, s)
	}
	if sum >= ch.Amount {
		return nil, fmt.Errorf("the splits (%d) leave nothing of the amount (%d) to the recipient", sum, ch.Amount)
	}
	return ch, nil
}

func splitField(i int, raw json.RawMessage) (Split, error) {
	name := fmt.Sprintf("splits[%d]", i)
	var w wireSplit
	if !seller.Object(raw) || json.Unmarshal(raw, &w) != nil {
		return Split{}, fmt.Errorf("%s is not an object", name)
	}
	var s Split
	var err error
	if s.Recipient, err = addressField(name+".recipient", w.Recipient, true); err != nil {
		return Split{}, err
	}
	if s.Amount, err = amountField(name+".amount", w.Amount); err != nil {
		return Split{}, err
	}
	if s.Memo, err = memoField(name+".memo", w.Memo); err != nil {
		return Split{}, err
	}
	if !seller.Null(w.ATACreationRequired) {
		switch string(bytes.TrimSpace(w.ATACreationRequired)) {
		case "true":
			s.ATACreationRequired = true
		case "false":
		default:
			return Split{}, fmt.Errorf("%s.ataCreationRequired is not a boolean", name)
		}
	}
	return s, nil
}

// amountField reads a positive amount of base units: a JSON string of
// decimal digits, no sign, exponent or leading zeros, within uint64.
func amountField(name string, raw json.RawMessage) (uint64, error) {
	s, ok := seller.String(raw)
	if !ok {
		return 0, fmt.Errorf("%s is missing or not a string", name)
	}
	n, err := ParseAtomicAmount(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if n == 0 {
		return 0, fmt.Errorf("%s is zero", name)
	}
	return n, nil
}

// ParseAtomicAmount reads an amount in a token's base units: decimal
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
			return 0, fmt.Errorf("amount %q is not a whole number of base units", seller.Clip(s))
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

// addressField reads an optional (or required) address.
func addressField(name string, raw json.RawMessage, required bool) (sol.PublicKey, error) {
	if seller.Null(raw) {
		if required {
			return sol.PublicKey{}, fmt.Errorf("%s is missing", name)
		}
		return sol.PublicKey{}, nil
	}
	s, ok := seller.String(raw)
	if !ok {
		return sol.PublicKey{}, fmt.Errorf("%s is not a string", name)
	}
	k, err := seller.Address(s)
	if err != nil {
		return sol.PublicKey{}, fmt.Errorf("%s %w", name, err)
	}
	return k, nil
}

// memoField reads an optional memo: a string of at most MaxMemoBytes held
// to the rule on seller text ("" is no memo, as the official client
// reads it).
func memoField(name string, raw json.RawMessage) (string, error) {
	if seller.Null(raw) {
		return "", nil
	}
	s, ok := seller.String(raw)
	if !ok {
		return "", fmt.Errorf("%s is not a string", name)
	}
	if len(s) > MaxMemoBytes {
		return "", fmt.Errorf("%s is %d bytes (at most %d)", name, len(s), MaxMemoBytes)
	}
	if err := seller.Text(name, s); err != nil {
		return "", err
	}
	return s, nil
}
