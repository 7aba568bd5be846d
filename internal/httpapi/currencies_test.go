package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// USDT has no devnet mint of its own: the localnet carries mainnet's at its
// real address, which an operator adds to devnet's table (ASSETS) here.
const usdtMint = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"

func currencyEnv(t *testing.T) *env {
	t.Helper()
	table, err := asset.Defaults().With("devnet:USDT:" + usdtMint + ":token:6:USD")
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, envOpts{assets: table})
}

// fundAsset gives owner units of the devnet asset symbol on the localnet.
func (e *env) fundAsset(owner, symbol string, units uint64) {
	e.t.Helper()
	a, ok := e.assets.Find(solana.Devnet, symbol)
	if !ok {
		e.t.Fatalf("no devnet %s", symbol)
	}
	e.ln.SetTokenBalance(e.t, owner, a.Mint.String(), units)
}

// accountOwner is the program owning owner's associated account of the
// devnet asset symbol ("" when it does not exist), and its balance.
func (e *env) assetAccount(owner, symbol string) (program string, units uint64) {
	e.t.Helper()
	a, _ := e.assets.Find(solana.Devnet, symbol)
	o := sol.MustPublicKeyFromBase58(owner)
	ata, _, err := sol.FindProgramAddress([][]byte{o[:], a.Program[:], a.Mint[:]}, sol.SPLAssociatedTokenAccountProgramID)
	if err != nil {
		e.t.Fatal(err)
	}
	var info struct {
		Value *struct {
			Owner string `json:"owner"`
		} `json:"value"`
	}
	e.ln.Call(e.t, &info, "getAccountInfo", ata.String(), map[string]any{"encoding": "base64", "commitment": "confirmed"})
	if info.Value == nil {
		return "", 0
	}
	var bal struct {
		Value struct {
			Amount string `json:"amount"`
		} `json:"value"`
	}
	e.ln.Call(e.t, &bal, "getTokenAccountBalance", ata.String(), map[string]any{"commitment": "confirmed"})
	fmt.Sscan(bal.Value.Amount, &units)
	return info.Value.Owner, units
}

// A wallet holding USDC, USDT, EURC and PYUSD sends each: every transfer
// lands under its own program (PYUSD through Token-2022), and the
// transactions, their events and the balance name the asset.
func TestCurrencies_EachAssetSendsThroughItsProgram(t *testing.T) {
	t.Parallel()
	e := currencyEnv(t)
	eng, _ := e.startWorker()
	id, pubkey := e.agent(map[string]any{
		"assets": []string{"USDC", "USDT", "EURC", "PYUSD"}, "approval_threshold_usdc": 100,
		"daily_limit_eur": 50, "max_tx_eur": 20, "approval_threshold_eur": 50,
	}, 10_000_000)
	for _, s := range []string{"USDT", "EURC", "PYUSD"} {
		e.fundAsset(pubkey, s, 10_000_000)
	}
	to := newAddress()
	programs := map[string]string{"USDC": sol.TokenProgramID.String(), "USDT": sol.TokenProgramID.String(),
		"EURC": sol.TokenProgramID.String(), "PYUSD": sol.Token2022ProgramID.String()}
	for i, s := range []string{"USDC", "usdt", "EURC", "PYUSD"} {
		amount := fmt.Sprintf("1.%d", i+1)
		status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": json.Number(amount), "asset": s})
		if status != http.StatusOK || body["status"] != "sent" {
			t.Fatalf("send %s: %d %v", s, status, body)
		}
		e.settle(eng, body["signature"].(string), payment.TxConfirmed)
		sym := strings.ToUpper(s)
		program, units := e.assetAccount(to, sym)
		if program != programs[sym] || units != uint64(1_000_000+(i+1)*100_000) {
			t.Fatalf("%s: the recipient's account is under %q holding %d", sym, program, units)
		}
	}
	status, list := e.do("GET", "/api/public/v1/transactions?wallet_id="+id+"&asset=pyusd", e.key, nil)
	txs, _ := list["transactions"].([]any)
	if status != http.StatusOK || len(txs) != 1 {
		t.Fatalf("PYUSD transactions: %d %v", status, list)
	}
	if tx := txs[0].(map[string]any); tx["asset"] != "PYUSD" || tx["kind"] != "pyusd" || fmt.Sprint(tx["amount"]) != "1.4" {
		t.Fatalf("PYUSD transaction %v", tx)
	}
	sent := map[string]bool{}
	for _, ev := range e.events("tx.sent") {
		sent[fmt.Sprint(ev["asset"])] = true
	}
	if len(sent) != 4 || !sent["USDC"] || !sent["USDT"] || !sent["EURC"] || !sent["PYUSD"] {
		t.Fatalf("tx.sent events name %v", sent)
	}
	_, agent := e.do("GET", "/api/public/v1/agents/"+id, e.key, nil)
	held := map[string]string{}
	for _, a := range agent["balance"].(map[string]any)["assets"].([]any) {
		m := a.(map[string]any)
		held[m["symbol"].(string)] = fmt.Sprint(m["amount"])
	}
	if held["USDC"] != "8.9" || held["USDT"] != "8.8" || held["EURC"] != "8.7" || held["PYUSD"] != "8.6" {
		t.Fatalf("balance assets %v", held)
	}
	// The EURC send's stored row holds euros: read as a currency's
	// amount it is 1.3 EUR, and no sum of dollars can take it.
	var eurc payment.Transaction
	if err := e.db.NewSelect().Model(&eurc).Where("wallet_id = ? AND asset = 'EURC'", id).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	paid, err := eurc.Paid()
	if err != nil {
		t.Fatal(err)
	}
	if eur, ok := money.As[money.EUR](paid); !ok || eur != 1_300_000 || eurc.Currency != money.CodeEUR || eurc.Kind != "eurc" {
		t.Fatalf("the EURC send's row: %s (%s, kind %s), want 1.3 EUR", paid, eurc.Currency, eurc.Kind)
	}
	if usd, ok := money.As[money.USD](paid); ok {
		t.Fatalf("the EURC send's row reads as %s USD", usd)
	}
	// More PYUSD than the wallet holds: the node's refusal names PYUSD.
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 20, "asset": "PYUSD"})
	wantError(t, status, body, http.StatusUnprocessableEntity, "insufficient PYUSD")
}

// The _usdc limits govern every USD stablecoin together, the _eur limits
// the EUR ones (none set: no EUR spending), and an asset the policy does
// not list is blocked asset_not_allowed.
func TestCurrencies_LimitsPerCurrency(t *testing.T) {
	t.Parallel()
	e := currencyEnv(t)
	e.startWorker()
	id, pubkey := e.agent(map[string]any{
		"assets": []string{"USDC", "USDT", "EURC"}, "daily_limit_usdc": 10, "max_tx_usdc": 10, "approval_threshold_usdc": 100,
	}, 10_000_000)
	for _, s := range []string{"USDT", "EURC", "PYUSD"} {
		e.fundAsset(pubkey, s, 30_000_000)
	}
	to := newAddress()
	send := func(amount any, asset string) (int, map[string]any) {
		return e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": amount, "asset": asset})
	}
	if status, body := send(6, "USDC"); status != http.StatusOK {
		t.Fatalf("6 USDC: %d %v", status, body)
	}
	status, body := send(6, "USDT")
	wantError(t, status, body, http.StatusForbidden, "Blocked by policy")
	if body["reason"] != "exceeds_daily_limit" || fmt.Sprint(body["remaining_today_usdc"]) != "4" {
		t.Fatalf("6 USDT after 6 USDC under a 10 USD day: %v", body)
	}
	// No EUR limits: no EUR spending, though the USD day has room.
	status, body = send(1, "EURC")
	if status != http.StatusForbidden || body["reason"] != "exceeds_max_tx" || fmt.Sprint(body["remaining_today_eur"]) != "0" {
		t.Fatalf("EURC without EUR limits: %d %v", status, body)
	}
	if status, body := e.do("PATCH", "/api/public/v1/agents/"+id+"/policy", e.key,
		map[string]any{"daily_limit_eur": 20, "max_tx_eur": 10, "approval_threshold_eur": 100}); status != http.StatusOK ||
		fmt.Sprint(body["policy"].(map[string]any)["daily_limit_eur"]) != "20" {
		t.Fatalf("set EUR limits: %d %v", status, body)
	}
	// The USD day is used up to 6; EURC has its own day.
	for _, amount := range []int{6, 10} {
		if status, body := send(amount, "EURC"); status != http.StatusOK {
			t.Fatalf("%d EURC: %d %v", amount, status, body)
		}
	}
	status, body = send(5, "EURC")
	if status != http.StatusForbidden || body["reason"] != "exceeds_daily_limit" || fmt.Sprint(body["remaining_today_eur"]) != "4" {
		t.Fatalf("5 EURC after 16 under a 20 EUR day: %d %v", status, body)
	}
	status, body = send(1, "PYUSD")
	if status != http.StatusForbidden || body["reason"] != "asset_not_allowed" {
		t.Fatalf("PYUSD not in assets: %d %v", status, body)
	}
	blocked := e.events("tx.blocked")
	if last := blocked[len(blocked)-1]; last["reason"] != "asset_not_allowed" || last["asset"] != "PYUSD" {
		t.Fatalf("tx.blocked %v", last)
	}
	status, body = send(1, "DOGE")
	wantError(t, status, body, http.StatusUnprocessableEntity, "")
	if !strings.Contains(fmt.Sprint(body), "not an asset of devnet") {
		t.Fatalf("unknown asset: %v", body)
	}
	status, prev := e.do("POST", fmt.Sprintf(sendPath, id)+"/preview", e.key, map[string]any{"to": to, "amount": 1, "asset": "EURC"})
	if status != http.StatusOK || prev["outcome"] != "sent" || prev["currency"] != "EUR" || fmt.Sprint(prev["spent_today_eur"]) != "16" ||
		fmt.Sprint(prev["spent_today_usdc"]) != "6" {
		t.Fatalf("preview of EURC: %d %v", status, prev)
	}
	var reserved struct{ USD, EUR int64 }
	if err := e.db.NewRaw(`SELECT coalesce(sum(micros) FILTER (WHERE currency = 'USD'), 0), coalesce(sum(micros) FILTER (WHERE currency = 'EUR'), 0)
		FROM wallet_usage_hours WHERE wallet_id = ?`, id).Scan(context.Background(), &reserved.USD, &reserved.EUR); err != nil {
		t.Fatal(err)
	}
	if reserved.USD != 6_000_000 || reserved.EUR != 16_000_000 {
		t.Fatalf("reserved %+v", reserved)
	}
}

// 50 concurrent sends of 1, alternating USDC and USDT, against a USD day
// of 25: exactly 25 go out, whatever the asset, and the chain agrees.
func TestCurrencies_ConcurrentSendsAcrossUSDAssetsKeepTheLimit(t *testing.T) {
	t.Parallel()
	e := currencyEnv(t)
	eng, _ := e.startWorker()
	id, pubkey := e.agent(map[string]any{
		"assets": []string{"USDC", "USDT"}, "daily_limit_usdc": 25, "max_tx_usdc": 25, "approval_threshold_usdc": 1000,
	}, 50_000_000)
	e.fundAsset(pubkey, "USDT", 50_000_000)
	to := newAddress()
	var sigs []string
	counts := tally(50, retried(func(i int) (int, map[string]any) {
		return e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1, "asset": []string{"USDC", "USDT"}[i%2]})
	}), func(status int, body map[string]any) string {
		switch {
		case status == 200 && body["status"] == "sent":
			sigs = append(sigs, body["signature"].(string))
			return "sent"
		case status == 403 && body["reason"] == "exceeds_daily_limit":
			return "blocked"
		}
		return ""
	})
	if counts["sent"] != 25 || counts["blocked"] != 25 || len(counts) != 2 {
		t.Fatalf("outcomes %v", counts)
	}
	for _, sig := range sigs {
		e.settle(eng, sig, payment.TxConfirmed)
	}
	_, usdc := e.assetAccount(to, "USDC")
	_, usdt := e.assetAccount(to, "USDT")
	if usdc+usdt != 25_000_000 {
		t.Fatalf("the recipient holds %d USDC and %d USDT micro-units, want 25 together", usdc, usdt)
	}
}

// An agent key may narrow the assets and lower the EUR limits, never
// allow another asset, set EUR limits where none were, or raise one.
func TestCurrencies_AgentKeyNarrowsOnly(t *testing.T) {
	t.Parallel()
	e := currencyEnv(t)
	id, _ := e.agent(map[string]any{"assets": []string{"USDC", "USDT", "EURC"}, "daily_limit_eur": 50, "max_tx_eur": 20, "approval_threshold_eur": 10}, 0)
	bare, _ := e.agent(nil, 0)
	_, agentKey := e.agentKey()
	for _, step := range []struct {
		name, wallet string
		patch        map[string]any
		want         string
	}{
		{"allow PYUSD", id, map[string]any{"assets": []string{"USDC", "USDT", "EURC", "PYUSD"}}, "cannot allow another asset (PYUSD)"},
		{"raise the EUR day", id, map[string]any{"daily_limit_eur": 51}, "cannot raise a policy limit (daily_limit_eur from 50 to 51)"},
		{"EUR limits where none were", bare, map[string]any{"daily_limit_eur": 1}, "cannot allow EUR spending"},
		{"lower the EUR limits", id, map[string]any{"daily_limit_eur": 40, "approval_threshold_eur": 5}, ""},
		{"narrow the assets", id, map[string]any{"assets": []string{"USDC"}}, ""},
		{"and back", id, map[string]any{"assets": []string{"USDC", "USDT"}}, "cannot allow another asset (USDT)"},
	} {
		e.patchStep(agentKey, step.wallet, step.name, step.patch, step.want)
	}
	_, a := e.do("GET", "/api/public/v1/agents/"+id, e.key, nil)
	p := a["policy"].(map[string]any)
	if fmt.Sprint(p["assets"]) != "[USDC]" || fmt.Sprint(p["daily_limit_eur"]) != "40" || fmt.Sprint(p["max_tx_eur"]) != "20" {
		t.Fatalf("policy %v", p)
	}
	status, body := e.do("PATCH", "/api/public/v1/agents/"+id+"/policy", e.key, map[string]any{"assets": []string{"usdc"}})
	wantError(t, status, body, http.StatusUnprocessableEntity, "")
}

// PYUSD and EURC sends through a node that is down, then drops a third of
// what it is sent: while it is down each answers 503 and reserves nothing;
// retried with its Idempotency-Key once it is back, every one is paid,
// exactly once, and each currency reserves exactly its own.
func TestCurrencies_SendsThroughAFaultyNodeArePaidOnce(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	table, err := asset.Defaults().With("devnet:USDT:" + usdtMint + ":token:6:USD")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{ln: ln, assets: table})
	eng, _ := e.startWorker()
	id, pubkey := e.agent(map[string]any{
		"assets": []string{"USDC", "PYUSD", "EURC"}, "approval_threshold_usdc": 100,
		"daily_limit_eur": 50, "max_tx_eur": 20, "approval_threshold_eur": 50,
	}, 0)
	e.fundAsset(pubkey, "PYUSD", 20_000_000)
	e.fundAsset(pubkey, "EURC", 20_000_000)
	to := newAddress()
	const n = 10
	send := func(i int) (int, map[string]any) {
		hdr := http.Header{"Idempotency-Key": {fmt.Sprint("faulty-", i)}}
		status, raw, _ := e.request("POST", fmt.Sprintf(sendPath, id), e.key,
			map[string]any{"to": to, "amount": 1, "asset": []string{"PYUSD", "EURC"}[i%2]}, hdr)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		return status, body
	}
	ln.SetFaults(t, localnettest.Faults{Down: true})
	for i := range n {
		if status, body := send(i); status != http.StatusServiceUnavailable {
			t.Fatalf("send %d with the node down: %d %v", i, status, body)
		}
	}
	if r := e.reservedToday(id); r != 0 {
		t.Fatalf("reserved %d while the node was down", r)
	}
	ln.SetFaults(t, localnettest.Faults{DropRate: 0.33})
	var sigs []string
	for i := range n {
		status, body := send(i)
		if status != http.StatusOK || body["status"] != "sent" {
			t.Fatalf("send %d retried with the node back: %d %v", i, status, body)
		}
		sigs = append(sigs, body["signature"].(string))
	}
	ln.SetFaults(t, localnettest.Faults{})
	for _, sig := range sigs {
		e.settle(eng, sig, payment.TxConfirmed)
	}
	for _, s := range []string{"PYUSD", "EURC"} {
		if _, units := e.assetAccount(to, s); units != n/2*1_000_000 {
			t.Fatalf("the recipient holds %d %s units, want %d", units, s, n/2*1_000_000)
		}
	}
	var usd, eur int64
	if err := e.db.NewRaw(`SELECT coalesce(sum(micros) FILTER (WHERE currency = 'USD'), 0), coalesce(sum(micros) FILTER (WHERE currency = 'EUR'), 0)
		FROM wallet_usage_hours WHERE wallet_id = ?`, id).Scan(context.Background(), &usd, &eur); err != nil {
		t.Fatal(err)
	}
	if usd != n/2*1_000_000 || eur != n/2*1_000_000 {
		t.Fatalf("reserved USD %d, EUR %d; want %d each", usd, eur, n/2*1_000_000)
	}
}
