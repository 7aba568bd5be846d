package payment

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/webhook"
	"github.com/agentwallet/agentwallet/internal/x402"
)

// Signed is the answer to an x402 pay request the policy allowed: the
// payment is signed (partially: the seller's fee payer signs at
// settlement) and handed to the caller; nothing is broadcast by us.
const Signed Status = "signed"

// The protocols of a payment to a seller answering 402.
const (
	ProtocolX402 = "x402"
	ProtocolMPP  = "mpp"
)

// X402Request is the seller's part of a pay request (x402, or MPP's
// Solana charge), stored on its send_requests row: a Choice cannot cross
// processes, so the worker parses the challenge again and selects with
// the same wallet and cap, and signs only if it chooses the same entry
// and amount.
type X402Request struct {
	// Protocol is ProtocolMPP for an MPP charge; empty is x402.
	Protocol string `json:"protocol,omitempty"`
	// Challenge is the PaymentRequired JSON exactly as received (base64
	// in the stored JSON, so jsonb never reorders what the seller matches);
	// for MPP, the WWW-Authenticate value as received.
	Challenge   []byte `json:"challenge"`
	Index       int    `json:"index"`
	Max         *int64 `json:"max_micros,omitempty"`
	Resource    string `json:"resource"`
	Description string `json:"description,omitempty"`
	Version     int    `json:"version"`
	NetworkID   string `json:"network_id"`
	// ApprovalID is the grant the caller presented (approval_id), if any.
	ApprovalID uuid.NullUUID `json:"approval_id,omitzero"`
	// An MPP charge's challenge id and realm (the seller), and its split
	// recipients: what an approval of it grants, besides the primary
	// recipient, amount, asset, network and resource.
	ChallengeID string  `json:"challenge_id,omitempty"`
	Realm       string  `json:"realm,omitempty"`
	Splits      []Split `json:"splits,omitempty"`
}

// Split is one further recipient of an MPP charge and its share.
type Split struct {
	To string `json:"to"`
	// Amount is in the asset's base units (an integer in the JSON).
	Amount int64 `json:"amount_micros"`
}

// Kind is the protocol's name, as transactions, events and audit
// entries name the payment: x402 or mpp.
func (x *X402Request) Kind() string {
	if x != nil && x.Protocol == ProtocolMPP {
		return ProtocolMPP
	}
	return ProtocolX402
}

// also is the payment's recipients besides the primary one (policy.Request.Also).
func (x *X402Request) also() []string {
	if x == nil {
		return nil
	}
	to := make([]string, len(x.Splits))
	for i, s := range x.Splits {
		to[i] = s.To
	}
	return to
}

// digest identifies what was asked, for Idempotency-Key comparison.
func (x *X402Request) digest() string {
	if x == nil {
		return ""
	}
	h := sha256.New()
	h.Write(x.Challenge)
	max := ""
	if x.Max != nil {
		max = strconv.FormatInt(*x.Max, 10)
	}
	fmt.Fprintf(h, "\x00%s\x00%s\x00%s\x00%s", x.Resource, max, x.ApprovalID.UUID, x.Kind())
	return hex.EncodeToString(h.Sum(nil))
}

// X402Signed is a signed payment as the pay request answers it.
type X402Signed struct {
	PaymentID uuid.UUID `json:"payment_id"`
	Header    string    `json:"header"`
	Value     string    `json:"value"`
	Amount    int64     `json:"amount_micros"`
	PayTo     string    `json:"pay_to"`
	Network   string    `json:"network"`
	Resource  string    `json:"resource"`
}

// x402 payment states.
const (
	X402StateSigned = "signed"
	X402Settled     = "settled"
	X402Expired     = "expired"
	X402Failed      = "failed"
	X402Pending     = "pending_approval"
	X402Rejected    = "rejected"
)

// X402Payment is a signed x402 payment; its id is its pay request's.
type X402Payment struct {
	bun.BaseModel `bun:"table:x402_payments,alias:p"`

	ID        uuid.UUID `bun:"id,pk,type:uuid"`
	AccountID uuid.UUID `bun:"account_id,type:uuid"`
	WalletID  uuid.UUID `bun:"wallet_id,type:uuid"`
	RequestID uuid.UUID `bun:"request_id,type:uuid"`
	// ApprovalID is the grant this payment redeemed, if any.
	ApprovalID  uuid.NullUUID   `bun:"approval_id,type:uuid"`
	Network     solana.Network  `bun:"network"`
	Version     int             `bun:"x402_version"`
	Challenge   json.RawMessage `bun:"challenge,type:jsonb"`
	ChoiceIndex int             `bun:"choice_index"`
	Amount      money.Quantity  `bun:"amount_micros"`
	PayTo       string          `bun:"pay_to"`
	Asset       string          `bun:"asset"`
	// Symbol is the asset's in the service's table; Currency the one its
	// amount counts in under the policy.
	Symbol               string        `bun:"symbol,nullzero"`
	Currency             money.Code    `bun:"currency,nullzero"`
	FeePayer             string        `bun:"fee_payer"`
	Resource             string        `bun:"resource"`
	Description          *string       `bun:"description"`
	Memo                 string        `bun:"memo"`
	OwnerSignature       string        `bun:"owner_signature"`
	SourceATA            string        `bun:"source_ata"`
	DestinationATA       string        `bun:"destination_ata"`
	Header               string        `bun:"header"`
	PaymentSignature     string        `bun:"payment_signature"`
	SignedTx             []byte        `bun:"signed_tx"`
	LastValidBlockHeight uint64        `bun:"last_valid_block_height"`
	State                string        `bun:"state"`
	Error                *string       `bun:"error"`
	Signature            *string       `bun:"signature"`
	TransactionID        uuid.NullUUID `bun:"transaction_id,type:uuid"`
	CreatedAt            time.Time     `bun:"created_at"`
	UpdatedAt            time.Time     `bun:"updated_at"`
	// SearchBefore is where the search for it on chain goes on (a Cursor
	// of a search made after it could last land); CheckedAt when it was
	// last searched for (the sweep takes the least recently searched).
	SearchBefore *string    `bun:"search_before"`
	CheckedAt    *time.Time `bun:"checked_at"`
	// ExpirySlot is the slot at which its blockhash was first seen expired
	// (zero: not yet): a search counts "not found" only from an answer at
	// or past it.
	ExpirySlot uint64 `bun:"expiry_slot,nullzero"`
	// Protocol is x402 or mpp. An MPP payment also keeps its challenge's
	// id and expiry, its split recipients, and the seller's receipt once
	// the agent reports it.
	Protocol    string          `bun:"protocol"`
	ChallengeID *string         `bun:"challenge_id"`
	ExpiresAt   *time.Time      `bun:"expires_at"`
	Splits      json.RawMessage `bun:"splits,type:jsonb,nullzero"`
	Receipt     json.RawMessage `bun:"receipt,type:jsonb,nullzero"`
}

// signX402 signs an allowed x402 pay request with the wallet's key (only
// here, in the worker) and stores the payment, reserving its amount
// (ReservedToday counts signed payments) in the decision's transaction.
// Nothing is broadcast: the caller presents the header to the seller,
// whose facilitator adds the fee payer's signature and submits it.
func (e *Engine) signX402(ctx context.Context, tx bun.Tx, node Node, r *Request, w *wallet.Wallet, a asset.Asset, d policy.Decision, at time.Time) (*Outcome, error) {
	x := r.X402
	if x.Protocol == ProtocolMPP {
		return e.signMPP(ctx, tx, node, r, w, a, d, at)
	}
	refuse := func(detail string) (*Outcome, error) {
		out := (&Outcome{Status: Refused, Detail: detail}).remaining(d)
		return out, setOutcome(ctx, tx, r.ID, out)
	}
	pr, err := x402.ParsePaymentRequired(x.Challenge)
	if err != nil {
		return refuse(err.Error())
	}
	var max *money.Quantity // the caller's cap, in whole units of the asset paid
	if x.Max != nil {
		m := money.Quantity(*x.Max)
		max = &m
	}
	c, err := pr.Select(x402.Wallet{Network: r.Network, Owner: w.PublicKey(), Tokens: PayableTokens(e.Assets, r.Network, w.Policy())}, max)
	if err != nil {
		return refuse(err.Error())
	}
	if c.Index != x.Index || c.Amount != r.Amount || c.PayTo.String() != r.To {
		return refuse("the challenge no longer selects the payment the policy evaluated")
	}
	bh, refused, err := e.readyToSign(ctx, node, w, c.Token, c.PayTo)
	if refused != nil {
		refused.remaining(d)
		return refused, setOutcome(ctx, tx, r.ID, refused)
	}
	if err != nil {
		out := (&Outcome{Status: Unavailable, Detail: "the Solana node did not answer"}).remaining(d)
		return out, setOutcome(ctx, tx, r.ID, out)
	}
	p, err := x402.Pay(ctx, c, w.PublicKey(), signer.For(e.Signer, w.Key()), bh.Hash, x402.BuildOptions{})
	if err != nil {
		return refuse(err.Error())
	}
	var desc *string
	if x.Description != "" {
		desc = &x.Description
	}
	row := X402Payment{
		ID: r.ID, AccountID: r.AccountID, WalletID: r.WalletID, RequestID: r.ID, Network: r.Network,
		Version: c.Version, Challenge: x.Challenge, ChoiceIndex: c.Index, Amount: c.Amount,
		PayTo: c.PayTo.String(), Asset: c.Asset.String(), Symbol: a.Symbol, Currency: a.Currency, FeePayer: c.FeePayer.String(),
		Resource: x.Resource, Description: desc, Memo: p.Transaction.Memo,
		OwnerSignature: p.Transaction.OwnerSignature.String(),
		SourceATA:      p.Transaction.SourceATA.String(), DestinationATA: p.Transaction.DestinationATA.String(),
		Header: p.Header, PaymentSignature: p.Value, SignedTx: p.Transaction.Wire,
		LastValidBlockHeight: bh.LastValidBlockHeight, State: X402StateSigned, CreatedAt: at, UpdatedAt: at,
		ApprovalID: x.ApprovalID, Protocol: ProtocolX402,
	}
	// What the day still allows after it, in the payment's currency.
	out := &Outcome{Status: Signed, RemainingToday: d.RemainingToday.Micros() - int64(c.Amount), Currency: a.Currency, X402: &X402Signed{
		PaymentID: row.ID, Header: p.Header, Value: p.Value, Amount: int64(c.Amount), PayTo: row.PayTo,
		Network: x.NetworkID, Resource: x.Resource,
	}}
	details := map[string]any{
		"request_id": r.ID, "payment_id": row.ID, "amount": c.Amount, "asset": a.Symbol, "pay_to": row.PayTo, "resource": x.Resource,
		"owner_signature": row.OwnerSignature,
	}
	if err := storeSigned(ctx, tx, r, &row, out, audit.ActionX402Signed, details); err != nil {
		return nil, err
	}
	return out, nil
}

// signedColumns are the columns storeSigned writes; the others of
// x402_payments start NULL (or at their defaults).
var signedColumns = []string{
	"id", "account_id", "wallet_id", "request_id", "approval_id", "network", "x402_version", "challenge", "choice_index",
	"amount_micros", "pay_to", "asset", "symbol", "currency", "fee_payer", "resource", "description", "memo",
	"owner_signature", "source_ata", "destination_ata", "header", "payment_signature", "signed_tx",
	"last_valid_block_height", "state", "created_at", "updated_at", "protocol", "challenge_id", "expires_at", "splits",
}

// storeSignedWith is the statement before storeSigned's audit entry: the
// payment's insert and its request's outcome ($n+1, $n+2 after the n
// columns).
var storeSignedWith = func() string {
	n := len(signedColumns)
	ph := make([]string, n)
	for i := range ph {
		ph[i] = fmt.Sprintf("$%d", i+1)
	}
	return fmt.Sprintf(`p AS (INSERT INTO x402_payments (%s) VALUES (%s)),
		o AS (UPDATE send_requests SET outcome = $%d WHERE id = $%d)`, strings.Join(signedColumns, ", "), strings.Join(ph, ", "), n+1, n+2)
}()

// storeSigned records a signed payment to a seller (x402 or MPP), its
// request's outcome and its audit entry in one statement, the decision's
// last, as a send's outcome and entry are: one round trip instead of
// three while the wallet's lock is held. A unique index the payment
// breaks (its grant or its MPP challenge already used) fails the
// statement, and the decision with it.
func storeSigned(ctx context.Context, tx bun.Tx, r *Request, p *X402Payment, out *Outcome, action string, details map[string]any) error {
	var splits any
	if p.Splits != nil {
		splits = string(p.Splits)
	}
	args := []any{
		p.ID, p.AccountID, p.WalletID, p.RequestID, p.ApprovalID, p.Network, p.Version, string(p.Challenge), p.ChoiceIndex,
		int64(p.Amount), p.PayTo, p.Asset, p.Symbol, p.Currency, p.FeePayer, p.Resource, p.Description, p.Memo,
		p.OwnerSignature, p.SourceATA, p.DestinationATA, p.Header, p.PaymentSignature, p.SignedTx,
		int64(p.LastValidBlockHeight), p.State, p.CreatedAt.UTC(), p.UpdatedAt.UTC(), p.Protocol, p.ChallengeID, p.ExpiresAt, splits,
		out, r.ID,
	}
	err := audit.AppendWith(ctx, tx, storeSignedWith, args, audit.Entry{
		AccountID: r.AccountID,
		At:        p.CreatedAt,
		Actor:     actorOf(r),
		Action:    action,
		Target:    wallet.Target(r.WalletID),
		Details:   details,
	})
	if err != nil {
		return fmt.Errorf("store %s payment, outcome and audit entry: %w", p.Protocol, err)
	}
	return nil
}

// readyToSign checks, before a payment to a seller is signed, that the
// network's node is verified; for a Token-2022 asset, that the service
// can send its mint (Select does not read the chain: a hook, a fee
// withheld or a pause is refused); and that neither the wallet's account
// nor a recipient's (to) is frozen. A refusal is the Outcome to answer
// (nothing signed); else it reads the blockhash to sign with. err: the
// node did not answer (nothing signed).
func (e *Engine) readyToSign(ctx context.Context, node Node, w *wallet.Wallet, tk solana.Token, to ...sol.PublicKey) (solana.Blockhash, *Outcome, error) {
	if err := node.Client.ChainErr(); err != nil {
		e.log().ErrorContext(ctx, "the network's Solana node is not verified; nothing signed", "wallet_id", w.ID, "err", err)
		return solana.Blockhash{}, nil, err
	}
	if tk.Is2022() {
		tctx, cancel := context.WithTimeout(ctx, feeReadWait)
		_, err := node.Client.TokenTerms(tctx, tk)
		cancel()
		var unsupported *solana.UnsupportedTokenError
		if errors.As(err, &unsupported) {
			return solana.Blockhash{}, &Outcome{Status: Refused, Detail: unsupported.Error()}, nil
		} else if err != nil {
			e.log().WarnContext(ctx, "token mint not read; nothing signed", "asset", tk.Symbol, "err", err)
			return solana.Blockhash{}, nil, err
		}
	}
	sctx, cancel := context.WithTimeout(ctx, feeReadWait)
	states, err := node.Client.TokenAccountStates(sctx, tk, append([]sol.PublicKey{w.PublicKey()}, to...)...)
	cancel()
	if err != nil {
		// Left to the seller's (or the facilitator's) simulation, as a
		// send leaves it to the node's preflight.
		e.log().WarnContext(ctx, "the wallet's and the seller's token accounts not read; whether they are frozen is left to the seller", "err", err)
	} else if err := frozenIn(states, tk); err != nil {
		out, _ := unsigned(err)
		return solana.Blockhash{}, out, nil
	}
	bctx, cancel := context.WithTimeout(ctx, time.Second)
	bh, err := node.Blockhashes.Get(bctx)
	cancel()
	if err != nil {
		e.log().WarnContext(ctx, "no blockhash; nothing signed", "wallet_id", w.ID, "err", err)
	}
	return bh, nil, err
}

// MaxX402SweepChecks bounds the signed payments one sweep looks for on
// chain per network (each costs a few RPC calls); the rest wait for the
// next sweep, oldest first.
const MaxX402SweepChecks = 32

// sweepX402 learns from the chain what became of signed x402 payments:
// landed → settled, with a confirmed transaction of kind x402 and tx.sent;
// not found by a node past the payment's last valid height (plus the
// margin) → expired, its reservation released, with x402.expired. Height
// and search come from one node (solana.Client.FindLanding), and a node
// without transaction history never expires anything.
func (e *Engine) sweepX402(ctx context.Context, network solana.Network, node Node, st *SweepStats) error {
	if err := node.Client.ChainErr(); err != nil {
		return err
	}
	var ps []X402Payment
	// The least recently searched first: a payment that cannot be
	// resolved yet never holds up the others.
	if err := e.DB.NewSelect().Model(&ps).Where("state = ? AND network = ?", X402StateSigned, network).
		OrderExpr("checked_at ASC NULLS FIRST, created_at, id").Limit(MaxX402SweepChecks).Scan(ctx); err != nil {
		return fmt.Errorf("read signed x402 payments: %w", err)
	}
	var errs []error
	for i := range ps {
		p := &ps[i]
		st.Checked++
		if err := e.checkX402(ctx, network, node, p, st); err != nil {
			errs = append(errs, fmt.Errorf("x402 payment %s: %w", p.ID, err))
		}
	}
	return errors.Join(errs...)
}

// checkX402 searches the chain for one signed payment and records what it
// found (see sweepX402).
func (e *Engine) checkX402(ctx context.Context, network solana.Network, node Node, p *X402Payment, st *SweepStats) error {
	src, err := sol.PublicKeyFromBase58(p.SourceATA)
	if err != nil {
		return err
	}
	owner, err := sol.SignatureFromBase58(p.OwnerSignature)
	if err != nil {
		return err
	}
	var from sol.Signature
	if p.SearchBefore != nil {
		if from, err = sol.SignatureFromBase58(*p.SearchBefore); err != nil {
			return err
		}
	}
	l, err := node.Client.FindLanding(ctx, src, owner, p.Memo, p.CreatedAt, from, p.ExpirySlot)
	past := err == nil && l.Height > p.LastValidBlockHeight+expiryMargin
	// Searched (or tried): to the back of the queue. A search cut short
	// after the payment could last land goes on from where it stopped.
	// First seen expired: from now on the search asks for answers at or
	// past this slot, and only such an answer's "not found" counts.
	q := e.DB.NewUpdate().Table("x402_payments").Set("checked_at = clock_timestamp()").Where("id = ? AND state = ?", p.ID, X402StateSigned)
	if past && !l.Found && !l.Complete && !l.Cursor.IsZero() {
		q = q.Set("search_before = ?", l.Cursor.String())
	}
	if past && !l.Found && p.ExpirySlot == 0 {
		q = q.Set("expiry_slot = ?", l.Slot)
	}
	if _, uerr := q.Exec(ctx); uerr != nil {
		return errors.Join(err, fmt.Errorf("record the search: %w", uerr))
	}
	if err != nil {
		return err
	}
	switch {
	case l.Found && l.Err == "":
		return e.settleX402(ctx, p, l.Signature, st)
	case l.Found:
		return e.endX402(ctx, p, X402Failed, "rejected on chain: "+l.Err, &l.Signature, st)
	case !past:
		// It may still land.
	case p.ExpirySlot == 0:
		// Seen expired for the first time: the next sweep searches for
		// answers from this slot on.
	case !l.Absent:
		e.log().WarnContext(ctx, "x402 payment past its blockhash not found yet, but not conclusively: it waits (a node behind, no transaction history, a second node that disagrees, or more transactions than one search reads; the next sweep reads on)",
			"network", network, "payment_id", p.ID, "why", l.Doubt)
	default:
		return e.endX402(ctx, p, X402Expired, "its blockhash expired before the seller settled it", nil, st)
	}
	return nil
}

// settleX402 records a landed payment: its reservation becomes a confirmed
// transaction of kind x402 (same day, same amount) in the statement that
// ends it, so the daily total never counts it twice or drops it.
func (e *Engine) settleX402(ctx context.Context, p *X402Payment, signature string, st *SweepStats) error {
	return e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var live bool
		err := tx.NewRaw("SELECT true FROM x402_payments WHERE id = ? AND state = ? FOR UPDATE", p.ID, X402StateSigned).Scan(ctx, &live)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("lock x402 payment: %w", err)
		}
		at := e.now()
		memo, resource := p.Memo, p.Resource
		t := Transaction{
			ID: uuid.New(), AccountID: p.AccountID, WalletID: p.WalletID,
			RequestID: uuid.NullUUID{UUID: p.RequestID, Valid: true},
			Network:   p.Network, Signature: signature, Kind: p.Protocol, Direction: "send",
			Asset: p.Symbol, Currency: p.Currency, Amount: p.Amount, Counterparty: p.PayTo, Memo: &memo, Status: TxConfirmed,
			SignedTx: p.SignedTx, LastValidBlockHeight: p.LastValidBlockHeight, Broadcasts: 0, Attempts: 1,
			Resource: &resource, CreatedAt: p.CreatedAt, UpdatedAt: at,
		}
		if _, err := tx.NewInsert().Model(&t).Exec(ctx); err != nil {
			return fmt.Errorf("insert x402 transaction: %w", err)
		}
		if _, err := tx.NewUpdate().Table("x402_payments").Set("state = ?", X402Settled).Set("signature = ?", signature).
			Set("transaction_id = ?", t.ID).Set("updated_at = ?", at).Where("id = ?", p.ID).Exec(ctx); err != nil {
			return fmt.Errorf("settle x402 payment: %w", err)
		}
		st.Confirmed++
		data := map[string]any{
			"wallet_id": p.WalletID, "signature": signature, "amount": p.Amount, "asset": p.Symbol, "to": p.PayTo, "memo": p.Memo,
			"kind": p.Protocol, "resource": p.Resource, "payment_id": p.ID,
		}
		_, err = webhook.Emit(ctx, tx, p.AccountID, at, webhook.KindTxSent, data)
		return err
	})
}

// endX402 ends a signed payment that will never land (expired) or landed
// failed (failed): its reservation is released, with x402.expired.
func (e *Engine) endX402(ctx context.Context, p *X402Payment, state, why string, signature *string, st *SweepStats) error {
	return e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		at := e.now()
		res, err := tx.NewUpdate().Table("x402_payments").Set("state = ?", state).Set("error = ?", why).
			Set("updated_at = ?", at).Where("id = ? AND state = ?", p.ID, X402StateSigned).Exec(ctx)
		if err != nil {
			return fmt.Errorf("end x402 payment: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		st.Failed++
		var actor string
		// audit.Actor's spellings, in SQL.
		if err := tx.NewRaw(`SELECT COALESCE('key_' || key_id::text, 'user:' || user_address, 'system') FROM send_requests WHERE id = ?`,
			p.RequestID).Scan(ctx, &actor); err != nil {
			return fmt.Errorf("read the payment's requester: %w", err)
		}
		details := map[string]any{"payment_id": p.ID, "amount": p.Amount, "asset": p.Symbol, "pay_to": p.PayTo, "resource": p.Resource, "state": state, "error": why}
		action, kind := audit.ActionX402Expired, webhook.KindX402Expired
		if p.Protocol == ProtocolMPP {
			action, kind = audit.ActionMPPExpired, webhook.KindMPPExpired
		}
		if err := audit.Append(ctx, tx, audit.Entry{
			AccountID: p.AccountID,
			At:        at,
			Actor:     audit.Actor(actor),
			Action:    action,
			Target:    wallet.Target(p.WalletID),
			Details:   details,
		}); err != nil {
			return err
		}
		data := map[string]any{
			"payment_id": p.ID, "wallet_id": p.WalletID, "amount": p.Amount, "asset": p.Symbol, "pay_to": p.PayTo, "resource": p.Resource,
			"state": state, "reason": why, "signature": signature,
		}
		_, err = webhook.Emit(ctx, tx, p.AccountID, at, kind, data)
		return err
	})
}

// lockGrant locks an approval an x402 pay request presents (nil when
// there is none: checkGrant says so).
func lockGrant(ctx context.Context, tx bun.Tx, id uuid.UUID) (*approval.Approval, error) {
	var a approval.Approval
	err := tx.NewSelect().Model(&a).Where("id = ?", id).For("UPDATE").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock grant: %w", err)
	}
	return &a, nil
}

// checkGrant says why r may not redeem the approval a ("" when it may):
// an approved x402 approval of the same wallet, granted within
// approval.GrantLifetime (on the database's clock, r's decision time),
// never redeemed, for the same payTo, network (so asset: the network's
// USDC) and resource, and an amount at most the approved one.
func checkGrant(ctx context.Context, tx bun.Tx, r *Request, a *approval.Approval) (string, error) {
	if a == nil || a.AccountID != r.AccountID || a.WalletID != r.WalletID {
		return "no approval of this wallet has this id", nil
	}
	var orig struct {
		X402 *X402Request `bun:"x402,type:jsonb"`
	}
	if a.RequestID.Valid {
		if err := tx.NewSelect().Table("send_requests").Column("x402").Where("id = ?", a.RequestID.UUID).Scan(ctx, &orig); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return "", fmt.Errorf("read the approval's request: %w", err)
		}
	}
	var used bool
	if err := tx.NewRaw("SELECT EXISTS (SELECT 1 FROM x402_payments WHERE approval_id = ?)", a.ID).Scan(ctx, &used); err != nil {
		return "", fmt.Errorf("read the grant's use: %w", err)
	}
	switch {
	case orig.X402 == nil:
		return "not an approval of a payment to a seller", nil
	case orig.X402.Kind() != r.X402.Kind():
		return fmt.Sprintf("an approval of an %s payment, not %s", orig.X402.Kind(), r.X402.Kind()), nil
	case a.Status != approval.Sent || a.Signature != nil:
		return fmt.Sprintf("the approval is %s, not approved", a.Status), nil
	case used:
		return "the approval was already used for a payment", nil
	case a.DecidedAt.IsZero() || !r.DecidedAt.Time.Before(a.DecidedAt.Time.Add(approval.GrantLifetime)):
		return fmt.Sprintf("the approval was granted more than %s ago", approval.GrantLifetime), nil
	case r.To != a.To:
		return "the challenge's payTo is not the approved one", nil
	case r.X402.NetworkID != orig.X402.NetworkID:
		return "the challenge's network is not the approved one", nil
	case r.X402.Resource != orig.X402.Resource:
		return "the challenge's resource is not the approved one", nil
	case r.Asset != a.Asset:
		return fmt.Sprintf("the challenge is paid in %s, the approval was for %s", r.Asset, a.Asset), nil
	case r.X402.Realm != orig.X402.Realm:
		return "the challenge's realm is not the approved one", nil
	case !slices.Equal(r.X402.Splits, orig.X402.Splits):
		return "the challenge's split recipients or their shares are not the approved ones", nil
	case r.Amount > a.Amount:
		return fmt.Sprintf("the challenge's amount %s %s is over the approved %s", r.Amount, a.Asset, a.Amount), nil
	}
	return "", nil
}
