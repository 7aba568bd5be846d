package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/tasks"
)

// With REDIS_SENTINELS the API reaches the master the sentinels name
// (REDIS_URL's host is never dialed): it is ready, and the queue UI,
// which asynq connects itself, lists the queue a task was put in there.
func TestServeThroughSentinels(t *testing.T) {
	t.Parallel()
	group := redistest.NewSentinel(t)
	_, pub, _ := signer.GenerateMasterKey()
	env := map[string]string{
		"DATABASE_URL": pgtest.NewURL(t, true), "WALLET_PUBLIC_KEY": pub, "HTTP_ADDR": "127.0.0.1:0", "LOG_LEVEL": "error",
		"REDIS_SENTINELS": strings.Join(group.Addrs, ","), "REDIS_MASTER_NAME": redistest.MasterName,
		"REDIS_URL": "redis://not-dialed:1/6", "OPS_USERNAME": "ops", "OPS_PASSWORD": "ops-secret",
	}
	primary := redis.NewClient(&redis.Options{Addr: group.Primary, DB: 6})
	defer primary.Close()
	if _, err := asynq.NewClientFromRedisClient(primary).Enqueue(tasks.NewHeartbeatTask()); err != nil {
		t.Fatal(err)
	}

	addr, stop := startServe(t, env)
	get := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		req.SetBasicAuth("ops", "ops-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if status, body := get("/readyz"); status != http.StatusOK {
		t.Fatalf("/readyz: %d %s", status, body)
	}
	if status, body := get("/ops/queues/api/queues"); status != http.StatusOK || !strings.Contains(body, `"`+tasks.QueueDefault+`"`) {
		t.Fatalf("queue UI: %d %s", status, body)
	}
	stop()
}
