package audit_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// appendN appends n entries to acct's chain in one statement, and seals
// them (so the tests can name them by seq).
func appendN(t testing.TB, db bun.IDB, acct uuid.UUID, n int) {
	t.Helper()
	_, err := db.ExecContext(t.Context(), `SELECT audit_append(gen_random_uuid(), ?, now(), 'system', 'policy.updated',
		'wallet:w', json_build_object('i', i)) FROM generate_series(1, ?) AS i`, acct, n)
	if err != nil {
		t.Fatal(err)
	}
	if sealed, err := audit.Seal(t.Context(), db, acct); err != nil || sealed != n {
		t.Fatalf("sealed %d of %d: %v", sealed, n, err)
	}
}

// checkpointOf is the stored checkpoint's seq and break seq (0: none).
func checkpointOf(t testing.TB, db bun.IDB, acct uuid.UUID) (seq, breakSeq int64) {
	t.Helper()
	var cp audit.Checkpoint
	if err := db.NewSelect().Model(&cp).Where("account_id = ?", acct).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	if cp.BreakSeq != nil {
		breakSeq = *cp.BreakSeq
	}
	return cp.Seq, breakSeq
}

// A check reads only the entries after its checkpoint, at most Max a
// call (saying More while some remain), and moves the checkpoint; a break
// after the checkpoint is found, stored, and reported by every later
// check without reading.
func TestCheck_ReadsOnlyNewEntries(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	acct := wallettest.Account(t, db).ID
	appendN(t, db, acct, 2500)
	check := func(want audit.ChainState) audit.ChainState {
		t.Helper()
		st, err := audit.Check(t.Context(), db, acct, audit.CheckOptions{Max: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if st.From != want.From || st.Entries != want.Entries || st.VerifiedThrough != want.VerifiedThrough || st.More != want.More ||
			(st.Break == nil) != (want.Break == nil) {
			t.Fatalf("check %+v, want %+v", st, want)
		}
		return st
	}
	check(audit.ChainState{From: 0, Entries: 1000, VerifiedThrough: 1000, More: true})
	if seq, _ := checkpointOf(t, db, acct); seq != 1000 {
		t.Fatalf("checkpoint at %d", seq)
	}
	check(audit.ChainState{From: 1000, Entries: 1000, VerifiedThrough: 2000, More: true})
	check(audit.ChainState{From: 2000, Entries: 500, VerifiedThrough: 2500})
	check(audit.ChainState{From: 2500, Entries: 0, VerifiedThrough: 2500})
	appendN(t, db, acct, 3)
	check(audit.ChainState{From: 2500, Entries: 3, VerifiedThrough: 2503})

	// An edit after the checkpoint.
	appendN(t, db, acct, 4)
	pgtest.BehindTriggers(t, db, `UPDATE audit_log SET details = '{"i":0}' WHERE account_id = ? AND seq = 2505`, acct)
	st := check(audit.ChainState{From: 2503, Entries: 2, VerifiedThrough: 2504, Break: &audit.Break{}})
	if st.Break.Seq != 2505 || !strings.Contains(st.Break.Problem, "edited") {
		t.Fatalf("break %+v", st.Break)
	}
	if seq, brk := checkpointOf(t, db, acct); seq != 2504 || brk != 2505 {
		t.Fatalf("checkpoint %d, break %d", seq, brk)
	}
	// It stays reported, newer entries or not, without reading.
	appendN(t, db, acct, 2)
	st = check(audit.ChainState{From: 2504, Entries: 0, VerifiedThrough: 2504, Break: &audit.Break{}})
	if st.Break.Seq != 2505 {
		t.Fatalf("break %+v", st.Break)
	}
}

// Before the checkpoint: a rewrite that recomputed the hashes changes the
// checkpoint's entry, and removing entries removes it, which a check finds
// in one read; an edit that left the hashes alone is the full walk's, which
// stores the break for every later check, and clears it only once the
// chain is whole again.
func TestCheck_BreaksBeforeTheCheckpoint(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := t.Context()
	check := func(acct uuid.UUID, full bool) audit.ChainState {
		t.Helper()
		st, err := audit.Check(ctx, db, acct, audit.CheckOptions{Full: full})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	rewritten := wallettest.Account(t, db).ID
	appendN(t, db, rewritten, 5)
	if st := check(rewritten, false); st.Break != nil || st.VerifiedThrough != 5 {
		t.Fatalf("intact: %+v", st)
	}
	// Entry 2 edited and every hash from it on recomputed: a consistent
	// chain, but not the one verified.
	var es []audit.Record
	if err := db.NewSelect().Model(&es).Where("account_id = ?", rewritten).Order("seq").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	es[1].Details = []byte(`{"i": 200}`)
	for i := 1; i < len(es); i++ {
		es[i].PrevHash = es[i-1].Hash
		es[i].Hash = es[i].ComputeHash()
		pgtest.BehindTriggers(t, db, "UPDATE audit_log SET details = ?::json, prev_hash = ?, hash = ? WHERE id = ?",
			string(es[i].Details), es[i].PrevHash, es[i].Hash, es[i].ID)
	}
	for _, full := range []bool{false, true} {
		st := check(rewritten, full)
		if st.Break == nil || st.Break.Seq != 5 || !strings.Contains(st.Break.Problem, "checkpoint") {
			t.Fatalf("rewritten chain (full %v): %+v", full, st)
		}
	}

	removed := wallettest.Account(t, db).ID
	appendN(t, db, removed, 5)
	check(removed, false)
	pgtest.BehindTriggers(t, db, "DELETE FROM audit_log WHERE account_id = ? AND seq >= 4", removed)
	if st := check(removed, false); st.Break == nil || st.Break.Seq != 5 || !strings.Contains(st.Break.Problem, "missing") || st.Entries != 0 {
		t.Fatalf("removed entries: %+v", st)
	}
	if st := check(removed, true); st.Break == nil || st.Break.Seq != 4 || !strings.Contains(st.Break.Problem, "removed") {
		t.Fatalf("removed entries, full walk: %+v", st)
	}

	edited := wallettest.Account(t, db).ID
	appendN(t, db, edited, 5)
	check(edited, false)
	var orig string
	if err := db.NewRaw("SELECT details::text FROM audit_log WHERE account_id = ? AND seq = 2", edited).Scan(ctx, &orig); err != nil {
		t.Fatal(err)
	}
	pgtest.BehindTriggers(t, db, `UPDATE audit_log SET details = '{"i":0}' WHERE account_id = ? AND seq = 2`, edited)
	if st := check(edited, false); st.Break != nil || st.Entries != 0 {
		t.Fatalf("an edit before the checkpoint is the full walk's: %+v", st)
	}
	if st := check(edited, true); st.Break == nil || st.Break.Seq != 2 || st.Entries != 2 {
		t.Fatalf("full walk: %+v", st)
	}
	if st := check(edited, false); st.Break == nil || st.Break.Seq != 2 || st.VerifiedThrough != 1 || st.Entries != 0 {
		t.Fatalf("after the full walk: %+v", st)
	}
	if seq, brk := checkpointOf(t, db, edited); seq != 5 || brk != 2 {
		t.Fatalf("checkpoint %d, break %d", seq, brk)
	}
	// Restored, the chain is whole for a full walk, which clears the break.
	pgtest.BehindTriggers(t, db, "UPDATE audit_log SET details = ?::json WHERE account_id = ? AND seq = 2", orig, edited)
	if st := check(edited, true); st.Break != nil || st.VerifiedThrough != 5 {
		t.Fatalf("restored, full walk: %+v", st)
	}
	if st := check(edited, false); st.Break != nil || st.From != 5 {
		t.Fatalf("restored: %+v", st)
	}
}
