package deposit

import (
	"context"
	"errors"
	"fmt"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// Snapshot defaults: each wallet's balance is checked once a day, 500
// wallets a run (the scheduler runs one every few minutes, so 10,000
// wallets are all checked within a few hours of their due time, and one
// deferred because its account was busy is tried again soon).
const (
	DefaultSnapshotEvery  = 24 * time.Hour
	DefaultSnapshotPerRun = 500
)

// SnapshotStats is what one snapshot run did.
type SnapshotStats struct {
	// Wallets checked; Differences found (wallet and asset); Deferred:
	// wallets left for a later run (an account moving or busy).
	Wallets, Differences, Deferred int
}

// Snapshot reads on chain the balance of every wallet due (no snapshot
// for SnapshotEvery, oldest first, SnapshotPerRun of them) and checks it
// against the ledger at the slot the node read it at. Before comparing,
// an account whose balance differs has its transactions examined up to
// that slot (a node whose history reached it lists them), so a deposit
// or a payment not yet scanned is never taken for a difference. What
// still differs moved in a way no transaction the watcher read shows: a
// balance_snapshots row with chain and ledger apart, a
// wallet.balance_mismatch event, and a ledger row that takes the chain's
// balance from then on (the difference is reported once, never absorbed
// silently).
func (w *Watcher) Snapshot(ctx context.Context) (SnapshotStats, error) {
	var total SnapshotStats
	err := w.eachNetwork(func(network solana.Network, c *solana.Client) error {
		st, err := w.snapshot(ctx, network, c)
		total.Wallets += st.Wallets
		total.Differences += st.Differences
		total.Deferred += st.Deferred
		return err
	})
	return total, err
}

// held is one watched account in a snapshot: its balance on chain, read
// at a slot, and the ledger's at that slot.
type held struct {
	watched
	chain  read
	ledger int64
}

func (w *Watcher) snapshot(ctx context.Context, network solana.Network, c *solana.Client) (SnapshotStats, error) {
	var st SnapshotStats
	every, per := w.SnapshotEvery, w.SnapshotPerRun
	if every <= 0 {
		every = DefaultSnapshotEvery
	}
	if per <= 0 {
		per = DefaultSnapshotPerRun
	}
	if err := w.ensure(ctx, network, c); err != nil {
		return st, err
	}
	var due []struct {
		ID        uuid.UUID `bun:"id,type:uuid"`
		AccountID uuid.UUID `bun:"account_id,type:uuid"`
	}
	if err := w.DB.NewRaw(`SELECT w.id, w.account_id FROM wallets w JOIN accounts a ON a.id = w.account_id
		LEFT JOIN LATERAL (SELECT max(b.taken_at) AS at FROM balance_snapshots b WHERE b.wallet_id = w.id) last ON true
		WHERE a.network = ? AND EXISTS (SELECT 1 FROM watched_accounts x WHERE x.wallet_id = w.id)
			AND (last.at IS NULL OR last.at < now() - make_interval(secs => ?))
		ORDER BY last.at NULLS FIRST, w.id LIMIT ?`, network, every.Seconds(), per).Scan(ctx, &due); err != nil {
		return st, fmt.Errorf("wallets due a snapshot: %w", err)
	}
	if len(due) == 0 {
		return st, nil
	}
	ids := make([]uuid.UUID, len(due))
	owner := make(map[uuid.UUID]uuid.UUID, len(due))
	for i, d := range due {
		ids[i], owner[d.ID] = d.ID, d.AccountID
	}
	var rows []watched
	if err := w.DB.NewRaw(`SELECT `+watchedColumns+` FROM watched_accounts x JOIN wallets w ON w.id = x.wallet_id
		WHERE x.network = ? AND x.wallet_id IN (?) ORDER BY x.wallet_id, x.asset, x.address`, network, bun.List(ids)).Scan(ctx, &rows); err != nil {
		return st, fmt.Errorf("read watched accounts: %w", err)
	}
	addrs := make([]sol.PublicKey, len(rows))
	for i, r := range rows {
		addrs[i] = sol.MustPublicKeyFromBase58(r.Address)
	}
	states, err := c.Accounts(ctx, addrs)
	if err != nil {
		return st, err
	}
	byWallet := map[uuid.UUID][]held{}
	for i, r := range rows {
		if !w.resolve(network, &r) {
			continue // an asset the table no longer has
		}
		byWallet[r.WalletID] = append(byWallet[r.WalletID], held{watched: r, chain: read{r.countable(states[i]), states[i].Slot}})
	}
	var errs []error
	for _, id := range ids {
		accounts, ok, err := w.settleLedger(ctx, network, c, byWallet[id])
		if err != nil {
			errs = append(errs, fmt.Errorf("wallet %s: %w", id, err))
			continue
		}
		if !ok {
			st.Deferred++
			continue
		}
		n, err := w.recordSnapshot(ctx, network, owner[id], id, accounts)
		if err != nil {
			errs = append(errs, fmt.Errorf("wallet %s: %w", id, err))
			continue
		}
		st.Wallets++
		st.Differences += n
	}
	return st, errors.Join(errs...)
}

// settleLedger brings each account's ledger up to the slot its balance
// was read at and reads the ledger's balance there. ok is false when an
// account could not be brought there now (another scan holds it, or more
// transactions wait than one examination takes): the wallet is left for
// a later run.
func (w *Watcher) settleLedger(ctx context.Context, network solana.Network, c *solana.Client, accounts []held) ([]held, bool, error) {
	for i := range accounts {
		a := &accounts[i]
		bal, err := w.ledgerAt(ctx, network, a.Address, a.chain.slot)
		if err != nil {
			return nil, false, err
		}
		if bal == a.chain.balance {
			a.ledger = bal
			continue
		}
		done := false
		for try := 0; try < 3 && !done; try++ {
			if _, _, done, err = w.examine(ctx, network, c, a.Address, a.chain.balance, a.chain.slot, nil); err != nil {
				return nil, false, err
			}
			if !done {
				// Another scan holds the account: look again shortly,
				// unless the run is cancelled (its task's deadline).
				select {
				case <-ctx.Done():
					return nil, false, ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
		if !done {
			return nil, false, nil
		}
		if a.ledger, err = w.ledgerAt(ctx, network, a.Address, a.chain.slot); err != nil {
			return nil, false, err
		}
	}
	return accounts, true, nil
}

// ledgerAt is the account's balance after its last ledger change at or
// before slot; zero before any.
func (w *Watcher) ledgerAt(ctx context.Context, network solana.Network, address string, slot uint64) (int64, error) {
	var bal []int64
	if err := w.DB.NewRaw(`SELECT balance FROM ledger WHERE network = ? AND address = ? AND slot <= ? ORDER BY slot DESC, id DESC LIMIT 1`,
		network, address, slot).Scan(ctx, &bal); err != nil {
		return 0, fmt.Errorf("ledger balance: %w", err)
	}
	if len(bal) == 0 {
		return 0, nil
	}
	return bal[0], nil
}

// recordSnapshot writes the wallet's snapshot, one row per asset (USDC
// and SOL always, every other asset it has a watched account of), and
// for each asset whose chain and ledger differ its event and the ledger
// rows that take the chain's balances; it returns how many assets
// differed.
func (w *Watcher) recordSnapshot(ctx context.Context, network solana.Network, accountID, walletID uuid.UUID, accounts []held) (int, error) {
	type sum struct {
		chain, ledger int64
		slot          uint64
		apart         []held
	}
	sums := map[string]*sum{USDC: {}, SOL: {}}
	assets := []string{USDC, SOL}
	for _, a := range accounts {
		s := sums[a.Asset]
		if s == nil {
			s = &sum{}
			sums[a.Asset] = s
			assets = append(assets, a.Asset)
		}
		s.chain += a.chain.balance
		s.ledger += a.ledger
		s.slot = max(s.slot, a.chain.slot)
		if a.chain.balance != a.ledger {
			s.apart = append(s.apart, a)
		}
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	differences := 0
	err := w.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, asset := range assets {
			s := sums[asset]
			id := uuid.New()
			if _, err := tx.NewRaw(`INSERT INTO balance_snapshots (id, account_id, wallet_id, network, asset, slot, chain, ledger, taken_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, accountID, walletID, network, asset, s.slot, s.chain, s.ledger, now).Exec(ctx); err != nil {
				return fmt.Errorf("record snapshot: %w", err)
			}
			if len(s.apart) == 0 {
				continue
			}
			differences++
			for _, a := range s.apart {
				if _, err := tx.NewRaw(`INSERT INTO ledger (network, address, signature, wallet_id, asset, slot, at, balance)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, network, a.Address, "snapshot:"+id.String(), walletID, asset, a.chain.slot, now, a.chain.balance).Exec(ctx); err != nil {
					return fmt.Errorf("ledger takes the chain's balance: %w", err)
				}
				// The watcher's stored balance too, unless a change after
				// the read was examined meanwhile: otherwise a change made
				// without a transaction makes every scan look again.
				if _, err := tx.NewRaw(`UPDATE watched_accounts x SET balance = ? WHERE network = ? AND address = ?
					AND NOT EXISTS (SELECT 1 FROM ledger l WHERE l.network = x.network AND l.address = x.address AND l.slot > ?)`,
					a.chain.balance, network, a.Address, a.chain.slot).Exec(ctx); err != nil {
					return err
				}
			}
			data := map[string]any{
				"wallet_id": walletID, "snapshot_id": id, "asset": asset, "symbol": symbolOf(asset), "slot": s.slot,
				"chain": w.amountOf(network, asset, s.chain), "ledger": w.amountOf(network, asset, s.ledger),
				"difference": w.amountOf(network, asset, s.chain-s.ledger),
			}
			if _, err := webhook.Emit(ctx, tx, accountID, now, webhook.KindBalanceMismatch, data); err != nil {
				return err
			}
			w.log().WarnContext(ctx, "a wallet's balance on chain differs from its ledger", "wallet_id", walletID, "asset", asset,
				"chain", s.chain, "ledger", s.ledger, "slot", s.slot)
		}
		return nil
	})
	return differences, err
}
