package audit_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/waitfor"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// Concurrent appends of one account, sealed while they commit, form one
// unbroken chain whose hashes Go recomputes; the table refuses UPDATE,
// DELETE and TRUNCATE.
func TestChainUnderConcurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	acct, other := wallettest.Account(t, db).ID, wallettest.Account(t, db).ID
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	var wg sync.WaitGroup
	done := make(chan struct{})
	var sealers sync.WaitGroup
	for range 3 { // sealers racing the appends and each other
		sealers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := audit.SealAll(ctx, db); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := range 40 {
		wg.Go(func() {
			a := acct
			if i%4 == 0 {
				a = other
			}
			err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				return audit.Append(ctx, tx, audit.Entry{
					AccountID: a,
					At:        at,
					Actor:     audit.Actor("key_x"),
					Action:    "send.sent",
					Target:    "wallet:w",
					Details:   map[string]any{"i": i, "note": "é\n"},
				})
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	close(done)
	sealers.Wait()
	if _, err := audit.SealAll(ctx, db); err != nil {
		t.Fatal(err)
	}

	var entries []audit.Record
	if err := db.NewSelect().Model(&entries).Where("account_id = ?", acct).Order("seq").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 30 {
		t.Fatalf("%d entries", len(entries))
	}
	prev := make([]byte, 32)
	for i, e := range entries {
		if e.Seq != int64(i+1) || !bytes.Equal(e.PrevHash, prev) || !bytes.Equal(e.Hash, e.ComputeHash()) {
			t.Fatalf("entry %d (seq %d) breaks the chain", i, e.Seq)
		}
		if !e.At.Equal(at.Truncate(time.Microsecond)) {
			t.Fatalf("at %v", e.At)
		}
		prev = e.Hash
	}
	rep, err := audit.Verify(ctx, db, nil, false)
	if err != nil || rep.Accounts != 2 || rep.Entries != 40 || len(rep.Breaks) != 0 {
		t.Fatalf("verify %+v %v", rep, err)
	}
	// Editing one byte of the details is detectable.
	e := entries[7]
	e.Details = []byte(strings.Replace(string(e.Details), `"i"`, `"j"`, 1))
	if bytes.Equal(e.ComputeHash(), entries[7].Hash) {
		t.Fatal("edited details hash the same")
	}

	for _, stmt := range []string{
		"UPDATE audit_log SET actor = 'x'",
		"DELETE FROM audit_log",
		"TRUNCATE audit_log",
	} {
		if _, err := db.ExecContext(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// An append takes no lock: a transaction that appended and has not
// committed does not hold up another's append, nor a seal, which leaves
// it out until it commits.
func TestAppendsDoNotWaitAndSealAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	acct := wallettest.Account(t, db).ID
	at := time.Now()
	open, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Rollback() //nolint:errcheck // committed below
	if err := audit.Append(ctx, open, audit.Entry{
		AccountID: acct,
		At:        at,
		Actor:     audit.Actor("key_a"),
		Action:    "send.sent",
		Target:    "wallet:a",
		Details:   map[string]int{"n": 1},
	}); err != nil {
		t.Fatal(err)
	}
	quick, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.RunInTx(quick, nil, func(ctx context.Context, tx bun.Tx) error {
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: acct,
			At:        at.Add(time.Millisecond),
			Actor:     audit.Actor("key_b"),
			Action:    "send.sent",
			Target:    "wallet:b",
			Details:   map[string]int{"n": 2},
		})
	}); err != nil {
		t.Fatalf("an append waited for another transaction's: %v", err)
	}
	if n, err := audit.Seal(quick, db, acct); err != nil || n != 1 {
		t.Fatalf("sealed %d, %v: want only the committed entry", n, err)
	}
	// The open one is older than the sealed one; it takes the next place.
	if err := open.Commit(); err != nil {
		t.Fatal(err)
	}
	es, err := audit.List(ctx, db, acct, audit.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Actor != "key_a" || es[0].Seq != 2 || es[1].Actor != "key_b" || es[1].Seq != 1 {
		t.Fatalf("entries %+v", es)
	}
	if st, err := audit.Check(ctx, db, acct, audit.CheckOptions{Full: true}); err != nil || st.Break != nil || st.VerifiedThrough != 2 {
		t.Fatalf("check %+v %v", st, err)
	}
}

// An unsealed entry is as append-only as a sealed one: the one change the
// table allows is its seal, with the hash of its own fields.
func TestUnsealedEntriesRefuseChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	acct := wallettest.Account(t, db).ID
	if err := audit.Append(ctx, db, audit.Entry{
		AccountID: acct,
		At:        time.Now(),
		Actor:     audit.Actor("key_a"),
		Action:    "policy.updated",
		Target:    "wallet:a",
		Details:   map[string]int{"max": 1},
	}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE audit_log SET details = '{"max":1000}' WHERE account_id = ?`,
		`UPDATE audit_log SET seq = 1, prev_hash = '\x00', hash = '\x00' WHERE account_id = ?`,
		`UPDATE audit_log SET seq = 1, prev_hash = '\x00', hash = audit_hash('\x00', id, account_id, 1, at, actor, action, target, '{"max":1000}') WHERE account_id = ?`,
		`DELETE FROM audit_log WHERE account_id = ?`,
	} {
		if _, err := db.ExecContext(ctx, stmt, acct); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if n, err := audit.Seal(ctx, db, acct); err != nil || n != 1 {
		t.Fatalf("sealed %d, %v", n, err)
	}
	if n, err := audit.Seal(ctx, db, acct); err != nil || n != 0 {
		t.Fatalf("sealed again %d, %v", n, err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE audit_log SET seq = 5 WHERE account_id = ?`, acct); err == nil {
		t.Fatal("a sealed entry was sealed again")
	}
}

// A Sealer seals the accounts marked, soon after, and only those.
func TestSealerSealsMarkedAccounts(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.New(t)
	marked, other := wallettest.Account(t, db).ID, wallettest.Account(t, db).ID
	for _, a := range []uuid.UUID{marked, other} {
		if err := audit.Append(ctx, db, audit.Entry{
			AccountID: a,
			At:        time.Now(),
			Actor:     audit.Actor("key_a"),
			Action:    "send.sent",
			Target:    "wallet:a",
			Details:   map[string]int{"n": 1},
		}); err != nil {
			t.Fatal(err)
		}
	}
	s := audit.NewSealer(db, 10*time.Millisecond, nil)
	go s.Run(ctx)
	s.Mark(marked)
	unsealed := func(a uuid.UUID) int64 {
		n, err := db.NewSelect().Table("audit_log").Where("account_id = ? AND seq IS NULL", a).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitfor.True(t, "the marked account to be sealed", func() bool { return unsealed(marked) == 0 })
	if n := unsealed(other); n != 1 {
		t.Fatalf("the unmarked account: %d unsealed", n)
	}
	var nilSealer *audit.Sealer
	nilSealer.Mark(marked) // a nil Sealer marks nothing
}

// An entry the seal cannot hash (a time past what microseconds since the
// epoch hold; nothing the service writes) fails its account's seal with
// ErrSeal, and readers with it, rather than a partial log; the scheduler's
// SealAll still seals every other account, and names the one that failed.
func TestSealAllGoesPastAnAccountThatFails(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := pgtest.New(t)
	bad, good := wallettest.Account(t, db).ID, wallettest.Account(t, db).ID
	if _, err := db.ExecContext(ctx, `SELECT audit_append(gen_random_uuid(), ?, 'infinity', 'system', 'policy.updated', 'wallet:x', '{}'::json)`, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `SELECT audit_append(gen_random_uuid(), ?, now(), 'system', 'policy.updated', 'wallet:w', json_build_object('i', i))
		FROM generate_series(1, 3) AS i`, good); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.Seal(ctx, db, bad); !errors.Is(err, audit.ErrSeal) {
		t.Fatalf("seal of the unhashable entry: %v, want ErrSeal", err)
	}
	for name, read := range map[string]func() error{
		"List":  func() error { _, err := audit.List(ctx, db, bad, audit.Filter{Limit: 10}); return err },
		"Check": func() error { _, err := audit.Check(ctx, db, bad, audit.CheckOptions{}); return err },
	} {
		if err := read(); !errors.Is(err, audit.ErrSeal) {
			t.Errorf("%s: %v, want ErrSeal", name, err)
		}
	}
	n, err := audit.SealAll(ctx, db)
	if !errors.Is(err, audit.ErrSeal) || !strings.Contains(err.Error(), bad.String()) || strings.Contains(err.Error(), good.String()) {
		t.Fatalf("SealAll error %v: want the failing account's, only", err)
	}
	if n != 3 {
		t.Fatalf("SealAll sealed %d entries, want the good account's 3", n)
	}
	if st, err := audit.Check(ctx, db, good, audit.CheckOptions{Full: true}); err != nil || st.Break != nil || st.VerifiedThrough != 3 {
		t.Fatalf("the good account's chain: %+v %v", st, err)
	}
}
