package x402

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/seller"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// exactPayload is the scheme's `payload`: the partially signed transaction.
type exactPayload struct {
	Transaction string `json:"transaction"`
}

// paymentPayloadV2 is v2's PaymentPayload (specs/schemes/exact/
// scheme_exact_svm.md; @x402/core x402Client.createPaymentPayload):
// resource and extensions are the challenge's, accepted the chosen entry
// as sent (the seller finds it by deep equality).
type paymentPayloadV2 struct {
	X402Version int             `json:"x402Version"`
	Resource    json.RawMessage `json:"resource,omitempty"`
	Accepted    json.RawMessage `json:"accepted"`
	Payload     exactPayload    `json:"payload"`
	Extensions  json.RawMessage `json:"extensions,omitempty"`
}

// paymentPayloadV1 is v1's PaymentPayload (@x402/core types/v1).
type paymentPayloadV1 struct {
	X402Version int          `json:"x402Version"`
	Scheme      string       `json:"scheme"`
	Network     string       `json:"network"`
	Payload     exactPayload `json:"payload"`
}

// EncodePaymentHeader returns the payment header for c carrying the
// base64 transaction: PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1), its value
// base64 of the PaymentPayload JSON.
func EncodePaymentHeader(c Choice, transactionBase64 string) (name, value string, err error) {
	if c.challenge == nil {
		return "", "", fmt.Errorf("%w: the choice does not come from Select", ErrShape)
	}
	var v any
	switch c.Version {
	case 2:
		name = HeaderPaymentSignature
		v = paymentPayloadV2{
			X402Version: 2, Resource: c.challenge.rawResource, Accepted: c.Requirement.Raw,
			Payload: exactPayload{transactionBase64}, Extensions: c.challenge.rawExtensions,
		}
	case 1:
		name = HeaderXPayment
		v = paymentPayloadV1{
			X402Version: 1, Scheme: c.Requirement.Scheme, Network: c.Requirement.Network,
			Payload: exactPayload{transactionBase64},
		}
	default:
		return "", "", fmt.Errorf("%w: x402Version %d", ErrShape, c.Version)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", "", fmt.Errorf("x402: encode payment: %w", err)
	}
	return name, base64.StdEncoding.EncodeToString(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// Payment is a signed payment ready to send: the header to retry the
// request with, and the transaction inside it.
type Payment struct {
	Header      string // HeaderPaymentSignature or HeaderXPayment
	Value       string
	Transaction *Transaction
}

// Pay builds and partially signs c's transaction with the wallet's key
// (see BuildTransaction) and encodes the payment header.
func Pay(ctx context.Context, c Choice, owner sol.PublicKey, sign signer.SignFunc, blockhash sol.Hash, opts BuildOptions) (*Payment, error) {
	tx, err := BuildTransaction(ctx, c, owner, sign, blockhash, opts)
	if err != nil {
		return nil, err
	}
	name, value, err := EncodePaymentHeader(c, tx.Base64)
	if err != nil {
		return nil, err
	}
	return &Payment{Header: name, Value: value, Transaction: tx}, nil
}

// ErrInvalidSettlement is wrapped by DecodePaymentResponseHeader's errors.
var ErrInvalidSettlement = errors.New("invalid x402 settlement response")

// maxSettlementHeaderBytes bounds a PAYMENT-RESPONSE header (real ones are
// about 300 bytes).
const maxSettlementHeaderBytes = 8 << 10

// SettlementResponse is the seller's settlement answer (PAYMENT-RESPONSE
// in v2, X-PAYMENT-RESPONSE in v1).
type SettlementResponse struct {
	Success bool `json:"success"`
	// Transaction is the settled transaction's signature (base58), empty
	// on failure; Signature is it parsed when Success.
	Transaction  string        `json:"transaction"`
	Signature    sol.Signature `json:"-"`
	Network      string        `json:"network"`
	Payer        string        `json:"payer,omitempty"`
	ErrorReason  string        `json:"errorReason,omitempty"`
	ErrorMessage string        `json:"errorMessage,omitempty"`
}

// DecodePaymentResponseHeader reads a settlement header's value: base64
// JSON with a boolean success; a success must name the transaction's
// signature. It is the seller's claim, to be checked on chain.
func DecodePaymentResponseHeader(value string) (*SettlementResponse, error) {
	raw, err := decodeBase64(value, maxSettlementHeaderBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSettlement, err)
	}
	var w struct {
		Success      json.RawMessage `json:"success"`
		Transaction  json.RawMessage `json:"transaction"`
		Network      json.RawMessage `json:"network"`
		Payer        json.RawMessage `json:"payer"`
		ErrorReason  json.RawMessage `json:"errorReason"`
		ErrorMessage json.RawMessage `json:"errorMessage"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidSettlement, seller.JSONError(err))
	}
	var r SettlementResponse
	switch string(bytes.TrimSpace(w.Success)) {
	case "true":
		r.Success = true
	case "false":
	default:
		return nil, fmt.Errorf("%w: success must be a boolean", ErrInvalidSettlement)
	}
	for _, f := range []struct {
		raw json.RawMessage
		dst *string
	}{{w.Transaction, &r.Transaction}, {w.Network, &r.Network}, {w.Payer, &r.Payer}, {w.ErrorReason, &r.ErrorReason}, {w.ErrorMessage, &r.ErrorMessage}} {
		if seller.Null(f.raw) {
			continue
		}
		s, ok := seller.String(f.raw)
		if !ok {
			return nil, fmt.Errorf("%w: a field is not a string", ErrInvalidSettlement)
		}
		*f.dst = s
	}
	if r.Success {
		sig, err := sol.SignatureFromBase58(r.Transaction)
		if err != nil || sig.IsZero() || sig.String() != r.Transaction {
			return nil, fmt.Errorf("%w: transaction %q is not a Solana signature", ErrInvalidSettlement, seller.Clip(r.Transaction))
		}
		r.Signature = sig
	}
	return &r, nil
}
