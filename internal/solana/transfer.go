package solana

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"

	sol "github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/memo"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// Transfer is a token payment from an agent wallet, which also pays the
// fees and the rent of the recipient's token account if it must be made,
// unless a fee payer does.
type Transfer struct {
	// Token is what moves; the zero value is the network's USDC.
	Token Token
	Owner sol.PublicKey
	// FeePayer, when set, pays the fees and the rent instead of Owner (fee
	// sponsorship): it signs first, so the transaction has two signatures.
	FeePayer sol.PublicKey
	To       sol.PublicKey
	// Amount is in micros (6 decimals, whatever the token's): the
	// transfer moves its Token.BaseUnits, which must be exact.
	Amount money.Quantity
	Memo   string
	// ComputeUnitPrice is the priority fee in micro-lamports per unit.
	ComputeUnitPrice uint64
	// RecipientAccountExists: the recipient's token account is known to
	// exist, so the transfer requests no compute for creating it (the
	// CreateIdempotent stays, and is then a no-op).
	RecipientAccountExists bool
	// Reference, when set, is added to the transfer as a read-only account
	// (the Solana Pay convention; the token program ignores it). It makes
	// two otherwise identical payments distinct transactions (ed25519 is
	// deterministic: same bytes, same signature, one lands) and lets the
	// payment be found with getSignaturesForAddress.
	Reference sol.PublicKey
}

// ReferenceFor derives a payment's reference key from its record id.
func ReferenceFor(id [16]byte) sol.PublicKey {
	h := sha256.Sum256(append([]byte("agentwallet/reference/v1/"), id[:]...))
	return sol.PublicKeyFromBytes(h[:])
}

// The compute a transfer needs, measured on the localnet (LiteSVM 1.5.0's
// program builds: SPL Token as p-token, the Associated Token Account
// program, Memo v2) with TestComputeUnits_TightForEachTransferShape:
//
//	recipient's account exists, no memo, its bump 255:  4,895 units
//	creating the recipient's account:                  +9,088
//	each bump below 255 (one more find_program_address): +1,500
//	a memo of n bytes:                                 +500 to +426+n
//
// The ATA program derives the recipient's address, trying bumps from 255
// down, so the bump (known when the transaction is built) prices it
// exactly. Networks still running the classic SPL Token program spend
// more (TransferChecked about 6,200 units instead of ~100, and about 7,000
// more to initialize an account; SIMD-0266): that allowance is added so a
// transfer never runs out of compute there, and 10% on top.
const (
	unitsTransfer       = 4_900
	unitsCreateAccount  = 9_100
	unitsPerBumpTry     = 1_500
	unitsMemo           = 550 // plus one per byte
	unitsClassicToken   = 6_200
	unitsClassicAccount = 7_000
)

// The compute a Token-2022 transfer needs, measured on the localnet
// (LiteSVM 1.5.0's Token-2022 build) with TestComputeUnits_TightForEachTransferShape
// on PYUSD's mint (its eight extensions, fee 0, hook unset):
//
//	recipient's account exists, no memo, its bump 255:  8,786 units
//	creating the recipient's account (187 bytes):     +15,123
//
// The bump and the memo cost what they cost for SPL Token. PYUSD's mint
// carries the extensions a transfer consults (a fee config, a hook, a
// permanent delegate, confidential transfers) and its new account has
// three of the four extensions a mint can require, so it prices the
// heavier end of what TokenTerms lets through (no hook program, no fee);
// 10% on top.
const (
	units2022Transfer      = 8_800
	units2022CreateAccount = 15_150
)

// TransferComputeUnits is the compute-unit limit a transfer requests: a
// tight bound for its shape (its token's program, creating the
// recipient's token account or not, its memo's length, the recipient
// account's bump). The priority fee is paid on this limit, not on what
// runs.
func TransferComputeUnits(network Network, t Transfer) (uint32, error) {
	tk := t.tokenOf(network)
	if err := tk.validate(); err != nil {
		return 0, err
	}
	_, bump, err := accountOf(t.To, tk)
	if err != nil {
		return 0, err
	}
	return transferUnits(tk, bump, t.RecipientAccountExists, len(t.Memo)), nil
}

func transferUnits(tk Token, bump uint8, exists bool, memoBytes int) uint32 {
	var u int
	if tk.Is2022() {
		u = units2022Transfer + unitsPerBumpTry*(255-int(bump))
		if !exists {
			u += units2022CreateAccount
		}
	} else {
		u = unitsTransfer + unitsClassicToken + unitsPerBumpTry*(255-int(bump))
		if !exists {
			u += unitsCreateAccount + unitsClassicAccount
		}
	}
	if memoBytes > 0 {
		u += unitsMemo + memoBytes
	}
	u += u / 10
	return uint32((u + 99) / 100 * 100)
}

// TransferFeeLamports is what the transfer's fee payer pays if it lands:
// the base fee and the priority fee on its compute-unit limit.
func TransferFeeLamports(units uint32, microLamports uint64) uint64 {
	return BaseFeeLamports + PriorityFee(microLamports, units)
}

// Signatures is how many signatures t's transaction carries: the owner's,
// and the fee payer's when another account pays.
func (t Transfer) Signatures() int {
	if t.FeePayer.IsZero() || t.FeePayer.Equals(t.Owner) {
		return 1
	}
	return 2
}

// FeeLamports is what t pays if it lands with this compute-unit limit and
// price: the base fee per signature and the priority fee.
func (t Transfer) FeeLamports(units uint32, microLamports uint64) uint64 {
	return BaseFeeLamports*uint64(t.Signatures()) + PriorityFee(microLamports, units)
}

// payer is who pays t's fees and rent.
func (t Transfer) payer() sol.PublicKey {
	if t.FeePayer.IsZero() {
		return t.Owner
	}
	return t.FeePayer
}

// TokenAccountRentLamports is the rent-exempt minimum of a token account
// (165 bytes), which its creator pays: (165 + 128 bytes of overhead) ×
// 3,480 lamports per byte-year × 2 years, the runtime's Rent defaults
// (solana-rent's DEFAULT_LAMPORTS_PER_BYTE_YEAR, DEFAULT_EXEMPTION_THRESHOLD
// and ACCOUNT_STORAGE_OVERHEAD; getMinimumBalanceForRentExemption(165)
// answers the same on devnet and mainnet). The sponsorship acceptance test
// checks it against the localnet's balances.
const TokenAccountRentLamports = (165 + 128) * 3_480 * 2

// WritableAccounts are the accounts a transfer writes (its fee payer, its
// source and destination token accounts): the ones whose fee market
// decides whether it lands.
func WritableAccounts(network Network, t Transfer) ([]sol.PublicKey, error) {
	tk := t.tokenOf(network)
	src, _, err := accountOf(t.Owner, tk)
	if err != nil {
		return nil, err
	}
	dst, _, err := accountOf(t.To, tk)
	if err != nil {
		return nil, err
	}
	return []sol.PublicKey{t.payer(), src, dst}, nil
}

// TokenAccountExists reports whether owner's USDC token account exists
// (at confirmed commitment), which makes its transfer cheaper in compute.
func (c *Client) TokenAccountExists(ctx context.Context, owner sol.PublicKey) (bool, error) {
	return c.TokenAccountExistsOf(ctx, owner, c.network.USDC())
}

// TokenAccountExistsOf reports whether owner's associated account of tk
// (under tk's program) exists, at confirmed commitment.
func (c *Client) TokenAccountExistsOf(ctx context.Context, owner sol.PublicKey, tk Token) (bool, error) {
	ata, _, err := accountOf(owner, tk)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetMultipleAccountsWithOpts(ctx, []sol.PublicKey{ata}, &rpc.GetMultipleAccountsOpts{
		Encoding: sol.EncodingBase64, Commitment: rpc.CommitmentConfirmed,
		DataSlice: &rpc.DataSlice{Offset: new(uint64(0)), Length: new(uint64(0))},
	})
	if err != nil {
		return false, c.rpcError("getMultipleAccounts", err)
	}
	if res == nil || len(res.Value) != 1 {
		return false, fmt.Errorf("%w: getMultipleAccounts: malformed answer", ErrRPC)
	}
	return res.Value[0] != nil && res.Value[0].Lamports > 0, nil
}

// BuildTransfer makes the unsigned transaction: ComputeBudget limit and
// price → CreateIdempotent of the recipient's token account → TransferChecked
// under the token's program → Memo (when given), fee payer the wallet or
// t.FeePayer. For a Token-2022 token the memo comes just before the
// transfer instead: a recipient account with MemoTransfer (required
// incoming memos) accepts only a transfer whose previous instruction is a
// memo.
func (c *Client) BuildTransfer(t Transfer, bh Blockhash) (*sol.Transaction, error) {
	return buildTransfer(c.network, t, bh)
}

// MaxTransactionSize is the most bytes a signed transaction may have
// (Solana's packet data size); a node refuses a larger one outright.
const MaxTransactionSize = 1232

// TooLargeError is a transfer whose signed transaction would be over
// MaxTransactionSize: its memo is too long in bytes.
type TooLargeError struct{ Size int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("memo too long: the transaction would be %d bytes, Solana allows %d", e.Size, MaxTransactionSize)
}

// CheckTransferSize answers a *TooLargeError when the USDC transfer's
// signed transaction with this memo would not fit a packet. Its size
// depends on nothing else (every key is 32 bytes, every amount and price
// 8, the signature 64), so it is known before any key or blockhash is at
// hand.
func CheckTransferSize(network Network, memo string) error {
	return CheckTokenTransferSize(network, network.USDC(), memo)
}

// CheckTokenTransferSize is CheckTransferSize for a transfer of tk.
func CheckTokenTransferSize(network Network, tk Token, memo string) error {
	probe := func(label string) sol.PublicKey {
		h := sha256.Sum256([]byte("agentwallet/size-probe/" + label))
		return sol.PublicKeyFromBytes(h[:])
	}
	// A whole unit: exact in any token's base units.
	tx, err := buildTransfer(network, Transfer{Token: tk, Owner: probe("owner"), To: probe("to"), Amount: money.Unit, Memo: memo, Reference: probe("reference")}, Blockhash{})
	if err != nil {
		return err
	}
	msg, err := tx.Message.MarshalBinary()
	if err != nil {
		return err
	}
	if n := signedSize(len(msg), int(tx.Message.Header.NumRequiredSignatures)); n > MaxTransactionSize {
		return &TooLargeError{Size: n}
	}
	return nil
}

// signedSize is the wire size of a transaction: the signature count
// (compact-u16, one byte below 128), the signatures and the message.
func signedSize(message, signatures int) int { return 1 + 64*signatures + message }

func buildTransfer(network Network, t Transfer, bh Blockhash) (*sol.Transaction, error) {
	if t.Amount <= 0 {
		return nil, errors.New("transfer amount must be positive")
	}
	tk := t.tokenOf(network)
	if err := tk.validate(); err != nil {
		return nil, err
	}
	src, _, err := accountOf(t.Owner, tk)
	if err != nil {
		return nil, err
	}
	dst, bump, err := accountOf(t.To, tk)
	if err != nil {
		return nil, err
	}
	units, err := tk.BaseUnits(t.Amount)
	if err != nil {
		return nil, err
	}
	transfer, err := transferCheckedInstruction(tk, units, src, dst, t.Owner)
	if err != nil {
		return nil, err
	}
	if !t.Reference.IsZero() {
		transfer.AccountValues = append(transfer.AccountValues, sol.Meta(t.Reference))
	}
	ixs := []sol.Instruction{
		computebudget.NewSetComputeUnitLimitInstruction(transferUnits(tk, bump, t.RecipientAccountExists, len(t.Memo))).Build(),
		computebudget.NewSetComputeUnitPriceInstruction(t.ComputeUnitPrice).Build(),
	}
	// A sponsored transfer to an account known to exist does not offer to
	// make it: its fee payer's budget counted no rent, and a recipient
	// that closed its account meanwhile would otherwise have the fee payer
	// pay rent uncounted (at a low enough bump the compute limit allows
	// it), again and again. The transfer fails on chain instead, its fee
	// counted. A wallet paying its own way keeps the offer.
	if !t.RecipientAccountExists || t.FeePayer.IsZero() {
		ixs = append(ixs, createIdempotentInstruction(t.payer(), t.To, tk))
	}
	var note sol.Instruction
	if t.Memo != "" {
		note = memo.NewMemoInstruction([]byte(t.Memo), t.Owner).Build()
	}
	if note != nil && tk.Is2022() {
		ixs = append(ixs, note)
		note = nil
	}
	ixs = append(ixs, transfer)
	if note != nil {
		ixs = append(ixs, note)
	}
	return sol.NewTransaction(ixs, bh.Hash, sol.TransactionPayer(t.payer()))
}

// Sign signs tx, asking sign for each required signature (the wallet's,
// and a fee payer's when the transfer has one; sign holds the keys and
// verifies what it returns), and returns the wire bytes and the
// transaction's id (its first signature: the fee payer's). A transaction
// over MaxTransactionSize is a *TooLargeError: no node would take it.
func Sign(ctx context.Context, tx *sol.Transaction, sign signer.SignFunc) ([]byte, sol.Signature, error) {
	message, err := tx.Message.MarshalBinary()
	if err != nil {
		return nil, sol.Signature{}, fmt.Errorf("sign: encode message: %w", err)
	}
	n := int(tx.Message.Header.NumRequiredSignatures)
	if n == 0 || n > len(tx.Message.AccountKeys) {
		return nil, sol.Signature{}, fmt.Errorf("sign: %d signers", n)
	}
	tx.Signatures = make([]sol.Signature, n)
	for i, k := range tx.Message.AccountKeys[:n] {
		sig, err := sign(ctx, ed25519.PublicKey(k[:]), message)
		if err != nil {
			return nil, sol.Signature{}, fmt.Errorf("sign: %w", err)
		}
		copy(tx.Signatures[i][:], sig)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		return nil, sol.Signature{}, err
	}
	if len(raw) > MaxTransactionSize {
		return nil, sol.Signature{}, &TooLargeError{Size: len(raw)}
	}
	return raw, tx.Signatures[0], nil
}
