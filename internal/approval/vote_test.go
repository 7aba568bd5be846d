package approval_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
)

// A person's approve cast while an owner removes them does not count: the
// removal (deleting the user, revoking their keys, withdrawing their
// votes) is open when the approve starts from another connection, and
// commits after it. The approve is refused, no vote of theirs remains, and
// the next person's approve leaves the payment one short of the two it
// needs instead of sending it.
func TestVoteFor_RemovedPersonsVoteDoesNotCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	owner, leaving, next, third := newAddress(t), newAddress(t), newAddress(t), newAddress(t)
	acctID, a := pendingApproval(t, db, 2, map[string]auth.Role{owner: auth.RoleOwner, leaving: auth.RoleApprover, next: auth.RoleApprover, third: auth.RoleApprover})

	// The removal as RemoveUser's caller makes it, not committed yet.
	removal := beginRemoval(t, db, acctID, leaving)
	if _, err := approval.WithdrawPerson(ctx, removal, acctID, auth.UserActorID(leaving)); err != nil {
		t.Fatal(err)
	}

	voted := vote(db, acctID, a.ID, leaving)
	// Commit once the approve has either finished or is waiting on a
	// lock the removal holds.
	voteErr, done := settle(t, db, voted)
	if err := removal.Commit(); err != nil {
		t.Fatalf("commit the removal: %v", err)
	}
	if !done {
		voteErr = <-voted
	}
	if voteErr != nil && !errors.Is(voteErr, approval.ErrNoPerson) {
		t.Fatalf("the approve failed otherwise than by being refused: %v", voteErr)
	}
	var left []approval.Vote
	if err := db.NewSelect().Model(&left).Where("approval_id = ?", a.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("votes after the removal (approve answered %v): %+v", voteErr, left)
	}
	got, final, err := approval.VoteFor(ctx, db, acctID, a.ID, voter(next), nil)
	if err != nil {
		t.Fatal(err)
	}
	if final || got.Status != approval.Pending || len(got.Votes) != 1 || got.Needed != 2 {
		t.Fatalf("the next approve: final %v, status %s, %d votes of %d", final, got.Status, len(got.Votes), got.Needed)
	}
}

// Another person's approve cast while a voter is being removed neither
// deadlocks with the removal nor fails. With three approves needed and P's
// cast, P's removal (deleting the user, then withdrawing P's votes) is open
// when R approves from another connection: R's approve locks the approval
// and writes its event, whose foreign key on the account row must not wait
// for the removal's lock on that row while the removal waits for the
// approval. R's vote counts, P's is withdrawn, and the payment still waits
// for two more.
func TestVoteFor_VoteDuringAnotherPersonsRemovalNeitherDeadlocksNorFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	owner, leaving, r, fourth := newAddress(t), newAddress(t), newAddress(t), newAddress(t)
	acctID, a := pendingApproval(t, db, 3, map[string]auth.Role{owner: auth.RoleOwner, leaving: auth.RoleApprover, r: auth.RoleApprover, fourth: auth.RoleApprover})
	if _, final, err := approval.VoteFor(ctx, db, acctID, a.ID, voter(leaving), nil); err != nil || final {
		t.Fatalf("the leaving person's approve: final %v, %v", final, err)
	}

	removal := beginRemoval(t, db, acctID, leaving)
	// R approves while the removal holds the account row and the leaving
	// person's row, before it withdraws their vote.
	voted := vote(db, acctID, a.ID, r)
	voteErr, done := settle(t, db, voted)
	withdrawn, withdrawErr := approval.WithdrawPerson(ctx, removal, acctID, auth.UserActorID(leaving))
	if withdrawErr == nil {
		withdrawErr = removal.Commit()
	}
	if !done {
		voteErr = <-voted
	}
	if withdrawErr != nil || voteErr != nil {
		t.Fatalf("the removal answered %v, R's approve %v", withdrawErr, voteErr)
	}
	if withdrawn != 1 {
		t.Fatalf("the removal withdrew %d votes, want the leaving person's one", withdrawn)
	}
	got, err := approval.Get(ctx, db, acctID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != approval.Pending || len(got.Votes) != 1 || got.Votes[0].Person != auth.UserActorID(r) || got.Needed != 3 {
		t.Fatalf("after the removal: status %s, votes %+v, %d needed", got.Status, got.Votes, got.Needed)
	}
}

// pendingApproval makes an account with the users people, a wallet that
// needs required approves, and a pending approval of a payment from it.
func pendingApproval(t *testing.T, db *bun.DB, required int, people map[string]auth.Role) (uuid.UUID, approval.Approval) {
	t.Helper()
	ctx := context.Background()
	p := policy.Default()
	p.ApprovalsRequired = required
	acct, w := walletWith(t, db, p, people)
	now := time.Now().UTC().Truncate(time.Microsecond)
	a := approval.Approval{ID: uuid.New(), AccountID: acct.ID, WalletID: w.ID, Amount: 1, To: newAddress(t),
		Status: approval.Pending, CreatedAt: now, ExpiresAt: now.Add(approval.Lifetime)}
	if _, err := db.NewInsert().Model(&a).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return acct.ID, a
}

// beginRemoval deletes the user at address in a transaction of its own
// and leaves it open for the test to commit; it is rolled back at cleanup
// if the test does not.
func beginRemoval(t *testing.T, db *bun.DB, acctID uuid.UUID, address string) bun.Tx {
	t.Helper()
	ctx := context.Background()
	removal, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removal.Rollback() }) //nolint:errcheck // the test may have committed
	if _, _, err := auth.RemoveUser(ctx, removal, acctID, address); err != nil {
		t.Fatal(err)
	}
	return removal
}

// vote casts address's approve of approval id from a connection of its
// own; its error arrives on the channel.
func vote(db *bun.DB, accountID, id uuid.UUID, address string) <-chan error {
	voted := make(chan error, 1)
	go func() {
		_, _, err := approval.VoteFor(context.Background(), db, accountID, id, voter(address), nil)
		voted <- err
	}()
	return voted
}

// settle waits until the approve on voted has finished (its error and
// true) or a connection to the test's database waits for a lock (false).
func settle(t *testing.T, db *bun.DB, voted <-chan error) (error, bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-voted:
			return err, true
		default:
		}
		if waiting(t, db) {
			return nil, false
		}
		if time.Now().After(deadline) {
			t.Fatal("the approve neither finished nor waited for a lock")
		}
	}
}

// voter is the dashboard user address as an approver.
func voter(address string) approval.Voter {
	actor := auth.UserActorID(address)
	return approval.Voter{Actor: actor, Person: actor, Ancestry: []string{actor}}
}

// waiting reports whether a connection to the test's database waits for a
// lock.
func waiting(t *testing.T, db *bun.DB) bool {
	t.Helper()
	var n int
	err := db.NewRaw("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(context.Background(), &n)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

func newAddress(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return sol.PublicKeyFromBytes(pub).String()
}
