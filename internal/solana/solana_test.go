package solana_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

func TestBalance(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	owner := sol.NewWallet().PublicKey()

	b, err := c.Balance(ctx, owner)
	if err != nil || b.Lamports != 0 || b.Units(solana.Devnet.USDCMint()) != 0 || len(b.Tokens) != 1 {
		t.Fatalf("missing accounts: %+v %v", b, err)
	}
	ln.SetLamports(t, owner.String(), 2_500_000_000)
	ln.SetTokenBalance(t, owner.String(), solana.DevnetUSDCMint.String(), 42_000_001)
	ln.SetTokenBalance(t, owner.String(), solana.MainnetUSDCMint.String(), 9) // another mint: not devnet USDC
	b, err = c.Balance(ctx, owner)
	if err != nil || b.Lamports != 2_500_000_000 || b.Units(solana.Devnet.USDCMint()) != 42_000_001 {
		t.Fatalf("funded: %+v %v", b, err)
	}
	mb, err := solana.NewClient(ln.URL, solana.Mainnet, 0).Balance(ctx, owner)
	if err != nil || mb.Units(solana.Mainnet.USDCMint()) != 9 {
		t.Fatalf("mainnet mint: %+v %v", mb, err)
	}
}

func TestRPCFailuresAreErrRPC(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	ctx := context.Background()
	owner := sol.NewWallet().PublicKey()

	ln.SetFaults(t, localnettest.Faults{Down: true})
	if _, err := solana.NewClient(ln.URL, solana.Devnet, 0).Balance(ctx, owner); !errors.Is(err, solana.ErrRPC) {
		t.Fatalf("node down: %v", err)
	}
	ln.SetFaults(t, localnettest.Faults{LatencyMs: 2000})
	start := time.Now()
	_, err := solana.NewClient(ln.URL, solana.Devnet, 200*time.Millisecond).Balance(ctx, owner)
	if !errors.Is(err, solana.ErrRPC) {
		t.Fatalf("slow node: %v", err)
	}
	if time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("timeout not applied: %s", time.Since(start))
	}
	_, err = solana.NewClient("http://user:hunter2@127.0.0.1:1/rpc?api-key=SECRET", solana.Devnet, 0).Balance(ctx, owner)
	if !errors.Is(err, solana.ErrRPC) {
		t.Fatalf("unreachable: %v", err)
	}
	// The endpoint's credentials (user info, query, path) never reach an
	// error (and so a log); its host does.
	if msg := err.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, "hunter2") || !strings.Contains(msg, "127.0.0.1:1") {
		t.Fatalf("error text %q", msg)
	}
}

// A balance is one round trip: exactly one getMultipleAccounts call.
func TestBalanceIsOneRPCCall(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	var mu sync.Mutex
	var methods []string
	target, _ := url.Parse(ln.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Method string `json:"method"`
		}
		json.Unmarshal(body, &req)
		mu.Lock()
		methods = append(methods, req.Method)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()

	owner := sol.NewWallet().PublicKey()
	ln.SetTokenBalance(t, owner.String(), solana.DevnetUSDCMint.String(), 5)
	if _, err := solana.NewClient(srv.URL, solana.Devnet, 0).Balance(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(methods) != 1 || methods[0] != "getMultipleAccounts" {
		t.Fatalf("RPC calls %v, want one getMultipleAccounts", methods)
	}
}

// A node is trusted with its network only once it answers that network's
// genesis hash; the localnet is accepted only with the local-chain setting.
func TestVerifyChain(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	if err := solana.NewClient(ln.URL, solana.Mainnet, 0).ChainErr(); err != nil {
		t.Fatalf("a client without a check: %v", err)
	}
	strict := solana.NewClient(ln.URL, solana.Mainnet, 0).CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_MAINNET"})
	if err := strict.ChainErr(); err == nil {
		t.Fatal("trusted before it was verified")
	}
	err := strict.VerifyChain(ctx)
	var wrong *solana.WrongChainError
	if !errors.As(err, &wrong) || !strings.Contains(err.Error(), "SOLANA_RPC_URL_MAINNET") || !strings.Contains(err.Error(), solana.MainnetGenesisHash) ||
		!strings.Contains(err.Error(), "SOLANA_LOCAL_CHAIN") || !errors.As(strict.ChainErr(), &wrong) {
		t.Fatalf("localnet as mainnet: %v", err)
	}
	if _, err := (solana.Clients{solana.Mainnet: strict}).Balance(ctx, solana.Mainnet, solana.DevnetUSDCMint.String()); !errors.As(err, &wrong) {
		t.Fatalf("balance through a wrong chain: %v", err)
	}
	local := solana.NewClient(ln.URL, solana.Devnet, 0).CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_DEVNET", LocalChain: true})
	if err := local.VerifyChain(ctx); err != nil || local.ChainErr() != nil {
		t.Fatalf("localnet with the setting: %v", err)
	}
	down := solana.NewClient("http://127.0.0.1:1", solana.Devnet, time.Second).CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_DEVNET", LocalChain: true})
	if err := down.VerifyChain(ctx); !errors.Is(err, solana.ErrRPC) || down.ChainErr() == nil {
		t.Fatalf("unreachable node: %v, then %v", err, down.ChainErr())
	}
}
