package solana

import (
	"errors"
	"fmt"
	"math"

	"github.com/agentwallet/agentwallet/internal/money"
)

// MaxDecimals is the most decimals a token of the asset table may have:
// at 9, one micro is 1,000 base units and a transfer (a u64 of base
// units) carries up to about 18 billion whole units; more is refused,
// never wrapped.
const MaxDecimals = 9

// PrecisionError is an amount a token cannot carry: finer than one of its
// base units (a 2-decimal token and 1.005).
type PrecisionError struct {
	Token  Token
	Amount money.Quantity
}

func (e *PrecisionError) Error() string {
	return fmt.Sprintf("%s has %d decimals: %s is finer than its smallest unit (%s)",
		e.Token.name(), e.Token.Decimals, money.FormatUnits(int64(e.Amount), money.Decimals), money.FormatUnits(1, int(e.Token.Decimals)))
}

// BaseUnits converts micros (every amount the service keeps and the
// policy counts, at 6 decimals whatever the token's) into t's base units:
// micros ÷ 10^(6−d) for d ≤ 6, exact or a *PrecisionError; micros ×
// 10^(d−6) for d > 6, always exact (an amount finer than a micro cannot
// be written). The chain edge (BuildTransfer) is the only place it is
// needed.
func (t Token) BaseUnits(micros money.Quantity) (uint64, error) {
	if micros < 0 {
		return 0, errors.New("negative amount")
	}
	d := int(t.Decimals)
	if d > MaxDecimals {
		return 0, fmt.Errorf("token %s has %d decimals, more than %d", t.name(), d, MaxDecimals)
	}
	if d <= money.Decimals {
		step := pow10(money.Decimals - d)
		if int64(micros)%step != 0 {
			return 0, &PrecisionError{Token: t, Amount: micros}
		}
		return uint64(int64(micros) / step), nil
	}
	mul := uint64(pow10(d - money.Decimals))
	if uint64(micros) > math.MaxUint64/mul {
		return 0, fmt.Errorf("amount %d micros overflows %s's base units", micros, t.name())
	}
	return uint64(micros) * mul, nil
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}
