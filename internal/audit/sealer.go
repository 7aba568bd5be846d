package audit

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Sealer seals, soon after, the accounts its process wrote entries for:
// each Mark asks for one seal of that account within Every. A busy
// account's entries are then sealed in small batches as they come, rather
// than all at once by the scheduler's periodic task (which stays, for
// every writer that marks nothing): one large seal is a burst of the
// database's CPU that every request waits behind.
type Sealer struct {
	db    bun.IDB
	every time.Duration
	log   *slog.Logger

	mu    sync.Mutex
	dirty map[uuid.UUID]struct{}
	wake  chan struct{}
}

// SealerEvery is how long a Sealer waits between two rounds.
const SealerEvery = 100 * time.Millisecond

// NewSealer makes a Sealer over db (not a transaction); Run seals.
func NewSealer(db bun.IDB, every time.Duration, log *slog.Logger) *Sealer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sealer{db: db, every: every, log: log, dirty: map[uuid.UUID]struct{}{}, wake: make(chan struct{}, 1)}
}

// Mark asks for accountID's entries to be sealed; call it after the
// commit that wrote them. A nil Sealer marks nothing.
func (s *Sealer) Mark(accountID uuid.UUID) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.dirty[accountID] = struct{}{}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run seals the marked accounts until ctx ends, a round at most every
// s.every. A seal that fails is logged: the account's next mark, a read
// of its log or the scheduler's task seals what it left.
func (s *Sealer) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		s.mu.Lock()
		batch := s.dirty
		s.dirty = make(map[uuid.UUID]struct{}, len(batch))
		s.mu.Unlock()
		for a := range batch {
			if _, err := Seal(ctx, s.db, a); err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "seal audit entries; the next seal takes them", "account_id", a, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.every):
		}
	}
}
