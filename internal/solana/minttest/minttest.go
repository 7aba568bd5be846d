// Package minttest builds mint accounts (SPL Token, and Token-2022 with
// extensions) byte for byte and puts them on a localnet, so tests can use
// mints the localnet's genesis does not have: other decimals, a default
// frozen state, a scaled UI amount, interest.
package minttest

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
)

// Mint is a mint's base state and its Token-2022 extensions (none: the
// 82-byte base, as SPL Token has it).
type Mint struct {
	MintAuthority   *sol.PublicKey
	FreezeAuthority *sol.PublicKey
	Supply          uint64
	Decimals        uint8
	Extensions      []Extension
}

// Extension is one TLV entry: spl-token-2022's ExtensionType and value.
type Extension struct {
	Type  uint16
	Value []byte
}

// Bytes is m's account data: the 82-byte base, and with extensions the
// base padded to 165 bytes, the mint account type (1) and the entries.
func (m Mint) Bytes() []byte {
	d := make([]byte, 82)
	if m.MintAuthority != nil {
		binary.LittleEndian.PutUint32(d[0:], 1)
		copy(d[4:36], m.MintAuthority[:])
	}
	binary.LittleEndian.PutUint64(d[36:], m.Supply)
	d[44] = m.Decimals
	d[45] = 1
	if m.FreezeAuthority != nil {
		binary.LittleEndian.PutUint32(d[46:], 1)
		copy(d[50:82], m.FreezeAuthority[:])
	}
	if len(m.Extensions) == 0 {
		return d
	}
	d = append(d, make([]byte, 165-82)...)
	d = append(d, 1)
	for _, x := range m.Extensions {
		d = binary.LittleEndian.AppendUint16(d, x.Type)
		d = binary.LittleEndian.AppendUint16(d, uint16(len(x.Value)))
		d = append(d, x.Value...)
	}
	return d
}

func key(k *sol.PublicKey) []byte {
	if k == nil {
		return make([]byte, 32)
	}
	return k[:]
}

// DefaultAccountState makes new accounts start frozen (or initialized).
func DefaultAccountState(frozen bool) Extension {
	if frozen {
		return Extension{6, []byte{2}}
	}
	return Extension{6, []byte{1}}
}

// PermanentDelegate lets delegate move any holder's tokens (nil: unset).
func PermanentDelegate(delegate *sol.PublicKey) Extension {
	return Extension{12, key(delegate)}
}

// TransferHook names a hook program (nil: none).
func TransferHook(authority, program *sol.PublicKey) Extension {
	return Extension{14, append(append([]byte{}, key(authority)...), key(program)...)}
}

// Pausable is an issuer's pause switch.
func Pausable(authority *sol.PublicKey, paused bool) Extension {
	v := append([]byte{}, key(authority)...)
	if paused {
		return Extension{26, append(v, 1)}
	}
	return Extension{26, append(v, 0)}
}

// InterestBearing accrues rate basis points a year from initializedAt
// (Unix seconds).
func InterestBearing(authority *sol.PublicKey, initializedAt int64, rate int16) Extension {
	v := append([]byte{}, key(authority)...)
	v = binary.LittleEndian.AppendUint64(v, uint64(initializedAt))
	v = binary.LittleEndian.AppendUint16(v, uint16(rate))
	v = binary.LittleEndian.AppendUint64(v, uint64(initializedAt))
	v = binary.LittleEndian.AppendUint16(v, uint16(rate))
	return Extension{10, v}
}

// ScaledUIAmount shows base units times multiplier, and times
// newMultiplier from newAt (Unix seconds) on.
func ScaledUIAmount(authority *sol.PublicKey, multiplier float64, newAt int64, newMultiplier float64) Extension {
	v := append([]byte{}, key(authority)...)
	v = binary.LittleEndian.AppendUint64(v, math.Float64bits(multiplier))
	v = binary.LittleEndian.AppendUint64(v, uint64(newAt))
	v = binary.LittleEndian.AppendUint64(v, math.Float64bits(newMultiplier))
	return Extension{25, v}
}

// Put makes (or replaces) the account at address on the localnet at url:
// data owned by program, rent-exempt (surfnet_setAccount).
func Put(t testing.TB, url string, address, program sol.PublicKey, data []byte) {
	t.Helper()
	localnettest.Call(t, url, nil, "surfnet_setAccount", address.String(), map[string]any{
		"lamports": uint64(len(data)+128) * 3_480 * 2,
		"data":     []string{base64.StdEncoding.EncodeToString(data), "base64"},
		"owner":    program.String(),
	})
}

// NewMint puts m at a new address under program and returns the address.
func NewMint(t testing.TB, url string, program sol.PublicKey, m Mint) sol.PublicKey {
	t.Helper()
	address := sol.NewWallet().PublicKey()
	Put(t, url, address, program, m.Bytes())
	return address
}
