package payment

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/money"
)

// ErrX402NotFound: no x402 payment of the account has that id.
var ErrX402NotFound = errors.New("x402 payment not found")

// X402View is an x402 payment as the API reads it: a signed payment
// (signed, settled, expired, failed) or a pay request parked for approval
// (pending_approval; approved: granted, PaidBy names the payment that
// redeemed it once it did; expired: granted but not redeemed within
// approval.GrantLifetime; rejected: the approval was rejected or
// expired). Its id is its pay request's.
type X402View struct {
	ID            uuid.UUID      `bun:"id"`
	AccountID     uuid.UUID      `bun:"account_id"`
	WalletID      uuid.UUID      `bun:"wallet_id"`
	State         string         `bun:"state"`
	Amount        money.Quantity `bun:"amount_micros"`
	PayTo         string         `bun:"pay_to"`
	X402          *X402Request   `bun:"x402,type:jsonb"`
	Signature     *string        `bun:"signature"`
	Error         *string        `bun:"error"`
	ApprovalID    uuid.NullUUID  `bun:"approval_id"`
	GrantApproval uuid.NullUUID  `bun:"grant_approval_id"`
	PaidBy        uuid.NullUUID  `bun:"paid_by"`
	// Protocol is x402 or mpp; Asset the symbol paid; FeePayer who pays
	// the fee (the seller's fee payer, or for an MPP charge without one
	// the wallet); Receipt an MPP seller's receipt, as the agent reported it.
	Protocol  string          `bun:"protocol"`
	Asset     string          `bun:"asset"`
	FeePayer  *string         `bun:"fee_payer"`
	Receipt   json.RawMessage `bun:"receipt"`
	CreatedAt time.Time       `bun:"created_at"`
	UpdatedAt time.Time       `bun:"updated_at"`
}

// x402ViewQuery reads views: signed payments and parked pay requests. A
// grant's lapse is read on the database's clock, as checkGrant decides it.
var x402ViewQuery = fmt.Sprintf(`SELECT * FROM (SELECT r.id, r.account_id, r.wallet_id, r.amount_micros, r.to_address AS pay_to, r.x402,
		r.created_at, COALESCE(p.updated_at, a.decided_at, r.created_at) AS updated_at,
		p.signature, p.error, a.id AS approval_id, COALESCE(r.x402 ->> 'protocol', 'x402') AS protocol, r.asset, p.fee_payer, p.receipt,
		(r.x402 ->> 'approval_id')::uuid AS grant_approval_id, g.id AS paid_by,
		CASE WHEN p.id IS NOT NULL THEN p.state
			WHEN a.status IN ('pending', 'signing') THEN 'pending_approval'
			WHEN a.status = 'sent' AND g.id IS NULL AND a.decided_at + interval '%d seconds' <= now() THEN 'expired'
			WHEN a.status = 'sent' THEN 'approved'
			ELSE 'rejected' END AS state
	FROM send_requests AS r
	LEFT JOIN x402_payments AS p ON p.id = r.id
	LEFT JOIN approvals AS a ON a.request_id = r.id
	LEFT JOIN x402_payments AS g ON g.approval_id = a.id
	WHERE r.x402 IS NOT NULL AND (p.id IS NOT NULL OR a.id IS NOT NULL)) AS v`, int(approval.GrantLifetime/time.Second))

// GetX402 is the account's payment id of protocol (ProtocolX402 or
// ProtocolMPP; ErrX402NotFound otherwise).
func GetX402(ctx context.Context, db bun.IDB, protocol string, accountID, id uuid.UUID) (X402View, error) {
	var v X402View
	err := db.NewRaw(x402ViewQuery+` WHERE v.account_id = ? AND v.id = ? AND v.protocol = ?`, accountID, id, protocol).Scan(ctx, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return v, ErrX402NotFound
	}
	if err != nil {
		return v, fmt.Errorf("read x402 payment: %w", err)
	}
	return v, nil
}

// X402Filter selects an account's payments of one protocol (x402 when
// empty); pages as TxFilter's.
type X402Filter struct {
	Protocol     string
	WalletID     uuid.NullUUID
	Wallets      []uuid.UUID
	State        string
	Asset        string // a symbol, upper case
	Since, Until time.Time
	AfterTime    time.Time
	AfterID      uuid.UUID
	Limit        int
}

// ListX402 returns the account's x402 payments that f selects, newest first.
func ListX402(ctx context.Context, db bun.IDB, accountID uuid.UUID, f X402Filter) ([]X402View, error) {
	where := []string{"v.account_id = ?", "v.protocol = ?"}
	args := []any{accountID, cmp.Or(f.Protocol, ProtocolX402)}
	add := func(cond string, a ...any) { where = append(where, cond); args = append(args, a...) }
	if f.WalletID.Valid {
		add("v.wallet_id = ?", f.WalletID.UUID)
	}
	if f.Wallets != nil {
		if len(f.Wallets) == 0 {
			return []X402View{}, nil
		}
		add("v.wallet_id IN (?)", bun.List(f.Wallets))
	}
	if f.State != "" {
		add("v.state = ?", f.State)
	}
	if f.Asset != "" {
		add("v.asset = ?", f.Asset)
	}
	if !f.Since.IsZero() {
		add("v.created_at >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		add("v.created_at < ?", f.Until)
	}
	if !f.AfterTime.IsZero() {
		add("(v.created_at, v.id) < (?, ?)", f.AfterTime, f.AfterID)
	}
	args = append(args, f.Limit)
	vs := []X402View{}
	err := db.NewRaw(x402ViewQuery+" WHERE "+strings.Join(where, " AND ")+" ORDER BY v.created_at DESC, v.id DESC LIMIT ?", args...).Scan(ctx, &vs)
	if err != nil {
		return nil, fmt.Errorf("list x402 payments: %w", err)
	}
	return vs, nil
}
