package httpapi_test

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mr-tron/base58"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

// The dashboard in a real browser: this starts the service (API with the
// embedded app, worker, localnet) and runs web/dashboard's browser tests
// (node --test, playwright-core driving Debian's Chromium) against it.
// make test builds the app and installs Chromium first.
//
// One file at a time: two browsers side by side, each against a service
// of its own, took a minute and a half less on a warm build, but on a
// fresh machine, beside the other packages' tests, their pages met 503s.
// The walk through every page runs last.
func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for file, fix := range map[string]string{
		"/usr/bin/chromium": "scripts/browser-deps.sh (make test runs it)",
		filepath.Join(root, "internal/dashboard/dist/app/index.html"):     "make dashboard (make test runs it)",
		filepath.Join(root, "web/dashboard/node_modules/playwright-core"): "make dashboard",
	} {
		if _, err := os.Stat(file); err != nil {
			t.Fatalf("%s is missing: run %s", file, fix)
		}
	}
	// DASHBOARD_TESTS (a regular expression on the file names) runs some
	// of them.
	files, err := filepath.Glob(filepath.Join(root, "web/dashboard/test/*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no browser test files: %v", err)
	}
	only := regexp.MustCompile(os.Getenv("DASHBOARD_TESTS"))
	var pages, walk []string
	for _, f := range files {
		switch {
		case !only.MatchString(filepath.Base(f)):
		case filepath.Base(f) == "walk.test.mjs":
			walk = append(walk, f)
		default:
			pages = append(pages, f)
		}
	}
	// The pages and the walk run at once, each against a service of its
	// own: the walk needs the scheduler's sweeps running, the pages want
	// statuses to hold still. One after the other they took twice as long.
	for _, g := range []struct {
		name  string
		files []string
	}{{"pages", pages}, {"walk", walk}} {
		if len(g.files) > 0 {
			t.Run(g.name, func(t *testing.T) {
				t.Parallel()
				runInBrowser(t, root, g.files, g.name == "walk")
			})
		}
	}
}

// runInBrowser starts a service of its own and runs the browser test
// files, one at a time; for the walk with the scheduler's sweeps and
// deposit scans running.
func runInBrowser(t *testing.T, root string, files []string, walk bool) {
	// Its own localnet: the pages' tests take the node down (the overview's
	// "unavailable" balances), which must not reach the package's other
	// tests on the shared one.
	// The API's warnings (a 503's cause) reach the test's output.
	e := newEnv(t, envOpts{selfOrigin: true, ln: localnettest.Start(t),
		log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	eng, _ := e.startWorker()
	walletID, _ := e.agent(map[string]any{"approval_threshold_usdc": 1}, 50_000_000)
	_, agentKey := e.agentKey()
	seeds := map[string]auth.Role{"OWNER_SEED": auth.RoleOwner, "APPROVER_SEED": auth.RoleApprover, "VIEWER_SEED": auth.RoleViewer, "STRANGER_SEED": ""}
	// A seller built with the official x402 packages, for the x402 page test.
	seller := x402test.Start(t, e.ln.URL, x402test.Options{})
	env := append(os.Environ(), "DASHBOARD_URL="+e.url, "AGENT_KEY="+agentKey, "ADMIN_KEY="+e.key,
		"WALLET_ID="+walletID, "RPC_URL="+e.ln.URL, "SELLER_URL="+seller.URL)
	for name, role := range seeds {
		seed := make([]byte, ed25519.SeedSize)
		copy(seed, name)
		priv := ed25519.NewKeyFromSeed(seed)
		address := base58.Encode(priv.Public().(ed25519.PublicKey))
		if role != "" {
			e.addUser(address, role)
		}
		env = append(env, name+"="+hex.EncodeToString(seed))
	}
	// The walk's own account, which it fills as a team would, so its
	// screenshots (docs/screenshots) show a plausible account.
	demo, demoKey := e.newAccount(solana.Devnet)
	demoSeed := make([]byte, ed25519.SeedSize)
	copy(demoSeed, "DEMO_SEED")
	demoAddr := base58.Encode(ed25519.NewKeyFromSeed(demoSeed).Public().(ed25519.PublicKey))
	if _, err := auth.AddUser(context.Background(), e.db, demo.ID, demoAddr, auth.RoleOwner, "operator"); err != nil {
		t.Fatal(err)
	}
	env = append(env, "DEMO_SEED="+hex.EncodeToString(demoSeed), "DEMO_KEY="+demoKey)
	// A second owner of the walk's account, an owner before any export is
	// asked and added by the operator: the one who approves the first
	// owner's export.
	coSeed := make([]byte, ed25519.SeedSize)
	copy(coSeed, "DEMO_COOWNER_SEED")
	coAddr := base58.Encode(ed25519.NewKeyFromSeed(coSeed).Public().(ed25519.PublicKey))
	if _, err := auth.AddUser(context.Background(), e.db, demo.ID, coAddr, auth.RoleOwner, "operator"); err != nil {
		t.Fatal(err)
	}
	env = append(env, "DEMO_COOWNER_SEED="+hex.EncodeToString(coSeed))
	// The owner is also a user of a mainnet account: the page offers the switch.
	live, _ := e.newAccount(solana.Mainnet)
	ownerSeed := make([]byte, ed25519.SeedSize)
	copy(ownerSeed, "OWNER_SEED")
	ownerAddr := base58.Encode(ed25519.NewKeyFromSeed(ownerSeed).Public().(ed25519.PublicKey))
	if _, err := auth.AddUser(context.Background(), e.db, live.ID, ownerAddr, auth.RoleOwner, "operator"); err != nil {
		t.Fatal(err)
	}

	if walk {
		// The scheduler's confirmation sweep, for the walk only: its
		// pages show payments settled; the page tests compare statuses
		// with the API and want them still.
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		go everySecond(ctx, func() { _, _ = eng.Sweep(ctx) }) // a failed sweep is retried on the next tick
		// The deposit watcher too, as the scheduler's deposits:scan task
		// has a worker run it: the walk pays a wallet from outside and
		// opens it, its deposit listed and its ledger's balance charted.
		watcher := &deposit.Watcher{DB: e.db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(e.ln.URL, solana.Devnet, 5*time.Second)}}
		go everySecond(ctx, func() { _, _ = watcher.Scan(ctx) }) // likewise
	}
	started := time.Now()
	cmd := exec.Command("node", append([]string{"--test", "--test-concurrency=1"}, files...)...)
	cmd.Dir = filepath.Join(root, "web/dashboard")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("browser tests failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "# fail 0") {
		t.Fatalf("browser tests: %s", out)
	}
	// What the tests measured (the first page's time, the scripts' sizes), then the summary.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "# measured: ") {
			t.Log(strings.TrimSpace(line))
		}
	}
	t.Logf("%d files in %v (%s)\n%s", len(files), time.Since(started).Round(time.Second), fileTimes(string(out)), lastLines(string(out), 10))
}

// everySecond runs do every second until ctx ends.
func everySecond(ctx context.Context, do func()) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			do()
		}
	}
}

// fileTimes is each test file's time in node --test's TAP output (a
// top-level "ok N - file" followed by its "duration_ms"), slowest first.
func fileTimes(tap string) string {
	type file struct {
		name string
		ms   float64
	}
	var files []file
	name := ""
	for _, line := range strings.Split(tap, "\n") {
		switch {
		case strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "not ok "):
			name = filepath.Base(line[strings.Index(line, " - ")+3:])
		case name != "" && strings.HasPrefix(line, "  duration_ms: "):
			ms, _ := strconv.ParseFloat(strings.TrimPrefix(line, "  duration_ms: "), 64)
			files = append(files, file{name, ms})
			name = ""
		}
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Compare(b.ms, a.ms) })
	parts := make([]string, len(files))
	for i, f := range files {
		parts[i] = fmt.Sprintf("%s %.0f s", f.name, f.ms/1000)
	}
	return strings.Join(parts, ", ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return fmt.Sprint(strings.Join(lines[max(0, len(lines)-n):], "\n"))
}
