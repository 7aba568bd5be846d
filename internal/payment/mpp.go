package payment

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/mpp"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// signMPP signs an allowed MPP charge (pull mode): the transaction the
// seller broadcasts, fee paid by the seller's fee payer when it offers
// one (the wallet then needs no SOL), by the wallet otherwise. Like an
// x402 payment it is stored signed, its amount reserved until the chain
// shows it landed or its blockhash expired; nothing is broadcast by us.
// A challenge the account already paid never reaches it (paidBefore).
func (e *Engine) signMPP(ctx context.Context, tx bun.Tx, node Node, r *Request, w *wallet.Wallet, a asset.Asset, d policy.Decision, at time.Time) (*Outcome, error) {
	x := r.X402
	refuse := func(detail string) (*Outcome, error) {
		out := (&Outcome{Status: Refused, Detail: detail}).remaining(d)
		return out, setOutcome(ctx, tx, r.ID, out)
	}
	cs, err := mpp.ParseChallenges(string(x.Challenge))
	if err != nil {
		return refuse(err.Error())
	}
	var max *money.Quantity // the caller's cap, in whole units of the asset paid
	if x.Max != nil {
		m := money.Quantity(*x.Max)
		max = &m
	}
	c, err := mpp.Select(cs, mpp.Wallet{Network: r.Network, Owner: w.PublicKey(), Tokens: PayableTokens(e.Assets, r.Network, w.Policy())}, max, e.now())
	if err != nil {
		return refuse(err.Error())
	}
	if c.Index != x.Index || c.Amount != r.Amount || c.Recipient.String() != r.To || c.Challenge.ID != x.ChallengeID ||
		!c.Token.Mint.Equals(a.Mint) || !sameSplits(c.Splits, x.Splits) {
		return refuse("the challenge no longer selects the payment the policy evaluated")
	}
	recipients := []sol.PublicKey{c.Recipient}
	for _, sp := range c.Splits {
		recipients = append(recipients, sp.Recipient)
	}
	bh, refused, err := e.readyToSign(ctx, node, w, c.Token, recipients...)
	if refused != nil {
		refused.remaining(d)
		return refused, setOutcome(ctx, tx, r.ID, refused)
	}
	if err != nil {
		out := (&Outcome{Status: Unavailable, Detail: "the Solana node did not answer"}).remaining(d)
		return out, setOutcome(ctx, tx, r.ID, out)
	}
	opts := mpp.BuildOptions{}
	feePayer := c.FeePayer
	if feePayer.IsZero() && len(c.Splits) > 0 {
		// The wallet pays no rent for a split's account (see
		// mpp.BuildTransaction): one that does not exist would fail on
		// chain, so it is refused now rather than held until it expires.
		for _, sp := range c.Splits {
			rctx, cancel := context.WithTimeout(ctx, feeReadWait)
			ok, err := node.Client.TokenAccountExistsOf(rctx, sp.Recipient, c.Token)
			cancel()
			if err != nil {
				e.log().WarnContext(ctx, "split recipient's token account not read; nothing signed", "wallet_id", w.ID, "err", err)
				out := (&Outcome{Status: Unavailable, Detail: "the Solana node did not answer"}).remaining(d)
				return out, setOutcome(ctx, tx, r.ID, out)
			}
			if !ok {
				return refuse(fmt.Sprintf("split recipient %s has no %s account, and the wallet does not pay to create one (the seller may pay it with its fee payer)", sp.Recipient, a.Symbol))
			}
		}
	}
	if feePayer.IsZero() {
		// The wallet pays the fee: priced from the market as a send is.
		feePayer = w.PublicKey()
		recent := e.readFees(ctx, node, r.Network, solana.Transfer{Token: c.Token, Owner: w.PublicKey(), To: c.Recipient, Amount: c.Primary})
		// Priced on the most the limit may be (its random part included), so
		// the fee stays within the policy's cap.
		price, err := e.price(ctx, r.Network, recent, mpp.ComputeUnits(c)+mpp.NonceRange)
		if err != nil {
			var over errFeeAboveCap
			if errors.As(err, &over) {
				out := (&Outcome{Status: Unavailable, Detail: over.Error(), Cause: CauseFeeCapBelowMarket}).remaining(d)
				return out, setOutcome(ctx, tx, r.ID, out)
			}
			return nil, err
		}
		opts.ComputeUnitPrice = min(price, mpp.MaxComputeUnitPrice)
	}
	p, err := mpp.BuildTransaction(ctx, c, w.PublicKey(), signer.For(e.Signer, w.Key()), bh.Hash, opts)
	if err != nil {
		return refuse(err.Error())
	}
	header, value := mpp.Credential(c, p)
	splits, err := json.Marshal(x.Splits)
	if err != nil {
		return nil, err
	}
	var desc *string
	if x.Description != "" {
		desc = &x.Description
	}
	challenge, err := json.Marshal(string(x.Challenge))
	if err != nil {
		return nil, err
	}
	id, expires := c.Challenge.ID, c.Expires
	row := X402Payment{
		ID: r.ID, AccountID: r.AccountID, WalletID: r.WalletID, RequestID: r.ID, Network: r.Network, Protocol: ProtocolMPP,
		Challenge: challenge, ChoiceIndex: c.Index, Amount: c.Amount, ChallengeID: &id, ExpiresAt: &expires, Splits: splits,
		PayTo: c.Recipient.String(), Asset: c.Token.Mint.String(), Symbol: a.Symbol, Currency: a.Currency, FeePayer: feePayer.String(),
		Resource: x.Resource, Description: desc, Memo: c.Charge.ExternalID,
		OwnerSignature: p.OwnerSignature.String(), SourceATA: p.SourceATA.String(), DestinationATA: p.DestinationATA.String(),
		Header: header, PaymentSignature: value, SignedTx: p.Wire,
		LastValidBlockHeight: bh.LastValidBlockHeight, State: X402StateSigned, CreatedAt: at, UpdatedAt: at,
		ApprovalID: x.ApprovalID,
	}
	out := &Outcome{Status: Signed, RemainingToday: d.RemainingToday.Micros() - int64(c.Amount), Currency: a.Currency, X402: &X402Signed{
		PaymentID: row.ID, Header: header, Value: value, Amount: int64(c.Amount), PayTo: row.PayTo,
		Network: x.NetworkID, Resource: x.Resource,
	}}
	details := map[string]any{
		"request_id": r.ID, "payment_id": row.ID, "amount": c.Amount, "asset": a.Symbol, "pay_to": row.PayTo, "splits": x.Splits,
		"resource": x.Resource, "challenge_id": id, "owner_signature": row.OwnerSignature, "fee_payer": row.FeePayer,
	}
	if err := storeSigned(ctx, tx, r, &row, out, audit.ActionMPPSigned, details); err != nil {
		return nil, err
	}
	return out, nil
}

// CauseAlreadyPaid is a Refused MPP charge one of whose challenges the
// account paid before (Outcome.EarlierPayment): nothing was judged or
// signed.
const CauseAlreadyPaid = "already_paid"

// paidBefore answers an MPP pay request whose 402 carries a challenge the
// account already paid, by any of its wallets: refused with
// CauseAlreadyPaid, naming that payment; nil otherwise (an x402 request,
// or a challenge that does not parse: signMPP refuses it). The official
// server keeps no record of the challenges it was paid for, so a second
// payment of one would be taken; and a 402 that repeats a paid challenge
// was answered by that payment, so none of its other challenges is paid
// either. It runs in the decision's transaction, under the wallet's lock
// (the same wallet's decisions see each other's payments); the unique
// (account_id, challenge_id) of x402_payments holds across wallets.
func paidBefore(ctx context.Context, tx bun.Tx, r *Request) (*Outcome, error) {
	if r.X402 == nil || r.X402.Protocol != ProtocolMPP {
		return nil, nil
	}
	cs, err := mpp.ParseChallenges(string(r.X402.Challenge))
	if err != nil {
		return nil, nil
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	var earlier []uuid.UUID
	if err := tx.NewRaw("SELECT id FROM x402_payments WHERE account_id = ? AND protocol = 'mpp' AND challenge_id IN (?) ORDER BY created_at, id LIMIT 1",
		r.AccountID, bun.List(ids)).Scan(ctx, &earlier); err != nil {
		return nil, fmt.Errorf("read the challenges' payments: %w", err)
	}
	if len(earlier) == 0 {
		return nil, nil
	}
	out := &Outcome{Status: Refused, Cause: CauseAlreadyPaid, EarlierPayment: earlier[0],
		Detail: "the seller's challenge was already paid (payment " + earlier[0].String() + "): it is not paid again"}
	return out, setOutcome(ctx, tx, r.ID, out)
}

// MPPReceipt is a seller's Payment-Receipt as kept on its payment.
type MPPReceipt struct {
	Method      string `json:"method"`
	Reference   string `json:"reference"`
	Status      string `json:"status"`
	Timestamp   string `json:"timestamp"`
	ChallengeID string `json:"challenge_id"`
	ExternalID  string `json:"external_id,omitempty"`
}

// sameSplits: the challenge's splits are the ones the policy evaluated.
func sameSplits(cs []mpp.Split, xs []Split) bool {
	if len(cs) != len(xs) {
		return false
	}
	for i, c := range cs {
		if c.Recipient.String() != xs[i].To || int64(c.Amount) != xs[i].Amount {
			return false
		}
	}
	return true
}

// ErrReceiptMismatch: a receipt that is not the seller's answer to this
// payment's challenge.
var ErrReceiptMismatch = errors.New("the receipt is not for this payment")

// RecordMPPReceipt keeps the seller's Payment-Receipt for the account's
// MPP payment id (ErrX402NotFound when it has none): a receipt for
// another challenge, or a failed one, is ErrReceiptMismatch. The receipt
// is the seller's word; the payment is settled by what the chain shows.
// A second receipt replaces nothing: the first is kept (recorded false).
func RecordMPPReceipt(ctx context.Context, db bun.IDB, accountID, id uuid.UUID, rc mpp.Receipt) (recorded bool, err error) {
	var p struct {
		ChallengeID *string         `bun:"challenge_id"`
		Memo        string          `bun:"memo"`
		Receipt     json.RawMessage `bun:"receipt"`
	}
	err = db.NewRaw("SELECT challenge_id, memo, receipt FROM x402_payments WHERE account_id = ? AND id = ? AND protocol = ?", accountID, id, ProtocolMPP).Scan(ctx, &p)
	if errors.Is(err, sql.ErrNoRows) {
		return false, ErrX402NotFound
	}
	if err != nil {
		return false, fmt.Errorf("read MPP payment: %w", err)
	}
	switch {
	case p.ChallengeID == nil || rc.ChallengeID != *p.ChallengeID:
		return false, fmt.Errorf("%w: its challengeId is not the payment's challenge", ErrReceiptMismatch)
	case rc.Status != "success":
		return false, fmt.Errorf("%w: its status is %q, not success", ErrReceiptMismatch, rc.Status)
	case rc.Method != "solana":
		return false, fmt.Errorf("%w: its method is %q, not solana", ErrReceiptMismatch, rc.Method)
	case rc.ExternalID != "" && rc.ExternalID != p.Memo:
		// Seller text is kept only when it is what the charge named.
		return false, fmt.Errorf("%w: its externalId is not the charge's", ErrReceiptMismatch)
	}
	raw, err := json.Marshal(MPPReceipt{Method: rc.Method, Reference: rc.Reference, Status: rc.Status, Timestamp: rc.Timestamp,
		ChallengeID: rc.ChallengeID, ExternalID: rc.ExternalID})
	if err != nil {
		return false, err
	}
	res, err := db.NewRaw("UPDATE x402_payments SET receipt = ?::jsonb, updated_at = now() WHERE id = ? AND receipt IS NULL", string(raw), id).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("record receipt: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
