package solana_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

func newWallet(t *testing.T) (sol.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, secret, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return sol.PublicKeyFromBytes(pub), secret
}

// fundedWallet is a new wallet holding 1 SOL on ln and usdcMicros of
// devnet USDC (no USDC account when 0).
func fundedWallet(t *testing.T, ln *localnettest.Localnet, usdcMicros uint64) (sol.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	owner, secret := newWallet(t)
	ln.SetLamports(t, owner.String(), solana.LamportsPerSOL)
	if usdcMicros > 0 {
		ln.SetTokenBalance(t, owner.String(), solana.DevnetUSDCMint.String(), usdcMicros)
	}
	return owner, secret
}

// signedTransfer is a transfer of 1 USDC with memo from a fundedWallet
// holding usdcMicros to a new wallet, signed over the latest blockhash, and
// the wallet it is from.
func signedTransfer(t *testing.T, ln *localnettest.Localnet, usdcMicros uint64, memo string) ([]byte, sol.Signature, sol.PublicKey) {
	t.Helper()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	owner, secret := fundedWallet(t, ln, usdcMicros)
	to, _ := newWallet(t)
	bh, err := c.LatestBlockhash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.BuildTransfer(solana.Transfer{Owner: owner, To: to, Amount: 1_000_000, Memo: memo}, bh)
	if err != nil {
		t.Fatal(err)
	}
	raw, sig, err := solana.Sign(context.Background(), tx, signer.Plain(secret))
	if err != nil {
		t.Fatal(err)
	}
	return raw, sig, owner
}

// A transfer to a recipient with no USDC account creates it, moves the
// exact amount, and carries the memo on-chain.
func TestTransferCreatesRecipientAccountWithMemo(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	owner, secret := fundedWallet(t, ln, 10_000_000)
	to, _ := newWallet(t)

	cache := solana.NewBlockhashCache(c, time.Second)
	bh, err := cache.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := cache.Get(ctx); again != bh {
		t.Fatal("cache fetched again within its age")
	}
	tx, err := c.BuildTransfer(solana.Transfer{Owner: owner, To: to, Amount: 2_500_001, Memo: "invoice 42", ComputeUnitPrice: 1000}, bh)
	if err != nil {
		t.Fatal(err)
	}
	raw, sig, err := solana.Sign(context.Background(), tx, signer.Plain(secret))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Broadcast(ctx, raw)
	if err != nil || got != sig {
		t.Fatalf("broadcast: %v %v (want %v)", got, err, sig)
	}
	// The same bytes again are harmless.
	if again, err := c.Broadcast(ctx, raw); err != nil && again != sig {
		t.Fatalf("re-broadcast: %v %v", again, err)
	}
	waitConfirmed(t, c, sig)

	b, err := c.Balance(ctx, to)
	if err != nil || b.Units(solana.Devnet.USDCMint()) != 2_500_001 {
		t.Fatalf("recipient: %+v %v", b, err)
	}
	ob, _ := c.Balance(ctx, owner)
	if ob.Units(solana.Devnet.USDCMint()) != 10_000_000-2_500_001 || ob.Lamports >= solana.LamportsPerSOL {
		t.Fatalf("sender: %+v (rent and fee must come from the wallet)", ob)
	}
	maxV := uint64(0)
	txr, err := c.RPC().GetTransaction(ctx, sig, &rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &maxV})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(txr.Meta.LogMessages, "\n"), "invoice 42") {
		t.Fatalf("memo not in logs: %v", txr.Meta.LogMessages)
	}
}

func TestPreflightNamesWhatIsShort(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	to, _ := newWallet(t)
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name            string
		lamports, micro uint64
		want            string
	}{
		{"not enough USDC", solana.LamportsPerSOL, 1_000_000, "USDC"},
		{"no SOL for fees", 0, 10_000_000, "SOL"},
	}
	for _, tc := range cases {
		owner, secret := newWallet(t)
		if tc.lamports > 0 {
			ln.SetLamports(t, owner.String(), tc.lamports)
		}
		ln.SetTokenBalance(t, owner.String(), solana.DevnetUSDCMint.String(), tc.micro)
		tx, _ := c.BuildTransfer(solana.Transfer{Owner: owner, To: to, Amount: 5_000_000}, bh)
		raw, _, _ := solana.Sign(context.Background(), tx, signer.Plain(secret))
		_, err := c.Broadcast(ctx, raw)
		var pe *solana.PreflightError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: %v, want a PreflightError", tc.name, err)
		}
		if what, ok := pe.InsufficientFunds(); !ok || what != tc.want {
			t.Fatalf("%s: short of %q (%v); %s %v", tc.name, what, ok, pe.Message, pe.Logs)
		}
	}
}

func waitConfirmed(t *testing.T, c *solana.Client, sig sol.Signature) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := c.RPC().GetSignatureStatuses(context.Background(), false, sig)
		if err == nil && len(res.Value) == 1 && res.Value[0] != nil {
			st := res.Value[0]
			if st.Err != nil {
				t.Fatalf("transaction failed: %v", st.Err)
			}
			if st.ConfirmationStatus == rpc.ConfirmationStatusConfirmed || st.ConfirmationStatus == rpc.ConfirmationStatusFinalized {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("not confirmed in 20s")
}

// Run keeps the cache fresh in the background: a Get after the cache's age
// has passed still answers without waiting for a fetch of its own.
func TestBlockhashCacheRun(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	cache := solana.NewBlockhashCache(c, 400*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cache.Run(ctx)
	first, err := cache.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		bh, err := cache.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if bh.Hash != first.Hash {
			if bh.LastValidBlockHeight < first.LastValidBlockHeight {
				t.Fatalf("refreshed to an older blockhash: %d < %d", bh.LastValidBlockHeight, first.LastValidBlockHeight)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("blockhash never refreshed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Preflight answers that are not verdicts on the transaction.
func TestPreflightNotRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		msg                      string
		blockhash, alreadyLanded bool
	}{
		{"Transaction simulation failed: Blockhash not found", true, false},
		{"Transaction simulation failed: This transaction has already been processed", false, true},
		{"Transaction simulation failed: Error processing Instruction 3: custom program error: 0x1", false, false},
	}
	for _, c := range cases {
		pe := &solana.PreflightError{Message: c.msg}
		if pe.BlockhashNotFound() != c.blockhash || pe.AlreadyProcessed() != c.alreadyLanded {
			t.Errorf("%q: blockhash %v, already %v", c.msg, pe.BlockhashNotFound(), pe.AlreadyProcessed())
		}
	}
}

// Two transfers identical but for their reference are distinct
// transactions (ed25519 is deterministic: without it they would share
// one signature and only one could land).
func TestReferenceMakesTransfersDistinct(t *testing.T) {
	t.Parallel()
	c := solana.NewClient("http://127.0.0.1:1", solana.Devnet, time.Second)
	owner := sol.NewWallet()
	bh := solana.Blockhash{Hash: sol.Hash{1}, LastValidBlockHeight: 10}
	to := sol.NewWallet().PublicKey()
	build := func(ref sol.PublicKey) sol.Signature {
		tx, err := c.BuildTransfer(solana.Transfer{Owner: owner.PublicKey(), To: to, Amount: 1, Reference: ref}, bh)
		if err != nil {
			t.Fatal(err)
		}
		_, sig, err := solana.Sign(context.Background(), tx, signer.Plain(ed25519.PrivateKey(owner.PrivateKey)))
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	a, b := solana.ReferenceFor([16]byte{1}), solana.ReferenceFor([16]byte{2})
	first, again := build(a), build(a)
	if first != again {
		t.Fatal("same transfer signed twice differs")
	}
	if first == build(b) {
		t.Fatal("different references give the same transaction")
	}
}

// A stalled node does not hold callers past their context; concurrent
// callers share one fetch.
func TestBlockhashCacheGetHonoursContext(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	stall := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		<-stall
	}))
	defer srv.Close()
	defer close(stall)
	cache := solana.NewBlockhashCache(solana.NewClient(srv.URL, solana.Devnet, 10*time.Second), 0)
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			if _, err := cache.Get(ctx); !errors.Is(err, solana.ErrRPC) || time.Since(start) > 2*time.Second {
				t.Errorf("Get on a stalled node: %v after %s", err, time.Since(start))
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1 shared", n)
	}
}

// CheckTransferSize knows a transfer's signed size from its memo alone:
// it agrees with the real signed bytes, refuses 200 four-byte characters
// (the node would answer -32602), and Sign refuses what does not fit.
func TestTransferSize(t *testing.T) {
	t.Parallel()
	c := solana.NewClient("http://127.0.0.1:1", solana.Devnet, 0)
	owner, secret := newWallet(t)
	to, _ := newWallet(t)
	ref, _ := newWallet(t)
	bh := solana.Blockhash{Hash: sol.Hash(ref), LastValidBlockHeight: 1}
	// A Token-2022 transfer is as large as an SPL Token one: the same
	// accounts under another program id.
	for _, tk := range []solana.Token{solana.Devnet.USDC(), pyusd} {
		fits := 0
		for n := 0; n <= 800; n += 7 {
			memo := strings.Repeat("x", n)
			tx, err := c.BuildTransfer(solana.Transfer{Token: tk, Owner: owner, To: to, Amount: 1, Memo: memo, ComputeUnitPrice: 5000, Reference: ref}, bh)
			if err != nil {
				t.Fatal(err)
			}
			raw, _, signErr := solana.Sign(context.Background(), tx, signer.Plain(secret))
			checkErr := solana.CheckTokenTransferSize(solana.Devnet, tk, memo)
			var tl *solana.TooLargeError
			switch {
			case signErr == nil && checkErr == nil:
				fits = n
			case errors.As(signErr, &tl) && errors.As(checkErr, &tl):
				if tl.Size <= solana.MaxTransactionSize {
					t.Fatalf("%s: %d-byte memo refused at %d bytes", tk.Symbol, n, tl.Size)
				}
			default:
				t.Fatalf("%s: %d-byte memo: sign %v (%d bytes), check %v", tk.Symbol, n, signErr, len(raw), checkErr)
			}
		}
		if fits < 700 || fits > 740 {
			t.Fatalf("%s: the longest fitting memo probed is %d bytes", tk.Symbol, fits)
		}
	}
	err := solana.CheckTransferSize(solana.Devnet, strings.Repeat("😀", 200))
	if err == nil || err.Error() != "memo too long: the transaction would be 1307 bytes, Solana allows 1232" {
		t.Fatalf("200 emoji: %v", err)
	}
}

// The node's verdicts on a transaction itself (here -32602, too large)
// are refusals, not transient failures to retry.
func TestOversizedBroadcastIsARefusal(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	_, err := c.Broadcast(context.Background(), make([]byte, solana.MaxTransactionSize+75))
	var pe *solana.PreflightError
	if !errors.As(err, &pe) || pe.Code != -32602 || pe.BlockhashNotFound() || pe.AlreadyProcessed() {
		t.Fatalf("broadcast of 1307 bytes: %v", err)
	}
}

// A node too slow to answer a fresh blockhash in time: the cache serves
// the one it fetched moments ago (still valid for most of a minute).
func TestBlockhashCacheServesARecentOneWhenTheNodeIsSlow(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	cache := solana.NewBlockhashCache(c, 50*time.Millisecond)
	first, err := cache.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ln.SetFaults(t, localnettest.Faults{LatencyMs: 1500})
	time.Sleep(100 * time.Millisecond) // past maxAge: a fetch starts
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	got, err := cache.Get(ctx)
	if err != nil || got != first {
		t.Fatalf("got %v %v, want the cached %v", got, err, first)
	}
	ln.SetFaults(t, localnettest.Faults{})
}

// A sponsored transfer priced for a recipient whose USDC account exists
// must not make it when the account was closed meanwhile, or the fee
// payer pays rent its budget never counted. The compute limit alone does
// not stop it: for a recipient whose account bump is low (<= 243, one key
// in 4,096) the limit grows faster with each bump try than creating
// costs. So the sponsored transfer does not offer to make the account.
func TestTransfer_SponsoredNeverCreatesTheRecipientsAccount(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	owner, secret := fundedWallet(t, ln, 10_000_000)
	payer, psecret := fundedWallet(t, ln, 0)
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	to, _ := localnettest.LowBumpOwner(t, 243)
	if exists, err := c.TokenAccountExists(ctx, to); err != nil || exists {
		t.Fatalf("recipient's account exists %v %v, want a new one", exists, err)
	}
	// Priced as if the account existed (a KnownAccounts hit), sponsored.
	tr := solana.Transfer{Owner: owner, FeePayer: payer, To: to, Amount: 1, Reference: to, RecipientAccountExists: true}
	tx, err := c.BuildTransfer(tr, bh)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := solana.Sign(context.Background(), tx, signer.Plain(secret, psecret)); err != nil {
		t.Fatal(err)
	}
	res, err := c.RPC().SimulateTransactionWithOpts(ctx, tx, &rpc.SimulateTransactionOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Err == nil {
		limit, _ := solana.TransferComputeUnits(solana.Devnet, tr)
		t.Fatalf("a transfer priced without creating the recipient's account created it within its limit (%d units, used %d): "+
			"the fee payer pays rent its budget never counted", limit, *res.Value.UnitsConsumed)
	}
}

// landedTx is a confirmed transaction as getTransaction answers it (json).
type landedTx struct {
	Meta struct {
		Err               any `json:"err"`
		Fee               uint64
		PostTokenBalances []struct {
			Mint, Owner   string
			ProgramID     string                  `json:"programId"`
			UITokenAmount struct{ Amount string } `json:"uiTokenAmount"`
		}
	}
	Transaction struct {
		Message struct {
			AccountKeys  []string
			Instructions []struct {
				ProgramIDIndex int
				Accounts       []int
				Data           string
			}
		}
	}
}

// programs are the programs of the transaction's top-level instructions,
// in order.
func (l landedTx) programs() []string {
	var out []string
	for _, ix := range l.Transaction.Message.Instructions {
		out = append(out, l.Transaction.Message.AccountKeys[ix.ProgramIDIndex])
	}
	return out
}

// USDC, USDT and EURC (SPL Token) and PYUSD (Token-2022) sent from one
// wallet each land: the recipient's account is made under the token's
// program and receives the exact amount, and the landedTx transaction's
// CreateIdempotent and TransferChecked go through that program (for
// PYUSD the memo comes just before the transfer, as a recipient
// requiring memos needs).
func TestTransfer_EachTokenLandsThroughItsProgram(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	owner, secret := fundedWallet(t, ln, 0)
	tokens := []solana.Token{solana.Devnet.USDC(), usdt, eurc, pyusd}
	for _, tk := range tokens {
		ln.SetTokenBalance(t, owner.String(), tk.Mint.String(), 10_000_000)
	}
	ata, cb, memoV2 := sol.SPLAssociatedTokenAccountProgramID.String(), sol.ComputeBudget.String(), sol.MemoProgramID.String()
	for i, tk := range tokens {
		to, _ := newWallet(t)
		amount := money.Micros[money.USD](1_000_000 + i)
		bh, err := c.LatestBlockhash(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := c.BuildTransfer(solana.Transfer{Token: tk, Owner: owner, To: to, Amount: money.Quantity(amount), Memo: "paid in " + tk.Symbol}, bh)
		if err != nil {
			t.Fatal(err)
		}
		raw, sig, err := solana.Sign(ctx, tx, signer.Plain(secret))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Broadcast(ctx, raw); err != nil {
			t.Fatalf("%s: %v", tk.Symbol, err)
		}
		waitConfirmed(t, c, sig)
		var l landedTx
		ln.Call(t, &l, "getTransaction", sig.String(), map[string]any{"encoding": "json", "commitment": "confirmed"})
		want := []string{cb, cb, ata, tk.Program.String(), memoV2}
		if tk.Is2022() {
			want = []string{cb, cb, ata, memoV2, tk.Program.String()}
		}
		if got := l.programs(); l.Meta.Err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%s: programs %v (err %v), want %v", tk.Symbol, got, l.Meta.Err, want)
		}
		create := l.Transaction.Message.Instructions[2]
		if keys := l.Transaction.Message.AccountKeys; keys[create.Accounts[len(create.Accounts)-1]] != tk.Program.String() {
			t.Fatalf("%s: CreateIdempotent names token program %s", tk.Symbol, keys[create.Accounts[len(create.Accounts)-1]])
		}
		got := ""
		for _, b := range l.Meta.PostTokenBalances {
			if b.Owner == to.String() && b.Mint == tk.Mint.String() && b.ProgramID == tk.Program.String() {
				got = b.UITokenAmount.Amount
			}
		}
		if got != strconv.FormatInt(int64(amount), 10) {
			t.Fatalf("%s: the recipient holds %q under %s, want %d: %+v", tk.Symbol, got, tk.Program, amount, l.Meta.PostTokenBalances)
		}
		if exists, err := c.TokenAccountExistsOf(ctx, to, tk); err != nil || !exists {
			t.Fatalf("%s: recipient's account exists %v %v", tk.Symbol, exists, err)
		}
	}
}

// A fee payer sponsoring a PYUSD transfer to a recipient without an
// account pays exactly the fee and the rent TokenTerms names for it (a
// 187-byte Token-2022 account, not SPL Token's 165 bytes); the wallet
// pays nothing in SOL.
func TestTransfer_SponsoredPYUSDPaysTheRentOfItsAccount(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	owner, secret := fundedWallet(t, ln, 0)
	ln.SetTokenBalance(t, owner.String(), pyusd.Mint.String(), 10_000_000)
	payer, psecret := fundedWallet(t, ln, 0)
	to, _ := newWallet(t)
	terms, err := c.TokenTerms(ctx, pyusd)
	if err != nil {
		t.Fatal(err)
	}
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr := solana.Transfer{Token: pyusd, Owner: owner, FeePayer: payer, To: to, Amount: 2_500_000, ComputeUnitPrice: 10_000}
	units, err := solana.TransferComputeUnits(solana.Devnet, tr)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.BuildTransfer(tr, bh)
	if err != nil {
		t.Fatal(err)
	}
	raw, sig, err := solana.Sign(ctx, tx, signer.Plain(secret, psecret))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Broadcast(ctx, raw); err != nil {
		t.Fatal(err)
	}
	waitConfirmed(t, c, sig)
	pb, err := c.Balance(ctx, payer)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := c.Balance(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	fee := tr.FeeLamports(units, tr.ComputeUnitPrice)
	if spent := solana.LamportsPerSOL - pb.Lamports; spent != fee+terms.AccountRentLamports || terms.AccountRentLamports == solana.TokenAccountRentLamports {
		t.Fatalf("fee payer spent %d lamports, want fee %d + rent %d", spent, fee, terms.AccountRentLamports)
	}
	if ob.Lamports != solana.LamportsPerSOL {
		t.Fatalf("the wallet paid %d lamports", solana.LamportsPerSOL-ob.Lamports)
	}
}
