package solana_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// landed puts on the localnet a transfer with memo from a fresh wallet and
// returns its signature and the wallet's token account.
func landed(t *testing.T, ln *localnettest.Localnet, memo string) (sol.Signature, sol.PublicKey) {
	t.Helper()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	raw, sig, owner := signedTransfer(t, ln, 5_000_000, memo)
	if _, err := c.Broadcast(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	waitConfirmed(t, c, sig)
	ata, _, err := sol.FindAssociatedTokenAddress(owner, solana.DevnetUSDCMint)
	if err != nil {
		t.Fatal(err)
	}
	return sig, ata
}

// FindLanding finds a landed transaction among its account's by memo and
// signature (the localnet serves getSignaturesForAddress with agave's memo
// field), and says its search was complete when it is not there.
func TestFindLanding_ByMemoAndSignature(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	memo := fmt.Sprintf("x402-%d", time.Now().UnixNano())
	sig, ata := landed(t, ln, memo)
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	l, err := c.FindLanding(context.Background(), ata, sig, memo, time.Now().Add(-time.Minute), sol.Signature{}, 0)
	if err != nil || !l.Found || l.Signature != sig.String() || l.Err != "" || l.Height == 0 {
		t.Fatalf("landed: %+v %v", l, err)
	}
	// Another signature with the same memo, or another memo: not found,
	// after a complete search.
	other, _ := landed(t, ln, "x402-other")
	for _, tc := range []struct {
		sig  sol.Signature
		memo string
	}{{other, memo}, {sig, "x402-none"}} {
		l, err := c.FindLanding(context.Background(), ata, tc.sig, tc.memo, time.Now().Add(-time.Minute), sol.Signature{}, 0)
		if err != nil || l.Found || !l.Complete {
			t.Fatalf("%s / %s: %+v %v", tc.sig, tc.memo, l, err)
		}
	}
}

// FindLanding reads the height and searches on one node. Node A is ahead
// (its height lies 1,000 blocks up) and fails getSignaturesForAddress;
// node B lags (knows no transaction of the account). A's height with B's
// search would expire a landed payment; FindLanding answers neither mix.
func TestFindLanding_ReadsOneNode(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	memo := fmt.Sprintf("x402-%d", time.Now().UnixNano())
	sig, ata := landed(t, ln, memo)
	real, err := solana.NewClient(ln.URL, solana.Devnet, 0).BlockHeight(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ps, urls := proxies(t, ln, 2)
	ps[0].Set(t, localnettest.ProxyFaults{Status: http.StatusServiceUnavailable, Methods: []string{"getSignaturesForAddress"},
		Rewrite: func(method string, r json.RawMessage) json.RawMessage {
			return heightAhead(method, r, 1000)
		}})
	ps[1].Set(t, localnettest.ProxyFaults{Delay: 20 * time.Millisecond, Rewrite: func(method string, r json.RawMessage) json.RawMessage {
		if method == "getSignaturesForAddress" {
			return json.RawMessage("[]")
		}
		return r
	}})
	failures := 0
	for range 20 {
		c := solana.NewPoolClient(urls, solana.Devnet, time.Second)
		l, err := c.FindLanding(context.Background(), ata, sig, memo, time.Now().Add(-time.Minute), sol.Signature{}, 0)
		switch {
		case err != nil:
			if !errors.Is(err, solana.ErrRPC) {
				t.Fatalf("find: %v", err)
			}
			failures++
		case l.Height >= real+1000:
			t.Fatalf("the height %d of the node ahead with another node's search %+v", l.Height, l)
		case l.Found:
			t.Fatalf("the lagging node found it: %+v", l)
		}
	}
	t.Logf("%d of 20 pinned to the failing node", failures)
}

// Anyone can send transfers (dust, or zero-amount TransferChecked) to a
// wallet's token account. Under 5,000 transactions newer than a landed
// x402 payment, one search (5 pages) cannot reach it: it says so
// (incomplete, never "expired") and gives a cursor, and the next search
// reads on from there and finds it. The node is the localnet behind a
// proxy that puts 5,000 later transactions before the real ones.
func TestFindLanding_ReadsOnThroughABusyAccount(t *testing.T) {
	ln := localnettest.Shared(t)
	memo := fmt.Sprintf("x402-buried-%d", time.Now().UnixNano())
	sig, ata := landed(t, ln, memo)
	const later = 5000
	fake := func(i int) sol.Signature {
		var s sol.Signature
		s[0], s[1] = 0xfe, 0xed
		binary.BigEndian.PutUint32(s[2:], uint32(i))
		return s
	}
	index := map[string]int{}
	for i := range later {
		index[fake(i).String()] = i
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params []json.RawMessage
		}
		_ = json.Unmarshal(body, &req)
		if req.Method == "getSignaturesForAddress" && len(req.Params) == 2 {
			var opts map[string]any
			_ = json.Unmarshal(req.Params[1], &opts)
			start := 0
			if b, ok := opts["before"].(string); ok && b != "" {
				start = index[b] + 1
			}
			if start < later {
				var out []map[string]any
				now := time.Now().Unix()
				for i := start; i < later && len(out) < 1000; i++ {
					out = append(out, map[string]any{"signature": fake(i).String(), "slot": 1, "err": nil, "memo": nil,
						"blockTime": now, "confirmationStatus": "confirmed"})
				}
				_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": out})
				return
			}
			delete(opts, "before")
			req.Params[1], _ = json.Marshal(opts)
			body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "method": req.Method, "params": req.Params})
		}
		resp, err := http.Post(ln.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, resp.Body)
	}))
	defer proxy.Close()
	c := solana.NewClient(proxy.URL, solana.Devnet, 0)
	ctx := context.Background()
	l, err := c.FindLanding(ctx, ata, sig, memo, time.Now().Add(-time.Minute), sol.Signature{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if l.Found || l.Complete || l.Cursor.IsZero() {
		t.Fatalf("one search of %d later transactions: %+v, want an incomplete search with a cursor", later, l)
	}
	// The next sweep reads on from the cursor, and finds it.
	l, err = c.FindLanding(ctx, ata, sig, memo, time.Now().Add(-time.Minute), l.Cursor, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Found {
		t.Fatalf("a landed payment buried under %d later transactions of its token account is neither found nor ever expirable: %+v", later, l)
	}
}
