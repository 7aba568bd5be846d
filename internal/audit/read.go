package audit

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Filter selects entries of one account: optionally one action or one
// target, and only those before a sequence number (the cursor).
type Filter struct {
	Action string
	Target string
	// Agent, when not nil, keeps only what an agent key may read.
	Agent     *AgentView
	BeforeSeq int64 // 0: from the newest
	Limit     int
}

// AgentView is what an agent key reads of its account's log: an allowlist
// by target, so people (user:…, sessions), webhook endpoints, other keys
// and anything added later stay the humans' and the admins'.
//
//   - wallet:<id> of a wallet it reaches;
//   - approval:ap_… whose details name a wallet it reaches;
//   - key:key_… of its own keys (OwnKeys);
//
// and of permission.denied entries only its own keys' attempts (the
// details of a refusal name the refused key and its role).
type AgentView struct {
	// Wallets it reaches; nil: every wallet of the account.
	Wallets []uuid.UUID
	// OwnKeys selects the actor ids (key_<uuid>) of the agent's own keys,
	// as a subquery (auth.OwnKeyActors).
	OwnKeys *bun.SelectQuery
}

// List returns the account's entries newest first. The filter is one SQL
// condition, so a page is never short for what it leaves out.
// It seals the account's entries first, so what committed before the call
// is listed.
func List(ctx context.Context, db bun.IDB, accountID uuid.UUID, f Filter) ([]Record, error) {
	if _, err := Seal(ctx, db, accountID); err != nil {
		return nil, err
	}
	es := []Record{}
	q := db.NewSelect().Model(&es).Where("account_id = ? AND seq IS NOT NULL", accountID).Order("seq DESC").Limit(int64(f.Limit))
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if f.Target != "" {
		q = q.Where("target = ?", f.Target)
	}
	if v := f.Agent; v != nil {
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			if v.Wallets == nil {
				q = q.WhereOr("starts_with(target, 'wallet:') OR starts_with(target, 'approval:')")
			} else {
				targets := make([]string, len(v.Wallets))
				ids := make([]string, len(v.Wallets))
				for i, id := range v.Wallets {
					targets[i], ids[i] = "wallet:"+id.String(), id.String()
				}
				q = q.WhereOr("target IN (?)", bun.List(targets)).
					WhereOr("starts_with(target, 'approval:') AND details->>'wallet_id' IN (?)", bun.List(ids))
			}
			return q.WhereOr("starts_with(target, 'key:') AND substr(target, 5) IN (?)", v.OwnKeys)
		})
		q = q.Where("(action <> ? OR actor IN (?))", ActionPermissionDenied, v.OwnKeys)
	}
	if f.BeforeSeq > 0 {
		q = q.Where("seq < ?", f.BeforeSeq)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list audit entries: %w", err)
	}
	return es, nil
}
