package payment_test

import (
	"context"
	"encoding/json"
	"errors"
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

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/usdc"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// resignFixture is a fixture whose database URL and master key a child
// process can open too.
type resignFixture struct {
	fixture
	ln             *localnettest.Localnet
	dbURL, master  string
	to             string
	amount         usdc.Micros
	request        uuid.UUID
	firstSignature string
	sealer         *signer.Sealer
}

func newResignFixture(t *testing.T, ln *localnettest.Localnet) *resignFixture {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewURL(t, true)
	db, err := postgres.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	priv, pub, _ := signer.GenerateMasterKey()
	sealer, _ := signer.NewSealer(pub)
	ks, _ := signer.NewKeystore(priv)
	acc, err := auth.CreateAccount(ctx, db, solana.Devnet)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wallet.Create(ctx, db, sealer, acc.ID, "system", "w", policy.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	ln.SetLamports(t, w.Pubkey, 1_000_000_000)
	ln.SetTokenBalance(t, w.Pubkey, solana.DevnetUSDCMint.String(), 50_000_000)
	eng := &payment.Engine{DB: db, Signer: ks, FirstBroadcastGrace: time.Millisecond, Nodes: map[solana.Network]payment.Node{
		solana.Devnet: payment.NewNode(ln.URL, solana.Devnet, 5*time.Second),
	}}
	return &resignFixture{fixture: fixture{eng: eng, w: w, acc: acc}, ln: ln, dbURL: url, master: priv,
		to: sol.NewWallet().PublicKey().String(), amount: 1_250_000, sealer: sealer}
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
	r := payment.Request{ID: uuid.New(), AccountID: f.acc.ID, WalletID: f.w.ID, Network: solana.Devnet, To: f.to, Amount: f.amount}
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
	time.Sleep(5 * time.Millisecond) // past the grace
	if st, err := f.eng.Sweep(ctx); err != nil || st.Rebroadcast != 1 || st.Resigned != 0 || st.Failed != 0 {
		t.Fatalf("sweep before expiry %+v %v", st, err)
	}
	f.ln.SetFaults(t, localnettest.Faults{})
	f.ln.SetMinPriorityFee(t, 50_000)
	f.ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
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

func (f *resignFixture) recipientUSDC(t *testing.T) usdc.Micros {
	t.Helper()
	b, err := solana.NewClient(f.ln.URL, solana.Devnet, 0).Balance(context.Background(), sol.MustPublicKeyFromBase58(f.to))
	if err != nil {
		t.Fatal(err)
	}
	return b.USDC
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
	if got := f.recipientUSDC(t); got != f.amount {
		t.Fatalf("recipient holds %d, want %d (paid once)", got, f.amount)
	}
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
func TestIssue22ResignAfterExpiryLands(t *testing.T) {
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

// Attempts that keep expiring: a new one only after the current one
// expired (never while it is in flight), then failed with tx.failed after
// the last, the reservation released and nothing paid.
func TestIssue22ResignGivesUpAfterMaxAttempts(t *testing.T) {
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
	txn := f.row(t)
	if txn.Status != payment.TxFailed || txn.Attempts != payment.DefaultMaxAttempts || !strings.Contains(*txn.Error, "each of its 3 attempts") {
		t.Fatalf("transaction %s, %d attempts, error %v", txn.Status, txn.Attempts, txn.Error)
	}
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
	if got := f.recipientUSDC(t); got != 0 {
		t.Fatalf("recipient received %d", got)
	}
}

// A market above the fee cap when the payment would be signed again: it
// ends failed, saying so, rather than signing a transaction that cannot
// land.
func TestIssue22ResignAboveCapFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newResignFixture(t, localnettest.Start(t))
	f.eng.Fees = solana.FeePolicy{Percentile: 75, MaxMicroLamports: 10_000, MaxLamports: 1_000_000}
	f.sendUnseen(t) // the market is 50,000 µlamports from then on
	if st, err := f.eng.Sweep(ctx); err != nil || st.Resigned != 0 || st.Failed != 1 {
		t.Fatalf("sweep %+v %v", st, err)
	}
	txn := f.row(t)
	if txn.Status != payment.TxFailed || txn.Attempts != 1 || !strings.Contains(*txn.Error, "not signed again") || !strings.Contains(*txn.Error, "cap") {
		t.Fatalf("transaction %s, %d attempts, error %v", txn.Status, txn.Attempts, txn.Error)
	}
	if n := f.countWhere(t, "events", "kind = 'tx.failed'"); n != 1 {
		t.Fatalf("%d tx.failed events", n)
	}
	if reserved, _ := payment.ReservedToday(ctx, f.eng.DB, f.w.ID, time.Now()); reserved != 0 {
		t.Fatalf("reserved %d after failure", reserved)
	}
}

// Environment of the child process TestIssue22ResignSurvivesSIGKILL kills.
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
func TestIssue22ResignSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t) // one at a time: its market is shared
	for _, step := range []string{payment.StepSigned, payment.StepWritten, payment.StepRecorded, payment.StepBroadcast, payment.StepCounted} {
		t.Run(step, func(t *testing.T) {
			f := newResignFixture(t, ln)
			f.sendUnseen(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestIssue22ResignCrashChild$", "-test.count=1", "-test.v")
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

// TestIssue22ResignCrashChild is the worker TestIssue22ResignSurvivesSIGKILL
// runs and kills: one sweep, which SIGKILLs its own process at the named
// step.
func TestIssue22ResignCrashChild(t *testing.T) {
	step := os.Getenv(crashStepEnv)
	if step == "" {
		t.Skip("run by TestIssue22ResignSurvivesSIGKILL")
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
func TestIssue22ResignFrozenWalletFails(t *testing.T) {
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
	if txn := f.row(t); txn.Status != payment.TxFailed || txn.Attempts != 1 || !strings.Contains(*txn.Error, "frozen") {
		t.Fatalf("transaction %s, %d attempts, error %v", txn.Status, txn.Attempts, txn.Error)
	}
	if got := f.recipientUSDC(t); got != 0 {
		t.Fatalf("recipient received %d", got)
	}
}

// A new attempt the node refuses (the wallet has no SOL left for the fee)
// is never sent or signed again: it fails at its expiry with the node's
// reason.
func TestIssue22ResignRefusedAttemptFails(t *testing.T) {
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
	if txn := f.row(t); txn.Status != payment.TxFailed || txn.Attempts != 2 || !strings.Contains(*txn.Error, "refused by the node") {
		t.Fatalf("transaction %s, %d attempts, error %v", txn.Status, txn.Attempts, txn.Error)
	}
	if got := f.recipientUSDC(t); got != 0 {
		t.Fatalf("recipient received %d", got)
	}
}

// Two workers sweeping at once after the expiry: the payment is signed
// again once, and lands once.
func TestIssue22ResignConcurrentSweepsSignOnce(t *testing.T) {
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
