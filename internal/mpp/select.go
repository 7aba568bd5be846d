package mpp

import (
	"fmt"
	"slices"
	"strings"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/seller"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// Reason says why a challenge is not payable by the wallet.
type Reason string

// The reasons, in the order Select checks them.
const (
	ReasonUnsupportedMethod Reason = "unsupported_method"  // not method solana, intent charge
	ReasonInvalid           Reason = "invalid"             // the charge request does not decode or breaks a rule
	ReasonNetworkMismatch   Reason = "network_mismatch"    // not the wallet's network
	ReasonExpired           Reason = "expired"             // no expires, or past it
	ReasonAssetNotPayable   Reason = "asset_not_payable"   // SOL, or not one of the wallet's tokens as the seller verifies it
	ReasonFeePayerIsWallet  Reason = "fee_payer_is_wallet" // the seller's fee payer key is the wallet
	ReasonFeePayerInvalid   Reason = "fee_payer_invalid"   // the fee payer key is an account or program of the payment
	ReasonRecipientIsWallet Reason = "recipient_is_wallet" // the wallet would pay itself
	ReasonAmountOverMax     Reason = "amount_over_max"     // over the caller's cap
)

// Rejection is why one challenge was not chosen.
type Rejection struct {
	Index  int
	Reason Reason
	Detail string
}

// NotPayableError is Select's answer when no challenge is payable; it
// names every challenge's reason so the API can answer 422 with a clear
// message.
type NotPayableError struct {
	Rejections []Rejection
}

func (e *NotPayableError) Error() string {
	var b strings.Builder
	b.WriteString("no payable MPP challenge")
	if len(e.Rejections) == 0 {
		b.WriteString(": the answer carries no Payment challenge")
	}
	for i, r := range e.Rejections {
		if i == 8 {
			fmt.Fprintf(&b, "; and %d more", len(e.Rejections)-i)
			break
		}
		fmt.Fprintf(&b, "; challenge[%d]: %s", r.Index, r.Detail)
	}
	return b.String()
}

// Has reports whether some challenge was refused for reason r.
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

// Choice is the challenge Select chose, validated and typed.
type Choice struct {
	Index     int // in the challenges given to Select
	Challenge Challenge
	Charge    Charge
	Network   solana.Network
	// Token is the asset paid, one of the wallet's tokens.
	Token solana.Token
	// Amount is the total paid, in Token's base units; Primary is what
	// goes to Recipient, the rest to the splits.
	Amount    money.Quantity
	Primary   money.Quantity
	Recipient sol.PublicKey
	Splits    []Split
	// FeePayer is the seller's fee payer, which signs and pays the fee
	// (and the rent of the split accounts it asks to create); zero: the
	// wallet pays the fee.
	FeePayer sol.PublicKey
	// Expires is when the seller stops accepting the challenge.
	Expires time.Time

	selected bool
}

// Recipients are the payees: the primary recipient, then each split's,
// for allowlist checks.
func (c Choice) Recipients() []sol.PublicKey {
	out := []sol.PublicKey{c.Recipient}
	for _, s := range c.Splits {
		out = append(out, s.Recipient)
	}
	return out
}

// Select chooses the challenge the wallet can pay: method "solana" and
// intent "charge"; methodDetails.network the wallet's ("devnet" for
// devnet, "mainnet-beta" for mainnet; any other is not payable); an
// expires after now (the official server refuses a credential without
// one); a currency that is one of the wallet's tokens (a mint, or a
// symbol in any case resolved as the official code resolves it: never
// SOL, we pay stablecoins only) of 6 decimals, under the token program
// and with the decimals the seller verifies (methodDetails.tokenProgram,
// or the official default for the currency, and methodDetails.decimals
// when present); a fee payer key, when the seller pays the fee, that is
// not the wallet nor an account or program of the payment; no recipient
// that is the wallet; the total within max when max is set (in the
// token's base units; nil: no cap; the policy still applies). Among
// several payable challenges the one in the wallet's most preferred token
// wins, then the cheapest, then the first. None payable: a
// *NotPayableError naming each challenge's reason.
func Select(cs []Challenge, w Wallet, max *money.Quantity, now time.Time) (Choice, error) {
	var (
		best     Choice
		bestRank int
		found    bool
		rej      []Rejection
	)
	for i, c := range cs {
		ch, rank, reason, detail := check(i, c, w, max, now)
		if reason != "" {
			rej = append(rej, Rejection{Index: i, Reason: reason, Detail: detail})
			continue
		}
		if !found || rank < bestRank || rank == bestRank && ch.Amount < best.Amount {
			best, bestRank, found = ch, rank, true
		}
	}
	if !found {
		return Choice{}, &NotPayableError{Rejections: rej}
	}
	return best, nil
}

// check judges challenge i; a payable one comes with its token's rank in
// the wallet's preference.
func check(i int, c Challenge, w Wallet, max *money.Quantity, now time.Time) (Choice, int, Reason, string) {
	if c.Method != MethodSolana || c.Intent != IntentCharge {
		return Choice{}, 0, ReasonUnsupportedMethod, fmt.Sprintf("method %q intent %q is not %s %s", seller.Clip(c.Method), seller.Clip(c.Intent), MethodSolana, IntentCharge)
	}
	ch, err := c.charge()
	if err != nil {
		return Choice{}, 0, ReasonInvalid, err.Error()
	}
	if want := NetworkName(w.Network); ch.Network != want {
		return Choice{}, 0, ReasonNetworkMismatch, fmt.Sprintf("network %q is not the wallet's network %q", seller.Clip(ch.Network), want)
	}
	if c.Expires == "" {
		return Choice{}, 0, ReasonExpired, "expires is missing: the seller would refuse the credential"
	}
	expires, err := parseTime(c.Expires)
	if err != nil {
		return Choice{}, 0, ReasonInvalid, fmt.Sprintf("expires %q: %v", seller.Clip(c.Expires), err)
	}
	if !expires.After(now) {
		return Choice{}, 0, ReasonExpired, fmt.Sprintf("the challenge expired at %s", c.Expires)
	}
	tokens := w.tokens()
	mint := resolveMint(ch.Currency, ch.Network)
	if mint == "" {
		return Choice{}, 0, ReasonAssetNotPayable, "currency SOL: the wallet pays in stablecoins only"
	}
	rank := slices.IndexFunc(tokens, func(t solana.Token) bool { return t.Mint.String() == mint })
	if rank < 0 {
		names := make([]string, len(tokens))
		for k, t := range tokens {
			names[k] = fmt.Sprintf("%s (%s)", t.Symbol, t.Mint)
		}
		return Choice{}, 0, ReasonAssetNotPayable, fmt.Sprintf("currency %q (mint %s) is not %s %s", seller.Clip(ch.Currency), seller.Clip(mint), w.Network, strings.Join(names, " or "))
	}
	tk := tokens[rank]
	if tk.Decimals != money.Decimals {
		return Choice{}, 0, ReasonAssetNotPayable, fmt.Sprintf("%s has %d decimals: amounts are read as 6-decimal stablecoins", tk.Symbol, tk.Decimals)
	}
	if !tk.Program.Equals(sol.TokenProgramID) && !tk.Program.Equals(sol.Token2022ProgramID) {
		return Choice{}, 0, ReasonAssetNotPayable, fmt.Sprintf("%s's program %s is neither SPL Token nor Token-2022", tk.Symbol, tk.Program)
	}
	program := ch.TokenProgram
	if program.IsZero() {
		program = defaultTokenProgram(ch.Currency, ch.Network)
	}
	if !program.Equals(tk.Program) {
		return Choice{}, 0, ReasonAssetNotPayable, fmt.Sprintf("the seller verifies the transfer under program %s, but %s is %s's", program, tk.Symbol, tk.Program)
	}
	if ch.Decimals != nil && *ch.Decimals != int(tk.Decimals) {
		return Choice{}, 0, ReasonAssetNotPayable, fmt.Sprintf("methodDetails.decimals %d is not %s's %d", *ch.Decimals, tk.Symbol, tk.Decimals)
	}
	var feePayer sol.PublicKey
	if ch.FeePayer {
		feePayer = ch.FeePayerKey
		if feePayer.Equals(w.Owner) {
			return Choice{}, 0, ReasonFeePayerIsWallet, "methodDetails.feePayerKey is the paying wallet: it would pay the fee and sign as fee payer"
		}
		if namedInPayment(feePayer, w.Owner, tk, ch) {
			return Choice{}, 0, ReasonFeePayerInvalid, "methodDetails.feePayerKey is an account or program of the payment itself"
		}
	}
	if ch.Recipient.Equals(w.Owner) {
		return Choice{}, 0, ReasonRecipientIsWallet, "recipient is the paying wallet itself"
	}
	for k, s := range ch.Splits {
		if s.Recipient.Equals(w.Owner) {
			return Choice{}, 0, ReasonRecipientIsWallet, fmt.Sprintf("splits[%d].recipient is the paying wallet itself", k)
		}
	}
	if ch.Amount > uint64(money.Quantity(money.MaxMicros)) {
		return Choice{}, 0, ReasonInvalid, fmt.Sprintf("amount %d is too large", ch.Amount)
	}
	amount := money.Quantity(ch.Amount)
	if max != nil && amount > *max {
		return Choice{}, 0, ReasonAmountOverMax, fmt.Sprintf("amount %s %s is over the cap of %s %s", units(amount, tk), tk.Symbol, units(*max, tk), tk.Symbol)
	}
	return Choice{
		Index: i, Challenge: c, Charge: *ch, Network: w.Network, Token: tk,
		Amount: amount, Primary: money.Quantity(ch.Primary()), Recipient: ch.Recipient,
		Splits: slices.Clone(ch.Splits), FeePayer: feePayer, Expires: expires, selected: true,
	}, rank, "", ""
}

// units writes an amount of tk's base units in whole tokens.
func units(n money.Quantity, tk solana.Token) string {
	return money.FormatUnits(int64(n), int(tk.Decimals))
}

// namedInPayment reports whether key is an account or program the
// payment's instructions name other than a payee (the programs, the
// mint, the wallet's and the payees' token accounts): as fee payer it
// would sign for one of them. BuildTransaction's check refuses it too;
// Select refuses it first, with a reason.
func namedInPayment(key, owner sol.PublicKey, tk solana.Token, ch *Charge) bool {
	for _, k := range []sol.PublicKey{tk.Mint, sol.TokenProgramID, sol.Token2022ProgramID, sol.ComputeBudget, sol.MemoProgramID,
		sol.SPLAssociatedTokenAccountProgramID, sol.SystemProgramID} {
		if key.Equals(k) {
			return true
		}
	}
	owners := []sol.PublicKey{owner, ch.Recipient}
	for _, s := range ch.Splits {
		owners = append(owners, s.Recipient)
	}
	for _, o := range owners {
		if ata, _, err := sol.FindAssociatedTokenAddressWithProgram(o, tk.Mint, tk.Program); err == nil && key.Equals(ata) {
			return true
		}
	}
	return false
}
