package solana_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
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

// Anyone can send transfers (dust, or zero-amount TransferChecked) to a
// wallet's token account. Under 5,000 transactions newer than a landed
// x402 payment, one search (5 pages) cannot reach it: it says so
// (incomplete, never "expired") and gives a cursor, and the next search
// reads on from there and finds it. The node is the localnet behind a
// proxy that puts 5,000 later transactions before the real ones.
func TestIssue23FindLandingReadsOnThroughABusyAccount(t *testing.T) {
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
