package deploy

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/handoff"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/keymaker"
	"github.com/agentwallet/agentwallet/internal/live"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/worker"
)

// The processes' users, as redis-acl.conf names them.
const (
	apiUser       = "agentwallet-api"
	workerUser    = "agentwallet-worker"
	schedulerUser = "agentwallet-scheduler"
)

// aclLines reads redis-acl.conf: each user's ACL SETUSER rules, by name,
// and the lines as written.
func aclLines(t *testing.T) (map[string][]string, []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "docs", "redis-acl.conf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules := map[string][]string{}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		w := strings.Fields(line)
		if len(w) < 4 || w[0] != "ACL" || w[1] != "SETUSER" || w[3] != "reset" {
			t.Fatalf("redis-acl.conf: %q is not ACL SETUSER <user> reset ...", line)
		}
		for _, r := range w[4:] {
			if strings.HasPrefix(r, ">") || strings.HasPrefix(r, "#") || r == "nopass" || r == "allkeys" || r == "allchannels" || r == "allcommands" ||
				r == "~*" || r == "&*" || strings.HasPrefix(r, "+@") {
				t.Fatalf("redis-acl.conf: user %s: %q grants more than named commands, keys and channels, or sets a password", w[2], r)
			}
		}
		rules[w[2]] = w[3:]
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rules, lines
}

// Each process's Redis user, exactly as docs/redis-acl.conf (and
// docs/deploy.md) give it, runs that process's code without one refusal:
// the scheduler's periodic enqueue, the worker's asynq servers (process,
// retry, forward, archive, shut down), the hand-off and the keymaker's
// wake, heartbeats, outcomes published to the api's subscription, and the
// api's rate limits, sign-in challenges, stream leases, readiness, queue
// metrics and queue UI. Redis's ACL LOG, read at the end, must be empty.
func TestRedisACL(t *testing.T) {
	rules, lines := aclLines(t)
	docs, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if !strings.Contains(string(docs), l) {
			t.Errorf("docs/deploy.md does not show redis-acl.conf's line\n%s", l)
		}
	}

	addr := redistest.NewServer(t, "--requirepass", "admin-secret")
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: addr, Password: "admin-secret"})
	defer admin.Close()
	info, err := admin.Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	// CLIENT SETINFO (Redis 7.2): older servers know no such subcommand
	// to grant, and go-redis's attempt at it is an unknown command there,
	// not a refusal.
	oldServer := false
	if _, v, ok := strings.Cut(info, "redis_version:"); ok {
		parts := strings.SplitN(strings.Fields(v)[0], ".", 3)
		major, _ := strconv.Atoi(parts[0])
		minor, _ := strconv.Atoi(parts[1])
		oldServer = major < 7 || major == 7 && minor < 2
	}
	password := func(user string) string { return user + "-secret" }
	for _, user := range []string{apiUser, workerUser, schedulerUser} {
		r, ok := rules[user]
		if !ok {
			t.Fatalf("redis-acl.conf has no user %s", user)
		}
		args := []any{"ACL", "SETUSER", user}
		for _, x := range r {
			if x == "+client|setinfo" && oldServer {
				t.Logf("Redis before 7.2: %s's %s left out", user, x)
				continue
			}
			args = append(args, x)
		}
		if err := admin.Do(ctx, append(args, ">"+password(user))...).Err(); err != nil {
			t.Fatalf("ACL SETUSER %s: %v", user, err)
		}
	}
	open := func(user string, timeout time.Duration) (*redis.Client, asynq.RedisConnOpt) {
		url := fmt.Sprintf("redis://%s:%s@%s/0", user, password(user), addr)
		c, err := config.LoadCommon(func(k string) string {
			if k == "REDIS_URL" {
				return url
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		rdb, opt, err := c.Redis.Open(timeout)
		if err != nil {
			t.Fatal(err)
		}
		return rdb, opt
	}
	apiRedis, apiOpt := open(apiUser, httpapi.RedisTimeout)
	workerRedis, _ := open(workerUser, 0)
	schedulerRedis, _ := open(schedulerUser, 0)
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}

	// ---- worker: asynq's servers and the hand-off over a mux whose
	// heartbeat is the worker's own; a send's decision fails twice (the
	// hand-off queues it, asynq retries it) and then publishes its
	// outcome; a webhook delivery's first attempt is archived.
	priv, pub, err := signer.GenerateMasterKey()
	if err != nil {
		t.Fatal(err)
	}
	ks, err := signer.NewKeystore(priv)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := signer.NewSealer(pub)
	if err != nil {
		t.Fatal(err)
	}
	own := worker.NewMux(worker.Deps{Redis: workerRedis, Keystore: ks, Log: log})
	mux := asynq.NewServeMux()
	mux.Handle(tasks.TypeHeartbeat, own)
	var decideRuns atomic.Int32
	mux.HandleFunc(tasks.TypeSendDecide, func(ctx context.Context, task *asynq.Task) error {
		p, err := tasks.ParseSendDecide(task)
		if err != nil {
			return err
		}
		if decideRuns.Add(1) < 3 {
			return errors.New("not yet")
		}
		return payment.Publish(ctx, workerRedis, p.RequestID, &payment.Outcome{Status: payment.Sent})
	})
	attempts := map[string]*atomic.Int32{}
	delivered := make(chan string, 8)
	deliveryIDs := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	for _, id := range deliveryIDs {
		attempts[id.String()] = new(atomic.Int32)
	}
	mux.HandleFunc(tasks.TypeWebhookDeliver, func(ctx context.Context, task *asynq.Task) error {
		var p tasks.WebhookDeliver
		if err := json.Unmarshal(task.Payload(), &p); err != nil {
			return err
		}
		if attempts[p.DeliveryID.String()].Add(1) == 1 {
			return fmt.Errorf("first attempt: %w", asynq.SkipRetry)
		}
		delivered <- p.DeliveryID.String()
		return nil
	})
	stopWorker, err := worker.Start(workerRedis, mux, worker.Options{Concurrency: 2, ShutdownTimeout: 2 * time.Second, Log: log,
		RetryDelay:               func(int, error, *asynq.Task) time.Duration { return 0 },
		DelayedTaskCheckInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var workerStop sync.Once
	t.Cleanup(func() { workerStop.Do(stopWorker) })
	keysCtx, stopKeys := context.WithCancel(ctx)
	keysDone := make(chan struct{})
	go func() {
		defer close(keysDone)
		(&keymaker.Server{Redis: workerRedis, Log: log, Every: 2 * time.Second}).Run(keysCtx)
	}()
	enqueueDelivery := worker.EnqueueDelivery(workerRedis)

	// ---- scheduler: asynq's scheduler as cmd/scheduler runs it.
	sched := asynq.NewSchedulerFromRedisClient(schedulerRedis, &asynq.SchedulerOpts{
		Logger: tasks.Logger{L: log}, HeartbeatInterval: time.Second,
		PostEnqueueFunc: func(_ *asynq.TaskInfo, err error) {
			if err != nil && !tasks.IsDuplicate(err) {
				t.Errorf("scheduler: enqueue: %v", err)
			}
		},
	})
	if _, err := sched.Register("@every 1s", tasks.NewHeartbeatTask()); err != nil {
		t.Fatal(err)
	}
	if err := sched.Start(); err != nil {
		t.Fatal(err)
	}
	var schedStop sync.Once
	stopScheduler := func() { schedStop.Do(sched.Shutdown) }
	t.Cleanup(stopScheduler) // before the test ends, even when it fails

	// ---- api: the HTTP handler (readiness, sign-in, metrics, queue UI),
	// the outcome subscription, the hand-off, the keymaker's wake and the
	// stream leases.
	db, err := postgres.Open(pgURL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const origin = "http://dashboard.test"
	handler, release := httpapi.New(httpapi.Deps{DB: db, Redis: apiRedis, Sealer: sealer, Log: log,
		Ops:        httpapi.OpsConfig{Username: "ops", Password: "ops-secret", RedisConnOpt: apiOpt},
		RateLimits: &ratelimit.Default, DashboardOrigin: origin})
	srv := httptest.NewServer(handler)
	call := func(method, path, body string, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		if strings.HasPrefix(path, httpapi.QueuesPath) {
			req.SetBasicAuth("ops", "ops-secret")
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(raw)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited 20 s for %s; %s", what, aclLog(t, admin))
			}
		}
	}

	// The scheduler's heartbeat reaches a worker, which writes it.
	waitFor("a worker's heartbeat", func() bool { return admin.Exists(ctx, tasks.HeartbeatKey).Val() == 1 })
	if code, body := call("GET", "/readyz", ""); code != 200 || !strings.Contains(body, "heartbeat") {
		t.Fatalf("readyz: %d %s", code, body)
	}

	// A send's decision handed over, retried, and its outcome announced.
	waiter := payment.NewWaiter()
	waitCtx, stopWaiter := context.WithCancel(ctx)
	waiterDone := make(chan struct{})
	go func() { defer close(waiterDone); waiter.Run(waitCtx, apiRedis, log) }()
	waitFor("the outcome subscription", func() bool {
		n, _ := admin.PubSubNumSub(ctx, payment.DecidedChannel).Result()
		return n[payment.DecidedChannel] >= 2 // the handler's and this one
	})
	requestID := uuid.New()
	outcome, done := waiter.Register(requestID)
	defer done()
	if err := (handoff.Redis{Client: apiRedis}).Decide(ctx, requestID); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-outcome:
		if o == nil || o.Status != payment.Sent || decideRuns.Load() != 3 {
			t.Fatalf("outcome %+v after %d runs", o, decideRuns.Load())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no outcome after %d runs; %s", decideRuns.Load(), aclLog(t, admin))
	}

	// Custody's wake, popped by the worker's keymaker.
	_, _ = (&keymaker.Client{DB: db, Redis: apiRedis, Wait: 100 * time.Millisecond}).Sealed(ctx, uuid.New(), uuid.New(), uuid.New())
	waitFor("the keymaker's wake to be taken", func() bool {
		n, err := admin.LLen(ctx, keymaker.WakeKey).Result()
		return err == nil && n == 0
	})

	// Rate limits and sign-in challenges, through the HTTP handler.
	code, body := call("POST", httpapi.SessionPath+"/challenge", "{}", "Origin", origin, "Content-Type", "application/json")
	var challenge struct{ Input map[string]string }
	if code != 200 || json.Unmarshal([]byte(body), &challenge) != nil || challenge.Input["nonce"] == "" {
		t.Fatalf("challenge: %d %s", code, body)
	}
	bogus := base64.StdEncoding.EncodeToString([]byte("x"))
	verify := fmt.Sprintf(`{"nonce":%q,"address":"x","message":%q,"signature":%q}`, challenge.Input["nonce"], bogus, bogus)
	if code, body := call("POST", httpapi.SessionPath, verify, "Origin", origin, "Content-Type", "application/json"); code != 401 {
		t.Fatalf("sign-in: %d %s", code, body)
	}
	if n := admin.Exists(ctx, "agentwallet:siws:"+challenge.Input["nonce"]).Val(); n != 0 {
		t.Fatal("the challenge was not taken")
	}

	// Stream leases.
	leases := &live.Leases{Redis: apiRedis, PerSession: 1, PerPerson: 1, PerAccount: 1, TTL: time.Minute}
	holder, stream := live.Holder{Session: uuid.New(), Person: "p", Account: uuid.New()}, uuid.New()
	if over, err := leases.Acquire(ctx, holder, stream); err != nil || over != live.Within {
		t.Fatalf("lease: %v %v", over, err)
	}
	if err := leases.Renew(ctx, holder, stream); err != nil {
		t.Fatal(err)
	}
	if err := leases.Release(ctx, holder, stream); err != nil {
		t.Fatal(err)
	}

	// Webhook deliveries: one archived and replaced by the worker, one
	// run again and one deleted from the queue UI.
	for _, id := range deliveryIDs {
		if _, err := enqueueDelivery(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	insp := asynq.NewInspectorFromRedisClient(admin)
	waitFor("three archived deliveries", func() bool {
		n, _ := insp.ListArchivedTasks(tasks.QueueWebhooks)
		return len(n) == 3
	})
	if code, body := call("GET", httpapi.QueuesPath+"/api/queues/webhooks/tasks/"+deliveryIDs[0].String(), ""); code != 200 {
		t.Errorf("queue UI, a task: %d %s", code, body)
	}
	if dup, err := enqueueDelivery(ctx, deliveryIDs[0]); err != nil || dup {
		t.Fatalf("replace an archived delivery: %v %v", dup, err)
	}
	ui := httpapi.QueuesPath + "/api"
	for _, r := range []struct{ method, path string }{
		{"POST", "/queues/webhooks/archived_tasks/" + deliveryIDs[1].String() + ":run"},
		{"DELETE", "/queues/webhooks/archived_tasks/" + deliveryIDs[2].String()},
		{"POST", "/queues/default:pause"},
		{"POST", "/queues/default:resume"},
		{"POST", "/queues/default/active_tasks/" + uuid.NewString() + ":cancel"},
	} {
		if code, body := call(r.method, ui+r.path, ""); code >= 300 {
			t.Errorf("queue UI %s %s: %d %s", r.method, r.path, code, body)
		}
	}
	for range 2 {
		select {
		case <-delivered:
		case <-time.After(20 * time.Second):
			t.Fatalf("deliveries not run again; %s", aclLog(t, admin))
		}
	}
	for _, p := range []string{"/queues", "/queue_stats", "/queues/webhooks", "/queues/payments/completed_tasks",
		"/queues/payments/pending_tasks", "/queues/payments/retry_tasks", "/queues/webhooks/archived_tasks",
		"/queues/payments/scheduled_tasks", "/queues/payments/active_tasks", "/queues/payments/groups",
		"/servers", "/scheduler_entries", "/redis_info"} {
		if code, body := call("GET", ui+p, ""); code != 200 {
			t.Errorf("queue UI %s: %d %s", p, code, body)
		}
	}
	if code, body := call("GET", "/metrics", ""); code != 200 || !strings.Contains(body, "asynq_tasks_enqueued_total") {
		t.Errorf("metrics: %d %.300s", code, body)
	}

	// What no test above reaches: Slack's click records (api) and the
	// signers' health (worker, with signers), by Redis's own check.
	for _, c := range []struct {
		user string
		cmd  []string
	}{
		{apiUser, []string{"SET", "slack:click:s", "0", "NX", "PX", "60000"}},
		{apiUser, []string{"GET", "slack:click:s"}},
		{apiUser, []string{"SET", "slack:click:s", "200", "XX", "KEEPTTL"}},
		{apiUser, []string{"DEL", "slack:click:s"}},
		{apiUser, []string{"HGETALL", tasks.SignersKey}},
		{workerUser, []string{"HSET", tasks.SignersKey, "envelope", "{}"}},
		{workerUser, []string{"EXPIRE", tasks.SignersKey, "300"}},
	} {
		if got := dryRun(ctx, admin, c.user, c.cmd...); got != "OK" {
			t.Errorf("%s %v: %s", c.user, c.cmd, got)
		}
	}

	// Everything stops (asynq clears its servers' and scheduler's state).
	stopScheduler()
	workerStop.Do(stopWorker)
	stopKeys()
	<-keysDone
	stopWaiter()
	<-waiterDone
	srv.Close()
	release()
	for _, c := range []*redis.Client{apiRedis, workerRedis, schedulerRedis} {
		c.Close()
	}
	if entries := aclLog(t, admin); entries != "" {
		t.Fatalf("Redis refused commands: %s", entries)
	}

	// And each user is held to its part.
	for _, c := range []struct {
		user string
		cmd  []string
	}{
		{apiUser, []string{"FLUSHALL"}},
		{apiUser, []string{"KEYS", "*"}},
		{apiUser, []string{"SET", tasks.HeartbeatKey, "1"}},
		{apiUser, []string{"BRPOP", handoff.Key, "1"}},
		{apiUser, []string{"CONFIG", "GET", "requirepass"}},
		{workerUser, []string{"GET", "agentwallet:ratelimit:x"}},
		{workerUser, []string{"LPUSH", "agentwallet:other", "x"}},
		{workerUser, []string{"INFO"}},
		{schedulerUser, []string{"LPUSH", handoff.Key, "x"}},
		{schedulerUser, []string{"GET", tasks.HeartbeatKey}},
		{schedulerUser, []string{"PUBLISH", payment.DecidedChannel, "x"}},
	} {
		if got := dryRun(ctx, admin, c.user, c.cmd...); got == "OK" {
			t.Errorf("%s may run %v", c.user, c.cmd)
		}
	}
}

// dryRun is Redis's answer to whether user may run cmd: "OK" or why not.
func dryRun(ctx context.Context, admin *redis.Client, user string, cmd ...string) string {
	args := []any{"ACL", "DRYRUN", user}
	for _, c := range cmd {
		args = append(args, c)
	}
	got, err := admin.Do(ctx, args...).Text()
	if err != nil {
		return err.Error()
	}
	return got
}

// aclLog describes the refusals Redis logged, or is empty.
func aclLog(t *testing.T, admin *redis.Client) string {
	t.Helper()
	entries, err := admin.ACLLog(context.Background(), 100).Result()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "\n  %s refused %s (%s, in %s) %d times", e.Username, e.Object, e.Reason, e.Context, e.Count)
	}
	return b.String()
}

func pgURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return pgtest.DefaultURL
}
