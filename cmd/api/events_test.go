package main

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// TestServe_ShutdownEndsEventStreamsAtOnce: the binary serves the
// dashboard's event stream through its http.Server, and a shutdown ends open
// streams at once (saying so) instead of waiting SHUTDOWN_TIMEOUT for them.
func TestServe_ShutdownEndsEventStreamsAtOnce(t *testing.T) {
	t.Parallel()
	_, redisURL := redistest.New(t)
	_, pub, _ := signer.GenerateMasterKey()
	db, dbURL := pgtest.NewWithURL(t)
	env := map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": redisURL, "WALLET_PUBLIC_KEY": pub,
		"HTTP_ADDR": "127.0.0.1:0", "LOG_LEVEL": "error", "SHUTDOWN_TIMEOUT": "20s",
	}
	ctx := context.Background()
	acct, err := auth.CreateAccount(ctx, db, solana.Devnet)
	if err != nil {
		t.Fatal(err)
	}
	address := "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"
	if _, err := auth.AddUser(ctx, db, acct.ID, address, auth.RoleViewer, "operator"); err != nil {
		t.Fatal(err)
	}
	sess, err := auth.StartSession(ctx, db, address, acct.ID)
	if err != nil {
		t.Fatal(err)
	}

	srvCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(srvCtx, func(k string) string { return env[k] }, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	var resp *http.Response
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest("GET", "http://"+addr+httpapi.EventsPath, nil)
		req.Header.Set("Cookie", "aw_session="+sess.Token)
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK || time.Now().After(deadline) {
			break
		}
		resp.Body.Close() // 503 until the hub listens
		time.Sleep(50 * time.Millisecond)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		r := bufio.NewScanner(resp.Body)
		for r.Scan() {
			lines <- r.Text()
		}
	}()

	start := time.Now()
	cancel()
	var got []string
	for l := range lines {
		got = append(got, l)
	}
	if !strings.Contains(strings.Join(got, "\n"), "event: close\ndata: {\"reason\":\"shutdown\"}") {
		t.Fatalf("the stream ended with %q", got)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve waited for the stream")
	}
	t.Logf("shut down with a stream open in %v", time.Since(start))
}
