package deposit_test

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// devnetAsset is the default table's asset of symbol on devnet, which the
// localnet has at the same address, program and decimals.
func devnetAsset(t testing.TB, symbol string) asset.Asset {
	t.Helper()
	a, ok := asset.Defaults().Find(solana.Devnet, symbol)
	if !ok {
		t.Fatalf("no devnet %s", symbol)
	}
	return a
}

// ataOf is owner's associated account of a (derived with a's program).
func ataOf(t testing.TB, owner sol.PublicKey, a asset.Asset) sol.PublicKey {
	t.Helper()
	ata, err := solana.AssociatedToken(owner, a.Mint, a.Program)
	if err != nil {
		t.Fatal(err)
	}
	return ata
}

// stranger is a keypair the service knows nothing of, with a SOL and
// units of each asset given in its associated accounts.
func stranger(t testing.TB, ln *localnettest.Localnet, holds map[asset.Asset]uint64) sol.PrivateKey {
	t.Helper()
	k := sol.NewWallet().PrivateKey
	ln.SetLamports(t, k.PublicKey().String(), solana.LamportsPerSOL)
	for a, units := range holds {
		ln.SetTokenBalance(t, k.PublicKey().String(), a.Mint.String(), units)
	}
	return k
}

// createATA makes owner's associated account of a if it does not exist
// (CreateIdempotent under a's program), paid by payer.
func createATA(t testing.TB, payer, owner sol.PublicKey, a asset.Asset) sol.Instruction {
	return sol.NewInstruction(sol.SPLAssociatedTokenAccountProgramID, sol.AccountMetaSlice{
		sol.Meta(payer).WRITE().SIGNER(), sol.Meta(ataOf(t, owner, a)).WRITE(), sol.Meta(owner), sol.Meta(a.Mint),
		sol.Meta(sol.SystemProgramID), sol.Meta(a.Program),
	}, []byte{1})
}

// transferIx moves units of a from src to dst, authorized by authority
// (the holder or a delegate): TransferChecked (12) when checked, else the
// plain Transfer (3), which no mint with a transfer fee or hook accepts.
func transferIx(a asset.Asset, src, dst, authority sol.PublicKey, units uint64, checked bool) sol.Instruction {
	if checked {
		data := make([]byte, 10)
		data[0] = 12
		binary.LittleEndian.PutUint64(data[1:9], units)
		data[9] = a.Decimals
		return sol.NewInstruction(a.Program, sol.AccountMetaSlice{
			sol.Meta(src).WRITE(), sol.Meta(a.Mint), sol.Meta(dst).WRITE(), sol.Meta(authority).SIGNER(),
		}, data)
	}
	data := make([]byte, 9)
	data[0] = 3
	binary.LittleEndian.PutUint64(data[1:9], units)
	return sol.NewInstruction(a.Program, sol.AccountMetaSlice{
		sol.Meta(src).WRITE(), sol.Meta(dst).WRITE(), sol.Meta(authority).SIGNER(),
	}, data)
}

// sendAs signs ixs with keys, the first paying the fee, sends them and
// waits until they are confirmed.
func sendAs(t testing.TB, c *solana.Client, ixs []sol.Instruction, keys ...sol.PrivateKey) sol.Signature {
	t.Helper()
	ctx := context.Background()
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := sol.NewTransaction(ixs, bh.Hash, sol.TransactionPayer(keys[0].PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	raw, sig, err := solana.Sign(ctx, tx, func(_ context.Context, pub ed25519.PublicKey, msg []byte) ([]byte, error) {
		for _, k := range keys {
			if k.PublicKey().Equals(sol.PublicKeyFromBytes(pub)) {
				return ed25519.Sign(ed25519.PrivateKey(k), msg), nil
			}
		}
		return nil, fmt.Errorf("no key for %x", pub)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Broadcast(ctx, raw); err != nil {
		t.Fatal(err)
	}
	if tt, ok := t.(*testing.T); ok {
		waitConfirmed(tt, c, sig)
	}
	return sig
}

// pay sends units of a from the stranger's associated account to the
// wallet owner's, making that account if needed.
func pay(t testing.TB, c *solana.Client, from sol.PrivateKey, to sol.PublicKey, a asset.Asset, units uint64, checked bool) string {
	t.Helper()
	return sendAs(t, c, []sol.Instruction{
		createATA(t, from.PublicKey(), to, a),
		transferIx(a, ataOf(t, from.PublicKey(), a), ataOf(t, to, a), from.PublicKey(), units, checked),
	}, from).String()
}

// eventData are the data of the events of kind, oldest first.
func eventData(t testing.TB, db *bun.DB, kind string) []map[string]any {
	t.Helper()
	var raw []json.RawMessage
	if err := db.NewSelect().Table("events").Column("data").Where("kind = ?", kind).Order("created_at").Scan(context.Background(), &raw); err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// bySignature indexes event data by their signature, of asset only
// when one is given.
func bySignature(ds []map[string]any, asset ...string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, d := range ds {
		if len(asset) == 0 || d["asset"] == asset[0] {
			out[d["signature"].(string)] = d
		}
	}
	return out
}

// EURC (SPL Token, by transfer and by transferChecked), PYUSD and USDG
// (Token-2022, by transferChecked: their mints refuse a plain transfer)
// sent from keypairs the service does not control to a wallet that never
// held any of them are each recorded once, in the asset's base units, and
// announced once by tx.received naming the asset and the amount in its
// units; scanning again finds nothing new.
func TestWatcher_EveryAssetOfTheTableIsRecordedOnce(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	_, w := wallettest.New(t, db)
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	// Every scan lists the wallet's token accounts: the accounts the
	// deposits make are found at the next scan.
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}, ListEvery: time.Nanosecond}
	ctx := context.Background()
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	eurc, pyusd, usdg := devnetAsset(t, "EURC"), devnetAsset(t, "PYUSD"), devnetAsset(t, "USDG")
	from := stranger(t, ln, map[asset.Asset]uint64{eurc: 100_000_000, pyusd: 100_000_000, usdg: 100_000_000})
	type sent struct {
		asset  string
		units  int64
		amount string
	}
	want := map[string]sent{
		pay(t, c, from, w.PublicKey(), eurc, 1_500_000, false): {"eurc", 1_500_000, "1.5"},
		pay(t, c, from, w.PublicKey(), eurc, 2_250_000, true):  {"eurc", 2_250_000, "2.25"},
		pay(t, c, from, w.PublicKey(), pyusd, 3_000_000, true): {"pyusd", 3_000_000, "3"},
		pay(t, c, from, w.PublicKey(), usdg, 4_000_001, true):  {"usdg", 4_000_001, "4.000001"},
	}
	for range 2 {
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := depositsOf(t, db, w)
	if len(got) != len(want) {
		t.Fatalf("deposits %+v, want %v", got, want)
	}
	for _, d := range got {
		s, ok := want[d.Signature]
		if !ok || d.Asset != s.asset || d.Amount != s.units || d.Counterparty != from.PublicKey().String() || d.Status != "confirmed" {
			t.Fatalf("deposit %+v, want %+v", d, s)
		}
	}
	events := eventData(t, db, "tx.received")
	if len(events) != len(want) {
		t.Fatalf("%d tx.received events, want %d", len(events), len(want))
	}
	for sig, d := range bySignature(events) {
		s := want[sig]
		if d["asset"] != s.asset || d["symbol"] != strings.ToUpper(s.asset) ||
			fmt.Sprint(d["amount"]) != s.amount || d["from"] != from.PublicKey().String() || d["wallet_id"] != w.ID.String() {
			t.Fatalf("tx.received %v, want %+v", d, s)
		}
	}
	// The wallet's associated accounts of the three assets are watched,
	// each under its own asset.
	var rows []struct {
		Address string `bun:"address"`
		Asset   string `bun:"asset"`
		Role    string `bun:"role"`
	}
	if err := db.NewSelect().Table("watched_accounts").Column("address", "asset", "role").Where("wallet_id = ? AND asset IN ('eurc', 'pyusd', 'usdg')", w.ID).
		Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("watched %+v", rows)
	}
	for _, r := range rows {
		a := devnetAsset(t, r.Asset)
		if r.Address != ataOf(t, w.PublicKey(), a).String() || r.Role != "associated" {
			t.Fatalf("watched %+v", r)
		}
	}
}

// A token the table does not have, sent to a wallet, is not a deposit,
// whatever it calls itself: only the table's mints are money.
func TestWatcher_UnknownMintsAreIgnored(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	_, w := wallettest.New(t, db)
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}, ListEvery: time.Nanosecond}
	ctx := context.Background()
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	// USDT has no devnet mint: its mainnet mint is one the devnet table
	// does not know.
	usdt, _ := asset.Defaults().Find(solana.Mainnet, "USDT")
	from := stranger(t, ln, map[asset.Asset]uint64{usdt: 10_000_000})
	pay(t, c, from, w.PublicKey(), usdt, 5_000_000, true)
	for range 2 {
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := depositsOf(t, db, w); len(got) != 0 {
		t.Fatalf("deposits %+v", got)
	}
	if n := watchedOf(t, db, w)[ataOf(t, w.PublicKey(), usdt).String()]; n {
		t.Fatal("an account of an unknown mint is watched")
	}
}

// outflowRow is an unexplained_outflows row.
type outflowRow struct {
	Signature string  `bun:"signature"`
	Asset     string  `bun:"asset"`
	Amount    int64   `bun:"amount"`
	Authority *string `bun:"authority"`
}

// PYUSD that leaves a wallet in a transaction the service did not make is
// an unexplained outflow naming PYUSD and the amount in its units: moved
// with the wallet's key used outside the service (no delegate), or moved
// by the mint's permanent delegate without the wallet's signature (the
// delegate named). A PYUSD payment the service made is not one. Through
// deposits and payments, each asset's latest ledger balances add up to
// what the chain holds.
func TestWatcher_PYUSDLeavingOutsideTheServiceIsAnUnexplainedOutflow(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	w := wallettest.Create(t, db, mk.Sealer, acc.ID, "a")
	if _, err := db.NewRaw(`UPDATE wallets SET assets = '{USDC,PYUSD}' WHERE id = ?`, w.ID).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln.SetLamports(t, w.Pubkey, solana.LamportsPerSOL)
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}}
	ctx := context.Background()
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	pyusd := devnetAsset(t, "PYUSD")
	from := stranger(t, ln, map[asset.Asset]uint64{pyusd: 100_000_000})
	deposited := pay(t, c, from, w.PublicKey(), pyusd, 10_000_000, true)
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}

	// The wallet's key, outside the service.
	byKey := signAs(t, db, mk, c, w, []sol.Instruction{
		transferIx(pyusd, ataOf(t, w.PublicKey(), pyusd), ataOf(t, from.PublicKey(), pyusd), w.PublicKey(), 2_500_000, true),
	})
	// The permanent delegate, alone.
	var authority struct {
		Pubkey    string `json:"pubkey"`
		SecretKey []int  `json:"secretKey"`
	}
	ln.Call(t, &authority, "localnet_getMintAuthority")
	delegate := make(sol.PrivateKey, len(authority.SecretKey))
	for i, b := range authority.SecretKey {
		delegate[i] = byte(b)
	}
	if delegate.PublicKey().String() != authority.Pubkey {
		t.Fatalf("mint authority %s: key of %s", authority.Pubkey, delegate.PublicKey())
	}
	ln.SetLamports(t, delegate.PublicKey().String(), solana.LamportsPerSOL)
	byDelegate := sendAs(t, c, []sol.Instruction{
		transferIx(pyusd, ataOf(t, w.PublicKey(), pyusd), ataOf(t, from.PublicKey(), pyusd), delegate.PublicKey(), 1_000_000, true),
	}, delegate)
	// The service's own PYUSD payment.
	eng := &payment.Engine{DB: db, Signer: mk.Keystore(t), Nodes: map[solana.Network]payment.Node{
		solana.Devnet: payment.NewNode(ln.URL, solana.Devnet, 5*time.Second),
	}}
	r := payment.Request{ID: uuid.New(), AccountID: acc.ID, WalletID: w.ID, Network: solana.Devnet,
		To: from.PublicKey().String(), Amount: 500_000, Asset: "PYUSD"}
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
	for range 2 {
		if _, err := watcher.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}

	var out []outflowRow
	if err := db.NewSelect().Table("unexplained_outflows").Column("signature", "asset", "amount", "authority").
		Where("wallet_id = ? AND asset = 'pyusd'", w.ID).Order("slot").Scan(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Signature != byKey.String() || out[0].Amount != 2_500_000 || out[0].Authority != nil ||
		out[1].Signature != byDelegate.String() || out[1].Amount != 1_000_000 || out[1].Authority == nil || *out[1].Authority != delegate.PublicKey().String() {
		t.Fatalf("PYUSD outflows %+v", out)
	}
	events := bySignature(eventData(t, db, "wallet.unexplained_outflow"), "pyusd")
	if d := events[byKey.String()]; d == nil || d["asset"] != "pyusd" || d["symbol"] != "PYUSD" || fmt.Sprint(d["amount"]) != "2.5" ||
		d["to"] != from.PublicKey().String() || d["delegate"] != nil {
		t.Fatalf("outflow by the wallet's key: %v", d)
	}
	if d := events[byDelegate.String()]; d == nil || d["asset"] != "pyusd" || fmt.Sprint(d["amount"]) != "1" || d["delegate"] != delegate.PublicKey().String() {
		t.Fatalf("outflow by the permanent delegate: %v", d)
	}
	if _, ok := events[o.Signature]; ok {
		t.Fatalf("the service's own PYUSD payment is unexplained: %v", events[o.Signature])
	}
	if got := depositsOf(t, db, w); len(got) != 1 || got[0].Signature != deposited || got[0].Asset != "pyusd" {
		t.Fatalf("deposits %+v", got)
	}
	ledgerMatchesChain(t, db, c, w)
}

// ledgerMatchesChain checks that, for each asset the wallet has watched
// accounts of, the latest ledger balances of its accounts add up to what
// the chain holds there.
func ledgerMatchesChain(t *testing.T, db *bun.DB, c *solana.Client, w wallet.Wallet) {
	t.Helper()
	ctx := context.Background()
	var rows []struct {
		Address string `bun:"address"`
		Asset   string `bun:"asset"`
		Ledger  int64  `bun:"ledger"`
	}
	if err := db.NewRaw(`SELECT x.address, x.asset, coalesce((SELECT l.balance FROM ledger l WHERE l.network = x.network AND l.address = x.address
		ORDER BY l.slot DESC, l.id DESC LIMIT 1), 0) AS ledger FROM watched_accounts x WHERE x.wallet_id = ?`, w.ID).Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	addrs := make([]sol.PublicKey, len(rows))
	for i, r := range rows {
		addrs[i] = sol.MustPublicKeyFromBase58(r.Address)
	}
	states, err := c.Accounts(ctx, addrs)
	if err != nil {
		t.Fatal(err)
	}
	ledger, chain := map[string]int64{}, map[string]int64{}
	for i, r := range rows {
		ledger[r.Asset] += r.Ledger
		if r.Asset == deposit.SOL {
			chain[r.Asset] += int64(states[i].Lamports)
		} else if states[i].Token && states[i].Owner.Equals(w.PublicKey()) {
			chain[r.Asset] += int64(states[i].Amount)
		}
	}
	for a := range chain {
		if ledger[a] != chain[a] {
			t.Fatalf("wallet %s: the ledger has %v, the chain %v", w.Label, ledger, chain)
		}
	}
}

// EURC and PYUSD paid to many wallets while two watchers scan at once and
// one of them is stopped in the middle of its work (its scan cancelled
// wherever it was: between reading a cursor and committing it), then a
// third starts after the burst: every deposit is recorded once, with one
// tx.received, and each wallet's deposits and ledger add up to what the
// chain holds of each asset.
func TestWatcher_OtherAssetsAcrossAStoppedWatcherAreRecordedOnce(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	acc := wallettest.Account(t, db)
	sealer := wallettest.Sealer(t)
	var wallets []wallet.Wallet
	for i := range 8 {
		wallets = append(wallets, wallettest.Create(t, db, sealer, acc.ID, fmt.Sprint("w", i)))
	}
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	newWatcher := func() *deposit.Watcher {
		return &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}, PerAccount: 2, ListEvery: time.Nanosecond}
	}
	scanUntil := func(ctx context.Context, w *deposit.Watcher) {
		for ctx.Err() == nil {
			_, _ = w.Scan(ctx)
			time.Sleep(10 * time.Millisecond)
		}
	}
	firstCtx, stopFirst := context.WithCancel(context.Background())
	defer stopFirst()
	firstDone := make(chan struct{})
	go func() { defer close(firstDone); scanUntil(firstCtx, newWatcher()) }()
	secondCtx, stopSecond := context.WithCancel(context.Background())
	defer stopSecond()
	secondDone := make(chan struct{})
	go func() { defer close(secondDone); scanUntil(secondCtx, newWatcher()) }()

	eurc, pyusd := devnetAsset(t, "EURC"), devnetAsset(t, "PYUSD")
	type key struct {
		wallet uuid.UUID
		asset  string
	}
	var mu sync.Mutex
	sent := map[string]int64{}
	owed := map[key]int64{}
	var payers sync.WaitGroup
	for p, a := range []asset.Asset{eurc, pyusd, eurc} {
		payers.Go(func() {
			from := stranger(t, ln, map[asset.Asset]uint64{a: 1_000_000_000})
			for i := range 12 {
				w := wallets[(p*12+i)%len(wallets)]
				units := int64(10_000 * (p + 1) * (i + 1))
				sig := pay(t, c, from, w.PublicKey(), a, uint64(units), p != 0 || i%2 == 0)
				mu.Lock()
				sent[sig] = units
				owed[key{w.ID, deposit.Key(a.Symbol)}] += units
				mu.Unlock()
				if p == 1 && i == 5 {
					stopFirst() // a worker stops in the burst, mid-scan
				}
			}
		})
	}
	payers.Wait()
	<-firstDone
	stopSecond()
	<-secondDone
	third := newWatcher()
	third.PerAccount = 0
	ctx := context.Background()
	for range 50 {
		_, err := third.Scan(ctx)
		n, _ := db.NewSelect().Table("deposits").Count(ctx)
		if err == nil && int(n) >= len(sent) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := third.Scan(ctx); err != nil {
		t.Fatal(err)
	}

	var rows []depositRow
	if err := db.NewSelect().Table("deposits").Column("signature", "asset", "amount", "counterparty", "status").Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(sent) {
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
	for _, w := range wallets {
		for _, a := range []asset.Asset{eurc, pyusd} {
			var recorded int64
			if err := db.NewRaw(`SELECT coalesce(sum(amount), 0) FROM deposits WHERE wallet_id = ? AND asset = ?`, w.ID, deposit.Key(a.Symbol)).
				Scan(ctx, &recorded); err != nil {
				t.Fatal(err)
			}
			if k := (key{w.ID, deposit.Key(a.Symbol)}); recorded != owed[k] {
				t.Fatalf("wallet %s: %s deposits add up to %d, sent %d", w.Label, a.Symbol, recorded, owed[k])
			}
		}
		ledgerMatchesChain(t, db, c, w)
	}
}

// A scan stopped while it examines an account (its context cancelled
// after the account's cursor was read and before its commit) records
// nothing of it and moves no cursor; the next watcher records each
// deposit once.
func TestWatcher_ScanStoppedMidExaminationLosesAndDoublesNothing(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	_, w := wallettest.New(t, db)
	eurc, pyusd := devnetAsset(t, "EURC"), devnetAsset(t, "PYUSD")
	from := stranger(t, ln, map[asset.Asset]uint64{eurc: 100_000_000, pyusd: 100_000_000})
	real := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	ctx := context.Background()
	healthy := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: real}, ListEvery: time.Nanosecond}
	if _, err := healthy.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	sigs := []string{
		pay(t, real, from, w.PublicKey(), eurc, 1_000_000, false),
		pay(t, real, from, w.PublicKey(), pyusd, 2_000_000, true),
	}
	// A node that never answers getTransaction: the scan holds an
	// account's row, its cursor read, when it is stopped.
	node := newRPCFault(t, ln.URL, func(method, _ string) string {
		if method == "getTransaction" {
			return "hang"
		}
		return ""
	})
	stopped := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(node.URL, solana.Devnet, time.Minute)},
		ListEvery: time.Nanosecond}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := stopped.Scan(sctx); done <- err }()
	for node.Calls("getTransaction") == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err == nil {
		t.Fatal("a stopped scan reports no error")
	}
	if got := depositsOf(t, db, w); len(got) != 0 {
		t.Fatalf("a stopped scan recorded %+v", got)
	}
	var cursors int
	if err := db.NewRaw(`SELECT count(*) FROM watched_accounts WHERE wallet_id = ? AND asset IN ('eurc', 'pyusd') AND last_signature IS NOT NULL`, w.ID).
		Scan(ctx, &cursors); err != nil {
		t.Fatal(err)
	}
	if cursors != 0 {
		t.Fatalf("a stopped scan moved %d cursors", cursors)
	}
	for range 2 {
		if _, err := healthy.Scan(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := depositsOf(t, db, w)
	if len(got) != 2 || got[0].Signature != sigs[0] || got[0].Asset != "eurc" || got[1].Signature != sigs[1] || got[1].Asset != "pyusd" {
		t.Fatalf("deposits %+v", got)
	}
	if n := received(t, db); n != 2 {
		t.Fatalf("%d tx.received events, want 2", n)
	}
	ledgerMatchesChain(t, db, real, w)
}

// The wallet's own transaction with an asset it was never watched for
// (signed with its key, paying from its address) shows the wallet's
// associated account of that asset: it is watched from then on, before
// any listing, and a later deposit there is found.
func TestWatcher_AnAssociatedAccountSeenInAnExaminedTransactionIsWatched(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	w := wallettest.Create(t, db, mk.Sealer, acc.ID, "a")
	ln.SetLamports(t, w.Pubkey, solana.LamportsPerSOL)
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	// Listed once, at the first scan, then not for an hour.
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}, ListEvery: time.Hour}
	ctx := context.Background()
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	usdg := devnetAsset(t, "USDG")
	// The wallet makes its own USDG account (its key, outside the
	// service): its SOL pays the rent, so its address is examined.
	signAs(t, db, mk, c, w, []sol.Instruction{createATA(t, w.PublicKey(), w.PublicKey(), usdg)})
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if !watchedOf(t, db, w)[ataOf(t, w.PublicKey(), usdg).String()] {
		t.Fatal("the wallet's USDG account is not watched")
	}
	from := stranger(t, ln, map[asset.Asset]uint64{usdg: 10_000_000})
	sig := pay(t, c, from, w.PublicKey(), usdg, 7_000_000, true)
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if got := depositsOf(t, db, w); len(got) != 1 || got[0].Signature != sig || got[0].Asset != "usdg" || got[0].Amount != 7_000_000 {
		t.Fatalf("deposits %+v", got)
	}
}
