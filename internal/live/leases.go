package live

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Default caps of open streams.
const (
	DefaultPerSession = 5
	DefaultPerPerson  = 10
	DefaultPerAccount = 100
)

// Over is which cap refused a stream.
type Over int

// Caps.
const (
	Within Over = iota
	OverSession
	OverAccount
	OverPerson
)

// Holder is who holds a stream: a session, of a person (their address),
// acting in an account.
type Holder struct {
	Session uuid.UUID
	Person  string
	Account uuid.UUID
}

// Leases count open streams per session, per person and per account
// across every API process, in Redis: each stream holds a lease in three
// sorted sets (member its id, score its expiry), renewed while it lives.
// A process that dies leaves leases that lapse after their TTL; nothing
// else needs cleaning.
type Leases struct {
	Redis *redis.Client
	// PerSession, PerPerson and PerAccount are the caps; PerPerson 0 is
	// none (the session's and the account's still hold).
	PerSession, PerPerson, PerAccount int
	// TTL is a lease's life without renewal.
	TTL time.Duration
}

// leaseScript drops lapsed leases, then, for a stream that holds none yet
// and unless ARGV[6] forces it, refuses past a cap (1: the session's, 3:
// the person's, 2: the account's); else it (re)writes the stream's lease
// in the three sets. Time is Redis's own, so every process counts alike.
var leaseScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
for i = 1, 3 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
end
if ARGV[6] ~= '1' and not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 1 end
  if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then return 3 end
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
end
for i = 1, 3 do
  redis.call('ZADD', KEYS[i], now + ttl, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return 0
`)

func (h Holder) keys() []string {
	return []string{
		"agentwallet:streams:session:" + h.Session.String(),
		"agentwallet:streams:account:" + h.Account.String(),
		"agentwallet:streams:person:" + h.Account.String() + ":" + h.Person,
	}
}

func (l *Leases) run(ctx context.Context, h Holder, stream uuid.UUID, force bool) (Over, error) {
	f := "0"
	if force {
		f = "1"
	}
	perPerson := l.PerPerson
	if perPerson <= 0 {
		perPerson = l.PerAccount
	}
	n, err := leaseScript.Run(ctx, l.Redis, h.keys(),
		stream.String(), l.TTL.Milliseconds(), l.PerSession, l.PerAccount, perPerson, f).Int()
	if err != nil {
		return Within, fmt.Errorf("stream lease: %w", err)
	}
	return Over(n), nil
}

// Acquire takes a lease for stream, or says which cap refuses it.
func (l *Leases) Acquire(ctx context.Context, h Holder, stream uuid.UUID) (Over, error) {
	return l.run(ctx, h, stream, false)
}

// Renew extends stream's lease by TTL (writing it again if it lapsed).
func (l *Leases) Renew(ctx context.Context, h Holder, stream uuid.UUID) error {
	_, err := l.run(ctx, h, stream, true)
	return err
}

// Release gives stream's lease back.
func (l *Leases) Release(ctx context.Context, h Holder, stream uuid.UUID) error {
	p := l.Redis.TxPipeline()
	for _, k := range h.keys() {
		p.ZRem(ctx, k, stream.String())
	}
	_, err := p.Exec(ctx)
	return err
}
