package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/waitfor"
)

// The binary's own path: migrate an empty database, bootstrap an account,
// serve, and call the API with the printed key; then shut down on cancel.
func TestMigrateBootstrapServe(t *testing.T) {
	t.Parallel()
	_, redisURL := redistest.New(t)
	_, pub, _ := signer.GenerateMasterKey()
	env := map[string]string{
		"DATABASE_URL":      pgtest.NewURL(t, false),
		"REDIS_URL":         redisURL,
		"WALLET_PUBLIC_KEY": pub,
		"HTTP_ADDR":         "127.0.0.1:0",
		"LOG_LEVEL":         "error",
	}
	getenv := func(k string) string { return env[k] }
	ctx := context.Background()
	var out bytes.Buffer

	steps := [][]string{{"migrate", "up"}, {"migrate", "status"}, {"migrate", "down"}, {"migrate", "up"}, {"migrate", "up"}}
	for _, args := range steps {
		out.Reset()
		if err := run(ctx, args, getenv, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	if !strings.Contains(out.String(), "up to date") {
		t.Fatalf("second up: %q", out.String())
	}

	out.Reset()
	if err := run(ctx, []string{"bootstrap", "--network", "devnet", "--quiet"}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(out.String())
	if !strings.HasPrefix(key, "svc_test_") || strings.Contains(key, "\n") {
		t.Fatalf("bootstrap printed %q", key)
	}
	if err := run(ctx, []string{"bootstrap", "--network", "moon"}, getenv, &out); err == nil {
		t.Fatal("bootstrap accepted network moon")
	}

	addr, stop := startServe(t, env)
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/public/v1/agents", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body["agents"].([]any)) != 0 {
		t.Fatalf("GET /agents: %d %v", resp.StatusCode, body)
	}
	stop()
}

// startServe serves with env until stop, which fails the test unless the
// server shuts down cleanly within waitfor.Bound. It returns the bound
// address.
func startServe(t *testing.T, env map[string]string) (addr string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, func(k string) string { return env[k] }, ready) }()
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	return addr, func() {
		t.Helper()
		cancel()
		waitfor.Returned(t, "serve to shut down", done)
	}
}

func TestServeRefusesBadConfig(t *testing.T) {
	t.Parallel()
	err := serve(context.Background(), func(k string) string {
		if k == "WALLET_PUBLIC_KEY" {
			return "short"
		}
		return ""
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "WALLET_PUBLIC_KEY") {
		t.Fatalf("err %v, want one naming WALLET_PUBLIC_KEY", err)
	}
}
