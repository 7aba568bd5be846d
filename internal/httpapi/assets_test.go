package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/solana/minttest"
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

// GET /assets shows what each issuer can do, as read from its mint on
// chain: the localnet's PYUSD (built as the real one) has a permanent
// delegate and a freeze authority, USDC neither; a mint the operator
// added whose new accounts start frozen, with a scaled UI amount, says
// so; another that accrues interest shows its rate. Amounts stay raw.
func TestAssets_ShowWhatTheIssuerCanDoAndHowAmountsRead(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	var authority struct {
		Pubkey string `json:"pubkey"`
	}
	ln.Call(t, &authority, "localnet_getMintAuthority")
	issuer := sol.MustPublicKeyFromBase58(authority.Pubkey)
	frozen := minttest.NewMint(t, ln.URL, sol.Token2022ProgramID, minttest.Mint{MintAuthority: &issuer, FreezeAuthority: &issuer, Decimals: 6,
		Extensions: []minttest.Extension{minttest.DefaultAccountState(true), minttest.ScaledUIAmount(&issuer, 1.5, 4_000_000_000, 2)}})
	accrues := minttest.NewMint(t, ln.URL, sol.Token2022ProgramID, minttest.Mint{MintAuthority: &issuer, Decimals: 6,
		Extensions: []minttest.Extension{minttest.InterestBearing(&issuer, 1_700_000_000, 425)}})
	table, err := asset.Defaults().With("devnet:FRZN:" + frozen.String() + ":token-2022:6:USD,devnet:YLD:" + accrues.String() + ":token-2022:6:USD")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{ln: ln, assets: table})
	got, err := client.New(e.url, e.key).ListAssets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.FactsReadAt == nil || time.Since(*got.FactsReadAt) > time.Minute {
		t.Fatalf("facts_read_at %v", got.FactsReadAt)
	}
	by := map[string]client.Asset{}
	for _, a := range got.Assets {
		if a.Amounts != "raw" || a.IssuerCanSeize == nil || a.DefaultFrozen == nil {
			t.Fatalf("%s: %+v", a.Symbol, a)
		}
		by[a.Symbol] = a
	}
	py, usdc, frzn, yld := by["PYUSD"], by["USDC"], by["FRZN"], by["YLD"]
	if !*py.IssuerCanSeize || py.PermanentDelegate == nil || *py.PermanentDelegate != issuer.String() ||
		py.FreezeAuthority == nil || *py.DefaultFrozen || py.ScaledUIAmount != nil || py.InterestBearing != nil {
		t.Fatalf("PYUSD %+v", py)
	}
	if *usdc.IssuerCanSeize || usdc.PermanentDelegate != nil || *usdc.DefaultFrozen {
		t.Fatalf("USDC %+v", usdc)
	}
	s := frzn.ScaledUIAmount
	if !*frzn.DefaultFrozen || *frzn.IssuerCanSeize || s == nil || s.Multiplier != "1.5" || s.NewMultiplier != "2" ||
		!s.NewMultiplierAt.Equal(time.Unix(4_000_000_000, 0)) {
		t.Fatalf("FRZN %+v %+v", frzn, s)
	}
	if yld.InterestBearing == nil || yld.InterestBearing.CurrentRateBps != 425 || yld.ScaledUIAmount != nil || *yld.DefaultFrozen {
		t.Fatalf("YLD %+v", yld)
	}
}
