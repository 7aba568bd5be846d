package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/waitfor"
)

// Phases of TestSentinelFailoverPaysEveryPaymentOnce, by when an attempt
// started.
const (
	beforeKill = iota
	duringSwitch
	afterPromotion
)

// sentinelAttempt is one POST of a payment.
type sentinelAttempt struct {
	phase  int32
	done   time.Time // answered
	status int
	body   string
	err    error
}

// sentinelPayment is one payment a client makes: posted with its own
// Idempotency-Key, again after each 503, until it is answered sent.
type sentinelPayment struct {
	key, wallet string
	signature   string // from the 200
	attempts    []sentinelAttempt
}

// TestSentinelFailoverPaysEveryPaymentOnce runs the API and two workers
// against Redis through Sentinel (a primary, a replica, three sentinels,
// all real redis-server processes), configured by REDIS_SENTINELS and
// REDIS_MASTER_NAME as the binaries are. Four clients send payments
// without pause, each retrying a 503 with the same Idempotency-Key; the
// primary is SIGKILLed mid-stream and the sentinels promote the replica;
// once payments flow again the new master is flushed, losing more than
// an async replica can (queued and running tasks, the wake-ups, leases).
// Every answer is a 200 sent or a 503 (never a 500 nor anything else);
// every payment is sent exactly once: one decided request per key, its
// abandoned tries with no transaction, one transaction with the
// signature the client was given, confirmed on the chain, which holds
// exactly the sum. PostgreSQL decides, not Redis: a send whose task was
// lost is abandoned at the end of its wait (503, its retry pays), a task
// run again finds its request decided.
//
// Not parallel: the package's parallel tests wait while it runs, so its
// load (five Redis processes, four clients without pause) does not slow
// their timing bounds (TestOutagesAnswer503AndHeal's 2 s), nor theirs its
// own.
func TestSentinelFailoverPaysEveryPaymentOnce(t *testing.T) {
	group := redistest.NewSentinel(t)
	settings := map[string]string{"REDIS_SENTINELS": strings.Join(group.Addrs, ","), "REDIS_MASTER_NAME": redistest.MasterName}
	cfg, err := config.LoadCommon(func(k string) string { return settings[k] })
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("API and worker logs:\n%s", logs.String())
		}
	})
	e := newEnv(t, envOpts{redis: &cfg.Redis, sendWait: 3 * time.Second, log: log})
	eng, _ := e.startWorker()
	e.startWorker()

	const amount = 10_000 // micro-USDC: 0.01
	to := newAddress()
	wallets := make([]string, 4)
	for i := range wallets {
		wallets[i], _ = e.agent(map[string]any{"daily_limit_usdc": 1000, "max_tx_usdc": 10, "approval_threshold_usdc": 1000}, 100_000_000)
	}

	client := &http.Client{Timeout: 30 * time.Second}
	post := func(wallet, key string) (int, string, error) {
		req, _ := http.NewRequest("POST", e.url+fmt.Sprintf(sendPath, wallet), strings.NewReader(fmt.Sprintf(`{"to":%q,"amount":0.01}`, to)))
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw), err
	}

	var phase atomic.Int32
	var broken atomic.Bool    // a client met an answer it does not retry
	sent := [3]atomic.Int32{} // payments answered sent, by the phase of the answering attempt
	stop := make(chan struct{})
	payments := make([][]*sentinelPayment, len(wallets))
	var wg sync.WaitGroup
	for i, wallet := range wallets {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := &sentinelPayment{key: uuid.NewString(), wallet: wallet}
				payments[i] = append(payments[i], p)
				// Retried until sent; a payment started before stop is
				// carried through.
				for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); {
					a := sentinelAttempt{phase: phase.Load()}
					a.status, a.body, a.err = post(wallet, p.key)
					a.done = time.Now()
					p.attempts = append(p.attempts, a)
					var body struct{ Status, Signature, Error string }
					_ = json.Unmarshal([]byte(a.body), &body)
					if a.err == nil && a.status == http.StatusOK && body.Status == "sent" && body.Signature != "" {
						p.signature = body.Signature
						sent[a.phase].Add(1)
						break
					}
					if a.err != nil || a.status != http.StatusServiceUnavailable || body.Error == "" {
						broken.Store(true)
						return // reported below
					}
					time.Sleep(50 * time.Millisecond)
				}
				if p.signature == "" {
					broken.Store(true)
					return
				}
			}
		})
	}
	halt := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}
	defer halt()

	waitfor.True(t, "8 payments sent before the kill", func() bool { return sent[beforeKill].Load() >= 8 || broken.Load() })
	var took time.Duration
	var promoted, flushed time.Time
	if !broken.Load() {
		group.WaitQuorum()
		phase.Store(duringSwitch)
		group.KillPrimary()
		took = group.WaitPromoted(30 * time.Second)
		promoted = time.Now()
		phase.Store(afterPromotion)
		waitfor.True(t, "4 payments sent after the promotion", func() bool { return sent[afterPromotion].Load() >= 4 || broken.Load() })
		// Then the new master loses everything mid-stream, more than a
		// lagging replica would: tasks queued or running, the workers'
		// leases, the limiter's windows.
		flush := redis.NewClient(&redis.Options{Addr: group.Replica})
		if err := flush.FlushAll(context.Background()).Err(); err != nil {
			t.Errorf("flush the new master: %v", err)
		}
		flush.Close()
		flushed = time.Now()
		waitfor.True(t, "12 payments sent after the promotion", func() bool { return sent[afterPromotion].Load() >= 12 || broken.Load() })
	}
	halt()

	// Every answer a 200 sent or a 503, every payment sent.
	statuses := map[string]int{}
	during := 0
	var last503 time.Time
	var all []*sentinelPayment
	for _, ps := range payments {
		for _, p := range ps {
			all = append(all, p)
			for _, a := range p.attempts {
				if a.phase == duringSwitch {
					during++
				}
				kind := fmt.Sprintf("%d", a.status)
				if a.err != nil {
					kind = "transport error"
				}
				if a.status == http.StatusServiceUnavailable {
					if a.done.After(last503) && a.done.Before(flushed) {
						last503 = a.done
					}
					var body struct{ Error string }
					_ = json.Unmarshal([]byte(a.body), &body)
					kind += " " + strings.SplitN(body.Error, ";", 2)[0]
				}
				statuses[[]string{"before", "during", "after"}[a.phase]+" "+kind]++
				if a.err != nil || a.status != http.StatusOK && a.status != http.StatusServiceUnavailable {
					t.Errorf("payment %s: answered %d %s (%v); want 200 or 503", p.key, a.status, a.body, a.err)
				}
			}
			if p.signature == "" {
				t.Errorf("payment %s was never answered sent: %d attempts, last %+v", p.key, len(p.attempts), p.attempts[len(p.attempts)-1])
			}
		}
	}
	t.Logf("promotion %s after the kill, last 503 before the flush %s after the promotion; %d payments; answers by phase: %v",
		took.Round(time.Millisecond), last503.Sub(promoted).Round(time.Millisecond), len(all), statuses)
	if during == 0 {
		t.Error("no payment was posted while the sentinels switched")
	}
	if t.Failed() {
		t.FailNow()
	}

	// Once each: one decided request per key (the others abandoned), one
	// transaction, the one the client was told of.
	ctx := context.Background()
	for _, p := range all {
		var rows []struct {
			State     string
			Signature *string
		}
		if err := e.db.NewRaw(`SELECT r.state, t.signature FROM send_requests AS r LEFT JOIN transactions AS t ON t.request_id = r.id
			WHERE r.account_id = ? AND r.idempotency_key = ?`, e.account.ID, p.key).Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		decided := 0
		for _, r := range rows {
			switch {
			case r.State == payment.StateDecided && r.Signature != nil && *r.Signature == p.signature:
				decided++
			case r.State == payment.StateAbandoned && r.Signature == nil:
			default:
				t.Errorf("payment %s: request %s with transaction %v", p.key, r.State, r.Signature)
			}
		}
		if decided != 1 {
			t.Errorf("payment %s: %d decided requests carry its signature, want 1", p.key, decided)
		}
	}
	if n := e.countRows("transactions"); n != len(all) {
		t.Errorf("%d transactions for %d payments", n, len(all))
	}
	var audited int
	if err := e.db.NewRaw(`SELECT count(*) FROM audit_log WHERE account_id = ? AND action = 'send.sent'`, e.account.ID).Scan(ctx, &audited); err != nil {
		t.Fatal(err)
	}
	if audited != len(all) {
		t.Errorf("%d send.sent audit entries for %d payments", audited, len(all))
	}
	// And on the chain: each confirmed, the recipient holding the sum.
	for _, p := range all {
		e.settle(eng, p.signature, payment.TxConfirmed)
	}
	if got, want := e.chainUSDC(to), len(all)*amount; int64(got) != int64(want) {
		t.Errorf("recipient holds %d micro-USDC, want %d (%d payments)", got, want, len(all))
	}
}
