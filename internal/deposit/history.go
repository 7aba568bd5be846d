package deposit

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Point is a wallet's balance at an instant, as its ledger has it: USDC
// across all its token accounts (micro-USDC), SOL of its address
// (lamports). Before the first change the ledger knows, zero.
type Point struct {
	At   time.Time `bun:"at"`
	USDC int64     `bun:"usdc"`
	SOL  int64     `bun:"sol"`
}

// MaxPoints bounds one history.
const MaxPoints = 1000

// ledgerDisorder bounds how far the ledger's times run against its chain
// order: a change at a later slot is never stamped more than this before
// one at an earlier slot (block times are whole seconds; a snapshot's row
// is stamped when it read the chain, seconds before the next block).
const ledgerDisorder = 10 * time.Minute

// History is wallet id's balance at each instant of at: for each asset and
// account, the balance after its last change at or before the instant
// (the chain's order: by slot, then as examined; a snapshot's row sits at
// the slot it read the chain at), summed over the wallet's accounts.
//
// Each point costs index probes, not a walk of the history: the wallet's
// accounts are found by skipping through the ledger's index, and for each
// account and instant only the changes stamped within ledgerDisorder of
// the newest one at or before the instant can be its last in chain order.
func History(ctx context.Context, db bun.IDB, walletID uuid.UUID, at []time.Time) ([]Point, error) {
	if len(at) == 0 {
		return []Point{}, nil
	}
	out := make([]Point, 0, len(at))
	err := db.NewRaw(`WITH RECURSIVE accounts AS (
			(SELECT asset, address FROM ledger WHERE wallet_id = ?0 ORDER BY asset, address LIMIT 1)
			UNION ALL
			SELECT n.asset, n.address FROM accounts AS a CROSS JOIN LATERAL (SELECT asset, address FROM ledger
				WHERE wallet_id = ?0 AND (asset, address) > (a.asset, a.address) ORDER BY asset, address LIMIT 1) AS n)
		SELECT t.at,
			coalesce(sum(l.balance) FILTER (WHERE a.asset = 'usdc'), 0)::bigint AS usdc,
			coalesce(sum(l.balance) FILTER (WHERE a.asset = 'sol'), 0)::bigint AS sol
		FROM unnest(?1::timestamptz[]) AS t(at)
		LEFT JOIN accounts AS a ON true
		LEFT JOIN LATERAL (SELECT x.balance FROM ledger AS x
			WHERE x.wallet_id = ?0 AND x.asset = a.asset AND x.address = a.address AND x.at <= t.at
				AND x.at >= (SELECT y.at FROM ledger AS y WHERE y.wallet_id = ?0 AND y.asset = a.asset AND y.address = a.address AND y.at <= t.at
					ORDER BY y.at DESC LIMIT 1) - ?2::interval
			ORDER BY x.slot DESC, x.id DESC LIMIT 1) AS l ON true
		GROUP BY t.at ORDER BY t.at`, walletID, pgTimes(at), fmt.Sprintf("%d seconds", int(ledgerDisorder/time.Second))).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("balance history: %w", err)
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
