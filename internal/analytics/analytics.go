// Package analytics aggregates an account's payments in PostgreSQL: spend
// per day per wallet, approvals by outcome per day with the time humans
// took, and blocked sends by reason. Days are UTC days, as the daily
// limit counts them. Spend, deposits and blocks are read from day sums
// that triggers keep as payments change (analytics_days, migration 0034;
// deposits per asset in analytics_received_days, 0039), so a range's cost
// follows its days and wallets, not its payments.
package analytics

import (
	"context"
	"database/sql"
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
// (confirmed deposits), in the asset's base units. Asset is the deposits'
// key: the asset's symbol in lower case, or sol.
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
//
// Its reads run in one read-only snapshot, so the parts agree with each
// other, with room to sort a year of approvals in memory (their medians).
func Compute(ctx context.Context, db bun.IDB, accountID uuid.UUID, wallets []uuid.UUID, r Range) (Report, error) {
	var rep Report
	err := db.RunInTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL work_mem = '64MB'"); err != nil {
			return fmt.Errorf("analytics' memory: %w", err)
		}
		var err error
		rep, err = compute(ctx, tx, accountID, wallets, r)
		return err
	})
	return rep, err
}

func compute(ctx context.Context, db bun.IDB, accountID uuid.UUID, wallets []uuid.UUID, r Range) (Report, error) {
	from, until := r.From, r.To.AddDate(0, 0, 1)
	scope := func(q *bun.SelectQuery, col string) *bun.SelectQuery {
		if wallets != nil {
			q = q.Where("? IN (?)", bun.Ident(col), bun.List(wallets))
		}
		return q
	}
	rep := Report{Spend: []Spend{}, Wallets: []Wallet{}, Approvals: []ApprovalDay{}, Blocked: []Blocked{}, Received: []Received{}}

	// Spend, deposits and blocks come from the day sums the triggers keep
	// (analytics_days, analytics_received_days, analytics_blocked_days),
	// by day and wallet (deposits by asset too): a year costs one row per
	// wallet and day, however many payments it held. A day whose payments
	// all failed or expired is left at zero and skipped.
	days := func(table string) *bun.SelectQuery {
		return scope(db.NewSelect().TableExpr(table).
			Where("account_id = ? AND day >= ? AND day <= ?", accountID, r.From.Format(time.DateOnly), r.To.Format(time.DateOnly)), "wallet_id")
	}
	// Signed x402 and MPP payments count as the daily limit counts them:
	// reserved until they land (then they are transactions of kind x402 or
	// mpp) or expire.
	err := days("analytics_days").
		ColumnExpr("day, wallet_id, n, usd_micros AS micros, eur_micros, fee_lamports, x402_micros, x402_n, mpp_micros, mpp_n").
		Where("n > 0").OrderExpr("day, wallet_id").Scan(ctx, &rep.Spend)
	if err != nil {
		return rep, fmt.Errorf("spend per day: %w", err)
	}
	err = days("analytics_received_days").ColumnExpr("day, wallet_id, asset, amount, n").
		Where("n > 0").OrderExpr("day, wallet_id, asset").Scan(ctx, &rep.Received)
	if err != nil {
		return rep, fmt.Errorf("deposits per day: %w", err)
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
	// date_part, not extract: a double precision, not a numeric, to sort.
	const took = "date_part('epoch', decided_at - created_at)"
	approvals := func() *bun.SelectQuery {
		return scope(db.NewSelect().TableExpr("approvals").
			Where("account_id = ? AND decided_at >= ? AND decided_at < ?", accountID, from, until), "wallet_id")
	}
	// Each day's counts and median, and the range's median (the grouping
	// set without a day), in one pass over the range's approvals.
	var decided []struct {
		Day                         sql.NullTime `bun:"day"`
		Range                       bool         `bun:"whole_range"`
		Approved, Rejected, Expired int
		MedianDecision              *float64 `bun:"median_seconds"`
	}
	err = approvals().ColumnExpr("(decided_at AT TIME ZONE 'UTC')::date AS day, grouping((decided_at AT TIME ZONE 'UTC')::date) = 1 AS whole_range").
		ColumnExpr("count(*) FILTER (WHERE status IN ('sent', 'signing')) AS approved").
		ColumnExpr("count(*) FILTER (WHERE status = 'rejected') AS rejected").
		ColumnExpr("count(*) FILTER (WHERE status = 'expired') AS expired").
		ColumnExpr("percentile_cont(0.5) WITHIN GROUP (ORDER BY "+took+") FILTER (WHERE "+human+") AS median_seconds").
		GroupExpr("GROUPING SETS ((1), ())").OrderExpr("1").Scan(ctx, &decided)
	if err != nil {
		return rep, fmt.Errorf("approvals per day: %w", err)
	}
	for _, d := range decided {
		if d.Range {
			rep.MedianDecision = d.MedianDecision
			continue
		}
		rep.Approvals = append(rep.Approvals, ApprovalDay{Day: d.Day.Time, Approved: d.Approved, Rejected: d.Rejected, Expired: d.Expired, MedianDecision: d.MedianDecision})
	}

	err = days("analytics_blocked_days").ColumnExpr("reason, sum(n) AS n").
		GroupExpr("reason").Having("sum(n) > 0").OrderExpr("2 DESC, 1").Scan(ctx, &rep.Blocked)
	if err != nil {
		return rep, fmt.Errorf("blocked sends: %w", err)
	}
	return rep, nil
}
