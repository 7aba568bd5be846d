package httpapi_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
)

var computeBudgetProgram = sol.MustPublicKeyFromBase58("ComputeBudget111111111111111111111111111111")

// computeBudget reads the compute-unit price and limit a signed
// transaction requests.
func computeBudget(t testing.TB, raw []byte) (price uint64, limit uint32) {
	t.Helper()
	tx, err := sol.TransactionFromBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, ix := range tx.Message.Instructions {
		if !tx.Message.AccountKeys[ix.ProgramIDIndex].Equals(computeBudgetProgram) || len(ix.Data) == 0 {
			continue
		}
		switch {
		case ix.Data[0] == 2 && len(ix.Data) >= 5:
			limit = binary.LittleEndian.Uint32(ix.Data[1:5])
		case ix.Data[0] == 3 && len(ix.Data) >= 9:
			price = binary.LittleEndian.Uint64(ix.Data[1:9])
		}
	}
	return price, limit
}

// congested starts a private localnet whose market's minimum is
// minFee µlamports, with a full window of recent slots.
func congested(t *testing.T, minFee uint64) *localnettest.Localnet {
	ln := localnettest.Start(t)
	ln.SetMinPriorityFee(t, minFee)
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 150})
	return ln
}

// withFees gives every engine of e the fee policy p and fee readings
// cached for ttl.
func (e *env) withFees(p solana.FeePolicy, ttl time.Duration) {
	e.engine = func(eng *payment.Engine) {
		eng.Fees = p
		for n, node := range eng.Nodes {
			node.Fees = solana.NewFeeCache(node.Client, ttl)
			eng.Nodes[n] = node
		}
	}
}

// With the market's minimum at 50,000 µlamports and the cap at 100,000, a
// burst of sends (new and existing recipients, with and without memo) all
// land, each offering at least the minimum; the fee recorded and shown in
// GET /transactions is the fee charged on chain; the burst read the market
// once. CONGESTED_SENDS=100 runs a hundred.
func TestPriorityFee_CongestedMarketSendsLandPayingTheMinimum(t *testing.T) {
	t.Parallel()
	n := 20
	if v, err := strconv.Atoi(os.Getenv("CONGESTED_SENDS")); err == nil && v > 0 {
		n = v
	}
	ln := congested(t, 50_000)
	e := newEnv(t, envOpts{ln: ln})
	e.withFees(solana.FeePolicy{Percentile: 75, MaxMicroLamports: 100_000, MaxLamports: 1_000_000}, time.Minute)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 1000, "max_tx_usdc": 10, "approval_threshold_usdc": 1000}, 100_000_000)
	recipients := make([]string, n)
	for i := range recipients {
		recipients[i] = newAddress()
		if i%2 == 1 { // half already hold a USDC account
			ln.SetTokenBalance(t, recipients[i], solana.DevnetUSDCMint.String(), 1)
		}
	}
	ln.ResetCalls(t)

	sigs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := map[string]any{"to": recipients[i], "amount": 0.25}
			if i%3 == 0 {
				body["memo"] = fmt.Sprintf("invoice %d", i)
			}
			status, out := e.do("POST", fmt.Sprintf(sendPath, id), e.key, body)
			if status != http.StatusOK || out["status"] != "sent" {
				t.Errorf("send %d: %d %v", i, status, out)
				return
			}
			sigs[i] = out["signature"].(string)
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if calls := ln.Calls(t)["getRecentPrioritizationFees"]; calls != 1 {
		t.Fatalf("%d getRecentPrioritizationFees calls for a burst of %d sends, want 1", calls, n)
	}

	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	_, body := e.do("GET", "/api/public/v1/transactions", e.key, nil)
	shown := map[string]float64{}
	for _, tx := range body["transactions"].([]any) {
		m := tx.(map[string]any)
		fee, ok := m["fee_lamports"].(float64)
		if !ok {
			t.Fatalf("GET /transactions: fee_lamports %v", m["fee_lamports"])
		}
		shown[m["signature"].(string)] = fee
	}
	var total int64
	for i, sig := range sigs {
		e.settle(eng, sig, payment.TxConfirmed)
		var row payment.Transaction
		if err := e.db.NewSelect().Model(&row).Where("signature = ?", sig).Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		price, limit := computeBudget(t, row.SignedTx)
		if price < 50_000 || price > 100_000 {
			t.Errorf("send %d offers %d µlamports per unit, want the market's 50,000 to the cap's 100,000", i, price)
		}
		maxV := uint64(0)
		got, err := c.RPC().GetTransaction(context.Background(), sol.MustSignatureFromBase58(sig),
			&rpc.GetTransactionOpts{Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &maxV})
		if err != nil || got.Meta == nil {
			t.Fatalf("getTransaction %d: %v", i, err)
		}
		want := solana.TransferFeeLamports(limit, price)
		if got.Meta.Fee != want || row.FeeLamports == nil || uint64(*row.FeeLamports) != want || shown[sig] != float64(want) {
			t.Errorf("send %d: fee on chain %d, recorded %v, shown %v; want %d (price %d × %d units + 5,000)",
				i, got.Meta.Fee, row.FeeLamports, shown[sig], want, price, limit)
		}
		total += int64(got.Meta.Fee)
		if got.Meta.Fee < 5_000+solana.PriorityFee(50_000, limit) {
			t.Errorf("send %d paid %d lamports, below the market's minimum", i, got.Meta.Fee)
		}
		memo := ""
		if row.Memo != nil {
			memo = *row.Memo
		}
		shape := solana.Transfer{To: sol.MustPublicKeyFromBase58(recipients[i]), Memo: memo, RecipientAccountExists: i%2 == 1}
		if wantUnits, _ := solana.TransferComputeUnits(solana.Devnet, shape); limit != wantUnits {
			t.Errorf("send %d requests %d compute units, want %d for its shape (account exists %v, memo %q)", i, limit, wantUnits, i%2 == 1, memo)
		}
		wantUSDC := money.Micros[money.USD](250_000)
		if i%2 == 1 {
			wantUSDC++
		}
		if have := e.chainUSDC(recipients[i]); have != wantUSDC {
			t.Errorf("recipient %d holds %d", i, have)
		}
	}
	// Fees per day: the day's confirmed transactions' fees, as charged.
	a, err := client.New(e.url, e.key).GetAnalytics(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Spend) != 1 || a.Spend[0].WalletID != id || a.Spend[0].FeeLamports != total || a.Spend[0].Transactions != n {
		t.Fatalf("analytics spend %+v, want %d transactions and %d lamports of fees", a.Spend, n, total)
	}
}

// With the cap at 10,000 µlamports below the market's 50,000 minimum, a
// send does not pass silently: it answers 503 with reason
// fee_cap_below_market, nothing is signed or reserved, and the same
// Idempotency-Key goes through once the market is back within the cap.
func TestPriorityFee_CapBelowMarketRefusesBeforeSigning(t *testing.T) {
	t.Parallel()
	ln := congested(t, 50_000)
	e := newEnv(t, envOpts{ln: ln})
	e.withFees(solana.FeePolicy{Percentile: 75, MaxMicroLamports: 10_000, MaxLamports: 1_000_000}, time.Millisecond)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 100, "max_tx_usdc": 10, "approval_threshold_usdc": 1000}, 10_000_000)
	to := newAddress()
	idem := "fee-cap-" + newAddress()

	for range 3 {
		status, _, _ := e.sendOnce(id, idem, map[string]any{"to": to, "amount": 2})
		if status != http.StatusServiceUnavailable {
			t.Fatalf("send over the cap: %d, want 503", status)
		}
	}
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1})
	if status != http.StatusServiceUnavailable || body["reason"] != "fee_cap_below_market" ||
		!strings.Contains(body["error"].(string), "50000") || !strings.Contains(body["error"].(string), "10000") {
		t.Fatalf("send over the cap: %d %v, want 503 fee_cap_below_market naming the market and the cap", status, body)
	}
	e.wantRows("transactions", 0)
	if r := e.reservedToday(id); r != 0 {
		t.Fatalf("reserved %d over the cap", r)
	}

	// The market calms: the same key is free (nothing was sent) and lands.
	ln.SetMinPriorityFee(t, 5_000)
	status, raw, _ := e.sendOnce(id, idem, map[string]any{"to": to, "amount": 2})
	if status != http.StatusOK || !strings.Contains(string(raw), `"sent"`) {
		t.Fatalf("send within the cap: %d %s", status, raw)
	}
	var sig string
	if err := e.db.NewSelect().Table("transactions").Column("signature").Scan(context.Background(), &sig); err != nil {
		t.Fatal(err)
	}
	e.settle(eng, sig, payment.TxConfirmed)
	if got := e.chainUSDC(to); got != 2_000_000 {
		t.Fatalf("recipient holds %d", got)
	}
	if r := e.reservedToday(id); r != 2_000_000 {
		t.Fatalf("reserved %d, want the one payment", r)
	}
}

// An approved payment meeting a market above the cap is not signed: the
// approve call answers 503 fee_cap_below_market at once, the approval is
// pending again with nothing reserved, and approving it once the market
// calms pays it once.
func TestPriorityFee_CapBelowMarketLeavesApprovalPending(t *testing.T) {
	t.Parallel()
	ln := congested(t, 50_000)
	e := newEnv(t, envOpts{ln: ln})
	e.withFees(solana.FeePolicy{Percentile: 75, MaxMicroLamports: 10_000, MaxLamports: 1_000_000}, time.Millisecond)
	eng, _ := e.startWorker()
	_, approver := e.adminKey()
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 100, "max_tx_usdc": 10, "approval_threshold_usdc": 5}, 10_000_000)
	to := newAddress()
	apID := e.park(id, to, 6)

	start := time.Now()
	status, body := e.approve(apID, approver, nil)
	if status != http.StatusServiceUnavailable || body["reason"] != "fee_cap_below_market" || !strings.Contains(body["error"].(string), "pending") {
		t.Fatalf("approve over the cap: %d %v, want 503 fee_cap_below_market saying it is still pending", status, body)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("approve over the cap answered after %v; the worker announces it at once", took)
	}
	if st := e.approvalStatus(apID); st != "pending" {
		t.Fatalf("approval %s after a market above the cap, want pending", st)
	}
	e.wantRows("transactions", 0)
	if r := e.reservedToday(id); r != 0 {
		t.Fatalf("reserved %d over the cap", r)
	}

	ln.SetMinPriorityFee(t, 5_000)
	status, body = e.approve(apID, approver, nil)
	if status != http.StatusOK || body["status"] != "sent" {
		t.Fatalf("approve within the cap: %d %v", status, body)
	}
	e.paidOnce(eng, apID, body["signature"].(string), to, 6_000_000)
}
