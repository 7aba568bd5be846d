// Package deposit finds the money that comes into agent wallets: any
// asset of the asset table (USDC, EURC, PYUSD, USDG, an operator's) to
// any of a wallet's token accounts, of the SPL Token or the Token-2022
// program, and SOL to its address, however it arrived (a transfer, a
// transferChecked, inside another program's instruction), and records
// each deposit once, with its tx.received event. Mints the table does
// not know are ignored: anyone can make a token that looks like money.
//
// A scan reads every watched account's balance (getMultipleAccounts, 100 a
// call) and examines only the accounts whose balance changed: their
// transactions since the account's cursor (getSignaturesForAddress), each
// read from its metadata's balance changes (getTransaction), which show a
// transfer made by CPI as well as a top-level one; a transaction is read
// once a scan, whichever of a wallet's accounts it touched. A change the
// wallet's own landed payments explain exactly (explain.go) is written
// from what the service signed, without reading them back, and the
// account's history is read from its cursor within AuditEvery, its
// transactions in the ledger skipped. The cursor and the
// deposits of an account are written in one commit under the account's
// row lock, and a deposit is unique by wallet, signature and asset: a
// restart, a failover or two workers scanning at once resume where the
// last commit left off, and never count a transfer twice.
//
// A stranger can make token accounts for any wallet and send it dust, so
// what the watcher spends on a wallet is bounded: its associated USDC
// account is always watched; the associated account of another asset
// once it exists (found when the wallet's token accounts are listed, or
// in a transaction the watcher examines) or once the wallet may spend
// the asset; of the other accounts listed as a wallet's, only those
// holding money are watched, at most MaxListedAccounts, and one emptied
// or closed stops being watched; a wallet whose listing or reads fail waits
// (RetryFirst, doubling) without holding back the others; a scan reads
// balances within its ReadBudget and examines what it read; a deposit
// below the account's minimum is recorded but not announced. Money the
// wallet moves into another token account it owns is followed there, and
// a watched account counts only while it holds the wallet's own asset
// (the row's mint, the wallet as owner).
package deposit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// The deposit tables name SOL "sol" and an asset of the table by its
// symbol in lower case (Key). USDC is the one asset every wallet is
// watched for from its creation (its associated account), so the watcher
// names it here.
const (
	USDC = "usdc"
	SOL  = "sol"
)

// Key is how the deposit tables name an asset of the table: its symbol
// in lower case (the API names it in upper case).
func Key(symbol string) string { return strings.ToLower(symbol) }

// Watcher scans the watched accounts of each network it has a node for.
type Watcher struct {
	DB    *bun.DB
	Nodes map[solana.Network]*solana.Client
	// Assets are the tokens whose deposits are recorded, per network
	// (nil: asset.Defaults()); a mint not in it is ignored.
	Assets asset.Table
	Log    *slog.Logger
	// ListEvery is how often each wallet's token accounts are listed
	// again, to find one made for it by someone else (default 10 min);
	// ListPerScan bounds how many wallets one scan lists (default 20).
	ListEvery   time.Duration
	ListPerScan int
	// PerAccount bounds how many transactions of one account a scan
	// examines (default 200); the next scan goes on from there.
	PerAccount int
	// ReadBudget bounds the time a scan spends reading balances
	// (DefaultReadBudget, and never more than half of what is left of
	// the scan's context): past it the scan reads no more, examines
	// what it read, and the next scan reads on from where it stopped.
	ReadBudget time.Duration
	// SnapshotEvery is how often each wallet's balance is read on chain
	// and checked against its ledger (DefaultSnapshotEvery);
	// SnapshotPerRun bounds the wallets one Snapshot checks
	// (DefaultSnapshotPerRun).
	SnapshotEvery  time.Duration
	SnapshotPerRun int
	// AuditEvery is how soon the history of an account whose changes the
	// service's own payments explained is read (DefaultAuditEvery): a
	// deposit and an outflow of one amount among the payments cancel out
	// in the balance, and only that read finds them.
	AuditEvery time.Duration

	mu sync.Mutex
	// next is, per network, the address the next scan reads from.
	next map[solana.Network]string
}

// MaxListedAccounts is how many token accounts listed as a wallet's
// (beyond its associated one, which is always watched) are watched per
// wallet: anyone can make token accounts for any wallet, and each
// watched one costs every scan a read. Those holding the most are kept.
const MaxListedAccounts = 32

// DefaultAuditEvery is AuditEvery's default: 5 minutes. It bounds how
// late the alarm of a deposit swept out by an equal outflow among the
// wallet's payments rings, at about one getSignaturesForAddress per busy
// account per 5 minutes (its transactions in the ledger are not read);
// the snapshot's day (DefaultSnapshotEvery) would leave a thief a day,
// and the snapshot cannot see such a pair anyway (nothing is missing).
const DefaultAuditEvery = 5 * time.Minute

// DefaultReadBudget is a scan's time for reading balances.
const DefaultReadBudget = 15 * time.Second

// Backoff of a wallet whose listing or reads failed: the first retry
// after RetryFirst, doubling with each failure in a row, at most
// RetryMost.
const (
	RetryFirst = 5 * time.Second
	RetryMost  = 5 * time.Minute
)

// Stats is what one scan did.
type Stats struct {
	// Watched: accounts watched; Read: those whose balance this scan
	// read (fewer past the read budget); Changed: those whose balance
	// changed; Examined: transactions examined.
	Watched, Read, Changed, Examined, Deposits int
	// Explained: changed accounts whose change the service's own
	// payments explained, so none of their transactions was read.
	// Audited: accounts whose history was read because explained
	// changes had left their cursor behind for AuditEvery.
	Explained, Audited int
	// Failed: deposits found dropped by a fork.
	Failed int
	// Pruned: accounts no longer watched (closed or emptied token
	// accounts that are not the wallet's associated ones); Resting:
	// accounts left alone because their wallet is waiting to retry.
	Pruned, Resting int
}

// Scan examines every network's watched accounts once.
func (w *Watcher) Scan(ctx context.Context) (Stats, error) {
	var total Stats
	err := w.eachNetwork(func(network solana.Network, c *solana.Client) error {
		st, err := w.scan(ctx, network, c)
		total.Watched += st.Watched
		total.Read += st.Read
		total.Changed += st.Changed
		total.Examined += st.Examined
		total.Explained += st.Explained
		total.Audited += st.Audited
		total.Deposits += st.Deposits
		total.Failed += st.Failed
		total.Pruned += st.Pruned
		total.Resting += st.Resting
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

// Roles of a watched account.
const (
	roleAddress    = "address"    // the wallet's address (SOL)
	roleAssociated = "associated" // its associated account of the row's asset
	roleListed     = "listed"     // a token account listed as its (made by anyone)
	roleFollowed   = "followed"   // a token account its money was seen moving into
)

// watched is a watched_accounts row, with its wallet's address.
type watched struct {
	Address       string         `bun:"address"`
	Network       string         `bun:"network"`
	WalletID      uuid.UUID      `bun:"wallet_id,type:uuid"`
	Asset         string         `bun:"asset"`
	Balance       sql.NullInt64  `bun:"balance"`
	LastSignature sql.NullString `bun:"last_signature"`
	Since         time.Time      `bun:"since"`
	Role          sql.NullString `bun:"role"`
	Owner         string         `bun:"owner"`
	Resting       bool           `bun:"resting"`
	Failures      int            `bun:"failures"`
	ExplainedAt   sql.NullTime   `bun:"explained_at"`

	// token is the table's asset of a token row (resolve).
	token asset.Asset
}

// watchedColumns select a watched row from watched_accounts x joined to
// wallets w.
const watchedColumns = `x.address, x.network, x.wallet_id, x.asset, x.balance, x.last_signature, x.since, x.role, x.explained_at,
	w.pubkey AS owner, coalesce(w.deposit_retry_at > now(), false) AS resting, w.deposit_failures AS failures`

// prunable: a token account that may stop being watched once it holds
// nothing (not the wallet's address, nor its associated account).
func (r *watched) prunable() bool {
	return r.Role.Valid && (r.Role.String == roleListed || r.Role.String == roleFollowed)
}

// assets is the table in force.
func (w *Watcher) assets() asset.Table { return w.Assets.OrDefaults() }

// resolve finds the table's asset of a token row; false for a row of an
// asset the table no longer has, which is left alone.
func (w *Watcher) resolve(network solana.Network, r *watched) bool {
	if r.Asset == SOL {
		return true
	}
	a, ok := w.assets().Find(network, r.Asset)
	r.token = a
	return ok
}

// holding is what a watched token account counts as: the wallet's
// holding of the row's mint.
func (r *watched) holding() solana.TokenHolding {
	return solana.TokenHolding{Owner: sol.MustPublicKeyFromBase58(r.Owner), Mint: r.token.Mint}
}

// countable is the balance the watcher compares for r (resolved) as read
// in s: an address's lamports; a token account's amount only while it
// is a token account of the wallet's own mint and owner (an account
// closed and made again at its address under another mint or owner
// holds nothing of the wallet's).
func (r *watched) countable(s solana.AccountState) int64 {
	if r.Asset == SOL {
		return int64(s.Lamports)
	}
	h := r.holding()
	if !s.Exists || !s.Token || !s.Mint.Equals(h.Mint) || !s.Owner.Equals(h.Owner) {
		return 0
	}
	return int64(s.Amount)
}

func (w *Watcher) scan(ctx context.Context, network solana.Network, c *solana.Client) (Stats, error) {
	var st Stats
	began := time.Now()
	var errs []error
	if err := w.ensure(ctx, network, c); err != nil {
		if ctx.Err() != nil {
			return st, err
		}
		errs = append(errs, err)
	}
	var rows []watched
	if err := w.DB.NewRaw(`SELECT `+watchedColumns+` FROM watched_accounts x JOIN wallets w ON w.id = x.wallet_id
		WHERE x.network = ? ORDER BY x.address`, network).Scan(ctx, &rows); err != nil {
		return st, errors.Join(append(errs, fmt.Errorf("read watched accounts: %w", err))...)
	}
	st.Watched = len(rows)
	rows = w.rotate(network, rows)

	// Read balances, 100 a call, until the budget is spent; the next
	// scan reads on from the first account not read.
	budget := w.ReadBudget
	if budget <= 0 {
		budget = DefaultReadBudget
	}
	if d, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(d)/2)
	}
	readCtx, cancel := context.WithDeadline(ctx, began.Add(budget))
	defer cancel()
	states := make([]*solana.AccountState, len(rows))
	next := ""
	for from := 0; from < len(rows); from += solana.MaxAccountsPerCall {
		batch := rows[from:min(from+solana.MaxAccountsPerCall, len(rows))]
		if from > 0 && readCtx.Err() != nil {
			next = batch[0].Address
			break
		}
		addrs := make([]sol.PublicKey, len(batch))
		for i, r := range batch {
			addrs[i] = sol.MustPublicKeyFromBase58(r.Address)
		}
		rctx := readCtx
		if from == 0 {
			rctx = ctx // a scan reads at least one call's worth
		}
		got, err := c.Accounts(rctx, addrs)
		if err != nil {
			if ctx.Err() != nil {
				return st, err
			}
			errs = append(errs, fmt.Errorf("read balances: %w", err))
			continue
		}
		for i := range got {
			states[from+i] = &got[i]
		}
		st.Read += len(got)
	}
	w.setNext(network, next)

	failed := map[uuid.UUID]bool{}
	failures := map[uuid.UUID]int{}
	var prune []string
	var changes []change
	for i := range rows {
		r := &rows[i]
		if states[i] == nil {
			continue
		}
		if r.Resting {
			st.Resting++
			continue
		}
		if !w.resolve(network, r) {
			continue
		}
		failures[r.WalletID] = r.Failures
		now := r.countable(*states[i])
		if r.Balance.Valid && r.Balance.Int64 == now {
			if now == 0 && r.prunable() {
				prune = append(prune, r.Address)
			}
			continue
		}
		st.Changed++
		changes = append(changes, change{r: r, now: now, slot: states[i].Slot})
	}
	// What the service's own payments explain is not read back; the rest
	// is, each transaction read once however many accounts it touched.
	explained, err := w.explain(ctx, network, c, changes)
	if err != nil {
		if ctx.Err() != nil {
			return st, err
		}
		errs = append(errs, fmt.Errorf("explain changes by the service's payments: %w", err))
	}
	st.Explained = len(explained)
	read := map[sol.Signature]solana.Movement{}
	examined := map[string]bool{}
	for _, ch := range changes {
		r, now := ch.r, ch.now
		if explained[r.Address] {
			continue
		}
		examined[r.Address] = true
		n, d, _, err := w.examine(ctx, network, c, r.Address, now, 0, read)
		st.Examined += n
		st.Deposits += d
		if err != nil {
			if ctx.Err() != nil {
				return st, err
			}
			failed[r.WalletID] = true
			errs = append(errs, fmt.Errorf("wallet %s, account %s: %w", r.WalletID, r.Address, err))
		}
	}
	// An account whose cursor explained changes have left behind for
	// AuditEvery has its history read from the cursor: its transactions
	// already in its ledger are not read, anything else (a deposit and an
	// outflow that cancelled out among the payments) is, as above.
	every := w.AuditEvery
	if every <= 0 {
		every = DefaultAuditEvery
	}
	for i := range rows {
		r := &rows[i]
		if !r.ExplainedAt.Valid || time.Since(r.ExplainedAt.Time) < every || examined[r.Address] || r.Resting || !w.resolve(network, r) {
			continue
		}
		st.Audited++
		n, d, _, err := w.examine(ctx, network, c, r.Address, r.Balance.Int64, 0, read)
		st.Examined += n
		st.Deposits += d
		if _, ok := failures[r.WalletID]; !ok {
			failures[r.WalletID] = r.Failures
		}
		if err != nil {
			if ctx.Err() != nil {
				return st, err
			}
			failed[r.WalletID] = true
			errs = append(errs, fmt.Errorf("wallet %s, account %s (audit): %w", r.WalletID, r.Address, err))
		}
	}
	if len(prune) > 0 {
		n, err := w.prune(ctx, network, prune)
		st.Pruned += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	for id, n := range failures {
		if err := w.outcome(ctx, id, n, failed[id]); err != nil {
			errs = append(errs, err)
		}
	}
	failedDeposits, err := w.settle(ctx, network, c)
	st.Failed = failedDeposits
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

// rotate puts first the rows from the address the last scan stopped
// reading at.
func (w *Watcher) rotate(network solana.Network, rows []watched) []watched {
	w.mu.Lock()
	from := w.next[network]
	w.mu.Unlock()
	if from == "" {
		return rows
	}
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Address >= from })
	return append(rows[i:len(rows):len(rows)], rows[:i]...)
}

func (w *Watcher) setNext(network solana.Network, address string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.next == nil {
		w.next = map[solana.Network]string{}
	}
	w.next[network] = address
}

// prune stops watching token accounts that hold nothing of the wallet's
// and are not its associated ones: their last examined balance is zero,
// and so is what the chain holds for the wallet there. A deposit to one
// later is found when the wallet's accounts are listed again.
func (w *Watcher) prune(ctx context.Context, network solana.Network, addrs []string) (int, error) {
	res, err := w.DB.NewRaw(`DELETE FROM watched_accounts WHERE network = ? AND address IN (?)
		AND role IN ('listed', 'followed') AND balance = 0`, network, bun.List(addrs)).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune watched accounts: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// outcome records how a wallet's work went: a failure puts the wallet to
// rest, doubling the wait with each failure in a row (RetryFirst to
// RetryMost); a success after failures clears them.
func (w *Watcher) outcome(ctx context.Context, walletID uuid.UUID, failures int, failed bool) error {
	return w.backoff(ctx, "deposit", walletID, failures, failed)
}

// backoff records the outcome of one kind of a wallet's work (what:
// deposit, its reads; token_accounts, its listing) in its columns
// <what>_failures and <what>_retry_at.
func (w *Watcher) backoff(ctx context.Context, what string, walletID uuid.UUID, failures int, failed bool) error {
	var err error
	switch {
	case failed:
		_, err = w.DB.NewRaw(`UPDATE wallets SET ?0 = ?0 + 1,
			?1 = now() + least(make_interval(secs => ?2) * power(2, least(?0, 20)), make_interval(secs => ?3))
			WHERE id = ?4`, bun.Ident(what+"_failures"), bun.Ident(what+"_retry_at"), RetryFirst.Seconds(), RetryMost.Seconds(), walletID).Exec(ctx)
	case failures > 0:
		_, err = w.DB.NewRaw(`UPDATE wallets SET ?0 = 0, ?1 = NULL WHERE id = ?2`,
			bun.Ident(what+"_failures"), bun.Ident(what+"_retry_at"), walletID).Exec(ctx)
	}
	if err != nil {
		return fmt.Errorf("wallet %s: record its outcome: %w", walletID, err)
	}
	if failed {
		w.log().WarnContext(ctx, "a wallet's "+what+" work failed: retried later", "wallet_id", walletID, "failures", failures+1)
	}
	return nil
}

// ensure watches every wallet of the network: its address from its
// creation (or from when watching began, for older wallets), its
// associated USDC account likewise, its associated account of each other
// asset it may spend, and, a few wallets a scan, the token accounts of
// the table's mints it owns. Only a failure of the database is returned:
// a wallet whose listing fails waits to be listed again, the others go
// on.
func (w *Watcher) ensure(ctx context.Context, network solana.Network, c *solana.Client) error {
	if _, err := w.DB.NewRaw(`INSERT INTO watched_accounts (address, network, wallet_id, asset, since, role)
		SELECT w.pubkey, a.network, w.id, 'sol', w.created_at, 'address' FROM wallets w JOIN accounts a ON a.id = w.account_id
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
		WHERE x.network = ? AND NOT EXISTS (SELECT 1 FROM watched_accounts u WHERE u.wallet_id = w.id AND u.asset = 'usdc'
			AND (u.role = 'associated' OR u.role IS NULL))`, network).Scan(ctx, &missing); err != nil {
		return fmt.Errorf("find unwatched USDC accounts: %w", err)
	}
	for _, m := range missing {
		ata, err := network.AssociatedUSDC(sol.MustPublicKeyFromBase58(m.Pubkey))
		if err != nil {
			return err
		}
		if err := w.watch(ctx, w.DB, network, m.ID, USDC, ata, m.Since, roleAssociated); err != nil {
			return err
		}
	}
	if err := w.ensureSpendable(ctx, network); err != nil {
		return err
	}
	if err := w.classify(ctx, network); err != nil {
		return err
	}
	return w.listTokenAccounts(ctx, network, c)
}

// ensureSpendable watches the associated account of every asset (other
// than USDC, watched always) a wallet may spend (wallets.assets): its
// own payments of the asset come from there. One not made yet costs a
// read per scan, as the associated USDC account of an unfunded wallet.
func (w *Watcher) ensureSpendable(ctx context.Context, network solana.Network) error {
	var missing []struct {
		ID     uuid.UUID `bun:"id,type:uuid"`
		Pubkey string    `bun:"pubkey"`
		Since  time.Time `bun:"since"`
		Symbol string    `bun:"symbol"`
	}
	if err := w.DB.NewRaw(`SELECT w.id, w.pubkey, x.since, s.symbol FROM wallets w
		JOIN watched_accounts x ON x.wallet_id = w.id AND x.asset = 'sol'
		CROSS JOIN LATERAL unnest(w.assets) AS s(symbol)
		WHERE x.network = ? AND lower(s.symbol) <> 'usdc' AND NOT EXISTS (SELECT 1 FROM watched_accounts u
			WHERE u.wallet_id = w.id AND u.asset = lower(s.symbol) AND u.role = 'associated')`, network).Scan(ctx, &missing); err != nil {
		return fmt.Errorf("find unwatched accounts of spendable assets: %w", err)
	}
	for _, m := range missing {
		a, ok := w.assets().Find(network, m.Symbol)
		if !ok {
			continue // not an asset of this network
		}
		ata, err := solana.AssociatedToken(sol.MustPublicKeyFromBase58(m.Pubkey), a.Mint, a.Program)
		if err != nil {
			return err
		}
		if err := w.watch(ctx, w.DB, network, m.ID, Key(a.Symbol), ata, m.Since, roleAssociated); err != nil {
			return err
		}
	}
	return nil
}

// classify names the role of the USDC accounts watched before roles were
// kept: the wallet's associated account, or one listed.
func (w *Watcher) classify(ctx context.Context, network solana.Network) error {
	if _, err := w.DB.NewRaw(`UPDATE watched_accounts SET role = 'address' WHERE network = ? AND role IS NULL AND asset = 'sol'`, network).Exec(ctx); err != nil {
		return fmt.Errorf("name watched addresses' role: %w", err)
	}
	var rows []struct {
		Address string `bun:"address"`
		Pubkey  string `bun:"pubkey"`
	}
	if err := w.DB.NewRaw(`SELECT x.address, w.pubkey FROM watched_accounts x JOIN wallets w ON w.id = x.wallet_id
		WHERE x.network = ? AND x.role IS NULL AND x.asset = 'usdc' LIMIT 1000`, network).Scan(ctx, &rows); err != nil {
		return fmt.Errorf("watched accounts without a role: %w", err)
	}
	byRole := map[string][]string{}
	for _, r := range rows {
		role := roleListed
		if ata, err := network.AssociatedUSDC(sol.MustPublicKeyFromBase58(r.Pubkey)); err == nil && ata.String() == r.Address {
			role = roleAssociated
		}
		byRole[role] = append(byRole[role], r.Address)
	}
	for role, addrs := range byRole {
		if _, err := w.DB.NewRaw(`UPDATE watched_accounts SET role = ? WHERE network = ? AND address IN (?) AND role IS NULL`,
			role, network, bun.List(addrs)).Exec(ctx); err != nil {
			return fmt.Errorf("name watched accounts' roles: %w", err)
		}
	}
	return nil
}

// watch watches a token account of the wallet holding asset (its Key)
// from since.
func (w *Watcher) watch(ctx context.Context, db bun.IDB, network solana.Network, walletID uuid.UUID, asset string, account sol.PublicKey, since time.Time, role string) error {
	_, err := db.NewRaw(`INSERT INTO watched_accounts (address, network, wallet_id, asset, since, role) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (network, address) DO UPDATE SET role = EXCLUDED.role
		WHERE watched_accounts.wallet_id = EXCLUDED.wallet_id AND watched_accounts.role IS NULL`,
		account.String(), network, walletID, asset, since, role).Exec(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", account, err)
	}
	return nil
}

// listTokenAccounts lists, for the wallets listed longest ago and not
// waiting to retry, the token accounts they own (one getTokenAccountsByOwner
// per token program of the table), keeps those of the table's mints, and
// watches the wallet's associated account of each asset found, and the
// other accounts that hold money, at most MaxListedAccounts a wallet
// (those watched already first, then the largest): an empty account
// holds nothing to watch, and a stranger can make thousands. A listed
// account no longer listed, and holding nothing by its last examination,
// stops being watched. A wallet whose listing fails is put to rest; the
// others go on.
func (w *Watcher) listTokenAccounts(ctx context.Context, network solana.Network, c *solana.Client) error {
	every, per := w.ListEvery, w.ListPerScan
	if every <= 0 {
		every = 10 * time.Minute
	}
	if per <= 0 {
		per = 20
	}
	var due []struct {
		ID       uuid.UUID `bun:"id,type:uuid"`
		Pubkey   string    `bun:"pubkey"`
		Since    time.Time `bun:"since"`
		Failures int       `bun:"token_accounts_failures"`
	}
	if err := w.DB.NewRaw(`SELECT w.id, w.pubkey, x.since, w.token_accounts_failures FROM wallets w JOIN watched_accounts x ON x.wallet_id = w.id AND x.asset = 'sol'
		WHERE x.network = ? AND (w.token_accounts_listed_at IS NULL OR w.token_accounts_listed_at < now() - make_interval(secs => ?))
			AND (w.token_accounts_retry_at IS NULL OR w.token_accounts_retry_at <= now())
		ORDER BY w.token_accounts_listed_at NULLS FIRST LIMIT ?`, network, every.Seconds(), per).Scan(ctx, &due); err != nil {
		return fmt.Errorf("wallets to list: %w", err)
	}
	var programs []sol.PublicKey
	for _, a := range w.assets().Of(network) {
		if !slices.ContainsFunc(programs, a.Program.Equals) {
			programs = append(programs, a.Program)
		}
	}
	for _, d := range due {
		owner := sol.MustPublicKeyFromBase58(d.Pubkey)
		var accounts []solana.TokenAccount
		var err error
		for _, p := range programs {
			var of []solana.TokenAccount
			if of, err = c.TokenAccountsOfProgram(ctx, owner, p); err != nil {
				break
			}
			accounts = append(accounts, of...)
		}
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			w.log().WarnContext(ctx, "a wallet's token accounts could not be listed", "wallet_id", d.ID, "err", err)
			if err := w.backoff(ctx, "token_accounts", d.ID, d.Failures, true); err != nil {
				return err
			}
			continue
		}
		if err := w.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return w.keepListed(ctx, tx, network, d.ID, owner, accounts, d.Since)
		}); err != nil {
			return fmt.Errorf("wallet %s: %w", d.ID, err)
		}
		if err := w.backoff(ctx, "token_accounts", d.ID, d.Failures, false); err != nil {
			return err
		}
	}
	return nil
}

// keepListed watches, of a wallet's listed token accounts, those it
// should (listTokenAccounts), and stops watching listed ones gone or
// emptied. Accounts of mints the table does not have are ignored.
func (w *Watcher) keepListed(ctx context.Context, tx bun.Tx, network solana.Network, walletID uuid.UUID, owner sol.PublicKey, listed []solana.TokenAccount, since time.Time) error {
	// The table's accounts only, each with its asset; the wallet's
	// associated accounts apart.
	var accounts []solana.TokenAccount
	assetOf := map[string]string{}
	associated := map[string]bool{}
	for _, a := range listed {
		tok, ok := w.assets().ByMint(network, a.Mint)
		if !ok {
			continue
		}
		accounts = append(accounts, a)
		assetOf[a.Address.String()] = Key(tok.Symbol)
		if ata, err := solana.AssociatedToken(owner, tok.Mint, tok.Program); err == nil && ata.Equals(a.Address) {
			associated[a.Address.String()] = true
		}
	}
	// The wallet's rows in address order, the order a fork's drop takes
	// them in.
	var current []struct {
		Address string         `bun:"address"`
		Balance sql.NullInt64  `bun:"balance"`
		Role    sql.NullString `bun:"role"`
	}
	if err := tx.NewRaw(`SELECT address, balance, role FROM watched_accounts WHERE wallet_id = ? AND network = ? AND asset <> 'sol' ORDER BY address FOR UPDATE`,
		walletID, network).Scan(ctx, &current); err != nil {
		return fmt.Errorf("listed accounts: %w", err)
	}
	held := map[string]uint64{}
	for _, a := range accounts {
		if a.Amount > 0 && !associated[a.Address.String()] {
			held[a.Address.String()] = a.Amount
		}
	}
	watchedNow := map[string]bool{}
	var gone []string
	for _, r := range current {
		delete(associated, r.Address) // watched already
		if r.Role.String != roleListed {
			delete(held, r.Address) // watched otherwise (associated, followed)
			continue
		}
		switch {
		case held[r.Address] > 0:
			watchedNow[r.Address] = true
		case r.Balance.Valid && r.Balance.Int64 == 0:
			// Empty or gone, and nothing of it left unexamined.
			gone = append(gone, r.Address)
		default:
			// Emptied since its last examination, or never examined yet:
			// the scan examines it (its deposits, its outflow, its
			// ledger) and prunes it then.
			watchedNow[r.Address] = true
		}
	}
	if len(gone) > 0 {
		if _, err := tx.NewRaw(`DELETE FROM watched_accounts WHERE network = ? AND address IN (?) AND role = 'listed'`,
			network, bun.List(gone)).Exec(ctx); err != nil {
			return fmt.Errorf("stop watching emptied accounts: %w", err)
		}
	}
	var fresh []solana.TokenAccount
	for _, a := range accounts {
		if held[a.Address.String()] > 0 && !watchedNow[a.Address.String()] {
			fresh = append(fresh, a)
		}
	}
	sort.Slice(fresh, func(i, j int) bool {
		if fresh[i].Amount != fresh[j].Amount {
			return fresh[i].Amount > fresh[j].Amount
		}
		return fresh[i].Address.String() < fresh[j].Address.String()
	})
	room := MaxListedAccounts - len(watchedNow)
	if len(fresh) > room {
		w.log().WarnContext(ctx, "a wallet has more token accounts than are watched", "wallet_id", walletID,
			"listed", len(accounts), "watched", MaxListedAccounts)
		fresh = fresh[:max(room, 0)]
	}
	for _, a := range fresh {
		if err := w.watch(ctx, tx, network, walletID, assetOf[a.Address.String()], a.Address, since, roleListed); err != nil {
			return err
		}
	}
	// The wallet's associated account of an asset, once it exists: one
	// per asset of the table at most, whatever a stranger makes.
	for _, a := range accounts {
		if associated[a.Address.String()] {
			if err := w.watch(ctx, tx, network, walletID, assetOf[a.Address.String()], a.Address, since, roleAssociated); err != nil {
				return err
			}
		}
	}
	_, err := tx.NewRaw(`UPDATE wallets SET token_accounts_listed_at = now() WHERE id = ?`, walletID).Exec(ctx)
	return err
}

// examine reads the account's transactions since its cursor and records
// the deposits among them, then moves the cursor and the balance, in one
// commit under the account's row lock (another scan at it skips it).
// With minSlot, only a node whose history reached that slot may list
// them. done reports that the account's transactions (up to minSlot) are
// all examined: it was not locked by another scan, and fewer than the
// per-account bound were listed.
//
// read, when not nil, holds the transactions this scan has read (by
// signature), so one touching several watched accounts is read once.
func (w *Watcher) examine(ctx context.Context, network solana.Network, c *solana.Client, address string, balance int64, minSlot uint64, read map[sol.Signature]solana.Movement) (examined, deposits int, done bool, err error) {
	limit := w.PerAccount
	if limit <= 0 {
		limit = 200
	}
	err = w.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var rs []watched
		err := tx.NewRaw(`SELECT `+watchedColumns+` FROM watched_accounts x JOIN wallets w ON w.id = x.wallet_id
			WHERE x.network = ? AND x.address = ? FOR UPDATE OF x SKIP LOCKED`, network, address).Scan(ctx, &rs)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if len(rs) == 0 {
			return nil // another scan holds it, or it is no longer watched
		}
		r := rs[0]
		if !w.resolve(network, &r) {
			return nil // an asset the table no longer has
		}
		var until sol.Signature
		if r.LastSignature.Valid {
			until = sol.MustSignatureFromBase58(r.LastSignature.String)
		}
		if r.ExplainedAt.Valid {
			// The cursor lags explained payments: only a node whose
			// history reached the last of them lists what lies between.
			var last sql.NullInt64
			if err := tx.NewRaw(`SELECT max(slot) FROM ledger WHERE network = ? AND address = ?`, network, address).Scan(ctx, &last); err != nil {
				return fmt.Errorf("the account's last ledger change: %w", err)
			}
			if last.Valid {
				minSlot = max(minSlot, uint64(last.Int64))
			}
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
			Minimums
		}
		if err := tx.NewRaw(`SELECT w.account_id, w.pubkey, a.deposit_min_usd, a.deposit_min_eur, a.deposit_min_sol
			FROM wallets w JOIN accounts a ON a.id = w.account_id WHERE w.id = ?`, r.WalletID).Scan(ctx, &owner); err != nil {
			return err
		}
		// The stored balance is the account's balance after the last
		// transaction examined, read from that transaction: a balance read
		// from a node ahead of the one that listed the signatures never
		// hides a transaction not yet examined (the next scan sees the
		// difference and looks again).
		after := r.Balance
		inLedger, err := w.inLedger(ctx, tx, network, address, sigs)
		if err != nil {
			return err
		}
		// shift is what the transactions read here, listed among payments
		// explained without them, moved: the explained rows after them
		// were written from a balance that did not have it.
		var shift int64
		for _, s := range sigs {
			if v, ok := inLedger[s.Signature.String()]; ok {
				// In the account's ledger already (a payment of the service
				// explained without reading it, or a transaction listed
				// again after a fork's rewind): examined before, not read
				// again.
				after = sql.NullInt64{Int64: v + shift, Valid: true}
				if shift != 0 {
					if _, err := tx.NewRaw(`UPDATE ledger SET balance = balance + ? WHERE network = ? AND address = ? AND signature = ?`,
						shift, network, address, s.Signature.String()).Exec(ctx); err != nil {
						return fmt.Errorf("correct an explained ledger row: %w", err)
					}
				}
				continue
			}
			examined++
			m, ok := read[s.Signature]
			if !ok {
				if m, err = c.Movement(ctx, s.Signature); err != nil {
					return err
				}
				if read != nil {
					read[s.Signature] = m
				}
			}
			if v, ok := balanceAfter(&r, account, m); ok {
				after = sql.NullInt64{Int64: v, Valid: true}
				if r.ExplainedAt.Valid {
					shift += v - balanceBefore(&r, account, m)
				}
				if err := w.ledger(ctx, tx, network, r.Address, &r, s, m, v); err != nil {
					return err
				}
			}
			if err := w.follow(ctx, tx, network, &r, account, s, m); err != nil {
				return err
			}
			if err := w.discover(ctx, tx, network, &r, s, m); err != nil {
				return err
			}
			ok, err := w.record(ctx, tx, network, &r, owner.AccountID, owner.Minimums, sol.MustPublicKeyFromBase58(owner.Pubkey), s, m)
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
		if done {
			q = q.Set("explained_at = NULL") // the cursor caught up with what was explained
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

// inLedger is, of the listed transactions sigs, those the account's
// ledger has, each with the account's balance at the end of its slot (the
// order of the service's own payments within a slot is not known without
// reading them, their effect at the slot's end is).
func (w *Watcher) inLedger(ctx context.Context, tx bun.Tx, network solana.Network, address string, sigs []solana.SignatureInfo) (map[string]int64, error) {
	out := map[string]int64{}
	if len(sigs) == 0 {
		return out, nil
	}
	names := make([]string, len(sigs))
	for i, s := range sigs {
		names[i] = s.Signature.String()
	}
	var rows []struct {
		Signature string `bun:"signature"`
		Balance   int64  `bun:"balance"`
	}
	if err := tx.NewRaw(`SELECT l.signature, (SELECT e.balance FROM ledger e WHERE e.network = l.network AND e.address = l.address AND e.slot = l.slot
			ORDER BY e.id DESC LIMIT 1) AS balance
		FROM ledger l WHERE l.network = ? AND l.address = ? AND l.signature IN (?)`, network, address, bun.List(names)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("transactions in the ledger: %w", err)
	}
	for _, r := range rows {
		out[r.Signature] = r.Balance
	}
	return out, nil
}

// record records the wallet's gain of the account's asset in transaction
// s (its balance changes m), if any, as a deposit with its event. The
// wallet's own payments are not deposits, nor is what happened before the
// account was watched.
//
// A deposit below the account's minimum for its asset (Minimums) is
// recorded all the same, marked below_minimum, but not announced: a
// stranger's dust does not become an event at every endpoint.
func (w *Watcher) record(ctx context.Context, tx bun.Tx, network solana.Network, r *watched, accountID uuid.UUID, mins Minimums, owner sol.PublicKey, s solana.SignatureInfo, m solana.Movement) (bool, error) {
	if s.Failed || m.Failed || !m.BlockTime.IsZero() && m.BlockTime.Before(r.Since.Truncate(time.Second)) {
		return false, nil
	}
	var gain int64
	var from sol.PublicKey
	if r.Asset == SOL {
		gain = m.Lamports[owner]
		from = largestLamportLoss(m.Lamports)
	} else {
		gain = m.Tokens[solana.TokenHolding{Owner: owner, Mint: r.token.Mint}]
		from = largestLoss(m.Tokens, r.token.Mint)
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
	below := gain < mins.of(r)
	res, err := tx.NewRaw(`INSERT INTO deposits (id, account_id, wallet_id, network, signature, asset, amount, counterparty, slot, created_at, below_minimum)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (wallet_id, signature, asset) DO NOTHING`,
		id, accountID, r.WalletID, network, s.Signature.String(), r.Asset, gain, from.String(), m.Slot, at, below).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("record deposit: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil // recorded already (through another of its accounts)
	}
	if below {
		w.log().DebugContext(ctx, "deposit below the minimum: recorded, not announced", "wallet_id", r.WalletID, "asset", r.Asset,
			"amount", gain, "signature", s.Signature.String())
		return true, nil
	}
	data := map[string]any{
		"wallet_id": r.WalletID, "signature": s.Signature.String(), "asset": r.Asset, "symbol": symbolOf(r.Asset),
		"from": from.String(), "amount": w.amountOf(network, r.Asset, gain), "transaction_id": id, "slot": m.Slot,
	}
	if _, err := webhook.Emit(ctx, tx, accountID, at, webhook.KindTxReceived, data); err != nil {
		return false, err
	}
	w.log().InfoContext(ctx, "deposit", "wallet_id", r.WalletID, "asset", r.Asset, "amount", gain, "signature", s.Signature.String())
	return true, nil
}

// outflow records money that left the wallet in transaction s when the
// service did not make s (none of its signatures is one of our payments':
// a send of any asset, an earlier attempt of one, an x402 or MPP
// payment), with its wallet.unexplained_outflow event: the wallet's key
// was used elsewhere, or, when the wallet did not sign s, a delegate
// moved the money (a Token-2022 mint's permanent delegate, or one the
// wallet's key approved), named as the outflow's authority. Transactions
// from before the account was watched are history.
func (w *Watcher) outflow(ctx context.Context, tx bun.Tx, network solana.Network, r *watched, accountID uuid.UUID, owner sol.PublicKey, s solana.SignatureInfo, m solana.Movement) error {
	if !m.BlockTime.IsZero() && m.BlockTime.Before(r.Since.Truncate(time.Second)) {
		return nil
	}
	var loss int64
	var to sol.PublicKey
	if r.Asset == SOL {
		loss = -m.Lamports[owner]
		to = largestLamportGain(m.Lamports)
	} else {
		loss = -m.Tokens[solana.TokenHolding{Owner: owner, Mint: r.token.Mint}]
		to = largestGain(m.Tokens, r.token.Mint)
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
	authority := delegateOf(m, owner)
	res, err := tx.NewRaw(`INSERT INTO unexplained_outflows (id, account_id, wallet_id, network, signature, asset, amount, counterparty, slot, created_at, authority)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (wallet_id, signature, asset) DO NOTHING`,
		id, accountID, r.WalletID, network, s.Signature.String(), r.Asset, loss, to.String(), m.Slot, at,
		sql.NullString{String: authority.String(), Valid: !authority.IsZero()}).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record unexplained outflow: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	data := map[string]any{"wallet_id": r.WalletID, "signature": s.Signature.String(), "asset": r.Asset, "symbol": symbolOf(r.Asset),
		"amount": w.amountOf(network, r.Asset, loss), "to": to.String(), "slot": m.Slot}
	if !authority.IsZero() {
		data["delegate"] = authority.String()
	}
	if _, err := webhook.Emit(ctx, tx, accountID, at, webhook.KindUnexplainedOutflow, data); err != nil {
		return err
	}
	w.log().WarnContext(ctx, "money left a wallet in a transaction the service did not make", "wallet_id", r.WalletID,
		"asset", r.Asset, "amount", loss, "signature", s.Signature.String(), "delegate", authority.String())
	return nil
}

// delegateOf is who signed m in the wallet's stead when the wallet's key
// did not sign it (zero when it did): of its other signers, one that is
// not the fee payer (a delegate whose fees someone else paid), else the
// fee payer. Only a delegate moves a wallet's tokens without its
// signature.
func delegateOf(m solana.Movement, owner sol.PublicKey) sol.PublicKey {
	if len(m.Signers) == 0 || slices.ContainsFunc(m.Signers, owner.Equals) {
		return sol.PublicKey{}
	}
	if len(m.Signers) > 1 {
		return m.Signers[1]
	}
	return m.Signers[0]
}

// ledger records the balance of the wallet's account address after
// transaction s.
func (w *Watcher) ledger(ctx context.Context, tx bun.Tx, network solana.Network, address string, r *watched, s solana.SignatureInfo, m solana.Movement, balance int64) error {
	at := m.BlockTime
	if at.IsZero() {
		at = time.Now().UTC()
	}
	_, err := tx.NewRaw(`INSERT INTO ledger (network, address, signature, wallet_id, asset, slot, at, balance)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (network, address, signature) DO NOTHING`,
		network, address, s.Signature.String(), r.WalletID, r.Asset, m.Slot, at, balance).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record ledger: %w", err)
	}
	return nil
}

// balanceAfter is the watched account's balance after m, if m names it:
// for a token account, its amount while it holds the wallet's asset (the
// row's mint), zero once it holds another mint or belongs to another
// owner.
func balanceAfter(r *watched, account sol.PublicKey, m solana.Movement) (int64, bool) {
	if r.Asset != SOL {
		v, ok := m.TokenAfter[account]
		if h, held := m.HolderAfter[account]; ok && (!held || h != r.holding()) {
			v = 0
		}
		return v, ok
	}
	v, ok := m.After[account]
	return v, ok
}

// balanceBefore is the watched account's balance before m, when m names
// it (balanceAfter): a token account's amount only while it held the
// wallet's asset.
func balanceBefore(r *watched, account sol.PublicKey, m solana.Movement) int64 {
	if r.Asset != SOL {
		if h, held := m.HolderBefore[account]; !held || h != r.holding() {
			return 0
		}
		return m.TokenBefore[account]
	}
	return m.After[account] - m.Lamports[account]
}

// follow watches, from transaction s on, every token account of the
// wallet holding r's asset that received money from the examined account
// r in s and is not watched yet: the wallet's money went there, so where it goes next
// (a transfer, the account handed to another owner, its close) is the
// wallet's too. Its balance after s is its first ledger row.
func (w *Watcher) follow(ctx context.Context, tx bun.Tx, network solana.Network, r *watched, account sol.PublicKey, s solana.SignatureInfo, m solana.Movement) error {
	if r.Asset == SOL || s.Failed || m.Failed {
		return nil
	}
	mine := r.holding()
	if m.HolderBefore[account] != mine || m.TokenAfter[account] >= m.TokenBefore[account] {
		return nil // r gave nothing in s
	}
	for to, h := range m.HolderAfter {
		if to.Equals(account) || h != mine || m.TokenAfter[to] <= m.TokenBefore[to] {
			continue
		}
		res, err := tx.NewRaw(`INSERT INTO watched_accounts (address, network, wallet_id, asset, since, role, balance, last_signature)
			VALUES (?, ?, ?, ?, ?, 'followed', ?, ?) ON CONFLICT DO NOTHING`,
			to.String(), network, r.WalletID, r.Asset, r.Since, m.TokenAfter[to], s.Signature.String()).Exec(ctx)
		if err != nil {
			return fmt.Errorf("follow the wallet's money to %s: %w", to, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // watched already
		}
		if err := w.ledger(ctx, tx, network, to.String(), r, s, m, m.TokenAfter[to]); err != nil {
			return err
		}
		w.log().InfoContext(ctx, "the wallet's money moved to another of its token accounts: watched from now on",
			"wallet_id", r.WalletID, "account", to.String(), "signature", s.Signature.String())
	}
	return nil
}

// discover watches the wallet's associated account of any asset of the
// table that transaction s shows (its token balances name the account,
// the wallet as owner) and that is not watched yet: the wallet's own
// payment of a new asset, or a deposit seen through another of its
// accounts, finds it before the next listing. It is examined from the
// wallet's watching on, s included. One per asset at most: a stranger's
// other accounts are found by the listing, within its bounds.
func (w *Watcher) discover(ctx context.Context, tx bun.Tx, network solana.Network, r *watched, s solana.SignatureInfo, m solana.Movement) error {
	if s.Failed || m.Failed {
		return nil
	}
	owner := sol.MustPublicKeyFromBase58(r.Owner)
	for account, h := range m.HolderAfter {
		if !h.Owner.Equals(owner) || account.String() == r.Address {
			continue
		}
		a, ok := w.assets().ByMint(network, h.Mint)
		if !ok {
			continue
		}
		if ata, err := solana.AssociatedToken(owner, a.Mint, a.Program); err != nil || !ata.Equals(account) {
			continue
		}
		res, err := tx.NewRaw(`INSERT INTO watched_accounts (address, network, wallet_id, asset, since, role)
			VALUES (?, ?, ?, ?, ?, 'associated') ON CONFLICT DO NOTHING`,
			account.String(), network, r.WalletID, Key(a.Symbol), r.Since).Exec(ctx)
		if err != nil {
			return fmt.Errorf("watch %s: %w", account, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			w.log().InfoContext(ctx, "a wallet's associated account of another asset was seen: watched from now on",
				"wallet_id", r.WalletID, "asset", a.Symbol, "account", account.String(), "signature", s.Signature.String())
		}
	}
	return nil
}

// FallbackDecimals is how many decimal places an asset's base units are
// printed with when the table does not list it (an operator removed it
// after its rows were written): SOL 9, a token 6, the stablecoins'.
func FallbackDecimals(asset string) int {
	if asset == SOL {
		return 9
	}
	return 6
}

// decimals is an asset's decimals on the network, from the table.
func (w *Watcher) decimals(network solana.Network, name string) int {
	if a, ok := w.assets().Find(network, name); ok && name != SOL {
		return int(a.Decimals)
	}
	return FallbackDecimals(name)
}

// amountOf is an amount of asset in whole units for an event, a JSON
// number.
func (w *Watcher) amountOf(network solana.Network, asset string, units int64) json.Number {
	return json.Number(money.FormatUnits(units, w.decimals(network, asset)))
}

// symbolOf is how the API names an asset: its symbol in upper case.
func symbolOf(asset string) string { return strings.ToUpper(asset) }

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
