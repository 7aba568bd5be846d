package main

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/redistest"
)

// With REDIS_SENTINELS the scheduler registers its entries on the master
// the sentinels name (REDIS_URL's host is never dialed), in REDIS_URL's
// database.
func TestSchedulerThroughSentinels(t *testing.T) {
	t.Parallel()
	group := redistest.NewSentinel(t)
	primary := redis.NewClient(&redis.Options{Addr: group.Primary, DB: 3})
	defer primary.Close()
	registersAndStops(t, map[string]string{
		"REDIS_SENTINELS": strings.Join(group.Addrs, ","), "REDIS_MASTER_NAME": redistest.MasterName,
		"REDIS_URL": "redis://not-dialed:1/3", "LOG_LEVEL": "error",
	}, primary)
}
