package deposit

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Kinds of Difference.
const (
	// DifferenceOutflow: money left in a transaction the service did
	// not make (unexplained_outflows).
	DifferenceOutflow = "unexplained_outflow"
	// DifferenceSnapshot: the chain's balance differed from the ledger's
	// at a snapshot (balance_snapshots).
	DifferenceSnapshot = "snapshot"
)

// Difference is a movement of a wallet's money the service did not make
// or did not see. Asset is the ledger's key (an asset's symbol in lower
// case, or sol); Amount is signed, in the asset's base units: negative,
// the chain holds less than the service accounted for.
type Difference struct {
	ID        uuid.UUID      `bun:"id,type:uuid"`
	Kind      string         `bun:"kind"`
	Asset     string         `bun:"asset"`
	Amount    int64          `bun:"amount"`
	At        time.Time      `bun:"at"`
	Slot      uint64         `bun:"slot"`
	Signature sql.NullString `bun:"signature"`
	To        sql.NullString `bun:"to_address"`
	Chain     sql.NullInt64  `bun:"chain"`
	Ledger    sql.NullInt64  `bun:"ledger"`
}

// Differences lists wallet id's differences newest first, of asset only
// when it is set (a ledger key), strictly after (afterAt, afterID) when
// afterID is set, at most limit.
func Differences(ctx context.Context, db bun.IDB, walletID uuid.UUID, asset string, afterAt time.Time, afterID uuid.UUID, limit int) ([]Difference, error) {
	out := []Difference{}
	q := `SELECT * FROM (
			SELECT id, 'unexplained_outflow' AS kind, asset, -amount AS amount, created_at AS at, slot, signature,
				counterparty AS to_address, NULL::bigint AS chain, NULL::bigint AS ledger
			FROM unexplained_outflows WHERE wallet_id = ?0 AND (?1 = '' OR asset = ?1)
			UNION ALL
			SELECT id, 'snapshot', asset, chain - ledger, taken_at, slot, NULL, NULL, chain, ledger
			FROM balance_snapshots WHERE wallet_id = ?0 AND (?1 = '' OR asset = ?1) AND chain <> ledger
		) d`
	args := []any{walletID, asset}
	if afterID != uuid.Nil {
		q += ` WHERE (d.at, d.id) < (?2, ?3)`
		args = append(args, afterAt, afterID)
	}
	q += fmt.Sprintf(` ORDER BY d.at DESC, d.id DESC LIMIT ?%d`, len(args))
	args = append(args, limit)
	if err := db.NewRaw(q, args...).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("list differences: %w", err)
	}
	return out, nil
}
