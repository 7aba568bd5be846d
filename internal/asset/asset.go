// Package asset is the table of tokens a network's wallets may hold: for
// each, its symbol, mint, token program, decimals and the currency it is
// pegged to (spend limits are set per currency). The defaults are the
// stablecoins' real mints; an operator adds others (ASSETS). The table is
// data, not trust: the worker checks every mint's owner program and
// decimals on chain before it starts.
package asset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// Currency is what an asset is pegged to: limits add amounts of one
// currency's assets together at 1:1.
type Currency = money.Code

// Currencies the policy has limits for.
const (
	USD = money.CodeUSD
	EUR = money.CodeEUR
)

// Asset is one token of a network.
type Asset struct {
	Symbol   string
	Mint     sol.PublicKey
	Program  sol.PublicKey // sol.TokenProgramID or sol.Token2022ProgramID
	Decimals uint8
	Currency Currency
}

// Amount is q of a (every amount of a payment is kept in micros,
// whatever a's decimals) as an amount of the currency it is pegged to.
func (a Asset) Amount(q money.Quantity) money.Amount {
	m, err := money.AmountOf(a.Currency, int64(q))
	if err != nil {
		panic("asset " + a.Symbol + ": " + err.Error()) // the table admits USD and EUR only
	}
	return m
}

// BaseUnits is q of a in its base units, or a *solana.PrecisionError
// when the amount is finer than a's smallest unit.
func (a Asset) BaseUnits(q money.Quantity) (uint64, error) {
	return a.Token().BaseUnits(q)
}

// Token is a as the chain layer moves it.
func (a Asset) Token() solana.Token {
	return solana.Token{Symbol: a.Symbol, Mint: a.Mint, Program: a.Program, Decimals: a.Decimals}
}

// ProgramName is the asset's token program as the API names it: "token"
// or "token-2022".
func (a Asset) ProgramName() string {
	if a.Program.Equals(sol.Token2022ProgramID) {
		return "token-2022"
	}
	return "token"
}

func mint(s string) sol.PublicKey { return sol.MustPublicKeyFromBase58(s) }

// Defaults are the stablecoins of each network at their real addresses
// (the official x402 packages' SVM asset table; Circle's EURC): USDC and
// USDT on the SPL Token program, PYUSD and USDG on Token-2022, EURC on
// SPL Token, all 6 decimals. USDT has no official devnet mint.
func Defaults() Table {
	usdc := func(m sol.PublicKey) Asset {
		return Asset{"USDC", m, sol.TokenProgramID, 6, USD}
	}
	return Table{
		solana.Mainnet: {
			usdc(solana.MainnetUSDCMint),
			{"USDT", mint("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"), sol.TokenProgramID, 6, USD},
			{"PYUSD", mint("2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo"), sol.Token2022ProgramID, 6, USD},
			{"USDG", mint("2u1tszSeqZ3qBWF3uNGPFc8TzMk2tdiwknnRMWGWjGWH"), sol.Token2022ProgramID, 6, USD},
			{"EURC", mint("HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr"), sol.TokenProgramID, 6, EUR},
		},
		solana.Devnet: {
			usdc(solana.DevnetUSDCMint),
			{"PYUSD", mint("CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM"), sol.Token2022ProgramID, 6, USD},
			{"USDG", mint("4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7"), sol.Token2022ProgramID, 6, USD},
			{"EURC", mint("HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr"), sol.TokenProgramID, 6, EUR},
		},
	}
}

// Table is the assets of each network, USDC first.
type Table map[solana.Network][]Asset

// OrDefaults is t, or Defaults when t is nil (a component given no
// table, as in tests).
func (t Table) OrDefaults() Table {
	if t == nil {
		return Defaults()
	}
	return t
}

// Of is the network's assets.
func (t Table) Of(n solana.Network) []Asset { return t[n] }

// Find is the network's asset of symbol (any case).
func (t Table) Find(n solana.Network, symbol string) (Asset, bool) {
	for _, a := range t[n] {
		if strings.EqualFold(a.Symbol, symbol) {
			return a, true
		}
	}
	return Asset{}, false
}

// ByMint is the network's asset of mint m.
func (t Table) ByMint(n solana.Network, m sol.PublicKey) (Asset, bool) {
	for _, a := range t[n] {
		if a.Mint.Equals(m) {
			return a, true
		}
	}
	return Asset{}, false
}

// With is t and the assets of spec (the ASSETS setting), which may not
// reuse a symbol or a mint of their network.
func (t Table) With(spec string) (Table, error) {
	extra, err := Parse(spec)
	if err != nil {
		return nil, err
	}
	out := Table{}
	for n, as := range t {
		out[n] = slices.Clone(as)
	}
	for _, a := range extra {
		if _, dup := out.Find(a.network, a.Symbol); dup {
			return nil, fmt.Errorf("ASSETS: %s is already an asset of %s", a.Symbol, a.network)
		}
		if b, dup := out.ByMint(a.network, a.Mint); dup {
			return nil, fmt.Errorf("ASSETS: mint %s is already %s on %s", a.Mint, b.Symbol, a.network)
		}
		out[a.network] = append(out[a.network], a.Asset)
	}
	return out, nil
}

type networkAsset struct {
	Asset
	network solana.Network
}

// Parse reads the ASSETS setting: entries separated by commas, each
// network:SYMBOL:mint:program:decimals:currency, program token or
// token-2022, currency USD or EUR; e.g.
// devnet:TEST:7xKX…:token:6:USD.
func Parse(spec string) ([]networkAsset, error) {
	var out []networkAsset
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		a, err := parseEntry(entry)
		if err != nil {
			return nil, fmt.Errorf("ASSETS: %q: %w", entry, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func parseEntry(entry string) (networkAsset, error) {
	f := strings.Split(entry, ":")
	if len(f) != 6 {
		return networkAsset{}, errors.New("want network:SYMBOL:mint:program:decimals:currency")
	}
	var a networkAsset
	switch n := solana.Network(f[0]); n {
	case solana.Devnet, solana.Mainnet:
		a.network = n
	default:
		return a, fmt.Errorf("network %q: want devnet or mainnet", f[0])
	}
	a.Symbol = f[1]
	if !policy.ValidSymbol(a.Symbol) {
		return a, fmt.Errorf("symbol %q: want 2 to 10 capital letters or digits", a.Symbol)
	}
	// SOL names the native coin and ALL every asset wherever an asset is
	// asked for (a balance history's ?asset=): neither may name a token.
	if a.Symbol == "SOL" || a.Symbol == "ALL" {
		return a, fmt.Errorf("symbol %q is reserved: SOL is the native coin, ALL every asset", a.Symbol)
	}
	m, err := sol.PublicKeyFromBase58(f[2])
	if err != nil {
		return a, fmt.Errorf("mint %q: %w", f[2], err)
	}
	a.Mint = m
	switch f[3] {
	case "token":
		a.Program = sol.TokenProgramID
	case "token-2022":
		a.Program = sol.Token2022ProgramID
	default:
		return a, fmt.Errorf("program %q: want token or token-2022", f[3])
	}
	// Amounts are kept and counted in micros of the currency and moved as
	// the asset's base units (solana.Token.BaseUnits): up to 9 decimals
	// a micro is a whole number of base units and every amount fits.
	d, err := strconv.ParseUint(f[4], 10, 8)
	if err != nil || d > solana.MaxDecimals {
		return a, fmt.Errorf("decimals %q: want 0 to %d", f[4], solana.MaxDecimals)
	}
	a.Decimals = uint8(d)
	switch c := Currency(f[5]); c {
	case USD, EUR:
		a.Currency = c
	default:
		return a, fmt.Errorf("currency %q: want USD or EUR", f[5])
	}
	return a, nil
}

// MismatchError is an asset whose mint on chain is not what the table
// says: missing, of another program, or of other decimals. Sending it
// would build transfers the chain refuses, or move amounts off by powers
// of ten.
type MismatchError struct {
	Network solana.Network
	Asset   Asset
	Got     string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("asset %s of %s (mint %s) is %s on chain, the table says %s with %d decimals; fix ASSETS or the node",
		e.Asset.Symbol, e.Network, e.Asset.Mint, e.Got, e.Asset.ProgramName(), e.Asset.Decimals)
}

// Mints reads mints on chain.
type Mints interface {
	Mints(ctx context.Context, mints []sol.PublicKey) ([]solana.MintInfo, error)
}

// Verify reads the network's mints through c and returns a MismatchError
// for the first asset whose mint is missing or differs in program or
// decimals.
func (t Table) Verify(ctx context.Context, n solana.Network, c Mints) error {
	_, err := t.Read(ctx, n, c)
	return err
}

// Reading is what the chain said of a network's mints at one time.
type Reading struct {
	At time.Time
	// Facts are each asset's mint's facts, by mint; a mint that is
	// missing or whose data did not parse has none.
	Facts map[sol.PublicKey]solana.MintFacts
}

// Read reads the network's mints through c (one call per
// solana.MaxAccountsPerCall) and answers their facts, with the
// MismatchError Verify would return when the table disagrees with the
// chain (the facts of the mints that do exist are answered even then).
func (t Table) Read(ctx context.Context, n solana.Network, c Mints) (Reading, error) {
	as := t[n]
	mints := make([]sol.PublicKey, len(as))
	for i, a := range as {
		mints[i] = a.Mint
	}
	got, err := c.Mints(ctx, mints)
	if err != nil {
		return Reading{}, err
	}
	r := Reading{At: time.Now().UTC(), Facts: map[sol.PublicKey]solana.MintFacts{}}
	var mismatch error
	for i, a := range as {
		m := got[i]
		var what string
		switch {
		case !m.Exists:
			what = "missing"
		case !m.Program.Equals(a.Program):
			what = "owned by " + m.Program.String()
		case m.Decimals != a.Decimals:
			what = fmt.Sprintf("a mint with %d decimals", m.Decimals)
		}
		if what != "" {
			if mismatch == nil {
				mismatch = &MismatchError{Network: n, Asset: a, Got: what}
			}
			continue
		}
		if m.FactsErr == nil {
			r.Facts[a.Mint] = m.Facts
		}
	}
	return r, mismatch
}

// Tokens are the network's assets other than USDC, for balance reads
// (solana.Client.WithTokens).
func (t Table) Tokens(n solana.Network) []solana.Token {
	var out []solana.Token
	for _, a := range t[n] {
		if a.Mint.Equals(n.USDCMint()) {
			continue
		}
		out = append(out, solana.Token{Symbol: a.Symbol, Mint: a.Mint, Program: a.Program, Decimals: a.Decimals})
	}
	return out
}
