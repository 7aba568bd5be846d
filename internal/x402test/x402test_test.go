package x402test_test

import (
	"encoding/json"
	"slices"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

// The official x402 client buys from the official seller and facilitator on
// the localnet: the chain shows payTo's USDC grew by exactly the price, the
// buyer paid no SOL, and the fee payer's signature is the settlement's.
func TestSeller_OfficialClientBuysEveryRoute(t *testing.T) {
	ln := localnettest.Shared(t)
	s := x402test.Start(t, ln.URL, x402test.Options{Price: 23456, PremiumPrice: 400000, Memo: "order 23"})
	if s.Network != x402test.Devnet || s.NetworkV1 != x402test.DevnetV1 {
		t.Fatalf("networks %s / %s", s.Network, s.NetworkV1)
	}
	if got := s.USDC(t, s.PayTo); got != 0 {
		t.Fatalf("fresh payTo holds %d USDC", got)
	}
	const funded = 1_000_000
	for _, route := range []string{x402test.Weather, x402test.Premium, x402test.MemoWeather, x402test.V1Weather} {
		t.Run(route, func(t *testing.T) {
			price := s.Price(t, route)
			before := s.USDC(t, s.PayTo)
			p := s.BuyWithOfficialClient(t, route, funded)
			if p.Status != 200 {
				t.Fatalf("status %d: %s", p.Status, p.Body)
			}
			var body struct {
				Route string `json:"route"`
			}
			if err := json.Unmarshal([]byte(p.Body), &body); err != nil || body.Route != route {
				t.Fatalf("body %q (%v)", p.Body, err)
			}
			pr := p.PaymentResponse
			if pr == nil || !pr.Success || pr.Payer != p.Buyer || pr.Transaction == "" {
				t.Fatalf("payment response %+v", pr)
			}
			if got := s.USDC(t, s.PayTo); got != before+price {
				t.Fatalf("seller USDC %d, want %d + %d", got, before, price)
			}
			if got := s.USDC(t, p.Buyer); got != funded-price {
				t.Fatalf("buyer USDC %d, want %d", got, funded-price)
			}
			if got := s.Lamports(t, p.Buyer); got != 0 {
				t.Fatalf("buyer holds %d lamports", got)
			}
			var tx struct {
				Meta struct {
					Err         any      `json:"err"`
					LogMessages []string `json:"logMessages"`
				} `json:"meta"`
				Transaction struct {
					Message struct {
						AccountKeys []string `json:"accountKeys"`
					} `json:"message"`
					Signatures []string `json:"signatures"`
				} `json:"transaction"`
				Version any `json:"version"`
			}
			ln.Call(t, &tx, "getTransaction", pr.Transaction,
				map[string]any{"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0})
			keys := tx.Transaction.Message.AccountKeys
			if tx.Meta.Err != nil || tx.Version != float64(0) || len(keys) < 2 || keys[0] != s.FeePayer || keys[1] != p.Buyer ||
				tx.Transaction.Signatures[0] != pr.Transaction {
				t.Fatalf("settlement %+v", tx)
			}
			if route == x402test.MemoWeather && !slices.Contains(tx.Meta.LogMessages, "Program log: order 23") {
				t.Fatalf("memo missing from logs %q", tx.Meta.LogMessages)
			}
			found := false
			for _, st := range s.Settlements(t) {
				found = found || (st.Transaction == pr.Transaction && st.Success && st.PayTo == s.PayTo)
			}
			if !found {
				t.Fatalf("settlement %s not listed by the seller", pr.Transaction)
			}
		})
	}

	// The challenges as a buyer receives them.
	var v2 struct {
		X402Version int `json:"x402Version"`
		Resource    struct {
			URL string `json:"url"`
		} `json:"resource"`
		Accepts []struct {
			Scheme, Network, Amount, Asset, PayTo string
			Extra                                 map[string]string
		} `json:"accepts"`
	}
	if err := json.Unmarshal(s.Challenge(t, x402test.MemoWeather), &v2); err != nil {
		t.Fatal(err)
	}
	if a := v2.Accepts; v2.X402Version != 2 || v2.Resource.URL != s.URL+x402test.MemoWeather || len(a) != 1 ||
		a[0].Scheme != "exact" || a[0].Network != s.Network || a[0].Amount != "23456" || a[0].Asset != s.Asset ||
		a[0].PayTo != s.PayTo || a[0].Extra["feePayer"] != s.FeePayer || a[0].Extra["memo"] != "order 23" {
		t.Fatalf("v2 challenge %+v", v2)
	}
	var v1 struct {
		X402Version int `json:"x402Version"`
		Accepts     []struct {
			Network, MaxAmountRequired, PayTo, Resource string
			Extra                                       map[string]string
		} `json:"accepts"`
	}
	if err := json.Unmarshal(s.Challenge(t, x402test.V1Weather), &v1); err != nil {
		t.Fatal(err)
	}
	if a := v1.Accepts; v1.X402Version != 1 || len(a) != 1 || a[0].Network != x402test.DevnetV1 || a[0].MaxAmountRequired != "23456" ||
		a[0].PayTo != s.PayTo || a[0].Resource != s.URL+x402test.V1Weather || a[0].Extra["feePayer"] != s.FeePayer {
		t.Fatalf("v1 challenge %+v", v1)
	}
	if p := s.Pay(t, x402test.Weather, "PAYMENT-SIGNATURE", "bm90IGEgcGF5bWVudA=="); p.Status != 402 || p.Response != nil {
		t.Fatalf("garbage payment: %d %s", p.Status, p.Body)
	}

	// Without enough USDC the facilitator refuses it and nothing moves.
	before := s.USDC(t, s.PayTo)
	p := s.BuyWithOfficialClient(t, x402test.Weather, s.Price(t, x402test.Weather)-1)
	if p.Status != 402 || s.USDC(t, s.PayTo) != before {
		t.Fatalf("underfunded buyer: status %d, seller %d (was %d)", p.Status, s.USDC(t, s.PayTo), before)
	}
}

// devnetPYUSD is devnet PYUSD's mint (Token-2022, mainnet PYUSD's
// extensions on the localnet).
const devnetPYUSD = "CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM"

// The official packages take Token-2022: a seller pricing in PYUSD
// answers a challenge whose asset is PYUSD's mint, the official client
// pays it with a TransferChecked under Token-2022 (it reads the mint's
// program from the chain), and the official facilitator verifies and
// settles it: payTo's PYUSD grows by the price, the buyer pays no SOL.
func TestSeller_OfficialClientBuysInPYUSD(t *testing.T) {
	ln := localnettest.Shared(t)
	s := x402test.Start(t, ln.URL, x402test.Options{Asset: devnetPYUSD, Price: 12345})
	var challenge struct {
		Accepts []struct {
			Asset string         `json:"asset"`
			Extra map[string]any `json:"extra"`
		} `json:"accepts"`
	}
	if err := json.Unmarshal(s.Challenge(t, x402test.Weather), &challenge); err != nil || len(challenge.Accepts) != 1 || challenge.Accepts[0].Asset != devnetPYUSD {
		t.Fatalf("challenge %+v %v", challenge, err)
	}
	p := s.BuyWithOfficialClient(t, x402test.Weather, 1_000_000)
	if p.Status != 200 || p.PaymentResponse == nil || !p.PaymentResponse.Success {
		t.Fatalf("status %d %s %+v", p.Status, p.Body, p.PaymentResponse)
	}
	if got := s.USDC(t, s.PayTo); got != 12345 {
		t.Fatalf("seller holds %d PYUSD units, want 12345", got)
	}
	if got := s.Lamports(t, p.Buyer); got != 0 {
		t.Fatalf("buyer holds %d lamports", got)
	}
	if ps := ln.Programs(t, p.PaymentResponse.Transaction); len(ps) < 3 || ps[2] != sol.Token2022ProgramID.String() {
		t.Fatalf("the official client's transfer is not under Token-2022: %v", ps)
	}
}
