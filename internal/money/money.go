// Package money holds the money types of the service. Micros[C] is an
// amount of currency C (USD or EUR) in millionths, as an integer, parsed
// from and printed as exact decimal text (never float64). The currency is
// a type parameter: a sum of dollars and euros does not compile, so the
// policy's USD and EUR limits can never be mixed up by accident.
package money

import (
	"errors"
	"strconv"
	"strings"
)

// Decimals is the number of decimal places of an amount: every asset a
// policy counts has 6 (internal/asset), so one base unit is one micro.
const Decimals = 6

// USD and EUR are the currencies, as types: they only tag amounts.
type (
	USD struct{}
	EUR struct{}
)

// Currency is the set of currencies an amount can be of.
type Currency interface{ USD | EUR }

// Micros is an amount of currency C in millionths (a stablecoin's base
// unit). The zero value is zero.
type Micros[C Currency] int64

// Unit is one whole unit (a dollar, a euro) in millionths.
const Unit = 1_000_000

// Dollar and Euro are Unit as amounts of their currency.
const (
	Dollar Micros[USD] = Unit
	Euro   Micros[EUR] = Unit
)

// MaxMicros bounds parsed amounts: 10^12 whole units is far above any
// supply and keeps sums of several amounts inside int64.
const MaxMicros = 1_000_000_000_000 * Unit

// Errors returned by Parse; callers branch on them to word a field error.
var (
	ErrSyntax    = errors.New("must be a decimal number")
	ErrPrecision = errors.New("must have at most 6 decimal places")
	ErrRange     = errors.New("is too large")
	ErrNegative  = errors.New("must not be negative")
)

// Parse reads a JSON number's text ("12", "12.5", "1e3", "0.000001") into
// millionths exactly. Exponents are allowed as JSON allows them; anything
// that is not exact at 6 decimals is ErrPrecision.
func Parse[C Currency](s string) (Micros[C], error) {
	if s == "" {
		return 0, ErrSyntax
	}
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 100 || e < -100 {
			if err == nil && e > 100 {
				return 0, ErrRange
			}
			return 0, ErrSyntax
		}
		exp = e
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
		if frac == "" {
			return 0, ErrSyntax
		}
	}
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) {
		return 0, ErrSyntax
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	// value = digits × 10^(exp - len(frac)); we want value × 10^6.
	shift := exp - len(frac) + Decimals
	if digits == "" {
		return 0, nil
	}
	if shift < 0 {
		cut := len(digits) + shift
		if cut < 0 || strings.Trim(digits[max(cut, 0):], "0") != "" {
			return 0, ErrPrecision
		}
		digits = digits[:cut]
		shift = 0
	}
	if len(digits)+shift > 19 {
		return 0, ErrRange
	}
	digits += strings.Repeat("0", shift)
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || v > MaxMicros {
		return 0, ErrRange
	}
	if neg {
		return 0, ErrNegative
	}
	return Micros[C](v), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String prints the amount as the shortest exact decimal: 12500000 → "12.5".
func (m Micros[C]) String() string {
	return FormatUnits(int64(m), Decimals)
}

// MarshalJSON writes the amount as a JSON number in whole units.
func (m Micros[C]) MarshalJSON() ([]byte, error) {
	return []byte(m.String()), nil
}

// FormatUnits prints v base units of a token with the given decimals as the
// shortest exact decimal text ("1.5", "0.000001", "3").
func FormatUnits(v int64, decimals int) string {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	s := strconv.FormatUint(u, 10)
	if len(s) <= decimals {
		s = strings.Repeat("0", decimals-len(s)+1) + s
	}
	whole, frac := s[:len(s)-decimals], strings.TrimRight(s[len(s)-decimals:], "0")
	out := whole
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}
