package main

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// With REDIS_SENTINELS the worker takes its tasks from the master the
// sentinels name (REDIS_URL's host is never dialed), in REDIS_URL's
// database.
func TestServeThroughSentinels(t *testing.T) {
	t.Parallel()
	group := redistest.NewSentinel(t)
	primary := redis.NewClient(&redis.Options{Addr: group.Primary, DB: 4})
	defer primary.Close()
	priv, _, _ := signer.GenerateMasterKey()
	runsHeartbeatAndStops(t, map[string]string{
		"DATABASE_URL": pgtest.NewURL(t, true), "WALLET_MASTER_KEY": priv,
		"REDIS_SENTINELS": strings.Join(group.Addrs, ","), "REDIS_MASTER_NAME": redistest.MasterName,
		"REDIS_URL": "redis://not-dialed:1/4", "LOG_LEVEL": "error", "SHUTDOWN_TIMEOUT": "5s", "SOLANA_LOCAL_CHAIN": "true",
	}, primary)
}
