package solana_test

import (
	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/solana"
)

// The stablecoins other than USDC, as the localnet carries them at their
// real addresses (localnet/lib/mints.js): USDT has no devnet mint, so its
// mainnet one is used; the localnet has one ledger for both.
var (
	usdt = solana.Token{Symbol: "USDT", Mint: sol.MustPublicKeyFromBase58("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"), Program: sol.TokenProgramID, Decimals: 6}
	eurc = solana.Token{Symbol: "EURC", Mint: sol.MustPublicKeyFromBase58("HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr"), Program: sol.TokenProgramID, Decimals: 6}
	// pyusd is devnet PYUSD: Token-2022 with mainnet PYUSD's eight
	// extensions (transfer fee 0, hook unset).
	pyusd = solana.Token{Symbol: "PYUSD", Mint: sol.MustPublicKeyFromBase58("CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM"), Program: sol.Token2022ProgramID, Decimals: 6}
	usdg  = solana.Token{Symbol: "USDG", Mint: sol.MustPublicKeyFromBase58("4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7"), Program: sol.Token2022ProgramID, Decimals: 6}
)
