package solana_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// landed puts on the localnet a transfer with memo from a fresh wallet and
// returns its signature and the wallet's token account.
func landed(t *testing.T, ln *localnettest.Localnet, memo string) (sol.Signature, sol.PublicKey) {
	t.Helper()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	owner, secret := newWallet(t)
	to, _ := newWallet(t)
	ln.SetLamports(t, owner.String(), solana.LamportsPerSOL)
	ln.SetTokenBalance(t, owner.String(), solana.DevnetUSDCMint.String(), 5_000_000)
	bh, err := c.LatestBlockhash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.BuildTransfer(solana.Transfer{Owner: owner, To: to, Amount: 1_000_000, Memo: memo}, bh)
	if err != nil {
		t.Fatal(err)
	}
	raw, sig, err := solana.Sign(context.Background(), tx, signer.Plain(secret))
	if err != nil {
		t.Fatal(err)
	}
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
func TestIssue23FindLanding(t *testing.T) {
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
func TestIssue23FindLandingReadsOneNode(t *testing.T) {
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
