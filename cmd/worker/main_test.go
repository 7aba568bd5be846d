package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/waitfor"

	"github.com/agentwallet/agentwallet/internal/tasks"
)

func TestKeygen(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"keygen"}, nil, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "WALLET_MASTER_KEY=") || !strings.HasPrefix(lines[1], "WALLET_PUBLIC_KEY=") {
		t.Fatalf("keygen printed %q", out.String())
	}
	priv, pub := strings.TrimPrefix(lines[0], "WALLET_MASTER_KEY="), strings.TrimPrefix(lines[1], "WALLET_PUBLIC_KEY=")
	sealer, err := signer.NewSealer(pub)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := signer.NewKeystore(priv)
	if err != nil {
		t.Fatal(err)
	}
	wpub, sealed, _ := sealer.NewWallet()
	msg := []byte("keygen pair")
	if sig, err := ks.Sign(context.Background(), signer.Key{Public: wpub, Sealed: sealed}, msg); err != nil || !ed25519.Verify(wpub, msg, sig) {
		t.Fatalf("keygen pair does not match: %v", err)
	}
}

// The worker consumes tasks and stops cleanly when its context ends (what
// SIGTERM does through signal.NotifyContext).
func TestServeRunsTasksAndStops(t *testing.T) {
	t.Parallel()
	env, rdb := workerEnv(t, map[string]string{"SHUTDOWN_TIMEOUT": "5s", "SOLANA_LOCAL_CHAIN": "true"})
	runsHeartbeatAndStops(t, env, rdb)
}

// workerEnv is the environment of a worker on a database and a Redis DB
// of its own, holding a new master key, with settings added; rdb reaches
// its Redis DB.
func workerEnv(t *testing.T, settings map[string]string) (env map[string]string, rdb *redis.Client) {
	t.Helper()
	rdb, redisURL := redistest.New(t)
	priv, _, err := signer.GenerateMasterKey()
	if err != nil {
		t.Fatal(err)
	}
	env = map[string]string{"DATABASE_URL": pgtest.NewURL(t, true), "REDIS_URL": redisURL, "WALLET_MASTER_KEY": priv, "LOG_LEVEL": "error"}
	maps.Copy(env, settings)
	return env, rdb
}

// runsHeartbeatAndStops runs the worker with env, puts a heartbeat task
// in through rdb, waits for the worker to run it, and stops the worker.
func runsHeartbeatAndStops(t *testing.T, env map[string]string, rdb *redis.Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, nil) }()

	client := asynq.NewClientFromRedisClient(rdb)
	if _, err := client.Enqueue(tasks.NewHeartbeatTask()); err != nil {
		t.Fatal(err)
	}
	waitfor.True(t, "the worker to run the heartbeat", func() bool {
		return rdb.Exists(context.Background(), tasks.HeartbeatKey).Val() != 0
	})
	cancel()
	waitfor.Returned(t, "the worker to stop", done)
}

func TestServeRefusesMissingKey(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), nil, func(string) string { return "" }, nil)
	if err == nil || !strings.Contains(err.Error(), "WALLET_MASTER_KEY") {
		t.Fatalf("err %v", err)
	}
}

// A worker whose mainnet node is not of mainnet's chain (here the
// localnet, without SOLANA_LOCAL_CHAIN) refuses to start, naming the
// variable; with the setting it starts.
func TestServeRefusesANodeOfAnotherChain(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	env, _ := workerEnv(t, map[string]string{"SOLANA_RPC_URL_MAINNET": ln.URL, "SOLANA_RPC_URL_DEVNET": "http://127.0.0.1:1"})
	refusesMainnetUnlessLocalChain(t, env, nil)
}

// refusesMainnetUnlessLocalChain runs the worker with env, whose mainnet
// nodes include one of another chain: it must refuse to start, naming
// SOLANA_RPC_URL_MAINNET. With SOLANA_LOCAL_CHAIN and the settings local
// added, it must start and run until stopped.
func refusesMainnetUnlessLocalChain(t *testing.T, env, local map[string]string) {
	t.Helper()
	err := run(context.Background(), nil, func(k string) string { return env[k] }, nil)
	var wrong *solana.WrongChainError
	if !errors.As(err, &wrong) || !strings.Contains(err.Error(), "SOLANA_RPC_URL_MAINNET") {
		t.Fatalf("err %v", err)
	}
	env["SOLANA_LOCAL_CHAIN"] = "true"
	maps.Copy(env, local)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := run(ctx, nil, func(k string) string { return env[k] }, nil); err != nil {
		t.Fatalf("with SOLANA_LOCAL_CHAIN: %v", err)
	}
}

// With a node list, a node of another chain still refuses the start even
// when another is down; with SOLANA_LOCAL_CHAIN, one node passing starts
// the worker though the other is down (it is used once it answers).
func TestServe_ChecksEveryNodeOfAList(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	env, _ := workerEnv(t, map[string]string{
		"SOLANA_RPC_URL_MAINNET": "http://127.0.0.1:1, " + ln.URL, "SOLANA_RPC_URL_DEVNET": "http://127.0.0.1:1",
		"SOLANA_RPC_TIMEOUT": "1s",
	})
	refusesMainnetUnlessLocalChain(t, env, map[string]string{"SOLANA_RPC_URL_DEVNET": ln.URL + ",http://127.0.0.1:1"})
}

// A worker whose asset table disagrees with the chain (here an ASSETS
// entry whose mint the chain does not have) refuses to start, naming the
// asset; the defaults alone agree with the localnet's real mints.
func TestServe_RefusesAnAssetTheChainContradicts(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	env, rdb := workerEnv(t, map[string]string{"SOLANA_RPC_URL_MAINNET": ln.URL, "SOLANA_RPC_URL_DEVNET": ln.URL, "SOLANA_LOCAL_CHAIN": "true",
		"SHUTDOWN_TIMEOUT": "5s", "ASSETS": "devnet:NOSUCH:7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU:token:6:USD"})
	err := run(context.Background(), nil, func(k string) string { return env[k] }, nil)
	var mismatch *asset.MismatchError
	if !errors.As(err, &mismatch) || !strings.Contains(err.Error(), "NOSUCH") {
		t.Fatalf("err %v, want the mismatch of NOSUCH", err)
	}
	delete(env, "ASSETS")
	runsHeartbeatAndStops(t, env, rdb)
}
