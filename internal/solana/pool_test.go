package solana_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// proxies puts n fault proxies in front of one localnet.
func proxies(t *testing.T, ln *localnettest.Localnet, n int) ([]*localnettest.FaultProxy, []string) {
	var ps []*localnettest.FaultProxy
	var urls []string
	for range n {
		p := localnettest.NewFaultProxy(t, ln.URL)
		ps = append(ps, p)
		urls = append(urls, p.URL)
	}
	return ps, urls
}

// healthOf is the health the client reports for the node at url.
func healthOf(t *testing.T, c *solana.Client, url string) solana.NodeHealth {
	t.Helper()
	for _, h := range c.Health() {
		if strings.HasPrefix(h.Node, url) {
			return h
		}
	}
	t.Fatalf("no node %s in %+v", url, c.Health())
	return solana.NodeHealth{}
}

// waitUp waits until the node at url is reported up again: within the
// longest backoff and a probe (at most timeout), with a poke's read (at
// most timeout) for each of the candidates' looks that starts a probe.
func waitUp(t *testing.T, c *solana.Client, url string, timeout time.Duration, poke func()) {
	t.Helper()
	deadline := time.Now().Add(solana.BackoffMax + 4*timeout)
	for !healthOf(t, c, url).Up {
		if time.Now().After(deadline) {
			t.Fatalf("node %s never came back: %+v", url, healthOf(t, c, url))
		}
		poke()
		time.Sleep(50 * time.Millisecond)
	}
}

// forever holds a stalled node's answer past any timeout: the proxy lets
// go when the caller hangs up.
const forever = time.Hour

// rpcTimeout is a pool timeout no read of a healthy node through a proxy
// reaches on this machine as it is now: the service's default
// (SOLANA_RPC_TIMEOUT, 5 s), or twenty times the slowest of a few such
// reads, measured here, when the machine is loaded enough (a race build
// on two busy cores) to make that longer. A healthy node that misses it is
// a slow node; a stalled one is held forever, so it misses any.
func rpcTimeout(t *testing.T, ln *localnettest.Localnet) time.Duration {
	t.Helper()
	_, urls := proxies(t, ln, 1)
	c := solana.NewPoolClient(urls, solana.Devnet, forever)
	owner := sol.NewWallet().PublicKey()
	var slowest time.Duration
	for range 5 {
		start := time.Now()
		if _, err := c.Balance(context.Background(), owner); err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(start))
	}
	return max(5*time.Second, 20*slowest)
}

// Reads fail over from a node that refuses connections, stalls past the
// timeout, answers 429 or 5xx: one attempt on it (cut at the pool's
// timeout when it stalls), then the other node answers, in less than five
// timeouts; that node is then skipped (no call reaches it during its
// backoff), and once it heals a probe brings it back, the healthy node
// staying up throughout.
func TestFailover_ReadsSkipAFailingNodeAndProbeItBack(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	owner := sol.NewWallet().PublicKey()
	ln.SetTokenBalance(t, owner.String(), solana.DevnetUSDCMint.String(), 7)
	timeout := rpcTimeout(t, ln)
	t.Logf("pool timeout %s", timeout)
	faults := map[string]localnettest.ProxyFaults{
		"refuse": {Refuse: true},
		"stall":  {Delay: forever},
		"429":    {Status: http.StatusTooManyRequests},
		"500":    {Status: http.StatusInternalServerError},
		"503":    {Status: http.StatusServiceUnavailable},
	}
	for name, f := range faults {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ps, urls := proxies(t, ln, 2)
			c := solana.NewPoolClient(urls, solana.Devnet, timeout)
			ctx := context.Background()
			if b, err := c.Balance(ctx, owner); err != nil || b.Units(solana.Devnet.USDCMint()) != 7 {
				t.Fatalf("healthy: %+v %v", b, err)
			}
			ps[0].Set(t, f)
			first, second := ps[0].Calls("getMultipleAccounts"), ps[1].Calls("getMultipleAccounts")
			start := time.Now()
			if b, err := c.Balance(ctx, owner); err != nil || b.Units(solana.Devnet.USDCMint()) != 7 {
				t.Fatalf("first node %s: %+v %v", name, b, err)
			}
			if d := time.Since(start); d > 5*timeout {
				t.Fatalf("failover took %s, more than five timeouts of %s", d, timeout)
			}
			// One attempt on the failing node (a refused connection
			// never reaches it), then one on the other.
			tried := 1
			if f.Refuse {
				tried = 0
			}
			if a, b := ps[0].Calls("getMultipleAccounts")-first, ps[1].Calls("getMultipleAccounts")-second; a != tried || b != 1 {
				t.Fatalf("the read reached the failing node %d times and the healthy one %d times, want %d and 1", a, b, tried)
			}
			if h := healthOf(t, c, urls[0]); h.Up || h.State != "down" || h.Error == "" {
				t.Fatalf("the failing node is reported %+v", h)
			}
			before := ps[0].Calls("getMultipleAccounts")
			for range 5 {
				if _, err := c.Balance(ctx, owner); err != nil {
					t.Fatal(err)
				}
			}
			if got := ps[0].Calls("getMultipleAccounts"); got != before {
				t.Fatalf("%d reads reached the node in its backoff", got-before)
			}
			ps[0].Set(t, localnettest.ProxyFaults{})
			waitUp(t, c, urls[0], timeout, func() { c.Balance(ctx, owner) })
			if h := healthOf(t, c, urls[1]); !h.Up || h.Latency <= 0 {
				t.Fatalf("the healthy node is reported %+v (timeout %s)", h, timeout)
			}
		})
	}
}

// The caller's own end (its deadline or cancellation) is not the node's
// failure: the node stays up. The pool's own timeout on a stalled node is.
func TestFailover_CallerDeadlineIsNotTheNodesFault(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ps, urls := proxies(t, ln, 2)
	c := solana.NewPoolClient(urls, solana.Devnet, rpcTimeout(t, ln))
	owner := sol.NewWallet().PublicKey()
	if _, err := c.Balance(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	ps[0].Set(t, localnettest.ProxyFaults{Delay: forever, Methods: []string{"getMultipleAccounts"}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Balance(ctx, owner); err == nil {
		t.Fatal("answered after the caller's deadline")
	}
	cctx, ccancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); ccancel() }()
	c.Balance(cctx, owner)
	if h := healthOf(t, c, urls[0]); !h.Up {
		t.Fatalf("the caller's deadline marked the node down: %+v", h)
	}
	// The same stall past the pool's own timeout is the node's.
	if _, err := c.Balance(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	if h := healthOf(t, c, urls[0]); h.Up {
		t.Fatalf("a node stalled past the timeout is still up: %+v", h)
	}
}

// Balance reads answer ErrUnavailable only when no node answers; a bad
// answer from a node that answered is ErrRPC, not ErrUnavailable.
func TestFailover_UnavailableOnlyWhenNoNodeAnswers(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ps, urls := proxies(t, ln, 2)
	c := solana.NewPoolClient(urls, solana.Devnet, rpcTimeout(t, ln))
	owner := sol.NewWallet().PublicKey()
	ctx := context.Background()
	ps[0].Set(t, localnettest.ProxyFaults{Refuse: true})
	ps[1].Set(t, localnettest.ProxyFaults{Status: http.StatusServiceUnavailable})
	_, err := c.Balance(ctx, owner)
	if !errors.Is(err, solana.ErrUnavailable) || !errors.Is(err, solana.ErrRPC) {
		t.Fatalf("every node down: %v", err)
	}
	ps[1].Set(t, localnettest.ProxyFaults{})
	if _, err := c.Balance(ctx, owner); err != nil {
		t.Fatalf("one node up: %v", err)
	}
	ps[1].Set(t, localnettest.ProxyFaults{Rewrite: func(string, json.RawMessage) json.RawMessage {
		return json.RawMessage(`{"context":{"slot":1},"value":[]}`)
	}})
	_, err = c.Balance(ctx, owner)
	if !errors.Is(err, solana.ErrRPC) || errors.Is(err, solana.ErrUnavailable) {
		t.Fatalf("a malformed answer: %v", err)
	}
}

// rpcStub is a node that answers every call with one JSON-RPC error (for
// answers the localnet does not give, such as a real node's "already
// processed").
func rpcStub(t *testing.T, code int, msg string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID any `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": code, "message": msg}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// signed is a signed transfer: payable (the wallet holds what it sends)
// or not (a preflight refusal on any node).
func signed(t *testing.T, ln *localnettest.Localnet, payable bool) ([]byte, sol.Signature) {
	t.Helper()
	var usdcMicros uint64
	if payable {
		usdcMicros = 5_000_000
	}
	raw, sig, _ := signedTransfer(t, ln, usdcMicros, "")
	return raw, sig
}

// A broadcast goes to every healthy node with the same bytes, and their
// answers combine: success (or "already processed") anywhere wins; a
// refusal wins only when no other node may have received the bytes (a
// timeout or a 5xx after forwarding leaves it pending: a non-refusal);
// nothing delivered anywhere is ErrUnavailable.
func TestFailover_BroadcastCombinesAnswers(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	refusal := rpcStub(t, -32002, "Transaction simulation failed: Error processing Instruction 3: custom program error: 0x1")
	processed := rpcStub(t, -32002, "Transaction simulation failed: This transaction has already been processed")

	t.Run("every healthy node gets the bytes", func(t *testing.T) {
		ps, urls := proxies(t, ln, 3)
		c := solana.NewPoolClient(urls, solana.Devnet, time.Second)
		raw, want := signed(t, ln, true)
		got, err := c.Broadcast(ctx, raw)
		if err != nil || got != want {
			t.Fatalf("%v %v", got, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for ps[0].Calls("sendTransaction")+ps[1].Calls("sendTransaction")+ps[2].Calls("sendTransaction") != 3 {
			if time.Now().After(deadline) {
				t.Fatalf("sendTransaction calls %d %d %d, want one each", ps[0].Calls("sendTransaction"), ps[1].Calls("sendTransaction"), ps[2].Calls("sendTransaction"))
			}
			time.Sleep(20 * time.Millisecond)
		}
		waitConfirmed(t, c, want)
	})
	cases := []struct {
		name    string
		nodes   func(t *testing.T) []string
		payable bool
		want    string // ok, refusal, pending, unavailable
	}{
		{"success beats a refusal", func(t *testing.T) []string { return []string{refusal, ln.URL} }, true, "ok"},
		{"already processed is success", func(t *testing.T) []string {
			p := localnettest.NewFaultProxy(t, ln.URL)
			p.Set(t, localnettest.ProxyFaults{Refuse: true})
			return []string{processed, p.URL}
		}, true, "ok"},
		{"a refusal and a timeout stay pending", func(t *testing.T) []string {
			p := localnettest.NewFaultProxy(t, ln.URL)
			p.Set(t, localnettest.ProxyFaults{Delay: 3 * time.Second, Methods: []string{"sendTransaction"}})
			return []string{ln.URL, p.URL}
		}, false, "pending"},
		{"a refusal and a 503 after forwarding stay pending", func(t *testing.T) []string {
			p := localnettest.NewFaultProxy(t, ln.URL)
			p.Set(t, localnettest.ProxyFaults{Status: http.StatusServiceUnavailable, StatusAfterForward: true, Methods: []string{"sendTransaction"}})
			return []string{p.URL, ln.URL}
		}, false, "pending"},
		{"a refusal and a 429 stay pending", func(t *testing.T) []string {
			p := localnettest.NewFaultProxy(t, ln.URL)
			p.Set(t, localnettest.ProxyFaults{Status: http.StatusTooManyRequests, Methods: []string{"sendTransaction"}})
			return []string{ln.URL, p.URL}
		}, false, "pending"},
		{"a refusal and a refused connection is a refusal", func(t *testing.T) []string {
			p := localnettest.NewFaultProxy(t, ln.URL)
			p.Set(t, localnettest.ProxyFaults{Refuse: true})
			return []string{p.URL, ln.URL}
		}, false, "refusal"},
		{"nothing delivered is unavailable", func(t *testing.T) []string {
			a, b := localnettest.NewFaultProxy(t, ln.URL), localnettest.NewFaultProxy(t, ln.URL)
			a.Set(t, localnettest.ProxyFaults{Refuse: true})
			b.Set(t, localnettest.ProxyFaults{Refuse: true})
			return []string{a.URL, b.URL}
		}, true, "unavailable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := solana.NewPoolClient(tc.nodes(t), solana.Devnet, time.Second)
			raw, want := signed(t, ln, tc.payable)
			got, err := c.Broadcast(ctx, raw)
			var pe *solana.PreflightError
			isRefusal := errors.As(err, &pe) && !pe.BlockhashNotFound() && !pe.AlreadyProcessed()
			switch tc.want {
			case "ok":
				if err != nil || got != want {
					t.Fatalf("%v %v, want %v", got, err, want)
				}
			case "refusal":
				if !isRefusal {
					t.Fatalf("%v, want a refusal", err)
				}
			case "pending":
				if err == nil || isRefusal || !errors.Is(err, solana.ErrRPC) {
					t.Fatalf("%v, want a non-refusal ErrRPC", err)
				}
			case "unavailable":
				if !errors.Is(err, solana.ErrUnavailable) {
					t.Fatalf("%v, want ErrUnavailable", err)
				}
			}
		})
	}
}

// Settled reads the height and the statuses from one node. Node A is
// ahead (its height lies 1,000 blocks up) and fails getSignatureStatuses;
// node B lags (knows no signature). Read apart, A's height and B's
// statuses declare a landed transaction lost; Settled never answers that
// mix: it pins A and fails, or answers B's own height with B's statuses.
func TestSettled_ReadsOneNode(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ps, urls := proxies(t, ln, 2)
	ps[0].Set(t, localnettest.ProxyFaults{Status: http.StatusServiceUnavailable, Methods: []string{"getSignatureStatuses"},
		Rewrite: func(method string, r json.RawMessage) json.RawMessage {
			return heightAhead(method, r, 1000)
		}})
	ps[1].Set(t, localnettest.ProxyFaults{Delay: 20 * time.Millisecond, Rewrite: nullStatuses})
	raw, sig := signed(t, ln, true)
	direct := solana.NewClient(ln.URL, solana.Devnet, 0)
	if _, err := direct.Broadcast(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	waitConfirmed(t, direct, sig)
	real, err := direct.BlockHeight(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	// The same calls made apart do mix the two nodes (the test can fail).
	apart := solana.NewPoolClient(urls, solana.Devnet, time.Second)
	h, err := apart.BlockHeight(ctx)
	st, err2 := apart.SignatureStatuses(ctx, true, []sol.Signature{sig})
	if err != nil || err2 != nil || h < real+1000 || st[0].Found {
		t.Fatalf("apart: height %d (real %d), %+v, %v %v: the proxies do not stage the mix", h, real, st, err, err2)
	}

	pinnedFailures := 0
	for range 20 {
		c := solana.NewPoolClient(urls, solana.Devnet, time.Second)
		settled, err := c.Settled(ctx, []sol.Signature{sig}, []uint64{0})
		h, st := settled.Height, settled.Statuses
		switch {
		case err != nil:
			if !errors.Is(err, solana.ErrRPC) {
				t.Fatalf("settled: %v", err)
			}
			pinnedFailures++
		case h >= real+1000:
			t.Fatalf("height %d from the node ahead with statuses %+v from another", h, st)
		case st[0].Found:
			t.Fatalf("the lagging node's height %d with a status it does not know: %+v", h, st)
		}
	}
	if pinnedFailures == 0 {
		t.Fatal("Settled never read from the first node")
	}
}

// Each node is verified on its own before it is used. With
// SOLANA_LOCAL_CHAIN, every node must answer the first verified node's
// hash: a node answering a public cluster's beside a local one is of the
// wrong chain, and never used. Without it, a local node beside a devnet
// one is the wrong chain (the worker stops on it), and the other serves.
func TestFailover_ChainIsVerifiedPerNode(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	owner := sol.NewWallet().PublicKey()
	devnetGenesis := func(method string, r json.RawMessage) json.RawMessage {
		if method == "getGenesisHash" {
			return json.RawMessage(`"` + solana.DevnetGenesisHash + `"`)
		}
		return r
	}

	t.Run("local chain: no mix with a public one", func(t *testing.T) {
		ps, urls := proxies(t, ln, 2)
		ps[1].Set(t, localnettest.ProxyFaults{Delay: 200 * time.Millisecond, Methods: []string{"getGenesisHash"}, Rewrite: devnetGenesis})
		c := solana.NewPoolClient(urls, solana.Devnet, time.Second).CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_DEVNET", LocalChain: true})
		err := c.VerifyChain(ctx)
		var wrong *solana.WrongChainError
		if !errors.As(err, &wrong) || wrong.Got != solana.DevnetGenesisHash || wrong.Pinned == "" || !strings.Contains(wrong.URL, urls[1]) {
			t.Fatalf("a devnet node beside a local one: %v", err)
		}
		if c.ChainErr() != nil {
			t.Fatalf("the local node is not usable: %v", c.ChainErr())
		}
		for range 5 {
			if _, err := c.Balance(ctx, owner); err != nil {
				t.Fatal(err)
			}
		}
		ps[0].Set(t, localnettest.ProxyFaults{Refuse: true})
		if _, err := c.Balance(ctx, owner); !errors.Is(err, solana.ErrUnavailable) {
			t.Fatalf("with only the wrong node left: %v", err)
		}
		if n := ps[1].Calls("getMultipleAccounts"); n != 0 {
			t.Fatalf("%d reads went to the node of the wrong chain", n)
		}
		if h := healthOf(t, c, urls[1]); h.Up || h.State != "wrong chain" {
			t.Fatalf("wrong node reported %+v", h)
		}
	})

	t.Run("strict: a local node beside a devnet one", func(t *testing.T) {
		ps, urls := proxies(t, ln, 2)
		ps[1].Set(t, localnettest.ProxyFaults{Rewrite: devnetGenesis})
		c := solana.NewPoolClient(urls, solana.Devnet, time.Second).CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_DEVNET"})
		err := c.VerifyChain(ctx)
		var wrong *solana.WrongChainError
		if !errors.As(err, &wrong) || !strings.Contains(wrong.URL, urls[0]) || !wrong.Local {
			t.Fatalf("a local node as devnet: %v", err)
		}
		if c.ChainErr() != nil {
			t.Fatal(c.ChainErr())
		}
		if _, err := c.Balance(ctx, owner); err != nil {
			t.Fatal(err)
		}
		if n := ps[0].Calls("getMultipleAccounts"); n != 0 {
			t.Fatalf("%d reads went to the local node", n)
		}
	})

	t.Run("a node down at start is checked when it answers", func(t *testing.T) {
		ps, urls := proxies(t, ln, 2)
		ps[0].Set(t, localnettest.ProxyFaults{Refuse: true})
		c := solana.NewPoolClient(urls, solana.Devnet, time.Second).CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_DEVNET", LocalChain: true})
		if err := c.VerifyChain(ctx); err != nil {
			t.Fatalf("one node passed: %v", err)
		}
		if h := healthOf(t, c, urls[0]); h.Up || h.State != "unverified" {
			t.Fatalf("the down node: %+v", h)
		}
		if _, err := c.Balance(ctx, owner); err != nil || ps[0].Calls("getMultipleAccounts") != 0 {
			t.Fatalf("read: %v", err)
		}
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		go c.WatchChain(wctx, time.Minute, slog.Default(), func(err error) { t.Errorf("wrong chain: %v", err) })
		ps[0].Set(t, localnettest.ProxyFaults{})
		waitUp(t, c, urls[0], time.Second, func() {})
		if ps[0].Calls("getGenesisHash") == 0 {
			t.Fatal("used before its chain was checked")
		}
	})
}

// Reads go to the healthiest node: a node listed first but much slower
// (measured by the chain check) gives way to a faster one.
func TestFailover_ReadsPreferTheFasterNode(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ps, urls := proxies(t, ln, 2)
	// Slow enough that a loaded machine's answers from the other node
	// stay under half of it (one must be twice as fast to go first).
	ps[0].Set(t, localnettest.ProxyFaults{Delay: 400 * time.Millisecond})
	c := solana.NewPoolClient(urls, solana.Devnet, time.Second).CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_DEVNET", LocalChain: true})
	if err := c.VerifyChain(context.Background()); err != nil {
		t.Fatal(err)
	}
	owner := sol.NewWallet().PublicKey()
	for range 5 {
		if _, err := c.Balance(context.Background(), owner); err != nil {
			t.Fatal(err)
		}
	}
	if slow, fast := ps[0].Calls("getMultipleAccounts"), ps[1].Calls("getMultipleAccounts"); slow != 0 || fast != 5 {
		t.Fatalf("reads: %d to the slow node, %d to the fast one", slow, fast)
	}
	if h := healthOf(t, c, urls[0]); !h.Up || h.Latency < 400*time.Millisecond {
		t.Fatalf("the slow node is reported %+v", h)
	}
}

// heightAhead rewrites a node's answer to say its block height is by
// blocks ahead of the chain (getBlockHeight, and getEpochInfo's
// blockHeight): a node that lies, or is ahead of the others.
func heightAhead(method string, r json.RawMessage, by uint64) json.RawMessage {
	switch method {
	case "getBlockHeight":
		var h uint64
		json.Unmarshal(r, &h)
		return json.RawMessage(fmt.Sprint(h + by))
	case "getEpochInfo":
		var info map[string]any
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		d.Decode(&info)
		h, _ := info["blockHeight"].(json.Number).Int64()
		info["blockHeight"] = uint64(h) + by
		out, _ := json.Marshal(info)
		return out
	}
	return r
}

// authStub is a node whose provider refuses the caller's key: HTTP status
// code with a JSON-RPC error body, as a provider may answer a revoked,
// expired or disabled key.
func authStub(t *testing.T, status, code int, msg string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID any `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": code, "message": msg}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A node that answers every call with an HTTP 401/403 (its provider
// refuses the key: revoked, expired, out of quota) did not serve the
// call: reads must fail over to the healthy second node, and the node
// must not be reported up (taking the JSON-RPC error body as the node's
// answer would fail every read of the network while the second node is
// healthy).
func TestFailover_AuthRefusalFailsOver(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	owner := sol.NewWallet().PublicKey()
	ln.SetTokenBalance(t, owner.String(), solana.DevnetUSDCMint.String(), 7)
	for _, tc := range []struct {
		status, code int
		msg          string
	}{
		{http.StatusUnauthorized, -32401, "invalid api key provided"},
		{http.StatusForbidden, -32603, "API key disabled"},
	} {
		bad := authStub(t, tc.status, tc.code, tc.msg)
		c := solana.NewPoolClient([]string{bad, ln.URL}, solana.Devnet, time.Second)
		for i := range 3 {
			b, err := c.Balance(context.Background(), owner)
			if err != nil || b.Units(solana.Devnet.USDCMint()) != 7 {
				t.Fatalf("HTTP %d, read %d: %+v %v (the second node is healthy)", tc.status, i, b, err)
			}
		}
		if h := healthOf(t, c, bad); h.Up {
			t.Fatalf("HTTP %d: the refusing node is reported %+v", tc.status, h)
		}
	}
}

// An API key in the URL's path (Alchemy .../v2/<key>, QuickNode
// .../<token>/, Triton .../<token>, Ankr .../solana/<key>) must not reach
// a node's name or error: they go to /readyz and /metrics (unauthenticated)
// and to logs.
func TestFailover_PathKeyStaysOutOfHealthAndErrors(t *testing.T) {
	t.Parallel()
	const key = "PATHSECRET0123456789"
	c := solana.NewPoolClient([]string{"http://127.0.0.1:1/v2/" + key}, solana.Devnet, 300*time.Millisecond)
	_, err := c.Balance(context.Background(), sol.NewWallet().PublicKey())
	if err == nil {
		t.Fatal("a read from a closed port succeeded")
	}
	wantHidden(t, c, err, key)
}

// wantHidden fails the test if the error or a node's health as c reports
// it shows secret.
func wantHidden(t *testing.T, c *solana.Client, err error, secret string) {
	t.Helper()
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error quotes %q: %v", secret, err)
	}
	for _, h := range c.Health() {
		if strings.Contains(h.Node, secret) || strings.Contains(h.Error, secret) {
			t.Errorf("health shows %q: %+v", secret, h)
		}
	}
}

// A password in the URL's user info with '@', '/', '?' or ':'
// (percent-encoded in the setting) stays out of the error, the node's last
// error, /readyz and logs: solana-go's errors quote the URL re-encoded, so
// redacting the decoded form alone would leave it there.
func TestFailover_EncodedPasswordStaysOutOfErrors(t *testing.T) {
	t.Parallel()
	const secret = "s3cr%40t%2Fpw"
	c := solana.NewPoolClient([]string{"http://user:" + secret + "@127.0.0.1:1/"}, solana.Devnet, 300*time.Millisecond)
	_, err := c.Balance(context.Background(), sol.NewWallet().PublicKey())
	if err == nil {
		t.Fatal("a read from a closed port succeeded")
	}
	for _, leak := range []string{secret, "s3cr@t/pw"} {
		wantHidden(t, c, err, leak)
	}
}

// With every node of a network down since the start (none verified yet),
// no node answers: a balance read must be ErrUnavailable (503 "try
// again"), as the decision says ("A single node that is down is now 503")
// and cmd/api's log promises.
func TestFailover_NoNodeUpSinceStartIsUnavailable(t *testing.T) {
	t.Parallel()
	c := solana.NewPoolClient([]string{"http://127.0.0.1:1", "http://127.0.0.1:2"}, solana.Devnet, 300*time.Millisecond).
		CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_DEVNET"})
	if err := c.VerifyChain(context.Background()); err == nil {
		t.Fatal("closed ports verified")
	}
	_, err := solana.Clients{solana.Devnet: c}.Balance(context.Background(), solana.Devnet, sol.NewWallet().PublicKey().String())
	if !errors.Is(err, solana.ErrUnavailable) {
		t.Fatalf("no node ever answered: %v, want ErrUnavailable (503)", err)
	}
}
