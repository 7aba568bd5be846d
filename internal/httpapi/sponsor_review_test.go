package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// lowBumpOwner grinds a recipient whose USDC account's bump is at
// most max (about one key in 2^(255-max)).
func lowBumpOwner(t *testing.T, max uint8) (sol.PublicKey, sol.PrivateKey) {
	t.Helper()
	for range 1 << 20 {
		k := sol.NewWallet().PrivateKey
		if _, bump, err := sol.FindAssociatedTokenAddress(k.PublicKey(), solana.DevnetUSDCMint); err == nil && bump <= max {
			return k.PublicKey(), k
		}
	}
	t.Fatal("no low-bump owner found")
	return sol.PublicKey{}, nil
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
	r, rkey := lowBumpOwner(t, 243)

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
