package solana

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sol "github.com/gagliardetto/solana-go"
	associatedtokenaccount "github.com/gagliardetto/solana-go/programs/associated-token-account"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/memo"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/usdc"
)

// Blockhash is a recent blockhash and the last block height at which a
// transaction using it can still land.
type Blockhash struct {
	Hash                 sol.Hash
	LastValidBlockHeight uint64
}

// LatestBlockhash asks the node for its newest blockhash.
func (c *Client) LatestBlockhash(ctx context.Context) (Blockhash, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return Blockhash{}, c.rpcError("getLatestBlockhash", err)
	}
	if res == nil || res.Value == nil {
		return Blockhash{}, fmt.Errorf("%w: getLatestBlockhash: empty answer", ErrRPC)
	}
	return Blockhash{Hash: res.Value.Blockhash, LastValidBlockHeight: res.Value.LastValidBlockHeight}, nil
}

// BlockhashCache keeps a recent blockhash so a send does not pay a round
// trip for one. A blockhash stays usable for ~150 blocks (about a minute);
// one at most MaxAge old leaves nearly all of that window to land.
type BlockhashCache struct {
	client *Client
	maxAge time.Duration
	now    func() time.Time

	mu       sync.Mutex
	current  Blockhash
	fetched  time.Time
	inflight chan struct{} // closed when the running fetch ends
	fetchErr error         // the last fetch's failure
}

// NewBlockhashCache caches c's blockhash for maxAge (zero means 2 s).
func NewBlockhashCache(c *Client, maxAge time.Duration) *BlockhashCache {
	if maxAge <= 0 {
		maxAge = 2 * time.Second
	}
	return &BlockhashCache{client: c, maxAge: maxAge, now: time.Now}
}

// StaleBlockhashUse is how old a cached blockhash may be and still be
// used when a fresh one does not come in time: a blockhash lives about
// 150 blocks (~60 s), and the transaction's LastValidBlockHeight, read with
// it, bounds its re-broadcasts either way.
const StaleBlockhashUse = 20 * time.Second

// Get returns the cached blockhash, fetching a new one when it is older
// than maxAge. Concurrent callers share one fetch, which runs outside the
// lock; a caller stops waiting when its ctx ends, and then gets the cached
// one if it is younger than StaleBlockhashUse.
func (b *BlockhashCache) Get(ctx context.Context) (Blockhash, error) {
	b.mu.Lock()
	if !b.fetched.IsZero() && b.now().Sub(b.fetched) < b.maxAge {
		defer b.mu.Unlock()
		return b.current, nil
	}
	wait := b.inflight
	if wait == nil {
		wait = make(chan struct{})
		b.inflight = wait
		go b.fetch(wait)
	}
	b.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		// A slow node: a blockhash fetched moments ago is still good for
		// most of its ~60 s life, and better than no payment at all.
		b.mu.Lock()
		defer b.mu.Unlock()
		if !b.fetched.IsZero() && b.now().Sub(b.fetched) < StaleBlockhashUse {
			return b.current, nil
		}
		return Blockhash{}, fmt.Errorf("%w: waiting for a blockhash: %w", ErrRPC, ctx.Err())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fetchErr != nil {
		return Blockhash{}, b.fetchErr
	}
	return b.current, nil
}

// fetch asks the node (bounded by the client's timeout) and wakes the
// waiters.
func (b *BlockhashCache) fetch(done chan struct{}) {
	bh, err := b.client.LatestBlockhash(context.Background())
	b.mu.Lock()
	if err == nil {
		b.current, b.fetched = bh, b.now()
	}
	b.fetchErr, b.inflight = err, nil
	b.mu.Unlock()
	close(done)
}

// Run refreshes the cache in the background until ctx ends, so sends find
// a fresh blockhash without waiting: the fetch happens outside the lock,
// and senders keep using the current one meanwhile. Failures are retried
// on the next tick.
func (b *BlockhashCache) Run(ctx context.Context) {
	tick := time.NewTicker(b.maxAge / 2)
	defer tick.Stop()
	for {
		if bh, err := b.client.LatestBlockhash(ctx); err == nil {
			b.mu.Lock()
			b.current, b.fetched = bh, b.now()
			b.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Transfer is a USDC payment from an agent wallet, which also pays the
// fees and the rent of the recipient's token account if it must be made,
// unless a fee payer does.
type Transfer struct {
	Owner sol.PublicKey
	// FeePayer, when set, pays the fees and the rent instead of Owner (fee
	// sponsorship): it signs first, so the transaction has two signatures.
	FeePayer sol.PublicKey
	To       sol.PublicKey
	Amount   usdc.Micros
	Memo     string
	// ComputeUnitPrice is the priority fee in micro-lamports per unit.
	ComputeUnitPrice uint64
	// RecipientAccountExists: the recipient's USDC account is known to
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
// program, Memo v2) with TestIssue22TransferComputeUnitsAreTightPerShape:
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

// TransferComputeUnits is the compute-unit limit a transfer requests: a
// tight bound for its shape (creating the recipient's token account or
// not, its memo's length, the recipient account's bump). The priority fee
// is paid on this limit, not on what runs.
func TransferComputeUnits(network Network, t Transfer) (uint32, error) {
	_, bump, err := associatedTokenAddress(t.To, network.USDCMint())
	if err != nil {
		return 0, err
	}
	return transferUnits(bump, t.RecipientAccountExists, len(t.Memo)), nil
}

func transferUnits(bump uint8, exists bool, memoBytes int) uint32 {
	u := unitsTransfer + unitsClassicToken + unitsPerBumpTry*(255-int(bump))
	if !exists {
		u += unitsCreateAccount + unitsClassicAccount
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
	mint := network.USDCMint()
	src, _, err := associatedTokenAddress(t.Owner, mint)
	if err != nil {
		return nil, err
	}
	dst, _, err := associatedTokenAddress(t.To, mint)
	if err != nil {
		return nil, err
	}
	return []sol.PublicKey{t.payer(), src, dst}, nil
}

// TokenAccountExists reports whether owner's USDC token account exists
// (at confirmed commitment), which makes its transfer cheaper in compute.
func (c *Client) TokenAccountExists(ctx context.Context, owner sol.PublicKey) (bool, error) {
	ata, _, err := associatedTokenAddress(owner, c.network.USDCMint())
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
// price → CreateIdempotent of the recipient's USDC account → TransferChecked
// → Memo (when given), fee payer the wallet or t.FeePayer.
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

// CheckTransferSize answers a *TooLargeError when the transfer's signed
// transaction with this memo would not fit a packet. Its size depends on
// nothing else (every key is 32 bytes, every amount and price 8, the
// signature 64), so it is known before any key or blockhash is at hand.
func CheckTransferSize(network Network, memo string) error {
	probe := func(label string) sol.PublicKey {
		h := sha256.Sum256([]byte("agentwallet/size-probe/" + label))
		return sol.PublicKeyFromBytes(h[:])
	}
	tx, err := buildTransfer(network, Transfer{Owner: probe("owner"), To: probe("to"), Amount: 1, Memo: memo, Reference: probe("reference")}, Blockhash{})
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
	mint := network.USDCMint()
	src, _, err := associatedTokenAddress(t.Owner, mint)
	if err != nil {
		return nil, err
	}
	dst, bump, err := associatedTokenAddress(t.To, mint)
	if err != nil {
		return nil, err
	}
	transfer := token.NewTransferCheckedInstruction(uint64(t.Amount), usdc.Decimals, src, mint, dst, t.Owner, nil)
	if !t.Reference.IsZero() {
		transfer.Accounts = append(transfer.Accounts, sol.Meta(t.Reference))
	}
	ixs := []sol.Instruction{
		computebudget.NewSetComputeUnitLimitInstruction(transferUnits(bump, t.RecipientAccountExists, len(t.Memo))).Build(),
		computebudget.NewSetComputeUnitPriceInstruction(t.ComputeUnitPrice).Build(),
	}
	// A sponsored transfer to an account known to exist does not offer to
	// make it: its fee payer's budget counted no rent, and a recipient
	// that closed its account meanwhile would otherwise have the fee payer
	// pay rent uncounted (at a low enough bump the compute limit allows
	// it), again and again. The transfer fails on chain instead, its fee
	// counted. A wallet paying its own way keeps the offer.
	if !t.RecipientAccountExists || t.FeePayer.IsZero() {
		ixs = append(ixs, associatedtokenaccount.NewCreateIdempotentInstruction(t.payer(), t.To, mint).Build())
	}
	ixs = append(ixs, transfer.Build())
	if t.Memo != "" {
		ixs = append(ixs, memo.NewMemoInstruction([]byte(t.Memo), t.Owner).Build())
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

// PreflightError is the node refusing a transaction before it is
// broadcast (its simulation failed, or the transaction is malformed, too
// large or badly signed): nothing was sent, and the same bytes would be
// refused again. Logs carry the programs' own words.
type PreflightError struct {
	Code    int // the JSON-RPC error code
	Message string
	Logs    []string
}

// definiteRefusal reports whether a sendTransaction error code is the
// node's verdict on the transaction itself, not on the node's health:
// preflight failure (-32002), signature verification failure (-32003),
// signature count mismatch (-32013), unsupported version (-32015), and an
// invalid request or params (-32600, -32602: malformed, or over 1232
// bytes). Unhealthy nodes, missing slots and transport errors are
// transient.
func definiteRefusal(code int) bool {
	switch code {
	case -32002, -32003, -32013, -32015, -32600, -32602:
		return true
	}
	return false
}

func (e *PreflightError) Error() string { return "preflight: " + e.Message }

// InsufficientFunds reports whether the wallet lacked USDC or SOL, and which.
func (e *PreflightError) InsufficientFunds() (what string, ok bool) {
	all := strings.ToLower(e.Message + "\n" + strings.Join(e.Logs, "\n"))
	switch {
	case strings.Contains(all, "error: insufficient funds"):
		return "USDC", true // the token program's own log line
	case strings.Contains(all, "insufficient lamports"), strings.Contains(all, "insufficientfundsforfee"),
		strings.Contains(all, "insufficientfundsforrent"), strings.Contains(all, "attempt to debit an account but found no record of a prior credit"),
		strings.Contains(all, "insufficient funds for fee"), strings.Contains(all, "insufficient funds for rent"):
		return "SOL", true
	}
	return "", false
}

// BlockhashNotFound reports whether the node did not know the blockhash
// yet (a lagging node behind a load balancer): not a verdict on the
// transaction, which may be sent again.
func (e *PreflightError) BlockhashNotFound() bool {
	return strings.Contains(strings.ToLower(e.Message), "blockhash not found")
}

// AlreadyProcessed reports whether the node has already executed this very
// transaction (another broadcast of the same bytes won): not a failure.
func (e *PreflightError) AlreadyProcessed() bool {
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "already been processed") || strings.Contains(m, "alreadyprocessed")
}

// Broadcast sends signed wire bytes with preflight simulation on. A
// simulation refusal is a *PreflightError; other failures wrap ErrRPC.
// Sending the same bytes again is harmless: a transaction lands once.
func (c *Client) Broadcast(ctx context.Context, raw []byte) (sol.Signature, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	sig, err := c.rpc.SendRawTransactionWithOpts(ctx, raw, rpc.TransactionOpts{
		PreflightCommitment: rpc.CommitmentConfirmed,
		MaxRetries:          new(uint(0)), // we re-broadcast ourselves
	})
	if err == nil {
		return sig, nil
	}
	var rpcErr *jsonrpc.RPCError
	if errors.As(err, &rpcErr) && definiteRefusal(rpcErr.Code) {
		pe := &PreflightError{Code: rpcErr.Code, Message: rpcErr.Message}
		if data, ok := rpcErr.Data.(map[string]any); ok {
			if logs, ok := data["logs"].([]any); ok {
				for _, l := range logs {
					if s, ok := l.(string); ok {
						pe.Logs = append(pe.Logs, s)
					}
				}
			}
		}
		return sol.Signature{}, pe
	}
	return sol.Signature{}, c.rpcError("sendTransaction", err)
}

// MaxSignatureStatuses is the most signatures one getSignatureStatuses
// call may ask about.
const MaxSignatureStatuses = 256

// Status is where a transaction stands on chain.
type Status struct {
	Found bool // the node knows the transaction
	// Confirmed: at confirmed or finalized commitment, so its result
	// (success, or Err) is final; at processed it may still be rolled back.
	Confirmed bool
	Err       string // the execution's error, when Found
	// Absent (Client.Settled only): not found, and that answer counts: it
	// saw the chain at or past the slot asked for, on every node asked.
	// Neither Found nor Absent: nothing may be concluded yet.
	Absent bool
}

// SignatureStatuses looks up to MaxSignatureStatuses signatures up in one
// call. With history, nodes also search beyond their recent status cache
// (slower; use it before declaring a transaction lost).
func (c *Client) SignatureStatuses(ctx context.Context, history bool, sigs []sol.Signature) ([]Status, error) {
	out, _, err := c.signatureStatuses(ctx, history, sigs)
	return out, err
}

// signatureStatuses is SignatureStatuses and the slot the node answered
// at (its context slot): a transaction that landed after it is unknown to
// that answer.
func (c *Client) signatureStatuses(ctx context.Context, history bool, sigs []sol.Signature) ([]Status, uint64, error) {
	if len(sigs) > MaxSignatureStatuses {
		return nil, 0, fmt.Errorf("%d signatures: at most %d per call", len(sigs), MaxSignatureStatuses)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetSignatureStatuses(ctx, history, sigs...)
	if err != nil {
		return nil, 0, c.rpcError("getSignatureStatuses", err)
	}
	if res == nil || len(res.Value) != len(sigs) {
		return nil, 0, fmt.Errorf("%w: getSignatureStatuses: malformed answer", ErrRPC)
	}
	out := make([]Status, len(sigs))
	for i, v := range res.Value {
		if v == nil {
			continue
		}
		out[i].Found = true
		if v.Err != nil {
			out[i].Err = fmt.Sprint(v.Err)
		}
		out[i].Confirmed = v.ConfirmationStatus == rpc.ConfirmationStatusConfirmed ||
			v.ConfirmationStatus == rpc.ConfirmationStatusFinalized
	}
	return out, res.Context.Slot, nil
}

// BlockHeight is the node's current block height at confirmed commitment:
// a transaction whose LastValidBlockHeight is below it can no longer land.
func (c *Client) BlockHeight(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	h, err := c.rpc.GetBlockHeight(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return 0, c.rpcError("getBlockHeight", err)
	}
	return h, nil
}

// Tip is where one node's chain stands: a slot and the block height at
// it, read in one answer (getEpochInfo), so the height is known to have
// been reached by that slot.
type Tip struct {
	Slot, Height uint64
}

// Tip reads the node's slot and block height at confirmed commitment.
func (c *Client) Tip(ctx context.Context) (Tip, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetEpochInfo(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return Tip{}, c.rpcError("getEpochInfo", err)
	}
	if res == nil {
		return Tip{}, fmt.Errorf("%w: getEpochInfo: empty answer", ErrRPC)
	}
	return Tip{Slot: res.AbsoluteSlot, Height: res.BlockHeight}, nil
}

// Settled is the chain's answer on whether transactions may still land:
// one node's tip and, searched through its history, their statuses. Both
// come from the same node, tip first, with no failover in between: a
// height from one node and statuses from a lagging other would declare
// lost a transaction that landed.
//
// A "not found" is worth something only from an answer that saw the
// chain at or past the slot from which it matters: since[i] for sigs[i]
// (the caller's record of the slot at which the transaction's blockhash
// was first seen expired), or zero for the tip's slot. Providers balance
// one URL over several backends, and one behind the slot at which a
// transaction landed answers null for it: the statuses' context slot
// tells. A status not found before that slot is not Absent: inconclusive.
// With several nodes, what one node finds Absent is asked of a second
// (statuses and history, its answer at or past since[i] too) before it is
// reported Absent; a second node that does not answer, lags or keeps no
// history leaves it inconclusive (Doubt says why).
//
// History reports whether the first node's "not known" searched a
// history: a node started without transaction history (agave's default)
// searches only its status cache, the last ~300 slots, and answers null
// for a transaction that landed before them. Asked about one unknown
// signature with getTransaction, such a node says so (-32011); then
// History is false and no unknown signature may be taken as lost.
func (c *Client) Settled(ctx context.Context, sigs []sol.Signature, since []uint64) (Settled, error) {
	if len(since) != len(sigs) {
		return Settled{}, fmt.Errorf("settled: %d signatures, %d slots", len(sigs), len(since))
	}
	first := onOneNode(ctx)
	tip, err := c.Tip(first)
	if err != nil {
		return Settled{}, err
	}
	statuses, at, err := c.signatureStatuses(first, true, sigs)
	if err != nil {
		return Settled{}, err
	}
	out := Settled{Height: tip.Height, Slot: tip.Slot, Statuses: statuses, History: true}
	from := func(i int) uint64 {
		if since[i] > 0 {
			return since[i]
		}
		return tip.Slot
	}
	var absent []int
	for i, s := range statuses {
		if s.Found {
			continue
		}
		if at < from(i) {
			out.Doubt = fmt.Sprintf("the node answered at slot %d, before slot %d: it is behind", at, from(i))
			continue
		}
		absent = append(absent, i)
	}
	if len(absent) > 0 {
		out.History, err = c.keepsHistory(first, sigs[absent[0]])
		if err != nil {
			return Settled{}, err
		}
	}
	if len(absent) > 0 && c.nodes() > 1 {
		absent = c.secondOpinion(onAnotherNode(ctx, first), sigs, absent, from, &out)
	}
	for _, i := range absent {
		out.Statuses[i].Absent = true
	}
	return out, nil
}

// secondOpinion asks another node about the signatures the first found
// absent (indexes into sigs): a status it finds replaces the first's; it
// returns those it too finds absent, from an answer at or past from(i),
// with a history. Any other answer leaves them all inconclusive.
func (c *Client) secondOpinion(ctx context.Context, sigs []sol.Signature, absent []int, from func(int) uint64, out *Settled) []int {
	ask := make([]sol.Signature, len(absent))
	for j, i := range absent {
		ask[j] = sigs[i]
	}
	statuses, at, err := c.signatureStatuses(ctx, true, ask)
	if err != nil {
		out.Doubt = "a second node did not answer: " + err.Error()
		return nil
	}
	var still []int
	for j, i := range absent {
		switch {
		case statuses[j].Found:
			out.Statuses[i] = statuses[j]
		case at < from(i):
			out.Doubt = fmt.Sprintf("a second node answered at slot %d, before slot %d: it is behind", at, from(i))
		default:
			still = append(still, i)
		}
	}
	if len(still) == 0 {
		return nil
	}
	history, err := c.keepsHistory(ctx, sigs[still[0]])
	switch {
	case err != nil:
		out.Doubt = "a second node did not answer: " + err.Error()
		return nil
	case !history:
		out.Doubt = "a second node keeps no transaction history"
		return nil
	}
	return still
}

// Settled is one node's tip and the statuses it found there, whether it
// searched a transaction history, and why a status neither found nor
// Absent is in doubt (see Client.Settled).
type Settled struct {
	Height   uint64
	Slot     uint64 // read with Height
	Statuses []Status
	History  bool
	Doubt    string
}

// errHistoryNotAvailable is agave's answer to a history query on a node
// without transaction history (RpcCustomError::TransactionHistoryNotAvailable).
const errHistoryNotAvailable = -32011

// keepsHistory asks the node for sig, a transaction its statuses did not
// find: no such transaction (null) means it searched its history; -32011
// that it keeps none. A transaction it does find here is not "unknown"
// after all: the caller must not take it as lost either, so that is
// reported as no (usable) history.
func (c *Client) keepsHistory(ctx context.Context, sig sol.Signature) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	v := uint64(0)
	_, err := c.rpc.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{
		Encoding: sol.EncodingBase64, Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &v,
	})
	var rpcErr *jsonrpc.RPCError
	switch {
	case errors.Is(err, rpc.ErrNotFound):
		return true, nil
	case err == nil:
		return false, nil
	case errors.As(err, &rpcErr) && rpcErr.Code == errHistoryNotAvailable:
		return false, nil
	}
	return false, c.rpcError("getTransaction", err)
}
