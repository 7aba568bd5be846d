package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// StackOptions says what Start runs.
type StackOptions struct {
	APIs, Workers     int // processes of each (at least 1)
	WorkerConcurrency int // WORKER_CONCURRENCY of each worker
	// Private starts a PostgreSQL and a Redis of the stack's own under a
	// temporary directory, so their CPU is the stack's alone; otherwise
	// the test servers (TEST_DATABASE_URL, TEST_REDIS_URL) are used and
	// their CPU is not measured.
	Private bool
	// Pprof starts the api and the worker with PPROF_ADDR=127.0.0.1:0.
	Pprof bool
	// Race builds the binaries with the race detector (tests: the test
	// binary's packages are then already compiled so).
	Race bool
	// PGStatements loads pg_stat_statements into the private PostgreSQL
	// (statements per send, for the profiles).
	PGStatements bool
	// Explain loads auto_explain into the private PostgreSQL, off until
	// a session of the benchmark turns it on.
	Explain bool
	// PGSettings are more settings of the private PostgreSQL ("name=value").
	PGSettings []string
	// Scheduler also runs cmd/scheduler: the periodic confirmation sweeps
	// that broadcast again what a killed worker signed but never sent.
	Scheduler bool
	// Slot is the localnet's slot time (zero: the tests' 100 ms).
	Slot time.Duration
	// WorkerRPC, when set, gives the URL the workers call the chain at
	// for the localnet's url: a proxy in front of it that counts their
	// calls. The apis call the localnet itself.
	WorkerRPC func(url string) string
}

// Stack is the service as deployed: the cmd/api and cmd/worker binaries as
// child processes, configured by environment, over one PostgreSQL and
// one Redis, against a localnet.
type Stack struct {
	Localnet    *localnettest.Localnet
	DatabaseURL string
	RedisURL    string
	APIs        []*Service
	Workers     []*Service
	// Procs is every process whose CPU is measured.
	Procs []Proc
	Bin   string // directory of the built binaries
	dir   string
	pg    *pgServer // the private PostgreSQL (Private)
}

// Service is one api or worker process.
type Service struct {
	Proc
	URL   string // the api's base URL (http://127.0.0.1:port)
	Pprof string // host:port of its pprof server, with Pprof
	Log   string // its stderr and stdout
	cmd   *exec.Cmd
}

// soak skips t unless SOAK is set (make soak): the multi-process runs
// take minutes of both cores, more than the everyday suite can spend.
func soak(t *testing.T) {
	t.Helper()
	if os.Getenv("SOAK") == "" {
		t.Skip("a soak of the whole stack: make soak runs it")
	}
}

// StartStack builds and starts the stack; everything stops at cleanup.
func StartStack(t testing.TB, o StackOptions) *Stack {
	t.Helper()
	o.APIs, o.Workers = max(o.APIs, 1), max(o.Workers, 1)
	if o.WorkerConcurrency <= 0 {
		o.WorkerConcurrency = 10
	}
	root, err := localnettest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	s := &Stack{dir: t.TempDir()}
	// A failed test shows what the services logged last (their logs go
	// with the directory).
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, sv := range append(append([]*Service{}, s.APIs...), s.Workers...) {
			t.Logf("--- %s log (last lines):\n%s", sv.Name, tail(sv.Log, 25))
		}
	})
	s.Bin = filepath.Join(s.dir, "bin")
	args := []string{"build"}
	if o.Race {
		args = append(args, "-race")
	}
	args = append(args, "-o", s.Bin+"/", "./cmd/api", "./cmd/worker", "./cmd/scheduler")
	build := exec.Command("go", args...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	if o.Private {
		var redisPID int
		s.pg = startPostgres(t, s.dir, o)
		s.DatabaseURL = s.pg.base + "/agentwallet?sslmode=disable"
		s.RedisURL, redisPID = startRedis(t, s.dir)
		s.Procs = append(s.Procs, Proc{Role: "postgres", Name: "postgres", PID: s.pg.cmd.Process.Pid}, Proc{Role: "redis", Name: "redis", PID: redisPID})
		migrate := exec.Command(filepath.Join(s.Bin, "api"), "migrate", "up")
		migrate.Env = []string{"DATABASE_URL=" + s.DatabaseURL, "REDIS_URL=" + s.RedisURL, "PATH=" + os.Getenv("PATH")}
		if out, err := migrate.CombinedOutput(); err != nil {
			t.Fatalf("api migrate up: %v\n%s", err, out)
		}
	} else {
		s.DatabaseURL = pgtest.NewURL(t, true)
		_, s.RedisURL = redistest.New(t)
	}
	if o.Slot > 0 {
		s.Localnet = localnettest.StartSlots(t, o.Slot)
	} else {
		s.Localnet = localnettest.Start(t)
	}
	s.Procs = append(s.Procs, Proc{Role: "localnet", Name: "localnet", PID: s.Localnet.PID},
		Proc{Role: "client", Name: "client", PID: os.Getpid(), self: true})

	priv, pub, err := signer.GenerateMasterKey()
	if err != nil {
		t.Fatal(err)
	}
	common := []string{
		"PATH=" + os.Getenv("PATH"),
		"DATABASE_URL=" + s.DatabaseURL, "REDIS_URL=" + s.RedisURL, "LOG_LEVEL=info",
		"SOLANA_RPC_URL_DEVNET=" + s.Localnet.URL, "SOLANA_RPC_URL_MAINNET=" + s.Localnet.URL, "SOLANA_LOCAL_CHAIN=true",
		"SHUTDOWN_TIMEOUT=10s",
	}
	if o.Pprof {
		common = append(common, "PPROF_ADDR=127.0.0.1:0")
	}
	workerCommon := common
	if o.WorkerRPC != nil {
		rpcURL := o.WorkerRPC(s.Localnet.URL)
		workerCommon = append(append([]string{}, common...), "SOLANA_RPC_URL_DEVNET="+rpcURL, "SOLANA_RPC_URL_MAINNET="+rpcURL)
	}
	for i := range o.Workers {
		env := append(append([]string{}, workerCommon...), "WALLET_MASTER_KEY="+priv, "WORKER_CONCURRENCY="+strconv.Itoa(o.WorkerConcurrency))
		s.Workers = append(s.Workers, s.start(t, "worker", i+1, env, o.Pprof))
	}
	for i := range o.APIs {
		env := append(append([]string{}, common...), "WALLET_PUBLIC_KEY="+pub, "HTTP_ADDR=127.0.0.1:0",
			// The benchmark measures cost, not the per-key limits.
			"RATE_LIMIT_READ=1000000", "RATE_LIMIT_WRITE=1000000", "RATE_LIMIT_SEND=1000000", "RATE_LIMIT_ANONYMOUS=1000000")
		s.APIs = append(s.APIs, s.start(t, "api", i+1, env, o.Pprof))
	}
	if o.Scheduler {
		s.Procs = append(s.Procs, s.start(t, "scheduler", 1, common, false).Proc)
	}
	for _, sv := range append(append([]*Service{}, s.APIs...), s.Workers...) {
		s.Procs = append(s.Procs, sv.Proc)
	}
	return s
}

// start runs bin/<role> serve with env, its output in a log file, and
// waits for its ready line (the api's bound address, the worker's start).
func (s *Stack) start(t testing.TB, role string, n int, env []string, pprof bool) *Service {
	t.Helper()
	name := fmt.Sprintf("%s-%d", role, n)
	sv := &Service{Proc: Proc{Role: role, Name: name}, Log: filepath.Join(s.dir, name+".log")}
	logf, err := os.Create(sv.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(s.Bin, role), "serve")
	cmd.Env = env
	// Straight to a file, as a deployment's log collector would read it:
	// the writes cost the service, not the benchmark.
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	exited := runChild(t, cmd, syscall.SIGTERM, 15*time.Second)
	sv.cmd, sv.PID = cmd, cmd.Process.Pid

	readyMsg := map[string]string{"api": "api listening", "worker": "worker started", "scheduler": "scheduler started"}[role]
	deadline := time.Now().Add(90 * time.Second)
	for {
		ready, pprofAddr, apiAddr := scanLog(sv.Log, readyMsg)
		if ready && (!pprof || pprofAddr != "") {
			sv.Pprof = pprofAddr
			if apiAddr != "" {
				sv.URL = "http://" + apiAddr
			}
			return sv
		}
		select {
		case <-exited:
			t.Fatalf("%s exited during start-up:\n%s", name, tail(sv.Log, 30))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s printed no %q in 90 s:\n%s", name, readyMsg, tail(sv.Log, 30))
		}
	}
}

// scanLog reads a JSON log for the ready message and the bound addresses
// the api and pprof servers log.
func scanLog(path, readyMsg string) (ready bool, pprofAddr, apiAddr string) {
	f, err := os.Open(path)
	if err != nil {
		return false, "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Msg {
		case "pprof listening":
			pprofAddr = line.Addr
		case readyMsg:
			ready = true
			if line.Msg == "api listening" {
				apiAddr = line.Addr
			}
		}
	}
	return ready, pprofAddr, apiAddr
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// NewKey makes an account on devnet and an admin key of it, straight in
// the database (as `api bootstrap` does).
func (s *Stack) NewKey(t testing.TB) string {
	t.Helper()
	db, err := postgres.Open(s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	acct, err := auth.CreateAccount(ctx, db, solana.Devnet)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := auth.CreateKey(ctx, db, acct)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// fundedPayers creates n agent wallets through api, spread over its
// APIs, under limits that never bind, and gives each 10 SOL and funding;
// it returns their ids and public keys.
func (s *Stack) fundedPayers(t testing.TB, api *client, n int, funding money.Micros[money.USD]) (wallets, pubkeys []string) {
	t.Helper()
	wallets, pubkeys = make([]string, n), make([]string, n)
	for i := range n {
		status, a, err := api.do(i, "POST", "/api/public/v1/agents", map[string]any{"label": fmt.Sprint("payer ", i),
			"policy": map[string]any{"daily_limit_usdc": 1_000_000, "max_tx_usdc": 1_000_000, "approval_threshold_usdc": 1_000_000}}, nil)
		if err != nil || status != 201 {
			t.Fatalf("create agent: %d %v %v", status, a, err)
		}
		wallets[i], pubkeys[i] = a["id"].(string), a["pubkey"].(string)
		s.Localnet.SetLamports(t, pubkeys[i], 10*solana.LamportsPerSOL)
		s.Localnet.SetTokenBalance(t, pubkeys[i], solana.DevnetUSDCMint.String(), uint64(funding))
	}
	return wallets, pubkeys
}

// runChild starts cmd and stops it at cleanup: stop, then SIGKILL after
// grace. The channel closes when it has exited.
func runChild(t testing.TB, cmd *exec.Cmd, stop os.Signal, grace time.Duration) <-chan struct{} {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(stop)
		select {
		case <-exited:
		case <-time.After(grace):
			cmd.Process.Kill()
			<-exited
		}
	})
	return exited
}

// freePort is a TCP port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// pgBin finds a PostgreSQL program: on PATH, else in Debian's directories.
func pgBin(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name); len(m) > 0 {
		return m[len(m)-1]
	}
	t.Fatalf("%s not found (PATH or /usr/lib/postgresql/*/bin)", name)
	return ""
}

// pgServer is a private PostgreSQL: its data directory and how it runs,
// so that it can be crashed and started again on the same data.
type pgServer struct {
	dir, logPath string
	args         []string
	cred         *syscall.Credential
	base         string // postgres://postgres@127.0.0.1:port
	cmd          *exec.Cmd
	exited       <-chan struct{}
}

// startPostgres runs a private PostgreSQL (the server's defaults, more
// connections) under dir. PostgreSQL refuses to run as root: then it runs
// as user postgres.
func startPostgres(t testing.TB, dir string, o StackOptions) *pgServer {
	t.Helper()
	// Under /tmp (world-searchable), not the test's 0700 directory, so the
	// postgres user reaches it.
	pgdir, err := os.MkdirTemp("", "agentwallet-bench-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(pgdir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs a postgres user to run PostgreSQL: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(pgdir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(pgdir, "data")
	initdb := exec.Command(pgBin(t, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync")
	initdb.Dir = pgdir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port := freePort(t)
	args := []string{"-D", data, "-p", strconv.Itoa(port), "-k", pgdir, "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300"}
	var preload []string
	if o.PGStatements {
		preload = append(preload, "pg_stat_statements")
		args = append(args, "-c", "pg_stat_statements.track=all", "-c", "pg_stat_statements.track_planning=on")
	}
	if o.Explain {
		// Its settings stay at their defaults (off): a -c here would
		// outrank the ALTER SYSTEM that turns it on.
		preload = append(preload, "auto_explain")
	}
	if len(preload) > 0 {
		args = append(args, "-c", "shared_preload_libraries="+strings.Join(preload, ","))
	}
	for _, kv := range o.PGSettings {
		args = append(args, "-c", kv)
	}
	pg := &pgServer{dir: pgdir, logPath: filepath.Join(dir, "postgres.log"), args: args, cred: cred,
		base: fmt.Sprintf("postgres://postgres@127.0.0.1:%d", port)}
	pg.start(t)
	return pg
}

// start runs the server on its data and waits until it accepts
// connections (after crash recovery, when it crashed).
func (pg *pgServer) start(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(pg.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	pg.cmd = exec.Command(pgBin(t, "postgres"), pg.args...)
	pg.cmd.Dir = pg.dir
	pg.cmd.Stdout, pg.cmd.Stderr = logf, logf
	pg.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred, Pdeathsig: syscall.SIGKILL}
	pg.exited = runChild(t, pg.cmd, syscall.SIGINT, 15*time.Second) // SIGINT: fast shutdown
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, pg.base+"/postgres?sslmode=disable")
		cancel()
		if err == nil {
			c.Close(context.Background())
			return
		}
		select {
		case <-pg.exited:
			t.Fatalf("postgres exited:\n%s", tail(pg.logPath, 20))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("postgres not ready in 60 s: %v\n%s", err, tail(pg.logPath, 20))
		}
	}
}

// crash stops the server as a crash does: SIGQUIT, its immediate
// shutdown (no checkpoint; what its WAL buffers held and no commit
// flushed is lost), then starts it again, which recovers from the WAL.
func (pg *pgServer) crash(t testing.TB) {
	t.Helper()
	if err := pg.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-pg.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("postgres did not stop on SIGQUIT")
	}
	pg.start(t)
	if log, err := os.ReadFile(pg.logPath); err != nil || !strings.Contains(string(log), "automatic recovery in progress") {
		t.Fatalf("postgres started again without crash recovery (%v):\n%s", err, tail(pg.logPath, 20))
	}
}

// CrashPostgres crashes the stack's private PostgreSQL and starts it again
// on the same data (Private only). Its CPU is no longer measured.
func (s *Stack) CrashPostgres(t testing.TB) {
	t.Helper()
	if s.pg == nil {
		t.Fatal("CrashPostgres needs a Private stack")
	}
	s.pg.crash(t)
}

// startRedis runs a private Redis (no persistence) and returns its URL and
// pid.
func startRedis(t testing.TB, dir string) (string, int) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not found")
	}
	port := freePort(t)
	logPath := filepath.Join(dir, "redis.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	exited := runChild(t, cmd, syscall.SIGTERM, 10*time.Second)
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	opts, _ := redis.ParseURL(url)
	c := redis.NewClient(opts)
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		select {
		case <-exited:
			t.Fatalf("redis exited:\n%s", tail(logPath, 20))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis not ready in 30 s:\n%s", tail(logPath, 20))
		}
	}
	return url, cmd.Process.Pid
}

// client calls the stack's APIs with one key, spreading calls over the
// api processes round robin by a caller's index.
type client struct {
	http *http.Client
	key  string
	urls []string
}

func (s *Stack) client(key string, conns int) *client {
	c := &client{key: key, http: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: conns}}}
	for _, a := range s.APIs {
		c.urls = append(c.urls, a.URL)
	}
	return c
}

// do calls api number i (mod the count) and decodes a JSON answer.
func (c *client) do(i int, method, path string, body any, header map[string]string) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, c.urls[i%len(c.urls)]+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, nil
}
