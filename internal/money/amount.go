package money

import "fmt"

// Code names a currency where it is data: an asset's peg, a stored row,
// an API field.
type Code string

// The currencies' codes.
const (
	CodeUSD Code = "USD"
	CodeEUR Code = "EUR"
)

// CodeOf is C's code.
func CodeOf[C Currency]() Code {
	var c C
	switch any(c).(type) {
	case EUR:
		return CodeEUR
	}
	return CodeUSD
}

// Amount is an amount whose currency is known only at run time (it
// depends on the asset paid). It has no arithmetic: to add or compare,
// take its typed value with As, which answers only for its own currency,
// so an amount of euros never enters a sum of dollars.
type Amount struct {
	code   Code
	micros int64
}

// Of is m tagged with its currency.
func Of[C Currency](m Micros[C]) Amount { return Amount{CodeOf[C](), int64(m)} }

// AmountOf is micros of the currency named code (a stored row's).
func AmountOf(code Code, micros int64) (Amount, error) {
	switch code {
	case CodeUSD, CodeEUR:
		return Amount{code, micros}, nil
	}
	return Amount{}, fmt.Errorf("unknown currency %q", code)
}

// As is a's value in currency C, or false when a is of another currency.
func As[C Currency](a Amount) (Micros[C], bool) {
	if a.code != CodeOf[C]() {
		return 0, false
	}
	return Micros[C](a.micros), true
}

// Code is a's currency.
func (a Amount) Code() Code { return a.code }

// Micros is a's value in millionths of its currency, for storage.
func (a Amount) Micros() int64 { return a.micros }

// String prints the amount and its currency: "12.5 USD".
func (a Amount) String() string { return FormatUnits(a.micros, Decimals) + " " + string(a.code) }

// Quantity is an amount of an asset in millionths of its whole unit (a
// stablecoin's micros, whatever its decimals on chain): what a payment
// names, stores and moves. Its currency is its asset's, which is data, so
// it has no currency type: to add it to a limit or compare it with one,
// make it an Amount of its asset's currency (asset.Asset.Amount) and take
// the typed value with As. A euro payment is never a Micros[USD].
type Quantity int64

// String prints the quantity as the shortest exact decimal.
func (q Quantity) String() string { return FormatUnits(int64(q), Decimals) }

// MarshalJSON writes it as a JSON number in whole units.
func (q Quantity) MarshalJSON() ([]byte, error) { return []byte(q.String()), nil }

// MarshalJSON writes an Amount as a JSON number in whole units of its
// currency (its code travels in a field of its own).
func (a Amount) MarshalJSON() ([]byte, error) { return []byte(FormatUnits(a.micros, Decimals)), nil }
