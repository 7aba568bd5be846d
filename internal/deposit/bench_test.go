package deposit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// counting is an RPC node in front of target that counts the calls it
// passes, by method.
type counting struct {
	mu    sync.Mutex
	calls map[string]int
	URL   string
}

func newCounting(tb testing.TB, target string) *counting {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	c := &counting{calls: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		c.mu.Lock()
		c.calls[req.Method]++
		c.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// take returns the calls counted since the last take, and forgets them.
func (c *counting) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int{}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// BenchmarkWatcher measures the deposit watcher at 100 and 10,000 watched
// wallets on the localnet: the RPC calls a minute of idle scans costs (a
// scan every tasks.DepositsEvery, 2 s: 30 a minute), by method, what one
// scan takes, and the detection latency, from a transfer's confirmation
// to its deposit recorded, with scans every 2 s as the scheduler runs
// them.
func BenchmarkWatcher(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("wallets=%d", n), func(b *testing.B) {
			ln := localnettest.Shared(b)
			db := pgtest.New(b)
			acc := wallettest.Account(b, db)
			ws := insertWallets(b, db, acc.ID, n)
			node := newCounting(b, ln.URL)
			w := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(node.URL, solana.Devnet, 30*time.Second)}}
			ctx := context.Background()
			// The first scans watch every wallet and list their token
			// accounts (20 wallets a scan, each every 10 minutes).
			if _, err := w.Scan(ctx); err != nil {
				b.Fatal(err)
			}
			node.take()
			const scans = 5
			start := time.Now()
			for range scans {
				if _, err := w.Scan(ctx); err != nil {
					b.Fatal(err)
				}
			}
			perScan := time.Since(start) / scans
			idle := node.take()
			perMinute := func(method string) float64 { return float64(idle[method]) / scans * 30 }

			from := chaintest.NewPayer(b, ln, 1_000_000_000, solana.LamportsPerSOL)
			var latency time.Duration
			b.ResetTimer()
			for i := range b.N {
				to := ws[i%len(ws)]
				stop := scanEvery(ctx, w, 2*time.Second)
				sig := from.TransferUSDC(b, to, 10_000)
				confirmed := time.Now()
				for !recorded(b, db, sig) {
					time.Sleep(10 * time.Millisecond)
				}
				latency += time.Since(confirmed)
				stop()
			}
			b.StopTimer()
			// Reading balances is the steady cost; listing token accounts
			// is 20 wallets a scan until each was listed in the last 10
			// minutes (a catch-up at start, then n/10 a minute).
			b.ReportMetric(perMinute("getMultipleAccounts"), "balance_calls/min")
			b.ReportMetric(perMinute("getTokenAccountsByOwner"), "listing_calls/min")
			b.ReportMetric(float64(perScan.Milliseconds()), "ms/scan")
			b.ReportMetric(float64(latency.Milliseconds())/float64(b.N), "ms_detection")
			b.Logf("%d wallets: an idle scan takes %v; %d RPC calls in %d idle scans (%v); detection %v on average",
				n, perScan, total(idle), scans, idle, latency/time.Duration(b.N))
		})
	}
}

// scanEvery scans with w every period, as the scheduler has a worker do,
// until stop.
func scanEvery(ctx context.Context, w *deposit.Watcher, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_, _ = w.Scan(ctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// recorded reports whether the deposit of signature sig is recorded.
func recorded(tb testing.TB, db *bun.DB, sig string) bool {
	tb.Helper()
	n, err := db.NewSelect().Table("deposits").Where("signature = ?", sig).Count(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return n > 0
}

// insertWallets writes n wallets of account acct straight into the
// database, 1,000 a statement (no real key: nothing signs for them; the
// watcher reads only their addresses), and returns their addresses.
func insertWallets(tb testing.TB, db *bun.DB, acct uuid.UUID, n int) []sol.PublicKey {
	tb.Helper()
	addrs := make([]sol.PublicKey, 0, n)
	at := time.Now().UTC().Add(-time.Minute)
	for start := 0; start < n; start += 1000 {
		var ws []wallet.Wallet
		for i := start; i < min(start+1000, n); i++ {
			pub := sol.NewWallet().PublicKey()
			addrs = append(addrs, pub)
			ws = append(ws, wallet.Wallet{ID: uuid.New(), AccountID: acct, Kind: wallet.KindAgent, Label: fmt.Sprint("w", i),
				Pubkey: pub.String(), State: wallet.Active, Allowlist: []string{}, AllowlistLabels: map[string]string{},
				SecretKeyID: "unused", SecretSealed: []byte{0}, CreatedAt: at})
		}
		if _, err := db.NewInsert().Model(&ws).Exec(context.Background()); err != nil {
			tb.Fatal(err)
		}
	}
	return addrs
}
