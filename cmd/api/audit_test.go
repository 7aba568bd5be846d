package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// `api audit verify` passes an intact log; after one byte of one stored
// entry's details is flipped (behind the append-only trigger's back, as
// only the table's owner can), `--full` names that entry and fails.
func TestAuditVerify(t *testing.T) {
	t.Parallel()
	db, getenv := migrated(t)
	ctx := context.Background()
	acct, _ := auth.CreateAccount(ctx, db, solana.Devnet)
	other, _ := auth.CreateAccount(ctx, db, solana.Devnet)
	appendEntries(t, db, acct, acct, other, acct)
	var out bytes.Buffer
	if err := run(ctx, []string{"audit", "verify"}, getenv, &out); err != nil || !strings.Contains(out.String(), "checked 4 entries in 2 account chain(s): 0 broken") {
		t.Fatalf("intact: %v %q", err, out.String())
	}

	// In an UPDATE or DELETE the trigger refuses, for any user.
	for _, stmt := range []string{"UPDATE audit_log SET details = '{}'", "DELETE FROM audit_log"} {
		if _, err := db.ExecContext(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	var victim audit.Record
	if err := db.NewSelect().Model(&victim).Where("account_id = ? AND seq = 2", acct.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	pgtest.BehindTriggers(t, db, "UPDATE audit_log SET details = replace(details::text, '1', '2')::json WHERE id = ?", victim.ID)
	out.Reset()
	err := run(ctx, []string{"audit", "verify", "--full"}, getenv, &out)
	if !errors.Is(err, errChainBroken) || !strings.Contains(out.String(), "entry "+victim.ID.String()+" (seq 2): hash does not match") ||
		!strings.Contains(out.String(), "1 broken") {
		t.Fatalf("tampered: %v %q", err, out.String())
	}
	// The other account's chain is intact.
	out.Reset()
	if err := run(ctx, []string{"audit", "verify", "--full", "--account", other.ID.String()}, getenv, &out); err != nil || !strings.Contains(out.String(), "checked 1 entries in 1 account chain(s): 0 broken") {
		t.Fatalf("other account: %v %q", err, out.String())
	}
	for _, args := range [][]string{{"audit"}, {"audit", "check"}, {"audit", "verify", "--account", "x"}} {
		if err := run(ctx, args, getenv, &out); err == nil {
			t.Fatalf("%v accepted", args)
		}
	}
}

// appendEntries appends a policy.updated entry to the chain of each of
// accounts in turn, each with its place in the list as its details.
func appendEntries(t *testing.T, db *bun.DB, accounts ...auth.Account) {
	t.Helper()
	for i, a := range accounts {
		err := db.RunInTx(t.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
			return audit.Append(ctx, tx, audit.Entry{
				AccountID: a.ID,
				At:        time.Now(),
				Actor:     audit.System,
				Action:    audit.ActionPolicyUpdated,
				Target:    "wallet:w",
				Details:   map[string]any{"n": i},
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// `api audit verify` goes on from each chain's checkpoint, so an entry
// edited behind the triggers before it goes unseen; `--full` walks from
// the first entry, finds it, and stores the break, which the next
// checkpointed run (and the API) then report.
func TestAuditVerify_FullWalkFindsABreakBeforeTheCheckpoint(t *testing.T) {
	t.Parallel()
	db, getenv := migrated(t)
	ctx := context.Background()
	acct, _ := auth.CreateAccount(ctx, db, solana.Devnet)
	appendEntries(t, db, slices.Repeat([]auth.Account{acct}, 5)...)
	verify := func(want string, wantErr error, args ...string) {
		t.Helper()
		var out bytes.Buffer
		err := run(ctx, append([]string{"audit", "verify"}, args...), getenv, &out)
		if !errors.Is(err, wantErr) || !strings.Contains(out.String(), want) {
			t.Fatalf("audit verify %v: %v %q, want %q", args, err, out.String(), want)
		}
	}
	verify("checked 5 entries in 1 account chain(s): 0 broken", nil)
	verify("checked 0 entries in 1 account chain(s): 0 broken", nil)

	pgtest.BehindTriggers(t, db, `UPDATE audit_log SET details = '{"n":9}' WHERE account_id = ? AND seq = 2`, acct.ID)
	verify("checked 0 entries in 1 account chain(s): 0 broken", nil)
	verify("(seq 2): hash does not match the entry's contents (edited)", errChainBroken, "--full")
	verify("(seq 2): hash does not match", errChainBroken)
	verify("checked 0 entries in 1 account chain(s): 1 broken", errChainBroken, "--account", acct.ID.String())
}
