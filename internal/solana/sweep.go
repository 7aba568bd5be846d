package solana

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	sol "github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/memo"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/rpc"
)

// RentExemptEmptyLamports is the rent-exempt minimum of an account without
// data (128 bytes of overhead × 3,480 lamports per byte-year × 2 years, as
// TokenAccountRentLamports): a transfer of fewer lamports to an address
// that holds none fails on chain.
const RentExemptEmptyLamports = 128 * 3_480 * 2

// HeldAccount is one token account an owner holds a token in.
type HeldAccount struct {
	Address sol.PublicKey
	Units   uint64
	// Lamports are the account's rent: what an account of this mint
	// costs to open.
	Lamports uint64
	// Frozen: the mint's freeze authority froze it; nothing moves out.
	Frozen bool
}

// HeldAccounts lists every token account of tk whose owner is owner
// (getTokenAccountsByOwner: the associated one and any other), each
// checked to be of tk's program and mint and owned by owner.
func (c *Client) HeldAccounts(ctx context.Context, owner sol.PublicKey, tk Token) ([]HeldAccount, error) {
	if err := tk.validate(); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	mint := tk.Mint
	res, err := c.rpc.GetTokenAccountsByOwner(cctx, owner, &rpc.GetTokenAccountsConfig{Mint: &mint},
		&rpc.GetTokenAccountsOpts{Commitment: rpc.CommitmentConfirmed, Encoding: sol.EncodingBase64})
	if err != nil {
		return nil, c.rpcError("getTokenAccountsByOwner", err)
	}
	if res == nil {
		return nil, fmt.Errorf("%w: getTokenAccountsByOwner: malformed answer", ErrRPC)
	}
	out := make([]HeldAccount, 0, len(res.Value))
	for _, a := range res.Value {
		if a == nil {
			return nil, fmt.Errorf("%w: getTokenAccountsByOwner: malformed answer", ErrRPC)
		}
		h, err := heldAccount(&a.Account, owner, tk)
		if err != nil {
			return nil, fmt.Errorf("%w: %s account %s: %w", ErrRPC, tk.name(), a.Pubkey, err)
		}
		h.Address = a.Pubkey
		out = append(out, h)
	}
	return out, nil
}

// HeldAccountAt reads the token account addr of tk, owned by owner; a
// missing account holds nothing.
func (c *Client) HeldAccountAt(ctx context.Context, addr, owner sol.PublicKey, tk Token) (HeldAccount, error) {
	h := HeldAccount{Address: addr}
	var bad error
	err := c.eachAccount(ctx, []sol.PublicKey{addr}, func(a *rpc.Account, _ uint64) {
		if a == nil {
			return
		}
		got, err := heldAccount(a, owner, tk)
		got.Address = addr
		h, bad = got, err
	})
	if err != nil {
		return HeldAccount{}, err
	}
	if bad != nil {
		return HeldAccount{}, fmt.Errorf("%w: %s account %s: %w", ErrRPC, tk.name(), addr, bad)
	}
	return h, nil
}

func heldAccount(a *rpc.Account, owner sol.PublicKey, tk Token) (HeldAccount, error) {
	if !a.Owner.Equals(tk.Program) {
		return HeldAccount{}, fmt.Errorf("owned by %s, not %s", a.Owner, tk.Program)
	}
	data := a.Data.GetBinary()
	if len(data) <= tokenAccountStateOffset {
		return HeldAccount{}, fmt.Errorf("token account data is %d bytes", len(data))
	}
	if !sol.PublicKeyFromBytes(data[0:32]).Equals(tk.Mint) || !sol.PublicKeyFromBytes(data[32:64]).Equals(owner) {
		return HeldAccount{}, errors.New("token account has another mint or owner")
	}
	return HeldAccount{Units: binary.LittleEndian.Uint64(data[64:72]), Lamports: a.Lamports,
		Frozen: data[tokenAccountStateOffset] == 2}, nil
}

// AssociatedAccount is owner's associated token account of tk, under
// tk's program.
func AssociatedAccount(owner sol.PublicKey, tk Token) (sol.PublicKey, error) {
	a, _, err := accountOf(owner, tk)
	return a, err
}

// Sweep moves Units of Token out of one token account of Owner (From,
// which need not be the associated one) to To's associated account,
// made if missing, FeePayer (or Owner) paying the fee and its rent.
type Sweep struct {
	Token    Token
	Owner    sol.PublicKey
	FeePayer sol.PublicKey
	From     sol.PublicKey
	To       sol.PublicKey
	Units    uint64
	Memo     string
}

// BuildSweep makes the unsigned transaction of s as BuildTransfer makes a
// transfer's (compute budget, CreateIdempotent of the recipient's account
// under the token's program, TransferChecked with the mint's decimals, the
// memo before it for Token-2022), from s.From. The compute limit always
// counts creating the recipient's account: a sweep pays no priority fee,
// so the margin costs nothing.
func BuildSweep(s Sweep, bh Blockhash) (*sol.Transaction, error) {
	if s.Units == 0 {
		return nil, errors.New("sweep amount must be positive")
	}
	if err := s.Token.validate(); err != nil {
		return nil, err
	}
	dst, bump, err := accountOf(s.To, s.Token)
	if err != nil {
		return nil, err
	}
	transfer, err := transferCheckedInstruction(s.Token, s.Units, s.From, dst, s.Owner)
	if err != nil {
		return nil, err
	}
	payer := s.FeePayer
	if payer.IsZero() {
		payer = s.Owner
	}
	ixs := []sol.Instruction{
		computebudget.NewSetComputeUnitLimitInstruction(transferUnits(s.Token, bump, false, len(s.Memo))).Build(),
		createIdempotentInstruction(payer, s.To, s.Token),
	}
	var note sol.Instruction
	if s.Memo != "" {
		note = memo.NewMemoInstruction([]byte(s.Memo), s.Owner).Build()
	}
	if note != nil && s.Token.Is2022() {
		ixs = append(ixs, note)
		note = nil
	}
	ixs = append(ixs, transfer)
	if note != nil {
		ixs = append(ixs, note)
	}
	return sol.NewTransaction(ixs, bh.Hash, sol.TransactionPayer(payer))
}

// BuildSOLSweep makes the unsigned transaction moving lamports from owner
// to to (a System transfer, then the memo), feePayer (or owner) paying
// the fee: BaseFeeLamports a signature, no priority fee.
func BuildSOLSweep(owner, feePayer, to sol.PublicKey, lamports uint64, note string, bh Blockhash) (*sol.Transaction, error) {
	if lamports == 0 {
		return nil, errors.New("sweep amount must be positive")
	}
	payer := feePayer
	if payer.IsZero() {
		payer = owner
	}
	ixs := []sol.Instruction{system.NewTransferInstruction(lamports, owner, to).Build()}
	if note != "" {
		ixs = append(ixs, memo.NewMemoInstruction([]byte(note), owner).Build())
	}
	return sol.NewTransaction(ixs, bh.Hash, sol.TransactionPayer(payer))
}
