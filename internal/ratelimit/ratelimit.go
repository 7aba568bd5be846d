// Package ratelimit counts requests per API key in fixed one-minute windows in
// Redis (docs/decisions/security.md, "Rate limits"): one atomic round trip per
// request.
package ratelimit

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bucket is a class of requests with its own limit.
type Bucket string

// The buckets (docs/decisions/security.md, "Rate limits").
const (
	Read  Bucket = "read"  // GET
	Write Bucket = "write" // other methods
	Send  Bucket = "send"  // POST /agents/:id/send and /agents/:id/x402/pay
	// Anonymous counts requests without a valid key per client address,
	// so guessing keys is limited too.
	Anonymous Bucket = "anonymous"
)

// Limits are requests per window per key (per client address for
// Anonymous); zero takes Default's.
type Limits struct {
	Read, Write, Send, Anonymous int
}

// Default is the spec's: GET 120, POST 60, send 30 per minute; and 60 a
// minute per address without a valid key.
var Default = Limits{Read: 120, Write: 60, Send: 30, Anonymous: 60}

// of is bucket b's limit; zero takes the default.
func (l Limits) of(b Bucket) int {
	switch b {
	case Read:
		return cmp.Or(l.Read, Default.Read)
	case Send:
		return cmp.Or(l.Send, Default.Send)
	case Anonymous:
		return cmp.Or(l.Anonymous, Default.Anonymous)
	}
	return cmp.Or(l.Write, Default.Write)
}

// Unknown is a result for when the count could not be taken (Redis
// down): the bucket's limit and window, nothing known to remain.
func (l *Limiter) Unknown(b Bucket) Result {
	now := time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	return Result{Limit: l.Limits.of(b), Reset: now.Truncate(Window).Add(Window)}
}

// Window is the length of a window.
const Window = time.Minute

// Result is one request's standing in its window.
type Result struct {
	Allowed   bool
	Limit     int
	Remaining int
	Reset     time.Time // when the window ends
}

// RetryAfter is how long a refused caller should wait.
func (r Result) RetryAfter(now time.Time) time.Duration {
	return max(r.Reset.Sub(now), time.Second)
}

// Limiter counts requests in Redis.
type Limiter struct {
	Redis  *redis.Client
	Limits Limits
	Now    func() time.Time // nil: time.Now
}

// incr adds ARGV[2] to a window's counter and sets its expiry on the
// first hits, atomically.
var incr = redis.NewScript(`
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`)

// Allow counts one request of key in bucket's current window.
func (l *Limiter) Allow(ctx context.Context, key string, b Bucket) (Result, error) {
	return l.AllowN(ctx, key, b, 1)
}

// AllowN counts n requests of key in bucket's current window at once
// (the messages of one JSON-RPC batch): allowed when all n fit; counted
// either way, as a refused single request is.
func (l *Limiter) AllowN(ctx context.Context, key string, b Bucket, n int) (Result, error) {
	n = max(n, 1)
	now := time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	start := now.Truncate(Window)
	r := Result{Limit: l.Limits.of(b), Reset: start.Add(Window)}
	k := "agentwallet:ratelimit:" + string(b) + ":" + key + ":" + strconv.FormatInt(start.Unix(), 10)
	// Kept a little past the window so a skewed clock never reuses it.
	total, err := incr.Run(ctx, l.Redis, []string{k}, (Window + 10*time.Second).Milliseconds(), n).Int()
	if err != nil {
		return r, fmt.Errorf("rate limit: %w", err)
	}
	r.Allowed = total <= r.Limit
	r.Remaining = max(r.Limit-total, 0)
	return r, nil
}
