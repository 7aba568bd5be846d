package deposit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// ForkWindow is how many slots after a deposit's slot its transaction
// may still land on another fork: its blockhash, no older than its slot,
// lives 150 blocks. A deposit the chain does not know once a node has
// passed this many slots beyond it was dropped for good.
const ForkWindow = 151

// settle asks after the network's deposits recorded at confirmed and not
// yet seen finalized. A finalized one is done. One the chain no longer
// knows past ForkWindow (Client.Settled: a node at or past that slot,
// searching its history, and a second node agreeing when there is one)
// was dropped by a fork: it is failed. Anything else (a node behind, no
// answer, a node without history) is asked again at the next scan.
func (w *Watcher) settle(ctx context.Context, network solana.Network, c *solana.Client) (failed int, err error) {
	var open []struct {
		ID        uuid.UUID `bun:"id,type:uuid"`
		Signature string    `bun:"signature"`
		Slot      uint64    `bun:"slot"`
	}
	if err := w.DB.NewSelect().Table("deposits").Column("id", "signature", "slot").
		Where("network = ? AND status = 'confirmed' AND finalized_at IS NULL", network).
		OrderExpr("slot, id").Limit(solana.MaxSignatureStatuses).Scan(ctx, &open); err != nil {
		return 0, fmt.Errorf("deposits to settle: %w", err)
	}
	if len(open) == 0 {
		return 0, nil
	}
	sigs := make([]sol.Signature, len(open))
	since := make([]uint64, len(open))
	for i, d := range open {
		sigs[i] = sol.MustSignatureFromBase58(d.Signature)
		since[i] = d.Slot + ForkWindow
	}
	st, err := c.Settled(ctx, sigs, since)
	if err != nil {
		return 0, err
	}
	var final []uuid.UUID
	for i, s := range st.Statuses {
		switch {
		case s.Finalized:
			final = append(final, open[i].ID)
		case s.Absent && st.History:
			ok, err := w.drop(ctx, open[i].ID, st.Slot)
			if err != nil {
				return failed, err
			}
			if ok {
				failed++
			}
		}
	}
	if len(final) > 0 {
		if _, err := w.DB.NewUpdate().Table("deposits").Set("finalized_at = now()").
			Where("id IN (?)", bun.List(final)).Exec(ctx); err != nil {
			return failed, fmt.Errorf("finalize deposits: %w", err)
		}
	}
	return failed, nil
}

// drop fails deposit id, dropped by a fork: its transaction leaves the
// wallet's ledger, each account whose cursor or balance came from it goes
// back to its last change still on the chain (the next scan looks again
// from there), and tx.receive_failed is announced, all in one commit.
func (w *Watcher) drop(ctx context.Context, id uuid.UUID, seenAt uint64) (bool, error) {
	var dropped bool
	err := w.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var d Deposit
		err := tx.NewSelect().Model(&d).Where("id = ? AND status = 'confirmed'", id).For("UPDATE").Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		// The wallet's accounts first (the order a scan takes them), so
		// no scan moves a cursor past the dropped transaction meanwhile.
		var addrs []string
		if err := tx.NewSelect().Table("watched_accounts").Column("address").
			Where("network = ? AND wallet_id = ?", d.Network, d.WalletID).Order("address").For("UPDATE").Scan(ctx, &addrs); err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Table("deposits").Set("status = 'failed'").
			Where("wallet_id = ? AND signature = ? AND status = 'confirmed'", d.WalletID, d.Signature).Exec(ctx); err != nil {
			return err
		}
		var touched []string
		if err := tx.NewRaw(`DELETE FROM ledger WHERE network = ? AND wallet_id = ? AND signature = ? RETURNING address`,
			d.Network, d.WalletID, d.Signature).Scan(ctx, &touched); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if len(touched) > 0 {
			if _, err := tx.NewRaw(`UPDATE watched_accounts x SET
					balance = (SELECT l.balance FROM ledger l WHERE l.network = x.network AND l.address = x.address ORDER BY l.id DESC LIMIT 1),
					last_signature = CASE WHEN x.last_signature = ? THEN
						(SELECT l.signature FROM ledger l WHERE l.network = x.network AND l.address = x.address AND l.signature NOT LIKE 'snapshot:%' ORDER BY l.id DESC LIMIT 1)
						ELSE x.last_signature END
				WHERE x.network = ? AND x.address IN (?)`, d.Signature, d.Network, bun.List(touched)).Exec(ctx); err != nil {
				return fmt.Errorf("rewind accounts: %w", err)
			}
		}
		var deps []Deposit
		if err := tx.NewSelect().Model(&deps).Where("wallet_id = ? AND signature = ?", d.WalletID, d.Signature).Order("asset").Scan(ctx); err != nil {
			return err
		}
		for _, x := range deps {
			data := map[string]any{
				"wallet_id": x.WalletID, "transaction_id": x.ID, "signature": x.Signature, "asset": x.Asset, "symbol": symbolOf(x.Asset),
				"amount": w.amountOf(solana.Network(x.Network), x.Asset, x.Amount), "from": x.Counterparty, "slot": x.Slot,
				"reason": fmt.Sprintf("dropped by a fork: no node knows the transaction at slot %d, past its blockhash's life", seenAt),
			}
			if _, err := webhook.Emit(ctx, tx, x.AccountID, time.Now().UTC(), webhook.KindReceiveFailed, data); err != nil {
				return err
			}
		}
		dropped = true
		w.log().WarnContext(ctx, "deposit dropped by a fork", "wallet_id", d.WalletID, "signature", d.Signature)
		return nil
	})
	return dropped, err
}
