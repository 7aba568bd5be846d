package config

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/redistest"
)

// The Sentinel settings: what each combination loads as, and which are
// refused, naming the variable at fault.
func TestRedisSentinelSettings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		want Redis  // when loaded
		err  string // the variable the error names, when refused
	}{
		{name: "default", env: map[string]string{},
			want: Redis{URL: DefaultRedisURL}},
		{name: "url only", env: map[string]string{"REDIS_URL": "rediss://:pw@redis.internal:6380/3"},
			want: Redis{URL: "rediss://:pw@redis.internal:6380/3"}},
		{name: "sentinels", env: map[string]string{"REDIS_SENTINELS": "s1:26379, s2:26379 ,10.0.0.3:26379", "REDIS_MASTER_NAME": "main"},
			want: Redis{URL: DefaultRedisURL, Sentinels: []string{"s1:26379", "s2:26379", "10.0.0.3:26379"}, MasterName: "main"}},
		{name: "sentinels with password and url", env: map[string]string{"REDIS_SENTINELS": "[::1]:26379", "REDIS_MASTER_NAME": "main",
			"REDIS_SENTINEL_PASSWORD": "s3cret", "REDIS_URL": "redis://:pw@ignored/2"},
			want: Redis{URL: "redis://:pw@ignored/2", Sentinels: []string{"[::1]:26379"}, MasterName: "main", SentinelPassword: "s3cret"}},
		{name: "sentinels without master name", env: map[string]string{"REDIS_SENTINELS": "s1:26379"}, err: "REDIS_MASTER_NAME"},
		{name: "master name without sentinels", env: map[string]string{"REDIS_MASTER_NAME": "main"}, err: "REDIS_MASTER_NAME"},
		{name: "sentinel password without sentinels", env: map[string]string{"REDIS_SENTINEL_PASSWORD": "x"}, err: "REDIS_SENTINEL_PASSWORD"},
		{name: "sentinel without port", env: map[string]string{"REDIS_SENTINELS": "s1", "REDIS_MASTER_NAME": "main"}, err: "REDIS_SENTINELS"},
		{name: "sentinel with a bad port", env: map[string]string{"REDIS_SENTINELS": "s1:0", "REDIS_MASTER_NAME": "main"}, err: "REDIS_SENTINELS"},
		{name: "sentinel as a url", env: map[string]string{"REDIS_SENTINELS": "redis://s1:26379", "REDIS_MASTER_NAME": "main"}, err: "REDIS_SENTINELS"},
		{name: "sentinel without host", env: map[string]string{"REDIS_SENTINELS": ":26379", "REDIS_MASTER_NAME": "main"}, err: "REDIS_SENTINELS"},
		{name: "sentinel listed twice", env: map[string]string{"REDIS_SENTINELS": "s1:26379,s1:26379", "REDIS_MASTER_NAME": "main"}, err: "REDIS_SENTINELS"},
		{name: "only commas", env: map[string]string{"REDIS_SENTINELS": " , ", "REDIS_MASTER_NAME": "main"}, err: "REDIS_SENTINELS"},
		{name: "master name with a space", env: map[string]string{"REDIS_SENTINELS": "s1:26379", "REDIS_MASTER_NAME": "my master"}, err: "REDIS_MASTER_NAME"},
		{name: "bad url beside sentinels", env: map[string]string{"REDIS_SENTINELS": "s1:26379", "REDIS_MASTER_NAME": "main", "REDIS_URL": "redis://h/x"}, err: "REDIS_URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadScheduler(env(tc.env))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err+":") {
					t.Fatalf("error %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := c.Redis
			if got.URL != tc.want.URL || !slices.Equal(got.Sentinels, tc.want.Sentinels) || got.MasterName != tc.want.MasterName || got.SentinelPassword != tc.want.SentinelPassword {
				t.Fatalf("loaded %+v, want %+v", got, tc.want)
			}
		})
	}
	// Every process reads the same settings.
	_, err := LoadAPI(env(map[string]string{"REDIS_SENTINELS": "s1:26379"}))
	if err == nil || !strings.Contains(err.Error(), "REDIS_MASTER_NAME") {
		t.Fatalf("api: %v", err)
	}
	_, err = LoadWorker(env(map[string]string{"REDIS_MASTER_NAME": "main"}))
	if err == nil || !strings.Contains(err.Error(), "REDIS_MASTER_NAME") {
		t.Fatalf("worker: %v", err)
	}
	c, err := LoadCommon(env(map[string]string{"REDIS_SENTINELS": "s1:26379", "REDIS_MASTER_NAME": "m", "REDIS_SENTINEL_PASSWORD": "hunter2"}))
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprintf("%v %+v %#v", c, c, c); strings.Contains(s, "hunter2") {
		t.Fatalf("the sentinel password is printed: %s", s)
	}
}

// Open makes a direct client from REDIS_URL alone, a failover client with
// sentinels, and asynq options of the same kind and settings.
func TestRedisOpenKinds(t *testing.T) {
	t.Parallel()
	direct := Redis{URL: "rediss://u:pw@redis.internal:6380/3?pool_size=7"}
	rdb, opt, err := direct.Open(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	o := rdb.Options()
	if o.Addr != "redis.internal:6380" || o.DB != 3 || o.Username != "u" || o.Password != "pw" || o.PoolSize != 7 ||
		o.TLSConfig == nil || o.TLSConfig.ServerName != "redis.internal" || o.ReadTimeout != 2*time.Second || !o.ContextTimeoutEnabled {
		t.Fatalf("direct options %+v", o)
	}
	if c, ok := opt.(asynq.RedisClientOpt); !ok || c.Addr != o.Addr || c.DB != 3 || c.Password != "pw" || c.TLSConfig == nil {
		t.Fatalf("direct asynq options %#v", opt)
	}

	failover := Redis{URL: "rediss://u:pw@ignored:1/4", Sentinels: []string{"s1:26379", "s2:26379"}, MasterName: "main", SentinelPassword: "sp"}
	rdb, opt, err = failover.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	o = rdb.Options()
	// go-redis names a failover client's address "FailoverClient".
	if o.Addr != "FailoverClient" || o.DB != 4 || o.Username != "u" || o.Password != "pw" || o.TLSConfig == nil || o.TLSConfig.ServerName != "" {
		t.Fatalf("failover options %+v", o)
	}
	f, ok := opt.(asynq.RedisFailoverClientOpt)
	if !ok || f.MasterName != "main" || !slices.Equal(f.SentinelAddrs, failover.Sentinels) || f.SentinelPassword != "sp" || f.DB != 4 || f.Password != "pw" {
		t.Fatalf("failover asynq options %#v", opt)
	}

	if _, _, err := (Redis{URL: DefaultRedisURL, Sentinels: []string{"s1:26379"}}).Open(0); err == nil || !strings.Contains(err.Error(), "REDIS_MASTER_NAME") {
		t.Fatalf("no master name: %v", err)
	}
}

// Through real sentinels, both the client and asynq's options reach the
// primary, in REDIS_URL's database.
func TestRedisOpenThroughSentinels(t *testing.T) {
	t.Parallel()
	s := redistest.NewSentinel(t)
	c, err := LoadCommon(env(map[string]string{
		"REDIS_SENTINELS": strings.Join(s.Addrs, ","), "REDIS_MASTER_NAME": redistest.MasterName,
		"REDIS_URL": "redis://not-dialed:1/5",
	}))
	if err != nil {
		t.Fatal(err)
	}
	rdb, opt, err := c.Redis.Open(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Set(ctx, "via", "client", 0).Err(); err != nil {
		t.Fatal(err)
	}
	ac := opt.MakeRedisClient().(redis.UniversalClient)
	defer ac.Close()
	if err := ac.Set(ctx, "via-asynq", "options", 0).Err(); err != nil {
		t.Fatal(err)
	}
	primary := redis.NewClient(&redis.Options{Addr: s.Primary, DB: 5})
	defer primary.Close()
	if got, err := primary.MGet(ctx, "via", "via-asynq").Result(); err != nil || got[0] != "client" || got[1] != "options" {
		t.Fatalf("on the primary's db 5: %v %v", got, err)
	}
}
