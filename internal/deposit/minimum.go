package deposit

import (
	"database/sql"

	"github.com/agentwallet/agentwallet/internal/asset"
)

// Default minimums of a deposit that is announced (tx.received): smaller
// ones are recorded, marked below_minimum, and not announced one by one.
const (
	// DefaultMinUSD is 0.01 of a USD stablecoin (micro-units).
	DefaultMinUSD = 10_000
	// DefaultMinEUR is 0.01 of a EUR stablecoin (micro-units).
	DefaultMinEUR = 10_000
	// DefaultMinSOL is 0.001 SOL (lamports).
	DefaultMinSOL = 1_000_000
)

// Minimums are an account's deposit minimums as stored (NULL: the
// default), in base units.
type Minimums struct {
	USD sql.NullInt64 `bun:"deposit_min_usd"`
	EUR sql.NullInt64 `bun:"deposit_min_eur"`
	SOL sql.NullInt64 `bun:"deposit_min_sol"`
}

// MinUSD, MinEUR and MinSOL are the minimums in force.
func (m Minimums) MinUSD() int64 { return orDefault(m.USD, DefaultMinUSD) }
func (m Minimums) MinEUR() int64 { return orDefault(m.EUR, DefaultMinEUR) }
func (m Minimums) MinSOL() int64 { return orDefault(m.SOL, DefaultMinSOL) }

// Of is the minimum of a deposit of asset (a Key) when its currency is
// not at hand: SOL's, or USD's (USDC's).
func (m Minimums) Of(asset string) int64 {
	if asset == SOL {
		return m.MinSOL()
	}
	return m.MinUSD()
}

// OfCurrency is the minimum of a deposit of a stablecoin pegged to c:
// EUR's for a EUR one (EURC), USD's otherwise.
func (m Minimums) OfCurrency(c asset.Currency) int64 {
	if c == asset.EUR {
		return m.MinEUR()
	}
	return m.MinUSD()
}

// of is the minimum of a deposit to the (resolved) watched row r.
func (m Minimums) of(r *watched) int64 {
	if r.Asset == SOL {
		return m.MinSOL()
	}
	return m.OfCurrency(r.token.Currency)
}

func orDefault(v sql.NullInt64, def int64) int64 {
	if v.Valid {
		return v.Int64
	}
	return def
}
