// Package mpptest starts the project's MPP seller (examples/mpp-seller: the
// official mppx and @solana/mpp packages on node:http) for Go tests,
// against a localnet, so every payment a test makes is verified, broadcast
// and confirmed by code this project did not write. `make deps` installs
// its npm packages.
package mpptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
)

// Weather is the seller's paid route.
const Weather = "/weather"

// Split is one of the seller's splits, as its --splits flag takes it.
type Split struct {
	Recipient           string `json:"recipient"`
	Amount              string `json:"amount"`
	Memo                string `json:"memo,omitempty"`
	ATACreationRequired bool   `json:"ataCreationRequired,omitempty"`
}

// Options configure a seller; the zero value is a devnet seller of
// /weather at 10000 (0.01 USDC) to a fresh recipient, the buyer paying
// the fee.
type Options struct {
	// Currency is what the seller prices in: a mint, or a symbol the
	// official table resolves (default devnet USDC's mint); Decimals its
	// decimals (default 6) and TokenProgram its program (default: the
	// official default for the currency).
	Currency     string
	Decimals     int
	TokenProgram string
	Recipient    string // default a fresh address
	Price        uint64 // base units of /weather
	Splits       []Split
	// FeePayer makes the seller pay the fee (and any split account it asks
	// for) with a fresh key the localnet funds.
	FeePayer     bool
	ExternalID   string
	Description  string
	Expires      time.Duration // the challenges' lifetime (default 5 minutes)
	RequiresAuth bool          // the credential goes in Payment-Authorization (header=)
}

// Seller is a running seller, as its ready line describes it.
type Seller struct {
	URL          string  `json:"url"`
	Recipient    string  `json:"recipient"`
	FeePayer     string  `json:"feePayer"` // "" when the buyer pays the fee
	Network      string  `json:"network"`
	Currency     string  `json:"currency"`
	Mint         string  `json:"mint"`
	Decimals     int     `json:"decimals"`
	TokenProgram string  `json:"tokenProgram"`
	Price        string  `json:"price"`
	Splits       []Split `json:"splits"`
	Realm        string  `json:"realm"`
	ExternalID   string  `json:"externalId"`
	rpcURL       string
}

// RequireDeps skips the test when the npm packages of the localnet or the
// seller are missing, saying to run `make deps`; under CI (CI set) it
// fails instead: there a missing dependency is a broken build.
func RequireDeps(t testing.TB) {
	t.Helper()
	root, err := localnettest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"localnet", filepath.Join("examples", "mpp-seller")} {
		if _, err := os.Stat(filepath.Join(root, dir, "node_modules")); err != nil {
			msg := fmt.Sprintf("%s/node_modules is missing: run `make deps`", dir)
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// Start runs a seller against the localnet at rpcURL (it creates its
// recipient's token account, and funds its fee payer, with the localnet's
// cheat methods), stopped at the test's cleanup and killed with the test
// binary.
func Start(t testing.TB, rpcURL string, o Options) *Seller {
	t.Helper()
	RequireDeps(t)
	root, err := localnettest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"server.mjs", "--rpc", rpcURL, "--port", "0"}
	add := func(flag, v string) {
		if v != "" {
			args = append(args, flag, v)
		}
	}
	add("--currency", o.Currency)
	if o.Decimals > 0 {
		add("--decimals", strconv.Itoa(o.Decimals))
	}
	add("--token-program", o.TokenProgram)
	add("--recipient", o.Recipient)
	if o.Price > 0 {
		add("--price", strconv.FormatUint(o.Price, 10))
	}
	if len(o.Splits) > 0 {
		b, _ := json.Marshal(o.Splits)
		add("--splits", string(b))
	}
	if o.FeePayer {
		add("--fee-payer", "new")
	}
	add("--external-id", o.ExternalID)
	add("--description", o.Description)
	if o.Expires > 0 {
		add("--expires", strconv.Itoa(int(o.Expires.Seconds())))
	}
	if o.RequiresAuth {
		args = append(args, "--requires-auth")
	}
	var s Seller
	localnettest.StartReady(t, "mpp seller", filepath.Join(root, "examples", "mpp-seller"), "MPP_", args, &s)
	s.rpcURL = rpcURL
	return &s
}

// Answer is the seller's answer to a request.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	// Problem is an error answer's RFC 9457 type, its last path segment
	// (payment-required, payment-expired, invalid-challenge,
	// malformed-credential, internal-payment-error, …).
	Problem string
}

// Challenges are the WWW-Authenticate values of route's 402 answer to a
// request without a credential.
func (s *Seller) Challenges(t testing.TB, route string) []string {
	t.Helper()
	a := s.Get(t, route, "", "")
	if a.Status != http.StatusPaymentRequired {
		t.Fatalf("GET %s: status %d, want 402: %s", route, a.Status, a.Body)
	}
	return a.Header.Values("WWW-Authenticate")
}

// Get requests route, with the header set to value when header is set.
func (s *Seller) Get(t testing.TB, route, header, value string) Answer {
	t.Helper()
	// Settling waits for confirmation on chain (polled every 2 s).
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+route, nil)
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
	a := Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}
	if resp.StatusCode != http.StatusOK {
		var p struct {
			Type string `json:"type"`
		}
		json.Unmarshal(body, &p)
		a.Problem = p.Type[strings.LastIndexByte(p.Type, '/')+1:]
	}
	return a
}

// Balance is owner's holding of the seller's mint, in base units, on the
// seller's chain at confirmed commitment (0 when owner has no associated
// token account).
func (s *Seller) Balance(t testing.TB, owner string) uint64 {
	t.Helper()
	var mint struct {
		Value *struct {
			Owner string `json:"owner"`
		} `json:"value"`
	}
	localnettest.Call(t, s.rpcURL, &mint, "getAccountInfo", s.Mint, map[string]any{"encoding": "base64", "commitment": "confirmed"})
	if mint.Value == nil {
		t.Fatalf("mpp seller: no mint %s", s.Mint)
	}
	ata, _, err := sol.FindAssociatedTokenAddressWithProgram(sol.MustPublicKeyFromBase58(owner), sol.MustPublicKeyFromBase58(s.Mint), sol.MustPublicKeyFromBase58(mint.Value.Owner))
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

// Lamports is owner's SOL balance at confirmed commitment.
func (s *Seller) Lamports(t testing.TB, owner string) uint64 {
	t.Helper()
	var out struct {
		Value uint64 `json:"value"`
	}
	localnettest.Call(t, s.rpcURL, &out, "getBalance", owner, map[string]any{"commitment": "confirmed"})
	return out.Value
}
