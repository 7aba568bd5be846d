package payment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/postgres"
)

// The rolling windows of the optional limits, back from the decision.
const (
	Week  = 7 * 24 * time.Hour
	Month = 30 * 24 * time.Hour
	Day   = 24 * time.Hour
)

// ReadUsage is what the wallet has used of its limits at `at`: always the
// UTC day's reserved total in need.Currency, and the windows need names.
// A window is (at − its length, at]: a payment counts for exactly 7×24
// hours in the week. Amounts are pending and confirmed transactions and
// signed x402 payments, as the daily limit counts them. Counts are the
// wallet's decided requests (sends and x402 pay requests) answered sent,
// signed or pending_approval: blocked ones, those the node refused and
// those nothing was signed for count nothing, and an x402 payment that
// redeems an approval is not counted again (its parked request was).
// Decisions read it under the wallet's row lock, after which every earlier
// decision of the wallet has committed: the totals and counts include
// them all.
func ReadUsage(ctx context.Context, db bun.IDB, walletID uuid.UUID, at time.Time, need policy.Windows) (policy.Usage, error) {
	var u policy.Usage
	var err error
	if need.Currency == money.CodeEUR {
		u.EUR, err = readSpent[money.EUR](ctx, db, walletID, at, need)
	} else {
		u.USD, err = readSpent[money.USD](ctx, db, walletID, at, need)
	}
	if err != nil {
		return u, err
	}
	return readCounts(ctx, db, walletID, at, need, u)
}

// readSpent is what the wallet's payments in currency C reserved or spent
// in the day and the windows need names.
func readSpent[C money.Currency](ctx context.Context, db bun.IDB, walletID uuid.UUID, at time.Time, need policy.Windows) (policy.Spent[C], error) {
	var s policy.Spent[C]
	// From wallet_usage_hours (migrations 0024 and 0032: kept by triggers,
	// every counted row's amount in the UTC hour of its created_at, per
	// currency). The UTC day starts on an hour: its hours are its total. A
	// rolling window is its whole hours and, read exactly, the rows of the
	// hour it starts in. At most 720 sums and an hour of rows, however
	// many payments the window holds; only the windows the policy has are
	// read.
	day := policy.DayStart(at)
	cols := []string{"coalesce(sum(micros) FILTER (WHERE hour >= $3), 0)::bigint"}
	args := []any{walletID, string(money.CodeOf[C]()), day}
	dest := []any{&s.Today}
	from := day
	for _, w := range []struct {
		on    bool
		start time.Time
		spent *money.Micros[C]
	}{{need.Week, at.Add(-Week), &s.Week}, {need.Month, at.Add(-Month), &s.Month}} {
		if !w.on {
			continue
		}
		whole := w.start.Truncate(time.Hour).Add(time.Hour)
		n := len(args)
		args = append(args, w.start, whole)
		cols = append(cols, fmt.Sprintf(`(coalesce(sum(micros) FILTER (WHERE hour >= $%[2]d), 0)
			+ (SELECT coalesce(sum(amount_micros), 0) FROM transactions
				WHERE wallet_id = $1 AND currency = $2 AND status IN ('%[3]s', '%[4]s') AND created_at > $%[1]d AND created_at < $%[2]d)
			+ (SELECT coalesce(sum(amount_micros), 0) FROM x402_payments
				WHERE wallet_id = $1 AND currency = $2 AND state = '%[5]s' AND created_at > $%[1]d AND created_at < $%[2]d))::bigint`,
			n+1, n+2, TxPending, TxConfirmed, X402StateSigned))
		dest = append(dest, w.spent)
		from = minTime(from, w.start.Truncate(time.Hour))
	}
	args = append(args, from)
	err := postgres.QueryRow(ctx, db, dest, fmt.Sprintf("SELECT %s FROM wallet_usage_hours WHERE wallet_id = $1 AND currency = $2 AND hour >= $%d",
		strings.Join(cols, ", "), len(args)), args...)
	if err != nil {
		return s, fmt.Errorf("sum reserved: %w", err)
	}
	return s, nil
}

// readCounts adds to u the payments of the last hour and day, in every
// asset, when need names them.
func readCounts(ctx context.Context, db bun.IDB, walletID uuid.UUID, at time.Time, need policy.Windows, u policy.Usage) (policy.Usage, error) {
	if !need.Hour && !need.Day {
		return u, nil
	}
	since := at.Add(-time.Hour)
	if need.Day {
		since = at.Add(-Day)
	}
	err := postgres.QueryRow(ctx, db, []any{&u.PaymentsLastHour, &u.PaymentsLastDay},
		`SELECT count(*) FILTER (WHERE decided_at > $2), count(*) FROM send_requests
		WHERE wallet_id = $1 AND state = $4 AND decided_at > $3
			AND outcome ->> 'status' IN ($5, $6, $7) AND (x402 IS NULL OR x402 ->> 'approval_id' IS NULL)`,
		walletID, at.Add(-time.Hour), since, StateDecided, Sent, Signed, PendingApproval)
	if err != nil {
		return u, fmt.Errorf("count payments: %w", err)
	}
	if !need.Day {
		u.PaymentsLastDay = 0
	}
	return u, nil
}

// ReservedToday is what the wallet has reserved or spent in USD
// stablecoins in at's UTC day:
// pending and confirmed transactions (failed ones released theirs), and
// signed x402 payments not yet settled (a settled one is a confirmed
// transaction of the same day; an expired one released its amount).
func ReservedToday(ctx context.Context, db bun.IDB, walletID uuid.UUID, at time.Time) (money.Micros[money.USD], error) {
	u, err := ReadUsage(ctx, db, walletID, at, policy.Windows{})
	return u.USD.Today, err
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
