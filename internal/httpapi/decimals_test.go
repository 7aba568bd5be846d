package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana/minttest"
)

// An operator adds a 2-decimal token (SPL Token) and a 9-decimal one
// (Token-2022, with a scaled UI amount) through ASSETS: a send of each
// lands with the amount in the token's own base units (1.25 → 125; 1.5 →
// 1,500,000,000, raw: the multiplier changes nothing), and the policy
// counts micros of the currency (1.25 and 1.5 USD under the USD daily
// limit). 1.005 of the 2-decimal token is a 422 naming its
// decimals; nothing is recorded for it.
func TestDecimals_OtherDecimalsMoveBaseUnitsAndCountMicros(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	var authority struct {
		Pubkey string `json:"pubkey"`
	}
	ln.Call(t, &authority, "localnet_getMintAuthority")
	issuer := sol.MustPublicKeyFromBase58(authority.Pubkey)
	cent := minttest.NewMint(t, ln.URL, sol.TokenProgramID, minttest.Mint{MintAuthority: &issuer, Decimals: 2})
	nano := minttest.NewMint(t, ln.URL, sol.Token2022ProgramID, minttest.Mint{MintAuthority: &issuer, Decimals: 9,
		Extensions: []minttest.Extension{minttest.ScaledUIAmount(&issuer, 2, 0, 2)}})
	table, err := asset.Defaults().With("devnet:CENT:" + cent.String() + ":token:2:USD,devnet:NANO:" + nano.String() + ":token-2022:9:USD")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{ln: ln, assets: table})
	eng, _ := e.startWorker()
	id, pubkey := e.agent(map[string]any{"assets": []string{"USDC", "CENT", "NANO"}, "daily_limit_usdc": 10, "approval_threshold_usdc": 10}, 5_000_000)
	e.fundAsset(pubkey, "CENT", 1_000)         // 10.00
	e.fundAsset(pubkey, "NANO", 5_000_000_000) // 5.000000000
	to := newAddress()

	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": json.Number("1.005"), "asset": "CENT"})
	if status != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(body), "CENT has 2 decimals") {
		t.Fatalf("1.005 CENT: %d %v", status, body)
	}
	if n := e.countRows("send_requests"); n != 0 {
		t.Fatalf("%d requests recorded", n)
	}
	for _, c := range []struct {
		symbol, amount string
		units          uint64
	}{{"CENT", "1.25", 125}, {"NANO", "1.5", 1_500_000_000}} {
		status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": json.Number(c.amount), "asset": c.symbol})
		if status != http.StatusOK || body["status"] != "sent" {
			t.Fatalf("send %s %s: %d %v", c.amount, c.symbol, status, body)
		}
		e.settle(eng, body["signature"].(string), payment.TxConfirmed)
		if _, units := e.assetAccount(to, c.symbol); units != c.units {
			t.Fatalf("%s: the recipient holds %d base units, want %d", c.symbol, units, c.units)
		}
	}
	if r := e.reservedToday(id); r != money.Micros[money.USD](2_750_000) {
		t.Fatalf("the day counts %d micros, want 2,750,000 (1.25 + 1.5 USD)", r)
	}
	status, list := e.do("GET", "/api/public/v1/transactions?wallet_id="+id, e.key, nil)
	txs, _ := list["transactions"].([]any)
	if status != http.StatusOK || len(txs) != 2 || fmt.Sprint(txs[0].(map[string]any)["amount"]) != "1.5" || fmt.Sprint(txs[1].(map[string]any)["amount"]) != "1.25" {
		t.Fatalf("transactions %d %v", status, list)
	}
	// The day counts them in USD: 2.75 spent, 7.25 left of 10.
	status, preview := e.do("POST", fmt.Sprintf(sendPath, id)+"/preview", e.key, map[string]any{"to": to, "amount": 1, "asset": "CENT"})
	if status != http.StatusOK || fmt.Sprint(preview["remaining_today_usdc"]) != "7.25" || fmt.Sprint(preview["spent_today_usdc"]) != "2.75" {
		t.Fatalf("preview %d %v", status, preview)
	}
}
