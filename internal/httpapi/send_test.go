package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/waitfor"
)

const sendPath = "/api/public/v1/agents/%s/send"

// agent creates an agent with policy p (nil: defaults) and funds it with
// usdcMicros and 1 SOL on the env's localnet.
func (e *env) agent(p map[string]any, usdcMicros uint64) (id, pubkey string) {
	e.t.Helper()
	body := map[string]any{"label": "payer"}
	if p != nil {
		body["policy"] = p
	}
	status, a := e.do("POST", "/api/public/v1/agents", e.key, body)
	if status != http.StatusCreated {
		e.t.Fatalf("create agent: %d %v", status, a)
	}
	id, pubkey = a["id"].(string), a["pubkey"].(string)
	e.ln.SetLamports(e.t, pubkey, 1_000_000_000)
	if usdcMicros > 0 {
		e.ln.SetTokenBalance(e.t, pubkey, solana.DevnetUSDCMint.String(), usdcMicros)
	}
	return id, pubkey
}

func newAddress() string { return sol.NewWallet().PublicKey().String() }

// chainUSDC is owner's devnet USDC on the localnet, in micro-USDC.
func (e *env) chainUSDC(owner string) money.Micros[money.USD] {
	e.t.Helper()
	b, err := solana.NewClient(e.ln.URL, solana.Devnet, 5*time.Second).Balance(context.Background(), sol.MustPublicKeyFromBase58(owner))
	if err != nil {
		e.t.Fatal(err)
	}
	return money.Micros[money.USD](b.Units(solana.Devnet.USDCMint()))
}

// settle sweeps until the transaction with sig has status want.
func (e *env) settle(eng *payment.Engine, sig, want string) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := eng.Sweep(context.Background()); err != nil {
			e.t.Fatal(err)
		}
		var got string
		if err := e.db.NewSelect().Table("transactions").Column("status").Where("signature = ?", sig).Scan(context.Background(), &got); err != nil {
			e.t.Fatal(err)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("transaction %s is %s, want %s", sig, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *env) events(kind string) []map[string]any {
	e.t.Helper()
	var raws []json.RawMessage
	if err := e.db.NewSelect().Table("events").Column("data").Where("kind = ? AND account_id = ?", kind, e.account.ID).
		Order("created_at").Scan(context.Background(), &raws); err != nil {
		e.t.Fatal(err)
	}
	out := make([]map[string]any, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

func (e *env) auditActions() []string {
	e.t.Helper()
	var actions []string
	if _, err := audit.Seal(context.Background(), e.db, e.account.ID); err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.NewSelect().Table("audit_log").Column("action").Where("account_id = ?", e.account.ID).
		Order("seq").Scan(context.Background(), &actions); err != nil {
		e.t.Fatal(err)
	}
	return actions
}

func (e *env) reservedToday(walletID string) money.Micros[money.USD] {
	e.t.Helper()
	r, err := payment.ReservedToday(context.Background(), e.db, uuid.MustParse(walletID), time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// A send within policy is signed, broadcast and answered with its
// signature; the recipient's USDC account is created, the memo is on
// chain, and the sweep confirms it with a tx.sent event.
func TestSendSentEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(nil, 100_000_000)
	to := newAddress() // has no USDC account yet

	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1.5, "memo": "invoice 42"})
	if status != http.StatusOK || body["status"] != "sent" {
		t.Fatalf("send: %d %v", status, body)
	}
	sig, _ := body["signature"].(string)
	if _, err := sol.SignatureFromBase58(sig); err != nil {
		t.Fatalf("signature %q: %v", sig, err)
	}
	e.settle(eng, sig, payment.TxConfirmed)
	if got := e.chainUSDC(to); got != 1_500_000 {
		t.Fatalf("recipient holds %d micro-USDC, want 1500000", got)
	}
	var tx struct {
		Meta struct {
			LogMessages []string `json:"logMessages"`
		} `json:"meta"`
	}
	e.ln.Call(t, &tx, "getTransaction", sig, map[string]any{"commitment": "confirmed", "encoding": "json"})
	if logs := strings.Join(tx.Meta.LogMessages, "\n"); !strings.Contains(logs, "invoice 42") {
		t.Fatalf("memo not in the transaction's logs:\n%s", logs)
	}

	status, list := e.do("GET", "/api/public/v1/transactions", e.key, nil)
	txs, _ := list["transactions"].([]any)
	if status != 200 || len(txs) != 1 {
		t.Fatalf("transactions: %d %v", status, list)
	}
	got := txs[0].(map[string]any)
	want := map[string]any{"signature": sig, "kind": "usdc", "direction": "send", "amount": 1.5, "counterparty": to,
		"status": "confirmed", "memo": "invoice 42", "wallet_id": id}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("transaction %s = %v, want %v (%v)", k, got[k], v, got)
		}
	}
	if _, err := uuid.Parse(got["id"].(string)); err != nil {
		t.Fatalf("id %v", got["id"])
	}
	if ev := e.events("tx.sent"); len(ev) != 1 || ev[0]["signature"] != sig || ev[0]["amount"] != 1.5 || ev[0]["to"] != to ||
		ev[0]["memo"] != "invoice 42" || ev[0]["wallet_id"] != id {
		t.Fatalf("tx.sent events %v", ev)
	}
	if a := e.auditActions(); strings.Join(a, ",") != "wallet.created,send.sent" {
		t.Fatalf("audit %v", a)
	}
	// Another account sees none of it.
	_, otherKey := e.newAccount(solana.Devnet)
	if status, list := e.do("GET", "/api/public/v1/transactions", otherKey, nil); status != 200 || len(list["transactions"].([]any)) != 0 {
		t.Fatalf("other account's transactions: %d %v", status, list)
	}
}

// The policy outcomes through HTTP: approval threshold → 202 with a
// pending approval record and event; over max_tx, over the day, off the
// allowlist and frozen → 403 with reason, tx.blocked and an audit entry.
func TestSendPolicyOutcomes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	allowed := newAddress()
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 30, "max_tx_usdc": 20, "approval_threshold_usdc": 10,
		"allowlist": []string{allowed}}, 100_000_000)
	send := func(to string, amount any, memo any) (int, map[string]any) {
		b := map[string]any{"to": to, "amount": amount}
		if memo != nil {
			b["memo"] = memo
		}
		return e.do("POST", fmt.Sprintf(sendPath, id), e.key, b)
	}

	status, body := send(allowed, 10, "big one")
	if status != http.StatusAccepted || body["status"] != "pending_approval" || !strings.HasPrefix(fmt.Sprint(body["approval_id"]), "ap_") {
		t.Fatalf("at threshold: %d %v", status, body)
	}
	apID := uuid.MustParse(strings.TrimPrefix(body["approval_id"].(string), "ap_"))
	var ap approval.Approval
	if err := e.db.NewSelect().Model(&ap).Where("id = ?", apID).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ap.Status != "pending" || ap.Amount != 10_000_000 || ap.To != allowed || *ap.Memo != "big one" ||
		ap.ExpiresAt.Sub(ap.CreatedAt) != 7*24*time.Hour {
		t.Fatalf("approval %+v", ap)
	}
	if ev := e.events("approval.pending"); len(ev) != 1 || ev[0]["approval_id"] != body["approval_id"] || ev[0]["agent_label"] != "payer" ||
		ev[0]["amount"] != 10.0 || ev[0]["to"] != allowed || ev[0]["memo"] != "big one" || ev[0]["wallet_id"] != id {
		t.Fatalf("approval.pending events %v", ev)
	}

	// A pending approval reserves nothing: 2 × 9.5 = 19 of 30 go out.
	for range 2 {
		if status, body := send(allowed, 9.5, nil); status != http.StatusOK {
			t.Fatalf("small send: %d %v", status, body)
		}
	}
	cases := []struct {
		to     string
		amount any
		reason policy.Reason
		left   float64
	}{
		{allowed, 20.000001, policy.ExceedsMaxTx, 11},
		{allowed, 11.000001, policy.ExceedsDailyLimit, 11},
		{newAddress(), 1, policy.RecipientNotAllowed, 11},
	}
	for _, c := range cases {
		status, body := send(c.to, c.amount, nil)
		wantError(t, status, body, http.StatusForbidden, "Blocked by policy")
		if body["error"] != "Blocked by policy" || body["reason"] != string(c.reason) || body["remaining_today_usdc"] != c.left {
			t.Fatalf("%v: %v", c.reason, body)
		}
	}
	if status, body := send(allowed, 9.999999, nil); status != http.StatusOK {
		t.Fatalf("exactly under threshold within the day: %d %v", status, body)
	}
	if _, err := e.db.NewUpdate().Table("wallets").Set("state = 'frozen'").Where("id = ?", id).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	status, body = send(allowed, 0.000001, nil)
	if status != http.StatusForbidden || body["reason"] != "wallet_frozen" {
		t.Fatalf("frozen: %d %v", status, body)
	}
	blocked := e.events("tx.blocked")
	if len(blocked) != 4 {
		t.Fatalf("tx.blocked events %v", blocked)
	}
	if b := blocked[0]; b["reason"] != "exceeds_max_tx" || b["amount"] != 20.000001 || b["to"] != allowed || b["wallet_id"] != id || b["memo"] != nil {
		t.Fatalf("tx.blocked %v", b)
	}
	if _, ok := blocked[0]["memo"]; !ok {
		t.Fatal("tx.blocked lacks memo (null)")
	}
	want := "wallet.created,send.pending_approval,send.sent,send.sent,send.blocked,send.blocked,send.blocked,send.sent,send.blocked"
	if got := strings.Join(e.auditActions(), ","); got != want {
		t.Fatalf("audit\n got %s\nwant %s", got, want)
	}
}

// Bad input is a 422 naming the field (or 400 for broken JSON) and
// records nothing.
func TestSendValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, pub := e.agent(nil, 0)
	to := newAddress()
	cases := []struct {
		name   string
		body   string
		status int
		want   string
	}{
		{"tiny", `{"to":"` + to + `","amount":1e-7}`, 422, "amount"},
		{"too precise", `{"to":"` + to + `","amount":1.0000001}`, 422, "amount"},
		{"zero", `{"to":"` + to + `","amount":0}`, 422, "amount: must be greater than 0"},
		{"negative", `{"to":"` + to + `","amount":-1}`, 422, "amount"},
		{"huge", `{"to":"` + to + `","amount":1e300}`, 422, "amount"},
		{"string", `{"to":"` + to + `","amount":"1"}`, 422, "amount"},
		{"missing amount", `{"to":"` + to + `"}`, 422, "amount"},
		{"missing to", `{"amount":1}`, 422, "to"},
		{"short to", `{"to":"abc","amount":1}`, 422, "to"},
		{"long to", `{"to":"` + strings.Repeat("1", 65) + `","amount":1}`, 422, "to"},
		{"not base58", `{"to":"` + strings.Repeat("0", 44) + `","amount":1}`, 422, "to"},
		{"33 bytes", `{"to":"` + strings.Repeat("z", 45) + `","amount":1}`, 422, "to"},
		{"self", `{"to":"` + pub + `","amount":1}`, 422, "to: is the sending wallet itself"},
		{"memo too long", `{"to":"` + to + `","amount":1,"memo":"` + strings.Repeat("é", 201) + `"}`, 422, "memo"},
		{"memo not string", `{"to":"` + to + `","amount":1,"memo":5}`, 422, "memo"},
		{"memo with NUL", `{"to":"` + to + `","amount":1,"memo":"a\u0000b"}`, 422, "memo"},
		{"unknown field", `{"to":"` + to + `","amount":1,"Amount":2}`, 422, "Amount"},
		{"broken json", `{"to":`, 400, "malformed JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := e.with(t).do("POST", fmt.Sprintf(sendPath, id), e.key, c.body)
			wantError(t, status, body, c.status, c.want)
		})
	}
	status, body := e.do("POST", fmt.Sprintf(sendPath, uuid.NewString()), e.key, map[string]any{"to": to, "amount": 1})
	wantError(t, status, body, 404, "not found")
	_, otherKey := e.newAccount(solana.Devnet)
	status, body = e.do("POST", fmt.Sprintf(sendPath, id), otherKey, map[string]any{"to": to, "amount": 1})
	wantError(t, status, body, 404, "not found")
	e.wantRows("send_requests", 0)
}

// A wallet without the USDC or without SOL: 422 saying what is short,
// the transaction failed and its reservation released.
func TestSendPreflightShortfall(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	eng, _ := e.startWorker()
	id, pub := e.agent(nil, 1_000_000) // 1 USDC
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": 2})
	wantError(t, status, body, 422, "insufficient USDC")

	id2, pub2 := e.agent(nil, 5_000_000)
	e.ln.SetLamports(t, pub2, 0)
	status, body = e.do("POST", fmt.Sprintf(sendPath, id2), e.key, map[string]any{"to": newAddress(), "amount": 1})
	wantError(t, status, body, 422, "insufficient SOL")

	// Refused bytes are never sent again, even once the wallets are
	// funded; their reservations hold until their blockhashes expire.
	ln.SetTokenBalance(t, pub, solana.DevnetUSDCMint.String(), 10_000_000)
	ln.SetLamports(t, pub2, 1_000_000_000)
	later := e.newEngine()
	later.FirstBroadcastGrace = time.Millisecond
	if st, err := later.Sweep(context.Background()); err != nil || st.Rebroadcast != 0 || st.Failed != 0 {
		t.Fatalf("sweep %+v %v", st, err)
	}
	for w, want := range map[string]money.Micros[money.USD]{id: 2_000_000, id2: 1_000_000} {
		if r := e.reservedToday(w); r != want {
			t.Fatalf("wallet %s reserves %d before its blockhash expired, want %d", w, r, want)
		}
	}
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	waitfor.True(t, "both refused transactions failed", func() bool {
		eng.Sweep(context.Background())
		return e.reservedToday(id) == 0 && e.reservedToday(id2) == 0
	})
	var pending int
	if err := e.db.NewSelect().Table("transactions").ColumnExpr("count(*) FILTER (WHERE status <> 'failed')").Scan(context.Background(), &pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Fatalf("%d transactions left pending", pending)
	}
	if a := strings.Join(e.auditActions(), ","); a != "wallet.created,send.sent,wallet.created,send.sent,send.failed,send.failed" {
		t.Fatalf("audit %s", a)
	}
	if ev := e.events("tx.failed"); len(ev) != 2 || !strings.Contains(ev[0]["reason"].(string), "refused by the node") {
		t.Fatalf("tx.failed %v", ev)
	}
}

// 100 concurrent sends of 1 USDC against a daily limit of 50: exactly 50
// go out and 50 are blocked, and the chain agrees.
func TestConcurrentSendsRespectDailyLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(map[string]any{"daily_limit_usdc": 50, "max_tx_usdc": 50, "approval_threshold_usdc": 1000}, 200_000_000)
	to := newAddress()

	var sigs []string
	counts := tally(100, retried(func(int) (int, map[string]any) {
		return e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1})
	}), func(status int, body map[string]any) string {
		switch {
		case status == 200 && body["status"] == "sent":
			sigs = append(sigs, body["signature"].(string))
			return "sent"
		case status == 403 && body["reason"] == "exceeds_daily_limit":
			return "blocked"
		}
		return ""
	})
	if counts["sent"] != 50 || counts["blocked"] != 50 || len(counts) != 2 {
		t.Fatalf("outcomes %v", counts)
	}
	for _, sig := range sigs {
		e.settle(eng, sig, payment.TxConfirmed)
	}
	if got := e.chainUSDC(to); got != 50_000_000 {
		t.Fatalf("recipient holds %d micro-USDC, want 50 USDC", got)
	}
	if r := e.reservedToday(id); r != 50_000_000 {
		t.Fatalf("reserved %d", r)
	}
}

// With no worker, the API answers 503 within its wait, and the request
// never executes, even when a worker starts later and finds the task.
func TestSendWithoutWorkerIs503AndNeverExecutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{sendWait: 500 * time.Millisecond})
	id, _ := e.agent(nil, 10_000_000)
	to := newAddress()
	start := time.Now()
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1})
	wantError(t, status, body, 503, "nothing was sent")
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("503 took %s", took)
	}
	var state string
	if err := e.db.NewSelect().Table("send_requests").Column("state").Scan(context.Background(), &state); err != nil || state != "abandoned" {
		t.Fatalf("request state %q (%v)", state, err)
	}

	eng, stop := e.startWorker()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pending, err := e.rdb.LLen(context.Background(), "asynq:{payments}:pending").Result()
		if err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker did not take the task")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let it run
	stop()
	if _, err := eng.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.wantRows("transactions", 0)
	if got := e.chainUSDC(to); got != 0 {
		t.Fatalf("recipient received %d", got)
	}
}

// A node that silently drops every transaction: the send is answered
// sent, the transaction fails once its blockhash expires (with no attempt
// left), and the day's reservation is released.
func TestDroppedTransactionFailsAndReleases(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	e.engine = func(eng *payment.Engine) { eng.MaxAttempts = 1 } // signed once (re-signing: TestResign_*)
	eng, _ := e.startWorker()
	id, _ := e.agent(nil, 10_000_000)
	to := newAddress()
	before := e.reservedToday(id)

	ln.SetFaults(t, localnettest.Faults{DropRate: 1})
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 2})
	if status != 200 || body["status"] != "sent" {
		t.Fatalf("send: %d %v", status, body)
	}
	sig := body["signature"].(string)
	if r := e.reservedToday(id); r != before+2_000_000 {
		t.Fatalf("reserved %d while pending", r)
	}
	// Just after signing the sweep leaves it to the worker's broadcast;
	// later inside the blockhash window it re-broadcasts (dropped again).
	st, err := eng.Sweep(context.Background())
	if err != nil || st.Rebroadcast != 0 || st.Failed != 0 {
		t.Fatalf("sweep %+v %v", st, err)
	}
	later := e.newEngine()
	later.FirstBroadcastGrace = time.Millisecond
	st, err = later.Sweep(context.Background())
	if err != nil || st.Rebroadcast != 1 || st.Failed != 0 {
		t.Fatalf("later sweep %+v %v", st, err)
	}
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	e.settle(eng, sig, payment.TxFailed)
	if r := e.reservedToday(id); r != before {
		t.Fatalf("reserved %d after failure, want %d", r, before)
	}
	if got := e.chainUSDC(to); got != 0 {
		t.Fatalf("recipient received %d", got)
	}
	if ev := e.events("tx.sent"); len(ev) != 0 {
		t.Fatalf("tx.sent for a failed transaction: %v", ev)
	}
}

// A node that fails the first broadcast (as after a crash between commit
// and broadcast): the answer is still sent with the stored signature, and
// the sweep broadcasts the same bytes once the node is back; no second
// signature is ever made.
func TestFailedBroadcastIsResentWithSameSignature(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	eng, _ := e.startWorker()
	id, _ := e.agent(nil, 10_000_000)
	to := newAddress()

	ln.SetFaults(t, localnettest.Faults{FailSends: true})
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 3})
	if status != 200 || body["status"] != "sent" {
		t.Fatalf("send: %d %v", status, body)
	}
	sig := body["signature"].(string)
	if got := e.chainUSDC(to); got != 0 {
		t.Fatalf("landed despite failing node: %d", got)
	}
	ln.SetFaults(t, localnettest.Faults{})
	e.settle(eng, sig, payment.TxConfirmed)
	if got := e.chainUSDC(to); got != 3_000_000 {
		t.Fatalf("recipient holds %d", got)
	}
	e.wantRows("transactions", 1)
}

// FuzzSend: whatever the body and Idempotency-Key, a send and its preview
// answer a decision or a 4xx with an {"error"} body, never a 5xx; and a
// body the preview refuses as malformed or invalid, the send refuses with
// the same status (one decoder, one validation).
func FuzzSend(f *testing.F) {
	to := newAddress()
	for _, s := range []struct{ body, key string }{
		{`{"to":"` + to + `","amount":0.5}`, ""},
		{`{"to":"` + to + `","amount":0.5,"memo":"invoice 7"}`, "k-1"},
		{`{"to":"` + to + `","amount":0.5}`, "k-1"},
		{`{"to":"` + to + `","amount":"0.5"}`, ""},
		{`{"to":"` + to + `","amount":1e-7}`, ""},
		{`{"to":"` + to + `","amount":1e400}`, ""},
		{`{"to":"` + to + `","amount":-1}`, ""},
		{`{"to":"11111111111111111111111111111111","amount":1}`, ""},
		{`{"to":"` + to + `x","amount":1}`, ""},
		{`{"to":"` + to + `","amount":1,"memo":"\u0000"}`, ""},
		{`{"to":"` + to + `","amount":1,"extra":true}`, ""},
		{`{"to":"` + to + `"}`, ""},
		{`{"to":`, ""},
		{`null`, "naïve"},
		{`{"to":"` + to + `","amount":1}`, strings.Repeat("k", 256)},
	} {
		f.Add(s.body, s.key)
	}
	e := newEnv(f)
	e.startWorker()
	id, _ := e.agent(nil, 1_000_000_000)
	f.Fuzz(func(t *testing.T, body, key string) {
		e := e.with(t)
		if strings.ContainsFunc(key, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			t.Skip("no HTTP client sends control characters in a header")
		}
		var hdr http.Header
		if key != "" {
			hdr = http.Header{"Idempotency-Key": {key}}
		}
		pstatus, praw, _ := e.request("POST", fmt.Sprintf(sendPath, id)+"/preview", e.key, body, nil)
		status, raw, _ := e.request("POST", fmt.Sprintf(sendPath, id), e.key, body, hdr)
		for _, a := range []struct {
			status int
			raw    []byte
		}{{pstatus, praw}, {status, raw}} {
			if a.status >= 500 || a.status >= 400 && !strings.Contains(string(a.raw), `"error"`) {
				t.Fatalf("body %q key %q → %d %s", body, key, a.status, a.raw)
			}
		}
		if (pstatus == 400 || pstatus == 422) && status != pstatus {
			t.Fatalf("body %q: preview %d %s, send %d %s", body, pstatus, praw, status, raw)
		}
	})
}

// A memo whose bytes would push the transaction past Solana's 1232 bytes
// is refused (422) before anything is recorded or reserved, send and
// preview alike; the longest memo that fits still sends and lands.
func TestOversizedMemoIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	id, _ := e.agent(nil, 10_000_000)
	to := newAddress()
	emoji := strings.Repeat("😀", 200) // 800 bytes
	for _, path := range []string{fmt.Sprintf(sendPath, id), fmt.Sprintf(sendPath, id) + "/preview"} {
		status, body := e.do("POST", path, e.key, map[string]any{"to": to, "amount": 1, "memo": emoji})
		wantError(t, status, body, http.StatusUnprocessableEntity, "memo too long: the transaction would be 1307 bytes, Solana allows 1232")
	}
	if n, m := e.countRows("transactions"), e.countRows("send_requests"); n != 0 || m != 0 || e.reservedToday(id) != 0 {
		t.Fatalf("%d transactions, %d send requests after refusals", n, m)
	}
	// The most emoji that fit.
	k := 200
	for solana.CheckTransferSize(solana.Devnet, strings.Repeat("😀", k)) != nil {
		k--
	}
	memo := strings.Repeat("😀", k)
	status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1, "memo": memo})
	if status != 200 || body["status"] != "sent" {
		t.Fatalf("a %d-byte memo: %d %v", len(memo), status, body)
	}
	var raw []byte
	if err := e.db.NewSelect().Table("transactions").Column("signed_tx").Scan(t.Context(), &raw); err != nil || len(raw) > solana.MaxTransactionSize || len(raw) < solana.MaxTransactionSize-4 {
		t.Fatalf("signed %d bytes (%v)", len(raw), err)
	}
	e.settle(eng, body["signature"].(string), payment.TxConfirmed)
	if got := e.chainUSDC(to); got != 1_000_000 {
		t.Fatalf("recipient holds %d", got)
	}
}

// A payment that fails after "sent" is never silent: tx.failed reaches a
// subscribed endpoint (with approval_id when an approval made it), the
// replay of its Idempotency-Key answers transaction_status failed and asks
// for a new key, the approval shows its transaction failed, and the day's
// reservation is held until the blockhash has expired.
func TestFailureAfterSentIsReported(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	e.engine = func(eng *payment.Engine) { eng.MaxAttempts = 1 } // signed once (re-signing: TestResign_*)
	eng, _ := e.startWorker()
	hook := newReceiver(t, nil)
	e.createEndpoint(hook.URL, "tx.failed")
	hook.next(t, "webhook.test")
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 5}, 10_000_000)
	to := newAddress()
	ln.SetFaults(t, localnettest.Faults{DropRate: 1})

	body := map[string]any{"to": to, "amount": 2, "memo": "m"}
	status, raw, _ := e.sendOnce(id, "pay-2", body)
	var sent map[string]any
	json.Unmarshal(raw, &sent)
	if status != 200 || sent["status"] != "sent" {
		t.Fatalf("send: %d %s", status, raw)
	}
	sig := sent["signature"].(string)
	apID := e.park(id, to, 6)
	_, approver := e.adminKey()
	status, a := e.approve(apID, approver, nil)
	if status != 200 || a["status"] != "sent" {
		t.Fatalf("approve: %d %v", status, a)
	}
	apSig := a["signature"].(string)

	status, raw, _ = e.sendOnce(id, "pay-2", body)
	var replay map[string]any
	json.Unmarshal(raw, &replay)
	if status != 200 || replay["transaction_status"] != "pending" || replay["signature"] != sig {
		t.Fatalf("replay while pending: %d %s", status, raw)
	}
	if r := e.reservedToday(id); r != 8_000_000 {
		t.Fatalf("reserved %d while pending", r)
	}
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})
	e.settle(eng, sig, payment.TxFailed)
	e.settle(eng, apSig, payment.TxFailed)
	if r := e.reservedToday(id); r != 0 {
		t.Fatalf("reserved %d after both failed", r)
	}
	got := map[string]map[string]any{}
	for range 2 {
		var ev struct{ Data map[string]any }
		json.Unmarshal(hook.next(t, "tx.failed").Body, &ev)
		got[ev.Data["signature"].(string)] = ev.Data
	}
	if d := got[sig]; d == nil || d["wallet_id"] != id || d["amount"] != 2.0 || d["to"] != to || d["memo"] != "m" ||
		!strings.Contains(d["reason"].(string), "expired") || d["approval_id"] != nil {
		t.Fatalf("tx.failed of the send: %v", d)
	}
	if d := got[apSig]; d == nil || d["approval_id"] != apID || d["amount"] != 6.0 {
		t.Fatalf("tx.failed of the approval: %v", d)
	}
	status, raw, hdr := e.sendOnce(id, "pay-2", body)
	json.Unmarshal(raw, &replay)
	if status != 200 || hdr.Get("Idempotent-Replayed") != "true" || replay["transaction_status"] != "failed" ||
		!strings.Contains(replay["message"].(string), "new Idempotency-Key") {
		t.Fatalf("replay after failure: %d %s", status, raw)
	}
	if status, a := e.do("GET", approvalsPath+"/"+apID, e.key, nil); status != 200 || a["status"] != "sent" || a["transaction_status"] != "failed" {
		t.Fatalf("approval after failure: %d %v", status, a)
	}
	if e.chainUSDC(to) != 0 {
		t.Fatal("the recipient was paid")
	}
}

// Slow confirmation sweeps cannot starve decisions: with 200 pending
// transactions, 1.5 s of RPC latency, two workers and a sweep queued every
// half second, every send is decided (200 or 403, never 503) and no two
// sweeps ever run at once.
func TestSlowSweepsDoNotStarveSends(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	e := newEnv(t, envOpts{ln: ln})
	e.sweeps = &payment.SweepGauge{}
	e.startWorker()
	e.startWorker() // a second worker process
	id, pub := e.agent(map[string]any{"max_tx_usdc": 5, "approval_threshold_usdc": 100}, 100_000_000)
	ctx := context.Background()
	// 200 transactions the node has never seen, past their first
	// broadcast's grace: every sweep checks and re-broadcasts them.
	stale := make([]payment.Transaction, 200)
	for i := range stale {
		stale[i] = payment.Transaction{ID: uuid.New(), AccountID: e.account.ID, WalletID: uuid.MustParse(id), Network: solana.Devnet,
			Signature: sol.Signature(sol.NewWallet().PrivateKey[:64]).String(), Kind: "usdc", Direction: "send", Amount: 1,
			Counterparty: pub, Status: payment.TxPending, SignedTx: []byte{0}, LastValidBlockHeight: 1 << 40,
			CreatedAt: time.Now(), UpdatedAt: time.Now()}
	}
	if _, err := e.db.NewInsert().Model(&stale).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ExecContext(ctx, "UPDATE transactions SET signed_at = now() - interval '1 minute'"); err != nil {
		t.Fatal(err)
	}
	ln.SetFaults(t, localnettest.Faults{LatencyMs: 1500})
	t.Cleanup(func() { ln.SetFaults(t, localnettest.Faults{}) }) // before the workers stop

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		client := asynq.NewClientFromRedisClient(e.rdb)
		for {
			if _, err := client.Enqueue(tasks.NewConfirmSweepTask(), asynq.Unique(time.Second)); err != nil && !tasks.IsDuplicate(err) {
				t.Error(err)
			}
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	})
	time.Sleep(2 * time.Second) // sweeps under way
	statuses := make([]int, 12)
	var sends sync.WaitGroup
	for i := range statuses {
		amount := 1
		if i%3 == 0 {
			amount = 6 // over max_tx: blocked
		}
		sends.Go(func() {
			statuses[i], _ = e.with(t).do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": newAddress(), "amount": amount})
		})
		time.Sleep(300 * time.Millisecond)
	}
	sends.Wait()
	close(stop)
	wg.Wait()
	for i, s := range statuses {
		want := http.StatusOK
		if i%3 == 0 {
			want = http.StatusForbidden
		}
		if s != want {
			t.Errorf("send %d answered %d, want %d (all %v)", i, s, want, statuses)
		}
	}
	if p := e.sweeps.Peak(); p != 1 {
		t.Fatalf("%d sweeps ran at once at the peak", p)
	}
}
