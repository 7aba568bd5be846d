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

// History is wallet id's balance at each instant of at: for each asset and
// account, the balance after its last change at or before the instant
// (the chain's order: by slot, then as examined; a snapshot's row sits at
// the slot it read the chain at), summed over the wallet's accounts.
func History(ctx context.Context, db bun.IDB, walletID uuid.UUID, at []time.Time) ([]Point, error) {
	if len(at) == 0 {
		return []Point{}, nil
	}
	out := make([]Point, 0, len(at))
	err := db.NewRaw(`SELECT t.at,
			coalesce((SELECT sum(b.balance) FROM (SELECT DISTINCT ON (l.address) l.balance FROM ledger l
				WHERE l.wallet_id = ? AND l.asset = 'usdc' AND l.at <= t.at ORDER BY l.address, l.slot DESC, l.id DESC) b), 0)::bigint AS usdc,
			coalesce((SELECT sum(b.balance) FROM (SELECT DISTINCT ON (l.address) l.balance FROM ledger l
				WHERE l.wallet_id = ? AND l.asset = 'sol' AND l.at <= t.at ORDER BY l.address, l.slot DESC, l.id DESC) b), 0)::bigint AS sol
		FROM unnest(?::timestamptz[]) AS t(at) ORDER BY t.at`, walletID, walletID, pgTimes(at)).Scan(ctx, &out)
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
