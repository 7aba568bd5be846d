package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/usdc"
)

// The sends' direct hand-off to workers keeps the chaos guarantees. Under a steady stream of sends from one api to two worker
// processes, a worker is killed with SIGKILL, then Redis is flushed, then
// every PostgreSQL connection of the service is cut, then PostgreSQL
// crashes (immediate shutdown: what its WAL buffers held unflushed is
// lost, which the commits that do not wait for their flush must survive)
// and starts again, recovering from its WAL. Each send is retried
// with its Idempotency-Key until it is answered sent. Every answer is a
// 200, or a 503/409 saying nothing was sent or it is still in progress
// (never a 500); every send is paid exactly once on the chain (each
// recipient holds its amount, each payer lost its sends' sum); and the
// stream kept paying through each fault (sends answered sent after each).
// A send the killed worker signed but never broadcast is answered sent
// and goes out with the scheduler's next confirmation sweep. EURC (SPL
// Token) and PYUSD (Token-2022) deposits paid into the wallets from
// outside in every phase are each recorded once, with one tx.received.
func TestStack_ChaosPaysEachSendOnce(t *testing.T) {
	soak(t)
	const (
		payers  = 4
		conc    = 6
		funding = usdc.Micros(1_000_000_000)
	)
	stack := StartStack(t, StackOptions{APIs: 1, Workers: 2, WorkerConcurrency: 4, Scheduler: true, Race: raceEnabled, Private: true})
	api := stack.client(stack.NewKey(t), conc*2)
	ln := stack.Localnet
	ctx := context.Background()

	wallets, payerKeys := stack.fundedPayers(t, api, payers, funding)
	depositor := newChaosDepositor(t, ln)
	amount := func(i int) usdc.Micros { return usdc.Micros(10_000*(i%7+1) + i) }
	run := time.Now().UnixNano()

	var (
		mu         sync.Mutex
		recipients = map[int]string{}
		answers    = map[string]int{}
		stop       = make(chan struct{})
		phase      atomic.Int32 // faults so far
		sentIn     [5]atomic.Int32
	)
	// send pays send i (its own recipient) until it is answered sent.
	send := func(i int, to string) error {
		body := map[string]any{"to": to, "amount": float64(amount(i)) / 1e6}
		hdr := map[string]string{"Idempotency-Key": fmt.Sprintf("chaos-%d-%d", run, i)}
		for deadline := time.Now().Add(90 * time.Second); ; {
			status, out, err := api.do(0, "POST", "/api/public/v1/agents/"+wallets[i%payers]+"/send", body, hdr)
			kind := fmt.Sprint(status)
			if err != nil {
				kind = "transport error"
			}
			mu.Lock()
			answers[kind]++
			mu.Unlock()
			switch {
			case err == nil && status == 200 && out["status"] == "sent":
				sentIn[phase.Load()].Add(1)
				return nil
			case err != nil || (status != 503 && status != 409) || out["error"] == nil:
				return fmt.Errorf("send %d: %d %v %v", i, status, out, err)
			case time.Now().After(deadline):
				return fmt.Errorf("send %d: still %d %v after 90 s", i, status, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	var next atomic.Int32
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := int(next.Add(1)) - 1
				to := sol.NewWallet().PublicKey().String()
				mu.Lock()
				recipients[i] = to
				mu.Unlock()
				if err := send(i, to); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	waitSent := func(p int32, n int32) {
		depositor.pay(t, payerKeys[int(p)%payers]) // money in during each phase
		for deadline := time.Now().Add(60 * time.Second); sentIn[p].Load() < n; {
			if time.Now().After(deadline) || t.Failed() {
				close(stop)
				wg.Wait()
				t.Fatalf("only %d sends answered sent after fault %d", sentIn[p].Load(), p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	waitSent(0, 10)
	if err := stack.Workers[0].cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	phase.Store(1)
	waitSent(1, 10)
	opt, err := redis.ParseURL(stack.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	phase.Store(2)
	waitSent(2, 10)
	db, err := postgres.Open(stack.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cut int
	if err := db.NewRaw(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(ctx, &cut); err != nil || cut == 0 {
		t.Fatalf("cut PostgreSQL connections: %d, %v", cut, err)
	}
	phase.Store(3)
	waitSent(3, 10)
	db.Close()
	stack.CrashPostgres(t)
	phase.Store(4)
	waitSent(4, 10)
	close(stop)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	if db, err = postgres.Open(stack.DatabaseURL); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// One request decided and one transaction per send; the chain says
	// each recipient was paid exactly once.
	sends := len(recipients)
	var decided, txs int
	if err := db.NewRaw(`SELECT (SELECT count(*) FROM send_requests WHERE state = 'decided'), (SELECT count(*) FROM transactions)`).
		Scan(ctx, &decided, &txs); err != nil {
		t.Fatal(err)
	}
	if decided != sends || txs != sends {
		t.Errorf("%d sends: %d decided requests, %d transactions", sends, decided, txs)
	}
	spent := make([]usdc.Micros, payers)
	for i := range recipients {
		spent[i%payers] += amount(i)
	}
	rpc := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	check := func() []string {
		var wrong []string
		for i, r := range recipients {
			b, err := rpc.Balance(ctx, sol.MustPublicKeyFromBase58(r))
			if err != nil {
				t.Fatal(err)
			}
			if b.USDC != amount(i) {
				wrong = append(wrong, fmt.Sprintf("recipient of send %d holds %d, want %d", i, b.USDC, amount(i)))
			}
		}
		for p, k := range payerKeys {
			b, err := rpc.Balance(ctx, sol.MustPublicKeyFromBase58(k))
			if err != nil {
				t.Fatal(err)
			}
			if b.USDC != funding-spent[p] {
				wrong = append(wrong, fmt.Sprintf("payer %d holds %d, want %d", p, b.USDC, funding-spent[p]))
			}
		}
		return wrong
	}
	paidExactly(t, check)
	depositor.check(t, db)
	t.Logf("%d sends, each paid once; sent after each fault %d/%d/%d/%d/%d; answers %v",
		sends, sentIn[0].Load(), sentIn[1].Load(), sentIn[2].Load(), sentIn[3].Load(), sentIn[4].Load(), answers)
}
