// Package analytics aggregates an account's payments in PostgreSQL: spend
// per day per wallet, approvals by outcome per day with the time humans
// took, and blocked sends by reason. Days are UTC days, as the daily
// limit counts them.
package analytics

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/usdc"
)

// Range is the days [From, To], both UTC midnights, To included.
type Range struct {
	From, To time.Time
}

// Spend is one wallet's sends on one day: the signed transactions that
// did not fail (pending or confirmed), as the daily limit counts them,
// and the network fees they paid.
type Spend struct {
	Day      time.Time `bun:"day"`
	WalletID uuid.UUID `bun:"wallet_id"`
	// Amount is in USD stablecoins (counted together at 1:1, as the _usdc
	// limits count them), AmountEUR in EUR ones; Count is every payment.
	Amount    usdc.Micros             `bun:"micros"`
	AmountEUR money.Micros[money.EUR] `bun:"eur_micros"`
	Count     int                     `bun:"n"`
	// FeeLamports is the network fees of that day's transactions that
	// confirmed (a fee is paid when a transaction lands).
	FeeLamports int64 `bun:"fee_lamports"`
	// X402Amount and X402Count are the part of Amount and Count that are
	// x402 payments: landed, or signed and not yet expired; MPP charges
	// the same.
	X402Amount usdc.Micros `bun:"x402_micros"`
	X402Count  int         `bun:"x402_n"`
	MPPAmount  usdc.Micros `bun:"mpp_micros"`
	MPPCount   int         `bun:"mpp_n"`
}

// Wallet is a wallet that spent in the range, with its current limit.
type Wallet struct {
	ID         uuid.UUID   `bun:"id"`
	Label      string      `bun:"label"`
	DailyLimit usdc.Micros `bun:"daily_limit_micros"`
}

// ApprovalDay is the approvals decided on one day, by outcome, and the
// median time from request to a human's decision (approved or rejected
// by a person; expiries are not decisions).
type ApprovalDay struct {
	Day            time.Time `bun:"day"`
	Approved       int       `bun:"approved"`
	Rejected       int       `bun:"rejected"`
	Expired        int       `bun:"expired"`
	MedianDecision *float64  `bun:"median_seconds"` // nil without a human decision
}

// Received is what came into one wallet on one day, of one asset
// (confirmed deposits), in the asset's base units.
type Received struct {
	Day      time.Time `bun:"day"`
	WalletID uuid.UUID `bun:"wallet_id"`
	Asset    string    `bun:"asset"`
	Amount   int64     `bun:"amount"`
	Count    int       `bun:"n"`
}

// Blocked is how many sends a policy rule blocked in the range.
type Blocked struct {
	Reason string `bun:"reason"`
	Count  int    `bun:"n"`
}

// Report is an account's analytics over a range.
type Report struct {
	Spend     []Spend
	Wallets   []Wallet
	Approvals []ApprovalDay
	// MedianDecision over the whole range (seconds); nil without a human
	// decision.
	MedianDecision *float64
	Blocked        []Blocked
	Received       []Received
}

// Compute aggregates accountID's rows in r; wallets, when not nil, keeps
// only those wallets (a key's scope).
func Compute(ctx context.Context, db bun.IDB, accountID uuid.UUID, wallets []uuid.UUID, r Range) (Report, error) {
	from, until := r.From, r.To.AddDate(0, 0, 1)
	scope := func(q *bun.SelectQuery, col string) *bun.SelectQuery {
		if wallets != nil {
			q = q.Where("? IN (?)", bun.Ident(col), bun.List(wallets))
		}
		return q
	}
	rep := Report{Spend: []Spend{}, Wallets: []Wallet{}, Approvals: []ApprovalDay{}, Blocked: []Blocked{}, Received: []Received{}}

	err := scope(db.NewSelect().TableExpr("deposits").
		Where("account_id = ? AND created_at >= ? AND created_at < ? AND status = 'confirmed'", accountID, from, until), "wallet_id").
		ColumnExpr("(created_at AT TIME ZONE 'UTC')::date AS day, wallet_id, asset, sum(amount)::bigint AS amount, count(*) AS n").
		GroupExpr("1, 2, 3").OrderExpr("1, 2, 3").Scan(ctx, &rep.Received)
	if err != nil {
		return rep, fmt.Errorf("received per day: %w", err)
	}

	// Signed x402 and MPP payments count as the daily limit counts them:
	// reserved until they land (then they are transactions of kind x402 or
	// mpp) or expire.
	err = scope(db.NewSelect().TableExpr(`(SELECT created_at, wallet_id, amount_micros, currency, status, fee_lamports, kind FROM transactions
			WHERE account_id = ?0 AND created_at >= ?1 AND created_at < ?2 AND status <> 'failed'
		UNION ALL SELECT created_at, wallet_id, amount_micros, currency, 'pending', NULL, protocol FROM x402_payments
			WHERE account_id = ?0 AND created_at >= ?1 AND created_at < ?2 AND state = 'signed') AS t`, accountID, from, until).
		ColumnExpr("(created_at AT TIME ZONE 'UTC')::date AS day, wallet_id, count(*) AS n").
		ColumnExpr("coalesce(sum(amount_micros) FILTER (WHERE currency = 'USD'), 0)::bigint AS micros").
		ColumnExpr("coalesce(sum(amount_micros) FILTER (WHERE currency = 'EUR'), 0)::bigint AS eur_micros").
		ColumnExpr("coalesce(sum(fee_lamports) FILTER (WHERE status = 'confirmed'), 0)::bigint AS fee_lamports").
		ColumnExpr("coalesce(sum(amount_micros) FILTER (WHERE kind = 'x402' AND currency = 'USD'), 0)::bigint AS x402_micros, count(*) FILTER (WHERE kind = 'x402') AS x402_n").
		ColumnExpr("coalesce(sum(amount_micros) FILTER (WHERE kind = 'mpp' AND currency = 'USD'), 0)::bigint AS mpp_micros, count(*) FILTER (WHERE kind = 'mpp') AS mpp_n"),
		"wallet_id").GroupExpr("1, 2").OrderExpr("1, 2").Scan(ctx, &rep.Spend)
	if err != nil {
		return rep, fmt.Errorf("spend per day: %w", err)
	}
	if len(rep.Spend) > 0 {
		ids := make([]uuid.UUID, 0, len(rep.Spend))
		seen := map[uuid.UUID]bool{}
		for _, s := range rep.Spend {
			if !seen[s.WalletID] {
				seen[s.WalletID] = true
				ids = append(ids, s.WalletID)
			}
		}
		err = db.NewSelect().TableExpr("wallets").Column("id", "label", "daily_limit_micros").
			Where("id IN (?)", bun.List(ids)).OrderExpr("label, id").Scan(ctx, &rep.Wallets)
		if err != nil {
			return rep, fmt.Errorf("wallets' limits: %w", err)
		}
	}

	// A human's decision: approved (sent, or signing) or rejected by a
	// person. A rejection by the system follows a human's approval, so
	// its time counts too; an expiry is no one's decision.
	const human = "status IN ('sent', 'signing', 'rejected')"
	const took = "extract(epoch FROM decided_at - created_at)"
	approvals := func() *bun.SelectQuery {
		return scope(db.NewSelect().TableExpr("approvals").
			Where("account_id = ? AND decided_at >= ? AND decided_at < ?", accountID, from, until), "wallet_id")
	}
	err = approvals().ColumnExpr("(decided_at AT TIME ZONE 'UTC')::date AS day").
		ColumnExpr("count(*) FILTER (WHERE status IN ('sent', 'signing')) AS approved").
		ColumnExpr("count(*) FILTER (WHERE status = 'rejected') AS rejected").
		ColumnExpr("count(*) FILTER (WHERE status = 'expired') AS expired").
		ColumnExpr("percentile_cont(0.5) WITHIN GROUP (ORDER BY "+took+") FILTER (WHERE "+human+") AS median_seconds").
		GroupExpr("1").OrderExpr("1").Scan(ctx, &rep.Approvals)
	if err != nil {
		return rep, fmt.Errorf("approvals per day: %w", err)
	}
	err = approvals().ColumnExpr("percentile_cont(0.5) WITHIN GROUP (ORDER BY "+took+") AS median_seconds").
		Where(human).Scan(ctx, &rep.MedianDecision)
	if err != nil {
		return rep, fmt.Errorf("median decision time: %w", err)
	}

	err = scope(db.NewSelect().TableExpr("send_requests").
		ColumnExpr("outcome->>'reason' AS reason, count(*) AS n").
		Where("account_id = ? AND state = 'decided' AND decided_at >= ? AND decided_at < ?", accountID, from, until).
		Where("outcome->>'status' = 'blocked'"), "wallet_id").
		GroupExpr("1").OrderExpr("2 DESC, 1").Scan(ctx, &rep.Blocked)
	if err != nil {
		return rep, fmt.Errorf("blocked sends: %w", err)
	}
	return rep, nil
}
