package mpp

import (
	"strings"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/solana"
)

// The networks' names in a charge's methodDetails.network.
const (
	NetworkDevnet  = "devnet"
	NetworkMainnet = "mainnet-beta"
)

// NetworkName is n's name in a charge.
func NetworkName(n solana.Network) string {
	if n == solana.Mainnet {
		return NetworkMainnet
	}
	return NetworkDevnet
}

// stablecoins is @solana/mpp 0.6's symbol table (constants.js): a symbol
// names its network's mint, or mainnet's when the network has none (as the
// official code falls back); CASH, PYUSD and USDG are Token-2022 mints.
var stablecoins = []struct {
	symbol          string
	devnet, mainnet string
	program         sol.PublicKey
}{
	{"USDC", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", sol.TokenProgramID},
	{"USDT", "", "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", sol.TokenProgramID},
	{"USDG", "4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7", "2u1tszSeqZ3qBWF3uNGPFc8TzMk2tdiwknnRMWGWjGWH", sol.Token2022ProgramID},
	{"PYUSD", "CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM", "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo", sol.Token2022ProgramID},
	{"CASH", "", "CASHx9KJUStyftLFWGvEVf59SGeG9sh5FfcnZMVPCASH", sol.Token2022ProgramID},
}

// resolveMint is the mint a currency names on network, as the official
// code resolves it (resolveStablecoinMint): "" for SOL, a symbol's mint,
// or the currency itself (a mint).
func resolveMint(currency, network string) string {
	upper := strings.ToUpper(currency)
	if upper == "SOL" {
		return ""
	}
	for _, s := range stablecoins {
		if s.symbol == upper {
			if network == NetworkDevnet && s.devnet != "" {
				return s.devnet
			}
			return s.mainnet
		}
	}
	return currency
}

// stablecoinSymbol is the symbol a currency (a symbol in any case, or a
// mint of the table) stands for, "" for any other.
func stablecoinSymbol(currency string) string {
	upper := strings.ToUpper(currency)
	for _, s := range stablecoins {
		if s.symbol == upper || s.devnet == currency || s.mainnet == currency {
			return s.symbol
		}
	}
	return ""
}

// defaultTokenProgram is the program the official server verifies a
// transfer under when methodDetails.tokenProgram is absent: the table's
// for its stablecoins, SPL Token for any other mint.
func defaultTokenProgram(currency, network string) sol.PublicKey {
	mint := resolveMint(currency, network)
	if mint == "" {
		mint = currency
	}
	sym := stablecoinSymbol(mint)
	for _, s := range stablecoins {
		if s.symbol == sym {
			return s.program
		}
	}
	return sol.TokenProgramID
}
