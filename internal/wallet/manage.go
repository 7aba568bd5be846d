package wallet

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/policy"
)

// Target names a wallet in audit entries.
func Target(id uuid.UUID) string { return "wallet:" + id.String() }

// lock reads a wallet of the account FOR UPDATE: a decision holding it
// finishes under the old values; the next one sees the new.
func lock(ctx context.Context, tx bun.Tx, accountID, id uuid.UUID) (Wallet, error) {
	var w Wallet
	err := tx.NewSelect().Model(&w).ExcludeColumn("secret_sealed").
		Where("id = ? AND account_id = ?", id, accountID).For("UPDATE").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Wallet{}, ErrNotFound
	}
	if err != nil {
		return Wallet{}, fmt.Errorf("lock wallet %s: %w", id, err)
	}
	return w, nil
}

// Guard judges a policy change under the wallet's lock; an error refuses
// it and nothing changes.
type Guard func(before, after policy.Policy) error

// UpdatePolicy applies a partial policy, validated like a new wallet's (a
// *FieldError names the policy field) and then by guard (nil allows any
// valid change), and records the before and after in the audit log. A
// patch that changes nothing writes nothing.
func UpdatePolicy(ctx context.Context, db bun.IDB, accountID, id uuid.UUID, actor string, c policy.Patch, guard Guard) (Wallet, error) {
	var w Wallet
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if w, err = lock(ctx, tx, accountID, id); err != nil {
			return err
		}
		before := w.Policy()
		after := before.Apply(c)
		if err := CheckPolicy(after, ""); err != nil {
			return err
		}
		if after.Allowlist == nil {
			after.Allowlist = []string{}
		}
		if guard != nil {
			if err := guard(before, after); err != nil {
				return err
			}
		}
		// Checked when it changes: a wallet whose people have since left
		// keeps its value (the quorum shrinks to those who remain, see
		// approval.Vote) and its other fields stay editable.
		if after.Approvals() != before.Approvals() {
			if err := checkApprovers(ctx, tx, accountID, after.Approvals(), ""); err != nil {
				return err
			}
		}
		if before.Same(after) {
			return nil
		}
		w.setPolicy(after)
		_, err = tx.NewUpdate().Model(&w).Column(policyColumns...).WherePK().Exec(ctx)
		if err != nil {
			return fmt.Errorf("update policy: %w", err)
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: accountID,
			At:        nowUTC(),
			Actor:     audit.Actor(actor),
			Action:    audit.ActionPolicyUpdated,
			Target:    Target(id),
			Details:   map[string]any{"wallet_id": id, "before": before.Doc(), "after": after.Doc()},
		})
	})
	return w, err
}

// SetState freezes or unfreezes a wallet with an audit entry (before and
// after). Changed is false when it already was in that state; nothing is
// written then.
func SetState(ctx context.Context, db bun.IDB, accountID, id uuid.UUID, actor string, state State) (w Wallet, changed bool, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if w, err = lock(ctx, tx, accountID, id); err != nil {
			return err
		}
		if w.State == state {
			return nil
		}
		before := w.State
		w.State, changed = state, true
		if _, err := tx.NewUpdate().Model(&w).Column("state").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("set wallet state: %w", err)
		}
		action := audit.ActionWalletFrozen
		if state == Active {
			action = audit.ActionWalletUnfrozen
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: accountID,
			At:        nowUTC(),
			Actor:     audit.Actor(actor),
			Action:    action,
			Target:    Target(id),
			Details:   map[string]any{"wallet_id": id, "before": before, "after": state},
		})
	})
	return w, changed, err
}
