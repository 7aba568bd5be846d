package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/wallettest"
	"github.com/agentwallet/agentwallet/internal/webhook"
	"github.com/agentwallet/agentwallet/internal/worker"
)

// hookReceiver records when each event id arrived.
type hookReceiver struct {
	mu   sync.Mutex
	at   map[string]time.Time
	done chan struct{}
	want int
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	var env struct {
		EventID string `json:"event_id"`
	}
	_ = json.Unmarshal(body, &env)
	h.mu.Lock()
	if _, seen := h.at[env.EventID]; !seen {
		h.at[env.EventID] = now
		if len(h.at) == h.want {
			close(h.done)
		}
	}
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (h *hookReceiver) reset(want int) {
	h.mu.Lock()
	h.at, h.done, h.want = map[string]time.Time{}, make(chan struct{}), want
	h.mu.Unlock()
}

// WebhookResult is one webhook scenario's measurement.
type WebhookResult struct {
	PerSecond float64 `json:"per_second"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	N         int     `json:"n"`
}

// BenchmarkWebhooks delivers BENCH_EVENTS (10,000) events to a local
// receiver through the whole path (event commit → outbox trigger →
// dispatcher → asynq → signed POST) and, in the same run, sends the same
// number of signed POSTs from a plain Go loop at the same concurrency (the
// baseline). Latency is from each event's commit to its receipt. A second,
// paced phase offers events at 80% of the measured rate for latency at a
// sustainable load. Writes bench/results/webhooks.json. Run with
// -benchtime=1x.
func BenchmarkWebhooks(b *testing.B) {
	ctx := context.Background()
	db, dbURL := pgtest.NewWithURL(b)
	rdb, _ := redistest.New(b)
	key := wallettest.NewMasterKey(b)
	acct := wallettest.Account(b, db)

	rcv := &hookReceiver{}
	rcv.reset(1)
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	url := srv.URL
	ep, secret, err := webhook.CreateEndpoint(ctx, db, key.Sealer, acct.ID, webhook.Settings{URL: &url, Events: []string{webhook.KindTxBlocked}}, 0)
	if err != nil {
		b.Fatal(err)
	}
	_ = ep

	const concurrency = 32
	hooks := &worker.Webhooks{
		Deliverer:  &webhook.Deliverer{DB: db, Keys: key.Keystore(b), AllowPrivate: true},
		Dispatcher: &webhook.Dispatcher{DB: db, Enqueue: worker.EnqueueDelivery(rdb)},
	}
	dctx, stopDispatch := context.WithCancel(ctx)
	defer stopDispatch()
	go hooks.Dispatcher.Run(dctx, dbURL)
	stop, err := worker.Start(rdb, worker.NewMux(worker.Deps{DB: db, Redis: rdb, Webhooks: hooks}),
		worker.Options{Concurrency: concurrency, Queues: []string{"webhooks"}, ShutdownTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	<-rcv.done // the endpoint's webhook.test

	n := envInt("BENCH_EVENTS", 10_000)
	data := map[string]any{"wallet_id": uuid.New(), "amount": 1, "to": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", "reason": "exceeds_max_tx", "memo": nil}
	emit := func() (string, time.Time, error) {
		var id uuid.UUID
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			ev, err := webhook.Emit(ctx, tx, acct.ID, time.Now(), webhook.KindTxBlocked, data)
			id = ev.ID
			return err
		})
		return webhook.PublicEventID(id), time.Now(), err
	}

	// Full path, as fast as events can be committed.
	full := func(n int, pace time.Duration) WebhookResult {
		rcv.reset(n)
		committed := make([]struct {
			id string
			at time.Time
		}, n)
		start := time.Now()
		spread(n, concurrency, func(_, i int) {
			if pace > 0 {
				time.Sleep(time.Until(start.Add(time.Duration(i) * pace)))
			}
			id, at, err := emit()
			if err != nil {
				b.Error(err)
				return
			}
			committed[i].id, committed[i].at = id, at
		})
		select {
		case <-rcv.done:
		case <-time.After(5 * time.Minute):
			b.Fatalf("only %d of %d delivered", len(rcv.at), n)
		}
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		lat := make([]time.Duration, 0, n)
		var last time.Time
		for _, c := range committed {
			got := rcv.at[c.id]
			lat = append(lat, got.Sub(c.at))
			if got.After(last) {
				last = got
			}
		}
		return summarize(lat, last.Sub(start))
	}

	// Baseline: signed POSTs of a like body from a plain loop.
	body, _ := json.Marshal(map[string]any{"event": "tx.blocked", "event_id": "", "timestamp": time.Now(), "data": data})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}, Timeout: webhook.Timeout}
	baseline := func(n int) WebhookResult {
		rcv.reset(n)
		lat := make([]time.Duration, n)
		start := time.Now()
		spread(n, concurrency, func(_, i int) {
			b := bytes.Replace(body, []byte(`"event_id":""`), fmt.Appendf(nil, `"event_id":"evt_%d"`, i), 1)
			req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Service-Signature", webhook.Signature(secret, b))
			t0 := time.Now()
			if resp, err := client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			lat[i] = time.Since(t0)
		})
		return summarize(lat, time.Since(start))
	}

	baseline(200) // warm up
	full(200, 0)
	results := map[string]WebhookResult{}
	results["baseline"] = baseline(n)
	results["full"] = full(n, 0)
	rate := results["full"].PerSecond * 0.8
	results["full_paced"] = full(min(n, max(int(rate*5), 500)), time.Duration(float64(time.Second)/rate))

	bl, f, p := results["baseline"], results["full"], results["full_paced"]
	fmt.Printf("\nwebhooks, concurrency %d, n=%d\n", concurrency, n)
	fmt.Printf("%-11s %9s %8s %8s %6s\n", "scenario", "per_s", "p50_ms", "p99_ms", "n")
	for _, name := range []string{"baseline", "full", "full_paced"} {
		r := results[name]
		fmt.Printf("%-11s %9.1f %8.2f %8.2f %6d\n", name, r.PerSecond, r.P50ms, r.P99ms, r.N)
	}
	fmt.Printf("full/baseline throughput %.2f (target ≥ 0.50: %v); commit→receipt p99 at %.0f/s: %.1f ms (target < 250: %v)\n",
		f.PerSecond/bl.PerSecond, f.PerSecond/bl.PerSecond >= 0.5, p.PerSecond, p.P99ms, p.P99ms < 250)
	writeResults(b, "webhooks.json", results)
	b.ReportMetric(f.PerSecond/bl.PerSecond, "full/baseline_rate")
	b.ReportMetric(p.P99ms, "paced_p99_ms")
}

func summarize(lat []time.Duration, elapsed time.Duration) WebhookResult {
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	return WebhookResult{PerSecond: float64(len(lat)) / elapsed.Seconds(), P50ms: q(0.5), P99ms: q(0.99), N: len(lat)}
}
