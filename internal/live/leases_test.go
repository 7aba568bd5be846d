package live_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/live"
	"github.com/agentwallet/agentwallet/internal/redistest"
)

// TestIssue24EventsLeases: the caps count live leases only: a session's
// and an account's, released or lapsed leases free their place, and a
// renewal keeps a lease past its TTL.
func TestIssue24EventsLeases(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	l := &live.Leases{Redis: rdb, PerSession: 2, PerAccount: 3, TTL: 300 * time.Millisecond}
	ctx := t.Context()
	account, s1, s2 := uuid.New(), uuid.New(), uuid.New()
	acquire := func(session uuid.UUID, want live.Over) uuid.UUID {
		t.Helper()
		id := uuid.New()
		got, err := l.Acquire(ctx, session, account, id)
		if err != nil || got != want {
			t.Fatalf("acquire: %v %v, want %v", got, err, want)
		}
		return id
	}
	a := acquire(s1, live.Within)
	acquire(s1, live.Within)
	acquire(s1, live.OverSession)
	b := acquire(s2, live.Within)
	acquire(s2, live.OverAccount)
	acquire(uuid.New(), live.OverAccount)
	if _, err := l.Acquire(ctx, uuid.New(), uuid.New(), uuid.New()); err != nil {
		t.Fatal(err) // another account counts apart
	}

	if err := l.Release(ctx, s1, account, a); err != nil {
		t.Fatal(err)
	}
	acquire(s2, live.Within)
	acquire(s2, live.OverSession)

	// Only b is renewed: the others lapse, b holds its place.
	for range 4 {
		time.Sleep(100 * time.Millisecond)
		if err := l.Renew(ctx, s2, account, b); err != nil {
			t.Fatal(err)
		}
	}
	acquire(s1, live.Within)
	acquire(s1, live.Within)
	acquire(s2, live.OverAccount)
}
