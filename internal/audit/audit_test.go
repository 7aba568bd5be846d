package audit_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// Concurrent appends of one account form one unbroken chain whose hashes
// Go recomputes; the table refuses UPDATE, DELETE and TRUNCATE.
func TestChainUnderConcurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	acct, err := auth.CreateAccount(ctx, db, solana.Devnet)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := auth.CreateAccount(ctx, db, solana.Devnet)
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			a := acct
			if i%4 == 0 {
				a = other
			}
			err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				return audit.Append(ctx, tx, a.ID, at, "key_x", "send.sent", "wallet:w", map[string]any{"i": i, "note": "é\n"})
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	var entries []audit.Entry
	if err := db.NewSelect().Model(&entries).Where("account_id = ?", acct.ID).Order("seq").Scan(ctx); err != nil {
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
