package audit

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Break is the first entry of an account's chain that does not hold.
type Break struct {
	AccountID uuid.UUID
	EntryID   uuid.UUID // uuid.Nil when the entry is missing
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

// verifyBatch is how many entries a walk reads at a time.
const verifyBatch = 1000

// Verify checks each account's chain (one account, or all when accountID
// is nil) as Check does, without a bound: from its checkpoint, or from the
// first entry when full.
func Verify(ctx context.Context, db bun.IDB, accountID *uuid.UUID, full bool) (Report, error) {
	var rep Report
	var accounts []uuid.UUID
	if accountID != nil {
		accounts = []uuid.UUID{*accountID}
	} else if err := db.NewSelect().Table("audit_log").ColumnExpr("DISTINCT account_id").OrderExpr("account_id").Scan(ctx, &accounts); err != nil {
		return rep, fmt.Errorf("list audited accounts: %w", err)
	}
	for _, acct := range accounts {
		rep.Accounts++
		st, err := Check(ctx, db, acct, CheckOptions{Full: full})
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

// Checkpoint is how far an account's chain was verified: its last verified
// entry's seq and hash (0 and 32 zero bytes before any), and the first
// break found, kept until a full walk finds the chain whole again.
type Checkpoint struct {
	bun.BaseModel `bun:"table:audit_checkpoints"`

	AccountID    uuid.UUID     `bun:"account_id,pk,type:uuid"`
	Seq          int64         `bun:"seq"`
	Hash         []byte        `bun:"hash"`
	VerifiedAt   time.Time     `bun:"verified_at"`
	BreakSeq     *int64        `bun:"break_seq"`
	BreakEntry   uuid.NullUUID `bun:"break_entry,type:uuid"`
	BreakProblem *string       `bun:"break_problem"`
}

func (c *Checkpoint) brk() *Break {
	if c.BreakSeq == nil {
		return nil
	}
	return &Break{AccountID: c.AccountID, EntryID: c.BreakEntry.UUID, Seq: *c.BreakSeq, Problem: *c.BreakProblem}
}

// CheckOptions say how far Check reads.
type CheckOptions struct {
	// Full walks from the first entry instead of from the checkpoint, and
	// checks that the checkpoint's entry still has the hash it had.
	Full bool
	// Max bounds the entries read after the starting point; 0: none.
	Max int
}

// ChainState is how far one account's chain holds.
type ChainState struct {
	// From is the seq the walk started after: the checkpoint (0 from the
	// first entry).
	From int64
	// Entries read after From, the broken one included.
	Entries int
	// VerifiedThrough is the last entry's seq of the intact prefix (0
	// when the chain is empty or its first entry is broken).
	VerifiedThrough int64
	// More: entries after VerifiedThrough were left for a next call (the
	// bound stopped this one).
	More bool
	// Break is the first link that does not hold; nil when all do.
	Break *Break

	hash []byte // VerifiedThrough's
}

// Check verifies accountID's chain from its checkpoint and moves the
// checkpoint to where it got: it first checks that the checkpoint's entry
// still has the hash it had when verified (a rewrite of the entries up to
// it, hashes recomputed, changes it; an entry removed leaves it missing),
// then every entry after it in order, at most o.Max: an entry whose hash
// does not match its fields, whose prev_hash is not its predecessor's
// hash, or whose seq skips is the chain's first break. A break found is
// stored and answered by every later Check without reading, until a full
// walk finds the chain whole. An entry edited before the checkpoint
// without recomputing the hashes after it is found only by a full walk
// (o.Full), which reads the whole chain and checks the checkpoint's hash
// on its way. Concurrent checks of one account wait for each other.
//
// It seals the account's entries first: what committed before the call is
// checked.
func Check(ctx context.Context, db bun.IDB, accountID uuid.UUID, o CheckOptions) (ChainState, error) {
	var st ChainState
	if _, err := Seal(ctx, db, accountID); err != nil {
		return st, err
	}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		cp := Checkpoint{AccountID: accountID, Hash: make([]byte, 32), VerifiedAt: time.Now()}
		if _, err := tx.NewInsert().Model(&cp).On("CONFLICT (account_id) DO NOTHING").Exec(ctx); err != nil {
			return fmt.Errorf("make audit checkpoint: %w", err)
		}
		if err := tx.NewSelect().Model(&cp).WherePK().For("UPDATE").Scan(ctx); err != nil {
			return fmt.Errorf("lock audit checkpoint: %w", err)
		}
		if b := cp.brk(); b != nil && !o.Full {
			st = ChainState{From: cp.Seq, VerifiedThrough: min(cp.Seq, b.Seq-1), Break: b}
			return nil
		}
		var err error
		if o.Full {
			st, err = walk(ctx, tx, accountID, 0, make([]byte, 32), o.Max, &cp)
		} else {
			st, err = resume(ctx, tx, &cp, o.Max)
		}
		if err != nil {
			return err
		}
		if st.VerifiedThrough > cp.Seq {
			cp.Seq, cp.Hash = st.VerifiedThrough, st.hash
		}
		cp.VerifiedAt = time.Now()
		cp.BreakSeq, cp.BreakEntry, cp.BreakProblem = nil, uuid.NullUUID{}, nil
		if b := st.Break; b != nil {
			cp.BreakSeq, cp.BreakEntry, cp.BreakProblem = &b.Seq, uuid.NullUUID{UUID: b.EntryID, Valid: b.EntryID != uuid.Nil}, &b.Problem
		}
		if _, err := tx.NewUpdate().Model(&cp).WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("store audit checkpoint: %w", err)
		}
		return nil
	})
	return st, err
}

// resume walks on from cp, after checking that its entry is unchanged.
func resume(ctx context.Context, db bun.IDB, cp *Checkpoint, limit int) (ChainState, error) {
	if cp.Seq > 0 {
		var e Record
		err := db.NewSelect().Model(&e).Where("account_id = ? AND seq = ?", cp.AccountID, cp.Seq).Scan(ctx)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ChainState{From: cp.Seq, VerifiedThrough: cp.Seq - 1, Break: &Break{AccountID: cp.AccountID, Seq: cp.Seq,
				Problem: "the entry verified at the checkpoint is missing (entries removed)"}}, nil
		case err != nil:
			return ChainState{}, fmt.Errorf("read the checkpoint's audit entry: %w", err)
		case !bytes.Equal(e.Hash, cp.Hash):
			return ChainState{From: cp.Seq, VerifiedThrough: cp.Seq - 1, Break: &Break{AccountID: cp.AccountID, EntryID: e.ID, Seq: cp.Seq,
				Problem: "hash differs from the one verified at the checkpoint (entries up to it rewritten)"}}, nil
		}
	}
	return walk(ctx, db, cp.AccountID, cp.Seq, cp.Hash, limit, nil)
}

// walk checks the entries of accountID after seq from (whose hash is
// prev), at most limit (0: all). With cp, the entry at cp's seq must have
// cp's hash, and the chain must reach it.
func walk(ctx context.Context, db bun.IDB, accountID uuid.UUID, from int64, prev []byte, limit int, cp *Checkpoint) (ChainState, error) {
	st := ChainState{From: from, VerifiedThrough: from, hash: prev}
	for {
		n := verifyBatch
		if limit > 0 {
			n = min(n, limit-st.Entries)
		}
		var batch []Record
		err := db.NewSelect().Model(&batch).Where("account_id = ? AND seq > ?", accountID, st.VerifiedThrough).
			Order("seq").Limit(int64(n)).Scan(ctx)
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
			case !bytes.Equal(e.PrevHash, st.hash):
				brk.Problem = "prev_hash is not the previous entry's hash"
			case !bytes.Equal(e.Hash, e.ComputeHash()):
				brk.Problem = "hash does not match the entry's contents (edited)"
			case cp != nil && e.Seq == cp.Seq && !bytes.Equal(e.Hash, cp.Hash):
				brk.Problem = "hash differs from the one verified at the checkpoint (entries up to it rewritten)"
			default:
				brk = nil
			}
			if brk != nil {
				st.Break = brk
				return st, nil
			}
			st.hash, st.VerifiedThrough = e.Hash, e.Seq
		}
		if len(batch) < n {
			break
		}
		if limit > 0 && st.Entries >= limit {
			more, err := db.NewSelect().Table("audit_log").Where("account_id = ? AND seq > ?", accountID, st.VerifiedThrough).Exists(ctx)
			if err != nil {
				return st, fmt.Errorf("look for more audit entries: %w", err)
			}
			st.More = more
			return st, nil
		}
	}
	if cp != nil && st.VerifiedThrough < cp.Seq {
		st.Break = &Break{AccountID: accountID, Seq: st.VerifiedThrough + 1,
			Problem: fmt.Sprintf("the chain ends at seq %d, before the checkpoint's seq %d (entries removed)", st.VerifiedThrough, cp.Seq)}
	}
	return st, nil
}
