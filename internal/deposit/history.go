package deposit

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Series is a wallet's balance of one asset at instants, oldest first.
// Asset is the ledger's key: an asset's symbol in lower case (usdc, eurc,
// ...) or sol.
type Series struct {
	Asset  string
	Points []Point
}

// Point is a balance at an instant, as the ledger has it: in the asset's
// base units, summed over the wallet's accounts of the asset (its token
// accounts; for SOL, its address). Before the first change the ledger
// knows, zero.
type Point struct {
	At      time.Time
	Balance int64
}

// MaxPoints bounds the instants of one history.
const MaxPoints = 1000

// MaxSeriesPoints bounds a history's points over all its series (instants
// times assets): every asset of the default table and SOL (six) at
// MaxPoints instants each. Each point costs index probes per account of
// its asset, so this bounds one answer's work whatever an operator adds to
// the table; with more assets, asking them all answers fewer instants.
const MaxSeriesPoints = 6 * MaxPoints

// ErrTooManyPoints is a history asked for more than MaxSeriesPoints points.
var ErrTooManyPoints = fmt.Errorf("at most %d points (instants times assets)", MaxSeriesPoints)

// ledgerDisorder bounds how far the ledger's times run against its chain
// order: a change at a later slot is never stamped more than this before
// one at an earlier slot (block times are whole seconds; a snapshot's row
// is stamped when it read the chain, seconds before the next block).
const ledgerDisorder = 10 * time.Minute

// History is wallet id's balance of each of assets (ledger keys, lower
// case) at each instant of at, one Series per asset in the order asked,
// its points in the order of at: for each account of the asset, the
// balance after its last change at or before the instant (the chain's
// order: by slot, then as examined; a snapshot's row sits at the slot it
// read the chain at), summed over the accounts. An asset the ledger has no
// row of is a series of zeros.
//
// Each point costs index probes, not a walk of the history: the asset's
// accounts are found by skipping through the ledger's index, and for each
// account and instant only the changes stamped within ledgerDisorder of
// the newest one at or before the instant can be its last in chain order.
// More than MaxSeriesPoints points is ErrTooManyPoints.
func History(ctx context.Context, db bun.IDB, walletID uuid.UUID, assets []string, at []time.Time) ([]Series, error) {
	if len(assets)*len(at) > MaxSeriesPoints {
		return nil, ErrTooManyPoints
	}
	out := make([]Series, len(assets))
	for i, a := range assets {
		out[i] = Series{Asset: a, Points: make([]Point, 0, len(at))}
	}
	if len(assets) == 0 || len(at) == 0 {
		return out, nil
	}
	var rows []struct {
		I       int       `bun:"i"`
		At      time.Time `bun:"at"`
		Balance int64     `bun:"balance"`
	}
	// The accounts of each asset asked, by a skip scan of ledger_wallet_at
	// from the asset's first address; then per asset, instant and account
	// the latest change, summed. Rows come by asset asked, then instant.
	err := db.NewRaw(`WITH RECURSIVE asked AS (
			SELECT q.asset, q.i FROM unnest(?1::text[]) WITH ORDINALITY AS q(asset, i)),
		accounts AS (
			SELECT f.asset, f.address FROM asked AS q CROSS JOIN LATERAL (SELECT asset, address FROM ledger
				WHERE wallet_id = ?0 AND asset = q.asset ORDER BY address LIMIT 1) AS f
			UNION ALL
			SELECT n.asset, n.address FROM accounts AS a CROSS JOIN LATERAL (SELECT asset, address FROM ledger
				WHERE wallet_id = ?0 AND asset = a.asset AND address > a.address ORDER BY address LIMIT 1) AS n)
		SELECT q.i, t.at, coalesce(sum(l.balance), 0)::bigint AS balance
		FROM asked AS q
		CROSS JOIN unnest(?2::timestamptz[]) WITH ORDINALITY AS t(at, j)
		LEFT JOIN accounts AS a ON a.asset = q.asset
		LEFT JOIN LATERAL (SELECT x.balance FROM ledger AS x
			WHERE x.wallet_id = ?0 AND x.asset = a.asset AND x.address = a.address AND x.at <= t.at
				AND x.at >= (SELECT y.at FROM ledger AS y WHERE y.wallet_id = ?0 AND y.asset = a.asset AND y.address = a.address AND y.at <= t.at
					ORDER BY y.at DESC LIMIT 1) - ?3::interval
			ORDER BY x.slot DESC, x.id DESC LIMIT 1) AS l ON true
		GROUP BY q.i, t.j, t.at ORDER BY q.i, t.j`,
		walletID, pgdialect.Array(assets), pgTimes(at), fmt.Sprintf("%d seconds", int(ledgerDisorder/time.Second))).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("balance history: %w", err)
	}
	for _, r := range rows {
		s := &out[r.I-1]
		s.Points = append(s.Points, Point{At: r.At, Balance: r.Balance})
	}
	return out, nil
}

// pgTimes is a timestamptz[] literal of ts.
func pgTimes(ts []time.Time) string {
	b := []byte{'{'}
	for i, t := range ts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = t.UTC().AppendFormat(b, "2006-01-02 15:04:05.999999Z07:00")
		b = append(b, '"')
	}
	return string(append(b, '}'))
}

// Instants are the instants of a history from from to to (both included)
// every step; more than MaxPoints is an error.
func Instants(from, to time.Time, step time.Duration) ([]time.Time, error) {
	if step <= 0 || to.Before(from) {
		return nil, fmt.Errorf("want from before to and a positive step")
	}
	if n := to.Sub(from)/step + 1; n > MaxPoints {
		return nil, fmt.Errorf("%d points, at most %d", n, MaxPoints)
	}
	var out []time.Time
	for t := from; !t.After(to); t = t.Add(step) {
		out = append(out, t)
	}
	return out, nil
}
