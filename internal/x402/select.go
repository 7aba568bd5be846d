package x402

import (
	"fmt"
	"slices"
	"strings"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/seller"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// The networks' names in the protocol: CAIP-2 ids in v2, names in v1
// (go/mechanisms/svm/constants.go of the official implementation).
const (
	MainnetCAIP2 = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	DevnetCAIP2  = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
	MainnetV1    = "solana"
	DevnetV1     = "solana-devnet"
)

// NetworkID is the network's name in a challenge of the given version.
func NetworkID(n solana.Network, version int) string {
	switch {
	case n == solana.Mainnet && version == 1:
		return MainnetV1
	case n == solana.Mainnet:
		return MainnetCAIP2
	case version == 1:
		return DevnetV1
	}
	return DevnetCAIP2
}

// Reason says why a requirement is not payable by the wallet.
type Reason string

// The reasons, in the order Select checks them.
const (
	ReasonMalformed        Reason = "malformed"           // a field has the wrong type or form
	ReasonScheme           Reason = "scheme"              // not `exact`
	ReasonNetwork          Reason = "network"             // not the wallet's network
	ReasonAsset            Reason = "asset"               // not a token the wallet pays in
	ReasonPayTo            Reason = "pay_to"              // missing or not a Solana address
	ReasonPayToIsWallet    Reason = "pay_to_is_wallet"    // the wallet would pay itself
	ReasonFeePayerMissing  Reason = "fee_payer_missing"   // no extra.feePayer: the wallet would pay the fee
	ReasonFeePayerInvalid  Reason = "fee_payer_invalid"   // not a Solana address
	ReasonFeePayerIsWallet Reason = "fee_payer_is_wallet" // the wallet would pay the fee and sign as fee payer
	ReasonMemo             Reason = "memo"                // extra.memo over 256 bytes
	ReasonAmount           Reason = "amount"              // missing, zero, not atomic units, or too large
	ReasonOverMax          Reason = "amount_over_max"     // over the caller's cap
	// ReasonShadowed: a v1 entry after the first `exact` entry of the
	// wallet's network. A v1 X-PAYMENT names only scheme and network, and
	// v1 sellers verify it against the first such entry: paying a later one
	// would be refused.
	ReasonShadowed Reason = "v1_shadowed"
)

// Rejection is why one `accepts` entry was not chosen.
type Rejection struct {
	Index  int
	Reason Reason
	Detail string
}

// NotPayableError is Select's answer when no entry is payable; it names
// every entry's reason so the API can answer 422 with a clear message.
type NotPayableError struct {
	Rejections []Rejection
}

func (e *NotPayableError) Error() string {
	var b strings.Builder
	b.WriteString("no payable x402 requirement")
	for i, r := range e.Rejections {
		if i == 8 {
			fmt.Fprintf(&b, "; and %d more", len(e.Rejections)-i)
			break
		}
		fmt.Fprintf(&b, "; accepts[%d]: %s", r.Index, r.Detail)
	}
	return b.String()
}

// Has reports whether some entry was refused for reason r.
func (e *NotPayableError) Has(r Reason) bool {
	for _, x := range e.Rejections {
		if x.Reason == r {
			return true
		}
	}
	return false
}

// Wallet is the buyer: the network and owner address of an agent wallet,
// and the tokens it pays in.
type Wallet struct {
	Network solana.Network
	Owner   sol.PublicKey
	// Tokens are the tokens the wallet may pay in, most preferred first
	// (each a mint of the network, with its program and decimals); empty
	// means the network's USDC only.
	Tokens []solana.Token
}

// tokens is w.Tokens, or the network's USDC.
func (w Wallet) tokens() []solana.Token {
	if len(w.Tokens) == 0 {
		return []solana.Token{w.Network.USDC()}
	}
	return w.Tokens
}

// Choice is the requirement Select chose, validated and typed.
type Choice struct {
	Version int
	Network solana.Network
	Index   int // in accepts
	// Amount is in Token's base units.
	Amount money.Quantity
	// Token is the asset paid, one of the wallet's tokens; Asset is its
	// mint.
	Token    solana.Token
	Asset    sol.PublicKey
	PayTo    sol.PublicKey
	FeePayer sol.PublicKey
	// Memo is extra.memo; empty means the payment carries a random nonce.
	Memo string
	// Resource is what is bought: v2's top-level resource, or v1's entry's.
	Resource          Resource
	MaxTimeoutSeconds int64
	// Requirement is the entry as the seller sent it.
	Requirement Requirement

	challenge *PaymentRequired
}

// Select chooses the entry the wallet can pay: scheme `exact`, the
// wallet's network (v2 CAIP-2 id or v1 name, by the challenge's version),
// one of the wallet's tokens as asset (by default the network's USDC), a
// fee payer that is not the wallet, an amount within max when max is set
// (in the entry's token's base units; nil: no cap; the policy still
// applies). Among several payable entries the one in the wallet's most
// preferred token wins (amounts of different tokens are not compared),
// and among those the cheapest (the first on a tie); in x402 v1 only the
// first exact entry of the wallet's network may be paid (its header does
// not say which entry it pays). None payable: a *NotPayableError naming
// each entry's reason.
func (pr *PaymentRequired) Select(w Wallet, max *money.Quantity) (Choice, error) {
	var (
		best     Choice
		bestRank int
		found    bool
		rej      []Rejection
	)
	v1First := -1 // v1: the first exact entry of the wallet's network
	for i, r := range pr.Accepts {
		if pr.Version == 1 && r.Scheme == SchemeExact && r.Network == NetworkID(w.Network, 1) {
			if v1First >= 0 {
				rej = append(rej, Rejection{Index: i, Reason: ReasonShadowed,
					Detail: fmt.Sprintf("x402 v1: the seller verifies a payment against accepts[%d], the first exact entry of this network", v1First)})
				continue
			}
			v1First = i
		}
		c, rank, reason, detail := pr.check(i, r, w, max)
		if reason != "" {
			rej = append(rej, Rejection{Index: i, Reason: reason, Detail: detail})
			continue
		}
		if !found || rank < bestRank || rank == bestRank && c.Amount < best.Amount {
			best, bestRank, found = c, rank, true
		}
	}
	if !found {
		return Choice{}, &NotPayableError{Rejections: rej}
	}
	return best, nil
}

// check judges entry i; a payable one comes with its token's rank in the
// wallet's preference.
func (pr *PaymentRequired) check(i int, r Requirement, w Wallet, max *money.Quantity) (Choice, int, Reason, string) {
	if r.malformed != "" {
		return Choice{}, 0, ReasonMalformed, r.malformed
	}
	if r.Scheme != SchemeExact {
		return Choice{}, 0, ReasonScheme, fmt.Sprintf("scheme %q is not %q", seller.Clip(r.Scheme), SchemeExact)
	}
	want := NetworkID(w.Network, pr.Version)
	if r.Network != want {
		return Choice{}, 0, ReasonNetwork, fmt.Sprintf("network %q is not the wallet's network %q", seller.Clip(r.Network), want)
	}
	tokens := w.tokens()
	rank := slices.IndexFunc(tokens, func(t solana.Token) bool { return t.Mint.String() == r.Asset })
	if rank < 0 {
		names := make([]string, len(tokens))
		for k, t := range tokens {
			names[k] = fmt.Sprintf("%s (%s)", t.Symbol, t.Mint)
		}
		return Choice{}, 0, ReasonAsset, fmt.Sprintf("asset %q is not %s %s", seller.Clip(r.Asset), w.Network, strings.Join(names, " or "))
	}
	tk := tokens[rank]
	payTo, err := seller.Address(r.PayTo)
	if err != nil {
		return Choice{}, 0, ReasonPayTo, "payTo " + err.Error()
	}
	if payTo.Equals(w.Owner) {
		return Choice{}, 0, ReasonPayToIsWallet, "payTo is the paying wallet itself"
	}
	if r.FeePayer == "" {
		return Choice{}, 0, ReasonFeePayerMissing, "extra.feePayer is missing: the seller's facilitator must pay the network fee"
	}
	feePayer, err := seller.Address(r.FeePayer)
	if err != nil {
		return Choice{}, 0, ReasonFeePayerInvalid, "extra.feePayer " + err.Error()
	}
	if feePayer.Equals(w.Owner) {
		return Choice{}, 0, ReasonFeePayerIsWallet, "extra.feePayer is the paying wallet: it would pay the fee and sign as fee payer"
	}
	if namedInTransfer(feePayer, w.Owner, payTo, tk) {
		return Choice{}, 0, ReasonFeePayerInvalid, "extra.feePayer is an account or program of the transfer itself"
	}
	if len(r.Memo) > MaxMemoBytes {
		return Choice{}, 0, ReasonMemo, fmt.Sprintf("extra.memo is %d bytes (at most %d)", len(r.Memo), MaxMemoBytes)
	}
	atomic, err := ParseAtomicAmount(r.AmountText)
	if err != nil {
		return Choice{}, 0, ReasonAmount, err.Error()
	}
	if atomic == 0 {
		return Choice{}, 0, ReasonAmount, "amount is zero"
	}
	amount, ok := atomicToMicros(atomic)
	if !ok {
		return Choice{}, 0, ReasonAmount, fmt.Sprintf("amount %s is too large", r.AmountText)
	}
	if max != nil && amount > *max {
		return Choice{}, 0, ReasonOverMax, fmt.Sprintf("amount %s %s is over the cap of %s %s", units(amount, tk), tk.Symbol, units(*max, tk), tk.Symbol)
	}
	res := pr.Resource
	if pr.Version == 1 {
		res = r.Resource
	}
	return Choice{
		Version: pr.Version, Network: w.Network, Index: i, Amount: amount,
		Token: tk, Asset: tk.Mint, PayTo: payTo, FeePayer: feePayer, Memo: r.Memo,
		Resource: res, MaxTimeoutSeconds: r.MaxTimeoutSeconds,
		Requirement: r, challenge: pr,
	}, rank, "", ""
}

// units writes an amount of tk's base units in whole tokens.
func units(n money.Quantity, tk solana.Token) string {
	return money.FormatUnits(int64(n), int(tk.Decimals))
}

// namedInTransfer reports whether key is an account or program the
// payment's instructions name (both token programs, the mint, the
// wallet's and payTo's accounts of it): the facilitator refuses a fee
// payer among them, and so does BuildTransaction; Select refuses it
// first, with a reason.
func namedInTransfer(key, owner, payTo sol.PublicKey, tk solana.Token) bool {
	for _, k := range []sol.PublicKey{tk.Mint, sol.TokenProgramID, sol.Token2022ProgramID, sol.ComputeBudget, sol.MemoProgramID} {
		if key.Equals(k) {
			return true
		}
	}
	for _, o := range []sol.PublicKey{owner, payTo} {
		if ata, _, err := sol.FindAssociatedTokenAddressWithProgram(o, tk.Mint, tk.Program); err == nil && key.Equals(ata) {
			return true
		}
	}
	return false
}
