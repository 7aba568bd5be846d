package approval_test

import (
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
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// walletOn makes an account and one wallet of it on tx.
func walletOn(t *testing.T, tx bun.IDB) (auth.Account, wallet.Wallet) {
	t.Helper()
	_, pub, _ := signer.GenerateMasterKey()
	sealer, err := signer.NewSealer(pub)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := auth.CreateAccount(t.Context(), tx, solana.Devnet)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wallet.Create(t.Context(), tx, sealer, acct.ID, "system", "w", policy.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return acct, w
}

// addPeople adds n users of role to the account.
func addPeople(t *testing.T, tx bun.IDB, acct uuid.UUID, role auth.Role, n int) {
	t.Helper()
	for range n {
		if _, err := auth.AddUser(t.Context(), tx, acct, sol.NewWallet().PublicKey().String(), role); err != nil {
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
