package solana

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	sol "github.com/gagliardetto/solana-go"
)

// The Token-2022 mint extensions MintFacts reads (spl-token-2022's
// ExtensionType numbering; terms.go reads the ones that decide whether a
// transfer can be sent).
const (
	extDefaultAccountState   = 6
	extInterestBearingConfig = 10
	extPermanentDelegate     = 12
	extScaledUiAmount        = 25
)

// mintExtensionLen is the length of each mint extension MintFacts reads.
var mintExtensionLen = map[uint16]int{
	extDefaultAccountState: 1, extInterestBearingConfig: 52, extPermanentDelegate: 32,
	extTransferHook: 64, extScaledUiAmount: 56, extPausable: 33,
}

// Token account states (the byte at tokenAccountStateOffset), the same
// under SPL Token and Token-2022.
const (
	accountUninitialized = 0
	accountInitialized   = 1
	accountFrozen        = 2
)

// MintFacts are what a mint says about its issuer's powers over holders'
// tokens and about how its amounts read, as parsed from its account. The
// zero value is a plain SPL Token mint with no freeze authority.
type MintFacts struct {
	// FreezeAuthority may freeze any holder's account of the mint (nil:
	// none).
	FreezeAuthority *sol.PublicKey
	// PermanentDelegate (Token-2022) may move or burn any holder's tokens
	// of the mint without their signature (nil: none, or the extension's
	// delegate is unset).
	PermanentDelegate *sol.PublicKey
	// DefaultFrozen (Token-2022 DefaultAccountState): new accounts of the
	// mint start frozen, until its freeze authority thaws them.
	DefaultFrozen bool
	// TransferHook is the hook program every transfer calls (nil: none).
	TransferHook *sol.PublicKey
	// Paused (Token-2022 Pausable): its issuer has paused every transfer.
	Paused bool
	// InterestBearing (Token-2022 InterestBearingConfig) is set when the
	// mint's UI amount accrues interest over its base units.
	InterestBearing *InterestBearing
	// ScaledUIAmount (Token-2022 ScaledUiAmount) is set when the mint's UI
	// amount is its base units times a multiplier.
	ScaledUIAmount *ScaledUIAmount
}

// IssuerCanSeize reports whether the mint's issuer can take tokens from
// any holder: a permanent delegate is set.
func (f MintFacts) IssuerCanSeize() bool { return f.PermanentDelegate != nil }

// InterestBearing is an InterestBearingConfig: rates in basis points a
// year, times in Unix seconds. Base units never change; wallets and
// explorers show them grown by the rate (the UI amount).
type InterestBearing struct {
	RateAuthority        *sol.PublicKey
	InitializedAt        int64
	PreUpdateAverageRate int16
	LastUpdateAt         int64
	CurrentRate          int16
}

// ScaledUIAmount is a ScaledUiAmount config: the UI amount is base units
// times Multiplier, and times NewMultiplier from NewMultiplierAt (Unix
// seconds) on. Base units never change.
type ScaledUIAmount struct {
	Authority       *sol.PublicKey
	Multiplier      float64
	NewMultiplierAt int64
	NewMultiplier   float64
}

// MultiplierAt is the multiplier in force at unix (seconds).
func (s ScaledUIAmount) MultiplierAt(unix int64) float64 {
	if unix >= s.NewMultiplierAt {
		return s.NewMultiplier
	}
	return s.Multiplier
}

// ErrMalformedMint is mint data that does not parse as an initialized
// mint of its program.
var ErrMalformedMint = errors.New("malformed mint")

// mintFreezeAuthorityOffset is the freeze authority's COption (u32 tag,
// key) in the SPL Token mint layout Token-2022 shares.
const mintFreezeAuthorityOffset = 46

// ParseMintFacts reads a mint account's data owned by program: the base
// mint (82 bytes) and, under Token-2022, the TLV extensions after the
// padded base and the account-type byte (an extension's entry is a u16
// type, a u16 length and its value; a zero type ends them). An extension
// it does not read is skipped; one it reads of an unexpected length, an
// entry running past the data, or data of another shape is an
// ErrMalformedMint.
func ParseMintFacts(program sol.PublicKey, data []byte) (MintFacts, error) {
	var f MintFacts
	malformed := func(format string, a ...any) (MintFacts, error) {
		return MintFacts{}, fmt.Errorf("%w: %s", ErrMalformedMint, fmt.Sprintf(format, a...))
	}
	if len(data) < mintSize || data[45] != 1 {
		return malformed("not an initialized mint")
	}
	switch binary.LittleEndian.Uint32(data[mintFreezeAuthorityOffset:]) {
	case 0:
	case 1:
		k := sol.PublicKeyFromBytes(data[mintFreezeAuthorityOffset+4 : mintFreezeAuthorityOffset+36])
		f.FreezeAuthority = &k
	default:
		return malformed("freeze authority option tag %d", binary.LittleEndian.Uint32(data[mintFreezeAuthorityOffset:]))
	}
	if len(data) == mintSize {
		return f, nil
	}
	if !program.Equals(sol.Token2022ProgramID) {
		return malformed("an SPL Token mint of %d bytes", len(data))
	}
	if len(data) <= tokenAccountSize || data[tokenAccountSize] != accountTypeMint {
		return malformed("no mint account type after the padded base")
	}
	for _, b := range data[mintSize:tokenAccountSize] {
		if b != 0 {
			return malformed("the padding after the base is not zero")
		}
	}
	for o := tokenAccountSize + 1; o+4 <= len(data); {
		typ := binary.LittleEndian.Uint16(data[o:])
		n := int(binary.LittleEndian.Uint16(data[o+2:]))
		if typ == 0 {
			break
		}
		if o+4+n > len(data) {
			return malformed("extension %d runs past the mint's data", typ)
		}
		v := data[o+4 : o+4+n]
		o += 4 + n
		if want, read := mintExtensionLen[typ]; read && n != want {
			return malformed("extension %d is %d bytes, not %d", typ, n, want)
		}
		switch typ {
		case extDefaultAccountState:
			f.DefaultFrozen = v[0] == accountFrozen
		case extPermanentDelegate:
			f.PermanentDelegate = optionalKey(v)
		case extTransferHook:
			f.TransferHook = optionalKey(v[32:])
		case extPausable:
			f.Paused = v[32] != 0
		case extInterestBearingConfig:
			f.InterestBearing = &InterestBearing{
				RateAuthority:        optionalKey(v),
				InitializedAt:        int64(binary.LittleEndian.Uint64(v[32:])),
				PreUpdateAverageRate: int16(binary.LittleEndian.Uint16(v[40:])),
				LastUpdateAt:         int64(binary.LittleEndian.Uint64(v[42:])),
				CurrentRate:          int16(binary.LittleEndian.Uint16(v[50:])),
			}
		case extScaledUiAmount:
			s := &ScaledUIAmount{
				Authority:       optionalKey(v),
				Multiplier:      math.Float64frombits(binary.LittleEndian.Uint64(v[32:])),
				NewMultiplierAt: int64(binary.LittleEndian.Uint64(v[40:])),
				NewMultiplier:   math.Float64frombits(binary.LittleEndian.Uint64(v[48:])),
			}
			// The program keeps multipliers positive and finite; any other
			// value would make the UI amount meaningless.
			for _, m := range []float64{s.Multiplier, s.NewMultiplier} {
				if !(m > 0) || math.IsInf(m, 0) {
					return malformed("scaled UI amount multiplier %v", m)
				}
			}
			f.ScaledUIAmount = s
		}
	}
	return f, nil
}

// optionalKey reads an OptionalNonZeroPubkey: 32 bytes, all zero for none.
func optionalKey(v []byte) *sol.PublicKey {
	k := sol.PublicKeyFromBytes(v[:32])
	if k.IsZero() {
		return nil
	}
	return &k
}
