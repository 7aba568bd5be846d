package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/mpp"
	"github.com/agentwallet/agentwallet/internal/mpp/mpptest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/waitfor"
)

const mppPath = "/api/public/v1/agents/%s/mpp/pay"

// mppPay asks the service to pay the seller's challenge (its 402's
// WWW-Authenticate lines) for resource from wallet id.
func (e *env) mppPay(id string, challenge []string, resource string, extra map[string]any) (int, map[string]any) {
	e.t.Helper()
	body := map[string]any{"challenge": strings.Join(challenge, ", "), "resource": resource}
	for k, v := range extra {
		body[k] = v
	}
	return e.do("POST", fmt.Sprintf(mppPath, id), e.key, body)
}

// mppState sweeps until MPP payment id is in state want and returns it.
func (e *env) mppState(eng *payment.Engine, id, want string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := eng.Sweep(e.t.Context()); err != nil {
			e.t.Fatal(err)
		}
		status, p := e.do("GET", "/api/public/v1/mpp/payments/"+id, e.key, nil)
		if status != 200 {
			e.t.Fatalf("get MPP payment: %d %v", status, p)
		}
		if p["state"] == want {
			return p
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("MPP payment %s is %v, want %s", id, p["state"], want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// fakeCharge is a devnet Solana charge of amount atomic USDC to a fresh
// recipient, the seller's fee payer paying, with a fresh challenge id:
// enough to select, sign or park (no seller takes it).
func fakeCharge(amount string, splits ...map[string]any) string {
	details := map[string]any{"network": "devnet", "decimals": 6, "feePayer": true, "feePayerKey": newAddress()}
	if len(splits) > 0 {
		details["splits"] = splits
	}
	req, _ := json.Marshal(map[string]any{"amount": amount, "currency": solana.DevnetUSDCMint.String(), "recipient": newAddress(), "methodDetails": details})
	id := base64.RawURLEncoding.EncodeToString([]byte(uuid.NewString()))
	return fmt.Sprintf(`Payment id=%q, realm="seller.test", method="solana", intent="charge", request=%q, expires=%q`,
		id, base64.RawURLEncoding.EncodeToString(req), time.Now().Add(5*time.Minute).UTC().Format("2006-01-02T15:04:05.000Z"))
}

// signMPP has key pay a fresh 0.001 USDC charge from wallet w (below any
// threshold): the payment's id and its challenge's id.
func (e *env) signMPP(key, w string) (id, challenge string) {
	e.t.Helper()
	c := fakeCharge("1000")
	status, body := e.do("POST", fmt.Sprintf(mppPath, w), key, map[string]any{"challenge": c, "resource": "https://seller.test/r"})
	if status != 200 || body["status"] != "signed" {
		e.t.Fatalf("sign MPP: %d %v", status, body)
	}
	cs, err := mpp.ParseChallenges(c)
	if err != nil {
		e.t.Fatal(err)
	}
	return body["payment_id"].(string), cs[0].ID
}

// fakeReceipt is a seller's Payment-Receipt for the challenge id.
func fakeReceipt(challenge string) string {
	raw, _ := json.Marshal(map[string]any{"method": "solana", "reference": "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW",
		"status": "success", "timestamp": time.Now().UTC().Format(time.RFC3339), "challengeId": challenge})
	return base64.RawURLEncoding.EncodeToString(raw)
}

// An agent pays the official MPP seller through the service, the seller's
// fee payer paying the fee: the seller verifies, broadcasts and answers the
// content with a receipt; its recipient's USDC grows by exactly the price;
// the wallet never held SOL; the agent reports the receipt; the sweep finds
// the landed transaction: settled with the receipt's reference, a confirmed
// transaction of kind mpp, tx.sent, analytics, and 404 to another account.
func TestMPPPay_EndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	seller := mpptest.Start(t, e.ln.URL, mpptest.Options{FeePayer: true})
	id, pub := e.x402Agent(nil, 5_000_000)
	resource := seller.URL + mpptest.Weather
	before := seller.Balance(t, seller.Recipient)

	status, body := e.mppPay(id, seller.Challenges(t, mpptest.Weather), resource, nil)
	if status != 200 || body["status"] != "signed" || body["header"] != "Authorization" ||
		!strings.HasPrefix(body["authorization"].(string), "Payment ") {
		t.Fatalf("pay: %d %v", status, body)
	}
	if body["pay_to"] != seller.Recipient || body["network"] != "devnet" || body["amount"] != 0.01 || body["asset"] != "USDC" || body["resource"] != resource {
		t.Fatalf("pay answer %v", body)
	}
	pid := body["payment_id"].(string)
	if r := e.reservedToday(id); r != 10_000 {
		t.Fatalf("reserved %d while signed", r)
	}
	got := seller.Get(t, mpptest.Weather, body["header"].(string), body["authorization"].(string))
	if got.Status != 200 || got.Header.Get("Payment-Receipt") == "" {
		t.Fatalf("seller: %d %s %s", got.Status, got.Problem, got.Body)
	}
	if grew := seller.Balance(t, seller.Recipient) - before; grew != 10_000 {
		t.Fatalf("the seller's USDC grew by %d, want 10000", grew)
	}
	if l := seller.Lamports(t, pub); l != 0 {
		t.Fatalf("the wallet holds %d lamports", l)
	}
	rc, err := mpp.ParseReceipt(got.Header.Get("Payment-Receipt"))
	if err != nil {
		t.Fatal(err)
	}
	status, p := e.do("POST", "/api/public/v1/mpp/payments/"+pid+"/receipt", e.key, map[string]any{"receipt": got.Header.Get("Payment-Receipt")})
	if status != 200 || p["receipt"].(map[string]any)["reference"] != rc.Reference {
		t.Fatalf("receipt: %d %v", status, p)
	}
	p = e.mppState(eng, pid, "settled")
	if p["signature"] != rc.Reference || p["pay_to"] != seller.Recipient || p["fee_payer"] != seller.FeePayer || p["challenge_id"] != rc.ChallengeID ||
		p["realm"] != seller.Realm || p["resource"] != resource {
		t.Fatalf("settled payment %v, receipt %+v", p, rc)
	}
	if r := e.reservedToday(id); r != 10_000 {
		t.Fatalf("reserved %d once settled", r)
	}
	sent := e.events("tx.sent")
	if len(sent) != 1 || sent[0]["kind"] != "mpp" || sent[0]["signature"] != rc.Reference || sent[0]["payment_id"] != pid {
		t.Fatalf("tx.sent %v", sent)
	}
	status, list := e.do("GET", "/api/public/v1/transactions?wallet_id="+id, e.key, nil)
	if txs, _ := list["transactions"].([]any); status != 200 || len(txs) != 1 || txs[0].(map[string]any)["kind"] != "mpp" ||
		txs[0].(map[string]any)["status"] != "confirmed" || txs[0].(map[string]any)["counterparty"] != seller.Recipient {
		t.Fatalf("transactions %d %v", status, list)
	}
	status, pays := e.do("GET", "/api/public/v1/mpp/payments?state=settled&wallet_id="+id, e.key, nil)
	if ps, _ := pays["payments"].([]any); status != 200 || len(ps) != 1 || ps[0].(map[string]any)["id"] != pid {
		t.Fatalf("list %d %v", status, pays)
	}
	// It is not an x402 payment.
	if status, _ := e.do("GET", "/api/public/v1/x402/payments/"+pid, e.key, nil); status != 404 {
		t.Fatalf("as an x402 payment: %d", status)
	}
	status, an := e.do("GET", "/api/public/v1/analytics", e.key, nil)
	if sp, _ := an["spend"].([]any); status != 200 || len(sp) != 1 || sp[0].(map[string]any)["mpp_payments"] != 1.0 ||
		sp[0].(map[string]any)["mpp_amount_usdc"] != 0.01 || sp[0].(map[string]any)["x402_payments"] != 0.0 {
		t.Fatalf("analytics %d %v", status, an)
	}
	// The credential again: the seller answers, the chain runs it once.
	if again := seller.Get(t, mpptest.Weather, body["header"].(string), body["authorization"].(string)); seller.Balance(t, seller.Recipient)-before != 10_000 {
		t.Fatalf("replayed credential: %d, the seller's USDC grew by %d", again.Status, seller.Balance(t, seller.Recipient)-before)
	}
	// The same challenge is not paid twice.
	status, body = e.mppPay(id, []string{p["challenge_id"].(string)}, resource, nil)
	if status != 422 {
		t.Fatalf("a bare id as challenge: %d %v", status, body)
	}
	_, other := e.newAccount(solana.Devnet)
	if status, _ := e.do("GET", "/api/public/v1/mpp/payments/"+pid, other, nil); status != 404 {
		t.Fatalf("another account: %d", status)
	}
	if status, _ := e.do("POST", "/api/public/v1/mpp/payments/"+pid+"/receipt", other, map[string]any{"receipt": got.Header.Get("Payment-Receipt")}); status != 404 {
		t.Fatalf("another account's receipt: %d", status)
	}
}

// Without a seller's fee payer the wallet pays the fee, and a split
// recipient is paid its share: the official seller takes it.
func TestMPPPay_WalletPaysTheFeeAndTheSplits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	partner := newAddress()
	seller := mpptest.Start(t, e.ln.URL, mpptest.Options{Price: 20_000, Splits: []mpptest.Split{{Recipient: partner, Amount: "5000"}}})
	id, pub := e.agent(nil, 5_000_000)
	before := seller.Lamports(t, pub)

	status, body := e.mppPay(id, seller.Challenges(t, mpptest.Weather), seller.URL+mpptest.Weather, nil)
	if status != 200 || body["amount"] != 0.02 {
		t.Fatalf("pay: %d %v", status, body)
	}
	if sp, _ := body["splits"].([]any); len(sp) != 1 || sp[0].(map[string]any)["to"] != partner || sp[0].(map[string]any)["amount"] != 0.005 {
		t.Fatalf("splits %v", body["splits"])
	}
	got := seller.Get(t, mpptest.Weather, body["header"].(string), body["authorization"].(string))
	if got.Status != 200 {
		t.Fatalf("seller: %d %s %s", got.Status, got.Problem, got.Body)
	}
	if seller.Balance(t, seller.Recipient) != 15_000 || seller.Balance(t, partner) != 5_000 {
		t.Fatalf("recipient %d, partner %d", seller.Balance(t, seller.Recipient), seller.Balance(t, partner))
	}
	if seller.Lamports(t, pub) >= before {
		t.Fatalf("the wallet paid no fee: %d lamports before, %d after", before, seller.Lamports(t, pub))
	}
	p := e.mppState(eng, body["payment_id"].(string), "settled")
	if p["fee_payer"] != pub {
		t.Fatalf("fee payer %v, want the wallet %s", p["fee_payer"], pub)
	}
}

// The wallet's rules hold for an MPP charge as for a send, every split
// recipient under the allowlist; what cannot be paid is 422; nothing is
// signed in any of these.
func TestMPPPay_RulesAndRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	allowed := newAddress()
	split := func(to string) map[string]any { return map[string]any{"recipient": to, "amount": "1000"} }
	charge := func(amount string, splits ...map[string]any) []string { return []string{fakeCharge(amount, splits...)} }
	// A charge to a named recipient, for the allowlist.
	to := func(recipient string, splits ...map[string]any) []string {
		c := fakeCharge("10000", splits...)
		cs, _ := mpp.ParseChallenges(c)
		ch, _ := cs[0].Charge()
		return []string{strings.Replace(c, cs[0].Request, rewrite(t, cs[0].Request, ch.Recipient.String(), recipient), 1)}
	}
	open, _ := e.agent(map[string]any{"max_tx_usdc": 1}, 5_000_000)
	listed, _ := e.agent(map[string]any{"allowlist": []string{allowed}}, 5_000_000)
	past := strings.Replace(fakeCharge("10000"), `expires="`+time.Now().UTC().Format("2006"), `expires="2020`, 1)
	mainnet := fakeCharge("10000")
	if cs, err := mpp.ParseChallenges(mainnet); err == nil {
		mainnet = strings.Replace(mainnet, cs[0].Request, rewriteNetwork(t, cs[0].Request, "mainnet-beta"), 1)
	}
	for _, c := range []struct {
		name     string
		wallet   string
		body     []string
		extra    map[string]any
		status   int
		contains string
	}{
		{"over max_tx", open, charge("2000000"), nil, 403, "exceeds_max_tx"},
		{"recipient outside the allowlist", listed, to(newAddress()), nil, 403, "recipient_not_allowed"},
		{"a split outside the allowlist", listed, to(allowed, split(newAddress())), nil, 403, "recipient_not_allowed"},
		{"every recipient allowed", listed, to(allowed, split(allowed)), nil, 200, "signed"},
		{"another network", open, []string{mainnet}, nil, 422, "network_mismatch"},
		{"an expired challenge", open, []string{past}, nil, 422, "expired"},
		{"over max_usdc", open, charge("20000"), map[string]any{"max_usdc": 0.01}, 422, "amount_over_max"},
		{"not a Payment challenge", open, []string{`Bearer realm="x"`}, nil, 422, "challenge"},
		{"no resource", open, charge("1000"), map[string]any{"resource": ""}, 422, "resource"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := e.mppPay(c.wallet, c.body, "https://seller.test/r", c.extra)
			if status != c.status || !strings.Contains(fmt.Sprint(body), c.contains) {
				t.Fatalf("%d %v, want %d with %q", status, body, c.status, c.contains)
			}
		})
	}
	e.wantRows("x402_payments", 1)

	// A wallet whose policy lists only USDC may not pay a PYUSD charge.
	pyusd := fakeCharge("10000")
	cs, _ := mpp.ParseChallenges(pyusd)
	pyusd = strings.Replace(pyusd, cs[0].Request, rewriteCurrency(t, cs[0].Request, "PYUSD"), 1)
	if status, body := e.mppPay(open, []string{pyusd}, "https://seller.test/r", nil); status != 422 || !strings.Contains(fmt.Sprint(body), "asset_not_payable") {
		t.Fatalf("PYUSD under a USDC policy: %d %v", status, body)
	}
	// A challenge is paid once: the same one again answers 409
	// already_paid naming the payment, alone or beside a fresh challenge
	// (the 402 was answered), and from another wallet of the account; a
	// key that does not reach the wallet that paid is not told which.
	c := charge("10000")
	status, first := e.mppPay(open, c, "https://seller.test/r", nil)
	if status != 200 {
		t.Fatalf("first: %d %v", status, first)
	}
	other, _ := e.agent(nil, 5_000_000)
	for _, again := range []struct {
		wallet string
		body   []string
	}{{open, c}, {open, append(charge("10000"), c...)}, {other, c}} {
		status, body := e.mppPay(again.wallet, again.body, "https://seller.test/r", nil)
		if status != 409 || body["reason"] != "already_paid" || body["payment_id"] != first["payment_id"] || !strings.Contains(body["error"].(string), "already paid") {
			t.Fatalf("the same challenge again: %d %v", status, body)
		}
	}
	scoped := e.newKey(e.key, map[string]any{"wallet_ids": []string{other}})["key"].(string)
	status, body := e.do("POST", fmt.Sprintf(mppPath, other), scoped, map[string]any{"challenge": c[0], "resource": "https://seller.test/r"})
	if _, named := body["payment_id"]; status != 409 || body["reason"] != "already_paid" || named || strings.Contains(fmt.Sprint(body), first["payment_id"].(string)) {
		t.Fatalf("the same challenge by a key of another wallet: %d %v", status, body)
	}
	e.wantRows("x402_payments", 2)
}

// rewrite replaces the recipient in a charge request (base64url JSON).
func rewrite(t *testing.T, request, from, to string) string {
	t.Helper()
	return editRequest(t, request, func(m map[string]any) {
		if m["recipient"] == from {
			m["recipient"] = to
		}
	})
}

func rewriteNetwork(t *testing.T, request, network string) string {
	t.Helper()
	return editRequest(t, request, func(m map[string]any) { m["methodDetails"].(map[string]any)["network"] = network })
}

func rewriteCurrency(t *testing.T, request, currency string) string {
	t.Helper()
	return editRequest(t, request, func(m map[string]any) { m["currency"] = currency })
}

func editRequest(t *testing.T, request string, edit func(map[string]any)) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(request)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, _ := json.Marshal(m)
	return base64.RawURLEncoding.EncodeToString(out)
}

// Sends, x402 payments and MPP charges share one daily budget under the
// wallet's lock: against a limit of 10 USDC, 60 concurrent attempts of 1
// USDC each, a third of each kind: exactly 10 go through, whichever kind,
// and the rest are blocked.
func TestMPPPay_SharesTheDailyLimitWithSendsAndX402(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 10, "max_tx_usdc": 10, "approval_threshold_usdc": 1000}, 100_000_000)
	to := newAddress()
	counts := tally(60, retried(func(i int) (int, map[string]any) {
		switch i % 3 {
		case 0:
			return e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1})
		case 1:
			return e.do("POST", fmt.Sprintf(x402Path, id), e.key, map[string]any{"payment_required": fakeChallenge("1000000")})
		}
		return e.mppPay(id, []string{fakeCharge("1000000")}, "https://seller.test/r", nil)
	}), func(status int, body map[string]any) string {
		switch {
		case status == 200 && (body["status"] == "sent" || body["status"] == "signed"):
			return "passed"
		case status == 403 && body["reason"] == "exceeds_daily_limit":
			return "blocked"
		}
		return ""
	})
	if counts["passed"] != 10 || counts["blocked"] != 50 || len(counts) != 2 {
		t.Fatalf("outcomes %v", counts)
	}
	if r := e.reservedToday(id); r != 10_000_000 {
		t.Fatalf("reserved %d", r)
	}
}

// At the threshold an MPP charge waits for a human, who sees what it buys
// and from whom; approved, the agent pays the seller's fresh challenge
// with the grant, once; the seller is paid once.
func TestMPPPay_ApprovalGrantsOnePayment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	seller := mpptest.Start(t, e.ln.URL, mpptest.Options{FeePayer: true, Price: 1_000_000})
	id, _ := e.x402Agent(map[string]any{"approval_threshold_usdc": 1}, 5_000_000)
	_, key := e.agentKey()
	agent := *e
	agent.key = key
	resource := seller.URL + mpptest.Weather

	status, body := agent.mppPay(id, seller.Challenges(t, mpptest.Weather), resource, nil)
	if status != 202 || body["status"] != "pending_approval" {
		t.Fatalf("pay at the threshold: %d %v", status, body)
	}
	apID, parked := body["approval_id"].(string), body["payment_id"].(string)
	if pending := e.events("approval.pending"); len(pending) != 1 || pending[0]["kind"] != "mpp" || pending[0]["resource"] != resource || pending[0]["realm"] != seller.Realm {
		t.Fatalf("approval.pending %v", pending)
	}
	if status, a := e.do("GET", approvalsPath+"/"+apID, e.key, nil); status != 200 || a["kind"] != "mpp" || a["realm"] != seller.Realm ||
		a["to"] != seller.Recipient || a["amount"] != 1.0 || a["resource"] != resource {
		t.Fatalf("the approval: %d %v", status, a)
	}
	if status, p := e.do("GET", "/api/public/v1/mpp/payments/"+parked, key, nil); status != 200 || p["state"] != "pending_approval" {
		t.Fatalf("parked: %d %v", status, p)
	}
	if status, a := e.approve(apID, e.key, nil); status != 200 || a["status"] != "sent" {
		t.Fatalf("approve: %d %v", status, a)
	}
	if approved := e.events("approval.approved"); len(approved) != 1 || approved[0]["kind"] != "mpp" {
		t.Fatalf("approval.approved %v", approved)
	}
	// An x402 payment may not use an MPP grant.
	status, body = agent.do("POST", fmt.Sprintf(x402Path, id), key, map[string]any{"payment_required": fakeChallenge("1000000"), "approval_id": apID})
	if status != 422 || !strings.Contains(body["error"].(string), "mpp") {
		t.Fatalf("an x402 payment with the MPP grant: %d %v", status, body)
	}
	before := seller.Balance(t, seller.Recipient)
	status, body = agent.mppPay(id, seller.Challenges(t, mpptest.Weather), resource, map[string]any{"approval_id": apID})
	if status != 200 || body["status"] != "signed" {
		t.Fatalf("redeem: %d %v", status, body)
	}
	if got := seller.Get(t, mpptest.Weather, body["header"].(string), body["authorization"].(string)); got.Status != 200 {
		t.Fatalf("seller: %d %s", got.Status, got.Problem)
	}
	if grew := seller.Balance(t, seller.Recipient) - before; grew != 1_000_000 {
		t.Fatalf("the seller's USDC grew by %d", grew)
	}
	if p := e.mppState(eng, body["payment_id"].(string), "settled"); p["approval_id"] != apID {
		t.Fatalf("redeemed payment %v", p)
	}
	status, body = agent.mppPay(id, seller.Challenges(t, mpptest.Weather), resource, map[string]any{"approval_id": apID})
	if status != 422 || !strings.Contains(body["error"].(string), "already used") {
		t.Fatalf("second use: %d %v", status, body)
	}
	if status, p := e.do("GET", "/api/public/v1/mpp/payments/"+parked, key, nil); status != 200 || p["state"] != "approved" {
		t.Fatalf("used grant: %d %v", status, p)
	}
}

// A signed charge the seller never broadcasts keeps its reservation until
// its blockhash expires; then the sweep releases it and says mpp.expired.
func TestMPPPay_UnbroadcastExpires(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	eng, _ := e.startWorker()
	id, _ := e.x402Agent(nil, 5_000_000)
	status, body := e.mppPay(id, []string{fakeCharge("10000")}, "https://seller.test/r", nil)
	if status != 200 {
		t.Fatalf("pay: %d %v", status, body)
	}
	pid := body["payment_id"].(string)
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	p := e.mppState(eng, pid, "expired")
	if r := e.reservedToday(id); r != 0 || p["error"] == nil {
		t.Fatalf("reserved %d after expiry; %v", r, p)
	}
	if ev := e.events("mpp.expired"); len(ev) != 1 || ev[0]["payment_id"] != pid {
		t.Fatalf("mpp.expired %v", ev)
	}
	if ev := e.events("x402.expired"); len(ev) != 0 {
		t.Fatalf("x402.expired %v", ev)
	}
}

// A node that drops what it is sent: the seller broadcasts the signed
// charge, the node drops it, the seller gives up (nothing served); the
// payment holds its reservation until its blockhash expires, then the
// sweep releases it (mpp.expired). With the node well again, a fresh
// challenge is paid and served: the seller's recipient is paid exactly
// once, and the day counts one payment.
func TestMPPPay_DroppedChargeIsReleasedThenPaidOnce(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	eng, _ := e.startWorker()
	seller := mpptest.Start(t, ln.URL, mpptest.Options{FeePayer: true})
	id, _ := e.x402Agent(nil, 5_000_000)
	resource := seller.URL + mpptest.Weather
	before := seller.Balance(t, seller.Recipient)

	status, body := e.mppPay(id, seller.Challenges(t, mpptest.Weather), resource, nil)
	if status != 200 {
		t.Fatalf("pay: %d %v", status, body)
	}
	dropped := body["payment_id"].(string)
	ln.SetFaults(t, localnettest.Faults{DropRate: 1})
	if got := seller.Get(t, mpptest.Weather, body["header"].(string), body["authorization"].(string)); got.Status == 200 {
		t.Fatalf("served while the node dropped the payment: %s", got.Body)
	}
	ln.SetFaults(t, localnettest.Faults{})
	if r := e.reservedToday(id); r != 10_000 {
		t.Fatalf("reserved %d before the blockhash expired", r)
	}
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	var height uint64
	ln.Call(t, &height, "getBlockHeight")
	e.mppState(eng, dropped, "expired")
	if r := e.reservedToday(id); r != 0 {
		t.Fatalf("reserved %d once expired", r)
	}
	// The worker's cached blockhash (at most 2 s old, as on a real chain)
	// predates the jump of 400 slots: the next payment waits for a fresh one.
	waitfor.True(t, "a blockhash of after the jump", func() bool {
		bh, err := eng.Nodes[solana.Devnet].Blockhashes.Get(t.Context())
		return err == nil && bh.LastValidBlockHeight > height+100
	})
	status, body = e.mppPay(id, seller.Challenges(t, mpptest.Weather), resource, nil)
	if status != 200 {
		t.Fatalf("pay again: %d %v", status, body)
	}
	if got := seller.Get(t, mpptest.Weather, body["header"].(string), body["authorization"].(string)); got.Status != 200 {
		t.Fatalf("seller: %d %s %s", got.Status, got.Problem, got.Body)
	}
	e.mppState(eng, body["payment_id"].(string), "settled")
	if grew := seller.Balance(t, seller.Recipient) - before; grew != 10_000 {
		t.Fatalf("the seller's USDC grew by %d, want one price", grew)
	}
	if r := e.reservedToday(id); r != 10_000 {
		t.Fatalf("reserved %d, want one payment", r)
	}
}

// One challenge is paid once per account, however many ask at once and
// from whichever of its wallets: 20 concurrent attempts from two wallets
// sign exactly one payment and reserve exactly its amount; the others are
// refused, nothing signed.
func TestMPPPay_ConcurrentAttemptsPayAChallengeOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	a, _ := e.agent(nil, 5_000_000)
	b, _ := e.agent(nil, 5_000_000)
	c := fakeCharge("10000")
	counts := tally(20, retried(func(i int) (int, map[string]any) {
		return e.mppPay([]string{a, b}[i%2], []string{c}, "https://seller.test/r", nil)
	}), func(status int, body map[string]any) string {
		switch {
		case status == 200 && body["status"] == "signed":
			return "signed"
		case status == 409 && body["reason"] == "already_paid" && body["payment_id"] != nil:
			return "refused"
		}
		return ""
	})
	if counts["signed"] != 1 || counts["refused"] != 19 || len(counts) != 2 {
		t.Fatalf("outcomes %v", counts)
	}
	e.wantRows("x402_payments", 1)
	if ra, rb := e.reservedToday(a), e.reservedToday(b); ra+rb != 10_000 {
		t.Fatalf("reserved %d and %d, want one payment's 10000", ra, rb)
	}
}
