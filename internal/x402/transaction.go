package x402

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	sol "github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// The exact scheme's limits (go/mechanisms/svm/constants.go and the
// @x402/svm facilitator): the official client requests 20,000 units at
// 1 µlamport; the facilitator refuses a price over 5 lamports per unit and
// may cap the units (400,000 is the scheme's ceiling elsewhere in the
// package). The seller's fee payer pays both, so we ask what the official
// client asks unless told otherwise.
const (
	DefaultComputeUnitLimit = 20_000
	DefaultComputeUnitPrice = 1 // micro-lamports per unit
	MaxComputeUnitLimit     = 400_000
	MaxComputeUnitPrice     = 5_000_000
	MaxMemoBytes            = 256
	nonceBytes              = 16
	maxTransactionBytes     = 1232 // Solana's packet limit
	transferCheckedTag      = 12   // SPL Token instruction index
)

// LighthouseProgramID is the wallet-protection program the facilitator
// tolerates after the transfer (Phantom, Solflare); we never add it.
var LighthouseProgramID = sol.MustPublicKeyFromBase58("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95")

// Errors of BuildTransaction; callers map them to 422 (the challenge asks
// for something we refuse) or 500 (ErrInvalidKey: our bug).
var (
	ErrFeePayerIsWallet    = errors.New("x402: the fee payer is the paying wallet")
	ErrUnknownTokenProgram = errors.New("x402: the asset's token program is neither SPL Token nor Token-2022")
	ErrShape               = errors.New("x402: the transaction is outside the exact scheme's shape")
	ErrInvalidKey          = errors.New("x402: invalid wallet key")
)

// BuildOptions tune the transaction; the zero value is the official
// client's transaction.
type BuildOptions struct {
	// TokenProgram owns the asset's mint; the zero value means the
	// program of the choice's token (SPL Token for USDC, Token-2022 for
	// PYUSD). The official client reads the mint's owner from the chain; a
	// caller that did so passes it, and it must be the token's: only SPL
	// Token and Token-2022 are accepted (ErrUnknownTokenProgram).
	TokenProgram sol.PublicKey
	// ComputeUnitLimit (zero: 20,000) and ComputeUnitPrice (zero: 1
	// µlamport) are bounded by MaxComputeUnitLimit and MaxComputeUnitPrice.
	ComputeUnitLimit uint32
	ComputeUnitPrice uint64
	// Nonce, when set, is the memo used when the seller sets none (at least
	// 16 bytes); zero means 16 random bytes, hex-encoded as the official
	// client does. Tests set it.
	Nonce string
}

// Transaction is the partially signed payment transaction.
type Transaction struct {
	// Wire is the serialized transaction (v0), the fee payer's signature
	// slot zero-filled; Base64 is what goes into payload.transaction.
	Wire   []byte
	Base64 string
	// OwnerSignature is the wallet's signature. The transaction's id is
	// the fee payer's signature, known only once the seller settles.
	OwnerSignature sol.Signature
	Blockhash      sol.Hash
	// Memo is the Memo instruction's text: extra.memo or the nonce. A
	// nonce makes the payment unique; a seller's memo does not (see the
	// compute limit), so the payment is found on chain by OwnerSignature.
	Memo string
	// SourceATA and DestinationATA are the wallet's and payTo's token
	// accounts for the asset.
	SourceATA      sol.PublicKey
	DestinationATA sol.PublicKey
}

// BuildTransaction builds the exact scheme's transaction for c and signs
// it with the wallet's key, partially: a v0 message whose fee payer is the
// seller's extra.feePayer, SetComputeUnitLimit, SetComputeUnitPrice, one
// TransferChecked of c.Amount of c.Token (under its program, with its
// decimals) from the wallet's token account to payTo's associated token
// account, authority the wallet, and a Memo. The
// recipient's account is not created (the scheme assumes it exists).
// Before returning, the wire bytes are decoded and checked against the
// facilitator's rules, so nothing outside that shape is ever signed.
//
// owner is the wallet's public key; sign signs with its key (it holds the
// key, and verifies what it returns), so no key passes through here.
func BuildTransaction(ctx context.Context, c Choice, owner sol.PublicKey, sign signer.SignFunc, blockhash sol.Hash, opts BuildOptions) (*Transaction, error) {
	if owner.IsZero() || sign == nil {
		return nil, ErrInvalidKey
	}
	if c.challenge == nil {
		return nil, fmt.Errorf("%w: the choice does not come from Select", ErrShape)
	}
	if blockhash.IsZero() {
		return nil, fmt.Errorf("%w: no recent blockhash", ErrShape)
	}
	if c.FeePayer.Equals(owner) {
		return nil, ErrFeePayerIsWallet
	}
	if c.FeePayer.IsZero() || c.PayTo.IsZero() || c.Asset.IsZero() {
		return nil, fmt.Errorf("%w: fee payer, payTo and asset are required", ErrShape)
	}
	if c.Amount <= 0 {
		return nil, fmt.Errorf("%w: amount must be positive", ErrShape)
	}
	tk := c.Token
	if tk.IsZero() {
		tk = c.Network.USDC()
	}
	if !tk.Mint.Equals(c.Asset) {
		return nil, fmt.Errorf("%w: the choice's token is not its asset", ErrShape)
	}
	program := cmp.Or(opts.TokenProgram, tk.Program)
	if !program.Equals(sol.TokenProgramID) && !program.Equals(sol.Token2022ProgramID) {
		return nil, ErrUnknownTokenProgram
	}
	if !program.Equals(tk.Program) {
		return nil, fmt.Errorf("%w: the asset's program is %s, not %s", ErrShape, tk.Program, program)
	}
	limit := cmp.Or(opts.ComputeUnitLimit, DefaultComputeUnitLimit)
	if c.Memo != "" && opts.ComputeUnitLimit == 0 {
		// The seller's memo is the same for every purchase: with the same
		// blockhash two purchases would be one transaction, signed alike
		// (one lands, two are counted). A random limit above the default
		// (at most 65,535 units more, ~0.07 lamport at 1 µlamport per
		// unit) tells them apart; the worker refuses a repeated
		// signature besides.
		var b [2]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("x402: compute limit: %w", err)
		}
		limit += uint32(binary.LittleEndian.Uint16(b[:]))
	}
	price := cmp.Or(opts.ComputeUnitPrice, DefaultComputeUnitPrice)
	if limit > MaxComputeUnitLimit || price > MaxComputeUnitPrice {
		return nil, fmt.Errorf("%w: compute budget over the scheme's caps", ErrShape)
	}
	memo := c.Memo
	if memo == "" {
		memo = opts.Nonce
		if memo == "" {
			var b [nonceBytes]byte
			if _, err := rand.Read(b[:]); err != nil {
				return nil, fmt.Errorf("x402: nonce: %w", err)
			}
			memo = hex.EncodeToString(b[:])
		}
		if len(memo) < nonceBytes {
			return nil, fmt.Errorf("%w: a nonce has at least %d bytes", ErrShape, nonceBytes)
		}
	}
	if len(memo) > MaxMemoBytes {
		return nil, fmt.Errorf("%w: memo over %d bytes", ErrShape, MaxMemoBytes)
	}

	source, _, err := sol.FindAssociatedTokenAddressWithProgram(owner, c.Asset, program)
	if err != nil {
		return nil, fmt.Errorf("x402: source account: %w", err)
	}
	dest, _, err := sol.FindAssociatedTokenAddressWithProgram(c.PayTo, c.Asset, program)
	if err != nil {
		return nil, fmt.Errorf("x402: destination account: %w", err)
	}
	// The token package's builder targets classic SPL Token; Token-2022
	// has the same TransferChecked layout, so its accounts and data are
	// reused under the mint's program.
	transfer := token.NewTransferCheckedInstruction(uint64(c.Amount), tk.Decimals, source, c.Asset, dest, owner, nil).Build()
	transferData, err := transfer.Data()
	if err != nil {
		return nil, fmt.Errorf("x402: transfer: %w", err)
	}
	tx, err := sol.NewTransaction([]sol.Instruction{
		computebudget.NewSetComputeUnitLimitInstruction(limit).Build(),
		computebudget.NewSetComputeUnitPriceInstruction(price).Build(),
		sol.NewInstruction(program, transfer.Accounts(), transferData),
		sol.NewInstruction(sol.MemoProgramID, sol.AccountMetaSlice{}, []byte(memo)),
	}, blockhash, sol.TransactionPayer(c.FeePayer), sol.TransactionMessageVersion(sol.MessageVersionV0))
	if err != nil {
		return nil, fmt.Errorf("x402: build: %w", err)
	}
	message, err := tx.Message.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("x402: encode message: %w", err)
	}
	// Slot 0 is the fee payer's, left zero for the facilitator; slot 1 the
	// wallet's (checkTransaction holds the order).
	tx.Signatures = make([]sol.Signature, tx.Message.Header.NumRequiredSignatures)
	if len(tx.Signatures) != 2 {
		return nil, fmt.Errorf("%w: %d signers", ErrShape, len(tx.Signatures))
	}
	sig, err := sign(ctx, ed25519.PublicKey(owner[:]), message)
	if err != nil {
		return nil, fmt.Errorf("x402: sign: %w", err)
	}
	copy(tx.Signatures[1][:], sig)
	wire, err := tx.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("x402: encode transaction: %w", err)
	}
	if len(wire) > maxTransactionBytes {
		return nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrShape, len(wire), maxTransactionBytes)
	}
	want := expected{
		owner: owner, feePayer: c.FeePayer, asset: c.Asset, program: program,
		source: source, dest: dest, amount: uint64(c.Amount), decimals: tk.Decimals, memo: memo,
		limit: limit, price: price, blockhash: blockhash,
	}
	if err := checkTransaction(wire, want); err != nil {
		return nil, err
	}
	return &Transaction{
		Wire: wire, Base64: base64.StdEncoding.EncodeToString(wire),
		OwnerSignature: tx.Signatures[1], Blockhash: blockhash, Memo: memo,
		SourceATA: source, DestinationATA: dest,
	}, nil
}

// expected is what checkTransaction holds a transaction to.
type expected struct {
	owner, feePayer, asset, program, source, dest sol.PublicKey
	amount                                        uint64
	decimals                                      uint8
	memo                                          string
	limit                                         uint32
	price                                         uint64
	blockhash                                     sol.Hash
}

// checkTransaction decodes wire bytes and holds them to the facilitator's
// rules (scheme_exact_svm.md, "Facilitator Verification Rules") and to what
// we meant to sign: v0, no lookup tables, two signers (fee payer first,
// then the wallet, whose signature verifies), the fee payer in no
// instruction's accounts, exactly four instructions in order, compute
// budget within the caps, one TransferChecked under the token's program
// of the amount and the token's decimals from the wallet's account to
// payTo's, and the memo.
func checkTransaction(wire []byte, w expected) error {
	tx, err := sol.TransactionFromBytes(wire)
	if err != nil {
		return fmt.Errorf("%w: does not decode: %w", ErrShape, err)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrShape}, a...)...)
	}
	m := tx.Message
	if m.GetVersion() != sol.MessageVersionV0 {
		return bad("not a v0 message")
	}
	if len(m.AddressTableLookups) != 0 {
		return bad("uses address lookup tables")
	}
	if m.RecentBlockhash != w.blockhash {
		return bad("wrong blockhash")
	}
	h := m.Header
	if h.NumRequiredSignatures != 2 || h.NumReadonlySignedAccounts != 1 || len(tx.Signatures) != 2 {
		return bad("signers are not the fee payer and the wallet")
	}
	keys := m.AccountKeys
	if len(keys) < 2 || !keys[0].Equals(w.feePayer) || !keys[1].Equals(w.owner) {
		return bad("signers are not the fee payer and the wallet")
	}
	if !tx.Signatures[0].IsZero() {
		return bad("the fee payer's signature slot is not empty")
	}
	message, err := m.MarshalBinary()
	if err != nil || !ed25519.Verify(w.owner[:], message, tx.Signatures[1][:]) {
		return bad("the wallet's signature does not verify")
	}
	for i, k := range keys[1:] {
		if k.Equals(w.feePayer) {
			return bad("the fee payer appears again as account %d", i+1)
		}
	}
	if len(m.Instructions) != 4 {
		return bad("%d instructions (want 4)", len(m.Instructions))
	}
	key := func(idx uint16) (sol.PublicKey, bool) {
		if int(idx) >= len(keys) {
			return sol.PublicKey{}, false
		}
		return keys[idx], true
	}
	for i, ix := range m.Instructions {
		for _, a := range ix.Accounts {
			k, ok := key(a)
			if !ok || k.Equals(w.feePayer) {
				return bad("instruction %d names the fee payer or an unknown account", i)
			}
		}
	}
	progs := []sol.PublicKey{sol.ComputeBudget, sol.ComputeBudget, w.program, sol.MemoProgramID}
	for i, ix := range m.Instructions {
		p, ok := key(ix.ProgramIDIndex)
		if !ok || !p.Equals(progs[i]) {
			return bad("instruction %d calls the wrong program", i)
		}
	}
	// Compute budget: tag 2 + u32 units, tag 3 + u64 micro-lamports.
	cl, cp := m.Instructions[0], m.Instructions[1]
	if len(cl.Data) != 5 || cl.Data[0] != 2 || len(cl.Accounts) != 0 ||
		binary.LittleEndian.Uint32(cl.Data[1:]) != w.limit || w.limit > MaxComputeUnitLimit {
		return bad("compute unit limit")
	}
	if len(cp.Data) != 9 || cp.Data[0] != 3 || len(cp.Accounts) != 0 ||
		binary.LittleEndian.Uint64(cp.Data[1:]) != w.price || w.price > MaxComputeUnitPrice {
		return bad("compute unit price")
	}
	// TransferChecked: tag 12, u64 amount, u8 decimals; accounts source,
	// mint, destination, authority.
	t := m.Instructions[2]
	if len(t.Data) != 10 || t.Data[0] != transferCheckedTag ||
		binary.LittleEndian.Uint64(t.Data[1:9]) != w.amount || t.Data[9] != w.decimals {
		return bad("transfer amount or decimals")
	}
	if len(t.Accounts) != 4 {
		return bad("transfer accounts")
	}
	for i, want := range []sol.PublicKey{w.source, w.asset, w.dest, w.owner} {
		if k, _ := key(t.Accounts[i]); !k.Equals(want) {
			return bad("transfer account %d", i)
		}
	}
	if !writable(m, t.Accounts[0]) || !writable(m, t.Accounts[2]) || writable(m, t.Accounts[1]) {
		return bad("transfer account access")
	}
	mo := m.Instructions[3]
	if len(mo.Accounts) != 0 || !bytes.Equal(mo.Data, []byte(w.memo)) {
		return bad("memo")
	}
	return nil
}

func writable(m sol.Message, idx uint16) bool {
	return m.IsWritableStatic(m.AccountKeys[idx])
}
