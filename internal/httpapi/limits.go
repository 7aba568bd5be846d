package httpapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/ratelimit"
)

// forwardedFor is the header whose client address TrustedProxies vouch for.
const forwardedFor = "X-Forwarded-For"

// clientAddr is the address a request without a key is counted under:
// the TCP peer, or what a trusted proxy says in X-Forwarded-For.
func (s *server) clientAddr(remote string, forwarded []string) string {
	return s.TrustedProxies.Client(remote, forwarded)
}

// requestClient is clientAddr of a net/http request.
func (s *server) requestClient(r *http.Request) string {
	return s.clientAddr(r.RemoteAddr, r.Header.Values(forwardedFor))
}

// humaClient is clientAddr of a huma operation's request.
func (s *server) humaClient(ctx huma.Context) string {
	var forwarded []string
	ctx.EachHeader(func(name, value string) {
		if http.CanonicalHeaderKey(name) == forwardedFor {
			forwarded = append(forwarded, value)
		}
	})
	return s.clientAddr(ctx.RemoteAddr(), forwarded)
}

// limitAnswer is a count's outcome: the headers every answer carries and,
// when the request is refused, its status, message and Retry-After.
type limitAnswer struct {
	result     ratelimit.Result
	status     int // 0: go on
	message    string
	retryAfter string
}

// count counts n requests of key in bucket (one, or a batch's messages).
// Over the limit it is 429; without Redis a keyed request (failClosed)
// is 503, so nothing runs unmetered, and an unkeyed one goes on (to its
// 401, or to a sign-in that needs Redis anyway).
func (s *server) count(ctx context.Context, key string, bucket ratelimit.Bucket, n int, failClosed bool) limitAnswer {
	if s.limiter == nil {
		return limitAnswer{}
	}
	c, cancel := context.WithTimeout(ctx, limitTimeout)
	r, err := s.limiter.AllowN(c, key, bucket, n)
	cancel()
	switch {
	case err != nil:
		s.log.WarnContext(ctx, "rate limiter unavailable", "bucket", bucket, "err", err)
		a := limitAnswer{result: s.limiter.Unknown(bucket)}
		if failClosed {
			a.status, a.message, a.retryAfter = http.StatusServiceUnavailable, "rate limiter unavailable; try again", "1"
		}
		return a
	case !r.Allowed:
		return limitAnswer{result: r, status: http.StatusTooManyRequests, message: "Rate limited",
			retryAfter: strconv.Itoa(int(math.Ceil(r.RetryAfter(time.Now()).Seconds())))}
	}
	return limitAnswer{result: r}
}

// headers puts the count's x-ratelimit-* (and, when refused, Retry-After)
// headers on an answer through set.
func (a limitAnswer) headers(set func(name, value string)) {
	if r := a.result; r.Limit != 0 {
		set("x-ratelimit-limit", strconv.Itoa(r.Limit))
		set("x-ratelimit-remaining", strconv.Itoa(r.Remaining))
		set("x-ratelimit-reset", strconv.FormatInt(r.Reset.Unix(), 10))
	}
	if a.retryAfter != "" {
		set("Retry-After", a.retryAfter)
	}
}

// toolError is a refusal as an MCP tool's error, worded as the tools word
// the API's answers: "the service answered 429: Rate limited; retry
// after 12 s".
func (a limitAnswer) toolError() error {
	if a.retryAfter != "" && a.status == http.StatusTooManyRequests {
		return fmt.Errorf("the service answered %d: %s; retry after %s s", a.status, a.message, a.retryAfter)
	}
	return fmt.Errorf("the service answered %d: %s", a.status, a.message)
}

// limitHTTP is limit for routes outside huma (sign-in, /mcp): it counts
// the request, sets the headers on w, and answers a refusal itself
// (false).
func (s *server) limitHTTP(w http.ResponseWriter, r *http.Request, key string, bucket ratelimit.Bucket, failClosed bool) bool {
	return s.limitHTTPN(w, r, key, bucket, 1, failClosed)
}

// limitHTTPN is limitHTTP for a request that counts as n (a batch of /mcp
// messages).
func (s *server) limitHTTPN(w http.ResponseWriter, r *http.Request, key string, bucket ratelimit.Bucket, n int, failClosed bool) bool {
	a := s.count(r.Context(), key, bucket, n, failClosed)
	a.headers(w.Header().Set)
	if a.status != 0 {
		writeError(w, a.status, a.message)
		return false
	}
	return true
}
