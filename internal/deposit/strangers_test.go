package deposit_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	associatedtokenaccount "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// A stranger's token accounts made for a wallet are watched only while
// they hold money: an empty one is never watched, and one emptied and
// closed stops being watched once its last transactions are examined.
// The wallet's address and its associated account are always watched.
func TestWatcher_EmptyAndClosedTokenAccountsOfStrangersAreNotWatched(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	a := wallettest.Create(t, db, mk.Sealer, acc.ID, "a")
	ln.SetLamports(t, a.Pubkey, solana.LamportsPerSOL)
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}, ListEvery: time.Nanosecond}
	ctx := context.Background()
	scan := func() {
		t.Helper()
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ata, _ := solana.Devnet.AssociatedUSDC(a.PublicKey())
	from := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
	empty := from.NewTokenAccount(t, a.PublicKey())
	funded := from.NewTokenAccount(t, a.PublicKey())
	from.TransferUSDCToAccount(t, funded, 1_000_000)
	scan()
	scan()
	if got := watchedOf(t, db, a); len(got) != 3 || !got[a.Pubkey] || !got[ata.String()] || !got[funded.String()] || got[empty.String()] {
		t.Fatalf("watched %v, want the address, the associated account and the funded one", got)
	}
	// The wallet empties the funded account into its associated one and
	// closes it.
	signAs(t, db, mk, c, a, []sol.Instruction{
		associatedtokenaccount.NewCreateIdempotentInstruction(a.PublicKey(), a.PublicKey(), solana.DevnetUSDCMint).Build(),
		token.NewTransferInstruction(1_000_000, funded, ata, a.PublicKey(), nil).Build(),
		token.NewCloseAccountInstruction(funded, a.PublicKey(), a.PublicKey(), nil).Build(),
	})
	for range 3 {
		scan()
	}
	if got := watchedOf(t, db, a); len(got) != 2 || !got[a.Pubkey] || !got[ata.String()] {
		t.Fatalf("watched %v, want only the address and the associated account", got)
	}
	if got := depositsOf(t, db, a); len(got) != 1 || got[0].Amount != 1_000_000 {
		t.Fatalf("deposits %+v, want the 1 USDC", got)
	}
	if out := outflowsOf(t, db, a); out["usdc"] != 0 {
		t.Fatalf("moving USDC between the wallet's own accounts is an outflow: %v", out)
	}
}

// Thousands of token accounts made for a wallet by a stranger are not
// all watched: at most 32 beside its associated account, those holding
// the most; a deposit to the associated account is still found.
func TestWatcher_WatchesABoundedNumberOfAWalletsTokenAccounts(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	_, a := wallettest.New(t, db)
	planted := map[string]int{}
	for i := range 40 {
		k := sol.NewWallet().PublicKey()
		planted[k.String()] = i + 1
		plantTokenAccount(t, ln, k, solana.DevnetUSDCMint, a.PublicKey(), uint64(i+1))
	}
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}, ListEvery: time.Nanosecond}
	ctx := context.Background()
	for range 2 {
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ata, _ := solana.Devnet.AssociatedUSDC(a.PublicKey())
	got := watchedOf(t, db, a)
	if len(got) != 2+32 || !got[a.Pubkey] || !got[ata.String()] {
		t.Fatalf("%d watched, want the address, the associated account and 32 more", len(got))
	}
	for addr := range got {
		if n, ok := planted[addr]; ok && n < 9 {
			t.Fatalf("an account holding %d is watched, want the 32 largest of 1..40", n)
		}
	}
	from := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
	sig := from.TransferUSDC(t, a.PublicKey(), 2_000_000)
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if d := depositsOf(t, db, a); len(d) != 1 || d[0].Signature != sig {
		t.Fatalf("deposits %+v, want %s", d, sig)
	}
}

// A wallet whose token accounts cannot be listed (its node call fails)
// holds back no other wallet: their deposits are found in the same scan,
// and its listing is tried again later, not at every scan.
func TestWatcher_AWalletWhoseListingFailsHoldsBackNoOther(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	a, b := wallettest.Create(t, db, mk.Sealer, acc.ID, "a"), wallettest.Create(t, db, mk.Sealer, acc.ID, "b")
	node := newRPCFault(t, ln.URL, func(method, params string) string {
		if method == "getTokenAccountsByOwner" && strings.Contains(params, a.Pubkey) {
			return "fail"
		}
		return ""
	})
	c := solana.NewClient(node.URL, solana.Devnet, 5*time.Second)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}, ListEvery: time.Nanosecond}
	from := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
	sig := from.TransferUSDC(t, b.PublicKey(), 1_000_000)
	ctx := context.Background()
	_, _ = watcher.Scan(ctx)
	if d := depositsOf(t, db, b); len(d) != 1 || d[0].Signature != sig {
		t.Fatalf("the other wallet's deposits %+v, want %s", d, sig)
	}
	listed := node.Calls("getTokenAccountsByOwner")
	_, _ = watcher.Scan(ctx)
	// One listing per token program (SPL Token, Token-2022).
	if n := node.Calls("getTokenAccountsByOwner") - listed; n != 2 {
		t.Fatalf("%d listings in the next scan, want 2 (the other wallet's, one per token program; the failing one waits)", n)
	}
}

// A wallet whose transactions cannot be read waits before it is read
// again, while the other wallets' deposits are found; once the node
// answers again, its deposit is found too.
func TestWatcher_AWalletWhoseReadsFailWaitsWhileOthersGoOn(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	a, b := wallettest.Create(t, db, mk.Sealer, acc.ID, "a"), wallettest.Create(t, db, mk.Sealer, acc.ID, "b")
	ataA, _ := solana.Devnet.AssociatedUSDC(a.PublicKey())
	var healed atomic.Bool
	node := newRPCFault(t, ln.URL, func(method, params string) string {
		if !healed.Load() && method == "getSignaturesForAddress" && strings.Contains(params, ataA.String()) {
			return "fail"
		}
		return ""
	})
	c := solana.NewClient(node.URL, solana.Devnet, 5*time.Second)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}}
	ctx := context.Background()
	_, _ = watcher.Scan(ctx)
	from := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
	sigA := from.TransferUSDC(t, a.PublicKey(), 1_000_000)
	sigB := from.TransferUSDC(t, b.PublicKey(), 2_000_000)
	_, _ = watcher.Scan(ctx)
	if d := depositsOf(t, db, b); len(d) != 1 || d[0].Signature != sigB {
		t.Fatalf("the other wallet's deposits %+v, want %s", d, sigB)
	}
	asked := node.Calls("getSignaturesForAddress")
	_, _ = watcher.Scan(ctx)
	if n := node.Calls("getSignaturesForAddress") - asked; n != 0 {
		t.Fatalf("the failing wallet was read again at once (%d calls)", n)
	}
	healed.Store(true)
	deadline := time.Now().Add(time.Minute)
	for len(depositsOf(t, db, a)) == 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		_, _ = watcher.Scan(ctx)
	}
	if d := depositsOf(t, db, a); len(d) != 1 || d[0].Signature != sigA {
		t.Fatalf("the wallet's deposits once its node answers: %+v, want %s", d, sigA)
	}
}

// A scan whose balance reads overrun its time (a node that holds some
// calls) still examines what it read, and the next scans read on from
// where it stopped: a deposit is found however the watched accounts fall
// into calls.
func TestWatcher_AScanPastItsTimeExaminesWhatItRead(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	a := wallettest.Create(t, db, mk.Sealer, acc.ID, "a")
	// Enough watched accounts for three calls of 100.
	for range 7 {
		o := wallettest.Create(t, db, mk.Sealer, acc.ID, "other")
		for range 32 {
			plantTokenAccount(t, ln, sol.NewWallet().PublicKey(), solana.DevnetUSDCMint, o.PublicKey(), 5)
		}
	}
	ata, _ := solana.Devnet.AssociatedUSDC(a.PublicKey())
	// The node answers the balance reads that include the wallet's
	// associated account, and holds the others until the caller gives up.
	node := newRPCFault(t, ln.URL, func(method, params string) string {
		if method == "getMultipleAccounts" && !strings.Contains(params, ata.String()) {
			return "hang"
		}
		return ""
	})
	c := solana.NewClient(node.URL, solana.Devnet, 5*time.Second)
	listing := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)},
		ListEvery: time.Nanosecond, ListPerScan: 100}
	ctx := context.Background()
	if _, err := listing.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var watched int
	if err := db.NewRaw(`SELECT count(*) FROM watched_accounts`).Scan(ctx, &watched); err != nil || watched <= 200 {
		t.Fatalf("%d watched accounts, want more than 200 (%v)", watched, err)
	}
	from := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
	sig := from.TransferUSDC(t, a.PublicKey(), 1_000_000)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}}
	for range 4 {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, _ = watcher.Scan(sctx)
		cancel()
		if len(depositsOf(t, db, a)) > 0 {
			break
		}
	}
	if d := depositsOf(t, db, a); len(d) != 1 || d[0].Signature != sig {
		t.Fatalf("deposits %+v, want %s", d, sig)
	}
}

// Deposits below the account's minimums (by default 0.01 USDC, 0.001
// SOL) are recorded, marked below_minimum, and not announced; those at
// or above it are announced as before, and a minimum set to zero
// announces everything.
func TestWatcher_DepositsBelowTheMinimumAreRecordedNotAnnounced(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	acc, a := wallettest.New(t, db)
	ln.SetLamports(t, a.Pubkey, solana.LamportsPerSOL)
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}}
	ctx := context.Background()
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	from := chaintest.NewPayer(t, ln, 10_000_000, 10*solana.LamportsPerSOL)
	from.TransferUSDC(t, a.PublicKey(), 1)
	from.TransferUSDC(t, a.PublicKey(), 9_999)
	from.TransferSOL(t, a.PublicKey(), 999_999)
	from.TransferUSDC(t, a.PublicKey(), 10_000)
	from.TransferSOL(t, a.PublicKey(), 1_000_000)
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if n := received(t, db); n != 2 {
		t.Fatalf("%d tx.received events, want 2 (the deposits at the minimum)", n)
	}
	below := func() map[int64]bool {
		t.Helper()
		var rows []struct {
			Amount int64 `bun:"amount"`
			Below  bool  `bun:"below_minimum"`
		}
		if err := db.NewRaw(`SELECT amount, below_minimum FROM deposits WHERE wallet_id = ?`, a.ID).Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		out := map[int64]bool{}
		for _, r := range rows {
			out[r.Amount] = r.Below
		}
		return out
	}
	want := map[int64]bool{1: true, 9_999: true, 999_999: true, 10_000: false, 1_000_000: false}
	if got := below(); len(got) != len(want) {
		t.Fatalf("deposits %v, want %v", got, want)
	} else {
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("deposits (amount: below minimum) %v, want %v", got, want)
			}
		}
	}
	if _, err := db.NewRaw(`UPDATE accounts SET deposit_min_usd = 0 WHERE id = ?`, acc.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	from.TransferUSDC(t, a.PublicKey(), 1)
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if n := received(t, db); n != 3 {
		t.Fatalf("%d tx.received events, want 3 (no minimum for USDC now)", n)
	}
}
