package mpp

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"

	sol "github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/agentwallet/agentwallet/internal/seller"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// The official server's caps on the compute budget (@solana/mpp 0.6,
// server/Charge.js), and ours.
const (
	MaxComputeUnitLimit     = 200_000
	MaxComputeUnitPrice     = 5_000_000 // micro-lamports per unit
	DefaultComputeUnitPrice = 1         // the official client's
	// NonceRange bounds the random part of the compute-unit limit that
	// tells payments of the same terms apart (see BuildTransaction).
	NonceRange          = 4096
	maxTransactionBytes = 1232 // Solana's packet limit
	transferCheckedTag  = 12   // SPL Token instruction index
	createIdempotentTag = 1    // Associated Token Account instruction index
)

// The compute a charge's transaction needs, measured on the localnet
// (LiteSVM 1.5.0: its SPL Token is the p-token build, its Token-2022 the
// classic one) by TestComputeUnits_CoverEachChargeShape:
//
//	SetComputeUnitPrice and SetComputeUnitLimit:           300 units
//	a USDC TransferChecked:                                105
//	a PYUSD (Token-2022, eight extensions) TransferChecked: 3,823
//	a memo of n bytes:                                     274 (n = 1) to 200 + n (n = 566)
//	creating a USDC account (CreateIdempotent), bump 255:  13,525
//	creating a PYUSD account (187 bytes), bump 255:        19,579
//	each bump below 255 (one more find_program_address):   +1,500
//
// A network still running the classic SPL Token program spends more
// (TransferChecked about 6,200 units instead of ~100, and about 7,000
// more to initialize an account; SIMD-0266): that allowance is added, and
// 10% on top. A split's account is priced as created (whether it exists
// is not known without a read; CreateIdempotent of an existing one costs
// about 9,000 less).
const (
	unitsBase            = 300
	unitsTransfer        = 110
	units2022Transfer    = 3_830
	unitsMemo            = 300 // plus one per byte
	unitsCreate          = 13_530
	units2022Create      = 19_580
	unitsPerBumpTry      = 1_500
	unitsClassicTransfer = 6_200
	unitsClassicCreate   = 7_000
)

// Errors of BuildTransaction; callers map them to 422 (the challenge asks
// for something we refuse) or 500 (ErrInvalidKey: our bug).
var (
	ErrFeePayerIsWallet    = errors.New("mpp: the fee payer is the paying wallet")
	ErrUnknownTokenProgram = errors.New("mpp: the token's program is neither SPL Token nor Token-2022")
	ErrShape               = errors.New("mpp: the transaction is outside the Solana charge's shape")
	ErrInvalidKey          = errors.New("mpp: invalid wallet key")
)

// BuildOptions tune the transaction; the zero value is the official
// client's transaction but for the compute-unit limit (see
// BuildTransaction).
type BuildOptions struct {
	// ComputeUnitLimit replaces the compute the payment needs (zero: the
	// measured estimate for its shape); the nonce is added to it.
	// ComputeUnitPrice is in micro-lamports per unit (zero: 1, the
	// official client's). They are bounded by MaxComputeUnitLimit and
	// MaxComputeUnitPrice.
	ComputeUnitLimit uint32
	ComputeUnitPrice uint64
	// Nonce, when set, is the random part of the limit, below NonceRange
	// (tests set it).
	Nonce *uint32
}

// Transaction is the signed payment transaction.
type Transaction struct {
	// Wire is the serialized transaction (v0); when the seller pays the
	// fee, its signature slot (the first) is zero-filled. Base64 is Wire
	// in standard base64, what goes into the credential.
	Wire   []byte
	Base64 string
	// OwnerSignature is the wallet's signature. When the wallet pays the
	// fee it is the transaction's id; when the seller pays, the id is the
	// seller's signature, known from the receipt once it lands.
	OwnerSignature sol.Signature
	Blockhash      sol.Hash
	// SourceATA and DestinationATA are the wallet's and the primary
	// recipient's token accounts for the token.
	SourceATA, DestinationATA sol.PublicKey
	// ComputeUnitLimit and ComputeUnitPrice are the compute budget the
	// transaction asks: its fee payer pays 5,000 lamports per signature
	// and limit × price / 10⁶ lamports.
	ComputeUnitLimit uint32
	ComputeUnitPrice uint64
}

// BuildTransaction builds the Solana charge's transaction for c exactly
// as the official client does and the official server verifies it
// (@solana/mpp 0.6), and signs it with the wallet's key: a v0 message
// without lookup tables, whose fee payer is the seller's c.FeePayer (the
// wallet then signs only as transfer authority and the first signature
// slot is left zero for the seller) or else the wallet; SetComputeUnitPrice
// then SetComputeUnitLimit; a TransferChecked of c.Primary of c.Token
// (under its program, with its decimals) from the wallet's token account
// to the recipient's associated token account, authority the wallet; a
// Memo of the charge's externalId when it has one; then for each split,
// in order, a CreateIdempotent of the split recipient's account only when
// the seller pays the fee and the split asks for it (paid by the seller's
// fee payer), its TransferChecked, and a Memo of its memo when it has one.
// The wallet never pays to create an account: the official client does
// when it pays the fee, but the official server does not require it, and
// rent the policy does not count would let a seller drain the wallet's SOL
// through fresh split addresses (it can close the accounts and take the
// rent back); a split whose account does not exist then fails on chain,
// nothing moved. The primary recipient's account is never created (the
// official server refuses it: it must exist).
//
// The official server allows no instruction beyond these (an extra memo
// is refused), so two purchases of the same terms under the same
// blockhash would be the same transaction, signed alike: the chain would
// run one while the service counted two payments. They are told apart by
// the compute-unit limit: the compute the shape needs (measured on the
// localnet, with a margin; the priority fee is paid on it) plus a random
// nonce below NonceRange (at 1 µlamport a unit, under 0.005 lamport),
// capped at MaxComputeUnitLimit.
//
// Before returning, the wire bytes are decoded and checked against the
// official server's rules and our own (checkTransaction), so nothing
// outside that shape is ever returned signed. owner is the wallet's
// public key; sign signs with its key (it holds the key, and verifies
// what it returns), so no key passes through here.
func BuildTransaction(ctx context.Context, c Choice, owner sol.PublicKey, sign signer.SignFunc, blockhash sol.Hash, opts BuildOptions) (*Transaction, error) {
	if owner.IsZero() || sign == nil {
		return nil, ErrInvalidKey
	}
	if !c.selected {
		return nil, fmt.Errorf("%w: the choice does not come from Select", ErrShape)
	}
	if blockhash.IsZero() {
		return nil, fmt.Errorf("%w: no recent blockhash", ErrShape)
	}
	if c.FeePayer.Equals(owner) {
		return nil, ErrFeePayerIsWallet
	}
	tk := c.Token
	if tk.IsZero() || c.Recipient.IsZero() {
		return nil, fmt.Errorf("%w: token and recipient are required", ErrShape)
	}
	if !tk.Program.Equals(sol.TokenProgramID) && !tk.Program.Equals(sol.Token2022ProgramID) {
		return nil, ErrUnknownTokenProgram
	}
	if err := checkTerms(c, owner); err != nil {
		return nil, err
	}
	need := opts.ComputeUnitLimit
	if need == 0 {
		need = ComputeUnits(c)
	}
	var nonce uint32
	if opts.Nonce != nil {
		nonce = *opts.Nonce
	} else {
		n, err := rand.Int(rand.Reader, big.NewInt(NonceRange))
		if err != nil {
			return nil, fmt.Errorf("mpp: nonce: %w", err)
		}
		nonce = uint32(n.Int64())
	}
	if need > MaxComputeUnitLimit || nonce >= NonceRange {
		return nil, fmt.Errorf("%w: compute unit limit %d or nonce %d over the caps", ErrShape, need, nonce)
	}
	limit := min(need+nonce, MaxComputeUnitLimit)
	price := cmp.Or(opts.ComputeUnitPrice, DefaultComputeUnitPrice)
	if price > MaxComputeUnitPrice {
		return nil, fmt.Errorf("%w: compute unit price %d over the cap of %d", ErrShape, price, MaxComputeUnitPrice)
	}
	sponsored := !c.FeePayer.IsZero()
	feePayer := owner
	if sponsored {
		feePayer = c.FeePayer
	}

	source, _, err := sol.FindAssociatedTokenAddressWithProgram(owner, tk.Mint, tk.Program)
	if err != nil {
		return nil, fmt.Errorf("mpp: source account: %w", err)
	}
	ixs := []sol.Instruction{
		computebudget.NewSetComputeUnitPriceInstruction(price).Build(),
		computebudget.NewSetComputeUnitLimitInstruction(limit).Build(),
	}
	dest, transfer, err := transferInstruction(tk, uint64(c.Primary), source, c.Recipient, owner)
	if err != nil {
		return nil, err
	}
	ixs = append(ixs, transfer)
	if m := c.Charge.ExternalID; m != "" {
		ixs = append(ixs, memoInstruction(m))
	}
	for _, s := range c.Splits {
		if sponsored && s.ATACreationRequired {
			ixs = append(ixs, createInstruction(feePayer, s.Recipient, tk))
		}
		_, transfer, err := transferInstruction(tk, s.Amount, source, s.Recipient, owner)
		if err != nil {
			return nil, err
		}
		ixs = append(ixs, transfer)
		if s.Memo != "" {
			ixs = append(ixs, memoInstruction(s.Memo))
		}
	}
	tx, err := sol.NewTransaction(ixs, blockhash, sol.TransactionPayer(feePayer), sol.TransactionMessageVersion(sol.MessageVersionV0))
	if err != nil {
		return nil, fmt.Errorf("mpp: build: %w", err)
	}
	message, err := tx.Message.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("mpp: encode message: %w", err)
	}
	// The seller's slot first when it pays the fee, left zero for it; the
	// wallet's then (checkTransaction holds the order).
	tx.Signatures = make([]sol.Signature, tx.Message.Header.NumRequiredSignatures)
	slot := 0
	if sponsored {
		slot = 1
	}
	if len(tx.Signatures) != slot+1 {
		return nil, fmt.Errorf("%w: %d signers", ErrShape, len(tx.Signatures))
	}
	sig, err := sign(ctx, ed25519.PublicKey(owner[:]), message)
	if err != nil {
		return nil, fmt.Errorf("mpp: sign: %w", err)
	}
	copy(tx.Signatures[slot][:], sig)
	wire, err := tx.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("mpp: encode transaction: %w", err)
	}
	if len(wire) > maxTransactionBytes {
		return nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrShape, len(wire), maxTransactionBytes)
	}
	if err := checkTransaction(wire, expectationOf(c, owner, limit, price, blockhash)); err != nil {
		return nil, err
	}
	return &Transaction{
		Wire: wire, Base64: base64.StdEncoding.EncodeToString(wire),
		OwnerSignature: tx.Signatures[slot], Blockhash: blockhash,
		SourceATA: source, DestinationATA: dest,
		ComputeUnitLimit: limit, ComputeUnitPrice: price,
	}, nil
}

// checkTerms holds a choice's terms to the charge's rules, whoever filled
// it in: a positive primary amount and splits that add up to the total,
// at most MaxSplits, memos within MaxMemoBytes, no payee that is the
// wallet.
func checkTerms(c Choice, owner sol.PublicKey) error {
	if c.Primary <= 0 || c.Amount <= 0 {
		return fmt.Errorf("%w: amounts must be positive", ErrShape)
	}
	if len(c.Splits) > MaxSplits {
		return fmt.Errorf("%w: %d splits (at most %d)", ErrShape, len(c.Splits), MaxSplits)
	}
	if len(c.Charge.ExternalID) > MaxMemoBytes {
		return fmt.Errorf("%w: externalId over %d bytes", ErrShape, MaxMemoBytes)
	}
	if c.Recipient.Equals(owner) {
		return fmt.Errorf("%w: the recipient is the wallet", ErrShape)
	}
	sum := uint64(c.Primary)
	for i, s := range c.Splits {
		if s.Amount == 0 || s.Recipient.IsZero() || s.Recipient.Equals(owner) || len(s.Memo) > MaxMemoBytes {
			return fmt.Errorf("%w: split %d", ErrShape, i)
		}
		if sum+s.Amount < sum {
			return fmt.Errorf("%w: the amounts overflow", ErrShape)
		}
		sum += s.Amount
	}
	if sum != uint64(c.Amount) {
		return fmt.Errorf("%w: the primary amount and the splits do not add up to the total", ErrShape)
	}
	return nil
}

// ComputeUnits is the compute c's transaction needs, the nonce aside: its
// shape's measured cost (see the units constants) with the classic SPL
// Token allowance and 10% on top, rounded up to a hundred.
func ComputeUnits(c Choice) uint32 {
	is2022 := c.Token.Is2022()
	transfer := func() int {
		if is2022 {
			return units2022Transfer
		}
		return unitsTransfer + unitsClassicTransfer
	}
	memo := func(m string) int {
		if m == "" {
			return 0
		}
		return unitsMemo + len(m)
	}
	u := unitsBase + transfer() + memo(c.Charge.ExternalID)
	sponsored := !c.FeePayer.IsZero()
	for _, s := range c.Splits {
		u += transfer() + memo(s.Memo)
		if !sponsored || !s.ATACreationRequired {
			continue
		}
		_, bump, _ := sol.FindAssociatedTokenAddressWithProgram(s.Recipient, c.Token.Mint, c.Token.Program)
		u += unitsPerBumpTry * (255 - int(bump))
		if is2022 {
			u += units2022Create
		} else {
			u += unitsCreate + unitsClassicCreate
		}
	}
	u += u / 10
	return uint32(min((u+99)/100*100, MaxComputeUnitLimit))
}

// transferInstruction is a TransferChecked of amount of tk from source to
// to's associated account, authority owner, and that account. SPL Token
// and Token-2022 share its layout (tag 12, amount, decimals; source,
// mint, destination, authority): solana-go's SPL Token builder makes it,
// re-targeted at tk's program.
func transferInstruction(tk solana.Token, amount uint64, source, to, owner sol.PublicKey) (sol.PublicKey, sol.Instruction, error) {
	dest, _, err := sol.FindAssociatedTokenAddressWithProgram(to, tk.Mint, tk.Program)
	if err != nil {
		return sol.PublicKey{}, nil, fmt.Errorf("mpp: destination account: %w", err)
	}
	ix := token.NewTransferCheckedInstruction(amount, tk.Decimals, source, tk.Mint, dest, owner, nil).Build()
	data, err := ix.Data()
	if err != nil {
		return sol.PublicKey{}, nil, fmt.Errorf("mpp: transfer: %w", err)
	}
	return dest, sol.NewInstruction(tk.Program, ix.Accounts(), data), nil
}

// createInstruction is the Associated Token Account program's
// CreateIdempotent of owner's account of tk, paid by payer, in the
// official client's six-account layout.
func createInstruction(payer, owner sol.PublicKey, tk solana.Token) sol.Instruction {
	ata, _, _ := sol.FindAssociatedTokenAddressWithProgram(owner, tk.Mint, tk.Program)
	return sol.NewInstruction(sol.SPLAssociatedTokenAccountProgramID, sol.AccountMetaSlice{
		sol.Meta(payer).WRITE().SIGNER(),
		sol.Meta(ata).WRITE(),
		sol.Meta(owner),
		sol.Meta(tk.Mint),
		sol.Meta(sol.SystemProgramID),
		sol.Meta(tk.Program),
	}, []byte{createIdempotentTag})
}

func memoInstruction(text string) sol.Instruction {
	return sol.NewInstruction(sol.MemoProgramID, sol.AccountMetaSlice{}, []byte(text))
}

// expected is what checkTransaction holds a transaction to.
type expected struct {
	owner     sol.PublicKey
	feePayer  sol.PublicKey // zero: the wallet pays
	mint      sol.PublicKey
	program   sol.PublicKey
	decimals  uint8
	recipient sol.PublicKey
	primary   uint64
	memo      string // externalId
	splits    []Split
	limit     uint32
	price     uint64
	blockhash sol.Hash
}

func expectationOf(c Choice, owner sol.PublicKey, limit uint32, price uint64, blockhash sol.Hash) expected {
	return expected{
		owner: owner, feePayer: c.FeePayer, mint: c.Token.Mint, program: c.Token.Program, decimals: c.Token.Decimals,
		recipient: c.Recipient, primary: uint64(c.Primary), memo: c.Charge.ExternalID, splits: c.Splits,
		limit: limit, price: price, blockhash: blockhash,
	}
}

// checkTransaction decodes wire bytes and holds them to the official
// server's rules (@solana/mpp 0.6 verifyBase64TransactionPreBroadcast,
// mirrored below: the fee payer, a matching TransferChecked for the
// primary amount and each split, the memos, and the allowlist over every
// instruction) and to what we meant to sign: v0 with our blockhash, the
// signers (the seller's fee payer with an empty slot, then the wallet; or
// the wallet alone) with the wallet's signature verifying, the compute
// budget pair first with our limit and price, transfers from the wallet's
// account by the wallet, and no instruction beyond the official client's.
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
	keys := m.AccountKeys
	key := func(idx uint16) (sol.PublicKey, error) {
		if int(idx) >= len(keys) {
			return sol.PublicKey{}, bad("account index %d out of range", idx)
		}
		return keys[idx], nil
	}
	sponsored := !w.feePayer.IsZero()
	h := m.Header
	message, err := m.MarshalBinary()
	if err != nil {
		return bad("the message does not encode")
	}
	if sponsored {
		if h.NumRequiredSignatures != 2 || h.NumReadonlySignedAccounts != 1 || len(tx.Signatures) != 2 || len(keys) < 2 ||
			!keys[0].Equals(w.feePayer) || !keys[1].Equals(w.owner) {
			return bad("signers are not the seller's fee payer and the wallet")
		}
		if !tx.Signatures[0].IsZero() {
			return bad("the fee payer's signature slot is not empty")
		}
		if !ed25519.Verify(w.owner[:], message, tx.Signatures[1][:]) {
			return bad("the wallet's signature does not verify")
		}
	} else {
		if h.NumRequiredSignatures != 1 || h.NumReadonlySignedAccounts != 0 || len(tx.Signatures) != 1 || len(keys) < 1 || !keys[0].Equals(w.owner) {
			return bad("the wallet is not the only signer and fee payer")
		}
		if !ed25519.Verify(w.owner[:], message, tx.Signatures[0][:]) {
			return bad("the wallet's signature does not verify")
		}
	}
	feePayer := keys[0]
	ata := func(owner sol.PublicKey) sol.PublicKey {
		a, _, _ := sol.FindAssociatedTokenAddressWithProgram(owner, w.mint, w.program)
		return a
	}
	source := ata(w.owner)

	// The official server: a TransferChecked for the primary amount, then
	// for each split, each the first not yet matched that fits.
	matched := map[int]bool{}
	matchTransfer := func(recipient sol.PublicKey, amount uint64) error {
		dest := ata(recipient)
		for i, ix := range m.Instructions {
			if matched[i] {
				continue
			}
			p, err := key(ix.ProgramIDIndex)
			if err != nil {
				return err
			}
			if !p.Equals(w.program) || len(ix.Data) < 10 || ix.Data[0] != transferCheckedTag ||
				binary.LittleEndian.Uint64(ix.Data[1:9]) != amount || ix.Data[9] != w.decimals || len(ix.Accounts) < 4 {
				continue
			}
			var acct [4]sol.PublicKey
			for k := range acct {
				if acct[k], err = key(ix.Accounts[k]); err != nil {
					return err
				}
			}
			if !acct[1].Equals(w.mint) {
				continue
			}
			if sponsored && (acct[3].Equals(w.feePayer) || acct[0].Equals(ata(w.feePayer))) {
				return bad("the fee payer authorizes or funds a transfer")
			}
			if !acct[2].Equals(dest) {
				continue
			}
			// Ours: exactly the transfer we meant.
			if len(ix.Data) != 10 || len(ix.Accounts) != 4 || !acct[0].Equals(source) || !acct[3].Equals(w.owner) ||
				!m.IsWritableStatic(acct[0]) || !m.IsWritableStatic(acct[2]) || m.IsWritableStatic(acct[1]) {
				return bad("transfer %d is not from the wallet's account by the wallet", i)
			}
			matched[i] = true
			return nil
		}
		return bad("no TransferChecked of %d to %s", amount, recipient)
	}
	if err := matchTransfer(w.recipient, w.primary); err != nil {
		return err
	}
	for _, s := range w.splits {
		if err := matchTransfer(s.Recipient, s.Amount); err != nil {
			return err
		}
	}
	memos := []string{}
	if w.memo != "" {
		memos = append(memos, w.memo)
	}
	for _, s := range w.splits {
		if s.Memo != "" {
			memos = append(memos, s.Memo)
		}
	}
	for _, text := range memos {
		found := false
		for i, ix := range m.Instructions {
			p, err := key(ix.ProgramIDIndex)
			if err != nil {
				return err
			}
			if !matched[i] && p.Equals(sol.MemoProgramID) && bytes.Equal(ix.Data, []byte(text)) {
				if len(text) > MaxMemoBytes || len(ix.Accounts) != 0 {
					return bad("memo over %d bytes, or naming accounts", MaxMemoBytes)
				}
				matched[i], found = true, true
				break
			}
		}
		if !found {
			return bad("no memo %q", seller.Clip(text))
		}
	}

	// The official server's allowlist over every instruction.
	allowed, required := map[sol.PublicKey]bool{}, map[sol.PublicKey]bool{}
	for _, s := range w.splits {
		if sponsored && s.ATACreationRequired {
			required[s.Recipient] = true
			allowed[s.Recipient] = true
		}
	}
	created := map[sol.PublicKey]bool{}
	creates := 0
	for i, ix := range m.Instructions {
		p, err := key(ix.ProgramIDIndex)
		if err != nil {
			return err
		}
		switch {
		case p.Equals(sol.ComputeBudget):
			if len(ix.Accounts) != 0 {
				return bad("a compute budget instruction names accounts")
			}
			switch {
			case len(ix.Data) == 5 && ix.Data[0] == 2:
				if u := binary.LittleEndian.Uint32(ix.Data[1:]); u > MaxComputeUnitLimit || u != w.limit || i != 1 {
					return bad("compute unit limit %d at %d", u, i)
				}
			case len(ix.Data) == 9 && ix.Data[0] == 3:
				if p := binary.LittleEndian.Uint64(ix.Data[1:]); p > MaxComputeUnitPrice || p != w.price || i != 0 {
					return bad("compute unit price %d at %d", p, i)
				}
			default:
				return bad("an unsupported compute budget instruction")
			}
		case p.Equals(sol.MemoProgramID), p.Equals(sol.SystemProgramID), p.Equals(sol.TokenProgramID), p.Equals(sol.Token2022ProgramID):
			if !matched[i] {
				return bad("instruction %d (%s) is none of the payment's", i, p)
			}
		case p.Equals(sol.SPLAssociatedTokenAccountProgramID):
			if len(ix.Data) != 1 || ix.Data[0] != createIdempotentTag || len(ix.Accounts) != 6 {
				return bad("instruction %d is not a CreateIdempotent", i)
			}
			var acct [6]sol.PublicKey
			for k := range acct {
				if acct[k], err = key(ix.Accounts[k]); err != nil {
					return err
				}
			}
			switch {
			case !acct[0].Equals(feePayer):
				return bad("an account's creation is not paid by the fee payer")
			case !acct[3].Equals(w.mint) || !acct[4].Equals(sol.SystemProgramID) || !acct[5].Equals(w.program):
				return bad("an account's creation names another mint or program")
			case !acct[1].Equals(ata(acct[2])):
				return bad("an account's creation is not of its owner's associated account")
			case !allowed[acct[2]]:
				return bad("the creation of %s's account is not the charge's", acct[2])
			}
			created[acct[2]] = true
			creates++
		default:
			return bad("instruction %d calls program %s", i, p)
		}
	}
	for owner := range required {
		if !created[owner] {
			return bad("no creation of split recipient %s's account", owner)
		}
	}
	// Ours: nothing beyond the official client's instructions.
	want := 2 + len(matched)
	wantCreates := 0
	for _, s := range w.splits {
		if sponsored && s.ATACreationRequired {
			wantCreates++
		}
	}
	if creates != wantCreates || len(m.Instructions) != want+wantCreates {
		return bad("%d instructions (want %d)", len(m.Instructions), want+wantCreates)
	}
	// The seller's fee payer signs for nothing of the payment's but an
	// account's creation (its payer, or its owner when a split pays it).
	if sponsored {
		for i, ix := range m.Instructions {
			for k, a := range ix.Accounts {
				if keys[a].Equals(w.feePayer) && !(len(ix.Accounts) == 6 && (k == 0 || k == 2)) {
					return bad("instruction %d names the fee payer", i)
				}
			}
		}
	}
	return nil
}
