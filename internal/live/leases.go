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
	DefaultPerAccount = 100
)

// Over is which cap refused a stream.
type Over int

// Caps.
const (
	Within Over = iota
	OverSession
	OverAccount
)

// Leases count open streams per session and per account across every API
// process, in Redis: each stream holds a lease in two sorted sets (member
// its id, score its expiry), renewed while it lives. A process that dies
// leaves leases that lapse after their TTL; nothing else needs cleaning.
type Leases struct {
	Redis                  *redis.Client
	PerSession, PerAccount int
	// TTL is a lease's life without renewal.
	TTL time.Duration
}

// leaseScript drops lapsed leases, then, for a stream that holds none yet
// and unless ARGV[5] forces it, refuses past a cap (1: the session's, 2:
// the account's); else it (re)writes the stream's lease in both sets.
// Time is Redis's own, so every process counts alike.
var leaseScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if ARGV[5] ~= '1' and not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 1 end
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], now + ttl, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return 0
`)

func sessionKey(id uuid.UUID) string { return "agentwallet:streams:session:" + id.String() }
func accountKey(id uuid.UUID) string { return "agentwallet:streams:account:" + id.String() }

func (l *Leases) run(ctx context.Context, session, account, stream uuid.UUID, force bool) (Over, error) {
	f := "0"
	if force {
		f = "1"
	}
	n, err := leaseScript.Run(ctx, l.Redis, []string{sessionKey(session), accountKey(account)},
		stream.String(), l.TTL.Milliseconds(), l.PerSession, l.PerAccount, f).Int()
	if err != nil {
		return Within, fmt.Errorf("stream lease: %w", err)
	}
	return Over(n), nil
}

// Acquire takes a lease for stream, or says which cap refuses it.
func (l *Leases) Acquire(ctx context.Context, session, account, stream uuid.UUID) (Over, error) {
	return l.run(ctx, session, account, stream, false)
}

// Renew extends stream's lease by TTL (writing it again if it lapsed).
func (l *Leases) Renew(ctx context.Context, session, account, stream uuid.UUID) error {
	_, err := l.run(ctx, session, account, stream, true)
	return err
}

// Release gives stream's lease back.
func (l *Leases) Release(ctx context.Context, session, account, stream uuid.UUID) error {
	p := l.Redis.TxPipeline()
	p.ZRem(ctx, sessionKey(session), stream.String())
	p.ZRem(ctx, accountKey(account), stream.String())
	_, err := p.Exec(ctx)
	return err
}
