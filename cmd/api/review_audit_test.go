package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// `api audit verify` goes on from each chain's checkpoint, so an entry
// edited behind the triggers before it goes unseen; `--full` walks from
// the first entry, finds it, and stores the break, which the next
// checkpointed run (and the API) then report.
func TestSecReview15FullWalkFindsABreakBeforeTheCheckpoint(t *testing.T) {
	t.Parallel()
	db, getenv := migrated(t)
	ctx := context.Background()
	acct, _ := auth.CreateAccount(ctx, db, solana.Devnet)
	for i := range 5 {
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return audit.Append(ctx, tx, acct.ID, time.Now(), "system", audit.ActionPolicyUpdated, "wallet:w", map[string]any{"n": i})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
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
