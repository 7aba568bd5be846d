// Package redistest gives a test a Redis logical database of its own: it
// claims a free DB number (1..15) with a key in DB 0, flushes it, and
// releases it when the test ends. TEST_REDIS_URL points at the server.
// NewSentinel starts a Sentinel group (primary, replica, three sentinels)
// of its own instead, for failover tests.
package redistest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultURL is used when TEST_REDIS_URL is unset.
const DefaultURL = "redis://127.0.0.1:6379"

// New returns a client on a freshly flushed Redis DB claimed for this test,
// and that DB's URL (for asynq and for processes started by the test).
func New(t testing.TB) (*redis.Client, string) {
	t.Helper()
	base := os.Getenv("TEST_REDIS_URL")
	if base == "" {
		base = DefaultURL
	}
	opts, err := redis.ParseURL(base)
	if err != nil {
		t.Fatalf("redistest: TEST_REDIS_URL: %v", err)
	}
	ctx := context.Background()
	opts.DB = 0
	ctl := redis.NewClient(opts)
	defer ctl.Close()

	token := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	deadline := time.Now().Add(2 * time.Minute)
	for {
		for n := 1; n <= 15; n++ {
			ok, err := ctl.SetNX(ctx, claimKey(n), token, 15*time.Minute).Result()
			if err != nil {
				t.Fatalf("redistest: %v (is Redis running at %s?)", err, base)
			}
			if !ok {
				continue
			}
			o := *opts
			o.DB = n
			c := redis.NewClient(&o)
			if err := c.FlushDB(ctx).Err(); err != nil {
				t.Fatalf("redistest: flush db %d: %v", n, err)
			}
			// Keep the claim alive however long the test runs, so no other
			// test claims (and flushes) this DB under it.
			stop := make(chan struct{})
			go func() {
				keep := redis.NewClient(opts)
				defer keep.Close()
				tick := time.NewTicker(time.Minute)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						keep.Expire(context.Background(), claimKey(n), 15*time.Minute)
					}
				}
			}()
			t.Cleanup(func() {
				close(stop)
				c.FlushDB(context.Background())
				c.Close()
				rel := redis.NewClient(opts)
				defer rel.Close()
				// Release only our own claim.
				if v, _ := rel.Get(context.Background(), claimKey(n)).Result(); v == token {
					rel.Del(context.Background(), claimKey(n))
				}
			})
			u, _ := url.Parse(base) // parsed above by redis.ParseURL
			u.Path = fmt.Sprintf("/%d", n)
			return c, u.String()
		}
		if time.Now().After(deadline) {
			t.Fatal("redistest: no free Redis DB in 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func claimKey(n int) string { return fmt.Sprintf("redistest:claim:%d", n) }
