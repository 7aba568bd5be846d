// Package audit writes the append-only audit log: one hash chain per
// account, each entry written inside the caller's transaction so it commits
// with the state change it describes. The table refuses UPDATE and DELETE;
// the chain makes any edit of a stored entry detectable.
package audit

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Actions written by the money path.
const (
	ActionSendSent            = "send.sent"
	ActionSendBlocked         = "send.blocked"
	ActionSendPendingApproval = "send.pending_approval"
	ActionSendFailed          = "send.failed"
)

// Entry is one audit record.
type Entry struct {
	bun.BaseModel `bun:"table:audit_log"`

	ID        uuid.UUID       `bun:"id,pk,type:uuid"`
	AccountID uuid.UUID       `bun:"account_id,type:uuid"`
	Seq       int64           `bun:"seq"`
	At        time.Time       `bun:"at"`
	Actor     string          `bun:"actor"`  // key_…, usr_…, slack:…, system
	Action    string          `bun:"action"` // e.g. send.sent
	Target    string          `bun:"target"` // what it acted on, e.g. wallet:<id>
	Details   json.RawMessage `bun:"details,type:json"`
	PrevHash  []byte          `bun:"prev_hash"`
	Hash      []byte          `bun:"hash"`
}

// Append adds an entry to the account's chain inside tx. Appends of one
// account are serialized by a transaction-scoped advisory lock, so call it
// last in a transaction: the lock is held until commit.
func Append(ctx context.Context, tx bun.IDB, accountID uuid.UUID, at time.Time, actor, action, target string, details any) error {
	raw, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("audit details: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", lockKey(accountID)); err != nil {
		return fmt.Errorf("lock audit chain: %w", err)
	}
	e := Entry{
		ID: uuid.New(), AccountID: accountID, At: at.UTC().Truncate(time.Microsecond),
		Actor: actor, Action: action, Target: target, Details: raw,
	}
	var head struct {
		Seq  int64
		Hash []byte
	}
	err = tx.NewSelect().Table("audit_log").Column("seq", "hash").
		Where("account_id = ?", accountID).Order("seq DESC").Limit(1).
		Scan(ctx, &head.Seq, &head.Hash)
	switch {
	case err == nil:
		e.Seq, e.PrevHash = head.Seq+1, head.Hash
	case errors.Is(err, sql.ErrNoRows):
		e.Seq, e.PrevHash = 1, make([]byte, sha256.Size)
	default:
		return fmt.Errorf("read audit head: %w", err)
	}
	e.Hash = e.ComputeHash()
	if _, err := tx.NewInsert().Model(&e).Exec(ctx); err != nil {
		return fmt.Errorf("insert audit entry: %w", err)
	}
	return nil
}

// ComputeHash is SHA-256 over the previous hash and every field, each
// length-prefixed so no two entries encode alike.
func (e *Entry) ComputeHash() []byte {
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	field(e.PrevHash)
	field([]byte(e.ID.String()))
	field([]byte(e.AccountID.String()))
	field(binary.BigEndian.AppendUint64(nil, uint64(e.Seq)))
	field([]byte(e.At.UTC().Format(time.RFC3339Nano)))
	field([]byte(e.Actor))
	field([]byte(e.Action))
	field([]byte(e.Target))
	field(e.Details)
	return h.Sum(nil)
}

// lockKey maps an account to an advisory lock id (the first 8 bytes of its
// UUID; collisions only serialize two accounts' appends).
func lockKey(accountID uuid.UUID) int64 {
	return int64(binary.BigEndian.Uint64(accountID[:8]))
}
