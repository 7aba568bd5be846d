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

// The user and password of REDIS_URL (and the sentinels' own) reach both
// the client and asynq's options, directly and through sentinels; a user
// without a password, which go-redis would silently drop, is refused.
func TestRedisCredentials(t *testing.T) {
	t.Parallel()
	type creds struct{ user, password, sentinelUser, sentinelPassword string }
	cases := []struct {
		name string
		env  map[string]string
		want creds
		db   int
		err  string // the variable the error names, when refused
	}{
		{name: "none", env: map[string]string{"REDIS_URL": "redis://h:6379/0"}},
		{name: "password", env: map[string]string{"REDIS_URL": "redis://:s3cret@h:6379/1"},
			want: creds{password: "s3cret"}, db: 1},
		{name: "acl user", env: map[string]string{"REDIS_URL": "redis://agentwallet-api:s3cret@h:6379/0"},
			want: creds{user: "agentwallet-api", password: "s3cret"}},
		{name: "percent-encoded password", env: map[string]string{"REDIS_URL": "rediss://u:p%40ss%3Aw%2Fd@h:6380/2"},
			want: creds{user: "u", password: "p@ss:w/d"}, db: 2},
		{name: "sentinels", env: map[string]string{"REDIS_URL": "redis://u:pw@not-dialed/3",
			"REDIS_SENTINELS": "s1:26379", "REDIS_MASTER_NAME": "main", "REDIS_SENTINEL_PASSWORD": "sp"},
			want: creds{user: "u", password: "pw", sentinelPassword: "sp"}, db: 3},
		{name: "sentinels with an acl user", env: map[string]string{"REDIS_URL": "redis://u:pw@not-dialed/0",
			"REDIS_SENTINELS": "s1:26379", "REDIS_MASTER_NAME": "main", "REDIS_SENTINEL_USERNAME": "su", "REDIS_SENTINEL_PASSWORD": "sp"},
			want: creds{user: "u", password: "pw", sentinelUser: "su", sentinelPassword: "sp"}},
		{name: "user without password", env: map[string]string{"REDIS_URL": "redis://s3cret@h:6379/0"}, err: "REDIS_URL"},
		{name: "sentinel user without password", env: map[string]string{"REDIS_SENTINELS": "s1:26379", "REDIS_MASTER_NAME": "main",
			"REDIS_SENTINEL_USERNAME": "su"}, err: "REDIS_SENTINEL_USERNAME"},
		{name: "sentinel user without sentinels", env: map[string]string{"REDIS_SENTINEL_USERNAME": "su"}, err: "REDIS_SENTINEL_USERNAME"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadCommon(env(tc.env))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err+":") {
					t.Fatalf("error %v, want one naming %s", err, tc.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("the error shows the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rdb, opt, err := c.Redis.Open(0)
			if err != nil {
				t.Fatal(err)
			}
			defer rdb.Close()
			o := rdb.Options()
			if got := (creds{user: o.Username, password: o.Password}); got != (creds{user: tc.want.user, password: tc.want.password}) || o.DB != tc.db {
				t.Fatalf("client: %+v db %d, want %+v db %d", got, o.DB, tc.want, tc.db)
			}
			var got creds
			var db int
			switch a := opt.(type) {
			case asynq.RedisClientOpt:
				got, db = creds{user: a.Username, password: a.Password}, a.DB
			case asynq.RedisFailoverClientOpt:
				got, db = creds{a.Username, a.Password, a.SentinelUsername, a.SentinelPassword}, a.DB
			default:
				t.Fatalf("asynq options %T", opt)
			}
			if got != tc.want || db != tc.db {
				t.Fatalf("asynq: %+v db %d, want %+v db %d", got, db, tc.want, tc.db)
			}
		})
	}
}

// Against a real server that asks a password: REDIS_URL's password, or an
// ACL user and its password, lets the client and asynq's options in; no
// password or a wrong one fails at the first command, saying so.
func TestRedisPasswordOnARealServer(t *testing.T) {
	t.Parallel()
	addr := redistest.NewServer(t, "--requirepass", "main-secret",
		"--user", "agentwallet-test", "on", ">user-secret", "~*", "&*", "+@all")
	ping := func(url string) (whoami, asynqWhoami string, err error) {
		c, err := LoadCommon(env(map[string]string{"REDIS_URL": url}))
		if err != nil {
			t.Fatal(err)
		}
		rdb, opt, err := c.Redis.Open(2 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		ctx := context.Background()
		if whoami, err = rdb.Do(ctx, "ACL", "WHOAMI").Text(); err != nil {
			return "", "", err
		}
		ac := opt.MakeRedisClient().(redis.UniversalClient)
		defer ac.Close()
		asynqWhoami, err = ac.Do(ctx, "ACL", "WHOAMI").Text()
		return whoami, asynqWhoami, err
	}
	for _, tc := range []struct{ url, user string }{
		{"redis://:main-secret@" + addr + "/0", "default"},
		{"redis://agentwallet-test:user-secret@" + addr + "/0", "agentwallet-test"},
		{"redis://agentwallet-test:user-secret@" + addr + "/4", "agentwallet-test"},
	} {
		if got, asynqGot, err := ping(tc.url); err != nil || got != tc.user || asynqGot != tc.user {
			t.Errorf("%s: whoami %q, asynq's %q, err %v; want %q", redact(tc.url), got, asynqGot, err, tc.user)
		}
	}
	for _, tc := range []struct{ url, want string }{
		{"redis://" + addr + "/0", "NOAUTH"},
		{"redis://:wrong@" + addr + "/0", "WRONGPASS"},
		{"redis://agentwallet-test:wrong@" + addr + "/0", "WRONGPASS"},
		{"redis://nobody:user-secret@" + addr + "/0", "WRONGPASS"},
	} {
		if _, _, err := ping(tc.url); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", redact(tc.url), err, tc.want)
		}
	}
}
