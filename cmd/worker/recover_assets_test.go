package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/custody"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// devnetToken is a devnet asset of the default table.
func devnetToken(t *testing.T, symbol string) solana.Token {
	t.Helper()
	a, ok := asset.Defaults().Find(solana.Devnet, symbol)
	if !ok {
		t.Fatalf("no devnet %s", symbol)
	}
	return a.Token()
}

// holdings is what owner holds on chain: "SOL" in lamports, each
// devnet asset in its base units, summed over every token account of
// owner holding it (not only the associated one); ASSETS's too.
func (o *offline) holdings(t *testing.T, owner string) map[string]uint64 {
	t.Helper()
	c := solana.NewClient(o.ln.URL, solana.Devnet, 0)
	pk := sol.MustPublicKeyFromBase58(owner)
	st, err := c.Accounts(context.Background(), []sol.PublicKey{pk})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{"SOL": st[0].Lamports}
	table, err := asset.Defaults().With(o.env["ASSETS"])
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range table.Of(solana.Devnet) {
		accts, err := c.HeldAccounts(context.Background(), pk, a.Token())
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range accts {
			out[a.Symbol] += h.Units
		}
	}
	return out
}

// setOtherTokenAccount makes a token account of tk owned by owner at a
// fresh address that is not owner's associated one, holding units.
func (o *offline) setOtherTokenAccount(t *testing.T, owner string, tk solana.Token, units uint64) sol.PublicKey {
	t.Helper()
	addr := sol.NewWallet().PublicKey()
	data := make([]byte, 165) // the SPL Token account layout
	copy(data[0:32], tk.Mint[:])
	copy(data[32:64], sol.MustPublicKeyFromBase58(owner).Bytes())
	binary.LittleEndian.PutUint64(data[64:72], units)
	data[108] = 1 // initialized
	o.ln.Call(t, nil, "surfnet_setAccount", addr.String(), map[string]any{
		"lamports": solana.TokenAccountRentLamports, "data": hex.EncodeToString(data), "owner": tk.Program.String()})
	return addr
}

// rentOf is the rent of an associated account of each asset the
// recovery opens for the address: 165 bytes under SPL Token, 187 for
// PYUSD's Token-2022 mint (its extensions).
var rentOf = map[string]uint64{"USDC": solana.TokenAccountRentLamports, "EURC": solana.TokenAccountRentLamports, "PYUSD": 2_192_400}

// `worker recover` moves every asset the wallet holds (USDC and EURC on
// SPL Token, PYUSD on Token-2022, USDT added by ASSETS; EURC from its
// associated account and from another account of the wallet), opening the address's accounts at
// the wallet's cost, then its SOL less the fees: the address holds what
// the wallet held, the wallet nothing, and it is frozen. The summary names
// each asset and its amount.
func TestRecover_MovesEveryAssetThenSOLAndFreezesTheWallet(t *testing.T) {
	t.Parallel()
	o := newOffline(t, 5_000_000, 1_000_000_000)
	o.ln.SetTokenBalance(t, o.w.Pubkey, devnetToken(t, "EURC").Mint.String(), 3_250_000)
	o.ln.SetTokenBalance(t, o.w.Pubkey, devnetToken(t, "PYUSD").Mint.String(), 7_000_001)
	other := o.setOtherTokenAccount(t, o.w.Pubkey, devnetToken(t, "EURC"), 1_000_000)
	// An asset the operator added (ASSETS): mainnet USDT's mint, which
	// the localnet has, as a devnet asset.
	o.env["ASSETS"] = "devnet:USDT:Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB:token:6:USD"
	o.ln.SetTokenBalance(t, o.w.Pubkey, "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", 900_000)
	before := o.holdings(t, o.w.Pubkey)
	if before["EURC"] != 4_250_000 {
		t.Fatalf("the wallet holds %d EURC, want 4.25 in two accounts", before["EURC"])
	}
	to := sol.NewWallet().PublicKey().String()

	out, err := o.run(t, "recover", "--wallet", o.w.ID.String(), "--to", to, "--operator", "ops", "--reason", "key leaked")
	if err != nil {
		t.Fatalf("recover: %v (%s)", err, out)
	}
	got, left := o.holdings(t, to), o.holdings(t, o.w.Pubkey)
	// Six transactions, one signature each: USDC, EURC twice, PYUSD, USDT, SOL.
	wantSOL := before["SOL"] - 6*solana.BaseFeeLamports - rentOf["USDC"] - rentOf["EURC"] - rentOf["PYUSD"] - solana.TokenAccountRentLamports
	for sym, want := range map[string]uint64{"USDC": 5_000_000, "EURC": 4_250_000, "PYUSD": 7_000_001, "USDG": 0, "USDT": 900_000, "SOL": wantSOL} {
		if got[sym] != want || left[sym] != 0 {
			t.Errorf("%s: the address holds %d (want %d), the wallet %d (want 0)", sym, got[sym], want, left[sym])
		}
	}
	if s := o.walletState(t); s != "frozen" {
		t.Errorf("the wallet is %s", s)
	}
	for _, line := range []string{"moved 5 USDC", "moved 3.25 EURC", "moved 1 EURC from wallet " + o.w.ID.String() + " (" + other.String() + ")",
		"moved 7.000001 PYUSD", "moved 0.9 USDT", "moved " + solAmount(wantSOL) + " SOL", "is frozen"} {
		if !strings.Contains(out, line) {
			t.Errorf("the summary lacks %q:\n%s", line, out)
		}
	}
	moved := map[string]int{}
	for _, e := range o.recoveryEntries(t) {
		if e.Action == custody.ActionRecovered {
			moved[e.Details["asset"].(string)]++
		}
	}
	if moved["USDC"] != 1 || moved["EURC"] != 2 || moved["PYUSD"] != 1 || moved["USDT"] != 1 || moved["SOL"] != 1 || len(moved) != 5 {
		t.Errorf("recorded as recovered: %v", moved)
	}
	// Run again: nothing left, nothing sent.
	if out, err := o.run(t, "recover", "--wallet", o.w.ID.String(), "--to", to, "--operator", "ops", "--reason", "again"); err == nil ||
		!strings.Contains(err.Error(), "nothing to move") {
		t.Fatalf("second run: %v (%s)", err, out)
	}
}

// solAmount is lamports as SOL, exactly ("0.97", "1").
func solAmount(lamports uint64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%d.%09d", lamports/1_000_000_000, lamports%1_000_000_000), "0"), ".")
}

// `worker recover --asset EURC` moves EURC alone (the symbol in any
// case), opening the address's EURC account at the wallet's cost; the
// wallet's other assets stay and it is frozen all the same: a wallet
// money is moved out of on one person's word is one whose key is doubted.
// An asset the network does not have is refused before anything is
// recorded.
func TestRecover_OneAssetMovesItAloneAndFreezesTheWallet(t *testing.T) {
	t.Parallel()
	o := newOffline(t, 5_000_000, 1_000_000_000)
	o.ln.SetTokenBalance(t, o.w.Pubkey, devnetToken(t, "EURC").Mint.String(), 3_250_000)
	o.ln.SetTokenBalance(t, o.w.Pubkey, devnetToken(t, "PYUSD").Mint.String(), 7_000_001)
	to := sol.NewWallet().PublicKey().String()
	args := []string{"recover", "--wallet", o.w.ID.String(), "--to", to, "--operator", "ops", "--reason", "move the euros first"}

	if _, err := o.run(t, append(args, "--asset", "DOGE")...); err == nil || !strings.Contains(err.Error(), `"DOGE" is no asset of devnet`) {
		t.Fatalf("an unknown asset: %v", err)
	}
	if s, e := o.walletState(t), o.recoveryEntries(t); s != "active" || len(e) != 0 {
		t.Fatalf("a refused run left the wallet %s and %d recovery entries", s, len(e))
	}

	out, err := o.run(t, append(args, "--asset", "eurc")...)
	if err != nil {
		t.Fatalf("recover --asset eurc: %v (%s)", err, out)
	}
	got, left := o.holdings(t, to), o.holdings(t, o.w.Pubkey)
	if got["EURC"] != 3_250_000 || left["EURC"] != 0 || got["USDC"] != 0 || got["PYUSD"] != 0 || got["SOL"] != 0 {
		t.Errorf("the address holds %v, want 3.25 EURC alone", got)
	}
	if left["USDC"] != 5_000_000 || left["PYUSD"] != 7_000_001 || left["SOL"] != 1_000_000_000-solana.BaseFeeLamports-rentOf["EURC"] {
		t.Errorf("the wallet holds %v, want its USDC, PYUSD and SOL less one fee and one account's rent", left)
	}
	if s := o.walletState(t); s != "frozen" {
		t.Errorf("the wallet is %s", s)
	}
	if !strings.Contains(out, "moved 3.25 EURC") || strings.Contains(out, "USDC") || strings.Contains(out, "PYUSD") {
		t.Errorf("summary %q", out)
	}
	entries := o.recoveryEntries(t)
	if len(entries) != 3 || entries[0].Details["asset"] != "EURC" || entries[2].Action != custody.ActionRecovered || entries[2].Details["asset"] != "EURC" ||
		entries[2].Details["amount"] != 3.25 || entries[2].Details["units"] != float64(3_250_000) {
		t.Errorf("entries %+v", entries)
	}
	// EURC again: none left.
	if _, err := o.run(t, append(args, "--asset", "EURC")...); err == nil || !strings.Contains(err.Error(), "holds no EURC") {
		t.Errorf("EURC again: %v", err)
	}
}

// sendCutter is an RPC node in front of next that calls stop once the
// n-th distinct transaction has been sent to next (and before the
// command hears the answer): as a process killed after some assets moved,
// one more in flight.
func sendCutter(t *testing.T, next string, n int, stop func()) string {
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		resp, err := http.Post(next, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		var req struct {
			Method string
			Params []json.RawMessage
		}
		if json.Unmarshal(body, &req) == nil && req.Method == "sendTransaction" && len(req.Params) > 0 {
			mu.Lock()
			seen[string(req.Params[0])] = true
			if len(seen) == n {
				stop()
			}
			mu.Unlock()
		}
		rw.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		rw.WriteHeader(resp.StatusCode)
		rw.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A recovery killed after USDC moved and while PYUSD's transaction was in
// flight (it landed, its answer lost) is finished by the next run: it
// follows PYUSD's transaction instead of signing another, then moves EURC
// and the SOL. Every asset moved once, in one transaction.
func TestRecover_AnInterruptedRunOfManyAssetsFinishesWithoutSendingTwice(t *testing.T) {
	t.Parallel()
	o := newOffline(t, 5_000_000, 1_000_000_000)
	o.ln.SetTokenBalance(t, o.w.Pubkey, devnetToken(t, "EURC").Mint.String(), 3_250_000)
	o.ln.SetTokenBalance(t, o.w.Pubkey, devnetToken(t, "PYUSD").Mint.String(), 7_000_001)
	before := o.holdings(t, o.w.Pubkey)
	to := sol.NewWallet().PublicKey().String()
	args := []string{"recover", "--wallet", o.w.ID.String(), "--to", to}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	env := func(k string) string {
		if k == "SOLANA_RPC_URL_DEVNET" {
			return o.env["SOLANA_RPC_URL_CUT"]
		}
		return o.env[k]
	}
	o.env["SOLANA_RPC_URL_CUT"] = sendCutter(t, o.ln.URL, 2, stop)
	var out bytes.Buffer
	if err := run(ctx, append(args, "--operator", "alice", "--reason", "the worker host was taken"), env, &out); err == nil {
		t.Fatalf("the interrupted run finished: %s", out.String())
	}
	var pyusdSig string
	for _, e := range o.recoveryEntries(t) {
		if e.Action == custody.ActionRecoverySigned && e.Details["asset"] == "PYUSD" {
			pyusdSig = e.Details["signature"].(string)
		}
		if e.Action == custody.ActionRecovered && e.Details["asset"] != "USDC" {
			t.Fatalf("the interrupted run recorded %v as moved", e.Details)
		}
	}
	if pyusdSig == "" {
		t.Fatalf("no PYUSD transaction signed: %+v", o.recoveryEntries(t))
	}
	for deadline := time.Now().Add(20 * time.Second); o.holdings(t, to)["PYUSD"] == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("PYUSD's transaction never landed")
		}
	}
	if h := o.holdings(t, to); h["USDC"] != 5_000_000 || h["EURC"] != 0 {
		t.Fatalf("after the interrupted run the address holds %v", h)
	}

	out2, err := o.run(t, append(args, "--operator", "bob", "--reason", "finish alice's recovery")...)
	if err != nil {
		t.Fatalf("second run: %v (%s)", err, out2)
	}
	got, left := o.holdings(t, to), o.holdings(t, o.w.Pubkey)
	wantSOL := before["SOL"] - 4*solana.BaseFeeLamports - rentOf["USDC"] - rentOf["EURC"] - rentOf["PYUSD"]
	for sym, want := range map[string]uint64{"USDC": 5_000_000, "EURC": 3_250_000, "PYUSD": 7_000_001, "SOL": wantSOL} {
		if got[sym] != want || left[sym] != 0 {
			t.Errorf("%s: the address holds %d (want %d), the wallet %d", sym, got[sym], want, left[sym])
		}
	}
	signed, recovered := map[string]int{}, map[string]int{}
	var started []string
	for _, e := range o.recoveryEntries(t) {
		switch e.Action {
		case custody.ActionRecoveryStarted:
			started = append(started, e.Details["operator"].(string))
		case custody.ActionRecoverySigned:
			signed[e.Details["asset"].(string)]++
		case custody.ActionRecovered:
			recovered[e.Details["asset"].(string)]++
			if e.Details["asset"] == "PYUSD" && e.Details["signature"] != pyusdSig {
				t.Errorf("PYUSD recorded as moved by %v, want the interrupted run's %s", e.Details["signature"], pyusdSig)
			}
		}
	}
	for _, sym := range []string{"USDC", "EURC", "PYUSD", "SOL"} {
		if signed[sym] != 1 || recovered[sym] != 1 {
			t.Errorf("%s: %d transactions signed, %d recorded as moved; want one", sym, signed[sym], recovered[sym])
		}
	}
	if strings.Join(started, ",") != "alice,bob" {
		t.Errorf("intents by %v", started)
	}
	if !strings.Contains(out2, "moved 7.000001 PYUSD") || !strings.Contains(out2, "moved 3.25 EURC") || !strings.Contains(out2, pyusdSig) || strings.Contains(out2, "USDC") {
		t.Errorf("second run's summary %q", out2)
	}
	if s := o.walletState(t); s != "frozen" {
		t.Errorf("the wallet is %s", s)
	}
}

// A node that fails once USDC has moved (every account read answers 503)
// stops the run with USDC recorded and nothing else signed; the next run,
// on a working node, moves the rest, USDC not again.
func TestRecover_ANodeFailingMidRunLeavesNothingHalfRecorded(t *testing.T) {
	t.Parallel()
	o := newOffline(t, 5_000_000, 1_000_000_000)
	o.ln.SetTokenBalance(t, o.w.Pubkey, devnetToken(t, "EURC").Mint.String(), 3_250_000)
	to := sol.NewWallet().PublicKey().String()
	args := []string{"recover", "--wallet", o.w.ID.String(), "--to", to, "--operator", "ops", "--reason", "key leaked"}

	node := localnettest.NewFaultProxy(t, o.ln.URL)
	o.env["SOLANA_RPC_URL_DEVNET"] = sendCutter(t, node.URL, 1, func() {
		node.Set(t, localnettest.ProxyFaults{Status: http.StatusServiceUnavailable, Methods: []string{"getMultipleAccounts", "getTokenAccountsByOwner"}})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, args, func(k string) string { return o.env[k] }, &out)
	if err == nil {
		t.Fatalf("the run finished on a failing node: %s", out.String())
	}
	var actions []string
	for _, e := range o.recoveryEntries(t) {
		actions = append(actions, e.Action+" "+e.Details["asset"].(string))
	}
	if strings.Join(actions, ", ") != "wallet.recovery_started all, wallet.recovery_signed USDC, wallet.recovered USDC" {
		t.Fatalf("after the failing run: %v (%v)", actions, err)
	}
	if !strings.Contains(out.String(), "moved 5 USDC") {
		t.Errorf("the failing run's output %q does not say USDC moved", out.String())
	}

	node.Set(t, localnettest.ProxyFaults{})
	out2, err := o.run(t, args...)
	if err != nil {
		t.Fatalf("second run: %v (%s)", err, out2)
	}
	got, left := o.holdings(t, to), o.holdings(t, o.w.Pubkey)
	if got["USDC"] != 5_000_000 || got["EURC"] != 3_250_000 || left["USDC"] != 0 || left["EURC"] != 0 || left["SOL"] != 0 {
		t.Errorf("the address holds %v, the wallet %v", got, left)
	}
	signed := map[string]int{}
	for _, e := range o.recoveryEntries(t) {
		if e.Action == custody.ActionRecoverySigned {
			signed[e.Details["asset"].(string)]++
		}
	}
	if signed["USDC"] != 1 || signed["EURC"] != 1 || signed["SOL"] != 1 {
		t.Errorf("transactions signed per asset: %v", signed)
	}
	if strings.Contains(out2, "USDC") {
		t.Errorf("second run's summary %q", out2)
	}
}

// What cannot move does not hold up the rest: USDC in an account its
// issuer froze is left, and so is EURC whose transfer the node refuses
// (the address's EURC account is frozen), once that transaction can no
// longer land; PYUSD and the SOL move. The summary names what was left
// and why, and the wallet is frozen.
func TestRecover_WhatCannotMoveIsLeftAndNamedAndTheRestMoves(t *testing.T) {
	t.Parallel()
	o := newOffline(t, 0, 1_000_000_000)
	usdcMint, eurc, pyusd := solana.DevnetUSDCMint.String(), devnetToken(t, "EURC").Mint.String(), devnetToken(t, "PYUSD").Mint.String()
	o.ln.Call(t, nil, "surfnet_setTokenAccount", o.w.Pubkey, usdcMint, map[string]any{"amount": 5_000_000, "state": "frozen"})
	o.ln.SetTokenBalance(t, o.w.Pubkey, eurc, 3_250_000)
	o.ln.SetTokenBalance(t, o.w.Pubkey, pyusd, 7_000_001)
	to := sol.NewWallet().PublicKey().String()
	o.ln.Call(t, nil, "surfnet_setTokenAccount", to, eurc, map[string]any{"amount": 0, "state": "frozen"})

	out, err := o.run(t, "recover", "--wallet", o.w.ID.String(), "--to", to, "--operator", "ops", "--reason", "key leaked")
	if err != nil {
		t.Fatalf("recover: %v (%s)", err, out)
	}
	t.Log(out)
	got, left := o.holdings(t, to), o.holdings(t, o.w.Pubkey)
	wantSOL := uint64(1_000_000_000 - 2*solana.BaseFeeLamports - rentOf["PYUSD"])
	if got["PYUSD"] != 7_000_001 || got["SOL"] != wantSOL || got["USDC"] != 0 || got["EURC"] != 0 {
		t.Errorf("the address holds %v, want the PYUSD and %d lamports", got, wantSOL)
	}
	if left["USDC"] != 5_000_000 || left["EURC"] != 3_250_000 || left["PYUSD"] != 0 || left["SOL"] != 0 {
		t.Errorf("the wallet holds %v, want its USDC and EURC alone", left)
	}
	for _, line := range []string{"moved 7.000001 PYUSD", "moved " + solAmount(wantSOL) + " SOL",
		"left in the wallet: 5 USDC in account", "frozen by the mint's freeze authority",
		"left in the wallet: 3.25 EURC in", "the node refused the transaction", "2 holdings left"} {
		if !strings.Contains(out, line) {
			t.Errorf("the summary lacks %q:\n%s", line, out)
		}
	}
	if s := o.walletState(t); s != "frozen" {
		t.Errorf("the wallet is %s", s)
	}
}

// A wallet paying its own way whose SOL cannot cover every transaction's
// fee and the address's accounts to open is refused before anything is
// signed, rather than left with some assets moved and others stuck.
func TestRecover_AWalletWithoutSOLForItsFeesMovesNothing(t *testing.T) {
	t.Parallel()
	o := newOffline(t, 5_000_000, 2_000_000) // less than one account's rent
	o.ln.SetTokenBalance(t, o.w.Pubkey, devnetToken(t, "PYUSD").Mint.String(), 7_000_001)
	to := sol.NewWallet().PublicKey().String()
	out, err := o.run(t, "recover", "--wallet", o.w.ID.String(), "--to", to, "--operator", "ops", "--reason", "key leaked")
	if err == nil || !strings.Contains(err.Error(), "moving its tokens needs 0.00424168 SOL") || !strings.Contains(err.Error(), "USDC, PYUSD accounts") {
		t.Fatalf("recover: %v (%s)", err, out)
	}
	for _, e := range o.recoveryEntries(t) {
		if e.Action != custody.ActionRecoveryStarted {
			t.Errorf("%s written", e.Action)
		}
	}
	if got := o.holdings(t, to); got["USDC"] != 0 || got["PYUSD"] != 0 || got["SOL"] != 0 {
		t.Errorf("the address holds %v", got)
	}
}
