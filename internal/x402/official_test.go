package x402

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strconv"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

// officialCheck runs scripts/x402-check/check.mjs (the official
// @x402/core and @x402/svm packages) on req and decodes its answer.
func officialCheck(t testing.TB, req map[string]any) map[string]any {
	t.Helper()
	cmd := exec.Command("node", "../../scripts/x402-check/check.mjs")
	cmd.Stdin = bytes.NewReader(mustJSON(t, req))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node x402-check: %v (%s %s); run `make deps`", err, out, stderr.String())
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("x402-check answer %q: %v", out, err)
	}
	if res["error"] != nil {
		t.Fatalf("x402-check: %v", res["error"])
	}
	return res
}

// tokenBalance reads owner's devnet USDC account balance on the localnet.
func tokenBalance(t testing.TB, ln *localnettest.Localnet, owner sol.PublicKey) uint64 {
	t.Helper()
	ata, _, _ := sol.FindAssociatedTokenAddress(owner, solana.DevnetUSDCMint)
	var res struct {
		Value struct{ Amount string }
	}
	ln.Call(t, &res, "getTokenAccountBalance", ata.String())
	n, err := strconv.ParseUint(res.Value.Amount, 10, 64)
	if err != nil {
		t.Fatalf("balance %q", res.Value.Amount)
	}
	return n
}

// Our payments, v2 and v1, with the seller's memo or our nonce, pass the
// official facilitator's verify (its layout rules, the signatures, then a
// simulation on the localnet), and one settles: the official facilitator
// signs as fee payer and lands it, the seller's USDC grows by exactly the
// price, and the wallet, which holds no SOL, paid no fee. A payment the
// official code must refuse (an amount the seller did not ask) is refused,
// so the check can fail.
func TestOfficialFacilitator_VerifiesAndSettlesOurPayments(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	client := solana.NewClient(ln.URL, solana.Devnet, 0)
	mint := solana.DevnetUSDCMint.String()

	w, feePayer := newParty(t), newParty(t)
	ln.SetLamports(t, feePayer.pub.String(), 1_000_000_000)
	ln.SetTokenBalance(t, w.pub.String(), mint, 10_000_000)
	seller := func() party {
		s := newParty(t)
		ln.SetTokenBalance(t, s.pub.String(), mint, 0) // the scheme assumes payTo's account exists
		return s
	}
	check := func(challenge map[string]any, p *Payment, settle bool) map[string]any {
		return officialCheck(t, map[string]any{
			"mode": "check", "header_name": p.Header, "header_value": p.Value, "payment_required": challenge,
			"fee_payer_secret": base64.StdEncoding.EncodeToString(feePayer.key), "rpc_url": ln.URL, "settle": settle,
		})
	}
	pay := func(challenge map[string]any) *Payment {
		bh, err := client.LatestBlockhash(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c, err := mustParse(t, challenge).Select(Wallet{Network: solana.Devnet, Owner: w.pub}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Pay(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), bh.Hash, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	valid := func(name string, res map[string]any, index float64) {
		t.Helper()
		v, _ := res["verify"].(map[string]any)
		if res["challenge_valid"] != true || res["payload_valid"] != true || res["header_name_ok"] != true ||
			res["matched_index"] != index || v == nil || v["isValid"] != true || v["payer"] != w.pub.String() {
			t.Fatalf("%s: official check %v", name, res)
		}
	}

	s1 := seller()
	memo := entry(s1.pub, feePayer.pub, "1500")
	memo["extra"].(map[string]any)["memo"] = "order-7781"
	withMemo := challengeV2(map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": "1", "asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "maxTimeoutSeconds": 60, "extra": map[string]any{}}, memo)
	valid("v2 with the seller's memo", check(withMemo, pay(withMemo), false), 1)

	v1 := challengeV1(v1entry(s1.pub, feePayer.pub, "2500"))
	p1 := pay(v1)
	valid("v1", check(v1, p1, false), 0)
	// The same payment against a price it does not pay.
	v1["accepts"].([]map[string]any)[0]["maxAmountRequired"] = "2501"
	if v := check(v1, p1, false)["verify"].(map[string]any); v["isValid"] != false || v["invalidReason"] != "invalid_exact_svm_payload_amount_mismatch" {
		t.Fatalf("a wrong amount passed the official verify: %v", v)
	}

	s2 := seller()
	nonce := challengeV2(entry(s2.pub, feePayer.pub, "1234"))
	res := check(nonce, pay(nonce), true)
	valid("v2 with a nonce", res, 0)
	st, _ := res["settle"].(map[string]any)
	if st == nil || st["success"] != true || st["network"] != DevnetCAIP2 {
		t.Fatalf("settle %v", res["settle"])
	}
	if got := tokenBalance(t, ln, s2.pub); got != 1234 {
		t.Fatalf("seller received %d, want 1234", got)
	}
	var lamports struct{ Value uint64 }
	ln.Call(t, &lamports, "getBalance", w.pub.String())
	if lamports.Value != 0 {
		t.Fatalf("wallet holds %d lamports", lamports.Value)
	}
	// The official settlement answer, encoded by the official encoder,
	// decodes to the landed signature.
	enc := officialCheck(t, map[string]any{"mode": "encode", "payment_required": nonce, "settle_response": st})
	sr, err := DecodePaymentResponseHeader(enc["payment_response_header"].(string))
	if err != nil || !sr.Success || sr.Transaction != st["transaction"] {
		t.Fatalf("settlement %+v %v", sr, err)
	}
	var status struct {
		Value []*struct{ ConfirmationStatus string }
	}
	ln.Call(t, &status, "getSignatureStatuses", []string{sr.Signature.String()})
	if len(status.Value) != 1 || status.Value[0] == nil {
		t.Fatalf("the settled signature is unknown to the chain: %v", status)
	}
}

// Challenges encoded by the official encoder decode here to the same
// requirements.
func TestDecodePaymentRequiredHeader_OfficialEncoding(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	e := entry(s.pub, f.pub, "42")
	e["extra"].(map[string]any)["memo"] = "façade ✓ 42"
	challenge := challengeV2(e)
	res := officialCheck(t, map[string]any{"mode": "encode", "payment_required": challenge,
		"settle_response": map[string]any{"success": false, "errorReason": "insufficient_funds", "transaction": "", "network": DevnetCAIP2}})
	pr, err := DecodePaymentRequiredHeader(res["payment_required_header"].(string))
	if err != nil {
		t.Fatal(err)
	}
	c, err := pr.Select(Wallet{Network: solana.Devnet, Owner: w.pub}, nil)
	if err != nil || c.Amount != 42 || c.Memo != "façade ✓ 42" || !c.PayTo.Equals(s.pub) || pr.Resource.Description != "premium data" {
		t.Fatalf("choice %+v %v", c, err)
	}
	sr, err := DecodePaymentResponseHeader(res["payment_response_header"].(string))
	if err != nil || sr.Success || sr.ErrorReason != "insufficient_funds" {
		t.Fatalf("settlement %+v %v", sr, err)
	}
}

// An official seller and facilitator (@x402/express, @x402/svm) pricing
// in PYUSD on the localnet take our payment: a wallet that pays in USDC
// and PYUSD chooses the PYUSD requirement, our TransferChecked under
// Token-2022 passes the official verify and settles, payTo's PYUSD grows
// by exactly the price, and the landed transaction's transfer ran under
// Token-2022 (the wallet holds no SOL: the seller's fee payer paid).
func TestOfficialSeller_SettlesOurPYUSDPayment(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	client := solana.NewClient(ln.URL, solana.Devnet, 0)
	s := x402test.Start(t, ln.URL, x402test.Options{Asset: devnetPYUSD.Mint.String(), Price: 4321})
	w := newParty(t)
	ln.SetTokenBalance(t, w.pub.String(), devnetPYUSD.Mint.String(), 1_000_000)

	pr, err := ParsePaymentRequired(s.Challenge(t, x402test.Weather))
	if err != nil {
		t.Fatal(err)
	}
	c, err := pr.Select(Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{solana.Devnet.USDC(), devnetPYUSD}}, nil)
	if err != nil || c.Token != devnetPYUSD || c.Amount != 4321 {
		t.Fatalf("choice %+v %v", c, err)
	}
	bh, err := client.LatestBlockhash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := Pay(context.Background(), c, w.pub, signer.Plain(w.key), bh.Hash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paid := s.Pay(t, x402test.Weather, p.Header, p.Value)
	if paid.Status != 200 || paid.Response == nil || !paid.Response.Success || paid.Response.Payer != w.pub.String() {
		t.Fatalf("seller answered %d %q %+v (%s)", paid.Status, paid.Error, paid.Response, paid.Body)
	}
	if got := s.USDC(t, s.PayTo); got != 4321 {
		t.Fatalf("payTo holds %d PYUSD units, want 4321", got)
	}
	if got := s.Lamports(t, w.pub.String()); got != 0 {
		t.Fatalf("the wallet holds %d lamports", got)
	}
	if ps := ln.Programs(t, paid.Response.Transaction); len(ps) != 4 || ps[2] != sol.Token2022ProgramID.String() {
		t.Fatalf("landed with programs %v", ps)
	}
}
