package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

const feePayerPath = "/api/public/v1/fee-payer"

// lamports is owner's SOL on the env's localnet.
func (e *env) lamports(owner string) uint64 {
	e.t.Helper()
	b, err := solana.NewClient(e.ln.URL, solana.Devnet, 5*time.Second).Balance(context.Background(), sol.MustPublicKeyFromBase58(owner))
	if err != nil {
		e.t.Fatal(err)
	}
	return b.Lamports
}

// chainFee is the fee a confirmed transaction paid, as the chain charged it.
func (e *env) chainFee(sig string) uint64 {
	e.t.Helper()
	maxV := uint64(0)
	got, err := solana.NewClient(e.ln.URL, solana.Devnet, 5*time.Second).RPC().GetTransaction(context.Background(), sol.MustSignatureFromBase58(sig),
		&rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &maxV})
	if err != nil || got.Meta == nil {
		e.t.Fatalf("getTransaction %s: %v", sig, err)
	}
	return got.Meta.Fee
}

// sponsor turns the account's fee payer on with budget SOL a day and
// funds it with fund SOL on the localnet; it answers its address.
func (e *env) sponsor(budget string, fund float64) string {
	e.t.Helper()
	status, raw, _ := e.request("PUT", feePayerPath, e.key, `{"enabled": true, "daily_budget_sol": `+budget+`}`, nil)
	if status != http.StatusOK || !strings.Contains(string(raw), `"enabled":true`) {
		e.t.Fatalf("enable the fee payer: %d %s", status, raw)
	}
	status, fp := e.do("GET", feePayerPath, e.key, nil)
	addr, _ := fp["address"].(string)
	if status != http.StatusOK || addr == "" {
		e.t.Fatalf("GET /fee-payer: %d %v", status, fp)
	}
	if status, body := e.do("POST", feePayerPath+"/fund", e.key, map[string]any{"sol": fund}); status != http.StatusOK {
		e.t.Fatalf("fund the fee payer: %d %v", status, body)
	}
	return addr
}

// With fee sponsorship on, a wallet holding USDC and 0 SOL sends to a new
// recipient; its SOL stays 0; the fee payer's SOL fell by the fee (two
// signatures) plus the recipient account's rent. Over
// the fee payer's daily budget, a send answers 503
// fee_payer_budget_exceeded and nothing moves (no transaction, nothing
// reserved, no lamport or USDC on chain, the Idempotency-Key free again),
// and an approval meeting it stays pending; a send to a recipient whose
// account exists costs no rent and still fits. Raising the budget lets the
// same key through.
func TestFeePayer_PaysFeeAndRentWithinItsBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	_, approver := e.adminKey()
	id, pubkey := e.agent(map[string]any{"daily_limit_usdc": 100, "max_tx_usdc": 50, "approval_threshold_usdc": 5}, 20_000_000)
	e.ln.SetLamports(t, pubkey, 0)

	// Off (never configured): the wallet without SOL cannot pay the fee.
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 1})
	wantError(t, status, body, http.StatusUnprocessableEntity, "insufficient SOL: the wallet needs SOL")

	feePayer := e.sponsor("0.01", 1)
	before := e.lamports(feePayer)
	if before != solana.LamportsPerSOL {
		t.Fatalf("fee payer funded with %d lamports, want 1 SOL", before)
	}

	to := newAddress()
	status, body = e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1.5})
	if status != http.StatusOK || body["status"] != "sent" {
		t.Fatalf("sponsored send: %d %v", status, body)
	}
	sig := body["signature"].(string)
	e.settle(eng, sig, payment.TxConfirmed)
	if got := e.chainUSDC(to); got != 1_500_000 {
		t.Fatalf("recipient holds %d micro-USDC", got)
	}
	if got := e.lamports(pubkey); got != 0 {
		t.Fatalf("the wallet holds %d lamports after a sponsored send, want 0", got)
	}
	fee := e.chainFee(sig)
	if fee < 2*solana.BaseFeeLamports {
		t.Fatalf("fee %d: want two signatures' base fee at least", fee)
	}
	spent := before - e.lamports(feePayer)
	if spent != fee+solana.TokenAccountRentLamports {
		t.Fatalf("the fee payer spent %d lamports, want the fee %d plus the rent %d", spent, fee, solana.TokenAccountRentLamports)
	}
	var row payment.Transaction
	if err := e.db.NewSelect().Model(&row).Where("signature = ?", sig).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if row.FeePayer == nil || *row.FeePayer != feePayer || row.SponsoredLamports == nil || uint64(*row.SponsoredLamports) != spent ||
		row.FeeLamports == nil || uint64(*row.FeeLamports) != fee {
		t.Fatalf("recorded fee payer %v, sponsored %v, fee %v; want %s, %d, %d", row.FeePayer, row.SponsoredLamports, row.FeeLamports, feePayer, spent, fee)
	}
	_, list := e.do("GET", "/api/public/v1/transactions?wallet_id="+id, e.key, nil)
	if shown := list["transactions"].([]any)[0].(map[string]any); shown["fee_payer"] != feePayer || shown["fee_lamports"] != float64(fee) {
		t.Fatalf("GET /transactions shows %v, want fee_payer %s and fee_lamports %d", shown, feePayer, fee)
	}
	status, fp := e.do("GET", feePayerPath, e.key, nil)
	if status != http.StatusOK || fp["spent_today_sol"] != float64(spent)/1e9 || fp["transactions_today"] != 1.0 ||
		fp["sol"] != float64(before-spent)/1e9 || fp["daily_budget_sol"] != 0.01 || fp["low"] != false {
		t.Fatalf("GET /fee-payer after one send: %d %v", status, fp)
	}

	// Left of 0.01 SOL: ~7.95 million lamports, enough for three more
	// new recipients (~2.05 million each) but not four.
	left := 10_000_000 - int64(spent)
	for range 3 {
		status, body = e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 0.1})
		if status != http.StatusOK {
			t.Fatalf("send within the budget (%d lamports left): %d %v", left, status, body)
		}
	}
	reserved := e.reservedToday(id)
	txs := e.countRows("transactions")
	afterSends := e.waitLamports(feePayer)
	over := newAddress()
	idem := "sponsor-" + over
	status, raw, _ := e.sendOnce(id, idem, map[string]any{"to": over, "amount": 1})
	if status != http.StatusServiceUnavailable || !strings.Contains(string(raw), `"reason":"fee_payer_budget_exceeded"`) ||
		!strings.Contains(string(raw), "daily budget of 0.01 SOL") || !strings.Contains(string(raw), "nothing was signed or reserved") {
		t.Fatalf("send over the fee payer's budget: %d %s", status, raw)
	}
	e.wantRows("transactions", txs)
	if r := e.reservedToday(id); r != reserved {
		t.Fatalf("reserved %d after a send over budget, want %d", r, reserved)
	}

	// An approval meeting the budget is not signed: pending again.
	apID := e.park(id, newAddress(), 6)
	status, body = e.approve(apID, approver, nil)
	if status != http.StatusServiceUnavailable || body["reason"] != "fee_payer_budget_exceeded" || !strings.Contains(body["error"].(string), "pending") {
		t.Fatalf("approve over the budget: %d %v", status, body)
	}
	if st := e.approvalStatus(apID); st != "pending" {
		t.Fatalf("approval %s after the budget refused it, want pending", st)
	}

	// To a recipient whose account exists, no rent: the fee still fits.
	status, body = e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 0.5})
	if status != http.StatusOK {
		t.Fatalf("send to an existing account within the budget: %d %v", status, body)
	}
	e.settle(eng, body["signature"].(string), payment.TxConfirmed)
	if got := e.chainUSDC(over); got != 0 {
		t.Fatalf("the refused recipient holds %d", got)
	}
	if got := e.lamports(pubkey); got != 0 {
		t.Fatalf("the wallet holds %d lamports, want 0", got)
	}
	if got, want := e.lamports(feePayer), afterSends-e.chainFee(body["signature"].(string)); got != want {
		t.Fatalf("fee payer holds %d lamports, want %d: only the last send's fee moved", got, want)
	}

	// A larger budget: the same Idempotency-Key goes through.
	e.sponsor("1", 0.000001)
	status, raw, _ = e.sendOnce(id, idem, map[string]any{"to": over, "amount": 1})
	if status != http.StatusOK || !strings.Contains(string(raw), `"sent"`) {
		t.Fatalf("the same key after raising the budget: %d %s", status, raw)
	}
}

// waitLamports is owner's balance once it has stopped moving (the sends
// before it landed).
func (e *env) waitLamports(owner string) uint64 {
	e.t.Helper()
	last := e.lamports(owner)
	for range 50 {
		time.Sleep(300 * time.Millisecond)
		now := e.lamports(owner)
		if now == last {
			return now
		}
		last = now
	}
	e.t.Fatal("balance never settled")
	return 0
}

// Concurrent sends from several wallets of one account (no wallet lock in
// common) never take the fee payer past its budget: the budget is counted
// under the fee payer's row lock. With room for exactly five sponsored
// sends to new recipients, 24 at once send five, the rest answer 503
// fee_payer_budget_exceeded, and the fee payer paid no more than the
// budget on chain.
func TestFeePayer_ConcurrentSendsRespectBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	var wallets []string
	for range 4 {
		id, pubkey := e.agent(map[string]any{"daily_limit_usdc": 100, "max_tx_usdc": 50, "approval_threshold_usdc": 100}, 20_000_000)
		e.ln.SetLamports(t, pubkey, 0)
		wallets = append(wallets, id)
	}
	// A new recipient costs two base fees, the priority fee (0 on an
	// idle localnet: checked below) and the rent.
	cost := int64(2*solana.BaseFeeLamports + solana.TokenAccountRentLamports)
	budget := 5*cost + cost/2
	feePayer := e.sponsor(fmt.Sprintf("%d.%09d", budget/1e9, budget%1e9), 1)
	before := e.lamports(feePayer)

	var sigs []string
	counts := tally(24, retried(func(i int) (int, map[string]any) {
		return e.do("POST", fmt.Sprintf(sendPath, wallets[i%len(wallets)]), e.key, map[string]any{"to": newAddress(), "amount": 0.01})
	}), func(status int, body map[string]any) string {
		switch {
		case status == http.StatusOK && body["status"] == "sent":
			sigs = append(sigs, body["signature"].(string))
			return "sent"
		case status == http.StatusServiceUnavailable && body["reason"] == "fee_payer_budget_exceeded":
			return "over"
		}
		return ""
	})
	if counts["sent"] != 5 || counts["over"] != 19 || len(counts) != 2 {
		t.Fatalf("outcomes %v, want 5 sent and 19 over the budget", counts)
	}
	var sponsored int64
	for _, sig := range sigs {
		e.settle(eng, sig, payment.TxConfirmed)
		var row payment.Transaction
		if err := e.db.NewSelect().Model(&row).Where("signature = ?", sig).Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		if *row.SponsoredLamports != cost {
			t.Fatalf("a send's sponsored cost %d, want %d (priority fee 0 on this market)", *row.SponsoredLamports, cost)
		}
		sponsored += *row.SponsoredLamports
	}
	paid := int64(before - e.lamports(feePayer))
	if paid != sponsored || paid > budget {
		t.Fatalf("the fee payer paid %d lamports on chain, recorded %d, budget %d", paid, sponsored, budget)
	}
}

// PUT /fee-payer refuses a bad budget or body with a 422 naming the
// field, and nothing changes: no fee payer is made.
func TestFeePayer_PutValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		body string
		want string
	}{
		{`{"enabled": true, "daily_budget_sol": 0}`, "daily_budget_sol"},
		{`{"enabled": true, "daily_budget_sol": -1}`, "daily_budget_sol"},
		{`{"enabled": true, "daily_budget_sol": 100.000000001}`, "daily_budget_sol"},
		{`{"enabled": true, "daily_budget_sol": 0.0000000001}`, "9 decimal places"},
		{`{"enabled": true, "daily_budget_sol": "1"}`, "daily_budget_sol"},
		{`{"daily_budget_sol": 1}`, "enabled"},
		{`{"enabled": "yes"}`, "enabled"},
	} {
		status, raw, _ := e.request("PUT", feePayerPath, e.key, c.body, nil)
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(raw), c.want) {
			t.Errorf("PUT %s: %d %s, want 422 naming %s", c.body, status, raw, c.want)
		}
	}
	e.wantRows("fee_payers", 0)
	status, body := e.do("POST", feePayerPath+"/fund", e.key, map[string]any{"sol": 1})
	wantError(t, status, body, http.StatusConflict, "enable it first")

	// Off with a budget: kept, no wallet made; 100 SOL is the bound.
	status, body = e.do("PUT", feePayerPath, e.key, map[string]any{"enabled": false, "daily_budget_sol": 100})
	if status != http.StatusOK || body["address"] != nil || body["daily_budget_sol"] != 100.0 || body["enabled"] != false {
		t.Fatalf("PUT off with a budget: %d %v", status, body)
	}
	// The fee payer is no agent wallet: none is listed, none made.
	status, body = e.do("PUT", feePayerPath, e.key, map[string]any{"enabled": true})
	if status != http.StatusOK || body["address"] == nil || body["daily_budget_sol"] != 100.0 {
		t.Fatalf("PUT on: %d %v", status, body)
	}
	e.wantRows("wallets", 0)
}

// The Go client's fee payer methods, and the reason of a send over the
// budget on its *APIError.
func TestFeePayer_GoClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	ctx := context.Background()
	admin := client.New(e.url, e.key, client.WithRetries(0))
	if fp, err := admin.GetFeePayer(ctx); err != nil || fp.Enabled || fp.Address != nil || fp.DailyBudgetSOL.String() != "1" {
		t.Fatalf("a fee payer never configured: %+v %v", fp, err)
	}
	if _, err := admin.FundFeePayer(ctx, "1"); err == nil || err.(*client.APIError).Status != http.StatusConflict {
		t.Fatalf("fund before it exists: %v", err)
	}
	fp, err := admin.UpdateFeePayer(ctx, true, "0.000001")
	if err != nil || !fp.Enabled || fp.Address == nil || fp.DailyBudgetSOL.String() != "0.000001" || !fp.Low {
		t.Fatalf("enable: %+v %v", fp, err)
	}
	if b, err := admin.FundFeePayer(ctx, "0.5"); err != nil || b.SOL.String() != "0.5" {
		t.Fatalf("fund: %+v %v", b, err)
	}
	if fp, err = admin.GetFeePayer(ctx); err != nil || fp.SOL == nil || fp.SOL.String() != "0.5" || fp.Low {
		t.Fatalf("funded: %+v %v", fp, err)
	}
	id, _ := e.agent(nil, 5_000_000)
	_, err = admin.Send(ctx, id, client.SendRequest{To: newAddress(), Amount: "1"})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || ae.Reason != "fee_payer_budget_exceeded" {
		t.Fatalf("send over a 1,000-lamport budget: %v", err)
	}
	if fp, err = admin.UpdateFeePayer(ctx, false, ""); err != nil || fp.Enabled || fp.DailyBudgetSOL.String() != "0.000001" {
		t.Fatalf("disable: %+v %v", fp, err)
	}
	if _, err := admin.Send(ctx, id, client.SendRequest{To: newAddress(), Amount: "1"}); err != nil {
		t.Fatalf("send paid by the wallet with sponsorship off: %v", err)
	}
}

// A sponsored transfer is 96 bytes larger (the fee payer's signature and
// address): a memo that just fits an unsponsored one answers 422 "memo
// too long" when sponsored, with nothing signed or reserved.
func TestFeePayer_MemoTooLongWhenSponsored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, pubkey := e.agent(nil, 10_000_000)
	e.ln.SetLamports(t, pubkey, 0)
	e.sponsor("1", 1)
	k := 200
	for solana.CheckTransferSize(solana.Devnet, strings.Repeat("😀", k)) != nil {
		k--
	}
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 1, "memo": strings.Repeat("😀", k)})
	wantError(t, status, body, http.StatusUnprocessableEntity, "memo too long")
	if n := e.countRows("transactions"); n != 0 || e.reservedToday(id) != 0 {
		t.Fatalf("%d transactions after a refusal", n)
	}
	status, body = e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 1, "memo": strings.Repeat("😀", k-24)})
	if status != http.StatusOK {
		t.Fatalf("a memo 96 bytes shorter, sponsored: %d %v", status, body)
	}
}

// With the Solana node down, GET /fee-payer still answers the budget and
// the day's spend (the database's), with sol null, at once.
func TestFeePayer_GetWithNodeDown(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	addr := e.sponsor("0.5", 1)
	ln.SetFaults(t, localnettest.Faults{Down: true})
	start := time.Now()
	status, fp := e.do("GET", feePayerPath, e.key, nil)
	if status != http.StatusOK || fp["sol"] != nil || fp["address"] != addr || fp["enabled"] != true || fp["daily_budget_sol"] != 0.5 || fp["low"] != false {
		t.Fatalf("GET /fee-payer with the node down: %d %v", status, fp)
	}
	if took := time.Since(start); took > 12*time.Second {
		t.Fatalf("answered after %v", took)
	}
	ln.SetFaults(t, localnettest.Faults{})
	if status, fp = e.do("GET", feePayerPath, e.key, nil); status != http.StatusOK || fp["sol"] != 1.0 {
		t.Fatalf("GET /fee-payer with the node back: %d %v", status, fp)
	}
}

// A fee payer without the SOL for the fee: the node's preflight refuses
// the send, and the answer names the fee payer, not the wallet.
func TestFeePayer_WithoutSOLIsNamed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(nil, 10_000_000)
	e.sponsor("1", 0.000001)
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 1})
	wantError(t, status, body, http.StatusUnprocessableEntity, "the account's fee payer needs SOL")
}

// Sponsored sends the node refuses pay nothing, so they use up nothing of
// the fee payer's budget. The budget has room for five sends to new
// recipients; an empty wallet's six sends of 0.000001 USDC to fresh
// addresses are each signed and refused at preflight (nothing moves);
// another wallet's sponsored send then lands, and GET /fee-payer counts
// only what the fee payer paid on chain.
func TestFeePayer_RefusedSendsDoNotUseUpTheBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	empty, emptyKey := e.agent(map[string]any{"daily_limit_usdc": 100, "max_tx_usdc": 50, "approval_threshold_usdc": 100}, 0)
	e.ln.SetLamports(t, emptyKey, 0)
	e.ln.SetTokenBalance(t, emptyKey, solana.DevnetUSDCMint.String(), 0)
	funded, fundedKey := e.agent(map[string]any{"daily_limit_usdc": 100, "max_tx_usdc": 50, "approval_threshold_usdc": 100}, 20_000_000)
	e.ln.SetLamports(t, fundedKey, 0)
	cost := int64(2*solana.BaseFeeLamports + solana.TokenAccountRentLamports)
	budget := 5*cost + cost/2
	feePayer := e.sponsor(fmt.Sprintf("%d.%09d", budget/1e9, budget%1e9), 1)
	before := e.lamports(feePayer)

	for range 6 {
		status, body := e.do("POST", fmt.Sprintf(sendPath, empty), e.key, map[string]any{"to": newAddress(), "amount": 0.000001})
		wantError(t, status, body, http.StatusUnprocessableEntity, "insufficient USDC")
	}
	if n, err := e.db.NewSelect().Table("transactions").Where("fee_payer IS NOT NULL AND refused_at IS NOT NULL").Count(context.Background()); err != nil || n != 6 {
		t.Fatalf("%d refused sponsored transactions (%v), want 6 signed and refused", n, err)
	}
	if status, fp := e.do("GET", feePayerPath, e.key, nil); status != http.StatusOK || fp["spent_today_sol"] != 0.0 {
		t.Fatalf("GET /fee-payer after six refusals: %d %v", status, fp)
	}

	status, body := e.do("POST", fmt.Sprintf(sendPath, funded), e.key, map[string]any{"to": newAddress(), "amount": 1})
	if status != http.StatusOK || body["status"] != "sent" {
		t.Fatalf("another wallet's sponsored send: %d %v", status, body)
	}
	e.settle(eng, body["signature"].(string), payment.TxConfirmed)
	paid := before - e.lamports(feePayer)
	if paid != uint64(cost) {
		t.Fatalf("the fee payer paid %d lamports on chain, want %d (one send: two base fees and the rent)", paid, cost)
	}
	if status, fp := e.do("GET", feePayerPath, e.key, nil); status != http.StatusOK || fp["spent_today_sol"] != float64(paid)/1e9 {
		t.Fatalf("GET /fee-payer counts %v, the fee payer paid %d lamports: %d %v", fp["spent_today_sol"], paid, status, fp)
	}
}

// closeUSDCAccount has owner burn its USDC and close its token
// account, taking the rent back, as any recipient may.
func (e *env) closeUSDCAccount(owner sol.PublicKey, key sol.PrivateKey) {
	e.t.Helper()
	ctx := context.Background()
	c := solana.NewClient(e.ln.URL, solana.Devnet, 5*time.Second)
	e.ln.SetLamports(e.t, owner.String(), 10_000_000)
	ata, _, _ := sol.FindAssociatedTokenAddress(owner, solana.DevnetUSDCMint)
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	tx, err := sol.NewTransaction([]sol.Instruction{
		token.NewBurnCheckedInstruction(uint64(e.chainUSDC(owner.String())), 6, ata, solana.DevnetUSDCMint, owner, nil).Build(),
		token.NewCloseAccountInstruction(ata, owner, owner, nil).Build(),
	}, bh.Hash, sol.TransactionPayer(owner))
	if err != nil {
		e.t.Fatal(err)
	}
	raw, _, err := solana.Sign(context.Background(), tx, signer.Plain(ed25519.PrivateKey(key)))
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := c.Broadcast(ctx, raw); err != nil {
		e.t.Fatalf("close the recipient's account: %v", err)
	}
	for range 50 {
		if ok, err := c.TokenAccountExists(ctx, owner); err == nil && !ok {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatal("the recipient's account was never closed")
}

// A recipient's token account seen to exist is remembered (KnownAccounts,
// 10 minutes), and a sponsored send to it is counted without rent. The
// recipient closes the account (taking the rent back) and is paid again.
// Were the transfer to offer to make the account, at a low bump (ground in
// milliseconds) its compute limit would cover it, and the fee payer would
// pay 2,039,280 lamports of rent its budget never counted: repeated, a
// rogue agent would drain it to an address it controls. The fee payer
// must never pay more than it recorded, nor more than its budget.
func TestFeePayer_ClosedRecipientNeverCostsUncountedRent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	ctx := context.Background()
	id, pubkey := e.agent(map[string]any{"daily_limit_usdc": 100, "max_tx_usdc": 50, "approval_threshold_usdc": 100}, 20_000_000)
	e.ln.SetLamports(t, pubkey, 0)
	feePayer := e.sponsor("1", 1)
	r, rkey := localnettest.LowBumpOwner(t, 243)

	send := func() (int, map[string]any) {
		return e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": r.String(), "amount": 0.01})
	}
	for i := range 2 { // the first creates R's account (rent counted); the second sees it and remembers it
		status, body := send()
		if status != http.StatusOK || body["status"] != "sent" {
			t.Fatalf("send %d: %d %v", i, status, body)
		}
		e.settle(eng, body["signature"].(string), payment.TxConfirmed)
	}
	rBefore := e.lamports(r.String())
	e.closeUSDCAccount(r, rkey)
	if got := e.lamports(r.String()); got < rBefore+solana.TokenAccountRentLamports-10_000 {
		t.Fatalf("R holds %d lamports after closing, want the rent back", got)
	}

	// Today's budget: what was spent plus room for fees, far below a rent.
	var spent int64
	if err := e.db.NewSelect().Table("transactions").ColumnExpr("coalesce(sum(sponsored_lamports), 0)").Where("fee_payer IS NOT NULL").Scan(ctx, &spent); err != nil {
		t.Fatal(err)
	}
	budget := spent + 100_000
	if status, body := e.do("PUT", feePayerPath, e.key, map[string]any{"enabled": true, "daily_budget_sol": json64(budget)}); status != http.StatusOK {
		t.Fatalf("PUT budget: %d %v", status, body)
	}
	before := e.waitLamports(feePayer)

	status, body := send()
	if status == http.StatusServiceUnavailable && body["reason"] == "fee_payer_budget_exceeded" {
		return // the rent was counted: correct
	}
	if status == http.StatusUnprocessableEntity {
		// The transfer does not offer to make the account: refused,
		// nothing sent, nothing paid; the next send reads the chain again
		// (and counts the rent).
		if paid := int64(before - e.waitLamports(feePayer)); paid != 0 || e.chainUSDC(r.String()) != 0 {
			t.Fatalf("refused, yet the fee payer paid %d lamports (R's account re-created: %v)", paid, e.chainUSDC(r.String()) > 0)
		}
		status, body = send()
		if status != http.StatusServiceUnavailable || body["reason"] != "fee_payer_budget_exceeded" {
			t.Fatalf("the send after the refusal: %d %v, want the rent counted (over the budget)", status, body)
		}
		return
	}
	if status != http.StatusOK {
		t.Fatalf("send after R closed its account: %d %v", status, body)
	}
	sig := body["signature"].(string)
	var row payment.Transaction
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := eng.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if err := e.db.NewSelect().Model(&row).Where("signature = ?", sig).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if row.Status != payment.TxPending || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	paid := int64(before - e.waitLamports(feePayer))
	if paid != *row.SponsoredLamports || spent+paid > budget {
		t.Fatalf("the fee payer paid %d lamports for the send (status %s), recorded %d; today %d against a budget of %d; R's account re-created: %v",
			paid, row.Status, *row.SponsoredLamports, spent+paid, budget, e.chainUSDC(r.String()) > 0)
	}
}

// json64 is lamports as a JSON number of SOL.
func json64(lamports int64) any {
	return jsonNumber(fmt.Sprintf("%d.%09d", lamports/solana.LamportsPerSOL, lamports%solana.LamportsPerSOL))
}

type jsonNumber string

func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }
