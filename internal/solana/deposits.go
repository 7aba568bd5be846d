package solana

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
)

// MaxAccountsPerCall is how many accounts one getMultipleAccounts reads.
const MaxAccountsPerCall = 100

// AccountState is what the deposit watcher reads of an account: its
// lamports, and for a token account its mint, owner and amount.
type AccountState struct {
	Exists   bool
	Lamports uint64
	// Slot is the slot the node read the account at (its answer's
	// context slot).
	Slot uint64
	// Token: a token account (of the SPL Token or the Token-2022
	// program, named by Program) whose Mint, Owner and Amount follow.
	Token   bool
	Program sol.PublicKey
	Mint    sol.PublicKey
	Owner  sol.PublicKey
	Amount uint64
}

// Accounts reads addrs, MaxAccountsPerCall a call, all at one commitment
// (confirmed). A missing account is not Exists.
func (c *Client) Accounts(ctx context.Context, addrs []sol.PublicKey) ([]AccountState, error) {
	out := make([]AccountState, 0, len(addrs))
	err := c.eachAccount(ctx, addrs, func(a *rpc.Account, slot uint64) {
		st := accountState(a)
		st.Slot = slot
		out = append(out, st)
	})
	return out, err
}

// eachAccount reads addrs, MaxAccountsPerCall a call, at confirmed
// commitment, and hands each account (nil when missing), in order, to
// do with the slot its answer was read at.
func (c *Client) eachAccount(ctx context.Context, addrs []sol.PublicKey, do func(a *rpc.Account, slot uint64)) error {
	for start := 0; start < len(addrs); start += MaxAccountsPerCall {
		batch := addrs[start:min(start+MaxAccountsPerCall, len(addrs))]
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		res, err := c.rpc.GetMultipleAccountsWithOpts(cctx, batch, &rpc.GetMultipleAccountsOpts{
			Encoding: sol.EncodingBase64, Commitment: rpc.CommitmentConfirmed,
		})
		cancel()
		if err != nil {
			return c.rpcError("getMultipleAccounts", err)
		}
		if res == nil || len(res.Value) != len(batch) {
			return fmt.Errorf("%w: getMultipleAccounts: malformed answer", ErrRPC)
		}
		for _, a := range res.Value {
			do(a, res.Context.Slot)
		}
	}
	return nil
}

func accountState(a *rpc.Account) AccountState {
	if a == nil {
		return AccountState{}
	}
	s := AccountState{Exists: true, Lamports: a.Lamports}
	if data := a.Data.GetBinary(); isTokenAccount(a.Owner, data) {
		s.Token = true
		s.Program = a.Owner
		s.Mint = sol.PublicKeyFromBytes(data[0:32])
		s.Owner = sol.PublicKeyFromBytes(data[32:64])
		s.Amount = binary.LittleEndian.Uint64(data[64:72])
	}
	return s
}

// isTokenAccount tells whether data, owned by program, is a token
// account (not a mint) of SPL Token or Token-2022, whose first 165 bytes
// have the same layout under both programs: a Token-2022 account with
// extensions has its account type (2) right after them, a mint with
// extensions 1.
func isTokenAccount(program sol.PublicKey, data []byte) bool {
	switch {
	case program.Equals(sol.TokenProgramID):
		return len(data) >= 72
	case program.Equals(sol.Token2022ProgramID):
		return len(data) == tokenAccountSize || len(data) > tokenAccountSize && data[tokenAccountSize] == 2
	}
	return false
}

// SignatureInfo is one transaction that touched an account.
type SignatureInfo struct {
	Signature sol.Signature
	Slot      uint64
	Failed    bool
}

// MaxSignaturesPerCall is the most getSignaturesForAddress answers.
const MaxSignaturesPerCall = 1000

// SignaturesSince lists the confirmed transactions that touched account
// after the transaction until (zero: from its first), oldest first, at
// most limit of them (the oldest: a caller resumes from the last). A
// minSlot above zero asks for a node whose history has reached that slot
// (minContextSlot): the list then holds every transaction up to it.
func (c *Client) SignaturesSince(ctx context.Context, account sol.PublicKey, until sol.Signature, limit int, minSlot uint64) ([]SignatureInfo, error) {
	var atLeast *uint64
	if minSlot > 0 {
		atLeast = &minSlot
	}
	var newestFirst []SignatureInfo
	var before sol.Signature
	for {
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		n := MaxSignaturesPerCall
		res, err := c.rpc.GetSignaturesForAddressWithOpts(cctx, account, &rpc.GetSignaturesForAddressOpts{
			Limit: &n, Before: before, Until: until, Commitment: rpc.CommitmentConfirmed, MinContextSlot: atLeast,
		})
		cancel()
		if err != nil {
			return nil, c.rpcError("getSignaturesForAddress", err)
		}
		for _, r := range res {
			newestFirst = append(newestFirst, SignatureInfo{Signature: r.Signature, Slot: r.Slot, Failed: r.Err != nil})
		}
		if len(res) < MaxSignaturesPerCall {
			break
		}
		before = res[len(res)-1].Signature
	}
	var sigs []SignatureInfo
	for i := len(newestFirst) - 1; i >= 0 && len(sigs) < limit; i-- {
		sigs = append(sigs, newestFirst[i])
	}
	return sigs, nil
}

// Movement is what one confirmed transaction did to balances: lamports by
// account, and token amounts by (owner, mint), each after minus before.
type Movement struct {
	Slot      uint64
	BlockTime time.Time
	// Failed: the transaction failed on chain; it moved nothing but its
	// fee.
	Failed   bool
	FeePayer sol.PublicKey
	// Signatures are the transaction's signatures, the fee payer's first;
	// Signers the keys that made them, in the same order.
	Signatures []sol.Signature
	Signers    []sol.PublicKey
	Lamports   map[sol.PublicKey]int64
	Tokens     map[TokenHolding]int64
	// After is each account's balance after the transaction: lamports of
	// every account it names, the amount of every token account (zero for
	// one it closed).
	After map[sol.PublicKey]int64
	// TokenAfter is the amount of every token account it names after it.
	TokenAfter map[sol.PublicKey]int64
	// TokenBefore is the amount of every token account it names before
	// it (absent: the account did not exist).
	TokenBefore map[sol.PublicKey]int64
	// HolderBefore and HolderAfter are each token account's owner and
	// mint before and after the transaction (absent when it did not
	// exist then): an account closed and made again at the same address
	// may hold another mint, or belong to another owner.
	HolderBefore, HolderAfter map[sol.PublicKey]TokenHolding
}

// TokenHolding is an owner's holding of a mint, across its token accounts.
type TokenHolding struct {
	Owner, Mint sol.PublicKey
}

// Movement reads transaction sig's balance changes from its metadata,
// which shows transfers made inside other programs (CPI) as well as
// top-level ones. A transaction the node does not know is ErrRPC.
func (c *Client) Movement(ctx context.Context, sig sol.Signature) (Movement, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	v := uint64(0)
	res, err := c.rpc.GetTransaction(cctx, sig, &rpc.GetTransactionOpts{
		Encoding: sol.EncodingBase64, Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &v,
	})
	if err != nil {
		return Movement{}, c.rpcError("getTransaction", err)
	}
	if res == nil || res.Meta == nil || res.Transaction == nil {
		return Movement{}, fmt.Errorf("%w: getTransaction %s: no transaction or metadata", ErrRPC, sig)
	}
	tx, err := res.Transaction.GetTransaction()
	if err != nil {
		return Movement{}, fmt.Errorf("%w: getTransaction %s: %v", ErrRPC, sig, err)
	}
	keys := append(sol.PublicKeySlice{}, tx.Message.AccountKeys...)
	keys = append(keys, res.Meta.LoadedAddresses.Writable...)
	keys = append(keys, res.Meta.LoadedAddresses.ReadOnly...)
	m := Movement{Slot: res.Slot, Failed: res.Meta.Err != nil,
		Lamports: map[sol.PublicKey]int64{}, Tokens: map[TokenHolding]int64{},
		After: map[sol.PublicKey]int64{}, TokenAfter: map[sol.PublicKey]int64{}, TokenBefore: map[sol.PublicKey]int64{},
		HolderBefore: map[sol.PublicKey]TokenHolding{}, HolderAfter: map[sol.PublicKey]TokenHolding{}}
	if res.BlockTime != nil {
		m.BlockTime = res.BlockTime.Time().UTC()
	}
	if len(keys) > 0 {
		m.FeePayer = keys[0]
	}
	m.Signatures = tx.Signatures
	for i := 0; i < int(tx.Message.Header.NumRequiredSignatures) && i < len(tx.Message.AccountKeys); i++ {
		m.Signers = append(m.Signers, tx.Message.AccountKeys[i])
	}
	for i, k := range keys {
		if i < len(res.Meta.PreBalances) && i < len(res.Meta.PostBalances) {
			if d := int64(res.Meta.PostBalances[i]) - int64(res.Meta.PreBalances[i]); d != 0 {
				m.Lamports[k] += d
			}
			m.After[k] = int64(res.Meta.PostBalances[i])
		}
	}
	for _, b := range res.Meta.PreTokenBalances {
		if int(b.AccountIndex) < len(keys) {
			m.TokenAfter[keys[b.AccountIndex]] = 0 // closed, unless it has a post balance
		}
	}
	for _, b := range res.Meta.PreTokenBalances {
		if b.Owner != nil && b.UiTokenAmount != nil {
			m.Tokens[TokenHolding{*b.Owner, b.Mint}] -= tokenUnits(b.UiTokenAmount.Amount)
			if int(b.AccountIndex) < len(keys) {
				k := keys[b.AccountIndex]
				m.TokenBefore[k] = tokenUnits(b.UiTokenAmount.Amount)
				m.HolderBefore[k] = TokenHolding{*b.Owner, b.Mint}
			}
		}
	}
	for _, b := range res.Meta.PostTokenBalances {
		if b.Owner != nil && b.UiTokenAmount != nil {
			m.Tokens[TokenHolding{*b.Owner, b.Mint}] += tokenUnits(b.UiTokenAmount.Amount)
			if int(b.AccountIndex) < len(keys) {
				m.HolderAfter[keys[b.AccountIndex]] = TokenHolding{*b.Owner, b.Mint}
			}
		}
		if b.UiTokenAmount != nil && int(b.AccountIndex) < len(keys) {
			m.TokenAfter[keys[b.AccountIndex]] = tokenUnits(b.UiTokenAmount.Amount)
		}
	}
	return m, nil
}

// tokenUnits reads a token balance's raw amount (a decimal string of base
// units); anything else is zero.
func tokenUnits(s string) int64 {
	var n int64
	for _, r := range s {
		if r < '0' || r > '9' || n > (1<<62)/10 {
			return 0
		}
		n = n*10 + int64(r-'0')
	}
	return n
}

// TokenAccount is one of an owner's token accounts as listed: its
// address and amount, and (TokenAccountsOfProgram) its mint.
type TokenAccount struct {
	Address sol.PublicKey
	Mint    sol.PublicKey
	Amount  uint64
}

// TokenAccountsOf lists owner's token accounts of mint
// (getTokenAccountsByOwner), with their amounts. Only the amount of each
// account's data is asked for (a data slice of 8 bytes), so a listing of
// thousands of accounts stays small.
func (c *Client) TokenAccountsOf(ctx context.Context, owner, mint sol.PublicKey) ([]TokenAccount, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	offset, length := uint64(64), uint64(8)
	res, err := c.rpc.GetTokenAccountsByOwner(cctx, owner, &rpc.GetTokenAccountsConfig{Mint: &mint},
		&rpc.GetTokenAccountsOpts{Commitment: rpc.CommitmentConfirmed, Encoding: sol.EncodingBase64,
			DataSlice: &rpc.DataSlice{Offset: &offset, Length: &length}})
	if err != nil {
		return nil, c.rpcError("getTokenAccountsByOwner", err)
	}
	out := make([]TokenAccount, 0, len(res.Value))
	for _, a := range res.Value {
		t := TokenAccount{Address: a.Pubkey}
		if data := a.Account.Data.GetBinary(); len(data) >= 8 {
			t.Amount = binary.LittleEndian.Uint64(data[:8])
		}
		out = append(out, t)
	}
	return out, nil
}

// TokenAccountsOfProgram lists owner's token accounts of every mint of
// token program (getTokenAccountsByOwner with programId: SPL Token or
// Token-2022), with their mints and amounts. Only the mint and amount
// are asked for (a data slice of the first 72 bytes), so a listing of
// thousands of accounts stays small.
func (c *Client) TokenAccountsOfProgram(ctx context.Context, owner, program sol.PublicKey) ([]TokenAccount, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	offset, length := uint64(0), uint64(72)
	res, err := c.rpc.GetTokenAccountsByOwner(cctx, owner, &rpc.GetTokenAccountsConfig{ProgramId: &program},
		&rpc.GetTokenAccountsOpts{Commitment: rpc.CommitmentConfirmed, Encoding: sol.EncodingBase64,
			DataSlice: &rpc.DataSlice{Offset: &offset, Length: &length}})
	if err != nil {
		return nil, c.rpcError("getTokenAccountsByOwner", err)
	}
	out := make([]TokenAccount, 0, len(res.Value))
	for _, a := range res.Value {
		data := a.Account.Data.GetBinary()
		if len(data) < 72 || !sol.PublicKeyFromBytes(data[32:64]).Equals(owner) {
			continue // not an answer to what was asked: ignored
		}
		out = append(out, TokenAccount{Address: a.Pubkey, Mint: sol.PublicKeyFromBytes(data[0:32]),
			Amount: binary.LittleEndian.Uint64(data[64:72])})
	}
	return out, nil
}

// AssociatedToken is owner's associated token account of mint under
// token program (the program is one of the address's seeds).
func AssociatedToken(owner, mint, program sol.PublicKey) (sol.PublicKey, error) {
	ata, _, err := associatedTokenAddressOf(owner, program, mint)
	return ata, err
}

// AssociatedUSDC is owner's associated USDC account on the network.
func (n Network) AssociatedUSDC(owner sol.PublicKey) (sol.PublicKey, error) {
	ata, _, err := associatedTokenAddress(owner, n.USDCMint())
	return ata, err
}
