package migrations_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
)

// 0021 adds m-of-n approvals with today's behaviour: every wallet needs one
// approve, and an approve recorded before becomes that approval's one
// vote. The table refuses a second vote of one person on one approval.
func TestQuorumMigration_KeepsOneApproveEach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := migrated(t)
	runFile(t, db, "0021_approval_votes.tx.down.sql")
	acct, w, ap, pending := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO accounts (id, network) VALUES (?, 'devnet')`, []any{acct}},
		{`INSERT INTO wallets (id, account_id, label, pubkey, daily_limit_micros, max_tx_micros, approval_threshold_micros, allowlist, secret_key_id, secret_sealed)
			VALUES (?, ?, 'w', 'pk', 100000000, 25000000, 10000000, '{}', 'k', '\x00')`, []any{w, acct}},
		{`INSERT INTO approvals (id, account_id, wallet_id, amount_micros, to_address, status, approved_by, note, created_at, expires_at, decided_at)
			VALUES (?, ?, ?, 1000000, 'to', 'sent', 'user:abc', 'fine', now(), now() + interval '7 days', now())`, []any{ap, acct, w}},
		{`INSERT INTO approvals (id, account_id, wallet_id, amount_micros, to_address, status, created_at, expires_at)
			VALUES (?, ?, ?, 1000000, 'to', 'pending', now(), now() + interval '7 days')`, []any{pending, acct, w}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	runFile(t, db, "0021_approval_votes.tx.up.sql")

	var required int
	if err := db.NewRaw("SELECT approvals_required FROM wallets WHERE id = ?", w).Scan(ctx, &required); err != nil || required != 1 {
		t.Fatalf("approvals_required %d (%v)", required, err)
	}
	var votes []struct {
		ApprovalID uuid.UUID `bun:"approval_id"`
		Person     string    `bun:"person"`
		ByActor    string    `bun:"by_actor"`
		Note       *string   `bun:"note"`
	}
	if err := db.NewRaw("SELECT approval_id, person, by_actor, note FROM approval_votes").Scan(ctx, &votes); err != nil {
		t.Fatal(err)
	}
	if len(votes) != 1 || votes[0].ApprovalID != ap || votes[0].Person != "user:abc" || votes[0].ByActor != "user:abc" || votes[0].Note == nil || *votes[0].Note != "fine" {
		t.Fatalf("votes after 0021: %+v", votes)
	}
	for _, bad := range []string{
		"UPDATE wallets SET approvals_required = 0",
		"UPDATE wallets SET approvals_required = 1001",
		"UPDATE approvals SET approvals_needed = 0",
		"INSERT INTO approval_votes (approval_id, person, by_actor, claims) VALUES ('" + ap.String() + "', 'user:abc', 'key_x', '{key_x}')",
		"INSERT INTO users (account_id, address, role, slack_user_id) VALUES ('" + acct.String() + "', '11111111111111111111111111111111', 'owner', 'not a member')",
	} {
		if _, err := db.ExecContext(ctx, bad); err == nil {
			t.Errorf("%s was stored", bad)
		}
	}
	// One Slack member, one user of an account.
	if _, err := db.ExecContext(ctx, `INSERT INTO users (account_id, address, role, slack_user_id) VALUES (?, '11111111111111111111111111111111', 'owner', 'U1'), (?, '11111111111111111111111111111112', 'owner', 'U1')`, acct, acct); err == nil {
		t.Error("two users of one account share a Slack member")
	}
}
