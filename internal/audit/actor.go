package audit

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// Actor names who did something, as the audit log, the events and the
// approvals record it: an API key ("key_<id>"), a person
// ("user:<address>"), a Slack user ("slack:<id>"), or the service itself
// (System). The prefixes are spelled here only.
type Actor string

// System is the service acting on its own (sweeps, expiries, refusals).
const System Actor = "system"

const (
	keyPrefix  = "key_"
	userPrefix = "user:"
)

// KeyActor is the API key id acting.
func KeyActor(id uuid.UUID) Actor { return Actor(keyPrefix + id.String()) }

// UserActor is the person of address acting (or acted upon: a target
// names a person the same way).
func UserActor(address string) Actor { return Actor(userPrefix + address) }

// Person is the address of a person actor; ok is false for any other.
func (a Actor) Person() (address string, ok bool) {
	return strings.CutPrefix(string(a), userPrefix)
}

// Key is the id of an API key actor; ok is false for any other.
func (a Actor) Key() (uuid.UUID, bool) {
	s, ok := strings.CutPrefix(string(a), keyPrefix)
	if !ok {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}

// IsPerson reports whether a is a person.
func (a Actor) IsPerson() bool { return strings.HasPrefix(string(a), userPrefix) }

// IsKey reports whether a is an API key.
func (a Actor) IsKey() bool { return strings.HasPrefix(string(a), keyPrefix) }

// Entry is one entry to append to an account's log: who did what to
// what, when, and the details (any JSON-encodable value).
type Entry struct {
	AccountID uuid.UUID
	At        time.Time
	Actor     Actor
	Action    string // e.g. send.sent
	Target    string // e.g. wallet:<id>
	Details   any
}
