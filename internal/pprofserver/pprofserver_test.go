package pprofserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The server answers the pprof index and a heap profile on the bound
// port, and stops with its context.
func TestServesProfilesUntilContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := Start(ctx, "127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string, error) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	if code, body, err := get("/debug/pprof/"); err != nil || code != 200 || !strings.Contains(body, "allocs") {
		t.Fatalf("index: %d %v %.100q", code, err, body)
	}
	if code, body, err := get("/debug/pprof/heap"); err != nil || code != 200 || len(body) == 0 {
		t.Fatalf("heap: %d %v", code, err)
	}
	if code, _, _ := get("/"); code != 404 {
		t.Fatalf("/ answered %d, want 404 (only /debug/pprof/ is served)", code)
	}
	cancel()
	for i := 0; ; i++ {
		if _, _, err := get("/debug/pprof/"); err != nil {
			break
		}
		if i > 200 {
			t.Fatal("still serving after its context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
