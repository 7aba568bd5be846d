package payment_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// resignFixture is a fixture whose database URL and master key a child
// process can open too.
type resignFixture struct {
	fixture
	ln             *localnettest.Localnet
	dbURL, master  string
	to             string
	asset          string // "" sends USDC
	amount         money.Micros[money.USD]
	request        uuid.UUID
	firstSignature string
	sealer         *signer.Sealer
}

func newResignFixture(t *testing.T, ln *localnettest.Localnet) *resignFixture {
	t.Helper()
	db, url := pgtest.NewWithURL(t)
	f, key := newFixtureOnDB(t, db, ln, 50_000_000)
	f.eng.FirstBroadcastGrace = time.Millisecond
	return &resignFixture{fixture: f, ln: ln, dbURL: url, master: key.Private,
		to: sol.NewWallet().PublicKey().String(), amount: 1_250_000, sealer: key.Sealer}
}

// sendUnseen decides a send whose transaction the node accepts but drops
// (its first broadcast and a re-broadcast), then the market rises to
// 50,000 µlamports per compute unit and the chain moves past the
// transaction's last valid height (and the sweep's margin).
func (f *resignFixture) sendUnseen(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	f.ln.SetMinPriorityFee(t, 0)
	f.ln.SetFaults(t, localnettest.Faults{DropRate: 1})
	f.send(t)
	time.Sleep(5 * time.Millisecond) // past the grace
	if st, err := f.eng.Sweep(ctx); err != nil || st.Rebroadcast != 1 || st.Resigned != 0 || st.Failed != 0 {
		t.Fatalf("sweep before expiry %+v %v", st, err)
	}
	f.ln.SetFaults(t, localnettest.Faults{})
	f.ln.SetMinPriorityFee(t, 50_000)
	f.ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
}

// send submits and decides the fixture's payment, answered sent.
func (f *resignFixture) send(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	r := payment.Request{ID: uuid.New(), AccountID: f.acc.ID, WalletID: f.w.ID, Network: solana.Devnet, To: f.to, Asset: f.asset, Amount: money.Quantity(f.amount)}
	if err := payment.Submit(ctx, f.eng.DB, &r, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := f.eng.Decide(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	o, err := payment.Final(ctx, f.eng.DB, r.ID)
	if err != nil || o == nil || o.Status != payment.Sent {
		t.Fatalf("outcome %+v %v", o, err)
	}
	f.request, f.firstSignature = r.ID, o.Signature
}

// row is the payment's transaction as stored.
func (f *resignFixture) row(t *testing.T) payment.Transaction {
	t.Helper()
	var txn payment.Transaction
	if err := f.eng.DB.NewSelect().Model(&txn).Where("request_id = ?", f.request).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return txn
}

// wantRecipientHolds fails the test unless the payment's recipient holds
// want: the amount once it was paid (once), 0 while it was not.
func (f *resignFixture) wantRecipientHolds(t *testing.T, want money.Micros[money.USD]) {
	t.Helper()
	if got := f.recipientUSDC(t); got != want {
		t.Fatalf("recipient holds %d, want %d", got, want)
	}
}

// wantFailed fails the test unless the payment's transaction failed after
// attempts attempts with an error naming each of reasons; it returns the
// transaction.
func (f *resignFixture) wantFailed(t *testing.T, attempts int, reasons ...string) payment.Transaction {
	t.Helper()
	txn := f.row(t)
	if txn.Status != payment.TxFailed || txn.Attempts != attempts || txn.Error == nil {
		t.Fatalf("transaction %s, %d attempts, error %v; want failed after %d", txn.Status, txn.Attempts, txn.Error, attempts)
	}
	for _, r := range reasons {
		if !strings.Contains(*txn.Error, r) {
			t.Fatalf("transaction error %q, want one naming %q", *txn.Error, r)
		}
	}
	return txn
}

// sweepUntil sweeps until the payment's transaction has status want.
func (f *resignFixture) sweepUntil(t *testing.T, want string) payment.Transaction {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := f.eng.Sweep(context.Background()); err != nil {
			t.Logf("sweep: %v", err) // the killed worker's connection may linger a moment
		}
		txn := f.row(t)
		if txn.Status == want {
			return txn
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction %s after 30 s, want %s", txn.Status, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (f *resignFixture) recipientUSDC(t *testing.T) money.Micros[money.USD] {
	t.Helper()
	b, err := solana.NewClient(f.ln.URL, solana.Devnet, 0).Balance(context.Background(), sol.MustPublicKeyFromBase58(f.to))
	if err != nil {
		t.Fatal(err)
	}
	return money.Micros[money.USD](b.Units(solana.Devnet.USDCMint()))
}

func (f *resignFixture) countWhere(t *testing.T, table, where string, args ...any) int {
	t.Helper()
	n, err := f.eng.DB.NewSelect().Table(table).Where(where, args...).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// checkLandedOnce asserts the payment landed exactly once, on its second
// attempt, with the first attempt kept and findable.
func (f *resignFixture) checkLandedOnce(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	txn := f.sweepUntil(t, payment.TxConfirmed)
	f.wantRecipientHolds(t, f.amount)
	if txn.Attempts != 2 || txn.Signature == f.firstSignature {
		t.Fatalf("attempts %d, signature %s (first %s)", txn.Attempts, txn.Signature, f.firstSignature)
	}
	if reserved, _ := payment.ReservedToday(ctx, f.eng.DB, f.w.ID, time.Now()); reserved != f.amount {
		t.Fatalf("reserved %d, want %d (counted once)", reserved, f.amount)
	}
	if n := f.countWhere(t, "transactions", "true"); n != 1 {
		t.Fatalf("%d transactions", n)
	}
	if n := f.countWhere(t, "transaction_attempts", "transaction_id = ? AND attempt = 1 AND signature = ? AND outcome = 'expired'", txn.ID, f.firstSignature); n != 1 {
		t.Fatalf("the first attempt is not kept (%d rows)", n)
	}
	if n := f.countWhere(t, "audit_log", "action = 'send.resigned'"); n != 1 {
		t.Fatalf("%d send.resigned audit entries", n)
	}
	var sent []json.RawMessage
	if err := f.eng.DB.NewSelect().Table("events").Column("data").Where("kind = 'tx.sent'").Scan(ctx, &sent); err != nil || len(sent) != 1 ||
		!strings.Contains(string(sent[0]), txn.Signature) {
		t.Fatalf("tx.sent events %s (%v), want one with %s", sent, err, txn.Signature)
	}
	if n := f.countWhere(t, "events", "kind = 'tx.failed'"); n != 0 {
		t.Fatalf("%d tx.failed events", n)
	}
	// The idempotent answer is the first one; its signature finds the
	// payment's status.
	o, err := payment.Final(ctx, f.eng.DB, f.request)
	if err != nil || o.Signature != f.firstSignature {
		t.Fatalf("outcome %+v %v", o, err)
	}
	if s, err := payment.TransactionStatus(ctx, f.eng.DB, f.acc.ID, f.firstSignature); err != nil || s != payment.TxConfirmed {
		t.Fatalf("status by the first signature %q %v", s, err)
	}
}

// A payment whose first transaction expired unseen is signed again with a
// fresh blockhash and a fee from a fresh reading of the market that rose
// meanwhile (the cached reading still says 0), and lands: attempts 2, the
// recipient paid once.
func TestResign_AfterExpiryLands(t *testing.T) {
	t.Parallel()
	f := newResignFixture(t, localnettest.Start(t))
	f.sendUnseen(t)
	first := f.row(t)
	st, err := f.eng.Sweep(context.Background())
	if err != nil || st.Resigned != 1 || st.Failed != 0 {
		t.Fatalf("sweep after expiry %+v %v", st, err)
	}
	f.checkLandedOnce(t)
	if second := f.row(t); *second.FeeLamports <= *first.FeeLamports {
		t.Fatalf("fee %d, not priced from the fresh market (first %d)", *second.FeeLamports, *first.FeeLamports)
	}
}

// A PYUSD payment whose transaction expired unseen is signed again in
// PYUSD, through Token-2022: the new attempt pays the payment's asset,
// never the network's USDC.
func TestResign_KeepsThePaymentsAsset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newResignFixture(t, localnettest.Start(t))
	pyusd, _ := asset.Defaults().Find(solana.Devnet, "PYUSD")
	f.ln.SetTokenBalance(t, f.w.Pubkey, pyusd.Mint.String(), 10_000_000)
	if _, err := f.eng.DB.ExecContext(ctx, "UPDATE wallets SET assets = '{USDC,PYUSD}' WHERE id = ?", f.w.ID); err != nil {
		t.Fatal(err)
	}
	f.asset = "PYUSD"
	f.sendUnseen(t)
	if st, err := f.eng.Sweep(ctx); err != nil || st.Resigned != 1 {
		t.Fatalf("sweep after expiry %+v %v", st, err)
	}
	txn := f.sweepUntil(t, payment.TxConfirmed)
	if txn.Attempts != 2 || txn.Asset != "PYUSD" || txn.Kind != "pyusd" {
		t.Fatalf("transaction %+v", txn)
	}
	ata, _, err := sol.FindAssociatedTokenAddressWithProgram(sol.MustPublicKeyFromBase58(f.to), pyusd.Mint, pyusd.Program)
	if err != nil {
		t.Fatal(err)
	}
	var bal struct {
		Value struct {
			Amount string `json:"amount"`
		} `json:"value"`
	}
	f.ln.Call(t, &bal, "getTokenAccountBalance", ata.String(), map[string]any{"commitment": "confirmed"})
	if bal.Value.Amount != fmt.Sprint(int64(f.amount)) {
		t.Fatalf("the recipient's PYUSD account holds %q, want %d", bal.Value.Amount, f.amount)
	}
	if got := f.recipientUSDC(t); got != 0 {
		t.Fatalf("the recipient got %d micro-USDC", got)
	}
}

// Attempts that keep expiring: a new one only after the current one
// expired (never while it is in flight), then failed with tx.failed after
// the last, the reservation released and nothing paid.
func TestResign_GivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ln := localnettest.Start(t)
	f := newResignFixture(t, ln)
	f.sendUnseen(t)
	ln.SetFaults(t, localnettest.Faults{DropRate: 1})
	for attempt := 2; attempt <= payment.DefaultMaxAttempts; attempt++ {
		if st, err := f.eng.Sweep(ctx); err != nil || st.Resigned != 1 {
			t.Fatalf("attempt %d: sweep %+v %v", attempt, st, err)
		}
		for range 3 { // in flight: re-broadcast, never signed again
			time.Sleep(5 * time.Millisecond)
			if st, err := f.eng.Sweep(ctx); err != nil || st.Resigned != 0 || st.Failed != 0 {
				t.Fatalf("attempt %d in flight: sweep %+v %v", attempt, st, err)
			}
		}
		if txn := f.row(t); txn.Attempts != attempt || txn.Status != payment.TxPending {
			t.Fatalf("attempts %d status %s, want %d pending", txn.Attempts, txn.Status, attempt)
		}
		ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	}
	if st, err := f.eng.Sweep(ctx); err != nil || st.Resigned != 0 || st.Failed != 1 {
		t.Fatalf("sweep after the last attempt %+v %v", st, err)
	}
	txn := f.wantFailed(t, payment.DefaultMaxAttempts, "each of its 3 attempts")
	if n := f.countWhere(t, "transaction_attempts", "transaction_id = ?", txn.ID); n != payment.DefaultMaxAttempts-1 {
		t.Fatalf("%d attempts kept", n)
	}
	if n, m := f.countWhere(t, "audit_log", "action = 'send.resigned'"), f.countWhere(t, "audit_log", "action = 'send.failed'"); n != 2 || m != 1 {
		t.Fatalf("%d send.resigned, %d send.failed audit entries", n, m)
	}
	if n := f.countWhere(t, "events", "kind = 'tx.failed'"); n != 1 {
		t.Fatalf("%d tx.failed events", n)
	}
	if reserved, _ := payment.ReservedToday(ctx, f.eng.DB, f.w.ID, time.Now()); reserved != 0 {
		t.Fatalf("reserved %d after failure", reserved)
	}
	f.wantRecipientHolds(t, 0)
}

// A market above the fee cap when the payment would be signed again: it
// ends failed, saying so, rather than signing a transaction that cannot
// land.
func TestResign_AboveCapFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newResignFixture(t, localnettest.Start(t))
	f.eng.Fees = solana.FeePolicy{Percentile: 75, MaxMicroLamports: 10_000, MaxLamports: 1_000_000}
	f.sendUnseen(t) // the market is 50,000 µlamports from then on
	if st, err := f.eng.Sweep(ctx); err != nil || st.Resigned != 0 || st.Failed != 1 {
		t.Fatalf("sweep %+v %v", st, err)
	}
	f.wantFailed(t, 1, "not signed again", "cap")
	if n := f.countWhere(t, "events", "kind = 'tx.failed'"); n != 1 {
		t.Fatalf("%d tx.failed events", n)
	}
	if reserved, _ := payment.ReservedToday(ctx, f.eng.DB, f.w.ID, time.Now()); reserved != 0 {
		t.Fatalf("reserved %d after failure", reserved)
	}
}

// Environment of the child process TestResign_SurvivesSIGKILL kills.
const (
	crashStepEnv = "AGENTWALLET_TEST_RESIGN_CRASH_STEP"
	crashDBEnv   = "AGENTWALLET_TEST_RESIGN_DB"
	crashKeyEnv  = "AGENTWALLET_TEST_RESIGN_MASTER_KEY"
	crashRPCEnv  = "AGENTWALLET_TEST_RESIGN_RPC"
)

// A worker killed with SIGKILL before or after any write of the re-sign
// path (between signing and recording, inside the record's transaction,
// after it, after the broadcast and after counting it): a clean sweep
// then finishes the payment, which lands exactly once on its second
// attempt.
func TestResign_SurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t) // one at a time: its market is shared
	for _, step := range []string{payment.StepSigned, payment.StepWritten, payment.StepRecorded, payment.StepBroadcast, payment.StepCounted} {
		t.Run(step, func(t *testing.T) {
			f := newResignFixture(t, ln)
			f.sendUnseen(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestResign_CrashChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), crashStepEnv+"="+step, crashDBEnv+"="+f.dbURL, crashKeyEnv+"="+f.master, crashRPCEnv+"="+ln.URL)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the worker was not killed at %s: %v\n%s", step, err, out)
			}
			f.checkLandedOnce(t)
		})
	}
}

// TestResign_CrashChild is the worker TestResign_SurvivesSIGKILL
// runs and kills: one sweep, which SIGKILLs its own process at the named
// step.
func TestResign_CrashChild(t *testing.T) {
	step := os.Getenv(crashStepEnv)
	if step == "" {
		t.Skip("run by TestResign_SurvivesSIGKILL")
	}
	db, err := postgres.Open(os.Getenv(crashDBEnv))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := signer.NewKeystore(os.Getenv(crashKeyEnv))
	if err != nil {
		t.Fatal(err)
	}
	eng := &payment.Engine{DB: db, Signer: ks, FirstBroadcastGrace: time.Millisecond, Nodes: map[solana.Network]payment.Node{
		solana.Devnet: payment.NewNode(os.Getenv(crashRPCEnv), solana.Devnet, 5*time.Second),
	}}
	payment.SetCrashPoint(func(s string) {
		if s == step {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // never returns
		}
	})
	st, err := eng.Sweep(context.Background())
	t.Fatalf("not killed at %s: sweep %+v %v", step, st, err)
}

// A wallet frozen since the send is not signed for again: the payment
// fails at expiry, saying so.
func TestResign_FrozenWalletFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newResignFixture(t, localnettest.Start(t))
	f.sendUnseen(t)
	if _, err := f.eng.DB.NewUpdate().Table("wallets").Set("state = ?", wallet.Frozen).Where("id = ?", f.w.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := f.eng.Sweep(ctx); err != nil || st.Resigned != 0 || st.Failed != 1 {
		t.Fatalf("sweep %+v %v", st, err)
	}
	f.wantFailed(t, 1, "frozen")
	f.wantRecipientHolds(t, 0)
}

// A new attempt the node refuses (the wallet has no SOL left for the fee)
// is never sent or signed again: it fails at its expiry with the node's
// reason.
func TestResign_RefusedAttemptFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ln := localnettest.Start(t)
	f := newResignFixture(t, ln)
	f.sendUnseen(t)
	ln.SetLamports(t, f.w.Pubkey, 0)
	if st, err := f.eng.Sweep(ctx); err != nil || st.Resigned != 1 {
		t.Fatalf("sweep %+v %v", st, err)
	}
	if txn := f.row(t); txn.Attempts != 2 || txn.RefusedAt.IsZero() {
		t.Fatalf("attempts %d, refused at %v", txn.Attempts, txn.RefusedAt)
	}
	ln.SetLamports(t, f.w.Pubkey, 1_000_000_000)
	time.Sleep(5 * time.Millisecond)
	if st, err := f.eng.Sweep(ctx); err != nil || st.Rebroadcast != 0 || st.Resigned != 0 {
		t.Fatalf("sweep after the refusal %+v %v", st, err)
	}
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	if st, err := f.eng.Sweep(ctx); err != nil || st.Failed != 1 || st.Resigned != 0 {
		t.Fatalf("sweep after expiry %+v %v", st, err)
	}
	f.wantFailed(t, 2, "refused by the node")
	f.wantRecipientHolds(t, 0)
}

// Two workers sweeping at once after the expiry: the payment is signed
// again once, and lands once.
func TestResign_ConcurrentSweepsSignOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newResignFixture(t, localnettest.Start(t))
	f.sendUnseen(t)
	other := *f.eng
	other.Nodes = map[solana.Network]payment.Node{solana.Devnet: payment.NewNode(f.ln.URL, solana.Devnet, 5*time.Second)}
	var resigned atomic.Int32
	deadline := time.Now().Add(30 * time.Second)
	for f.row(t).Status != payment.TxConfirmed {
		var wg sync.WaitGroup
		for _, eng := range []*payment.Engine{f.eng, &other, f.eng, &other} {
			wg.Go(func() {
				st, err := eng.Sweep(ctx)
				if err != nil {
					t.Error(err)
				}
				resigned.Add(int32(st.Resigned))
			})
		}
		wg.Wait()
		if time.Now().After(deadline) {
			t.Fatalf("transaction %s", f.row(t).Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := resigned.Load(); n != 1 {
		t.Fatalf("signed again %d times", n)
	}
	f.checkLandedOnce(t)
}

// nodeProxy forwards JSON-RPC to the localnet. before, when set, runs
// before a request of that method is forwarded; statusCacheSlots > 0 makes
// it answer getSignatureStatuses like an agave node started without
// --enable-rpc-transaction-history (the default): searchTransactionHistory
// has nothing to search, and only the status cache (~300 slots) answers,
// so an older landed signature is null.
type nodeProxy struct {
	target           string
	statusCacheSlots uint64
	before           atomic.Pointer[func(method string)]
}

func (p *nodeProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &req)
	if f := p.before.Load(); f != nil {
		(*f)(req.Method)
	}
	if req.Method == "getTransaction" && p.statusCacheSlots > 0 {
		// What agave answers without --enable-rpc-transaction-history.
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32011,"message":"Transaction history is not available from this node"}}`))
		return
	}
	resp, err := http.Post(p.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if req.Method == "getSignatureStatuses" && p.statusCacheSlots > 0 {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if dec.Decode(&m) == nil {
			if res, ok := m["result"].(map[string]any); ok {
				ctxSlot, _ := res["context"].(map[string]any)["slot"].(json.Number).Int64()
				if vals, ok := res["value"].([]any); ok {
					for i, v := range vals {
						if st, ok := v.(map[string]any); ok {
							if s, err := st["slot"].(json.Number).Int64(); err == nil && uint64(ctxSlot-s) > p.statusCacheSlots {
								vals[i] = nil
							}
						}
					}
				}
			}
			out, _ = json.Marshal(m)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
}

func startNodeProxy(t *testing.T, target string) (*nodeProxy, string) {
	t.Helper()
	p := &nodeProxy{target: target}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// A payment whose first transaction landed, but whose sweeps did not see
// it before the chain moved on (sweeps stalled ~2 min: a scheduler or RPC
// outage, or more than MaxSweepChecks older pending rows), is unknown to a
// node without transaction history (only its ~300-slot status cache
// answers). That proves nothing: the sweep must not sign it again, or the
// recipient is paid twice. (The node says it keeps no history when asked
// with getTransaction: -32011.)
func TestResign_NeverOnANodeWithoutHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ln := localnettest.Start(t)
	f := newResignFixture(t, ln)
	proxy, url := startNodeProxy(t, ln.URL)
	proxy.statusCacheSlots = 300
	f.eng.Nodes = map[solana.Network]payment.Node{solana.Devnet: payment.NewNode(url, solana.Devnet, 5*time.Second)}

	r := payment.Request{ID: uuid.New(), AccountID: f.acc.ID, WalletID: f.w.ID, Network: solana.Devnet, To: f.to, Amount: money.Quantity(f.amount)}
	if err := payment.Submit(ctx, f.eng.DB, &r, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := f.eng.Decide(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	f.request = r.ID
	deadline := time.Now().Add(10 * time.Second)
	for f.recipientUSDC(t) != f.amount { // it landed (no sweep has run)
		if time.Now().After(deadline) {
			t.Fatalf("the first transaction did not land: recipient holds %d", f.recipientUSDC(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// No sweep ran for a while: the chain is 400 blocks on.
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})

	st, err := f.eng.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // a few slots: anything sent confirms
	got := f.recipientUSDC(t)
	txn := f.row(t)
	if st.Resigned != 0 || txn.Attempts != 1 || got != f.amount {
		t.Fatalf("a landed payment was signed again (sweep %+v, attempts %d, status %s): recipient holds %d, paid %d",
			st, txn.Attempts, txn.Status, got, f.amount)
	}
}

// Freezing a wallet while the sweep is re-signing one of its payments
// (after the re-sign read the wallet, before it records the new attempt)
// stops the new signature: "freezing stops every new signature of the
// wallet" (docs/decisions/money-path.md, "Market above the cap, frozen
// wallet"). The freeze is made while the re-sign's
// getLatestBlockhash is in flight (a slow node).
func TestResign_StopsAtAFreezeCommittedMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ln := localnettest.Start(t)
	f := newResignFixture(t, ln)
	f.sendUnseen(t)
	proxy, url := startNodeProxy(t, ln.URL)
	f.eng.Nodes = map[solana.Network]payment.Node{solana.Devnet: payment.NewNode(url, solana.Devnet, 5*time.Second)}
	var frozen atomic.Bool
	hook := func(method string) {
		if method == "getLatestBlockhash" && frozen.CompareAndSwap(false, true) {
			if _, changed, err := wallet.SetState(ctx, f.eng.DB, f.acc.ID, f.w.ID, "key_admin", wallet.Frozen); err != nil || !changed {
				t.Errorf("freeze: changed %v, %v", changed, err)
			}
		}
	}
	proxy.before.Store(&hook)

	st, err := f.eng.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !frozen.Load() {
		t.Fatalf("the sweep did not ask for a blockhash (sweep %+v)", st)
	}
	time.Sleep(500 * time.Millisecond)
	txn := f.row(t)
	if txn.Attempts != 1 || st.Resigned != 0 {
		t.Fatalf("a new attempt was signed and recorded after the wallet's freeze committed (sweep %+v, attempts %d, status %s, recipient holds %d)",
			st, txn.Attempts, txn.Status, f.recipientUSDC(t))
	}
}

// A send lands while the node's history backend lags from a slot before
// it (statuses null with a context slot from before the send,
// getTransaction null, getSignaturesForAddress without it), the height
// current, for longer than the blockhash lives: no sweep signs it again
// or fails it; once the node catches up it ends confirmed with its first
// signature, the recipient paid once.
func TestSweep_LandedSendIsNotSignedAgainWhileTheNodeLags(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	f := newResignFixture(t, ln)
	ctx := context.Background()
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 1})
	var stuck uint64
	ln.Call(t, &stuck, "getSlot")
	ln.SetFaults(t, localnettest.Faults{HistorySlot: &stuck})
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 1})

	f.send(t)
	f.wantRecipientHolds(t, f.amount)

	// Past the blockhash's life and the sweep's margin, several sweeps.
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	for i := range 5 {
		st, err := f.eng.Sweep(ctx)
		if err != nil || st.Resigned != 0 || st.Failed != 0 || st.Confirmed != 0 {
			t.Fatalf("sweep %d while the node lags: %+v %v", i, st, err)
		}
		ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 200})
	}
	if txn := f.row(t); txn.Status != payment.TxPending || txn.Attempts != 1 || txn.Signature != f.firstSignature || txn.ExpirySlot == 0 {
		t.Fatalf("while the node lags: status %s, attempts %d, signature %s (first %s), expiry slot %d",
			txn.Status, txn.Attempts, txn.Signature, f.firstSignature, txn.ExpirySlot)
	}

	ln.SetFaults(t, localnettest.Faults{})
	txn := f.sweepUntil(t, payment.TxConfirmed)
	if txn.Attempts != 1 || txn.Signature != f.firstSignature {
		t.Fatalf("confirmed as attempt %d, signature %s (first %s)", txn.Attempts, txn.Signature, f.firstSignature)
	}
	f.wantRecipientHolds(t, f.amount)
	if n := f.countWhere(t, "transaction_attempts", "true"); n != 0 {
		t.Fatalf("%d earlier attempts recorded", n)
	}
	if n := f.countWhere(t, "events", "kind = 'tx.sent'"); n != 1 {
		t.Fatalf("%d tx.sent events", n)
	}
	if reserved, _ := payment.ReservedToday(ctx, f.eng.DB, f.w.ID, time.Now()); reserved != f.amount {
		t.Fatalf("reserved %d, want %d (counted once)", reserved, f.amount)
	}
}
