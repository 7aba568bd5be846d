package live_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/live"
	"github.com/agentwallet/agentwallet/internal/redistest"
)

// TestLeases_CountLiveOnly: the caps count live leases only: a session's
// and an account's, released or lapsed leases free their place, and a
// renewal keeps a lease past its TTL.
func TestLeases_CountLiveOnly(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	l := &live.Leases{Redis: rdb, PerSession: 2, PerAccount: 3, TTL: 300 * time.Millisecond}
	ctx := t.Context()
	account, s1, s2 := uuid.New(), uuid.New(), uuid.New()
	holder := func(session uuid.UUID) live.Holder {
		return live.Holder{Session: session, Person: session.String(), Account: account}
	}
	acquire := func(session uuid.UUID, want live.Over) uuid.UUID {
		t.Helper()
		id := uuid.New()
		got, err := l.Acquire(ctx, holder(session), id)
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
	if _, err := l.Acquire(ctx, live.Holder{Session: uuid.New(), Person: "x", Account: uuid.New()}, uuid.New()); err != nil {
		t.Fatal(err) // another account counts apart
	}

	if err := l.Release(ctx, holder(s1), a); err != nil {
		t.Fatal(err)
	}
	acquire(s2, live.Within)
	acquire(s2, live.OverSession)

	// Only b is renewed: the others lapse, b holds its place.
	for range 4 {
		time.Sleep(100 * time.Millisecond)
		if err := l.Renew(ctx, holder(s2), b); err != nil {
			t.Fatal(err)
		}
	}
	acquire(s1, live.Within)
	acquire(s1, live.Within)
	acquire(s2, live.OverAccount)
}

// TestLeases_CappedPerPerson: a person's sessions in an account
// share a cap below the account's; another person, or the same person in
// another account, counts apart.
func TestLeases_CappedPerPerson(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	l := &live.Leases{Redis: rdb, PerSession: 2, PerPerson: 3, PerAccount: 10, TTL: time.Minute}
	ctx := t.Context()
	account, other := uuid.New(), uuid.New()
	acquire := func(h live.Holder, want live.Over) uuid.UUID {
		t.Helper()
		id := uuid.New()
		got, err := l.Acquire(ctx, h, id)
		if err != nil || got != want {
			t.Fatalf("acquire %+v: %v %v, want %v", h, got, err, want)
		}
		return id
	}
	laptop := live.Holder{Session: uuid.New(), Person: "alice", Account: account}
	phone := live.Holder{Session: uuid.New(), Person: "alice", Account: account}
	acquire(laptop, live.Within)
	acquire(laptop, live.Within)
	p := acquire(phone, live.Within)
	acquire(phone, live.OverPerson)
	acquire(live.Holder{Session: uuid.New(), Person: "alice", Account: account}, live.OverPerson)
	acquire(live.Holder{Session: uuid.New(), Person: "bob", Account: account}, live.Within)
	acquire(live.Holder{Session: uuid.New(), Person: "alice", Account: other}, live.Within)
	if err := l.Release(ctx, phone, p); err != nil {
		t.Fatal(err)
	}
	acquire(phone, live.Within)
}
