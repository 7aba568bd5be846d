package solana

import (
	"errors"
	"strconv"
	"strings"

	"github.com/agentwallet/agentwallet/internal/money"
)

// ErrSOLPrecision is a SOL amount finer than a lamport.
var ErrSOLPrecision = errors.New("must have at most 9 decimal places")

// ParseSOL reads a decimal SOL amount (a JSON number's text: "0.5",
// "1e-3") into lamports exactly, never through a float: it is money.Parse's
// 6 decimals shifted by 3.
func ParseSOL(s string) (int64, error) {
	shifted := s + "e3"
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			return 0, money.ErrSyntax
		}
		shifted = s[:i] + "e" + strconv.Itoa(e+3)
	}
	m, err := money.Parse[money.USD](shifted)
	if errors.Is(err, money.ErrPrecision) {
		return 0, ErrSOLPrecision
	}
	return int64(m), err
}
