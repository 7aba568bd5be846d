// Package usdc names the money type the USD limits and USDC amounts use:
// money.Micros[money.USD]. Every USD-pegged stablecoin counts at 1:1
// under the policy's _usdc fields, so a micro-USDC is a micro-dollar.
package usdc

import "github.com/agentwallet/agentwallet/internal/money"

// Decimals is the number of decimal places of the USDC mint.
const Decimals = money.Decimals

// Micros is an amount in micro-dollars (micro-USDC).
type Micros = money.Micros[money.USD]

// Unit is one whole USDC in micro-USDC.
const Unit Micros = money.Unit

// MaxMicros bounds parsed amounts.
const MaxMicros Micros = money.MaxMicros

// Errors returned by Parse.
var (
	ErrSyntax    = money.ErrSyntax
	ErrPrecision = money.ErrPrecision
	ErrRange     = money.ErrRange
	ErrNegative  = money.ErrNegative
)

// Parse reads a JSON number's text into micro-USDC exactly.
func Parse(s string) (Micros, error) { return money.Parse[money.USD](s) }

// FormatUnits prints v base units with the given decimals exactly.
func FormatUnits(v int64, decimals int) string { return money.FormatUnits(v, decimals) }
