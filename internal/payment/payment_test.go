package payment_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

type fixture struct {
	eng *payment.Engine
	w   wallet.Wallet
	acc auth.Account
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	return newFixtureOn(t, localnettest.Shared(t), 50_000_000)
}

func (f fixture) submit(t *testing.T, wait time.Duration) payment.Request {
	t.Helper()
	r := payment.Request{ID: uuid.New(), AccountID: f.acc.ID, WalletID: f.w.ID, Network: solana.Devnet,
		To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Amount: 1_000_000}
	if err := payment.Submit(context.Background(), f.eng.DB, &r, wait); err != nil {
		t.Fatal(err)
	}
	return r
}

func (f fixture) count(t *testing.T, table string) int64 {
	t.Helper()
	n, err := f.eng.DB.NewSelect().Table(table).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wantRows fails the test unless table holds want rows.
func (f fixture) wantRows(t *testing.T, table string, want int64) {
	t.Helper()
	if n := f.count(t, table); n != want {
		t.Fatalf("%d rows in %s, want %d", n, table, want)
	}
}

// A worker that reaches a request after its deadline abandons it (on the
// database's clock) instead of deciding: the API may already have told
// the client it failed.
func TestDecidePastDeadlineAbandons(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.submit(t, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	if err := f.eng.Decide(context.Background(), r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := payment.Final(context.Background(), f.eng.DB, r.ID); !errors.Is(err, payment.ErrAbandoned) {
		t.Fatalf("final: %v, want ErrAbandoned", err)
	}
	f.wantRows(t, "transactions", 0)
}

// A redelivered decision task does nothing the second time.
func TestDecideTwiceSignsOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.submit(t, 10*time.Second)
	for range 2 {
		if err := f.eng.Decide(context.Background(), r.ID); err != nil {
			t.Fatal(err)
		}
	}
	o, err := payment.Final(context.Background(), f.eng.DB, r.ID)
	if err != nil || o == nil || o.Status != payment.Sent || o.Signature == "" {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	if n, a := f.count(t, "transactions"), f.count(t, "audit_log"); n != 1 || a != 2 { // wallet.created, send.sent
		t.Fatalf("%d transactions, %d audit entries", n, a)
	}
	var broadcasts int
	if err := f.eng.DB.NewSelect().Table("transactions").Column("broadcasts").Scan(context.Background(), &broadcasts); err != nil || broadcasts != 1 {
		t.Fatalf("broadcasts %d (%v)", broadcasts, err)
	}
}

// Sweeps racing each other settle a landed transaction once: one
// confirmation, one tx.sent event.
func TestConcurrentSweepsConfirmOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.submit(t, 10*time.Second)
	if err := f.eng.Decide(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var wg sync.WaitGroup
		var confirmed atomic.Int32
		for range 4 {
			wg.Go(func() {
				st, err := f.eng.Sweep(ctx)
				if err != nil {
					t.Error(err)
				}
				confirmed.Add(int32(st.Confirmed))
			})
		}
		wg.Wait()
		if c := confirmed.Load(); c > 1 {
			t.Fatalf("confirmed %d times", c)
		}
		var status string
		if err := f.eng.DB.NewSelect().Table("transactions").Column("status").Scan(ctx, &status); err != nil {
			t.Fatal(err)
		}
		if status == payment.TxConfirmed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %s", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	n, err := f.eng.DB.NewSelect().Table("events").Where("kind = 'tx.sent'").Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("%d tx.sent events (%v)", n, err)
	}
}

// Nobody decides within the wait: Wait abandons the request, and a late
// worker cannot execute it.
func TestWaitAbandonsAndLateWorkerDoesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.submit(t, 200*time.Millisecond)
	if _, err := payment.Wait(context.Background(), f.eng.DB, r.ID, nil, 200*time.Millisecond, time.Second); !errors.Is(err, payment.ErrAbandoned) {
		t.Fatalf("wait: %v", err)
	}
	if err := f.eng.Decide(context.Background(), r.ID); err != nil {
		t.Fatal(err)
	}
	f.wantRows(t, "transactions", 0)
}

// Submit checks ownership and the recipient in the same statement.
func TestSubmitChecksWallet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	r := payment.Request{ID: uuid.New(), AccountID: uuid.New(), WalletID: f.w.ID, Network: solana.Devnet, To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Amount: 1}
	if err := payment.Submit(ctx, f.eng.DB, &r, time.Second); !errors.Is(err, wallet.ErrNotFound) {
		t.Fatalf("foreign wallet: %v", err)
	}
	r.AccountID, r.To = f.acc.ID, f.w.Pubkey
	if err := payment.Submit(ctx, f.eng.DB, &r, time.Second); !errors.Is(err, payment.ErrSelfSend) {
		t.Fatalf("self send: %v", err)
	}
	f.wantRows(t, "send_requests", 0)
}

// A request's insert skips the WAL flush wait for its own commit only: the
// connection it ran on commits synchronously again afterwards, and the
// request is there.
func TestSubmitLeavesCommitsSynchronous(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	conn, err := f.eng.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := payment.Request{ID: uuid.New(), AccountID: f.acc.ID, WalletID: f.w.ID, Network: solana.Devnet,
		To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Amount: 1}
	if err := payment.Submit(ctx, conn, &r, time.Second); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := conn.QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&mode); err != nil || mode != "on" {
		t.Fatalf("synchronous_commit after a submit: %q, %v", mode, err)
	}
	f.wantRows(t, "send_requests", 1)
}

// The worker wins the race against the API's timeout but its broadcast is
// slow: the API answers sent with the stored signature, never a 503 for a
// payment that is going out.
func TestWaitAfterWorkerWonAnswersSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	ln := localnettest.Start(t)
	f.eng.Nodes[solana.Devnet] = payment.NewNode(ln.URL, solana.Devnet, 5*time.Second)
	ln.SetLamports(t, f.w.Pubkey, 1_000_000_000)
	ln.SetTokenBalance(t, f.w.Pubkey, solana.DevnetUSDCMint.String(), 50_000_000)
	if _, err := f.eng.Nodes[solana.Devnet].Blockhashes.Get(ctx); err != nil { // warm the cache
		t.Fatal(err)
	}
	ln.SetFaults(t, localnettest.Faults{LatencyMs: 2500})
	r := f.submit(t, 400*time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- f.eng.Decide(ctx, r.ID) }()
	o, err := payment.Wait(ctx, f.eng.DB, r.ID, nil, 300*time.Millisecond, 500*time.Millisecond)
	if err != nil || o.Status != payment.Sent || o.Signature == "" || o.Broadcasting {
		t.Fatalf("wait: %+v, %v", o, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// approved inserts an approval that an approve just moved to signing.
func (f fixture) approved(t *testing.T) approval.Approval {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	approver := "key_approver"
	a := approval.Approval{ID: uuid.New(), AccountID: f.acc.ID, WalletID: f.w.ID, Amount: 2_000_000,
		To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Status: approval.Signing, ApprovedBy: &approver,
		CreatedAt: now, ExpiresAt: now.Add(approval.Lifetime), DecidedAt: bun.NullTime{Time: now}}
	if _, err := f.eng.DB.NewInsert().Model(&a).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a
}

// Duplicated execution tasks of one approval, run at once, sign and
// broadcast it once.
func TestConcurrentExecuteSignsOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.approved(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := f.eng.Execute(context.Background(), a.ID); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := approval.Get(context.Background(), f.eng.DB, f.acc.ID, a.ID)
	if err != nil || got.Status != approval.Sent || got.Signature == nil {
		t.Fatalf("approval %+v %v", got, err)
	}
	var broadcasts int
	if err := f.eng.DB.NewSelect().Table("transactions").Column("broadcasts").Where("approval_id = ?", a.ID).Scan(context.Background(), &broadcasts); err != nil || broadcasts != 1 {
		t.Fatalf("broadcasts %d (%v)", broadcasts, err)
	}
	f.wantRows(t, "transactions", 1)
	f.wantRows(t, "events", 1) // approval.approved
}

// An approve's timeout (Release) racing the worker's execution: exactly
// one wins; a released approval is never signed, an executed one never
// released.
func TestExecuteRacesRelease(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	outcomes := map[string]int{}
	for range 10 {
		a := f.approved(t)
		var released bool
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			if err := f.eng.Execute(ctx, a.ID); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			<-start
			var err error
			if released, err = approval.Release(ctx, f.eng.DB, a.ID); err != nil {
				t.Error(err)
			}
		})
		close(start)
		wg.Wait()
		got, err := approval.Get(ctx, f.eng.DB, f.acc.ID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		n, err := f.eng.DB.NewSelect().Table("transactions").Where("approval_id = ?", a.ID).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case released && got.Status == approval.Pending && got.Signature == nil && n == 0:
			outcomes["released"]++
		case !released && got.Status == approval.Sent && n == 1:
			outcomes["executed"]++
		default:
			t.Fatalf("released %v, approval %s, %d transactions", released, got.Status, n)
		}
	}
	t.Logf("outcomes %v", outcomes)
}

// newFixtureOn is an engine over its own database and ln, with one wallet
// holding 1 SOL and usdcMicros.
func newFixtureOn(t *testing.T, ln *localnettest.Localnet, usdcMicros uint64) fixture {
	t.Helper()
	f, _ := newFixtureOnDB(t, pgtest.New(t), ln, usdcMicros)
	return f
}

// newFixtureOnDB is newFixtureOn over db, and the master key the wallet
// is sealed under (the engine signs with it), for a child process to
// sign with too.
func newFixtureOnDB(t *testing.T, db *bun.DB, ln *localnettest.Localnet, usdcMicros uint64) (fixture, wallettest.MasterKey) {
	t.Helper()
	key := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	w := wallettest.Create(t, db, key.Sealer, acc.ID, "w")
	ln.SetLamports(t, w.Pubkey, 1_000_000_000)
	ln.SetTokenBalance(t, w.Pubkey, solana.DevnetUSDCMint.String(), usdcMicros)
	eng := &payment.Engine{DB: db, Signer: key.Keystore(t), Nodes: map[solana.Network]payment.Node{
		solana.Devnet: payment.NewNode(ln.URL, solana.Devnet, 5*time.Second),
	}}
	return fixture{eng: eng, w: w, acc: acc}, key
}

// A send the node refused at its first broadcast keeps its reservation
// until its blockhash has expired and is never sent again, not even by a
// re-broadcast that read the row before the refusal, nor by a sweep once
// the wallet is funded; then it fails, releasing the day's total.
func TestRefusedSendKeepsItsReservationAndIsNeverResent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ln := localnettest.Start(t)
	f := newFixtureOn(t, ln, 0) // no USDC: the node refuses the transfer
	f.eng.FirstBroadcastGrace = time.Millisecond
	r := f.submit(t, 10*time.Second)
	if err := f.eng.Decide(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	var got payment.Request
	if err := f.eng.DB.NewSelect().Model(&got).Where("id = ?", r.ID).Scan(ctx); err != nil || got.Outcome.Status != payment.Refused {
		t.Fatalf("outcome %+v %v", got.Outcome, err)
	}
	// The row as a sweep would have read it just before the refusal.
	var stale []payment.Transaction
	if err := f.eng.DB.NewSelect().Model(&stale).ExcludeColumn("refused_at").Scan(ctx); err != nil || len(stale) != 1 {
		t.Fatalf("transactions %v %v", stale, err)
	}
	if reserved, _ := payment.ReservedToday(ctx, f.eng.DB, f.w.ID, time.Now()); reserved != money.Micros[money.USD](r.Amount) {
		t.Fatalf("reserved %d after the refusal, want %d until the blockhash expires", reserved, r.Amount)
	}
	// The wallet is funded: neither the stale re-broadcast nor a sweep
	// sends the refused bytes.
	ln.SetTokenBalance(t, f.w.Pubkey, solana.DevnetUSDCMint.String(), 50_000_000)
	if st := f.eng.Rebroadcast(ctx, stale); st.Rebroadcast != 0 {
		t.Fatalf("stale re-broadcast sent it: %+v", st)
	}
	time.Sleep(5 * time.Millisecond) // past the (test's) grace
	if st, err := f.eng.Sweep(ctx); err != nil || st.Rebroadcast != 0 || st.Failed != 0 {
		t.Fatalf("sweep %+v %v", st, err)
	}
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	if st, err := f.eng.Sweep(ctx); err != nil || st.Failed != 1 {
		t.Fatalf("sweep after expiry %+v %v", st, err)
	}
	if reserved, _ := payment.ReservedToday(ctx, f.eng.DB, f.w.ID, time.Now()); reserved != 0 {
		t.Fatalf("reserved %d after expiry", reserved)
	}
	to, err := solana.NewClient(ln.URL, solana.Devnet, 0).Balance(ctx, sol.MustPublicKeyFromBase58(r.To))
	if err != nil || to.Units(solana.Devnet.USDCMint()) != 0 {
		t.Fatalf("recipient %+v %v", to, err)
	}
}

// An on-chain error seen at processed commitment is not final (its fork
// may be dropped): the sweep fails the transaction only once confirmed.
func TestErrorAtProcessedIsNotFinal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ln := localnettest.StartSlots(t, time.Hour) // still until advanced
	f := newFixtureOn(t, ln, 0)
	node := f.eng.Nodes[solana.Devnet]
	bh, err := node.Blockhashes.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owner := sol.MustPublicKeyFromBase58(f.w.Pubkey)
	unsigned, err := node.Client.BuildTransfer(solana.Transfer{Owner: owner, To: sol.NewWallet().PublicKey(), Amount: 1_000_000}, bh)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := wallet.SealedSecret(ctx, f.eng.DB, f.w.ID)
	if err != nil {
		t.Fatal(err)
	}
	key := signer.Key{Public: ed25519.PublicKey(owner.Bytes()), Sealed: sealed}
	raw, sig, err := solana.Sign(ctx, unsigned, signer.For(f.eng.Signer, key))
	if err != nil {
		t.Fatal(err)
	}
	// Executed without preflight: it lands with an error (no USDC).
	if _, err := node.Client.RPC().SendRawTransactionWithOpts(ctx, raw, rpc.TransactionOpts{SkipPreflight: true}); err != nil {
		t.Fatal(err)
	}
	txn := payment.Transaction{ID: uuid.New(), AccountID: f.acc.ID, WalletID: f.w.ID, Network: solana.Devnet, Signature: sig.String(),
		Kind: "usdc", Direction: "send", Amount: 1_000_000, Counterparty: owner.String(), Status: payment.TxPending,
		SignedTx: raw, LastValidBlockHeight: bh.LastValidBlockHeight, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if _, err := f.eng.DB.NewInsert().Model(&txn).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := f.eng.Sweep(ctx); err != nil || st.Failed != 0 {
		t.Fatalf("sweep at processed %+v %v", st, err)
	}
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 1})
	if st, err := f.eng.Sweep(ctx); err != nil || st.Failed != 1 {
		t.Fatalf("sweep at confirmed %+v %v", st, err)
	}
}
