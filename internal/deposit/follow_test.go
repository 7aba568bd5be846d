package deposit_test

import (
	"context"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// Whoever holds a wallet's key moves its USDC into a fresh keypair token
// account the wallet owns (no outflow: the wallet still holds it), then
// hands that account to themselves (SetAuthority, owner). The account
// is watched from the transaction that moved the money on, so the
// hand-over is an unexplained outflow of that USDC, to the new owner,
// and the wallet's history no longer counts it.
func TestWatcher_MoneyMovedToAnotherAccountOfTheWalletThenHandedAwayIsAnOutflow(t *testing.T) {
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
	scan := func() {
		t.Helper()
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	scan()
	ata, _ := solana.Devnet.AssociatedUSDC(a.PublicKey())
	thief := sol.NewWallet().PublicKey()

	k := sol.NewWallet().PrivateKey
	var rent uint64
	ln.Call(t, &rent, "getMinimumBalanceForRentExemption", chaintest.TokenAccountSize)
	signAs(t, db, mk, c, a, []sol.Instruction{
		system.NewCreateAccountInstruction(rent, chaintest.TokenAccountSize, sol.TokenProgramID, a.PublicKey(), k.PublicKey()).Build(),
		token.NewInitializeAccount3Instruction(a.PublicKey(), k.PublicKey(), solana.DevnetUSDCMint).Build(),
		token.NewTransferInstruction(4_000_000, ata, k.PublicKey(), a.PublicKey(), nil).Build(),
	}, k)
	scan()
	if out := outflowsOf(t, db, a); out["usdc"] != 0 {
		t.Fatalf("USDC moved between the wallet's own accounts is an outflow: %v", out)
	}
	handOver := signAs(t, db, mk, c, a, []sol.Instruction{
		token.NewSetAuthorityInstruction(token.AuthorityAccountOwner, thief, k.PublicKey(), a.PublicKey(), nil).Build(),
	})
	scan()
	scan()

	var rows []struct {
		Signature    string `bun:"signature"`
		Amount       int64  `bun:"amount"`
		Counterparty string `bun:"counterparty"`
	}
	if err := db.NewRaw(`SELECT signature, amount, counterparty FROM unexplained_outflows WHERE wallet_id = ? AND asset = 'usdc'`, a.ID).
		Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Signature != handOver.String() || rows[0].Amount != 4_000_000 || rows[0].Counterparty != thief.String() {
		t.Fatalf("USDC outflows %+v, want 4 USDC to %s in %s", rows, thief, handOver)
	}
	var events int
	if err := db.NewRaw(`SELECT count(*) FROM events WHERE kind = 'wallet.unexplained_outflow' AND data->>'signature' = ? AND data->>'asset' = 'usdc'`,
		handOver.String()).Scan(ctx, &events); err != nil {
		t.Fatal(err)
	}
	if events != 1 {
		t.Fatalf("%d wallet.unexplained_outflow events for the hand-over, want 1", events)
	}
	h, err := historyOfUSDCAndSOL(ctx, db, a.ID, []time.Time{time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if h[0].USDC != 6_000_000 {
		t.Fatalf("the wallet's USDC by its history: %d, want 6000000", h[0].USDC)
	}
}

// A watched token account closed and made again at its address under
// another mint, or for another owner, counts nothing of the wallet's:
// money arriving in it then adds nothing to the ledger, the history or a
// snapshot, and is no deposit.
func TestWatcher_AnAccountMadeAgainUnderAnotherMintOrOwnerCountsNothing(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	_, a := wallettest.New(t, db)
	watcher, c := newWatcher(ln, db)
	watcher.ListEvery = time.Nanosecond
	ctx := context.Background()
	scan := func() {
		t.Helper()
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	from := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
	otherOwner := from.NewTokenAccount(t, a.PublicKey())
	otherMint := from.NewTokenAccount(t, a.PublicKey())
	from.TransferUSDCToAccount(t, otherOwner, 2_000_000)
	from.TransferUSDCToAccount(t, otherMint, 3_000_000)
	scan()
	scan()
	if d := depositsOf(t, db, a); len(d) != 2 {
		t.Fatalf("deposits %+v, want the 2 and 3 USDC", d)
	}
	if got := watchedOf(t, db, a); !got[otherOwner.String()] || !got[otherMint.String()] {
		t.Fatalf("watched %v, want both accounts", got)
	}

	// Both made again at their addresses: one the payer's, of USDC; one
	// the wallet's, of a mint that is not USDC. Money then arrives in
	// each.
	fake := sol.NewWallet().PublicKey()
	ln.Call(t, nil, "surfnet_setAccount", fake.String(), map[string]any{
		"lamports": 1_461_600, "owner": sol.TokenProgramID.String(),
		"data": []string{mintData(6), "base64"},
	})
	plantTokenAccount(t, ln, otherOwner, solana.DevnetUSDCMint, from.PublicKey(), 0)
	plantTokenAccount(t, ln, otherMint, fake, a.PublicKey(), 0)
	ln.SetTokenBalance(t, from.PublicKey().String(), fake.String(), 50_000_000)
	fakeATA, _, err := sol.FindAssociatedTokenAddress(from.PublicKey(), fake)
	if err != nil {
		t.Fatal(err)
	}
	from.TransferUSDCToAccount(t, otherOwner, 5_000_000)
	sendToken(t, c, from, fakeATA, otherMint, 7_000_000)
	scan()
	scan()

	if d := depositsOf(t, db, a); len(d) != 2 {
		t.Fatalf("deposits %+v, want only the first two", d)
	}
	h, err := historyOfUSDCAndSOL(ctx, db, a.ID, []time.Time{time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if h[0].USDC != 0 {
		t.Fatalf("the wallet's USDC by its history: %d, want 0 (neither account holds its USDC now)", h[0].USDC)
	}
	if _, err := watcher.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	var chain int64
	if err := db.NewRaw(`SELECT chain FROM balance_snapshots WHERE wallet_id = ? AND asset = 'usdc' ORDER BY taken_at DESC LIMIT 1`, a.ID).
		Scan(ctx, &chain); err != nil {
		t.Fatal(err)
	}
	if chain != 0 {
		t.Fatalf("the snapshot's USDC on chain: %d, want 0", chain)
	}
}
