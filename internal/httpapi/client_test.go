package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/waitfor"
)

// methodName is the Go client's method for an operationId
// (get-wallet-balance → GetWalletBalance); an initialism is upper case, as
// Go names it (get-mpp-payment → GetMPPPayment).
func methodName(op string) string {
	var b strings.Builder
	for _, part := range strings.Split(op, "-") {
		if part == "mpp" {
			b.WriteString("MPP")
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// Every operation of the OpenAPI document has its method in the Go client.
func TestGoClientCoversEveryOperation(t *testing.T) {
	t.Parallel()
	doc := httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{}).OpenAPI()
	typ := reflect.TypeOf(&client.Client{})
	for _, item := range doc.Paths {
		for _, op := range operations(item) {
			if _, ok := typ.MethodByName(methodName(op.OperationID)); !ok {
				t.Errorf("operation %s has no method %s in package client", op.OperationID, methodName(op.OperationID))
			}
		}
	}
}

// The Go client through the real service: every method once, the three
// send outcomes, typed errors, and a send retried after a 429 under the
// same Idempotency-Key paying once.
func TestGoClientEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	ctx := context.Background()
	admin := client.New(e.url, e.key, client.WithRetries(0))

	limit := client.Amount("5")
	a, err := admin.CreateAgent(ctx, "client", &client.PolicyInput{ApprovalThresholdUSDC: &limit})
	if err != nil || a.Label != "client" || a.Policy.ApprovalThresholdUSDC.String() != "5" {
		t.Fatalf("create: %+v %v", a, err)
	}
	e.ln.SetLamports(t, a.Pubkey, 1_000_000_000)
	e.ln.SetTokenBalance(t, a.Pubkey, "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", 50_000_000)
	if got, err := admin.GetAgent(ctx, a.ID); err != nil || got.Balance == nil || got.Balance.USDC.String() != "50" {
		t.Fatalf("get: %+v %v", got, err)
	}
	if as, err := admin.ListAgents(ctx); err != nil || len(as) != 1 {
		t.Fatalf("list agents: %v %v", as, err)
	}
	if ws, err := admin.ListWallets(ctx); err != nil || len(ws) != 1 || ws[0].Pubkey != a.Pubkey {
		t.Fatalf("list wallets: %v %v", ws, err)
	}
	if b, err := admin.GetWalletBalance(ctx, a.ID); err != nil || b.SOL.String() != "1" {
		t.Fatalf("balance: %+v %v", b, err)
	}
	cap := client.Amount("20")
	if got, err := admin.UpdatePolicy(ctx, a.ID, client.PolicyInput{MaxTxUSDC: &cap}); err != nil || got.Policy.MaxTxUSDC.String() != "20" {
		t.Fatalf("patch: %+v %v", got, err)
	}
	// Labels: set with the allowlist, kept by a patch without them, cleared by an empty map.
	payee := newAddress()
	if got, err := admin.UpdatePolicy(ctx, a.ID, client.PolicyInput{Allowlist: []string{payee}, AllowlistLabels: map[string]string{payee: "payee"}}); err != nil || got.Policy.AllowlistLabels[payee] != "payee" {
		t.Fatalf("labels: %+v %v", got, err)
	}
	if got, err := admin.UpdatePolicy(ctx, a.ID, client.PolicyInput{MaxTxUSDC: &cap}); err != nil || got.Policy.AllowlistLabels[payee] != "payee" {
		t.Fatalf("labels kept: %+v %v", got, err)
	}
	if got, err := admin.UpdatePolicy(ctx, a.ID, client.PolicyInput{AllowlistLabels: map[string]string{}}); err != nil || len(got.Policy.AllowlistLabels) != 0 || len(got.Policy.Allowlist) != 1 {
		t.Fatalf("labels cleared: %+v %v", got, err)
	}
	if got, err := admin.UpdatePolicy(ctx, a.ID, client.PolicyInput{Allowlist: []string{}}); err != nil || len(got.Policy.Allowlist) != 0 {
		t.Fatalf("allowlist cleared: %+v %v", got, err)
	}

	// An agent key, scoped to the wallet, as an agent would hold it.
	k, err := admin.CreateKey(ctx, client.KeyRequest{WalletIDs: []string{a.ID}})
	if err != nil || k.Role != "agent" {
		t.Fatalf("create key: %+v %v", k, err)
	}
	agent := client.New(e.url, k.Key)
	to := newAddress()
	if p, err := agent.PreviewSend(ctx, a.ID, client.SendRequest{To: to, Amount: "1.5"}); err != nil || p.Outcome != "sent" {
		t.Fatalf("preview: %+v %v", p, err)
	}
	sent, err := agent.Send(ctx, a.ID, client.SendRequest{To: to, Amount: "1.5"})
	if err != nil || sent.Status != client.StatusSent || sent.Signature == "" || sent.IdempotencyKey == "" {
		t.Fatalf("send: %+v %v", sent, err)
	}
	parked, err := agent.Send(ctx, a.ID, client.SendRequest{To: newAddress(), Amount: "6"})
	if err != nil || parked.Status != client.StatusPendingApproval || parked.ApprovalID == "" {
		t.Fatalf("park: %+v %v", parked, err)
	}
	_, err = agent.Send(ctx, a.ID, client.SendRequest{To: to, Amount: "25"})
	var blocked *client.BlockedError
	if !errors.As(err, &blocked) || blocked.Reason != "exceeds_max_tx" || blocked.RemainingTodayUSDC.String() == "" {
		t.Fatalf("over max_tx: %v", err)
	}
	// The answer to a send is lost after the service paid (a 503 from a
	// proxy): the retry under the same Idempotency-Key gets the payment's
	// answer, and the chain shows one transfer.
	lossy := &loseFirstAnswer{next: http.DefaultTransport}
	retrying := client.New(e.url, k.Key, client.WithHTTPClient(&http.Client{Transport: lossy}))
	once := newAddress()
	paid, err := retrying.Send(ctx, a.ID, client.SendRequest{To: once, Amount: "2"})
	if err != nil || paid.Status != client.StatusSent || !paid.Replayed || lossy.lost != 1 {
		t.Fatalf("send after a lost answer: %+v %v (lost %d)", paid, err, lossy.lost)
	}
	e.settle(eng, paid.Signature, "confirmed")
	if got := e.chainUSDC(once); got != 2_000_000 {
		t.Fatalf("the recipient holds %d", got)
	}
	if _, err := agent.UnfreezeAgent(ctx, a.ID); err == nil || !strings.Contains(err.Error(), "cannot unfreeze") {
		t.Fatalf("agent unfreeze: %v", err)
	}

	// Approvals.
	if as, _, err := admin.ListApprovals(ctx, "pending", client.Page{}); err != nil || len(as) != 1 || as[0].ID != parked.ApprovalID {
		t.Fatalf("list approvals: %v %v", as, err)
	}
	if c, err := admin.GetApprovalContext(ctx, parked.ApprovalID); err != nil || c.IfApprovedNow.Outcome != "sent" {
		t.Fatalf("context: %+v %v", c, err)
	}
	ap, err := admin.Approve(ctx, parked.ApprovalID, "ok")
	if err != nil || ap.Status != "sent" {
		t.Fatalf("approve: %+v %v", ap, err)
	}
	e.settle(eng, *ap.Signature, "confirmed")
	if got, err := admin.GetApproval(ctx, parked.ApprovalID); err != nil || got.TransactionStatus == nil || *got.TransactionStatus != "confirmed" {
		t.Fatalf("get approval: %+v %v", got, err)
	}
	park2, err := admin.Send(ctx, a.ID, client.SendRequest{To: newAddress(), Amount: "7"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := agent.Reject(ctx, park2.ApprovalID, ""); err != nil || r.Status != "rejected" {
		t.Fatalf("reject: %+v %v", r, err)
	}
	if ts, _, err := admin.ListTransactions(ctx, client.TransactionFilter{WalletID: a.ID, Page: client.Page{Limit: 10}}); err != nil || len(ts) != 3 {
		t.Fatalf("transactions: %v %v", ts, err)
	}
	if es, _, err := admin.ListAuditLog(ctx, "send.sent", "", client.Page{}); err != nil || len(es) == 0 {
		t.Fatalf("audit: %v %v", es, err)
	}
	if f, err := admin.FreezeAgent(ctx, a.ID); err != nil || f.State != "frozen" {
		t.Fatalf("freeze: %+v %v", f, err)
	}
	if f, err := admin.UnfreezeAgent(ctx, a.ID); err != nil || f.State != "active" {
		t.Fatalf("unfreeze: %+v %v", f, err)
	}

	// Keys.
	if ks, _, err := admin.ListKeys(ctx, client.Page{}); err != nil || len(ks) < 2 {
		t.Fatalf("keys: %v %v", ks, err)
	}
	rotated, err := admin.RotateKey(ctx, k.ID)
	if err != nil || rotated.Replaces == nil || *rotated.Replaces != k.ID {
		t.Fatalf("rotate: %+v %v", rotated, err)
	}
	if rk, err := admin.RevokeKey(ctx, rotated.ID); err != nil || rk.RevokedAt == nil {
		t.Fatalf("revoke: %+v %v", rk, err)
	}

	// Webhooks.
	rc := newReceiver(t, nil)
	url, format := rc.URL, "json"
	ep, err := admin.CreateWebhookEndpoint(ctx, client.EndpointSettings{URL: &url, Format: &format, Events: []string{"tx.sent"}})
	if err != nil || ep.Secret == "" {
		t.Fatalf("endpoint: %+v %v", ep, err)
	}
	rc.next(t, "webhook.test")
	if eps, err := admin.ListWebhookEndpoints(ctx); err != nil || len(eps) != 1 {
		t.Fatalf("endpoints: %v %v", eps, err)
	}
	desc := "d"
	if got, err := admin.UpdateWebhookEndpoint(ctx, ep.ID, client.EndpointSettings{Description: &desc}); err != nil || *got.Description != "d" {
		t.Fatalf("update endpoint: %+v %v", got, err)
	}
	if got, err := admin.GetWebhookEndpoint(ctx, ep.ID); err != nil || got.URL != url {
		t.Fatalf("get endpoint: %+v %v", got, err)
	}
	if got, err := admin.RotateWebhookSecret(ctx, ep.ID); err != nil || got.Secret == "" || got.Secret == ep.Secret {
		t.Fatalf("rotate secret: %+v %v", got, err)
	}
	var ds []client.Delivery
	waitfor.True(t, "deliveries", func() bool {
		ds, _, err = admin.ListDeliveries(ctx, ep.ID, "succeeded", client.Page{})
		return err == nil && len(ds) >= 1
	})
	if d, err := admin.GetDelivery(ctx, ds[0].ID); err != nil || len(d.AttemptLog) == 0 {
		t.Fatalf("delivery: %+v %v", d, err)
	}
	if d, err := admin.ReplayDelivery(ctx, ds[0].ID); err != nil || d.ReplayOf == nil {
		t.Fatalf("replay: %+v %v", d, err)
	}
	if err := admin.DeleteWebhookEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}

	// Users: an admin key manages approvers and viewers, never owners.
	addr := newAddress()
	if u, err := admin.CreateUser(ctx, addr, "approver"); err != nil || u.Role != "approver" {
		t.Fatalf("create user: %+v %v", u, err)
	}
	if us, err := admin.ListUsers(ctx); err != nil || len(us) != 1 {
		t.Fatalf("users: %v %v", us, err)
	}
	if u, err := admin.UpdateUser(ctx, addr, "viewer"); err != nil || u.Role != "viewer" {
		t.Fatalf("make a viewer: %+v %v", u, err)
	}
	var refused *client.APIError
	if _, err := admin.CreateUser(ctx, newAddress(), "owner"); !errors.As(err, &refused) || refused.Status != http.StatusForbidden {
		t.Fatalf("an owner added by a key: %v", err)
	}
	// Exports are owners' business: an admin key reads none.
	if _, _, err := admin.ListWalletExports(ctx, "", "pending", client.Page{}); !errors.As(err, &refused) || refused.Status != http.StatusForbidden {
		t.Fatalf("exports listed by a key: %v", err)
	}

	// Account settings.
	half := client.Amount("0.5")
	if s, err := admin.UpdateAccountSettings(ctx, client.AccountSettingsInput{DepositMinUSDC: &half}); err != nil || s.DepositMinUSDC != "0.5" || s.DepositMinSOL != "0.001" {
		t.Fatalf("settings: %+v %v", s, err)
	}
	if s, err := admin.GetAccountSettings(ctx); err != nil || s.DepositMinUSDC != "0.5" {
		t.Fatalf("settings read: %+v %v", s, err)
	}
	if err := admin.DeleteUser(ctx, newAddress()); !client.IsNotFound(err) {
		t.Fatalf("delete an unknown user: %v", err)
	}
	if _, err := admin.GetAgent(ctx, "00000000-0000-4000-8000-000000000000"); !client.IsNotFound(err) {
		t.Fatalf("unknown agent: %v", err)
	}
}

// The Go client in other assets: a policy with assets and EUR limits, a
// USDT send that lands in USDT and is listed under its asset, a EURC send
// parked with its asset and the EUR day in its context, and blocks that
// name the EUR day's remainder or the asset the policy does not list.
func TestGoClientSendsOtherAssets(t *testing.T) {
	t.Parallel()
	e := currencyEnv(t)
	eng, _ := e.startWorker()
	ctx := context.Background()
	admin := client.New(e.url, e.key, client.WithRetries(0))

	usd, eurDay, eurTx, eurThreshold := client.Amount("100"), client.Amount("20"), client.Amount("5"), client.Amount("4")
	a, err := admin.CreateAgent(ctx, "assets", &client.PolicyInput{
		ApprovalThresholdUSDC: &usd, Assets: []string{"USDC", "USDT", "EURC"},
		DailyLimitEUR: &eurDay, MaxTxEUR: &eurTx, ApprovalThresholdEUR: &eurThreshold,
	})
	if err != nil || !reflect.DeepEqual(a.Policy.Assets, []string{"USDC", "USDT", "EURC"}) ||
		a.Policy.DailyLimitEUR == nil || a.Policy.DailyLimitEUR.String() != "20" || a.Policy.WeeklyLimitEUR != nil {
		t.Fatalf("create: %+v %v", a, err)
	}
	e.ln.SetLamports(t, a.Pubkey, 1_000_000_000)
	e.fundAsset(a.Pubkey, "USDT", 10_000_000)
	e.fundAsset(a.Pubkey, "EURC", 10_000_000)

	to := newAddress()
	p, err := admin.PreviewSend(ctx, a.ID, client.SendRequest{To: to, Amount: "1", Asset: "eurc"})
	if err != nil || p.Outcome != "sent" || p.Asset != "EURC" || p.Currency != "EUR" || p.DailyLimitEUR == nil ||
		p.DailyLimitEUR.String() != "20" || p.RemainingTodayEUR.String() != "20" {
		t.Fatalf("preview EURC: %+v %v", p, err)
	}
	sent, err := admin.Send(ctx, a.ID, client.SendRequest{To: to, Amount: "1.5", Asset: "USDT"})
	if err != nil || sent.Status != client.StatusSent {
		t.Fatalf("send USDT: %+v %v", sent, err)
	}
	e.settle(eng, sent.Signature, "confirmed")
	if _, units := e.assetAccount(to, "USDT"); units != 1_500_000 {
		t.Fatalf("the recipient holds %d USDT micro-units", units)
	}
	ts, _, err := admin.ListTransactions(ctx, client.TransactionFilter{WalletID: a.ID, Asset: "usdt"})
	if err != nil || len(ts) != 1 || ts[0].Asset != "USDT" || ts[0].Kind != "usdt" || ts[0].Amount.String() != "1.5" {
		t.Fatalf("USDT transactions: %+v %v", ts, err)
	}
	if ts, _, err := admin.ListTransactions(ctx, client.TransactionFilter{WalletID: a.ID, Asset: "EURC"}); err != nil || len(ts) != 0 {
		t.Fatalf("EURC transactions before any: %+v %v", ts, err)
	}
	b, err := admin.GetWalletBalance(ctx, a.ID)
	if err != nil || len(b.Assets) < 2 || b.Assets[0].Symbol != "USDC" {
		t.Fatalf("balance: %+v %v", b, err)
	}
	if i := slices.IndexFunc(b.Assets, func(h client.AssetBalance) bool { return h.Symbol == "EURC" }); i < 0 || b.Assets[i].Amount.String() != "10" {
		t.Fatalf("balance without 10 EURC: %+v", b.Assets)
	}

	parked, err := admin.Send(ctx, a.ID, client.SendRequest{To: to, Amount: "4.5", Asset: "EURC"})
	if err != nil || parked.Status != client.StatusPendingApproval {
		t.Fatalf("4.5 EURC over a 4 EUR threshold: %+v %v", parked, err)
	}
	ap, err := admin.GetApproval(ctx, parked.ApprovalID)
	if err != nil || ap.Asset != "EURC" || ap.Amount.String() != "4.5" {
		t.Fatalf("approval: %+v %v", ap, err)
	}
	c, err := admin.GetApprovalContext(ctx, parked.ApprovalID)
	if err != nil || c.IfApprovedNow.RemainingTodayEUR == nil || c.IfApprovedNow.RemainingTodayAfterEUR == nil ||
		c.IfApprovedNow.RemainingTodayEUR.String() != "20" || c.IfApprovedNow.RemainingTodayAfterEUR.String() != "15.5" {
		t.Fatalf("context: %+v %v", c.IfApprovedNow, err)
	}

	_, err = admin.Send(ctx, a.ID, client.SendRequest{To: to, Amount: "6", Asset: "EURC"})
	var blocked *client.BlockedError
	if !errors.As(err, &blocked) || blocked.Reason != client.ReasonExceedsMaxTx || blocked.RemainingTodayEUR.String() != "20" ||
		blocked.RemainingTodayUSDC != "" || !strings.Contains(err.Error(), "20 EUR left today") {
		t.Fatalf("6 EURC over a 5 EUR max: %v", err)
	}
	_, err = admin.Send(ctx, a.ID, client.SendRequest{To: to, Amount: "1", Asset: "PYUSD"})
	if !errors.As(err, &blocked) || blocked.Reason != client.ReasonAssetNotAllowed {
		t.Fatalf("PYUSD not in assets: %v", err)
	}

	got, err := admin.UpdatePolicy(ctx, a.ID, client.PolicyInput{Assets: []string{"USDC", "EURC"}, Remove: []string{
		"daily_limit_eur", "max_tx_eur", "approval_threshold_eur",
	}})
	if err != nil || !reflect.DeepEqual(got.Policy.Assets, []string{"USDC", "EURC"}) || got.Policy.DailyLimitEUR != nil || got.Policy.MaxTxEUR != nil {
		t.Fatalf("remove USDT and the EUR limits: %+v %v", got.Policy, err)
	}
}

// deposited makes an agent wallet (1 SOL from the localnet's faucet, which
// its ledger does not see) and pays it 2.5 USDC and 0.25 SOL from outside,
// watching for deposits (e.watchDeposits: once per env); it returns once
// both are listed, with the sender's address.
func (e *env) deposited() (walletID, sender string) {
	e.t.Helper()
	e.watchDeposits()
	walletID, pubkey := e.agent(nil, 0)
	from := chaintest.NewPayer(e.t, e.ln, 100_000_000, 2*solana.LamportsPerSOL)
	to := sol.MustPublicKeyFromBase58(pubkey)
	from.TransferUSDC(e.t, to, 2_500_000)
	from.TransferSOL(e.t, to, 250_000_000)
	waitfor.True(e.t, "both deposits listed", func() bool {
		status, got := e.do("GET", "/api/public/v1/transactions?direction=receive&wallet_id="+walletID, e.key, nil)
		txs, _ := got["transactions"].([]any)
		return status == http.StatusOK && len(txs) == 2
	})
	return walletID, from.PublicKey().String()
}

// unexplained makes an agent wallet holding 3 USDC and 1 SOL from the
// localnet's faucet (no transaction, so its ledger holds none of it) and
// runs the daily snapshot over the env's wallets: it finds the wallet's
// two differences (USDC and SOL), kind snapshot.
func (e *env) unexplained() string {
	e.t.Helper()
	id, _ := e.agent(nil, 3_000_000)
	w := &deposit.Watcher{DB: e.db, Nodes: map[solana.Network]*solana.Client{solana.Devnet: solana.NewClient(e.ln.URL, solana.Devnet, 5*time.Second)}}
	if st, err := w.Snapshot(context.Background()); err != nil || st.Differences < 2 {
		e.t.Fatalf("snapshot %+v %v", st, err)
	}
	return id
}

// The Go client reads money coming in: deposits with direction receive
// (and none with send), the balance history from the ledger at an instant
// and over a range, the day's received in the analytics, and a wallet's
// balance differences page by page (none for the wallet paid only by
// transactions).
func TestGoClientDeposits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, sender := e.deposited()
	faucet := e.unexplained()
	ctx := context.Background()
	c := client.New(e.url, e.key, client.WithRetries(0))

	in, _, err := c.ListTransactions(ctx, client.TransactionFilter{WalletID: id, Direction: client.DirectionReceive})
	if err != nil || len(in) != 2 {
		t.Fatalf("receives: %v %v", in, err)
	}
	amounts := map[string]string{}
	for _, tx := range in {
		if tx.Direction != client.DirectionReceive || tx.Counterparty != sender || tx.Status != "confirmed" || tx.WalletID != id {
			t.Fatalf("a deposit: %+v", tx)
		}
		amounts[tx.Kind] = tx.Amount.String()
	}
	if amounts["usdc"] != "2.5" || amounts["sol"] != "0.25" {
		t.Fatalf("deposited %v, want 2.5 USDC and 0.25 SOL", amounts)
	}
	if out, _, err := c.ListTransactions(ctx, client.TransactionFilter{WalletID: id, Direction: client.DirectionSend}); err != nil || len(out) != 0 {
		t.Fatalf("sends: %v %v", out, err)
	}
	if both, _, err := c.ListTransactions(ctx, client.TransactionFilter{WalletID: id}); err != nil || len(both) != 2 {
		t.Fatalf("both directions: %v %v", both, err)
	}
	if _, _, err := c.ListTransactions(ctx, client.TransactionFilter{Direction: "in"}); !isStatus(err, http.StatusUnprocessableEntity) {
		t.Fatalf("direction in: %v", err)
	}

	at := time.Now().UTC().Add(time.Second).Truncate(time.Millisecond)
	h, err := c.GetWalletBalanceHistory(ctx, id, client.HistoryQuery{At: at})
	if err != nil || h.WalletID != id || len(h.Series) != 1 || h.Series[0].Asset != "USDC" || len(h.Series[0].Points) != 1 {
		t.Fatalf("history at: %+v %v", h, err)
	}
	if p := h.Series[0].Points[0]; p.Asset != "USDC" || p.Amount.String() != "2.5" || !p.At.Equal(at) {
		t.Fatalf("the USDC at %s: %+v, want 2.5", at, p)
	}
	if h, err = c.GetWalletBalanceHistory(ctx, id, client.HistoryQuery{Asset: "sol", At: at}); err != nil || len(h.Series) != 1 ||
		h.Series[0].Asset != "SOL" || h.Series[0].Decimals != 9 || h.Series[0].Points[0].Amount.String() != "1.25" {
		t.Fatalf("the SOL at %s: %+v %v, want 1.25", at, h, err)
	}
	h, err = c.GetWalletBalanceHistory(ctx, id, client.HistoryQuery{Interval: "hour", To: at})
	if err != nil || len(h.Series) != 1 || len(h.Series[0].Points) != 31 || h.Series[0].Points[30].Amount.String() != "2.5" || h.Series[0].Points[0].Amount.String() != "0" {
		t.Fatalf("30 hours: %+v %v", h, err)
	}
	if _, err := c.GetWalletBalanceHistory(ctx, id, client.HistoryQuery{Asset: "DOGE"}); !isStatus(err, http.StatusUnprocessableEntity) {
		t.Fatalf("an unknown asset: %v", err)
	}
	if _, err := c.GetWalletBalanceHistory(ctx, "00000000-0000-4000-8000-000000000000", client.HistoryQuery{}); !client.IsNotFound(err) {
		t.Fatalf("an unknown wallet: %v", err)
	}

	a, err := c.GetAnalytics(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range a.Received {
		if r.WalletID == id {
			got[r.Asset] = fmt.Sprintf("%s/%d", r.Amount, r.Deposits)
		}
	}
	if got["USDC"] != "2.5/1" || got["SOL"] != "0.25/1" {
		t.Fatalf("received %v", a.Received)
	}

	if d, err := c.ListWalletBalanceDifferences(ctx, id, client.DifferenceFilter{}); err != nil || d.WalletID != id || len(d.Items) != 0 || d.NextCursor != nil {
		t.Fatalf("differences of the paid wallet: %+v %v", d, err)
	}
	var diffs []client.BalanceDifference
	f := client.DifferenceFilter{Page: client.Page{Limit: 1}}
	for page := 0; ; page++ {
		d, err := c.ListWalletBalanceDifferences(ctx, faucet, f)
		if err != nil || d.WalletID != faucet || len(d.Items) != 1 || page > 2 {
			t.Fatalf("page %d: %+v %v", page, d, err)
		}
		diffs = append(diffs, d.Items...)
		if d.NextCursor == nil {
			break
		}
		f.Cursor = *d.NextCursor
	}
	amounts = map[string]string{}
	for _, d := range diffs {
		if d.Kind != "snapshot" || d.Signature != nil || d.To != nil || d.Chain == nil || d.Ledger == nil || d.Slot == 0 || d.At.IsZero() ||
			d.Chain.String() != d.Amount.String() || d.Ledger.String() != "0" {
			t.Fatalf("a difference: %+v", d)
		}
		amounts[d.Asset] = d.Amount.String()
	}
	if len(diffs) != 2 || amounts["USDC"] != "3" || amounts["SOL"] != "1" || diffs[0].At.Before(diffs[1].At) {
		t.Fatalf("differences %+v", diffs)
	}
	if d, err := c.ListWalletBalanceDifferences(ctx, faucet, client.DifferenceFilter{Asset: "sol"}); err != nil || len(d.Items) != 1 || d.Items[0].Asset != "SOL" {
		t.Fatalf("the SOL differences: %+v %v", d, err)
	}
	if _, err := c.ListWalletBalanceDifferences(ctx, faucet, client.DifferenceFilter{Page: client.Page{Limit: 101}}); !isStatus(err, http.StatusUnprocessableEntity) {
		t.Fatalf("limit 101: %v", err)
	}
}

// isStatus reports whether err is an API error of that status.
func isStatus(err error, status int) bool {
	var e *client.APIError
	return errors.As(err, &e) && e.Status == status
}

// loseFirstAnswer delivers the first request to the service and loses its
// answer (a 503, as from a proxy that timed out): the service did act.
type loseFirstAnswer struct {
	next http.RoundTripper
	mu   sync.Mutex
	lost int
}

func (l *loseFirstAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || l.lost > 0 {
		return resp, err
	}
	resp.Body.Close()
	l.lost++
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"1"}},
		Body: io.NopCloser(strings.NewReader(`{"error":"upstream timed out"}`)), Request: r}, nil
}
