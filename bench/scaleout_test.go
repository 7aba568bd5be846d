package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// Two api and three worker processes (the real binaries) over
// one PostgreSQL and one Redis, under concurrent load, pay each send
// exactly once. Every send has its own recipient and amount, so the
// chain itself says how often it was paid: each recipient holds exactly
// its send's amount and each payer lost exactly the sum of its sends.
// A third of the sends are also raced: the same Idempotency-Key posted to
// both apis at once (a client's retry reaching another instance), which
// must make one payment and give both callers its signature.
func TestStack_ScaleOutPaysEachSendOnce(t *testing.T) {
	soak(t)
	t.Parallel()
	const (
		sends   = 48
		conc    = 12
		payers  = 6
		funding = money.Micros[money.USD](1_000_000_000) // 1,000 USDC each
	)
	stack := StartStack(t, StackOptions{APIs: 2, Workers: 3, WorkerConcurrency: 4, Race: raceEnabled})
	api := stack.client(stack.NewKey(t), conc*2)
	ln := stack.Localnet

	wallets, payerKeys := stack.fundedPayers(t, api, payers, funding)
	recipients := make([]string, sends)
	for i := range recipients {
		recipients[i] = sol.NewWallet().PublicKey().String()
	}
	amount := func(i int) money.Micros[money.USD] { return money.Micros[money.USD](10_000*(i%5+1) + i) }
	run := time.Now().UnixNano()

	// send posts send i to api a until it is answered sent (409 while the
	// same key is in progress elsewhere; 5xx retried), and returns its
	// signature and whether the answer was a replay.
	send := func(i, a int) (string, error) {
		body := map[string]any{"to": recipients[i], "amount": float64(amount(i)) / 1e6}
		hdr := map[string]string{"Idempotency-Key": fmt.Sprintf("scale-%d-%d", run, i)}
		deadline := time.Now().Add(60 * time.Second)
		for {
			status, out, err := api.do(a, "POST", "/api/public/v1/agents/"+wallets[i%payers]+"/send", body, hdr)
			switch {
			case err == nil && status == 200 && out["status"] == "sent":
				sig, _ := out["signature"].(string)
				return sig, nil
			case err == nil && status != 409 && status < 500:
				return "", fmt.Errorf("send %d via api %d: %d %v", i, a+1, status, out)
			case time.Now().After(deadline):
				return "", fmt.Errorf("send %d via api %d: still %d %v %v after 60 s", i, a+1, status, out, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	before := sampleCPU(stack.Procs)
	start := time.Now()
	sigs := make([][]string, sends) // each caller's answer
	work := make(chan int)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for i := range work {
				if i%3 != 0 {
					sig, err := send(i, i%2)
					if err != nil {
						t.Error(err)
					}
					sigs[i] = []string{sig}
					continue
				}
				got := make([]string, 2)
				var race sync.WaitGroup
				for a := range 2 {
					race.Go(func() {
						sig, err := send(i, a)
						if err != nil {
							t.Error(err)
						}
						got[a] = sig
					})
				}
				race.Wait()
				sigs[i] = got
			}
		})
	}
	for i := range sends {
		work <- i
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	after := sampleCPU(stack.Procs)
	if t.Failed() {
		t.FailNow()
	}

	// One signature per send, the same to every caller of it.
	seen := map[string]int{}
	for i, s := range sigs {
		for _, sig := range s {
			if sig == "" || sig != s[0] {
				t.Fatalf("send %d: callers were answered %q", i, s)
			}
		}
		if j, dup := seen[s[0]]; dup {
			t.Fatalf("sends %d and %d share signature %s", j, i, s[0])
		}
		seen[s[0]] = i
	}

	// The ledger: one request and one transaction per send.
	db, err := postgres.Open(stack.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, table := range []string{"send_requests", "transactions"} {
		if n, err := db.NewSelect().Table(table).Count(ctx); err != nil || n != sends {
			t.Fatalf("%d %s (%v), want %d", n, table, err, sends)
		}
	}

	// The chain: every recipient holds exactly its send's amount and every
	// payer lost exactly its sends' sum, checked once all have landed and
	// again a moment later (a second payment would land by then).
	rpc := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	usdcOf := func(owner string) money.Micros[money.USD] {
		b, err := rpc.Balance(ctx, sol.MustPublicKeyFromBase58(owner))
		if err != nil {
			t.Fatal(err)
		}
		return money.Micros[money.USD](b.Units(solana.Devnet.USDCMint()))
	}
	spent := make([]money.Micros[money.USD], payers)
	for i := range sends {
		spent[i%payers] += amount(i)
	}
	check := func() []string {
		var wrong []string
		for i, r := range recipients {
			if got := usdcOf(r); got != amount(i) {
				wrong = append(wrong, fmt.Sprintf("recipient of send %d holds %d, want %d", i, got, amount(i)))
			}
		}
		for p, k := range payerKeys {
			if got := usdcOf(k); got != funding-spent[p] {
				wrong = append(wrong, fmt.Sprintf("payer %d holds %d, want %d", p, got, funding-spent[p]))
			}
		}
		return wrong
	}
	paidExactly(t, check)

	// Both apis answered sends (the clients spread over them by design).
	for _, a := range stack.APIs {
		if n := strings.Count(tail(a.Log, 1_000_000), `"msg":"send decided"`); n == 0 {
			t.Errorf("%s decided no send", a.Name)
		}
	}
	c := cpuPerOp(stack.Procs, before, after, sends)
	t.Logf("%d sends (%d raced across both apis) in %v; CPU ms per send by process: %v", sends, (sends+2)/3, elapsed.Round(time.Millisecond), c.ByProcess)
}

// paidExactly waits up to 60 s for check to find every balance as the
// payments should have left it (they land over a few slots), then checks
// once more 2 s later: a payment made twice would have landed by then.
func paidExactly(t *testing.T, check func() []string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for wrong := check(); len(wrong) > 0; wrong = check() {
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s:\n%s", strings.Join(wrong, "\n"))
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	if wrong := check(); len(wrong) > 0 {
		t.Fatalf("paid more than once:\n%s", strings.Join(wrong, "\n"))
	}
}
