package solana

import (
	"sync"

	sol "github.com/gagliardetto/solana-go"
)

// ataCacheSize bounds the derived addresses kept; past it the cache starts
// over (a busy service pays a few hundred wallets and recipients).
const ataCacheSize = 1 << 16

var ataCache = struct {
	sync.Mutex
	m map[[96]byte]ataEntry
}{m: map[[96]byte]ataEntry{}}

type ataEntry struct {
	addr sol.PublicKey
	bump uint8
}

// associatedTokenAddress is owner's associated token account for mint and
// its bump. Deriving one costs about 30 µs (hashes and a curve check per
// bump tried), several times a send; the answer never changes, so it is
// kept.
func associatedTokenAddress(owner, mint sol.PublicKey) (sol.PublicKey, uint8, error) {
	return associatedTokenAddressOf(owner, sol.TokenProgramID, mint)
}

// associatedTokenAddressOf is owner's associated token account for mint
// of token program (SPL Token or Token-2022: the program is one of the
// seeds) and its bump, kept like associatedTokenAddress's.
func associatedTokenAddressOf(owner, program, mint sol.PublicKey) (sol.PublicKey, uint8, error) {
	var k [96]byte
	copy(k[:32], owner[:])
	copy(k[32:64], mint[:])
	copy(k[64:], program[:])
	ataCache.Lock()
	e, ok := ataCache.m[k]
	ataCache.Unlock()
	if ok {
		return e.addr, e.bump, nil
	}
	addr, bump, err := sol.FindProgramAddress([][]byte{owner[:], program[:], mint[:]}, sol.SPLAssociatedTokenAccountProgramID)
	if err != nil {
		return sol.PublicKey{}, 0, err
	}
	ataCache.Lock()
	if len(ataCache.m) >= ataCacheSize {
		clear(ataCache.m)
	}
	ataCache.m[k] = ataEntry{addr, bump}
	ataCache.Unlock()
	return addr, bump, nil
}
