package approval_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// Every transition from every state: exactly the ones in the lifecycle
// succeed, and a refused one changes nothing.
func TestTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	acct, w := walletOn(t, db)
	requester := uuid.New()
	if _, err := db.ExecContext(ctx, "INSERT INTO api_keys (id, account_id, prefix, hash, role, lineage) VALUES (?0, ?1, 'svc_test_x', sha256(?2::bytea), 'agent', ?0)",
		requester, acct.ID, requester.String()); err != nil {
		t.Fatal(err)
	}
	const approver = "key_approver"
	sig := "sig"

	type state struct {
		status string
		signed bool
	}
	states := map[string]state{
		"pending": {approval.Pending, false}, "signing": {approval.Signing, false}, "signing signed": {approval.Signing, true},
		"sent": {approval.Sent, true}, "rejected": {approval.Rejected, false}, "expired": {approval.Expired, false},
	}
	ops := []struct {
		name string
		do   func(id uuid.UUID) (bool, error)
		// from lists the states it succeeds from, with the status it
		// leaves.
		from map[string]string
	}{
		{"approve", func(id uuid.UUID) (bool, error) {
			_, err := approval.Start(ctx, db, acct.ID, id, approver, nil, nil)
			return err == nil, ignoreRefusal(err)
		}, map[string]string{"pending": approval.Signing}},
		{"reject", func(id uuid.UUID) (bool, error) {
			_, err := approval.Reject(ctx, db, acct.ID, id, approver, nil)
			return err == nil, ignoreRefusal(err)
		}, map[string]string{"pending": approval.Rejected}},
		{"release", func(id uuid.UUID) (bool, error) { return approval.Release(ctx, db, id) },
			map[string]string{"signing": approval.Pending}},
		{"claim", func(id uuid.UUID) (bool, error) {
			err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				_, err := approval.Claim(ctx, tx, id)
				return err
			})
			if errors.Is(err, approval.ErrNotSigning) {
				return false, nil
			}
			return err == nil, err
		}, map[string]string{"signing": approval.Signing}},
		{"mark sent", func(id uuid.UUID) (bool, error) { return approval.MarkSent(ctx, db, id, time.Now()) },
			map[string]string{"signing signed": approval.Sent}},
		{"reject by system", func(id uuid.UUID) (bool, error) {
			var ok bool
			err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				var err error
				ok, err = approval.RejectBySystem(ctx, tx, id, approval.ReasonPolicyViolation, "exceeds_daily_limit", time.Now())
				return err
			})
			return ok, err
		}, map[string]string{"signing": approval.Rejected, "signing signed": approval.Rejected}},
	}
	for _, op := range ops {
		for name, st := range states {
			t.Run(op.name+" from "+name, func(t *testing.T) {
				now := time.Now().UTC().Truncate(time.Microsecond)
				a := approval.Approval{ID: uuid.New(), AccountID: acct.ID, WalletID: w.ID, RequestedBy: uuid.NullUUID{UUID: requester, Valid: true},
					Amount: 1, To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Status: st.status, CreatedAt: now, ExpiresAt: now.Add(approval.Lifetime)}
				if st.signed {
					a.Signature = &sig
				}
				if st.status == approval.Signing {
					a.DecidedAt = bun.NullTime{Time: now}
				}
				if _, err := db.NewInsert().Model(&a).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				ok, err := op.do(a.ID)
				if err != nil {
					t.Fatal(err)
				}
				want, allowed := op.from[name]
				if ok != allowed {
					t.Fatalf("succeeded %v, want %v", ok, allowed)
				}
				if !allowed {
					want = st.status
				}
				got, err := approval.Get(ctx, db, acct.ID, a.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != want {
					t.Fatalf("status %s, want %s", got.Status, want)
				}
			})
		}
	}
}

func ignoreRefusal(err error) error {
	var np *approval.NotPendingError
	if errors.As(err, &np) {
		return nil
	}
	return err
}

// Every key of the requester's lineage is refused before anything else;
// another account's approval is not found.
func TestStartRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.New(t)
	acct, w := walletOn(t, db)
	other := wallettest.Account(t, db)
	_, secret, err := auth.CreateKey(ctx, db, acct)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := auth.Authenticate(ctx, db, secret)
	now := time.Now().UTC().Truncate(time.Microsecond)
	lineage := uuid.NullUUID{UUID: p.Lineage, Valid: true}
	a := approval.Approval{ID: uuid.New(), AccountID: acct.ID, WalletID: w.ID, RequestedBy: uuid.NullUUID{UUID: p.KeyID, Valid: true}, RequestedLineage: lineage,
		Amount: 1, To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Status: approval.Pending, CreatedAt: now, ExpiresAt: now.Add(approval.Lifetime)}
	if _, err := db.NewInsert().Model(&a).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := approval.Start(ctx, db, acct.ID, a.ID, p.ActorID(), p.Ancestry, nil); !errors.Is(err, approval.ErrRequester) {
		t.Fatalf("requester: %v", err)
	}
	if _, err := approval.Start(ctx, db, acct.ID, a.ID, "key_successor", []string{auth.KeyActorID(p.Lineage)}, nil); !errors.Is(err, approval.ErrRequester) {
		t.Fatalf("a key of the requester's lineage: %v", err)
	}
	if _, err := approval.Start(ctx, db, acct.ID, a.ID, "key_minted", []string{"key_" + uuid.NewString(), auth.KeyActorID(p.Lineage)}, nil); !errors.Is(err, approval.ErrRequester) {
		t.Fatalf("a key the requester minted: %v", err)
	}
	if _, err := approval.Start(ctx, db, other.ID, a.ID, "key_x", nil, nil); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("other account: %v", err)
	}
	if _, err := approval.Reject(ctx, db, other.ID, a.ID, "key_x", nil); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("other account reject: %v", err)
	}
	if got, _ := approval.Get(ctx, db, acct.ID, a.ID); got.Status != approval.Pending {
		t.Fatalf("status %s", got.Status)
	}
	if _, err := approval.Reject(ctx, db, acct.ID, a.ID, p.ActorID(), nil); err != nil {
		t.Fatalf("the requester may reject: %v", err)
	}
}

// walletOn makes an account and one wallet of it on tx.
func walletOn(t *testing.T, tx bun.IDB) (auth.Account, wallet.Wallet) {
	t.Helper()
	return walletWith(t, tx, policy.Default(), nil)
}

// walletWith makes an account with these people and a wallet of policy p.
func walletWith(t *testing.T, tx bun.IDB, p policy.Policy, people map[string]auth.Role) (auth.Account, wallet.Wallet) {
	t.Helper()
	acct := wallettest.Account(t, tx)
	for address, role := range people {
		if _, err := auth.AddUser(t.Context(), tx, acct.ID, address, role, "operator"); err != nil {
			t.Fatal(err)
		}
	}
	w, err := wallet.Create(t.Context(), tx, wallettest.Sealer(t), acct.ID, "system", "w", p, 0)
	if err != nil {
		t.Fatal(err)
	}
	return acct, w
}

// addPeople adds n users of role to the account.
func addPeople(t *testing.T, tx bun.IDB, acct uuid.UUID, role auth.Role, n int) {
	t.Helper()
	for range n {
		if _, err := auth.AddUser(t.Context(), tx, acct, sol.NewWallet().PublicKey().String(), role, "operator"); err != nil {
			t.Fatal(err)
		}
	}
}

// A payment needs the wallet's approvals_required approves, at most as
// many as the account has people who may approve (owners and approvers;
// viewers, keys and Slack members are not counted apart), and at least 1.
func TestQuorum_IsTheRequiredCappedByWhoMayApprove(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                       string
		required                   int
		owners, approvers, viewers int
		want                       int
	}{
		{"one needed, nobody to approve", 1, 0, 0, 0, 1},
		{"two needed, nobody to approve", 2, 0, 0, 0, 1},
		{"three needed, two owners and an approver", 3, 2, 1, 0, 3},
		{"three needed, an owner and an approver", 3, 1, 1, 0, 2},
		{"three needed, one owner among viewers", 3, 1, 0, 5, 1},
		{"two needed, four who may approve", 2, 2, 2, 0, 2},
		{"one needed, many who may approve", 1, 3, 3, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tx := pgtest.TestTx(t)
			acct, w := walletOn(t, tx)
			addPeople(t, tx, acct.ID, auth.RoleOwner, c.owners)
			addPeople(t, tx, acct.ID, auth.RoleApprover, c.approvers)
			addPeople(t, tx, acct.ID, auth.RoleViewer, c.viewers)
			if _, err := tx.ExecContext(t.Context(), "UPDATE wallets SET approvals_required = ? WHERE id = ?", c.required, w.ID); err != nil {
				t.Fatal(err)
			}
			got, err := approval.Quorum(t.Context(), tx, w.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("quorum %d, want %d", got, c.want)
			}
		})
	}
}

// Withdrawing a person (removed, or no longer one who may approve) deletes
// the votes that speak for them on the account's pending approvals, and
// only those: a vote on a decided approval stays on its record, and
// another person's, or another account's, stays.
func TestWithdrawPerson_DeletesTheirVotesOnPendingApprovals(t *testing.T) {
	t.Parallel()
	tx := pgtest.TestTx(t)
	ctx := t.Context()
	acct, w := walletOn(t, tx)
	other, otherWallet := walletOn(t, tx)
	const leaving, staying = "user:LEAVING", "user:STAYING"
	park := func(acct uuid.UUID, walletID uuid.UUID, status string, voters ...approval.Vote) uuid.UUID {
		t.Helper()
		now := time.Now().UTC().Truncate(time.Microsecond)
		a := approval.Approval{ID: uuid.New(), AccountID: acct, WalletID: walletID, Amount: 1,
			To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Status: status, CreatedAt: now, ExpiresAt: now.Add(approval.Lifetime)}
		if _, err := tx.NewInsert().Model(&a).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for _, v := range voters {
			v.ApprovalID = a.ID
			if _, err := tx.NewInsert().Model(&v).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return a.ID
	}
	// A vote speaks for its person and for every claim: an admin key the
	// leaving person made votes as them.
	byLeaving := approval.Vote{Person: leaving, By: leaving, Claims: []string{leaving}}
	byTheirKey := approval.Vote{Person: "key_made", By: "key_made", Claims: []string{"key_made", leaving}}
	byStaying := approval.Vote{Person: staying, By: staying, Claims: []string{staying}}
	pending := park(acct.ID, w.ID, approval.Pending, byLeaving, byStaying)
	pendingByKey := park(acct.ID, w.ID, approval.Pending, byTheirKey)
	sent := park(acct.ID, w.ID, approval.Sent, byLeaving, byStaying)
	elsewhere := park(other.ID, otherWallet.ID, approval.Pending, byLeaving)

	n, err := approval.WithdrawPerson(ctx, tx, acct.ID, leaving)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("withdrew %d votes, want 2", n)
	}
	for _, c := range []struct {
		name string
		id   uuid.UUID
		want []string
	}{
		{"pending", pending, []string{staying}},
		{"pending, voted by their key", pendingByKey, nil},
		{"sent", sent, []string{leaving, staying}},
		{"another account's", elsewhere, []string{leaving}},
	} {
		var persons []string
		if err := tx.NewSelect().Table("approval_votes").Column("person").Where("approval_id = ?", c.id).Order("person").Scan(ctx, &persons); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(persons, c.want) {
			t.Errorf("%s approval: votes of %q, want %q", c.name, persons, c.want)
		}
	}
}
