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
