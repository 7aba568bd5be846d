package deposit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/solana"
)

// OwnWindow is how long after its signing a payment of the service may
// explain a balance change: its blockhash lives about 90 s, so one older
// than this has landed (and been explained, or read back) or never will.
// A payment the watcher did not explain within it is read from history
// like any other transaction.
const OwnWindow = 3 * time.Minute

// ownCreated bounds, by its first signing, which payments a scan looks
// at (the wallet's index is by creation): a payment signed again after
// expiry keeps its creation, and its attempts take a few minutes each.
// One signed again later than this is read from history.
const ownCreated = 15 * time.Minute

// maxOwn bounds the payments one scan considers per network; past it the
// newest are left out, and the changes they made are read from history.
const maxOwn = 4096

// change is a watched account whose balance a scan saw change: its row,
// the balance read and the slot it was read at.
type change struct {
	r    *watched
	now  int64
	slot uint64
}

// own is a payment the service signed (a send, or an x402 or MPP payment
// with its transactions row), as far as the watcher needs it: what it
// takes from each of the wallet's accounts when it lands.
type own struct {
	Signature string         `bun:"signature"`
	WalletID  uuid.UUID      `bun:"wallet_id,type:uuid"`
	Asset     string         `bun:"asset"`
	Amount    int64          `bun:"amount_micros"`
	Fee       sql.NullInt64  `bun:"fee_lamports"`
	FeePayer  sql.NullString `bun:"fee_payer"`

	slot uint64 // where it landed (a node's status)
}

// explainable: an account whose changes the service's own payments can
// account for: the wallet's address (fees and rent, when the wallet pays
// them) or its associated token account of an asset counted in micros
// (a send's amount). Never one not examined yet: its history is read
// first.
func (ch change) explainable() bool {
	r := ch.r
	if !r.Balance.Valid || !r.LastSignature.Valid || !r.Role.Valid {
		return false
	}
	if r.Asset == SOL {
		return r.Role.String == roleAddress
	}
	return r.Role.String == roleAssociated && r.token.Decimals == 6
}

// explain writes the ledger of each changed account whose change the
// service's own landed payments explain exactly, without reading any
// transaction: for each payment not yet in the account's ledger that a
// node's status shows landed without error after the account's last
// ledger change and at or before the slot its balance was read at, the
// amount it sent (its token account) or the fee and rent the wallet paid
// (its address). Only when the stored balance plus these equals the
// balance read are their ledger rows written (the balance after each, in
// the order they landed) and its balance moved, not its cursor (writeOwn);
// anything else (a deposit, a transfer the service did not sign, a
// payment not seen landed yet, a rent it may or may not have paid) is
// left to the history read. It returns the addresses explained.
func (w *Watcher) explain(ctx context.Context, network solana.Network, c *solana.Client, changes []change) (map[string]bool, error) {
	done := map[string]bool{}
	var cands []change
	wallets := map[uuid.UUID]bool{}
	for _, ch := range changes {
		if ch.explainable() {
			cands = append(cands, ch)
			wallets[ch.r.WalletID] = true
		}
	}
	if len(cands) == 0 {
		return done, nil
	}
	ids := make([]uuid.UUID, 0, len(wallets))
	for id := range wallets {
		ids = append(ids, id)
	}
	var pays []own
	if err := w.DB.NewRaw(`SELECT signature, wallet_id, lower(asset) AS asset, amount_micros, fee_lamports, fee_payer
		FROM transactions WHERE network = ? AND wallet_id IN (?) AND status IN ('pending', 'confirmed')
			AND created_at > now() - make_interval(secs => ?) AND signed_at > now() - make_interval(secs => ?)
		ORDER BY signed_at DESC LIMIT ?`, network, bun.List(ids), ownCreated.Seconds(), OwnWindow.Seconds(), maxOwn).Scan(ctx, &pays); err != nil {
		return done, fmt.Errorf("the service's payments: %w", err)
	}
	if len(pays) == 0 {
		return done, nil
	}
	// Which are in which account's ledger already, and each account's last
	// ledger change.
	addrs := make([]string, len(cands))
	for i, ch := range cands {
		addrs[i] = ch.r.Address
	}
	sigs := make([]string, len(pays))
	for i, p := range pays {
		sigs[i] = p.Signature
	}
	var known []struct {
		Address   string `bun:"address"`
		Signature string `bun:"signature"`
	}
	if err := w.DB.NewRaw(`SELECT address, signature FROM ledger WHERE network = ? AND address IN (?) AND signature IN (?)`,
		network, bun.List(addrs), bun.List(sigs)).Scan(ctx, &known); err != nil {
		return done, fmt.Errorf("payments in the ledger: %w", err)
	}
	inLedger := map[[2]string]bool{}
	for _, k := range known {
		inLedger[[2]string{k.Address, k.Signature}] = true
	}
	var lasts []struct {
		Address string `bun:"address"`
		Slot    uint64 `bun:"slot"`
	}
	if err := w.DB.NewRaw(`SELECT DISTINCT ON (address) address, slot FROM ledger WHERE network = ? AND address IN (?)
		ORDER BY address, slot DESC, id DESC`, network, bun.List(addrs)).Scan(ctx, &lasts); err != nil {
		return done, fmt.Errorf("accounts' last ledger changes: %w", err)
	}
	lastSlot := map[string]uint64{}
	for _, l := range lasts {
		lastSlot[l.Address] = l.Slot
	}
	// A payment no changed account needs is not asked after.
	var ask []int
	for i, p := range pays {
		for _, ch := range cands {
			if ch.r.WalletID == p.WalletID && !inLedger[[2]string{ch.r.Address, p.Signature}] && effect(ch.r, p) != nil {
				ask = append(ask, i)
				break
			}
		}
	}
	landed := map[uuid.UUID][]own{}
	for from := 0; from < len(ask); from += solana.MaxSignatureStatuses {
		batch := ask[from:min(from+solana.MaxSignatureStatuses, len(ask))]
		ss := make([]sol.Signature, len(batch))
		for i, j := range batch {
			ss[i] = sol.MustSignatureFromBase58(pays[j].Signature)
		}
		st, err := c.SignatureStatuses(ctx, false, ss)
		if err != nil {
			return done, err
		}
		for i, s := range st {
			if s.Found && s.Confirmed && s.Err == "" {
				p := pays[batch[i]]
				p.slot = s.Slot
				landed[p.WalletID] = append(landed[p.WalletID], p)
			}
		}
	}
	for _, ch := range cands {
		var mine []own
		for _, p := range landed[ch.r.WalletID] {
			if p.slot > lastSlot[ch.r.Address] && p.slot <= ch.slot && !inLedger[[2]string{ch.r.Address, p.Signature}] && effect(ch.r, p) != nil {
				mine = append(mine, p)
			}
		}
		if len(mine) == 0 {
			continue
		}
		sort.Slice(mine, func(i, j int) bool {
			if mine[i].slot != mine[j].slot {
				return mine[i].slot < mine[j].slot
			}
			return mine[i].Signature < mine[j].Signature
		})
		after, ok := balances(ch, mine)
		if !ok {
			continue
		}
		ok, err := w.writeOwn(ctx, network, ch, mine, after)
		if err != nil {
			return done, fmt.Errorf("wallet %s, account %s: %w", ch.r.WalletID, ch.r.Address, err)
		}
		if ok {
			done[ch.r.Address] = true
		}
	}
	return done, nil
}

// effect is what payment p takes from the watched account r when it
// lands, as the amounts it may be (each a possible change, lamports or
// the asset's base units), or nil when p does not touch r or what it
// takes is not known: from the wallet's address, the fee when the wallet
// paid it, and, when the transfer made the recipient's USDC account, its
// rent; from its associated account of p's asset, the amount.
func effect(r *watched, p own) []int64 {
	if r.Asset == SOL {
		if p.FeePayer.Valid || !p.Fee.Valid {
			return nil
		}
		if p.Asset == USDC {
			return []int64{-p.Fee.Int64, -p.Fee.Int64 - solana.TokenAccountRentLamports}
		}
		return []int64{-p.Fee.Int64}
	}
	if p.Asset != r.Asset {
		return nil
	}
	return []int64{-p.Amount}
}

// balances is the account's balance after each of its payments mine (in
// the order they landed), when they explain the change exactly: the
// stored balance plus their effects is the balance read. A payment that
// may have paid a rent (its transfer creates the recipient's account if
// missing) explains the change only when all of them paid it or none
// did: any other mix is not known payment by payment.
func balances(ch change, mine []own) ([]int64, bool) {
	for _, pick := range []int{0, 1} {
		after := make([]int64, len(mine))
		bal := ch.r.Balance.Int64
		for i, p := range mine {
			e := effect(ch.r, p) // a payment that pays no rent has one
			bal += e[min(pick, len(e)-1)]
			after[i] = bal
		}
		if bal == ch.now {
			return after, true
		}
	}
	return nil, false
}

// writeOwn writes the ledger rows of the account's explained payments and
// moves its balance past them, under its row lock, only if no other scan
// examined it since this one read it. Its cursor stays where its history
// was last read: a deposit and an outflow of one amount landed among the
// payments cancel out in the balance, and only a history read from there
// finds them. explained_at marks the lag, and the scan reads that history
// within AuditEvery (an audit).
func (w *Watcher) writeOwn(ctx context.Context, network solana.Network, ch change, mine []own, after []int64) (bool, error) {
	var ok bool
	err := w.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var cur []struct {
			Balance       sql.NullInt64  `bun:"balance"`
			LastSignature sql.NullString `bun:"last_signature"`
		}
		err := tx.NewRaw(`SELECT balance, last_signature FROM watched_accounts WHERE network = ? AND address = ? FOR UPDATE SKIP LOCKED`,
			network, ch.r.Address).Scan(ctx, &cur)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if len(cur) == 0 || cur[0].Balance != ch.r.Balance || cur[0].LastSignature != ch.r.LastSignature {
			return nil // another scan holds it or moved it
		}
		at := time.Now().UTC()
		for i, p := range mine {
			if _, err := tx.NewRaw(`INSERT INTO ledger (network, address, signature, wallet_id, asset, slot, at, balance)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (network, address, signature) DO NOTHING`,
				network, ch.r.Address, p.Signature, ch.r.WalletID, ch.r.Asset, p.slot, at, after[i]).Exec(ctx); err != nil {
				return fmt.Errorf("record ledger: %w", err)
			}
		}
		if _, err := tx.NewRaw(`UPDATE watched_accounts SET balance = ?, explained_at = coalesce(explained_at, now()), checked_at = now()
			WHERE network = ? AND address = ?`, ch.now, network, ch.r.Address).Exec(ctx); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return ok, err
}
