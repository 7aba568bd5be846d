// Package x402test starts the project's x402 seller (examples/x402-seller: the
// official x402 npm packages with their facilitator in the same process) for
// Go tests, against a localnet, so every payment a test makes is verified and
// settled by code this project did not write. `make test` installs its npm
// packages first (make deps).
package x402test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/localnettest"

	sol "github.com/gagliardetto/solana-go"
)

// Networks the seller can sell on (CAIP-2), and their x402 v1 names.
const (
	Devnet    = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
	Mainnet   = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	DevnetV1  = "solana-devnet"
	MainnetV1 = "solana"
)

// Paid routes the seller serves. Weather, Premium and MemoWeather answer
// with x402 v2 (PAYMENT-REQUIRED / PAYMENT-SIGNATURE / PAYMENT-RESPONSE);
// V1Weather with v1 (402 JSON body / X-PAYMENT / X-PAYMENT-RESPONSE).
// MemoWeather's challenge carries extra.memo, which the payment must use.
const (
	Weather     = "/weather"
	Premium     = "/premium"
	MemoWeather = "/memo/weather"
	V1Weather   = "/v1/weather"
)

// Options configure a seller; the zero value is a devnet seller with a
// fresh payTo, /weather at 10000 (0.01 USDC) and /premium at 1000000.
type Options struct {
	Network string // CAIP-2; default Devnet
	// Asset is the mint the seller prices in (any the localnet carries,
	// e.g. devnet PYUSD on Token-2022); default the network's USDC. Prices
	// are in its base units.
	Asset        string
	PayTo        string // the seller's wallet; default a fresh address
	Price        uint64 // atomic units of Weather, MemoWeather and V1Weather
	PremiumPrice uint64 // atomic units of Premium
	Memo         string // MemoWeather's extra.memo
	// ChallengeBlockhash adds extra.recentBlockhash and
	// extra.lastValidBlockHeight to v2 challenges, as the official server
	// does when it is given an RPC URL.
	ChallengeBlockhash bool
	// MaxTimeoutSeconds is the challenges' maxTimeoutSeconds (default 60).
	MaxTimeoutSeconds int
}

// Route is one paid route as the seller announced it.
type Route struct {
	Amount      string `json:"amount"`
	X402Version int    `json:"x402Version"`
	Memo        string `json:"memo,omitempty"`
}

// Seller is a running seller.
type Seller struct {
	URL       string           `json:"url"`
	PayTo     string           `json:"payTo"`
	FeePayer  string           `json:"feePayer"` // the facilitator's fee payer (extra.feePayer)
	Network   string           `json:"network"`
	NetworkV1 string           `json:"networkV1"`
	Asset     string           `json:"asset"` // the mint it prices in (USDC unless Options.Asset)
	Memo      string           `json:"memo"`
	Routes    map[string]Route `json:"routes"`
	rpcURL    string
}

// Start runs a seller against the localnet at rpcURL (it funds its fee
// payer and creates payTo's USDC account with the localnet's cheat methods),
// stopped at the test's cleanup and killed with the test binary.
func Start(t testing.TB, rpcURL string, o Options) *Seller {
	t.Helper()
	dir, err := sellerDir()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"server.js", "--rpc", rpcURL, "--port", "0"}
	add := func(flag, v string) {
		if v != "" {
			args = append(args, flag, v)
		}
	}
	add("--network", o.Network)
	add("--asset", o.Asset)
	add("--pay-to", o.PayTo)
	add("--memo", o.Memo)
	if o.Price > 0 {
		add("--price", strconv.FormatUint(o.Price, 10))
	}
	if o.PremiumPrice > 0 {
		add("--premium-price", strconv.FormatUint(o.PremiumPrice, 10))
	}
	if o.MaxTimeoutSeconds > 0 {
		add("--max-timeout", strconv.Itoa(o.MaxTimeoutSeconds))
	}
	if o.ChallengeBlockhash {
		args = append(args, "--challenge-blockhash")
	}
	var s Seller
	localnettest.StartReady(t, "x402 seller", dir, "SELLER_", args, &s)
	s.rpcURL = rpcURL
	return &s
}

// sellerDir is examples/x402-seller with its npm packages installed.
func sellerDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("x402 seller: no go.mod above the test's directory")
		}
		dir = parent
	}
	seller := filepath.Join(dir, "examples", "x402-seller")
	if _, err := os.Stat(filepath.Join(seller, "node_modules")); err != nil {
		return "", fmt.Errorf("x402 seller: %s/node_modules is missing: run `make deps` (or `npm ci` in examples/x402-seller/)", seller)
	}
	return seller, nil
}

// Price is the route's price in atomic USDC.
func (s *Seller) Price(t testing.TB, route string) uint64 {
	t.Helper()
	r, ok := s.Routes[route]
	if !ok {
		t.Fatalf("x402 seller: no route %q", route)
	}
	n, err := strconv.ParseUint(r.Amount, 10, 64)
	if err != nil {
		t.Fatalf("x402 seller: route %s amount %q: %v", route, r.Amount, err)
	}
	return n
}

// Settlement is one settlement the seller's facilitator made.
type Settlement struct {
	X402Version int    `json:"x402Version"`
	Network     string `json:"network"`
	Transaction string `json:"transaction"` // the on-chain signature (the fee payer's)
	Payer       string `json:"payer"`
	PayTo       string `json:"payTo"`
	Amount      string `json:"amount"`
	Success     bool   `json:"success"`
}

// Settlements lists what the facilitator settled, oldest first.
func (s *Seller) Settlements(t testing.TB) []Settlement {
	t.Helper()
	var out struct {
		Settlements []Settlement `json:"settlements"`
	}
	getJSON(t, s.URL+"/_settlements", &out)
	return out.Settlements
}

// USDC is owner's holding of the seller's asset (USDC unless
// Options.Asset) in atomic units on the seller's chain (0 when owner has
// no associated token account).
func (s *Seller) USDC(t testing.TB, owner string) uint64 {
	t.Helper()
	// The associated account's address depends on the mint's program.
	var mint struct {
		Value *struct {
			Owner string `json:"owner"`
		} `json:"value"`
	}
	localnettest.Call(t, s.rpcURL, &mint, "getAccountInfo", s.Asset, map[string]any{"encoding": "base64", "commitment": "confirmed"})
	if mint.Value == nil {
		t.Fatalf("x402 seller: no mint %s", s.Asset)
	}
	ata, _, err := sol.FindAssociatedTokenAddressWithProgram(sol.MustPublicKeyFromBase58(owner), sol.MustPublicKeyFromBase58(s.Asset), sol.MustPublicKeyFromBase58(mint.Value.Owner))
	if err != nil {
		t.Fatal(err)
	}
	var acct struct {
		Value *json.RawMessage `json:"value"`
	}
	localnettest.Call(t, s.rpcURL, &acct, "getAccountInfo", ata.String(), map[string]any{"encoding": "base64", "commitment": "confirmed"})
	if acct.Value == nil || string(*acct.Value) == "null" {
		return 0
	}
	var bal struct {
		Value struct {
			Amount string `json:"amount"`
		} `json:"value"`
	}
	localnettest.Call(t, s.rpcURL, &bal, "getTokenAccountBalance", ata.String(), map[string]any{"commitment": "confirmed"})
	n, err := strconv.ParseUint(bal.Value.Amount, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Lamports is owner's SOL balance in lamports.
func (s *Seller) Lamports(t testing.TB, owner string) uint64 {
	t.Helper()
	var out struct {
		Value uint64 `json:"value"`
	}
	localnettest.Call(t, s.rpcURL, &out, "getBalance", owner, map[string]any{"commitment": "confirmed"})
	return out.Value
}

// PaymentResponse is the seller's decoded PAYMENT-RESPONSE (v2) or
// X-PAYMENT-RESPONSE (v1) header.
type PaymentResponse struct {
	Success     bool   `json:"success"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Payer       string `json:"payer"`
	ErrorReason string `json:"errorReason,omitempty"`
}

// Purchase is what the official client got from one paid URL.
type Purchase struct {
	Buyer           string           `json:"buyer"` // its fresh wallet
	Status          int              `json:"status"`
	Body            string           `json:"body"`
	PaymentResponse *PaymentResponse `json:"paymentResponse"`
}

// BuyWithOfficialClient buys route once with the official x402 client
// packages (examples/x402-seller/buy.js): a fresh keypair holding usdc
// atomic USDC and no SOL.
func (s *Seller) BuyWithOfficialClient(t testing.TB, route string, usdc uint64) Purchase {
	t.Helper()
	dir, err := sellerDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "buy.js", "--rpc", s.rpcURL, "--url", s.URL+route,
		"--usdc", strconv.FormatUint(usdc, 10), "--asset", s.Asset)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("x402 buy.js %s: %v\n%s", route, err, stderr.String())
	}
	var p Purchase
	if err := json.Unmarshal(bytes.TrimSpace(out), &p); err != nil {
		t.Fatalf("x402 buy.js %s: %v: %q", route, err, out)
	}
	return p
}

func getJSON(t testing.TB, url string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// Challenge fetches route without paying and returns its PaymentRequired
// object as the seller sent it: the decoded PAYMENT-REQUIRED header (v2) or
// the 402 JSON body (v1), which is what a buyer pays against.
func (s *Seller) Challenge(t testing.TB, route string) json.RawMessage {
	t.Helper()
	status, hdr, body := s.get(t, route, "", "")
	if status != http.StatusPaymentRequired {
		t.Fatalf("GET %s: status %d, want 402: %s", route, status, body)
	}
	if v := hdr.Get("PAYMENT-REQUIRED"); v != "" {
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatalf("GET %s: PAYMENT-REQUIRED: %v", route, err)
		}
		return raw
	}
	return body
}

// Paid is the seller's answer to a request that carried a payment.
type Paid struct {
	Status int
	Body   []byte
	// Response is the decoded PAYMENT-RESPONSE (v2) or X-PAYMENT-RESPONSE
	// (v1) header; nil when the seller sent none.
	Response *PaymentResponse
	// Error is a refused payment's reason: the new challenge's "error"
	// (the facilitator's invalidReason, e.g.
	// "invalid_exact_svm_payload_amount_mismatch").
	Error string
}

// Pay requests route with a payment header (PAYMENT-SIGNATURE for v2,
// X-PAYMENT for v1) whose value is the base64 PaymentPayload.
func (s *Seller) Pay(t testing.TB, route, header, value string) Paid {
	t.Helper()
	status, hdr, body := s.get(t, route, header, value)
	p := Paid{Status: status, Body: body}
	if status == http.StatusPaymentRequired {
		challenge := body
		if v := hdr.Get("PAYMENT-REQUIRED"); v != "" {
			challenge, _ = base64.StdEncoding.DecodeString(v)
		}
		var c struct {
			Error string `json:"error"`
		}
		json.Unmarshal(challenge, &c)
		p.Error = c.Error
	}
	for _, name := range []string{"PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"} {
		if v := hdr.Get(name); v != "" {
			raw, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				t.Fatalf("GET %s: %s: %v", route, name, err)
			}
			p.Response = new(PaymentResponse)
			if err := json.Unmarshal(raw, p.Response); err != nil {
				t.Fatalf("GET %s: %s: %v", route, name, err)
			}
		}
	}
	return p
}

func (s *Seller) get(t testing.TB, route, header, value string) (int, http.Header, []byte) {
	t.Helper()
	// Settlement waits for confirmation on chain: allow it well past a slot.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+route, nil)
	req.Header.Set("Accept", "application/json")
	if header != "" {
		req.Header.Set(header, value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", route, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("GET %s: %v", route, err)
	}
	return resp.StatusCode, resp.Header, body
}
