package audit

import (
	"bytes"
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Filter selects entries of one account: optionally one action or one
// target, and only those before a sequence number (the cursor).
type Filter struct {
	Action string
	Target string
	// Agent, when not nil, keeps only what an agent key may read.
	Agent     *AgentView
	BeforeSeq int64 // 0: from the newest
	Limit     int
}

// AgentView is what an agent key reads of its account's log: an allowlist
// by target, so people (user:…, sessions), webhook endpoints, other keys
// and anything added later stay the humans' and the admins'.
//
//   - wallet:<id> of a wallet it reaches;
//   - approval:ap_… whose details name a wallet it reaches;
//   - key:key_… of its own keys (OwnKeys);
//
// and of permission.denied entries only its own keys' attempts (the
// details of a refusal name the refused key and its role).
type AgentView struct {
	// Wallets it reaches; nil: every wallet of the account.
	Wallets []uuid.UUID
	// OwnKeys selects the actor ids (key_<uuid>) of the agent's own keys,
	// as a subquery (auth.OwnKeyActors).
	OwnKeys *bun.SelectQuery
}

// List returns the account's entries newest first. The filter is one SQL
// condition, so a page is never short for what it leaves out.
func List(ctx context.Context, db bun.IDB, accountID uuid.UUID, f Filter) ([]Entry, error) {
	es := []Entry{}
	q := db.NewSelect().Model(&es).Where("account_id = ?", accountID).Order("seq DESC").Limit(int64(f.Limit))
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if f.Target != "" {
		q = q.Where("target = ?", f.Target)
	}
	if v := f.Agent; v != nil {
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			if v.Wallets == nil {
				q = q.WhereOr("starts_with(target, 'wallet:') OR starts_with(target, 'approval:')")
			} else {
				targets := make([]string, len(v.Wallets))
				ids := make([]string, len(v.Wallets))
				for i, id := range v.Wallets {
					targets[i], ids[i] = "wallet:"+id.String(), id.String()
				}
				q = q.WhereOr("target IN (?)", bun.List(targets)).
					WhereOr("starts_with(target, 'approval:') AND details->>'wallet_id' IN (?)", bun.List(ids))
			}
			return q.WhereOr("starts_with(target, 'key:') AND substr(target, 5) IN (?)", v.OwnKeys)
		})
		q = q.Where("(action <> ? OR actor IN (?))", ActionPermissionDenied, v.OwnKeys)
	}
	if f.BeforeSeq > 0 {
		q = q.Where("seq < ?", f.BeforeSeq)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list audit entries: %w", err)
	}
	return es, nil
}

// Break is the first entry of an account's chain that does not hold.
type Break struct {
	AccountID uuid.UUID
	EntryID   uuid.UUID
	Seq       int64
	Problem   string
}

func (b Break) String() string {
	return fmt.Sprintf("account %s: entry %s (seq %d): %s", b.AccountID, b.EntryID, b.Seq, b.Problem)
}

// Report is what Verify found.
type Report struct {
	Accounts, Entries int
	Breaks            []Break // at most one per account: the first
}

// verifyBatch is how many entries Verify reads at a time.
const verifyBatch = 1000

// Verify walks each account's chain (one account, or all when accountID
// is nil) in order and recomputes every hash: an entry whose hash does not
// match its fields, whose prev_hash is not its predecessor's hash, or whose
// sequence skips, is that chain's first broken link.
func Verify(ctx context.Context, db bun.IDB, accountID *uuid.UUID) (Report, error) {
	var rep Report
	var accounts []uuid.UUID
	if accountID != nil {
		accounts = []uuid.UUID{*accountID}
	} else if err := db.NewSelect().Table("audit_log").ColumnExpr("DISTINCT account_id").OrderExpr("account_id").Scan(ctx, &accounts); err != nil {
		return rep, fmt.Errorf("list audited accounts: %w", err)
	}
	for _, acct := range accounts {
		rep.Accounts++
		st, err := VerifyAccount(ctx, db, acct)
		rep.Entries += st.Entries
		if err != nil {
			return rep, err
		}
		if st.Break != nil {
			rep.Breaks = append(rep.Breaks, *st.Break)
		}
	}
	return rep, nil
}

// ChainState is how far one account's chain holds.
type ChainState struct {
	// Entries read, the broken one included.
	Entries int
	// VerifiedThrough is the last entry's seq of the intact prefix (0
	// when the chain is empty or its first entry is broken).
	VerifiedThrough int64
	// Break is the first link that does not hold; nil when all do.
	Break *Break
}

// VerifyAccount walks one account's chain from its first entry, as Verify
// does, and says how far it holds.
func VerifyAccount(ctx context.Context, db bun.IDB, accountID uuid.UUID) (ChainState, error) {
	var st ChainState
	prev := make([]byte, 32)
	for {
		var batch []Entry
		err := db.NewSelect().Model(&batch).Where("account_id = ? AND seq > ?", accountID, st.VerifiedThrough).
			Order("seq").Limit(verifyBatch).Scan(ctx)
		if err != nil {
			return st, fmt.Errorf("read audit entries: %w", err)
		}
		for i := range batch {
			e := &batch[i]
			st.Entries++
			brk := &Break{AccountID: accountID, EntryID: e.ID, Seq: e.Seq}
			switch {
			case e.Seq != st.VerifiedThrough+1:
				brk.Problem = fmt.Sprintf("sequence jumps from %d to %d (entries missing)", st.VerifiedThrough, e.Seq)
			case !bytes.Equal(e.PrevHash, prev):
				brk.Problem = "prev_hash is not the previous entry's hash"
			case !bytes.Equal(e.Hash, e.ComputeHash()):
				brk.Problem = "hash does not match the entry's contents (edited)"
			default:
				brk = nil
			}
			if brk != nil {
				st.Break = brk
				return st, nil
			}
			prev, st.VerifiedThrough = e.Hash, e.Seq
		}
		if len(batch) < verifyBatch {
			return st, nil
		}
	}
}
