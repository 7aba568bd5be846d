package payment_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// reviewProxy forwards JSON-RPC to the localnet. before, when set, runs
// before a request of that method is forwarded; statusCacheSlots > 0 makes
// it answer getSignatureStatuses like an agave node started without
// --enable-rpc-transaction-history (the default): searchTransactionHistory
// has nothing to search, and only the status cache (~300 slots) answers,
// so an older landed signature is null.
type reviewProxy struct {
	target           string
	statusCacheSlots uint64
	before           atomic.Pointer[func(method string)]
}

func (p *reviewProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &req)
	if f := p.before.Load(); f != nil {
		(*f)(req.Method)
	}
	if req.Method == "getTransaction" && p.statusCacheSlots > 0 {
		// What agave answers without --enable-rpc-transaction-history.
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32011,"message":"Transaction history is not available from this node"}}`))
		return
	}
	resp, err := http.Post(p.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if req.Method == "getSignatureStatuses" && p.statusCacheSlots > 0 {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if dec.Decode(&m) == nil {
			if res, ok := m["result"].(map[string]any); ok {
				ctxSlot, _ := res["context"].(map[string]any)["slot"].(json.Number).Int64()
				if vals, ok := res["value"].([]any); ok {
					for i, v := range vals {
						if st, ok := v.(map[string]any); ok {
							if s, err := st["slot"].(json.Number).Int64(); err == nil && uint64(ctxSlot-s) > p.statusCacheSlots {
								vals[i] = nil
							}
						}
					}
				}
			}
			out, _ = json.Marshal(m)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
}

func startReviewProxy(t *testing.T, target string) (*reviewProxy, string) {
	t.Helper()
	p := &reviewProxy{target: target}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// A payment whose first transaction landed, but whose sweeps did not see
// it before the chain moved on (sweeps stalled ~2 min: a scheduler or RPC
// outage, or more than MaxSweepChecks older pending rows), is unknown to a
// node without transaction history (only its ~300-slot status cache
// answers). That proves nothing: the sweep must not sign it again, or the
// recipient is paid twice. (The node says it keeps no history when asked
// with getTransaction: -32011.)
func TestIssue22ResignNeverOnANodeWithoutHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ln := localnettest.Start(t)
	f := newResignFixture(t, ln)
	proxy, url := startReviewProxy(t, ln.URL)
	proxy.statusCacheSlots = 300
	f.eng.Nodes = map[solana.Network]payment.Node{solana.Devnet: payment.NewNode(url, solana.Devnet, 5*time.Second)}

	r := payment.Request{ID: uuid.New(), AccountID: f.acc.ID, WalletID: f.w.ID, Network: solana.Devnet, To: f.to, Amount: f.amount}
	if err := payment.Submit(ctx, f.eng.DB, &r, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := f.eng.Decide(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	f.request = r.ID
	deadline := time.Now().Add(10 * time.Second)
	for f.recipientUSDC(t) != f.amount { // it landed (no sweep has run)
		if time.Now().After(deadline) {
			t.Fatalf("the first transaction did not land: recipient holds %d", f.recipientUSDC(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// No sweep ran for a while: the chain is 400 blocks on.
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 400})

	st, err := f.eng.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // a few slots: anything sent confirms
	got := f.recipientUSDC(t)
	txn := f.row(t)
	if st.Resigned != 0 || txn.Attempts != 1 || got != f.amount {
		t.Fatalf("a landed payment was signed again (sweep %+v, attempts %d, status %s): recipient holds %d, paid %d",
			st, txn.Attempts, txn.Status, got, f.amount)
	}
}

// Freezing a wallet while the sweep is re-signing one of its payments
// (after the re-sign read the wallet, before it records the new attempt)
// stops the new signature: "freezing stops every new signature of the
// wallet" (decisions.md). The freeze is made while the re-sign's
// getLatestBlockhash is in flight (a slow node).
func TestIssue22ResignStopsAtAFreezeCommittedMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ln := localnettest.Start(t)
	f := newResignFixture(t, ln)
	f.sendUnseen(t)
	proxy, url := startReviewProxy(t, ln.URL)
	f.eng.Nodes = map[solana.Network]payment.Node{solana.Devnet: payment.NewNode(url, solana.Devnet, 5*time.Second)}
	var frozen atomic.Bool
	hook := func(method string) {
		if method == "getLatestBlockhash" && frozen.CompareAndSwap(false, true) {
			if _, changed, err := wallet.SetState(ctx, f.eng.DB, f.acc.ID, f.w.ID, "key_admin", wallet.Frozen); err != nil || !changed {
				t.Errorf("freeze: changed %v, %v", changed, err)
			}
		}
	}
	proxy.before.Store(&hook)

	st, err := f.eng.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !frozen.Load() {
		t.Fatalf("the sweep did not ask for a blockhash (sweep %+v)", st)
	}
	time.Sleep(500 * time.Millisecond)
	txn := f.row(t)
	if txn.Attempts != 1 || st.Resigned != 0 {
		t.Fatalf("a new attempt was signed and recorded after the wallet's freeze committed (sweep %+v, attempts %d, status %s, recipient holds %d)",
			st, txn.Attempts, txn.Status, f.recipientUSDC(t))
	}
}
