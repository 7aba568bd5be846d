package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/custody"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/keymaker"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/webhook"
	"github.com/agentwallet/agentwallet/internal/worker"
)

// slackSecret is the Slack app signing secret the test API trusts.
const slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// env is one API server over its own database, Redis DB and a localnet.
type env struct {
	t         testing.TB
	db        *bun.DB
	dbURL     string
	rdb       *redis.Client
	url       string
	ln        *localnettest.Localnet
	masterKey string // what the worker holds
	publicKey string // what the API holds
	key       string // a devnet account's API key
	account   auth.Account

	pgProxy, redisProxy *proxy // with envOpts.proxied
	log                 *slog.Logger
	sweeps              *payment.SweepGauge // counts the workers' sweeps, when set before startWorker
	nodes               []string            // envOpts.nodes

	// engine adjusts every engine newEngine makes (fee policy, caches), when set.
	engine func(*payment.Engine)
	// clock is envOpts.clock: the policy's clock of the API and of every
	// engine newEngine makes.
	clock func() time.Time
	// keepers is envOpts.keepers: the worker's HSM and KMS signers.
	keepers map[signer.Backend]signer.Keeper
	assets  asset.Table
}

type envOpts struct {
	ln       *localnettest.Localnet
	ops      httpapi.OpsConfig
	sendWait time.Duration
	limits   *ratelimit.Limits // nil: high enough never to matter
	// oneWindow holds the rate limiter's clock inside the current minute,
	// for a test whose counts take long enough on a slow machine to
	// straddle two windows (and does not read the reset header).
	oneWindow bool
	// proxied puts the API's Postgres and Redis behind proxies the test
	// can cut (env.pgProxy, env.redisProxy); the test's own e.db and e.rdb
	// (and the worker's) stay direct.
	proxied bool
	log     *slog.Logger // the API's and the worker's; nil: API discards, worker warns on stderr
	// strictMainnet vets the API's mainnet node as production does,
	// without SOLANA_LOCAL_CHAIN: the localnet is then of the wrong chain.
	strictMainnet bool
	// caps per account (0: the defaults)
	maxWallets, maxEndpoints int
	// publicChain serves as on devnet/mainnet: no faucet.
	publicChain bool
	// selfOrigin makes the API's DASHBOARD_ORIGIN its own URL (for a
	// browser), instead of dashboardOrigin.
	selfOrigin bool
	// nodes are the RPC nodes (URLs in front of ln) of the API and the
	// worker, vetted and watched as in production (local chain); nil:
	// ln's URL, unvetted.
	nodes []string
	// streams configures the event streams (zero: the defaults).
	streams httpapi.EventStreams
	// serverTimeouts, when set, are the http.Server's read and write
	// timeouts (cmd/api sets 30 s and 60 s).
	serverTimeouts time.Duration
	// clock, when set, is the time policy decisions and previews are made
	// at (payment.Engine.PolicyClock, httpapi.Deps.PolicyClock).
	clock func() time.Time
	// redis, when set, is how the API, the worker and the test reach
	// Redis (config.Redis.Open, as the binaries do: a Sentinel group);
	// nil: a Redis DB of their own on TEST_REDIS_URL's server.
	redis *config.Redis
	// keepers are the workers' HSM and KMS signers; walletSigner, when
	// set, is where the API has new wallets' keys made (through a worker).
	keepers      map[signer.Backend]signer.Keeper
	walletSigner signer.Backend
	// assets, when set, is the API's and the worker's table of assets
	// (nil: asset.Defaults()).
	assets asset.Table
}

// keys is the API's maker of new wallets' keys: a worker's keeper of
// walletSigner, or (nil) the envelope.
func (o envOpts) keys(db *bun.DB, rdb *redis.Client) signer.Maker {
	if o.walletSigner == "" || o.walletSigner == signer.Local {
		return nil
	}
	return &keymaker.Client{DB: db, Redis: rdb, Backend: o.walletSigner}
}

func newEnv(t testing.TB, opts ...envOpts) *env {
	t.Helper()
	var o envOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.ln == nil {
		o.ln = localnettest.Shared(t)
	}
	if o.limits == nil {
		o.limits = &ratelimit.Limits{Read: 1_000_000, Write: 1_000_000, Send: 1_000_000, Anonymous: 1_000_000}
	}
	e := &env{t: t, ln: o.ln, log: o.log, clock: o.clock, keepers: o.keepers, assets: o.assets}
	e.db, e.dbURL = pgtest.NewWithURL(t)
	var rdb *redis.Client
	var redisURL string
	var err error
	if o.redis != nil {
		if rdb, _, err = o.redis.Open(0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rdb.Close() })
	} else {
		rdb, redisURL = redistest.New(t)
	}
	e.rdb = rdb
	e.masterKey, e.publicKey, err = signer.GenerateMasterKey()
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := signer.NewSealer(e.publicKey)
	if err != nil {
		t.Fatal(err)
	}
	apiDB, apiRedis := e.db, rdb
	if o.redis != nil {
		var opt asynq.RedisConnOpt
		if apiRedis, opt, err = o.redis.Open(httpapi.RedisTimeout); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { apiRedis.Close() })
		if o.ops.RedisConnOpt == nil {
			o.ops.RedisConnOpt = opt
		}
	}
	if o.ops.RedisConnOpt == nil {
		opt, err := asynq.ParseRedisURI(redisURL)
		if err != nil {
			t.Fatal(err)
		}
		o.ops.RedisConnOpt = opt
	}
	if o.proxied {
		e.pgProxy, e.redisProxy = newProxy(t, pgHost(t, e.dbURL)), newProxy(t, rdb.Options().Addr)
		if apiDB, err = postgres.Open(e.pgProxy.via(e.dbURL)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { apiDB.Close() })
		if apiRedis, _, err = (config.Redis{URL: e.redisProxy.via(redisURL)}).Open(httpapi.RedisTimeout); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { apiRedis.Close() })
	}
	table := o.assets
	if table == nil {
		table = asset.Defaults()
	}
	balances := solana.Clients{
		solana.Devnet:  solana.NewClient(o.ln.URL, solana.Devnet, 0).WithTokens(table.Tokens(solana.Devnet)),
		solana.Mainnet: solana.NewClient(o.ln.URL, solana.Mainnet, 0).WithTokens(table.Tokens(solana.Mainnet)),
	}
	if e.nodes = o.nodes; o.nodes != nil {
		balances = solana.Clients{solana.Devnet: e.pool(solana.Devnet), solana.Mainnet: e.pool(solana.Mainnet)}
	}
	if o.strictMainnet {
		balances[solana.Mainnet].CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_MAINNET"})
		balances[solana.Mainnet].VerifyChain(context.Background())
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	origin := dashboardOrigin
	if o.selfOrigin {
		origin = "http://" + listener.Addr().String()
	}
	var faucet httpapi.Faucet = balances
	if o.publicChain {
		faucet = nil
	}
	draining := make(chan struct{})
	h, closeOps := httpapi.New(httpapi.Deps{
		Faucet: faucet,
		DB:     apiDB, Redis: apiRedis, Sealer: sealer, Keys: o.keys(apiDB, apiRedis), Exports: &keymaker.Client{DB: apiDB, Redis: apiRedis}, Log: o.log,
		Balances: balances,
		Ops:      o.ops, SendWait: o.sendWait, WebhookAllowPrivate: true,
		SlackSigningSecret: slackSecret, SlackResponseURLPrefix: "http://127.0.0.1:", RateLimits: o.limits, RateLimitClock: limitClock(o.oneWindow),
		MaxWallets: o.maxWallets, MaxWebhookEndpoints: o.maxEndpoints, DashboardOrigin: origin,
		EventStreams: o.streams, Draining: draining,
		PolicyClock: o.clock, Assets: o.assets,
	})
	srv := &httptest.Server{Listener: listener, Config: &http.Server{Handler: h, ReadTimeout: o.serverTimeouts, WriteTimeout: o.serverTimeouts}}
	srv.Start()
	// Streams end first: Close waits for every request.
	t.Cleanup(func() { close(draining); srv.Close(); closeOps() })
	e.url = srv.URL
	e.account, e.key = e.newAccount(solana.Devnet)
	return e
}

// pgHost is the host:port of a postgres:// URL.
func pgHost(t testing.TB, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func (e *env) newAccount(n solana.Network) (auth.Account, string) {
	e.t.Helper()
	ctx := context.Background()
	a, err := auth.CreateAccount(ctx, e.db, n)
	if err != nil {
		e.t.Fatal(err)
	}
	_, key, err := auth.CreateKey(ctx, e.db, a)
	if err != nil {
		e.t.Fatal(err)
	}
	return a, key
}

// with returns a copy of e reporting to t (fuzz targets must not use f).
func (e *env) with(t testing.TB) *env {
	c := *e
	c.t = t
	return &c
}

// do sends a request with key as bearer ("" for none) and returns status
// and decoded JSON body.
func (e *env) do(method, path, key string, body any) (int, map[string]any) {
	e.t.Helper()
	status, m, _ := e.doH(method, path, key, body)
	return status, m
}

// doH is do that also returns the answer's headers.
func (e *env) doH(method, path, key string, body any) (int, map[string]any, http.Header) {
	e.t.Helper()
	status, raw, h := e.request(method, path, key, body, nil)
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			e.t.Fatalf("%s %s: body is not a JSON object: %q", method, path, raw)
		}
	}
	return status, m, h
}

func (e *env) doRaw(method, path, key string, body any) (int, []byte) {
	e.t.Helper()
	status, raw, _ := e.request(method, path, key, body, nil)
	return status, raw
}

// request sends a request with key as bearer ("" for none) and the extra
// headers hdr, and returns status, raw body and headers.
func (e *env) request(method, path, key string, body any, hdr http.Header) (int, []byte, http.Header) {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.url+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); len(raw) > 0 && !strings.Contains(ct, "json") && !strings.Contains(ct, "yaml") && !strings.Contains(ct, "text/plain; version=0.0.4") && !strings.Contains(ct, "text/html") && !strings.Contains(ct, "openmetrics") {
		e.t.Fatalf("%s %s: content type %q", method, path, ct)
	}
	return resp.StatusCode, raw, resp.Header
}

// wantError checks a status and an {"error": ...} body containing want.
func wantError(t testing.TB, status int, body map[string]any, wantStatus int, want string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d (body %v)", status, wantStatus, body)
	}
	msg, ok := body["error"].(string)
	if !ok || !strings.Contains(msg, want) {
		t.Fatalf("body %v, want error containing %q", body, want)
	}
}

// countRows is how many rows table holds.
func (e *env) countRows(table string) int {
	e.t.Helper()
	n, err := e.db.NewSelect().Table(table).Count(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return int(n)
}

// wantRows fails the test unless table holds want rows.
func (e *env) wantRows(table string, want int) {
	e.t.Helper()
	if n := e.countRows(table); n != want {
		e.t.Fatalf("%d rows in %s, want %d", n, table, want)
	}
}

// newEngine is the worker's payment engine over the env's database,
// Redis, master key and localnet.
func (e *env) newEngine() *payment.Engine {
	e.t.Helper()
	ks, err := signer.NewKeystore(e.masterKey)
	if err != nil {
		e.t.Fatal(err)
	}
	eng := &payment.Engine{DB: e.db, Redis: e.rdb, Signer: &signer.Set{Local: ks, Keepers: e.keepers}, Nodes: map[solana.Network]payment.Node{}, Sweeps: e.sweeps, PolicyClock: e.clock, Assets: e.assets}
	for _, n := range []solana.Network{solana.Devnet, solana.Mainnet} {
		eng.Nodes[n] = payment.NewNode(e.ln.URL, n, 5*time.Second)
		if e.nodes != nil {
			eng.Nodes[n] = payment.NodeOf(e.pool(n))
		}
	}
	if e.engine != nil {
		e.engine(eng)
	}
	return eng
}

// pool is a client over the env's nodes, vetted at once and watched until
// the test ends, as cmd/api and cmd/worker do (local chain).
func (e *env) pool(n solana.Network) *solana.Client {
	c := solana.NewPoolClient(e.nodes, n, time.Second).
		CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_" + strings.ToUpper(string(n)), LocalChain: true})
	var wrong *solana.WrongChainError
	if err := c.VerifyChain(context.Background()); errors.As(err, &wrong) {
		e.t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	ctx, stop := context.WithCancel(context.Background())
	e.t.Cleanup(stop)
	go c.WatchChain(ctx, 30*time.Second, log, func(err error) { e.t.Errorf("wrong chain: %v", err) })
	return c
}

// startWorker runs the worker's asynq servers and its webhook dispatcher
// (without the scheduler: tests sweep confirmations themselves) and
// returns its engine and a stop func, also called at cleanup. opts may
// change the worker's options (tests shorten retry delays).
func (e *env) startWorker(opts ...func(*worker.Options)) (*payment.Engine, func()) {
	e.t.Helper()
	eng := e.newEngine()
	eng.Log = e.log
	if eng.Log == nil {
		eng.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	eng.RunBlockhashes(ctx)
	set := eng.Signer.(*signer.Set)
	keyWork := &keymaker.Server{DB: e.db, Redis: e.rdb, Signers: set, Seal: custody.Exporter(set.Local), Log: eng.Log}
	go keyWork.Run(ctx)
	hooks := &worker.Webhooks{
		Deliverer:  &webhook.Deliverer{DB: e.db, Keys: set.Local, AllowPrivate: true, Log: eng.Log},
		Dispatcher: &webhook.Dispatcher{DB: e.db, Enqueue: worker.EnqueueDelivery(e.rdb), Log: eng.Log},
	}
	go hooks.Dispatcher.Run(ctx, e.dbURL)
	o := worker.Options{Concurrency: 8, ShutdownTimeout: 5 * time.Second, Log: eng.Log}
	for _, f := range opts {
		f(&o)
	}
	stop, err := worker.Start(e.rdb, worker.NewMux(worker.Deps{DB: e.db, Redis: e.rdb, Payments: eng, Webhooks: hooks}), o)
	if err != nil {
		e.t.Fatal(err)
	}
	var once sync.Once
	halt := func() { once.Do(func() { stop(); cancel() }) }
	e.t.Cleanup(halt)
	return eng, halt
}

// retryFast is a worker option: failed tasks are retried 10 ms apart
// instead of on their schedule, for tests of what a retry does.
func retryFast(o *worker.Options) {
	o.DelayedTaskCheckInterval = 20 * time.Millisecond
	o.RetryDelay = func(int, error, *asynq.Task) time.Duration { return 10 * time.Millisecond }
}

// retryFastRecording is retryFast that also appends to asked, under mu,
// the delay the schedule sets before each retry of a webhook delivery.
func retryFastRecording(mu *sync.Mutex, asked *[]time.Duration) func(*worker.Options) {
	return func(o *worker.Options) {
		retryFast(o)
		fast := o.RetryDelay
		o.RetryDelay = func(n int, err error, task *asynq.Task) time.Duration {
			if task.Type() == tasks.TypeWebhookDeliver {
				mu.Lock()
				*asked = append(*asked, worker.RetryDelay(n, err, task))
				mu.Unlock()
			}
			return fast(n, err, task)
		}
	}
}

// concurrently runs n calls of do at once and counts the 201s; any answer
// but 201 and 409 fails the test.
func concurrently(t testing.TB, n int, do func(i int) int) (created int) {
	t.Helper()
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range statuses {
		wg.Go(func() { statuses[i] = do(i) })
	}
	wg.Wait()
	for _, s := range statuses {
		switch s {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			t.Fatalf("statuses %v", statuses)
		}
	}
	return created
}

// tally runs n calls of do at once and counts their answers by the name
// classify gives each; an answer it names "" is counted under its status
// and body, so that the counts show it. classify runs under a lock: it may
// collect from the bodies.
// retried is do retried, as a client would, while it answers a 503 that
// gives no reason: such a 503 changed nothing and says to try again
// (authentication not answered in time, a decision not made in time and
// cancelled). A burst on a loaded machine meets some; the invariant under
// test is about what runs. A 503 with a reason (fee_payer_budget_exceeded)
// is an answer, not retried.
func retried(do func(i int) (int, map[string]any)) func(i int) (int, map[string]any) {
	return func(i int) (int, map[string]any) {
		status, body := do(i)
		for try := 1; status == http.StatusServiceUnavailable && body["reason"] == nil && try <= 5; try++ {
			time.Sleep(time.Duration(try) * 200 * time.Millisecond)
			status, body = do(i)
		}
		return status, body
	}
}

func tally(n int, do func(i int) (int, map[string]any), classify func(status int, body map[string]any) string) map[string]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for i := range n {
		wg.Go(func() {
			status, body := do(i)
			mu.Lock()
			defer mu.Unlock()
			name := classify(status, body)
			if name == "" {
				name = fmt.Sprintf("%d %v", status, body)
			}
			counts[name]++
		})
	}
	wg.Wait()
	return counts
}

// dashboardOrigin is the test API's DASHBOARD_ORIGIN: plain-http loopback,
// so its session cookie is aw_session.
const dashboardOrigin = "http://127.0.0.1:8080"

// addUser makes address a user of the env's account with role.
func (e *env) addUser(address string, role auth.Role) {
	e.t.Helper()
	if _, err := auth.AddUser(context.Background(), e.db, e.account.ID, address, role, "operator"); err != nil {
		e.t.Fatal(err)
	}
}

// session makes a dashboard user of the env's account with role and signs
// it in directly; the headers authenticate its requests (cookie, CSRF
// token, origin). It returns the user's address too.
func (e *env) session(role auth.Role) (http.Header, string) {
	e.t.Helper()
	address := newAddress()
	e.addUser(address, role)
	return e.sessionOf(address), address
}

// sessionOf signs in user address of the env's account directly.
func (e *env) sessionOf(address string) http.Header {
	e.t.Helper()
	s, err := auth.StartSession(context.Background(), e.db, address, e.account.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return http.Header{"Cookie": {"aw_session=" + s.Token}, "X-Csrf-Token": {s.CSRFToken}, "Origin": {dashboardOrigin}}
}

// limitClock is the rate limiter's clock of an env: time.Now, or with
// oneWindow an instant in the middle of the current minute that stays.
func limitClock(oneWindow bool) func() time.Time {
	if !oneWindow {
		return nil
	}
	held := time.Now().Truncate(ratelimit.Window).Add(ratelimit.Window / 2)
	return func() time.Time { return held }
}
