package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// GET /assets answers the caller's network's tokens, USDC first, each
// with its program and decimals (PYUSD on Token-2022; no USDT on devnet),
// to an agent's key and an admin's alike; without a key 401.
func TestAssets_ListTheCallersNetwork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, agentKey := e.agentKey()
	_, liveKey := e.newAccount(solana.Mainnet)
	for _, c := range []struct {
		key, network string
		want         []string
	}{
		{e.key, "devnet", []string{"USDC", "PYUSD", "USDG", "EURC"}},
		{agentKey, "devnet", []string{"USDC", "PYUSD", "USDG", "EURC"}},
		{liveKey, "mainnet", []string{"USDC", "USDT", "PYUSD", "USDG", "EURC"}},
	} {
		got, err := client.New(e.url, c.key).ListAssets(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got.Network != c.network || len(got.Assets) != len(c.want) {
			t.Fatalf("%s: %+v", c.network, got)
		}
		for i, a := range got.Assets {
			program := "token"
			if a.Symbol == "PYUSD" || a.Symbol == "USDG" {
				program = "token-2022"
			}
			currency := "USD"
			if a.Symbol == "EURC" {
				currency = "EUR"
			}
			if a.Symbol != c.want[i] || a.TokenProgram != program || a.Decimals != 6 || a.Currency != currency || a.Mint == "" {
				t.Fatalf("%s asset %d: %+v", c.network, i, a)
			}
		}
		if c.network == "devnet" && got.Assets[0].Mint != solana.DevnetUSDCMint.String() {
			t.Fatalf("devnet USDC %+v", got.Assets[0])
		}
	}
	if status, _ := e.do("GET", "/api/public/v1/assets", "", nil); status != http.StatusUnauthorized {
		t.Fatalf("without a key: %d", status)
	}
}

// A wallet's balance lists every asset it has an account of, in that
// asset's units, USDC first and always (here PYUSD on Token-2022 and EURC
// on SPL Token, funded on the localnet; no USDG account, so no USDG), in
// the same one read.
func TestAssets_BalanceListsEveryAssetHeld(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, pubkey := e.agent(nil, 2_500_000)
	pyusd, _ := asset.Defaults().Find(solana.Devnet, "PYUSD")
	eurc, _ := asset.Defaults().Find(solana.Devnet, "EURC")
	e.ln.SetTokenBalance(t, pubkey, pyusd.Mint.String(), 3_500_000)
	e.ln.SetTokenBalance(t, pubkey, eurc.Mint.String(), 0)
	status, b := e.do("GET", "/api/public/v1/wallets/"+id+"/balance", e.key, nil)
	assets, _ := b["assets"].([]any)
	if status != http.StatusOK || b["usdc"] != 2.5 || len(assets) != 3 {
		t.Fatalf("balance %d %v", status, b)
	}
	want := []struct {
		symbol, mint string
		amount       float64
	}{{"USDC", solana.DevnetUSDCMint.String(), 2.5}, {"PYUSD", pyusd.Mint.String(), 3.5}, {"EURC", eurc.Mint.String(), 0}}
	for i, w := range want {
		a := assets[i].(map[string]any)
		if a["symbol"] != w.symbol || a["mint"] != w.mint || a["amount"] != w.amount {
			t.Fatalf("asset %d: %v, want %+v", i, a, w)
		}
	}
}
