// Package deposit finds the money that comes into agent wallets: USDC to
// any of a wallet's token accounts and SOL to its address, however it
// arrived (a transfer, a transferChecked, inside another program's
// instruction), and records each deposit once, with its tx.received event.
//
// A scan reads every watched account's balance (getMultipleAccounts, 100 a
// call) and examines only the accounts whose balance changed: their
// transactions since the account's cursor (getSignaturesForAddress), each
// read from its metadata's balance changes (getTransaction), which show a
// transfer made by CPI as well as a top-level one. The cursor and the
// deposits of an account are written in one commit under the account's
// row lock, and a deposit is unique by wallet, signature and asset: a
// restart, a failover or two workers scanning at once resume where the
// last commit left off, and never count a transfer twice.
package deposit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/usdc"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// Assets a deposit is of.
const (
	USDC = "usdc"
	SOL  = "sol"
)

// Watcher scans the watched accounts of each network it has a node for.
type Watcher struct {
	DB    *bun.DB
	Nodes map[solana.Network]*solana.Client
	Log   *slog.Logger
	// ListEvery is how often each wallet's token accounts are listed
	// again, to find one made for it by someone else (default 10 min);
	// ListPerScan bounds how many wallets one scan lists (default 20).
	ListEvery   time.Duration
	ListPerScan int
	// PerAccount bounds how many transactions of one account a scan
	// examines (default 200); the next scan goes on from there.
	PerAccount int
	// SnapshotEvery is how often each wallet's balance is read on chain
	// and checked against its ledger (DefaultSnapshotEvery);
	// SnapshotPerRun bounds the wallets one Snapshot checks
	// (DefaultSnapshotPerRun).
	SnapshotEvery  time.Duration
	SnapshotPerRun int
}

// Stats is what one scan did.
type Stats struct {
	Watched, Changed, Examined, Deposits int
	// Failed: deposits found dropped by a fork.
	Failed int
}

// Scan examines every network's watched accounts once.
func (w *Watcher) Scan(ctx context.Context) (Stats, error) {
	var total Stats
	err := w.eachNetwork(func(network solana.Network, c *solana.Client) error {
		st, err := w.scan(ctx, network, c)
		total.Watched += st.Watched
		total.Changed += st.Changed
		total.Examined += st.Examined
		total.Deposits += st.Deposits
		total.Failed += st.Failed
		return err
	})
	return total, err
}

// eachNetwork runs do for every network the watcher has a node for, and
// joins their errors, each named by its network: one network's node
// failing never holds back another's.
func (w *Watcher) eachNetwork(do func(solana.Network, *solana.Client) error) error {
	var errs []error
	for network, c := range w.Nodes {
		if err := do(network, c); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", network, err))
		}
	}
	return errors.Join(errs...)
}

// watched is a watched_accounts row.
type watched struct {
	Address       string         `bun:"address"`
	Network       string         `bun:"network"`
	WalletID      uuid.UUID      `bun:"wallet_id,type:uuid"`
	Asset         string         `bun:"asset"`
	Balance       sql.NullInt64  `bun:"balance"`
	LastSignature sql.NullString `bun:"last_signature"`
	Since         time.Time      `bun:"since"`
}

func (w *Watcher) scan(ctx context.Context, network solana.Network, c *solana.Client) (Stats, error) {
	var st Stats
	if err := w.ensure(ctx, network, c); err != nil {
		return st, err
	}
	var rows []watched
	if err := w.DB.NewSelect().Table("watched_accounts").Column("address", "network", "wallet_id", "asset", "balance", "last_signature", "since").
		Where("network = ?", network).Order("address").Scan(ctx, &rows); err != nil {
		return st, fmt.Errorf("read watched accounts: %w", err)
	}
	st.Watched = len(rows)
	addrs := make([]sol.PublicKey, len(rows))
	for i, r := range rows {
		addrs[i] = sol.MustPublicKeyFromBase58(r.Address)
	}
	states, err := c.Accounts(ctx, addrs)
	if err != nil {
		return st, err
	}
	var errs []error
	for i, r := range rows {
		now := read{balanceOf(r.Asset, states[i]), states[i].Slot}
		if r.Balance.Valid && r.Balance.Int64 == now.balance {
			continue
		}
		st.Changed++
		n, d, _, err := w.examine(ctx, network, c, r.Address, now.balance, 0)
		st.Examined += n
		st.Deposits += d
		if err != nil {
			errs = append(errs, fmt.Errorf("account %s: %w", r.Address, err))
		}
	}
	failed, err := w.settle(ctx, network, c)
	st.Failed = failed
	if err != nil {
		errs = append(errs, fmt.Errorf("settle deposits: %w", err))
	}
	return st, errors.Join(errs...)
}

// read is an account's balance as a node read it, at a slot.
type read struct {
	balance int64
	slot    uint64
}

// balanceOf is the amount the watcher compares: a token account's amount,
// an address's lamports.
func balanceOf(asset string, s solana.AccountState) int64 {
	if asset == USDC {
		return int64(s.Amount)
	}
	return int64(s.Lamports)
}

// ensure watches every wallet of the network: its address from its
// creation (or from when watching began, for older wallets), its
// associated USDC account likewise, and, a few wallets a scan, the other
// USDC accounts it owns.
func (w *Watcher) ensure(ctx context.Context, network solana.Network, c *solana.Client) error {
	if _, err := w.DB.NewRaw(`INSERT INTO watched_accounts (address, network, wallet_id, asset, since)
		SELECT w.pubkey, a.network, w.id, 'sol', w.created_at FROM wallets w JOIN accounts a ON a.id = w.account_id
		WHERE a.network = ? AND NOT EXISTS (SELECT 1 FROM watched_accounts x WHERE x.wallet_id = w.id AND x.asset = 'sol')
		ON CONFLICT DO NOTHING`, network).Exec(ctx); err != nil {
		return fmt.Errorf("watch new wallets: %w", err)
	}
	var missing []struct {
		ID     uuid.UUID `bun:"id,type:uuid"`
		Pubkey string    `bun:"pubkey"`
		Since  time.Time `bun:"since"`
	}
	if err := w.DB.NewRaw(`SELECT w.id, w.pubkey, x.since FROM wallets w JOIN watched_accounts x ON x.wallet_id = w.id AND x.asset = 'sol'
		WHERE x.network = ? AND NOT EXISTS (SELECT 1 FROM watched_accounts u WHERE u.wallet_id = w.id AND u.asset = 'usdc')`, network).Scan(ctx, &missing); err != nil {
		return fmt.Errorf("find unwatched USDC accounts: %w", err)
	}
	for _, m := range missing {
		ata, err := network.AssociatedUSDC(sol.MustPublicKeyFromBase58(m.Pubkey))
		if err != nil {
			return err
		}
		if err := w.watch(ctx, network, m.ID, ata, m.Since); err != nil {
			return err
		}
	}
	return w.listTokenAccounts(ctx, network, c)
}

func (w *Watcher) watch(ctx context.Context, network solana.Network, walletID uuid.UUID, account sol.PublicKey, since time.Time) error {
	_, err := w.DB.NewRaw(`INSERT INTO watched_accounts (address, network, wallet_id, asset, since) VALUES (?, ?, ?, 'usdc', ?)
		ON CONFLICT DO NOTHING`, account.String(), network, walletID, since).Exec(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", account, err)
	}
	return nil
}

// listTokenAccounts lists, for the wallets listed longest ago, every USDC
// account they own, and watches those not watched yet.
func (w *Watcher) listTokenAccounts(ctx context.Context, network solana.Network, c *solana.Client) error {
	every, per := w.ListEvery, w.ListPerScan
	if every <= 0 {
		every = 10 * time.Minute
	}
	if per <= 0 {
		per = 20
	}
	var due []struct {
		ID     uuid.UUID `bun:"id,type:uuid"`
		Pubkey string    `bun:"pubkey"`
		Since  time.Time `bun:"since"`
	}
	if err := w.DB.NewRaw(`SELECT w.id, w.pubkey, x.since FROM wallets w JOIN watched_accounts x ON x.wallet_id = w.id AND x.asset = 'sol'
		WHERE x.network = ? AND (w.token_accounts_listed_at IS NULL OR w.token_accounts_listed_at < now() - make_interval(secs => ?))
		ORDER BY w.token_accounts_listed_at NULLS FIRST LIMIT ?`, network, every.Seconds(), per).Scan(ctx, &due); err != nil {
		return fmt.Errorf("wallets to list: %w", err)
	}
	for _, d := range due {
		accounts, err := c.TokenAccountsOf(ctx, sol.MustPublicKeyFromBase58(d.Pubkey), network.USDCMint())
		if err != nil {
			return err
		}
		for _, a := range accounts {
			if err := w.watch(ctx, network, d.ID, a, d.Since); err != nil {
				return err
			}
		}
		if _, err := w.DB.NewRaw(`UPDATE wallets SET token_accounts_listed_at = now() WHERE id = ?`, d.ID).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// examine reads the account's transactions since its cursor and records
// the deposits among them, then moves the cursor and the balance, in one
// commit under the account's row lock (another scan at it skips it).
// With minSlot, only a node whose history reached that slot may list
// them. done reports that the account's transactions (up to minSlot) are
// all examined: it was not locked by another scan, and fewer than the
// per-account bound were listed.
func (w *Watcher) examine(ctx context.Context, network solana.Network, c *solana.Client, address string, balance int64, minSlot uint64) (examined, deposits int, done bool, err error) {
	limit := w.PerAccount
	if limit <= 0 {
		limit = 200
	}
	err = w.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var r watched
		err := tx.NewSelect().Table("watched_accounts").Column("address", "network", "wallet_id", "asset", "balance", "last_signature", "since").
			Where("network = ? AND address = ?", network, address).For("UPDATE SKIP LOCKED").Scan(ctx, &r)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // another scan holds it
		}
		if err != nil {
			return err
		}
		var until sol.Signature
		if r.LastSignature.Valid {
			until = sol.MustSignatureFromBase58(r.LastSignature.String)
		}
		account := sol.MustPublicKeyFromBase58(address)
		sigs, err := c.SignaturesSince(ctx, account, until, limit, minSlot)
		if err != nil {
			return err
		}
		done = len(sigs) < limit
		var owner struct {
			AccountID uuid.UUID `bun:"account_id,type:uuid"`
			Pubkey    string    `bun:"pubkey"`
		}
		if err := tx.NewSelect().Table("wallets").Column("account_id", "pubkey").Where("id = ?", r.WalletID).Scan(ctx, &owner); err != nil {
			return err
		}
		// The stored balance is the account's balance after the last
		// transaction examined, read from that transaction: a balance read
		// from a node ahead of the one that listed the signatures never
		// hides a transaction not yet examined (the next scan sees the
		// difference and looks again).
		after := r.Balance
		for _, s := range sigs {
			examined++
			m, err := c.Movement(ctx, s.Signature)
			if err != nil {
				return err
			}
			if v, ok := balanceAfter(r.Asset, account, m); ok {
				after = sql.NullInt64{Int64: v, Valid: true}
				if err := w.ledger(ctx, tx, network, &r, s, m, v); err != nil {
					return err
				}
			}
			ok, err := w.record(ctx, tx, network, &r, owner.AccountID, sol.MustPublicKeyFromBase58(owner.Pubkey), s, m)
			if err != nil {
				return err
			}
			if ok {
				deposits++
			}
			if err := w.outflow(ctx, tx, network, &r, owner.AccountID, sol.MustPublicKeyFromBase58(owner.Pubkey), s, m); err != nil {
				return err
			}
		}
		q := tx.NewUpdate().Table("watched_accounts").Set("checked_at = now()").Where("network = ? AND address = ?", network, address)
		if len(sigs) > 0 {
			q = q.Set("last_signature = ?", sigs[len(sigs)-1].Signature.String())
		}
		switch {
		case after.Valid:
			q = q.Set("balance = ?", after.Int64)
		case len(sigs) == 0 && balance == 0:
			// Empty and never touched (a token account not made yet).
			// A balance with no transaction listed for it is a node that
			// lists behind its balances: looked at again next scan.
			q = q.Set("balance = ?", balance)
		}
		_, err = q.Exec(ctx)
		return err
	})
	return examined, deposits, done && err == nil, err
}

// record records the wallet's gain of the account's asset in transaction
// s (its balance changes m), if any, as a deposit with its event. The
// wallet's own payments are not deposits, nor is what happened before the
// account was watched.
func (w *Watcher) record(ctx context.Context, tx bun.Tx, network solana.Network, r *watched, accountID uuid.UUID, owner sol.PublicKey, s solana.SignatureInfo, m solana.Movement) (bool, error) {
	if s.Failed || m.Failed || !m.BlockTime.IsZero() && m.BlockTime.Before(r.Since.Truncate(time.Second)) {
		return false, nil
	}
	var gain int64
	var from sol.PublicKey
	switch r.Asset {
	case USDC:
		gain = m.Tokens[solana.TokenHolding{Owner: owner, Mint: network.USDCMint()}]
		from = largestLoss(m.Tokens, network.USDCMint())
	case SOL:
		gain = m.Lamports[owner]
		from = largestLamportLoss(m.Lamports)
	}
	if gain <= 0 || from.Equals(owner) {
		return false, nil
	}
	at := m.BlockTime
	if at.IsZero() {
		at = time.Now().UTC()
	}
	at = at.Truncate(time.Microsecond)
	id := uuid.New()
	res, err := tx.NewRaw(`INSERT INTO deposits (id, account_id, wallet_id, network, signature, asset, amount, counterparty, slot, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (wallet_id, signature, asset) DO NOTHING`,
		id, accountID, r.WalletID, network, s.Signature.String(), r.Asset, gain, from.String(), m.Slot, at).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("record deposit: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil // recorded already (through another of its accounts)
	}
	data := map[string]any{
		"wallet_id": r.WalletID, "signature": s.Signature.String(), "asset": r.Asset, "from": from.String(),
		"amount": amountOf(r.Asset, gain), "transaction_id": id, "slot": m.Slot,
	}
	if _, err := webhook.Emit(ctx, tx, accountID, at, webhook.KindTxReceived, data); err != nil {
		return false, err
	}
	w.log().InfoContext(ctx, "deposit", "wallet_id", r.WalletID, "asset", r.Asset, "amount", gain, "signature", s.Signature.String())
	return true, nil
}

// outflow records money that left the wallet in transaction s when the
// service did not make s (none of its signatures is one of our payments'),
// with its wallet.unexplained_outflow event: the wallet's key was used
// elsewhere. Transactions from before the account was watched are
// history.
func (w *Watcher) outflow(ctx context.Context, tx bun.Tx, network solana.Network, r *watched, accountID uuid.UUID, owner sol.PublicKey, s solana.SignatureInfo, m solana.Movement) error {
	if !m.BlockTime.IsZero() && m.BlockTime.Before(r.Since.Truncate(time.Second)) {
		return nil
	}
	var loss int64
	var to sol.PublicKey
	switch r.Asset {
	case USDC:
		loss = -m.Tokens[solana.TokenHolding{Owner: owner, Mint: network.USDCMint()}]
		to = largestGain(m.Tokens, network.USDCMint())
	case SOL:
		loss = -m.Lamports[owner]
		to = largestLamportGain(m.Lamports)
	}
	if loss <= 0 {
		return nil
	}
	sigs := make([]string, len(m.Signatures))
	for i, sg := range m.Signatures {
		sigs[i] = sg.String()
	}
	var ours bool
	err := tx.NewRaw(`SELECT EXISTS (SELECT 1 FROM transactions WHERE signature IN (?))
		OR EXISTS (SELECT 1 FROM transaction_attempts WHERE signature IN (?))
		OR EXISTS (SELECT 1 FROM x402_payments WHERE owner_signature IN (?) OR signature IN (?))`,
		bun.List(sigs), bun.List(sigs), bun.List(sigs), bun.List(sigs)).Scan(ctx, &ours)
	if err != nil {
		return fmt.Errorf("is it ours: %w", err)
	}
	if ours {
		return nil
	}
	at := m.BlockTime
	if at.IsZero() {
		at = time.Now().UTC()
	}
	at = at.Truncate(time.Microsecond)
	id := uuid.New()
	res, err := tx.NewRaw(`INSERT INTO unexplained_outflows (id, account_id, wallet_id, network, signature, asset, amount, counterparty, slot, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (wallet_id, signature, asset) DO NOTHING`,
		id, accountID, r.WalletID, network, s.Signature.String(), r.Asset, loss, to.String(), m.Slot, at).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record unexplained outflow: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	data := map[string]any{"wallet_id": r.WalletID, "signature": s.Signature.String(), "asset": r.Asset,
		"amount": amountOf(r.Asset, loss), "to": to.String(), "slot": m.Slot}
	if _, err := webhook.Emit(ctx, tx, accountID, at, webhook.KindUnexplainedOutflow, data); err != nil {
		return err
	}
	w.log().WarnContext(ctx, "money left a wallet in a transaction the service did not make", "wallet_id", r.WalletID,
		"asset", r.Asset, "amount", loss, "signature", s.Signature.String())
	return nil
}

// ledger records the account's balance after transaction s.
func (w *Watcher) ledger(ctx context.Context, tx bun.Tx, network solana.Network, r *watched, s solana.SignatureInfo, m solana.Movement, balance int64) error {
	at := m.BlockTime
	if at.IsZero() {
		at = time.Now().UTC()
	}
	_, err := tx.NewRaw(`INSERT INTO ledger (network, address, signature, wallet_id, asset, slot, at, balance)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (network, address, signature) DO NOTHING`,
		network, r.Address, s.Signature.String(), r.WalletID, r.Asset, m.Slot, at, balance).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record ledger: %w", err)
	}
	return nil
}

// balanceAfter is the watched account's balance after m, if m names it.
func balanceAfter(asset string, account sol.PublicKey, m solana.Movement) (int64, bool) {
	if asset == USDC {
		v, ok := m.TokenAfter[account]
		return v, ok
	}
	v, ok := m.After[account]
	return v, ok
}

// Decimals is how many decimal places an asset's base units have: USDC
// 6, SOL 9.
func Decimals(asset string) int {
	if asset == SOL {
		return 9
	}
	return 6
}

// amountOf is a deposit's amount in whole units for its event, a JSON
// number.
func amountOf(asset string, units int64) json.Number {
	return json.Number(usdc.FormatUnits(units, Decimals(asset)))
}

// largestLoss is the owner whose holding of mint fell most: the sender.
func largestLoss(tokens map[solana.TokenHolding]int64, mint sol.PublicKey) sol.PublicKey {
	var who sol.PublicKey
	var most int64
	for h, d := range tokens {
		if h.Mint.Equals(mint) && d < most {
			who, most = h.Owner, d
		}
	}
	return who
}

// largestGain is the owner whose holding of mint rose most: the recipient.
func largestGain(tokens map[solana.TokenHolding]int64, mint sol.PublicKey) sol.PublicKey {
	var who sol.PublicKey
	var most int64
	for h, d := range tokens {
		if h.Mint.Equals(mint) && d > most {
			who, most = h.Owner, d
		}
	}
	return who
}

// largestLamportGain is the account whose lamports rose most.
func largestLamportGain(lamports map[sol.PublicKey]int64) sol.PublicKey {
	var who sol.PublicKey
	var most int64
	for k, d := range lamports {
		if d > most {
			who, most = k, d
		}
	}
	return who
}

// largestLamportLoss is the account whose lamports fell most.
func largestLamportLoss(lamports map[sol.PublicKey]int64) sol.PublicKey {
	var who sol.PublicKey
	var most int64
	for k, d := range lamports {
		if d < most {
			who, most = k, d
		}
	}
	return who
}

func (w *Watcher) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}
