package redistest

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewServer starts a redis-server of the test's own on a free loopback
// port, with args added to its command line (e.g. "--requirepass", pw),
// and returns its host:port; the server is killed when the test ends. It
// skips the test when redis-server is not installed.
func NewServer(t testing.TB, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redistest: redis-server is not installed (Debian package redis-server)")
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	host, port, _ := net.SplitHostPort(addr)
	log := filepath.Join(dir, "redis.log")
	cmd := exec.Command(bin, append([]string{"--port", port, "--bind", host, "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", log}, args...)...)
	cmd.Dir = dir
	var out bytes.Buffer // a refused option is printed, not logged
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("redistest: start redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	// Up once it answers anything, NOAUTH included.
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		var reply redis.Error
		if err == nil || errors.As(err, &reply) {
			return addr
		}
		select {
		case <-exited:
			raw, _ := os.ReadFile(log)
			t.Fatalf("redistest: redis-server exited:\n%s%s", out.String(), raw)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: redis-server at %s does not answer: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
