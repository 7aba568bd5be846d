package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name a Sentinel group monitors its master under.
const MasterName = "agentwallet"

// Sentinel is a Redis primary, one replica of it and three sentinels
// watching them (quorum 2, a master is down after 1 s), each a
// redis-server process of its own in a temporary directory, killed when
// the test ends. Its methods are for one goroutine at a time.
type Sentinel struct {
	// Addrs are the sentinels' host:port (REDIS_SENTINELS).
	Addrs []string
	// Primary and Replica are the two servers' host:port; after a
	// failover Replica is the master.
	Primary, Replica string

	t      testing.TB
	dir    string
	procs  map[string]*exec.Cmd // by name: primary, replica, sentinel-N
	opened []interface{ Close() error }
}

// NewSentinel starts a Sentinel group and returns once the replica has
// synced and every sentinel names the primary as master. It skips the
// test when redis-server (Debian's redis-server package) is not installed.
func NewSentinel(t testing.TB) *Sentinel {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redistest: redis-server is not installed (Debian package redis-server); the Sentinel tests need it")
	}
	s := &Sentinel{t: t, dir: t.TempDir(), procs: map[string]*exec.Cmd{}}
	t.Cleanup(s.stop)
	s.Primary, s.Replica = freeAddr(t), freeAddr(t)
	_, primaryPort, _ := net.SplitHostPort(s.Primary)
	server := func(name, addr string, extra ...string) {
		host, port, _ := net.SplitHostPort(addr)
		args := append([]string{"--port", port, "--bind", host, "--save", "", "--appendonly", "no",
			"--dir", s.dir, "--logfile", filepath.Join(s.dir, name+".log"),
			// A replica syncs at once, not after the default 5 s wait.
			"--repl-diskless-sync-delay", "0"}, extra...)
		s.start(name, addr, exec.Command(bin, args...))
	}
	server("primary", s.Primary)
	server("replica", s.Replica, "--replicaof", "127.0.0.1", primaryPort)
	// The sentinels find the replica in the primary's INFO, which they
	// read at once and then every 10 s: start them after it has synced.
	s.waitFor("the replica's sync", 20*time.Second, func(ctx context.Context) bool {
		info, _ := s.client(s.Replica).Info(ctx, "replication").Result()
		return strings.Contains(info, "master_link_status:up")
	})
	for i := range 3 {
		addr := freeAddr(t)
		host, port, _ := net.SplitHostPort(addr)
		conf := filepath.Join(s.dir, fmt.Sprintf("sentinel-%d.conf", i))
		// Sentinel rewrites its file (what it learns of the others), so
		// each has its own.
		text := fmt.Sprintf("port %s\nbind %s\ndir %s\nlogfile %s\n"+
			"sentinel monitor %s 127.0.0.1 %s 2\n"+
			"sentinel down-after-milliseconds %[5]s 1000\n"+
			"sentinel failover-timeout %[5]s 3000\n"+
			"sentinel parallel-syncs %[5]s 1\n",
			port, host, s.dir, filepath.Join(s.dir, fmt.Sprintf("sentinel-%d.log", i)), MasterName, primaryPort)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		s.start(fmt.Sprintf("sentinel-%d", i), addr, exec.Command(bin, conf, "--sentinel"))
		s.Addrs = append(s.Addrs, addr)
	}
	for _, a := range s.Addrs {
		s.waitFor("sentinel "+a+" to name the primary", 20*time.Second, func(ctx context.Context) bool {
			got, _ := s.sentinel(a).GetMasterAddrByName(ctx, MasterName).Result()
			return len(got) == 2 && net.JoinHostPort(got[0], got[1]) == s.Primary
		})
	}
	return s
}

// WaitQuorum waits until the sentinels could fail the primary over: each
// knows the other two and the replica, and they have a quorum.
func (s *Sentinel) WaitQuorum() {
	s.t.Helper()
	for _, a := range s.Addrs {
		s.waitFor("sentinel "+a+" to know its peers and the replica", 30*time.Second, func(ctx context.Context) bool {
			c := s.sentinel(a)
			peers, err := c.Sentinels(ctx, MasterName).Result()
			if err != nil || len(peers) != 2 {
				return false
			}
			replicas, err := c.Replicas(ctx, MasterName).Result()
			if err != nil || len(replicas) != 1 || replicas[0]["flags"] != "slave" {
				return false
			}
			return c.CkQuorum(ctx, MasterName).Err() == nil
		})
	}
}

// KillPrimary SIGKILLs the primary, once WaitQuorum holds.
func (s *Sentinel) KillPrimary() {
	s.t.Helper()
	s.WaitQuorum()
	p := s.procs["primary"]
	if err := p.Process.Kill(); err != nil {
		s.t.Fatalf("redistest: kill the primary: %v", err)
	}
	_ = p.Wait()
	delete(s.procs, "primary")
}

// WaitPromoted waits until every sentinel names the replica as master
// and the replica serves as one, and returns how long that took.
func (s *Sentinel) WaitPromoted(timeout time.Duration) time.Duration {
	s.t.Helper()
	start := time.Now()
	s.waitFor("the sentinels to promote the replica", timeout, func(ctx context.Context) bool {
		for _, a := range s.Addrs {
			got, _ := s.sentinel(a).GetMasterAddrByName(ctx, MasterName).Result()
			if len(got) != 2 || net.JoinHostPort(got[0], got[1]) != s.Replica {
				return false
			}
		}
		info, _ := s.client(s.Replica).Info(ctx, "replication").Result()
		return strings.Contains(info, "role:master")
	})
	return time.Since(start)
}

// Logs returns the tail of each process's log, for a failure's message.
func (s *Sentinel) Logs() string {
	var b strings.Builder
	names, _ := filepath.Glob(filepath.Join(s.dir, "*.log"))
	for _, n := range names {
		raw, _ := os.ReadFile(n)
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		lines = lines[max(0, len(lines)-15):]
		fmt.Fprintf(&b, "--- %s\n%s\n", filepath.Base(n), strings.Join(lines, "\n"))
	}
	return b.String()
}

func (s *Sentinel) start(name, addr string, cmd *exec.Cmd) {
	s.t.Helper()
	cmd.Dir = s.dir
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("redistest: start %s: %v", name, err)
	}
	s.procs[name] = cmd
	s.waitFor(name+" at "+addr+" to answer", 10*time.Second, func(ctx context.Context) bool {
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer c.Close()
		return c.Ping(ctx).Err() == nil
	})
}

func (s *Sentinel) stop() {
	if s.t.Failed() {
		s.t.Logf("redistest: Sentinel group's logs:\n%s", s.Logs())
	}
	for _, p := range s.procs {
		_ = p.Process.Kill()
		_ = p.Wait()
	}
}

// client is a short-lived client of one server; waitFor closes it.
func (s *Sentinel) client(addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	s.opened = append(s.opened, c)
	return c
}

// sentinel is a short-lived client of one sentinel; waitFor closes it.
func (s *Sentinel) sentinel(addr string) *redis.SentinelClient {
	c := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	s.opened = append(s.opened, c)
	return c
}

// waitFor polls ok every 50 ms until it holds, failing the test after
// timeout.
func (s *Sentinel) waitFor(what string, timeout time.Duration, ok func(context.Context) bool) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		done := ok(ctx)
		cancel()
		for _, c := range s.opened {
			c.Close()
		}
		s.opened = nil
		if done {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redistest: waited %s for %s\n%s", timeout, what, s.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
