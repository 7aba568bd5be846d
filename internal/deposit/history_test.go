package deposit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// usdcAndSOL is a wallet's USDC and SOL at an instant by its ledger.
type usdcAndSOL struct {
	At        time.Time
	USDC, SOL int64
}

// historyOfUSDCAndSOL is the wallet's USDC and SOL series of
// deposit.History, instant by instant.
func historyOfUSDCAndSOL(ctx context.Context, db bun.IDB, walletID uuid.UUID, at []time.Time) ([]usdcAndSOL, error) {
	s, err := deposit.History(ctx, db, walletID, []string{deposit.USDC, deposit.SOL}, at)
	if err != nil {
		return nil, err
	}
	out := make([]usdcAndSOL, len(at))
	for i := range at {
		out[i] = usdcAndSOL{At: s[0].Points[i].At, USDC: s[0].Points[i].Balance, SOL: s[1].Points[i].Balance}
	}
	return out, nil
}

// ledgerRow writes one change of an account to the ledger, as the watcher
// does after reading the transaction that made it.
func ledgerRow(t *testing.T, db bun.IDB, walletID uuid.UUID, asset, address string, slot uint64, at time.Time, balance int64) {
	t.Helper()
	_, err := db.NewRaw(`INSERT INTO ledger (network, address, signature, wallet_id, asset, slot, at, balance) VALUES ('devnet', ?, ?, ?, ?, ?, ?, ?)`,
		address, fmt.Sprintf("sig-%s-%d", address, slot), walletID, asset, slot, at, balance).Exec(t.Context())
	if err != nil {
		t.Fatal(err)
	}
}

// History answers one series per asset asked, in the order asked: for
// each instant, each account's balance after its last change in chain
// order (slot, not time stamp) at or before it, summed over the asset's
// accounts; zero before any change and for an asset the ledger has none
// of; another wallet's rows never count.
func TestHistory_PerAssetSumsEachAccountsLastChange(t *testing.T) {
	t.Parallel()
	db := pgtest.TestTx(t)
	_, w := wallettest.New(t, db)
	_, other := wallettest.New(t, db)
	t0 := time.Date(2026, 4, 15, 12, 0, 0, 0, time.UTC)
	s := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Second))) }

	// USDC in two token accounts; the change at slot 25 is stamped a
	// second before the one at slot 20 (block times run a little against
	// slots): in chain order it is the later.
	ledgerRow(t, db, w.ID, "usdc", "U1", 10, s(1), 5_000_000)
	ledgerRow(t, db, w.ID, "usdc", "U1", 20, s(10), 3_000_000)
	ledgerRow(t, db, w.ID, "usdc", "U1", 25, s(9), 4_000_000)
	ledgerRow(t, db, w.ID, "usdc", "U2", 15, s(5), 1_000_000)
	ledgerRow(t, db, w.ID, "eurc", "E1", 12, s(3), 7_000_000)
	ledgerRow(t, db, w.ID, "eurc", "E1", 30, s(20), 0)
	ledgerRow(t, db, w.ID, "eurc", "E2", 31, s(21), 250_000)
	ledgerRow(t, db, w.ID, "pyusd", "P1", 40, s(40), 9_000_000)
	ledgerRow(t, db, w.ID, "sol", "W", 10, s(1), 2_000_000_000)
	ledgerRow(t, db, w.ID, "sol", "W", 20, s(10), 1_999_995_000)
	ledgerRow(t, db, other.ID, "usdc", "O1", 11, s(2), 99_000_000)
	ledgerRow(t, db, other.ID, "eurc", "O2", 11, s(2), 99_000_000)

	for _, tc := range []struct {
		name   string
		assets []string
		at     []time.Time
		want   map[string][]int64 // per asset, per instant
	}{
		{"before any change, zero", []string{"usdc", "eurc", "sol"}, []time.Time{s(0)},
			map[string][]int64{"usdc": {0}, "eurc": {0}, "sol": {0}}},
		{"USDC summed over its accounts, in chain order", []string{"usdc"}, []time.Time{s(1), s(4), s(5), s(9), s(10), s(3600)},
			map[string][]int64{"usdc": {5_000_000, 5_000_000, 6_000_000, 5_000_000, 5_000_000, 5_000_000}}},
		{"EURC alone, an account emptied and another filled", []string{"eurc"}, []time.Time{s(2), s(3), s(20), s(21), s(22)},
			map[string][]int64{"eurc": {0, 7_000_000, 0, 250_000, 250_000}}},
		{"several assets, each its own", []string{"sol", "eurc", "usdc", "pyusd"}, []time.Time{s(4), s(30), s(45)},
			map[string][]int64{"sol": {2_000_000_000, 1_999_995_000, 1_999_995_000}, "eurc": {7_000_000, 250_000, 250_000},
				"usdc": {5_000_000, 5_000_000, 5_000_000}, "pyusd": {0, 0, 9_000_000}}},
		{"an asset the ledger has nothing of", []string{"usdg"}, []time.Time{s(1), s(100)},
			map[string][]int64{"usdg": {0, 0}}},
		{"no instants", []string{"usdc", "eurc"}, nil, map[string][]int64{"usdc": {}, "eurc": {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := deposit.History(t.Context(), db, w.ID, tc.assets, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.assets) {
				t.Fatalf("%d series for %d assets", len(got), len(tc.assets))
			}
			for i, sr := range got {
				if sr.Asset != tc.assets[i] || len(sr.Points) != len(tc.at) {
					t.Fatalf("series %d: %s with %d points, want %s with %d", i, sr.Asset, len(sr.Points), tc.assets[i], len(tc.at))
				}
				for j, p := range sr.Points {
					if !p.At.Equal(tc.at[j]) || p.Balance != tc.want[sr.Asset][j] {
						t.Fatalf("%s at %v: %d at %v, want %d", sr.Asset, tc.at[j], p.Balance, p.At, tc.want[sr.Asset][j])
					}
				}
			}
		})
	}
}

// A history bounded by MaxSeriesPoints over all its series: every asset
// at MaxPoints instants each fits for six assets, a seventh is refused
// before any query.
func TestHistory_BoundsPointsTimesAssets(t *testing.T) {
	t.Parallel()
	db := pgtest.TestTx(t)
	_, w := wallettest.New(t, db)
	at, err := deposit.Instants(time.Unix(0, 0), time.Unix(0, 0).Add((deposit.MaxPoints-1)*time.Hour), time.Hour)
	if err != nil || len(at) != deposit.MaxPoints {
		t.Fatalf("%d instants, %v", len(at), err)
	}
	six := []string{"usdc", "usdt", "pyusd", "usdg", "eurc", "sol"}
	if got, err := deposit.History(t.Context(), db, w.ID, six, at); err != nil || len(got) != 6 || len(got[5].Points) != deposit.MaxPoints {
		t.Fatalf("six assets of %d instants: %d series, %v", len(at), len(got), err)
	}
	if _, err := deposit.History(t.Context(), db, w.ID, append(six, "test"), at); !errors.Is(err, deposit.ErrTooManyPoints) {
		t.Fatalf("seven assets of %d instants: %v, want ErrTooManyPoints", len(at), err)
	}
}

// Differences of one asset leave the others out; without an asset, all
// come newest first, each in its asset's base units and signed.
func TestDifferences_FilteredByAsset(t *testing.T) {
	t.Parallel()
	db := pgtest.TestTx(t)
	acc, w := wallettest.New(t, db)
	t0 := time.Date(2026, 4, 15, 12, 0, 0, 0, time.UTC)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.NewRaw(q, args...).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	outflow := func(asset string, amount int64, at time.Time) {
		exec(`INSERT INTO unexplained_outflows (id, account_id, wallet_id, network, signature, asset, amount, slot, created_at, counterparty)
			VALUES (?, ?, ?, 'devnet', ?, ?, ?, 1, ?, 'to')`, uuid.New(), acc.ID, w.ID, "sig-"+asset, asset, amount, at)
	}
	snapshot := func(asset string, chain, ledger int64, at time.Time) {
		exec(`INSERT INTO balance_snapshots (id, account_id, wallet_id, network, asset, slot, chain, ledger, taken_at)
			VALUES (?, ?, ?, 'devnet', ?, 2, ?, ?, ?)`, uuid.New(), acc.ID, w.ID, asset, chain, ledger, at)
	}
	outflow("eurc", 1_500_000, t0)
	outflow("usdc", 2_000_000, t0.Add(time.Second))
	snapshot("eurc", 3_000_000, 4_000_000, t0.Add(2*time.Second))
	snapshot("sol", 5, 5, t0.Add(3*time.Second)) // agreed: no difference
	snapshot("sol", 7, 5, t0.Add(4*time.Second))

	for _, tc := range []struct {
		asset string
		want  []string // kind asset amount, newest first
	}{
		{"", []string{"snapshot sol 2", "snapshot eurc -1000000", "unexplained_outflow usdc -2000000", "unexplained_outflow eurc -1500000"}},
		{"eurc", []string{"snapshot eurc -1000000", "unexplained_outflow eurc -1500000"}},
		{"usdc", []string{"unexplained_outflow usdc -2000000"}},
		{"pyusd", nil},
	} {
		ds, err := deposit.Differences(t.Context(), db, w.ID, tc.asset, time.Time{}, uuid.Nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range ds {
			got = append(got, fmt.Sprintf("%s %s %d", d.Kind, d.Asset, d.Amount))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Fatalf("asset %q: %v, want %v", tc.asset, got, tc.want)
		}
	}
	// A page after the newest EURC difference holds the older one only.
	first, err := deposit.Differences(t.Context(), db, w.ID, "eurc", time.Time{}, uuid.Nil, 1)
	if err != nil || len(first) != 1 {
		t.Fatalf("first page %v %v", first, err)
	}
	next, err := deposit.Differences(t.Context(), db, w.ID, "eurc", first[0].At, first[0].ID, 10)
	if err != nil || len(next) != 1 || next[0].Kind != deposit.DifferenceOutflow || next[0].Asset != "eurc" {
		t.Fatalf("next page %+v %v", next, err)
	}
}

// The ledger's balance of each asset at any instant agrees with the
// chain's: before any money came, between and after deposits of SOL, USDC,
// EURC (SPL Token) and PYUSD (Token-2022), and after the wallet paid EURC
// (its fee in its SOL), the history of every asset answers at each instant
// what the chain held then; an asset that never came stays zero.
func TestHistory_EachAssetAgreesWithTheChainBeforeBetweenAndAfter(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	mk := wallettest.NewMasterKey(t)
	acc := wallettest.Account(t, db)
	w := wallettest.Create(t, db, mk.Sealer, acc.ID, "w")
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	// Every scan lists the wallet's token accounts: an account a deposit
	// makes is found at the next scan.
	watcher := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: c}, ListEvery: time.Nanosecond}
	ctx := context.Background()
	eurc, pyusd := devnetAsset(t, "EURC"), devnetAsset(t, "PYUSD")
	from := chaintest.NewPayer(t, ln, 100_000_000, 5*solana.LamportsPerSOL)
	tokens := stranger(t, ln, map[asset.Asset]uint64{eurc: 100_000_000, pyusd: 100_000_000})
	assets := []string{"usdc", "eurc", "pyusd", "usdg", "sol"}

	var at []time.Time
	var want []map[string]int64 // per instant, per asset
	// The chain's balances: the wallet's SOL, and each asset in its
	// associated account (where every deposit here goes).
	held := []asset.Asset{devnetAsset(t, "USDC"), eurc, pyusd, devnetAsset(t, "USDG")}
	chain := func() map[string]int64 {
		t.Helper()
		addrs := []sol.PublicKey{w.PublicKey()}
		for _, a := range held {
			addrs = append(addrs, ataOf(t, w.PublicKey(), a))
		}
		states, err := c.Accounts(ctx, addrs)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{"sol": int64(states[0].Lamports)}
		for i, a := range held {
			if st := states[i+1]; st.Token {
				m[strings.ToLower(a.Symbol)] = int64(st.Amount)
			}
		}
		return m
	}
	step := func(move func()) {
		t.Helper()
		// Block times are whole seconds: each step in a second of its own.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
		move()
		// Twice: the first finds an account the move made, the second
		// reads it.
		for range 2 {
			if _, err := watcher.Scan(ctx); err != nil {
				t.Fatal(err)
			}
		}
		at = append(at, time.Now().UTC().Truncate(time.Microsecond))
		want = append(want, chain())
	}
	before := time.Now().UTC().Add(-2 * time.Second)
	step(func() { from.TransferSOL(t, w.PublicKey(), solana.LamportsPerSOL) })
	step(func() { pay(t, c, tokens, w.PublicKey(), eurc, 12_500_000, false) })
	step(func() { from.TransferUSDC(t, w.PublicKey(), 5_000_000) })
	step(func() { pay(t, c, tokens, w.PublicKey(), pyusd, 3_000_001, true) })
	step(func() {
		payAsWallet(t, c, db, mk, w, solana.Transfer{Token: eurc.Token(), To: from.PublicKey(), Amount: 2_000_000})
	})
	step(func() { pay(t, c, tokens, w.PublicKey(), eurc, 750_000, true) })

	at = append([]time.Time{before}, at...)
	want = append([]map[string]int64{{}}, want...)
	got, err := deposit.History(ctx, db, w.ID, assets, at)
	if err != nil {
		t.Fatal(err)
	}
	for i, sr := range got {
		for j, p := range sr.Points {
			if p.Balance != want[j][sr.Asset] {
				t.Fatalf("%s at step %d: the ledger has %d, the chain %d (%v)", sr.Asset, j, p.Balance, want[j][sr.Asset], want[j])
			}
		}
		if sr.Asset != assets[i] {
			t.Fatalf("series %d is %s, want %s", i, sr.Asset, assets[i])
		}
	}
	// What the steps moved, as the chain has it: the history above is
	// not a run of zeros agreeing with a chain that saw nothing.
	last := want[len(want)-1]
	if last["eurc"] != 11_250_000 || last["pyusd"] != 3_000_001 || last["usdc"] != 5_000_000 || last["usdg"] != 0 ||
		want[5]["sol"] >= want[4]["sol"] || want[1]["eurc"] != 0 || want[2]["eurc"] != 12_500_000 {
		t.Fatalf("the chain at each step: %v", want)
	}
}

// payAsWallet has wallet w pay tr (its Owner set to w) with its own key,
// as the worker would, and waits until it is confirmed.
func payAsWallet(t *testing.T, c *solana.Client, db bun.IDB, mk wallettest.MasterKey, w wallet.Wallet, tr solana.Transfer) {
	t.Helper()
	ctx := context.Background()
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr.Owner = w.PublicKey()
	tx, err := c.BuildTransfer(tr, bh)
	if err != nil {
		t.Fatal(err)
	}
	key := w.Key()
	if key.Sealed, err = wallet.SealedSecret(ctx, db, w.ID); err != nil {
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
}
