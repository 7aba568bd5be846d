// Package payment is the send path (docs/decisions/money-path.md): send
// requests, the decision transaction, signing, broadcast and confirmation. The
// API records a request and waits; a worker decides it in one database
// transaction with the wallet row locked, so the daily limit holds under any
// concurrency.
package payment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// MaxMemo is the longest memo, in characters.
const MaxMemo = 200

// Request states: queued → decided (by a worker) or queued → abandoned (by
// the API's timeout or past its deadline). Exactly one transition wins.
const (
	StateQueued    = "queued"
	StateDecided   = "decided"
	StateAbandoned = "abandoned"
)

// Request is a send as the API received it.
type Request struct {
	bun.BaseModel `bun:"table:send_requests"`

	ID        uuid.UUID     `bun:"id,pk,type:uuid"`
	AccountID uuid.UUID     `bun:"account_id,type:uuid"`
	WalletID  uuid.UUID     `bun:"wallet_id,type:uuid"`
	KeyID     uuid.NullUUID `bun:"key_id,type:uuid"`
	// KeyLineage is the requesting key's rotation lineage: no key of it
	// may approve the payment if it is parked.
	KeyLineage uuid.NullUUID `bun:"key_lineage,type:uuid"`
	// UserAddress is the dashboard user who made the send (KeyID is
	// NULL then): its audit entries and approval name them.
	UserAddress *string `bun:"user_address"`
	// Requesters are the actors who may not approve the payment if it is
	// parked (auth.Principal.Requesters).
	Requesters []string       `bun:"requesters,array"`
	Network    solana.Network `bun:"network"`
	To         string         `bun:"to_address"`
	// Asset is the symbol of what is paid (internal/asset's table of the
	// network; USDC when the caller named none), Amount its base units.
	Asset  string         `bun:"asset,nullzero"`
	Amount money.Quantity `bun:"amount_micros"`
	Memo   *string        `bun:"memo"`
	// IdempotencyKey is the client's Idempotency-Key, or nil.
	IdempotencyKey *string `bun:"idempotency_key"`
	// IdempotencyScope is whose the IdempotencyKey is (see the function
	// IdempotencyScope): only its own requests replay or refuse it.
	IdempotencyScope *string `bun:"idempotency_scope"`
	// X402 is the x402 part of a pay request (POST /agents/{id}/x402/pay);
	// nil for a send.
	X402      *X402Request `bun:"x402,type:jsonb"`
	State     string       `bun:"state"`
	Outcome   *Outcome     `bun:"outcome,type:jsonb"`
	CreatedAt time.Time    `bun:"created_at"`
	Deadline  time.Time    `bun:"deadline"`
	DecidedAt bun.NullTime `bun:"decided_at"`
	// Sponsor is the account's enabled fee payer's pubkey as the claim
	// read it (nil: none), sparing the signing a statement.
	Sponsor *string `bun:"sponsor,scanonly"`
}

// Paid is t's amount in the currency it counts in: a euro
// stablecoin's transaction answers euros, and only euros (money.As).
func (t *Transaction) Paid() (money.Amount, error) {
	return money.AmountOf(t.Currency, int64(t.Amount))
}

// Status is the kind of answer a send gets.
type Status string

// The answers to a send.
const (
	Sent            Status = "sent"             // signed and broadcast (or being re-broadcast)
	PendingApproval Status = "pending_approval" // parked for a human
	Blocked         Status = "blocked"          // denied by policy
	// Refused: the node's preflight simulation refused the transaction, so
	// nothing was sent (not enough USDC or SOL, or another simulation error).
	Refused Status = "refused"
	// Unavailable: the Solana node could not be reached before signing;
	// nothing was signed or reserved.
	Unavailable Status = "unavailable"
)

// CauseFeeCapBelowMarket is an Unavailable send whose network's priority
// fee market was above the configured cap: a transaction within the cap
// would not land, so nothing was signed or reserved.
const CauseFeeCapBelowMarket = "fee_cap_below_market"

// CauseFeePayerBudgetExceeded is an Unavailable send that the account's
// fee payer would have paid past its daily budget: nothing was signed or
// reserved.
const CauseFeePayerBudgetExceeded = "fee_payer_budget_exceeded"

// CauseSignerUnavailable is an Unavailable send whose wallet's (or fee
// payer's) signer could not sign: an HSM token absent or locked, Vault
// sealed, KMS throttled. Nothing was signed or reserved.
const CauseSignerUnavailable = "signer_unavailable"

// CauseAccountFrozen is a Refused payment whose wallet's or recipient's
// token account of the asset is frozen (its mint's freeze authority froze
// it): no transfer could land, so nothing was signed or reserved.
const CauseAccountFrozen = "account_frozen"

// ShortFeePayerSOL is a Refused sponsored send whose fee payer lacked the
// SOL for the fee or the rent.
const ShortFeePayerSOL = "fee_payer_SOL"

// remaining sets o's RemainingToday (and its currency) from d.
func (o *Outcome) remaining(d policy.Decision) *Outcome {
	o.RemainingToday, o.Currency = d.RemainingToday.Micros(), d.RemainingToday.Code()
	return o
}

// Outcome is the final answer to a send, stored on its request.
type Outcome struct {
	Status         Status        `json:"status"`
	Signature      string        `json:"signature,omitempty"`
	ApprovalID     uuid.UUID     `json:"approval_id,omitzero"`
	Reason         policy.Reason `json:"reason,omitempty"`
	RemainingToday int64         `json:"remaining_today_micros"`
	// Currency is RemainingToday's: the payment's asset's (empty, as
	// before currencies: USD).
	Currency money.Code `json:"currency,omitempty"`
	// Short names what the wallet lacked ("USDC" or "SOL") when Refused,
	// or ShortFeePayerSOL: the account's fee payer lacked SOL.
	Short string `json:"short,omitempty"`
	// Cause says why a send was Unavailable when the node did answer:
	// CauseFeeCapBelowMarket, CauseFeePayerBudgetExceeded or
	// CauseSignerUnavailable; or why a payment was Refused before it was
	// signed: CauseAccountFrozen, or, for an MPP charge before anything
	// was judged, CauseAlreadyPaid.
	Cause string `json:"cause,omitempty"`
	// EarlierPayment is, with CauseAlreadyPaid, the account's payment of
	// the challenge.
	EarlierPayment uuid.UUID `json:"earlier_payment_id,omitzero"`
	// Detail is the node's message when Refused or Unavailable.
	Detail string `json:"detail,omitempty"`
	// Broadcasting marks a Sent outcome whose first broadcast has not
	// reported yet (a preflight refusal may still turn it into Refused).
	Broadcasting bool `json:"broadcasting,omitempty"`
	// X402 is a Signed x402 payment.
	X402 *X402Signed `json:"x402,omitempty"`
}

// Transaction statuses: pending until it lands (confirmed), or until it
// is rejected on chain, refused or expires unseen (failed).
const (
	TxPending   = "pending"
	TxConfirmed = "confirmed"
	TxFailed    = "failed"
)

// Transaction is an on-chain transfer from an agent wallet.
type Transaction struct {
	bun.BaseModel `bun:"table:transactions"`

	ID         uuid.UUID      `bun:"id,pk,type:uuid"`
	AccountID  uuid.UUID      `bun:"account_id,type:uuid"`
	WalletID   uuid.UUID      `bun:"wallet_id,type:uuid"`
	RequestID  uuid.NullUUID  `bun:"request_id,type:uuid"`
	ApprovalID uuid.NullUUID  `bun:"approval_id,type:uuid"`
	Network    solana.Network `bun:"network"`
	Signature  string         `bun:"signature"`
	Kind       string         `bun:"kind"`
	Direction  string         `bun:"direction"`
	// Asset is the symbol of what moved, Currency the one it counts in
	// (the policy's limits are per currency).
	Asset                string         `bun:"asset,nullzero"`
	Currency             money.Code     `bun:"currency,nullzero"`
	Amount               money.Quantity `bun:"amount_micros"`
	Counterparty         string         `bun:"counterparty"`
	Memo                 *string        `bun:"memo"`
	Status               string         `bun:"status"`
	Error                *string        `bun:"error"`
	SignedTx             []byte         `bun:"signed_tx"`
	LastValidBlockHeight uint64         `bun:"last_valid_block_height"`
	// ExpirySlot is the slot at which the current attempt's blockhash was
	// first seen expired (zero: not yet); the sweep takes a node's "not
	// found" only from an answer at or past it.
	ExpirySlot uint64 `bun:"expiry_slot,nullzero"`
	Broadcasts int    `bun:"broadcasts"`
	// FeeLamports is the network fee it pays if it lands: the base fee and
	// the priority fee on its requested compute units (null before 0015).
	FeeLamports *int64 `bun:"fee_lamports"`
	// FeePayer is the account's fee payer that signed and pays it (nil:
	// the wallet pays), and SponsoredLamports what it pays if it lands:
	// the fee and the rent of the recipient's token account if the
	// transfer may make it (counted against its daily budget).
	FeePayer          *string `bun:"fee_payer"`
	SponsoredLamports *int64  `bun:"sponsored_lamports"`
	// Attempts counts the transactions signed for this payment: one more
	// each time the current one expired unseen and was signed again
	// (resign.go). Signature, SignedTx, LastValidBlockHeight and
	// FeeLamports are the current attempt's.
	Attempts int `bun:"attempts,nullzero"`
	// RefusedAt: the node refused its first broadcast; it is never sent
	// again, and fails (releasing its reservation) once its blockhash has
	// expired.
	RefusedAt bun.NullTime `bun:"refused_at"`
	// Resource is what an x402 payment (Kind x402) bought.
	Resource  *string   `bun:"resource"`
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
	// PreviousSignatures (list reads) are the signatures of its earlier,
	// expired attempts, oldest first.
	PreviousSignatures []string `bun:"previous_signatures,array,scanonly"`
	// InGrace (sweep reads): committed less than firstBroadcastGrace ago
	// on the database's clock.
	InGrace bool `bun:"in_grace,scanonly"`
}

// ErrAbandoned means the send was not decided within the wait: it was
// abandoned and will never execute.
var ErrAbandoned = errors.New("send not decided in time; it was abandoned and will not execute")

// ErrUnknown means the send's fate could not be established (the database
// did not answer): it may still execute, so it must not be retried blindly.
var ErrUnknown = errors.New("the send's outcome is not known")

// now is the clock's time as Postgres keeps it (microseconds, UTC).
func now(clock func() time.Time) time.Time {
	return clock().UTC().Truncate(time.Microsecond)
}

// TxFilter selects transactions of an account: zero fields select all.
// Pages are newest first (creation time, then id); After continues strictly
// after a row, so rows inserted meanwhile never shift a page.
type TxFilter struct {
	WalletID uuid.NullUUID
	// Wallets, when not nil, limits the list to these wallets (a key's
	// wallet scope).
	Wallets []uuid.UUID
	Status  string
	// Asset, when set, selects one asset's (its symbol).
	Asset        string
	Since, Until time.Time // Since inclusive, Until exclusive
	AfterTime    time.Time
	AfterID      uuid.UUID
	Limit        int
}

// ListTransactions returns the account's transactions that f selects,
// newest first.
func ListTransactions(ctx context.Context, db bun.IDB, accountID uuid.UUID, f TxFilter) ([]Transaction, error) {
	ts := []Transaction{}
	q := db.NewSelect().Model(&ts).ExcludeColumn("signed_tx").
		ColumnExpr(`(SELECT array_agg(a.signature ORDER BY a.attempt) FROM transaction_attempts AS a
			WHERE a.transaction_id = "transaction".id) AS previous_signatures`).
		Where("account_id = ?", accountID)
	if err := f.Select(q).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	return ts, nil
}

// Select applies f to q, a query of rows with wallet_id, status,
// created_at and id (transactions, deposits): newest first, a page.
func (f TxFilter) Select(q *bun.SelectQuery) *bun.SelectQuery {
	q = q.Order("created_at DESC", "id DESC").Limit(int64(f.Limit))
	if f.WalletID.Valid {
		q = q.Where("wallet_id = ?", f.WalletID.UUID)
	}
	if f.Wallets != nil {
		q = q.Where("wallet_id IN (?)", bun.List(f.Wallets))
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.Asset != "" {
		q = q.Where("asset = ?", f.Asset)
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		q = q.Where("created_at < ?", f.Until)
	}
	if !f.AfterTime.IsZero() {
		q = q.Where("(created_at, id) < (?, ?)", f.AfterTime, f.AfterID)
	}
	return q
}

// TransactionStatus is the status of the account's transaction with
// signature ("" when there is none). A signature of an earlier attempt
// (one that expired and was signed again) finds its payment's status.
func TransactionStatus(ctx context.Context, db bun.IDB, accountID uuid.UUID, signature string) (string, error) {
	var status string
	err := db.NewSelect().Table("transactions").Column("status").
		Where("account_id = ?", accountID).
		Where("(signature = ? OR id = (SELECT transaction_id FROM transaction_attempts WHERE signature = ?))", signature, signature).
		Scan(ctx, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read transaction status: %w", err)
	}
	return status, nil
}
