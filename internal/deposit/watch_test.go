package deposit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// deposits are a wallet's recorded deposits, oldest first.
type depositRow struct {
	Signature    string `bun:"signature"`
	Asset        string `bun:"asset"`
	Amount       int64  `bun:"amount"`
	Counterparty string `bun:"counterparty"`
	Status       string `bun:"status"`
}

func depositsOf(t *testing.T, db *bun.DB, w wallet.Wallet) []depositRow {
	t.Helper()
	var out []depositRow
	if err := db.NewSelect().Table("deposits").Column("signature", "asset", "amount", "counterparty", "status").
		Where("wallet_id = ?", w.ID).Order("slot", "asset").Scan(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// newWatcher is a watcher of the devnet through ln's node that snapshots
// every wallet at each Snapshot, and that node's client.
func newWatcher(ln *localnettest.Localnet, db *bun.DB) (*deposit.Watcher, *solana.Client) {
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	return &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}, SnapshotEvery: time.Nanosecond}, c
}

func received(t *testing.T, db *bun.DB) int {
	t.Helper()
	n, err := db.NewSelect().Table("events").Where("kind = 'tx.received'").Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// Money sent to a wallet from an address the service does not control is
// recorded once per way it can arrive (a USDC transfer, a
// transferChecked, a transfer made inside another program (CPI), one to
// a second USDC account the wallet owns, SOL directly and by CPI), with
// the sender and the amount, and announced once (tx.received); scanning
// again finds nothing new.
func TestWatcher_RecordsEveryWayMoneyArrivesOnce(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	_, w := wallettest.New(t, db)
	// Every scan lists the wallet's USDC accounts (by default, every 10
	// minutes): the second one is found at once.
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)},
		ListEvery: time.Nanosecond}
	ctx := context.Background()
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	from := chaintest.NewPayer(t, ln, 1_000_000_000, 10*solana.LamportsPerSOL)
	second := from.NewTokenAccount(t, w.PublicKey())
	want := map[string]depositRow{}
	add := func(sig, asset string, amount int64) {
		want[sig+asset] = depositRow{sig, asset, amount, from.PublicKey().String(), "confirmed"}
	}
	add(from.TransferUSDC(t, w.PublicKey(), 1_000_000), "usdc", 1_000_000)
	add(from.TransferCheckedUSDC(t, w.PublicKey(), 2_000_000), "usdc", 2_000_000)
	add(from.TransferUSDCByCPI(t, w.PublicKey(), 3_000_000), "usdc", 3_000_000)
	add(from.TransferSOL(t, w.PublicKey(), 300_000_000), "sol", 300_000_000)
	add(from.TransferSOLByCPI(t, w.PublicKey(), 40_000_000), "sol", 40_000_000)
	// The second account is found by its listing, then watched.
	add(from.TransferUSDCToAccount(t, second, 5_000_000), "usdc", 5_000_000)
	for range 2 {
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := depositsOf(t, db, w)
	if len(got) != len(want) {
		t.Fatalf("deposits %+v, want %d: %+v", got, len(want), want)
	}
	for _, d := range got {
		if want[d.Signature+d.Asset] != d {
			t.Fatalf("deposit %+v, want %+v", d, want[d.Signature+d.Asset])
		}
	}
	if n := received(t, db); n != len(want) {
		t.Fatalf("%d tx.received events, want %d", n, len(want))
	}
}

// A payment from one of the service's wallets to another, signed with the
// paying wallet's key outside the service, is a deposit of the receiving
// wallet only, and an unexplained outflow of the paying one.
func TestWatcher_KeyUsedOutsideTheServiceIsAnUnexplainedOutflow(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	a, b := wallettest.Create(t, db, mk.Sealer, acc.ID, "a"), wallettest.Create(t, db, mk.Sealer, acc.ID, "b")
	ln.SetLamports(t, a.Pubkey, solana.LamportsPerSOL)
	ln.SetTokenBalance(t, a.Pubkey, solana.DevnetUSDCMint.String(), 10_000_000)
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}}
	ctx := context.Background()
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}

	// a pays b with its own key, as the worker would.
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.BuildTransfer(solana.Transfer{Owner: a.PublicKey(), To: b.PublicKey(), Amount: 4_000_000}, bh)
	if err != nil {
		t.Fatal(err)
	}
	key := a.Key()
	if key.Sealed, err = wallet.SealedSecret(ctx, db, a.ID); err != nil {
		t.Fatal(err)
	}
	raw, sig, err := solana.Sign(ctx, tx, signer.For(mk.Keystore(t), key))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Broadcast(ctx, raw); err != nil {
		t.Fatal(err)
	}
	waitConfirmed(t, c, sig)
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if got := depositsOf(t, db, a); len(got) != 0 {
		t.Fatalf("the paying wallet's deposits: %+v", got)
	}
	if got := depositsOf(t, db, b); len(got) != 1 || got[0].Amount != 4_000_000 || got[0].Counterparty != a.Pubkey || got[0].Signature != sig.String() {
		t.Fatalf("the paid wallet's deposits: %+v", got)
	}
	// a's key was used outside the service: its USDC and its SOL (the fee,
	// b's account's rent) left in a transaction the service did not make.
	out := outflowsOf(t, db, a)
	if len(out) != 2 || out["usdc"] != 4_000_000 || out["sol"] <= 5000 {
		t.Fatalf("unexplained outflows of the paying wallet: %v", out)
	}
	if n := eventsOf(t, db, "wallet.unexplained_outflow"); n != 2 {
		t.Fatalf("%d wallet.unexplained_outflow events, want 2", n)
	}
	// Both are the paying wallet's differences, with what left and where.
	ds, err := deposit.Differences(ctx, db, a.ID, "", time.Time{}, uuid.Nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 {
		t.Fatalf("differences %+v", ds)
	}
	for _, d := range ds {
		if d.Kind != deposit.DifferenceOutflow || d.Amount != -out[d.Asset] || d.Signature.String != sig.String() || d.Chain.Valid {
			t.Fatalf("difference %+v, want %s -%d in %s", d, d.Asset, out[d.Asset], sig)
		}
		if d.Asset == deposit.USDC && d.To.String != b.Pubkey {
			t.Fatalf("the USDC went to %s, want %s", d.To.String, b.Pubkey)
		}
	}
}

// A payment the service made (decided and signed by the engine) is
// explained: no outflow is recorded for it, its fee included.
func TestWatcher_TheServicesOwnPaymentsAreExplained(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	a := wallettest.Create(t, db, mk.Sealer, acc.ID, "a")
	ln.SetLamports(t, a.Pubkey, solana.LamportsPerSOL)
	ln.SetTokenBalance(t, a.Pubkey, solana.DevnetUSDCMint.String(), 10_000_000)
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}}
	ctx := context.Background()
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	eng := &payment.Engine{DB: db, Signer: mk.Keystore(t), Nodes: map[solana.Network]payment.Node{
		solana.Devnet: payment.NewNode(ln.URL, solana.Devnet, 5*time.Second),
	}}
	r := payment.Request{ID: uuid.New(), AccountID: acc.ID, WalletID: a.ID, Network: solana.Devnet,
		To: sol.NewWallet().PublicKey().String(), Amount: 1_000_000}
	if err := payment.Submit(ctx, db, &r, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := eng.Decide(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	o, err := payment.Final(ctx, db, r.ID)
	if err != nil || o == nil || o.Status != payment.Sent {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	waitConfirmed(t, c, sol.MustSignatureFromBase58(o.Signature))
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if out := outflowsOf(t, db, a); len(out) != 0 {
		t.Fatalf("the service's own payment recorded as unexplained: %v", out)
	}
}

func outflowsOf(t *testing.T, db *bun.DB, w wallet.Wallet) map[string]int64 {
	t.Helper()
	var rows []struct {
		Asset  string `bun:"asset"`
		Amount int64  `bun:"amount"`
	}
	if err := db.NewSelect().Table("unexplained_outflows").Column("asset", "amount").Where("wallet_id = ?", w.ID).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Asset] += r.Amount
	}
	return out
}

func eventsOf(t *testing.T, db *bun.DB, kind string) int {
	t.Helper()
	n, err := db.NewSelect().Table("events").Where("kind = ?", kind).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func waitConfirmed(t *testing.T, c *solana.Client, sig sol.Signature) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		st, err := c.SignatureStatuses(context.Background(), false, []sol.Signature{sig})
		if err == nil && st[0].Found && st[0].Confirmed {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("transaction %s not confirmed", sig)
}

// flaky is an RPC node in front of target that is down half of the
// time: it answers 503 to everything for 400 ms, then passes everything
// for 400 ms, and so on.
func flaky(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start)/(400*time.Millisecond)%2 == 1 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A burst of 200 deposits to 50 wallets, watched by two workers at once
// through two nodes of which one is down half of the time: one worker is
// stopped in the burst, the other when it ends, and a third starts after
// a while with no worker at all (5 s; a minute with SOAK=1). Every deposit
// is recorded exactly once, each wallet's deposits add up to what it
// holds, and its ledger answers what the chain holds.
func TestWatcher_BurstWithAStoppedWorkerAndAFlakyNodeCountsEachDepositOnce(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	acc := wallettest.Account(t, db)
	sealer := wallettest.Sealer(t)
	downtime := 5 * time.Second
	if os.Getenv("SOAK") != "" {
		downtime = time.Minute
	}
	var wallets []wallet.Wallet
	for i := range 50 {
		wallets = append(wallets, wallettest.Create(t, db, sealer, acc.ID, fmt.Sprint("w", i)))
	}
	node := func() *solana.Client {
		c := solana.NewPoolClient([]string{flaky(t, ln.URL), ln.URL}, solana.Devnet, 2*time.Second).
			CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_DEVNET", LocalChain: true})
		if err := c.VerifyChain(context.Background()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	scanUntil := func(ctx context.Context, w *deposit.Watcher) {
		for ctx.Err() == nil {
			_, _ = w.Scan(ctx) // a node's failure: the next scan resumes
			time.Sleep(20 * time.Millisecond)
		}
	}
	first := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: node()}, PerAccount: 3}
	firstCtx, stopFirst := context.WithCancel(context.Background())
	defer stopFirst()
	firstDone := make(chan struct{})
	go func() { defer close(firstDone); scanUntil(firstCtx, first) }()
	second := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: node()}, PerAccount: 3}
	secondCtx, stopSecond := context.WithCancel(context.Background())
	defer stopSecond()
	secondDone := make(chan struct{})
	go func() { defer close(secondDone); scanUntil(secondCtx, second) }()

	var mu sync.Mutex
	sent := map[string]int64{} // signature → micro-USDC
	owed := map[uuid.UUID]int64{}
	var payers sync.WaitGroup
	for p := range 5 {
		payers.Go(func() {
			from := chaintest.NewPayer(t, ln, 1_000_000_000, solana.LamportsPerSOL)
			for i := range 40 {
				w := wallets[(p*40+i)%len(wallets)]
				amount := int64(10_000 * (p + 1) * (i + 1))
				sig := from.TransferUSDC(t, w.PublicKey(), uint64(amount))
				mu.Lock()
				sent[sig] += amount
				owed[w.ID] += amount
				mu.Unlock()
				if p == 0 && i == 10 {
					stopFirst() // a worker stops in the burst
				}
			}
		})
	}
	payers.Wait()
	<-firstDone
	stopSecond()
	<-secondDone
	time.Sleep(downtime)
	// A worker started after the burst and the downtime.
	third := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: node()}}
	for range 100 {
		_, err := third.Scan(context.Background())
		n, _ := db.NewSelect().Table("deposits").Count(context.Background())
		if err == nil && int(n) >= len(sent) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for range 20 { // through the flaky node's down periods
		if _, err := third.Scan(context.Background()); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	var rows []depositRow
	if err := db.NewSelect().Table("deposits").Column("signature", "asset", "amount", "counterparty", "status").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(sent) {
		have := map[string]bool{}
		for _, r := range rows {
			have[r.Signature] = true
		}
		for sig := range sent {
			if !have[sig] {
				m, err := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second).Movement(context.Background(), sol.MustSignatureFromBase58(sig))
				t.Logf("missing %s: %+v %v", sig, m, err)
			}
		}
		t.Fatalf("%d deposits recorded for %d transfers", len(rows), len(sent))
	}
	for _, r := range rows {
		if sent[r.Signature] != r.Amount {
			t.Fatalf("deposit %+v: sent %d", r, sent[r.Signature])
		}
	}
	if n := received(t, db); n != len(sent) {
		t.Fatalf("%d tx.received events for %d deposits", n, len(sent))
	}
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	for _, w := range wallets {
		var recorded int64
		if err := db.NewRaw(`SELECT coalesce(sum(amount), 0) FROM deposits WHERE wallet_id = ?`, w.ID).Scan(context.Background(), &recorded); err != nil {
			t.Fatal(err)
		}
		b, err := c.Balance(context.Background(), w.PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		if recorded != owed[w.ID] || int64(b.USDC) != recorded {
			t.Fatalf("wallet %s: deposits add up to %d, sent %d, holds %d", w.Label, recorded, owed[w.ID], b.USDC)
		}
		h, err := historyOfUSDCAndSOL(context.Background(), db, w.ID, []time.Time{time.Now().Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if h[0].USDC != int64(b.USDC) || h[0].SOL != int64(b.Lamports) {
			t.Fatalf("wallet %s: the ledger has %+v, the chain %d micro-USDC and %d lamports", w.Label, h[0], b.USDC, b.Lamports)
		}
	}
}

// A node whose transaction history lags behind its balances (a provider's
// backends at different slots) shows a wallet's new balance before it
// lists the deposit, here at the watcher's first look at the wallet:
// nothing is recorded, and nothing is lost; once the history catches up
// the deposit is recorded, once.
func TestWatcher_HistoryBehindBalancesDelaysButNeverDrops(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	db := pgtest.New(t)
	_, w := wallettest.New(t, db)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)}}
	ctx := context.Background()
	// The first look at the wallet's accounts comes after the deposit.
	from := chaintest.NewPayer(t, ln, 100_000_000, solana.LamportsPerSOL)
	var stuck uint64
	ln.Call(t, &stuck, "getSlot")
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 1})
	sig := from.TransferUSDC(t, w.PublicKey(), 3_000_000)
	// From here the history answers as of before the deposit.
	ln.SetFaults(t, localnettest.Faults{HistorySlot: &stuck})
	for range 3 {
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := depositsOf(t, db, w); len(got) != 0 {
		t.Fatalf("recorded before the history listed it: %+v", got)
	}
	ln.SetFaults(t, localnettest.Faults{})
	for range 2 {
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := depositsOf(t, db, w); len(got) != 1 || got[0].Signature != sig || got[0].Amount != 3_000_000 {
		t.Fatalf("deposits once the history caught up: %+v", got)
	}
}

// The ledger's balance at any instant agrees with the chain's: after SOL
// and USDC came in, and after the wallet paid (its fee included), the
// history answers at each instant what the chain held then, and the
// snapshot taken at each step finds no difference.
func TestHistory_AgreesWithTheChainAtEveryStep(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	w := wallettest.Create(t, db, mk.Sealer, acc.ID, "w")
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}, SnapshotEvery: time.Nanosecond}
	ctx := context.Background()
	from := chaintest.NewPayer(t, ln, 100_000_000, 5*solana.LamportsPerSOL)
	var at []time.Time
	var want []usdcAndSOL
	step := func(move func()) {
		// Block times are whole seconds: each step in a second of its own.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
		move()
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
		b, err := c.Balance(ctx, w.PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		at = append(at, now)
		want = append(want, usdcAndSOL{At: now, USDC: int64(b.USDC), SOL: int64(b.Lamports)})
		// The snapshot of the step finds chain and ledger agreeing.
		if st, err := watcher.Snapshot(ctx); err != nil || st.Wallets != 1 || st.Differences != 0 {
			t.Fatalf("snapshot %+v %v", st, err)
		}
	}
	step(func() { from.TransferSOL(t, w.PublicKey(), solana.LamportsPerSOL) })
	step(func() { from.TransferUSDC(t, w.PublicKey(), 5_000_000) })
	step(func() { payAsWallet(t, c, db, mk, w, solana.Transfer{To: from.PublicKey(), Amount: 2_000_000}) })
	before := at[0].Add(-2 * time.Second)
	got, err := historyOfUSDCAndSOL(ctx, db, w.ID, append([]time.Time{before}, at...))
	if err != nil {
		t.Fatal(err)
	}
	want = append([]usdcAndSOL{{At: before}}, want...)
	for i := range want {
		if !got[i].At.Equal(want[i].At) || got[i].USDC != want[i].USDC || got[i].SOL != want[i].SOL {
			t.Fatalf("point %d: history %+v, chain %+v", i, got[i], want[i])
		}
	}
	if want[3].SOL >= want[2].SOL {
		t.Fatalf("the wallet's fee is not in its SOL: %+v", want)
	}
}
