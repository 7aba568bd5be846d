package payment

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/feepayer"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// errNoBlockhash: the node gave no blockhash in time; nothing was signed.
var errNoBlockhash = errors.New("no blockhash from the Solana node")

// spend is a transfer the policy allowed: a send request's or an
// approval's. Its id is the transfer's Solana Pay reference.
type spend struct {
	accountID, walletID   uuid.UUID
	network               solana.Network
	to                    string
	asset                 asset.Asset
	amount                money.Quantity
	memo                  *string
	requestID, approvalID uuid.NullUUID
	// sponsor is the account's enabled fee payer (nil: none) when
	// sponsorRead; else signSpend reads it.
	sponsor     *string
	sponsorRead bool
	// presigned is its transfer signed before the wallet's lock was
	// taken (nil: sign it now).
	presigned *presigned
}

func (s *spend) reference() sol.PublicKey {
	if s.approvalID.Valid {
		return solana.ReferenceFor(s.approvalID.UUID)
	}
	return solana.ReferenceFor(s.requestID.UUID)
}

// signTransfer builds and signs the transfer with a cached blockhash and
// stores it (reserving its amount) before anything is broadcast. Without
// a blockhash nothing is signed: errNoBlockhash; with the fee market above
// the cap neither: errFeeAboveCap; nor past the fee payer's daily budget:
// errFeePayerBudget.
func (e *Engine) signTransfer(ctx context.Context, tx bun.Tx, node Node, w *wallet.Wallet, s *spend, at time.Time) (*Transaction, error) {
	t, err := e.buildTransfer(ctx, tx, node, w, s, at)
	if err != nil {
		return nil, err
	}
	if _, err := tx.NewInsert().Model(t).Exec(ctx); err != nil {
		return nil, fmt.Errorf("insert transaction: %w", err)
	}
	return t, nil
}

// buildTransfer is signTransfer without the insert: the transaction as it
// will be stored.
func (e *Engine) buildTransfer(ctx context.Context, tx bun.Tx, node Node, w *wallet.Wallet, s *spend, at time.Time) (*Transaction, error) {
	var st signedTransfer
	var err error
	if p := s.presigned; p != nil {
		st, err = p.signed, p.err // signed before the wallet's lock
	} else {
		st, err = e.signNow(ctx, tx, node, w, s, at)
	}
	if err != nil {
		return nil, err
	}
	return &Transaction{
		ID: uuid.New(), AccountID: s.accountID, WalletID: s.walletID,
		RequestID: s.requestID, ApprovalID: s.approvalID,
		Network: s.network, Signature: st.signature, Kind: KindOf(s.asset), Direction: "send",
		Asset: s.asset.Symbol, Currency: s.asset.Currency, Amount: s.amount, Counterparty: s.to, Memo: s.memo, Status: TxPending,
		SignedTx: st.raw, LastValidBlockHeight: st.lastValid, FeeLamports: &st.fee, Attempts: 1,
		FeePayer: st.feePayer, SponsoredLamports: st.sponsored,
		CreatedAt: at, UpdatedAt: at,
	}, nil
}

// sentWith is the statement before a send's audit entry: its transaction's
// insert ($1..$23) and its request's outcome ($24, $25). The columns not
// named start NULL or at their defaults, as bun's insert leaves them.
const sentWith = `t AS (INSERT INTO transactions (id, account_id, wallet_id, request_id, approval_id, network, signature, kind, direction,
		asset, currency, amount_micros, counterparty, memo, status, signed_tx, last_valid_block_height, fee_lamports, attempts,
		fee_payer, sponsored_lamports, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)),
	o AS (UPDATE send_requests SET outcome = $24 WHERE id = $25)`

// sentArgs are sentWith's arguments for t and its request's outcome.
func sentArgs(t *Transaction, out *Outcome, requestID uuid.UUID) []any {
	return []any{
		t.ID, t.AccountID, t.WalletID, t.RequestID, t.ApprovalID, string(t.Network), t.Signature, t.Kind, t.Direction,
		t.Asset, string(t.Currency), int64(t.Amount), t.Counterparty, t.Memo, t.Status, t.SignedTx, int64(t.LastValidBlockHeight),
		t.FeeLamports, t.Attempts, t.FeePayer, t.SponsoredLamports, t.CreatedAt.UTC(), t.UpdatedAt.UTC(),
		out, requestID,
	}
}

// KindOf is what a send of a moved, as transactions name it: its symbol
// in lower case ("usdc", "eurc").
func KindOf(a asset.Asset) string { return strings.ToLower(a.Symbol) }

// signedTransfer is a spend's transfer built and signed, not yet stored.
type signedTransfer struct {
	raw       []byte
	signature string
	lastValid uint64 // its blockhash's last valid block height
	fee       int64  // lamports it pays if it lands
	// feePayer is the account's fee payer that co-signed it (nil: the
	// wallet pays) and sponsored what it is counted for in its budget.
	feePayer  *string
	sponsored *int64
}

// signSpend builds s's transfer on blockhash bh, priced from the market
// that fees reads for it (by the engine's fee policy), and signs it with
// w's key (and the account's fee payer's, when sponsorship is on; its
// budget is checked under its row lock, held by tx). A market above the
// cap is an errFeeAboveCap, a budget passed an errFeePayerBudget: nothing
// is signed. The first send and a re-sign after expiry both sign here;
// replacing is the transaction a re-sign replaces (its current attempt is
// not counted against the budget twice), uuid.Nil at the first send.
func (e *Engine) signSpend(ctx context.Context, tx bun.Tx, node Node, w *wallet.Wallet, s *spend, bh solana.Blockhash, fees func(solana.Transfer) []uint64, replacing uuid.UUID, at time.Time) (signedTransfer, error) {
	to, err := sol.PublicKeyFromBase58(s.to)
	if err != nil {
		return signedTransfer{}, fmt.Errorf("recipient %q: %w", s.to, err)
	}
	memo := ""
	if s.memo != nil {
		memo = *s.memo
	}
	transfer := solana.Transfer{Owner: w.PublicKey(), To: to, Amount: s.amount, Memo: memo, Reference: s.reference()}
	// USDC is the network's own (the zero Token); any other asset's mint
	// is read (cached a minute) for what its transfer costs, and refused
	// when the service cannot send it (a transfer hook, a fee withheld).
	var rent uint64 = solana.TokenAccountRentLamports
	if !s.asset.Mint.Equals(node.Client.Network().USDCMint()) && !s.asset.Mint.IsZero() {
		transfer.Token = s.asset.Token()
		tctx, cancel := context.WithTimeout(ctx, feeReadWait)
		terms, err := node.Client.TokenTerms(tctx, transfer.Token)
		cancel()
		var unsupported *solana.UnsupportedTokenError
		switch {
		case errors.As(err, &unsupported):
			return signedTransfer{}, errUnsupportedToken{unsupported}
		case err != nil:
			e.log().WarnContext(ctx, "token mint not read; nothing signed", "asset", s.asset.Symbol, "err", err)
			return signedTransfer{}, errNoBlockhash
		}
		rent = terms.AccountRentLamports
	}
	// Sponsored or not is decided under the fee payer's lock below; this
	// read (no lock: the fee reading may wait on the node; a send's claim
	// made it) names the fee payer among the accounts whose market is
	// read, and spares accounts without sponsorship the lock. Enabled
	// after it, sponsorship starts with the next send.
	sponsor := s.sponsor
	if !s.sponsorRead {
		f, ok, err := feepayer.Get(ctx, tx, s.accountID)
		if err != nil {
			return signedTransfer{}, err
		}
		if ok && f.Enabled {
			sponsor = f.Pubkey
		}
	}
	if sponsor != nil {
		transfer.FeePayer = (&feepayer.FeePayer{Pubkey: sponsor}).PublicKey()
	}
	// The fee reading (normally cached) and the recipient's account are
	// read at once: a slow node costs the held locks one wait, not two.
	market := make(chan []uint64, 1)
	go func(t solana.Transfer) { market <- fees(t) }(transfer) // a copy: transfer changes below
	if transfer.RecipientAccountExists, err = e.checkAccounts(ctx, node, w.PublicKey(), to, transfer.Token); err != nil {
		return signedTransfer{}, err
	}
	units, err := solana.TransferComputeUnits(s.network, transfer)
	if err != nil {
		return signedTransfer{}, fmt.Errorf("compute units: %w", err)
	}
	if transfer.ComputeUnitPrice, err = e.price(ctx, s.network, <-market, units); err != nil {
		return signedTransfer{}, err
	}
	var payer *feepayer.FeePayer
	var sponsored int64
	if !transfer.FeePayer.IsZero() {
		if payer, sponsored, err = e.sponsor(ctx, tx, s, &transfer, units, rent, replacing, at); err != nil {
			return signedTransfer{}, err
		}
	}
	unsigned, err := node.Client.BuildTransfer(transfer, bh)
	if err != nil {
		return signedTransfer{}, fmt.Errorf("build transfer: %w", err)
	}
	keys := []signer.Key{w.Key()}
	if payer != nil {
		keys = append(keys, payer.Key())
	}
	raw, sig, err := solana.Sign(ctx, unsigned, signer.For(e.Signer, keys...))
	if err != nil {
		return signedTransfer{}, err
	}
	st := signedTransfer{
		raw: raw, signature: sig.String(), lastValid: bh.LastValidBlockHeight,
		fee: int64(transfer.FeeLamports(units, transfer.ComputeUnitPrice)),
	}
	if payer != nil {
		st.feePayer, st.sponsored = payer.Pubkey, &sponsored
	}
	return st, nil
}

// feeReadWait bounds the wait for a fee reading during a decision (it is
// normally cached): the wallet's and the request's locks are held.
const feeReadWait = time.Second

// checkAccounts reads the wallet's (from) and the recipient's (to)
// accounts of tk before anything is signed: either frozen is an
// errAccountFrozen (the transfer could not land); else it reports
// whether to's account exists, so the transfer requests no compute for
// creating it. Unread (the node did not answer in time), the known
// recipients answer whether it exists and frozen is left to the node's
// preflight: more compute requested at most, never a wrong refusal.
func (e *Engine) checkAccounts(ctx context.Context, node Node, from, to sol.PublicKey, tk solana.Token) (bool, error) {
	known := knownKey(to, tk)
	ctx, cancel := context.WithTimeout(ctx, feeReadWait)
	defer cancel()
	states, err := node.Client.TokenAccountStates(ctx, tk, from, to)
	if err != nil {
		e.log().WarnContext(ctx, "the wallet's and the recipient's token accounts not read; whether they are frozen is left to the node", "err", err)
		return node.Recipients != nil && node.Recipients.Has(known), nil
	}
	if err := frozenIn(states, tk); err != nil {
		return false, err
	}
	if states[1].Exists && node.Recipients != nil {
		node.Recipients.Add(known)
	}
	return states[1].Exists, nil
}

// frozenIn is an errAccountFrozen naming the first of states (the
// wallet's, then each recipient's) that is frozen, or nil.
func frozenIn(states []solana.TokenAccountState, tk solana.Token) error {
	for i, s := range states {
		if !s.Frozen {
			continue
		}
		whose := "the wallet's"
		if i > 0 {
			whose = "the recipient " + s.Owner.String() + "'s"
		}
		symbol := tk.Symbol
		if symbol == "" {
			symbol = "USDC"
		}
		return errAccountFrozen{fmt.Sprintf("%s %s account %s is frozen by the mint's freeze authority: no transfer from or to it can land until it is thawed", whose, symbol, s.Account)}
	}
	return nil
}

// errAccountFrozen: the wallet's or the recipient's token account is
// frozen; nothing signed.
type errAccountFrozen struct{ detail string }

func (e errAccountFrozen) Error() string { return e.detail }

// knownKey is what the known recipients remember of to's account of tk:
// the owner for USDC (the zero Token), else a key derived from owner and
// mint, so an account of one asset never vouches for another's.
func knownKey(to sol.PublicKey, tk solana.Token) sol.PublicKey {
	if tk.IsZero() {
		return to
	}
	h := sha256.Sum256(append(append([]byte("agentwallet/known-account/"), to[:]...), tk.Mint[:]...))
	return sol.PublicKeyFromBytes(h[:])
}

// errUnsupportedToken: the asset's mint has a feature the service cannot
// send through (a transfer hook, a fee withheld, a pause); nothing signed.
type errUnsupportedToken struct{ *solana.UnsupportedTokenError }

// errFeeAboveCap: the market is above the configured cap; nothing signed.
type errFeeAboveCap struct{ *solana.FeeAboveCapError }

// readFees is the network's recent fee market for t's writable accounts
// (cached; a reading that fails or does not come within feeReadWait falls
// back to the last one, or to none, and says so in the log).
func (e *Engine) readFees(ctx context.Context, node Node, network solana.Network, t solana.Transfer) []uint64 {
	if node.Fees == nil {
		return nil
	}
	accounts, err := solana.WritableAccounts(network, t)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, feeReadWait)
	defer cancel()
	reading, err := node.Fees.Get(ctx, accounts)
	if err != nil {
		e.log().WarnContext(ctx, "fee market not read; priced from the last reading, or the floor without one",
			"network", network, "last_reading", len(reading.Fees) > 0, "err", err)
	}
	return reading.Fees
}

// price is the compute-unit price of a transfer of units compute units
// in the market recent, by the engine's fee policy. A market above the
// cap is an errFeeAboveCap: nothing is signed.
func (e *Engine) price(ctx context.Context, network solana.Network, recent []uint64, units uint32) (uint64, error) {
	policy := e.Fees
	if policy == (solana.FeePolicy{}) {
		policy = solana.DefaultFeePolicy
	}
	price, err := policy.Price(recent, units)
	var over *solana.FeeAboveCapError
	if errors.As(err, &over) {
		e.log().WarnContext(ctx, "priority fee market above the cap; nothing signed", "network", network,
			"market_microlamports", over.Market, "cap_microlamports", over.Cap)
		return 0, errFeeAboveCap{over}
	}
	return price, err
}

// presigned is a send's transfer signed before its decision, or why it
// could not be (the verdict signing under the lock would reach).
type presigned struct {
	owner  sol.PublicKey // the wallet's public key, as read unlocked
	signed signedTransfer
	err    error
}

// presign signs a send request's transfer before its decision takes the
// wallet's lock, so that the lock is held for the policy check and the
// reservation only, not for the key's opening, the signature and the
// node's (normally cached) readings. It signs only what it would sign
// under the lock: a USDC-or-asset transfer of the request, with the
// wallet's own key, when the policy read without the lock and without
// usage (frozen, assets, allowlist, per-payment limits, approval
// threshold, hours) would send it. A payment a usage rule then blocks
// was signed for nothing: the bytes stay in this process, never stored
// nor broadcast. Nil: sign under the lock, as before (a sponsored send,
// whose fee payer's budget is locked after the wallet; a wallet or asset
// not found; a policy that would not send it).
func (e *Engine) presign(ctx context.Context, tx bun.Tx, node Node, r *Request, at time.Time) *presigned {
	if r.X402 != nil || r.Sponsor != nil {
		return nil
	}
	w, err := wallet.Read(ctx, tx, r.WalletID, false)
	if err != nil {
		return nil
	}
	a, err := e.assetOf(r.Network, r.Asset)
	if err != nil {
		return nil
	}
	d := w.Policy().Evaluate(policy.Request{To: r.To, Asset: a.Symbol, Amount: a.Amount(r.Amount), Frozen: w.State == wallet.Frozen, At: at})
	if d.Outcome != policy.Send {
		return nil
	}
	p := &presigned{owner: w.PublicKey()}
	p.signed, p.err = e.signNow(ctx, tx, node, &w, e.sendSpend(r, a, nil), at)
	if _, verdict := unsigned(p.err); p.err != nil && !verdict {
		// A failure, not a verdict: under the lock it is tried again.
		return nil
	}
	return p
}

// signNow builds and signs s's transfer with a cached blockhash.
func (e *Engine) signNow(ctx context.Context, tx bun.Tx, node Node, w *wallet.Wallet, s *spend, at time.Time) (signedTransfer, error) {
	// A node not (yet) verified to be of the network's chain is never
	// signed for: a mainnet transfer "confirmed" by a local chain would
	// have moved nothing real.
	if err := node.Client.ChainErr(); err != nil {
		e.log().ErrorContext(ctx, "the network's Solana node is not verified; nothing signed", "wallet_id", w.ID, "err", err)
		return signedTransfer{}, errNoBlockhash
	}
	// Normally cached; bounded so a stalled node cannot hold the wallet
	// and request locks for long.
	bctx, cancel := context.WithTimeout(ctx, time.Second)
	bh, err := node.Blockhashes.Get(bctx)
	cancel()
	if err != nil {
		e.log().WarnContext(ctx, "no blockhash; nothing signed", "wallet_id", w.ID, "err", err)
		return signedTransfer{}, errNoBlockhash
	}
	return e.signSpend(ctx, tx, node, w, s, bh, func(t solana.Transfer) []uint64 { return e.readFees(ctx, node, s.network, t) }, uuid.Nil, at)
}

// sendSpend is a send request's transfer of asset a.
func (e *Engine) sendSpend(r *Request, a asset.Asset, pre *presigned) *spend {
	return &spend{
		accountID: r.AccountID, walletID: r.WalletID, network: r.Network, to: r.To, asset: a, amount: r.Amount, memo: r.Memo,
		requestID: uuid.NullUUID{UUID: r.ID, Valid: true}, sponsor: r.Sponsor, sponsorRead: true, presigned: pre,
	}
}

// sign signs a send request's transfer (or takes the one presign signed:
// the transfer is the request's, from the wallet's public key, which the
// row read under the lock confirms) and records it as sent.
func (e *Engine) sign(ctx context.Context, tx bun.Tx, node Node, r *Request, w *wallet.Wallet, a asset.Asset, d policy.Decision, at time.Time, pre *presigned) (*Transaction, *Outcome, error) {
	if pre != nil && !pre.owner.Equals(w.PublicKey()) {
		pre = nil
	}
	t, err := e.buildTransfer(ctx, tx, node, w, e.sendSpend(r, a, pre), at)
	if out, ok := unsigned(err); ok {
		// The API refuses memos too large for a transaction first; a
		// refusal here holds if it did not.
		out.remaining(d)
		return nil, out, setOutcome(ctx, tx, r.ID, out)
	}
	if err != nil {
		return nil, nil, err
	}
	// Sent from this commit on, even if the worker dies before its first
	// broadcast (the sweep broadcasts it); the broadcast's answer refines
	// it. The transaction (its amount reserved), the outcome and the audit
	// entry are one statement: one round trip while the wallet is locked.
	details := map[string]any{
		"request_id": r.ID, "transaction_id": t.ID, "signature": t.Signature, "amount": r.Amount, "asset": a.Symbol, "to": r.To,
	}
	err = audit.AppendWith(ctx, tx, sentWith, sentArgs(t, &Outcome{Status: Sent, Signature: t.Signature, Broadcasting: true}, r.ID), audit.Entry{
		AccountID: r.AccountID,
		At:        at,
		Actor:     actorOf(r),
		Action:    audit.ActionSendSent,
		Target:    wallet.Target(r.WalletID),
		Details:   details,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store transaction, outcome and audit entry: %w", err)
	}
	return t, nil, nil
}

// unsigned is the outcome of a transfer the engine did not sign, by its
// signing error: the one mapping every path (a send, an approval's
// execution, a re-sign) reads. ok is false when err is no such verdict
// (a failure to report as an error).
func unsigned(err error) (o *Outcome, ok bool) {
	var fc errFeeAboveCap
	var fb errFeePayerBudget
	var tl *solana.TooLargeError
	switch {
	case errors.Is(err, errNoBlockhash):
		return &Outcome{Status: Unavailable, Detail: "the Solana node did not answer"}, true
	case errors.As(err, &fc):
		return &Outcome{Status: Unavailable, Cause: CauseFeeCapBelowMarket, Detail: fc.Error()}, true
	case errors.As(err, &fb):
		return &Outcome{Status: Unavailable, Cause: CauseFeePayerBudgetExceeded, Detail: fb.Error()}, true
	case errors.As(err, &tl):
		return &Outcome{Status: Refused, Detail: tl.Error()}, true
	}
	var pe *solana.PrecisionError
	if errors.As(err, &pe) {
		// The API refuses such an amount first; the table's decimals
		// may have changed since.
		return &Outcome{Status: Refused, Detail: pe.Error()}, true
	}
	var af errAccountFrozen
	if errors.As(err, &af) {
		return &Outcome{Status: Refused, Cause: CauseAccountFrozen, Detail: af.Error()}, true
	}
	var ut errUnsupportedToken
	if errors.As(err, &ut) {
		return &Outcome{Status: Refused, Detail: ut.Error()}, true
	}
	if u, ok := signer.Unavailable(err); ok {
		// The reason only: the wrapped error is for the worker's log.
		return &Outcome{Status: Unavailable, Cause: CauseSignerUnavailable,
			Detail: fmt.Sprintf("the wallet's %s signer is unavailable: %s", u.Backend, u.Reason)}, true
	}
	return nil, false
}
