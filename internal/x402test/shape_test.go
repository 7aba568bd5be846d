package x402test_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/memo"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

// exactTx is the exact scheme's payment as the reference facilitator
// (@x402/svm 2.27.0, static path) accepts it, built with solana-go: a v0
// message whose fee payer is extra.feePayer; SetComputeUnitLimit,
// SetComputeUnitPrice, TransferChecked of exactly amount to payTo's
// associated token account, Memo; signed by the buyer only.
func exactTx(t *testing.T, ln *localnettest.Localnet, buyer sol.PrivateKey, feePayer, payTo, mint sol.PublicKey, amount uint64, memoText string, cuPrice uint64) string {
	t.Helper()
	src, _, _ := sol.FindAssociatedTokenAddress(buyer.PublicKey(), mint)
	dst, _, _ := sol.FindAssociatedTokenAddress(payTo, mint)
	bh, err := rpc.New(ln.URL).GetLatestBlockhash(context.Background(), rpc.CommitmentConfirmed)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := sol.NewTransaction([]sol.Instruction{
		computebudget.NewSetComputeUnitLimitInstruction(20_000).Build(),
		computebudget.NewSetComputeUnitPriceInstruction(cuPrice).Build(),
		token.NewTransferCheckedInstruction(amount, 6, src, mint, dst, buyer.PublicKey(), nil).Build(),
		memo.NewMemoInstruction([]byte(memoText)).Build(),
	}, bh.Value.Blockhash, sol.TransactionPayer(feePayer))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Message.SetVersion(sol.MessageVersionV0); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.PartialSign(func(k sol.PublicKey) *sol.PrivateKey {
		if k.Equals(buyer.PublicKey()) {
			return &buyer
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	b64, err := tx.ToBase64()
	if err != nil {
		t.Fatal(err)
	}
	return b64
}

func header(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// A payment built with solana-go, as our buyer will build it, passes the
// official facilitator for v2 and v1, and the ways it must not differ are
// refused with nothing moved.
func TestSeller_AcceptsGoBuiltPayment(t *testing.T) {
	ln := localnettest.Shared(t)
	s := x402test.Start(t, ln.URL, x402test.Options{Price: 30000, Memo: "invoice-23"})
	mint := sol.MustPublicKeyFromBase58(s.Asset)
	feePayer := sol.MustPublicKeyFromBase58(s.FeePayer)
	payTo := sol.MustPublicKeyFromBase58(s.PayTo)
	nonce := func() string { b := make([]byte, 16); rand.Read(b); return hex.EncodeToString(b) }

	newBuyer := func() sol.PrivateKey {
		k, err := sol.NewRandomPrivateKey()
		if err != nil {
			t.Fatal(err)
		}
		ln.SetTokenBalance(t, k.PublicKey().String(), s.Asset, 1_000_000)
		return k
	}
	// v2's PaymentPayload: the challenge's resource and the chosen accepts entry as received.
	v2Payload := func(route, txB64 string) string {
		var pr struct {
			Resource json.RawMessage   `json:"resource"`
			Accepts  []json.RawMessage `json:"accepts"`
		}
		if err := json.Unmarshal(s.Challenge(t, route), &pr); err != nil {
			t.Fatal(err)
		}
		return header(t, map[string]any{"x402Version": 2, "resource": pr.Resource, "accepted": pr.Accepts[0],
			"payload": map[string]string{"transaction": txB64}})
	}

	t.Run("v2 with a nonce memo", func(t *testing.T) {
		buyer := newBuyer()
		before := s.USDC(t, s.PayTo)
		tx := exactTx(t, ln, buyer, feePayer, payTo, mint, 30000, nonce(), 1)
		p := s.Pay(t, x402test.Weather, "PAYMENT-SIGNATURE", v2Payload(x402test.Weather, tx))
		if p.Status != 200 || p.Response == nil || !p.Response.Success || p.Response.Payer != buyer.PublicKey().String() {
			t.Fatalf("status %d %s %+v", p.Status, p.Body, p.Response)
		}
		if got := s.USDC(t, s.PayTo); got != before+30000 {
			t.Fatalf("seller %d, want %d", got, before+30000)
		}
		if s.Lamports(t, buyer.PublicKey().String()) != 0 {
			t.Fatal("buyer paid SOL")
		}
	})
	t.Run("v2 with the seller's memo", func(t *testing.T) {
		tx := exactTx(t, ln, newBuyer(), feePayer, payTo, mint, 30000, "invoice-23", 1)
		if p := s.Pay(t, x402test.MemoWeather, "PAYMENT-SIGNATURE", v2Payload(x402test.MemoWeather, tx)); p.Status != 200 {
			t.Fatalf("status %d %s", p.Status, p.Body)
		}
	})
	t.Run("v1", func(t *testing.T) {
		before := s.USDC(t, s.PayTo)
		tx := exactTx(t, ln, newBuyer(), feePayer, payTo, mint, 30000, nonce(), 1)
		h := header(t, map[string]any{"x402Version": 1, "scheme": "exact", "network": x402test.DevnetV1,
			"payload": map[string]string{"transaction": tx}})
		p := s.Pay(t, x402test.V1Weather, "X-PAYMENT", h)
		if p.Status != 200 || p.Response == nil || !p.Response.Success || s.USDC(t, s.PayTo) != before+30000 {
			t.Fatalf("status %d %s %+v", p.Status, p.Body, p.Response)
		}
	})
	for _, c := range []struct {
		name, route, reason string
		tx                  func(buyer sol.PrivateKey) string
	}{
		{"overpaying", x402test.Weather, "invalid_exact_svm_payload_amount_mismatch", func(b sol.PrivateKey) string {
			return exactTx(t, ln, b, feePayer, payTo, mint, 30001, nonce(), 1)
		}},
		{"another memo than the seller's", x402test.MemoWeather, "invalid_exact_svm_payload_memo_mismatch", func(b sol.PrivateKey) string {
			return exactTx(t, ln, b, feePayer, payTo, mint, 30000, nonce(), 1)
		}},
		{"compute price over 5 lamports per unit", x402test.Weather, "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high", func(b sol.PrivateKey) string {
			return exactTx(t, ln, b, feePayer, payTo, mint, 30000, nonce(), 5_000_001)
		}},
		{"the buyer as fee payer", x402test.Weather, "invalid_exact_svm_fee_payer_mismatch", func(b sol.PrivateKey) string {
			return exactTx(t, ln, b, b.PublicKey(), payTo, mint, 30000, nonce(), 1)
		}},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			buyer := newBuyer()
			before := s.USDC(t, s.PayTo)
			p := s.Pay(t, c.route, "PAYMENT-SIGNATURE", v2Payload(c.route, c.tx(buyer)))
			if p.Status != 402 || s.USDC(t, s.PayTo) != before || s.USDC(t, buyer.PublicKey().String()) != 1_000_000 {
				t.Fatalf("status %d %s; seller %d (was %d)", p.Status, p.Body, s.USDC(t, s.PayTo), before)
			}
			if p.Error != c.reason {
				t.Fatalf("reason %q, want %q", p.Error, c.reason)
			}
		})
	}
}
