package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/x402"
)

// freeze freezes owner's associated account of mint on the localnet, as
// the mint's freeze authority would (making it if missing).
func (e *env) freeze(owner, mint string) {
	e.t.Helper()
	e.ln.Call(e.t, nil, "surfnet_setTokenAccount", owner, mint, map[string]any{"state": "frozen"})
}

// A send from a wallet whose PYUSD account its issuer froze, or of USDC
// to a recipient whose USDC account is frozen, is refused before signing:
// 422 account_frozen naming the account, nothing signed, stored or
// reserved. A recipient without an account is not frozen: the send goes.
func TestFrozen_SendFromOrToAFrozenAccountIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	pyusd, _ := asset.Defaults().Find(solana.Devnet, "PYUSD")
	id, pubkey := e.agent(map[string]any{"assets": []string{"USDC", "PYUSD"}}, 5_000_000)
	e.ln.SetTokenBalance(t, pubkey, pyusd.Mint.String(), 5_000_000)
	e.freeze(pubkey, pyusd.Mint.String())
	frozenRecipient := newAddress()
	e.freeze(frozenRecipient, solana.DevnetUSDCMint.String())
	for _, c := range []struct {
		name, to, asset, names string
	}{
		{"from", newAddress(), "PYUSD", "the wallet's PYUSD account"},
		{"to", frozenRecipient, "USDC", "the recipient " + frozenRecipient + "'s USDC account"},
	} {
		status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": c.to, "amount": 1, "asset": c.asset})
		if status != http.StatusUnprocessableEntity || body["reason"] != "account_frozen" ||
			!strings.Contains(fmt.Sprint(body["error"]), c.names) || !strings.Contains(fmt.Sprint(body["error"]), "nothing was signed or reserved") {
			t.Fatalf("%s: %d %v", c.name, status, body)
		}
	}
	e.wantRows("transactions", 0)
	if r := e.reservedToday(id); r != 0 {
		t.Fatalf("reserved %d", r)
	}
	if status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 1}); status != http.StatusOK || body["status"] != "sent" {
		t.Fatalf("to a recipient without an account: %d %v", status, body)
	}
}

// An x402 payment to a seller whose USDC account is frozen, or from a
// wallet whose USDC account is, is refused before signing with 422
// account_frozen; no payment is stored or reserved.
func TestFrozen_X402PaymentFromOrToAFrozenAccountIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	frozenSeller := newAddress()
	e.freeze(frozenSeller, solana.DevnetUSDCMint.String())
	challenge := func(payTo string) json.RawMessage {
		raw, _ := json.Marshal(map[string]any{
			"x402Version": 2,
			"resource":    map[string]any{"url": "https://seller.example/weather"},
			"accepts": []any{map[string]any{
				"scheme": "exact", "network": x402.DevnetCAIP2, "amount": "10000", "asset": solana.DevnetUSDCMint.String(),
				"payTo": payTo, "maxTimeoutSeconds": 60, "extra": map[string]any{"feePayer": newAddress()},
			}},
		})
		return raw
	}
	id, _ := e.x402Agent(nil, 5_000_000)
	status, body, _ := e.pay(id, challenge(frozenSeller), nil, nil)
	if status != http.StatusUnprocessableEntity || body["reason"] != "account_frozen" || !strings.Contains(fmt.Sprint(body["error"]), frozenSeller) {
		t.Fatalf("to a frozen seller: %d %v", status, body)
	}
	frozenID, frozenWallet := e.x402Agent(nil, 5_000_000)
	e.freeze(frozenWallet, solana.DevnetUSDCMint.String())
	status, body, _ = e.pay(frozenID, challenge(newAddress()), nil, nil)
	if status != http.StatusUnprocessableEntity || body["reason"] != "account_frozen" || !strings.Contains(fmt.Sprint(body["error"]), "the wallet's USDC account") {
		t.Fatalf("from a frozen wallet: %d %v", status, body)
	}
	e.wantRows("x402_payments", 0)
	if r := e.reservedToday(id) + e.reservedToday(frozenID); r != 0 {
		t.Fatalf("reserved %d", r)
	}
}

// An MPP charge paid from a wallet whose USDC account is frozen is
// refused before signing with 422 account_frozen; nothing is stored.
func TestFrozen_MPPChargeFromAFrozenAccountIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, pubkey := e.x402Agent(nil, 5_000_000)
	e.freeze(pubkey, solana.DevnetUSDCMint.String())
	status, body := e.mppPay(id, []string{fakeCharge("1000")}, "https://seller.test/r", nil)
	if status != http.StatusUnprocessableEntity || body["reason"] != "account_frozen" || !strings.Contains(fmt.Sprint(body["error"]), "the wallet's USDC account") {
		t.Fatalf("from a frozen wallet: %d %v", status, body)
	}
	e.wantRows("x402_payments", 0)
	if r := e.reservedToday(id); r != 0 {
		t.Fatalf("reserved %d", r)
	}
}

// A parked send whose wallet's account is frozen before a human approves
// it is not signed when approved: the approval is closed by the system
// without spending (rejected, its detail saying the account is frozen),
// and nothing is stored or reserved.
func TestFrozen_ApprovedSendFromAFrozenAccountIsClosedUnsigned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, pubkey := e.agent(map[string]any{"approval_threshold_usdc": 1}, 5_000_000)
	apID := e.park(id, newAddress(), 2)
	e.freeze(pubkey, solana.DevnetUSDCMint.String())
	_, admin := e.adminKey()
	status, ap := e.approve(apID, admin, nil)
	if status != http.StatusOK || ap["status"] != "rejected" || ap["rejected_by"] != "system" || ap["reason"] != "account_frozen" ||
		!strings.Contains(fmt.Sprint(ap["reason_detail"]), "the wallet's USDC account") || !strings.Contains(fmt.Sprint(ap["reason_detail"]), "is frozen") {
		t.Fatalf("approve: %d %v", status, ap)
	}
	e.wantRows("transactions", 0)
	if r := e.reservedToday(id); r != 0 {
		t.Fatalf("reserved %d", r)
	}
}
