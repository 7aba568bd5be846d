package deposit_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// payManyAsService pays n sends of units USDC from w to the owner to at
// once, as the service does (the engine decides and signs each), and

// hotWallet is a wallet of the service on ln holding 10 SOL and 1,000
// USDC (given by the chain: no transaction shows them), in a database of
// its own, and the engine that pays from it.
func hotWallet(t *testing.T, ln *localnettest.Localnet) (*bun.DB, wallettest.MasterKey, wallet.Wallet, *payment.Engine) {
	t.Helper()
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	a := wallettest.Create(t, db, mk.Sealer, acc.ID, "hot")
	ln.SetLamports(t, a.Pubkey, 10*solana.LamportsPerSOL)
	ln.SetTokenBalance(t, a.Pubkey, solana.DevnetUSDCMint.String(), 1_000_000_000)
	eng := &payment.Engine{DB: db, Signer: mk.Keystore(t), Nodes: map[solana.Network]payment.Node{
		solana.Devnet: payment.NewNode(ln.URL, solana.Devnet, 5*time.Second),
	}}
	return db, mk, a, eng
}

// mustScan is one scan of w, which must not fail.
func mustScan(t *testing.T, w *deposit.Watcher) deposit.Stats {
	t.Helper()
	st, err := w.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// waits until all are confirmed; it returns their signatures.
func payManyAsService(t *testing.T, db *bun.DB, eng *payment.Engine, c *solana.Client, w wallet.Wallet, to sol.PublicKey, n int, units int64) []string {
	t.Helper()
	ctx := context.Background()
	sigs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := payment.Request{ID: uuid.New(), AccountID: w.AccountID, WalletID: w.ID, Network: solana.Devnet,
				To: to.String(), Amount: money.Quantity(money.Micros[money.USD](units))}
			if errs[i] = payment.Submit(ctx, db, &r, 10*time.Second); errs[i] != nil {
				return
			}
			if errs[i] = eng.Decide(ctx, r.ID); errs[i] != nil {
				return
			}
			o, err := payment.Final(ctx, db, r.ID)
			if err != nil || o == nil || o.Status != payment.Sent {
				errs[i] = fmt.Errorf("outcome %+v, %v", o, err)
				return
			}
			sigs[i] = o.Signature
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		waitConfirmed(t, c, sol.MustSignatureFromBase58(sigs[i]))
	}
	return sigs
}

// The service's own sends are not read back: their ledger rows come from
// what the service signed (the amount, the fee, the recipient's rent) once
// a node shows them landed, so a hot wallet's payments cost the watcher
// almost no getTransaction or getSignaturesForAddress. A stranger's
// deposit made among them is still recorded once, a transfer signed with
// the wallet's key outside the service is still an unexplained outflow
// (its transaction read once though it touched two watched accounts), and
// the ledger still equals the chain.
func TestWatcher_OwnPaymentsAreNotReadBack(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t) // its own: the calls are counted
	db, mk, a, eng := hotWallet(t, ln)
	watcher, c := newWatcher(ln, db)
	// The test pays about 25 sends a second: an audit every 5 minutes
	// (the default) would come once per 7,500 of them. It is run once, at
	// the end, and counted.
	watcher.AuditEvery = time.Hour
	ctx := context.Background()
	scan := func() deposit.Stats { t.Helper(); return mustScan(t, watcher) }
	scan()
	// The balances the chain was given (no transaction shows them) are
	// read from the first send's transaction.
	seller := sol.NewWallet().PublicKey()
	payManyAsService(t, db, eng, c, a, seller, 1, 10_000)
	scan()
	// Each send to a new recipient makes its account, paying its rent.
	for range 2 {
		payManyAsService(t, db, eng, c, a, sol.NewWallet().PublicKey(), 1, 10_000)
	}
	if st := scan(); st.Explained != 2 || st.Examined != 0 {
		t.Fatalf("sends that made their recipients' accounts: %+v, want both accounts explained", st)
	}
	ledgerMatchesChain(t, db, c, a)

	reads := func(calls map[string]int) int { return calls["getTransaction"] + calls["getSignaturesForAddress"] }
	ln.ResetCalls(t)
	const batches, per = 10, 10
	var gift, outside string
	for b := range batches {
		payManyAsService(t, db, eng, c, a, seller, per, 10_000)
		switch b {
		case batches / 2:
			scan()
			gift = chaintest.NewPayer(t, ln, 100_000_000, solana.LamportsPerSOL).TransferUSDC(t, a.PublicKey(), 7_000_000)
		case batches - 2:
			scan()
			before := ln.Calls(t)
			usdc := devnetAsset(t, "USDC")
			outside = signAs(t, db, mk, c, a, []sol.Instruction{
				transferIx(usdc, ataOf(t, a.PublicKey(), usdc), ataOf(t, seller, usdc), a.PublicKey(), 3_000_000, true),
			}).String()
			st := scan()
			after := ln.Calls(t)
			if st.Examined != 2 {
				t.Fatalf("scan after the outside transfer: %+v, want it examined through both accounts", st)
			}
			if n := after["getTransaction"] - before["getTransaction"]; n != 1 {
				t.Fatalf("a transaction touching two watched accounts read %d times in a scan, want once", n)
			}
		}
		scan()
	}
	scan()
	// The audit: both accounts' history read from their cursors, the
	// sends in their ledgers not read.
	watcher.AuditEvery = time.Nanosecond
	if st := scan(); st.Audited != 2 || st.Deposits != 0 {
		t.Fatalf("audit scan %+v: want both accounts audited and nothing new found", st)
	}
	watcher.AuditEvery = time.Hour
	calls := ln.Calls(t)
	payments := batches * per
	t.Logf("%d sends, a deposit and an outside transfer among them, one audit: %d getTransaction, %d getSignaturesForAddress, %d getSignatureStatuses, %d getMultipleAccounts",
		payments, calls["getTransaction"], calls["getSignaturesForAddress"], calls["getSignatureStatuses"], calls["getMultipleAccounts"])
	if n := reads(calls); float64(n) > 0.1*float64(payments) {
		t.Fatalf("%d transactions and signature lists read for %d of the service's payments, want at most %d", n, payments, payments/10)
	}

	deps := depositsOf(t, db, a)
	if len(deps) != 1 || deps[0].Signature != gift || deps[0].Amount != 7_000_000 {
		t.Fatalf("deposits %+v, want the stranger's %s once", deps, gift)
	}
	if n := received(t, db); n != 1 {
		t.Fatalf("%d tx.received, want 1", n)
	}
	if out := outflowsOf(t, db, a); len(out) != 2 || out[deposit.USDC] != 3_000_000 || out[deposit.SOL] != 5_000 {
		t.Fatalf("unexplained outflows %v, want the outside transfer's 3 USDC and its fee", out)
	}
	var sigs []string
	if err := db.NewRaw(`SELECT DISTINCT signature FROM unexplained_outflows WHERE wallet_id = ?`, a.ID).Scan(ctx, &sigs); err != nil {
		t.Fatal(err)
	}
	if len(sigs) != 1 || sigs[0] != outside {
		t.Fatalf("unexplained outflows %v, want %s", sigs, outside)
	}
	ledgerMatchesChain(t, db, c, a)
	// Every send is in the ledger of both accounts it touched, once.
	var n int
	if err := db.NewRaw(`SELECT count(*) FROM ledger l JOIN transactions t ON t.signature = l.signature WHERE t.wallet_id = ?`, a.ID).Scan(ctx, &n); err != nil {
		t.Fatal(err)
	}
	if want := 2 * (payments + 3); n != want {
		t.Fatalf("%d ledger rows of the service's sends, want %d", n, want)
	}
	// A snapshot finds the ledger and the chain agree.
	st, err := watcher.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Differences != 0 {
		t.Fatalf("snapshot %+v: the ledger differs from the chain", st)
	}
}

// A deposit (of USDC and of SOL) landing among the service's sends, and
// sends of which only some made their recipient's account (so which paid a
// rent is not known), are not explained by the sends: the changed accounts
// are read from history, the deposits recorded once, and the ledger still
// equals the chain at a snapshot. Once the stranger's money is read, the
// next sends are explained again without reading a transaction.
func TestWatcher_AChangeTheServicesPaymentsDoNotExplainIsReadFromHistory(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db, _, a, eng := hotWallet(t, ln)
	watcher, c := newWatcher(ln, db)
	ctx := context.Background()
	scan := func() deposit.Stats { t.Helper(); return mustScan(t, watcher) }
	noDifference := func() {
		t.Helper()
		ledgerMatchesChain(t, db, c, a)
		st, err := watcher.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Differences != 0 {
			t.Fatalf("snapshot %+v: the ledger differs from the chain", st)
		}
	}
	seller := sol.NewWallet().PublicKey()
	scan()
	payManyAsService(t, db, eng, c, a, seller, 1, 10_000)
	scan()

	payManyAsService(t, db, eng, c, a, seller, 3, 10_000)
	from := chaintest.NewPayer(t, ln, 100_000_000, solana.LamportsPerSOL)
	usdc := from.TransferUSDC(t, a.PublicKey(), 2_000_000)
	lamports := from.TransferSOL(t, a.PublicKey(), 50_000_000)
	payManyAsService(t, db, eng, c, a, seller, 3, 10_000)
	payManyAsService(t, db, eng, c, a, sol.NewWallet().PublicKey(), 1, 10_000)
	if st := scan(); st.Explained != 0 || st.Deposits != 2 {
		t.Fatalf("scan %+v: want both accounts read from history and both deposits found", st)
	}
	deps := depositsOf(t, db, a)
	if len(deps) != 2 || deps[0].Signature != usdc && deps[1].Signature != usdc || deps[0].Signature != lamports && deps[1].Signature != lamports {
		t.Fatalf("deposits %+v, want %s and %s", deps, usdc, lamports)
	}
	noDifference()

	payManyAsService(t, db, eng, c, a, seller, 5, 10_000)
	if st := scan(); st.Explained != 2 || st.Examined != 0 {
		t.Fatalf("scan %+v: want the sends explained without a read", st)
	}
	scan()
	if n := received(t, db); n != 2 {
		t.Fatalf("%d tx.received, want 2", n)
	}
	if out := outflowsOf(t, db, a); len(out) != 0 {
		t.Fatalf("the service's own payments recorded as unexplained: %v", out)
	}
	noDifference()
}

// Two watchers scanning at once explain each send once: one writes an
// account's ledger rows and moves its cursor, the other finds it moved
// (or held) and leaves it.
func TestWatcher_TwoWatchersExplainEachSendOnce(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db, _, a, eng := hotWallet(t, ln)
	one, c := newWatcher(ln, db)
	two, _ := newWatcher(ln, db)
	ctx := context.Background()
	seller := sol.NewWallet().PublicKey()
	if _, err := one.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	payManyAsService(t, db, eng, c, a, seller, 1, 10_000)
	if _, err := one.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		payManyAsService(t, db, eng, c, a, seller, 8, 10_000)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, w := range []*deposit.Watcher{one, two} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = w.Scan(ctx)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := one.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	ledgerMatchesChain(t, db, c, a)
	var n int
	if err := db.NewRaw(`SELECT count(*) FROM ledger l JOIN transactions t ON t.signature = l.signature WHERE t.wallet_id = ?`, a.ID).Scan(ctx, &n); err != nil {
		t.Fatal(err)
	}
	if n != 2*25 {
		t.Fatalf("%d ledger rows of 25 sends, want 50", n)
	}
	if out := outflowsOf(t, db, a); len(out) != 0 {
		t.Fatalf("the service's own payments recorded as unexplained: %v", out)
	}
}

// A stranger's deposit and an outflow of the same amount signed with the
// wallet's key outside the service, landed with a send of the service
// between two scans on the wallet's USDC account, cancel out in its
// balance: the send explains the change, but the account's cursor stays
// where its history was last read, and the audit read (AuditEvery) finds
// both from there: the deposit recorded once with its tx.received, the
// outflow an unexplained outflow, the send's ledger row set right and not
// read, and nothing counted twice by later scans.
func TestWatcher_ADepositSweptAmongTheServicesPaymentsIsFoundByTheAudit(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t) // its own: the audit's calls are counted
	db, mk, a, eng := hotWallet(t, ln)
	watcher, c := newWatcher(ln, db)
	watcher.AuditEvery = time.Hour // no audit until the test says so
	ctx := context.Background()
	scan := func() deposit.Stats { t.Helper(); return mustScan(t, watcher) }
	scan()
	seller := sol.NewWallet().PublicKey()
	payManyAsService(t, db, eng, c, a, seller, 1, 10_000)
	scan()
	usdc := devnetAsset(t, "USDC")
	account := ataOf(t, a.PublicKey(), usdc)
	if st := scan(); st.Changed != 0 {
		t.Fatalf("scan %+v: nothing should have changed", st)
	}

	// Between two scans: the deposit, a send of the service, the sweep.
	const x = 7_000_000
	gift := chaintest.NewPayer(t, ln, 100_000_000, solana.LamportsPerSOL).TransferUSDC(t, a.PublicKey(), x)
	send := payManyAsService(t, db, eng, c, a, seller, 1, 10_000)[0]
	sweep := signAs(t, db, mk, c, a, []sol.Instruction{
		transferIx(usdc, account, ataOf(t, seller, usdc), a.PublicKey(), x, true),
	}).String()
	st := scan()
	if st.Explained != 1 || st.Audited != 0 {
		t.Fatalf("scan %+v: want the USDC account's change explained by the send (its address's, fee of the sweep, read)", st)
	}
	var cursor string
	if err := db.NewRaw(`SELECT last_signature FROM watched_accounts WHERE address = ?`, account.String()).Scan(ctx, &cursor); err != nil {
		t.Fatal(err)
	}
	if cursor == send || cursor == sweep || cursor == gift {
		t.Fatalf("the explanation moved the cursor to %s, past transactions it did not read", cursor)
	}

	// The audit reads the account's history from its cursor.
	watcher.AuditEvery = time.Nanosecond
	before := ln.Calls(t)
	st = scan()
	after := ln.Calls(t)
	if st.Audited != 1 || st.Deposits != 1 {
		t.Fatalf("audit scan %+v: want the USDC account audited and the deposit found", st)
	}
	if n := after["getSignaturesForAddress"] - before["getSignaturesForAddress"]; n != 1 {
		t.Fatalf("the audit listed signatures %d times, want once", n)
	}
	if n := after["getTransaction"] - before["getTransaction"]; n != 2 {
		t.Fatalf("the audit read %d transactions, want 2: the deposit and the sweep, not the send (in the account's ledger)", n)
	}
	deps := depositsOf(t, db, a)
	if len(deps) != 1 || deps[0].Signature != gift || deps[0].Amount != x {
		t.Fatalf("deposits %+v, want the stranger's %s once", deps, gift)
	}
	if n := received(t, db); n != 1 {
		t.Fatalf("%d tx.received, want 1", n)
	}
	if out := outflowsOf(t, db, a); out[deposit.USDC] != x {
		t.Fatalf("unexplained outflows %v, want the sweep's %d USDC", out, x)
	}
	var outSig string
	if err := db.NewRaw(`SELECT signature FROM unexplained_outflows WHERE wallet_id = ? AND asset = 'usdc'`, a.ID).Scan(ctx, &outSig); err != nil {
		t.Fatal(err)
	}
	if outSig != sweep {
		t.Fatalf("the USDC outflow is %s, want the sweep %s", outSig, sweep)
	}
	// The send's row, written before the deposit was known, is the
	// chain's balance after it: the deposit's minus the send.
	var rows []struct {
		Signature string `bun:"signature"`
		Balance   int64  `bun:"balance"`
	}
	if err := db.NewRaw(`SELECT signature, balance FROM ledger WHERE address = ? ORDER BY slot, id`, account.String()).Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	bal := map[string]int64{}
	for _, r := range rows {
		bal[r.Signature] = r.Balance
	}
	if bal[send] != bal[gift]-10_000 || bal[sweep] != bal[send]-x {
		t.Fatalf("ledger %+v: want the gift, the send (gift's - 10000), the sweep (send's - %d)", rows, x)
	}
	ledgerMatchesChain(t, db, c, a)

	// Later scans count nothing again.
	for range 2 {
		if st := scan(); st.Deposits != 0 || st.Examined != 0 {
			t.Fatalf("scan after the audit %+v: want nothing found again", st)
		}
	}
	if n := received(t, db); n != 1 {
		t.Fatalf("%d tx.received, want 1", n)
	}
	if n := eventsOf(t, db, "wallet.unexplained_outflow"); n != 2 {
		t.Fatalf("%d wallet.unexplained_outflow events, want 2 (the sweep's USDC and its fee)", n)
	}
	if out := outflowsOf(t, db, a); len(out) != 2 || out[deposit.USDC] != x || out[deposit.SOL] != 5_000 {
		t.Fatalf("unexplained outflows %v, want the sweep's %d USDC and its fee", out, x)
	}
	snap, err := watcher.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Differences != 0 {
		t.Fatalf("snapshot %+v: the ledger differs from the chain", snap)
	}
}
