package httpapi

import (
	"bytes"
	"errors"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/money"
)

// Amount is a USDC amount in a request. It keeps the JSON number's text so
// it is converted to micro-USDC exactly (never through float64); Micros
// reports problems naming the field.
type Amount struct{ text string }

// UnmarshalJSON keeps the number's text; schema validation has already
// ensured it is a JSON number.
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == '"' || bytes.Equal(b, []byte("null")) {
		return errors.New("amount must be a JSON number")
	}
	a.text = string(b)
	return nil
}

// Micros converts the amount, or answers 422 naming field.
func (a Amount) Micros(field string) (money.Micros[money.USD], error) {
	m, err := money.Parse[money.USD](a.text)
	if err != nil {
		return 0, fieldError(field, err.Error())
	}
	return m, nil
}

// Quantity converts an amount of an asset named beside it (a send's
// amount), or answers 422 naming field.
func (a Amount) Quantity(field string) (money.Quantity, error) {
	m, err := a.Micros(field)
	return money.Quantity(m), err
}

// Schema documents an amount as a JSON number in whole USDC.
func (Amount) Schema(huma.Registry) *huma.Schema {
	zero := 0.0
	return &huma.Schema{Type: huma.TypeNumber, Minimum: &zero,
		Description: "USDC in whole units, at most 6 decimal places."}
}

// USDC is a USDC amount in a response: a JSON number in whole units,
// printed exactly from micro-USDC.
type USDC money.Micros[money.USD]

// MarshalJSON prints the exact decimal.
func (u USDC) MarshalJSON() ([]byte, error) { return []byte(money.Micros[money.USD](u).String()), nil }

// Schema documents it as a number.
func (USDC) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeNumber, Description: "USDC in whole units (6 decimals)."}
}

// EUR is an amount of a EUR stablecoin (or a EUR limit) in a response: a
// JSON number in whole euros, printed exactly from micro-euros.
type EUR money.Micros[money.EUR]

// MarshalJSON prints the exact decimal.
func (e EUR) MarshalJSON() ([]byte, error) { return []byte(money.Micros[money.EUR](e).String()), nil }

// Schema documents it as a number.
func (EUR) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeNumber, Description: "Euros in whole units (6 decimals), counted across EUR stablecoins at 1:1."}
}

// eurOf is an optional EUR amount as returned (nil: null).
func eurOf(m *money.Micros[money.EUR]) *EUR {
	if m == nil {
		return nil
	}
	e := EUR(*m)
	return &e
}

// EURMicros converts the amount to micro-euros, or answers 422 naming
// field.
func (a Amount) EURMicros(field string) (money.Micros[money.EUR], error) {
	m, err := money.Parse[money.EUR](a.text)
	if err != nil {
		return 0, fieldError(field, err.Error())
	}
	return m, nil
}

// SOL is a native balance in a response: lamports printed as whole SOL.
type SOL uint64

// MarshalJSON prints the exact decimal with up to 9 places.
func (s SOL) MarshalJSON() ([]byte, error) { return []byte(money.FormatUnits(int64(s), 9)), nil }

// Schema documents it as a number.
func (SOL) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeNumber, Description: "SOL in whole units (9 decimals)."}
}

// Quantity is an amount of an asset in a response: base units printed as a
// JSON number in whole units, exactly (USDC 6 decimals, SOL 9).
type Quantity struct {
	units    int64
	decimals int
}

// MarshalJSON prints the exact decimal.
func (a Quantity) MarshalJSON() ([]byte, error) {
	return []byte(money.FormatUnits(a.units, a.decimals)), nil
}

// Schema documents it as a number.
func (Quantity) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeNumber, Description: "In whole units: USDC with 6 decimals, SOL with 9."}
}

// paidQuantity is a payment's amount as stored (micros of the asset's
// currency, which count one whole unit of any asset as one whole unit of
// its currency) in whole units of the asset paid.
func paidQuantity[M ~int64](micros M) Quantity {
	return Quantity{units: int64(micros), decimals: money.Decimals}
}
