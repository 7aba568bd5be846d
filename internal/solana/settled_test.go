package solana_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// stuckBeforeLanding lands a transfer with memo on a private localnet
// whose history backend then lags from a slot before it (statuses null
// with that context slot, getTransaction null, getSignaturesForAddress
// without it), the chain moving on; it returns the transfer's signature,
// its source token account and the stuck slot.
func stuckBeforeLanding(t *testing.T, ln *localnettest.Localnet, memo string) (sol.Signature, sol.PublicKey, uint64) {
	t.Helper()
	var stuck uint64
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 1})
	ln.Call(t, &stuck, "getSlot")
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 1})
	sig, ata := landed(t, ln, memo)
	ln.SetFaults(t, localnettest.Faults{HistorySlot: &stuck})
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 5})
	return sig, ata, stuck
}

// A node whose history lags answers "not found" for a transaction that
// landed after its slot. Settled takes a "not found" only from an answer
// at or past the slot asked for (the tip's, or the caller's record), so
// the landed transaction is never Absent while the node lags, and Found
// once it catches up. A transaction that never landed is Absent.
func TestSettled_NotFoundFromALaggingNodeIsNotAbsent(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	sig, _, stuck := stuckBeforeLanding(t, ln, "lag-"+fmt.Sprint(time.Now().UnixNano()))
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	ctx := context.Background()
	var never sol.Signature
	never[0] = 7

	for _, since := range []uint64{0, stuck + 1} {
		s, err := c.Settled(ctx, []sol.Signature{sig, never}, []uint64{since, since})
		if err != nil {
			t.Fatal(err)
		}
		if st := s.Statuses[0]; st.Found || st.Absent {
			t.Fatalf("since %d: the landed transaction on a lagging node: %+v", since, st)
		}
		if !strings.Contains(s.Doubt, "behind") {
			t.Fatalf("since %d: doubt %q", since, s.Doubt)
		}
		if s.Slot <= stuck {
			t.Fatalf("tip slot %d, stuck at %d: the tip is current", s.Slot, stuck)
		}
	}
	// Asked from the stuck slot itself, the lagging answer counts (the
	// caller's record says nothing after it matters).
	s, err := c.Settled(ctx, []sol.Signature{never}, []uint64{stuck})
	if err != nil || !s.Statuses[0].Absent {
		t.Fatalf("a signature unknown at the slot asked for: %+v %v", s, err)
	}

	ln.SetFaults(t, localnettest.Faults{})
	s, err = c.Settled(ctx, []sol.Signature{sig, never}, []uint64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Statuses[0]; !st.Found || !st.Confirmed || st.Absent {
		t.Fatalf("caught up: %+v", st)
	}
	if st := s.Statuses[1]; st.Found || !st.Absent {
		t.Fatalf("never sent, on a current node: %+v", st)
	}
}

// With several nodes, a "not found" is asked of a second node before it
// is Absent. Node A lies (every status null, its context current); node B
// tells the truth: whichever node a client reads first, the landed
// transaction is found, never Absent. With B down, A's word alone is in
// doubt, not Absent.
func TestSettled_AbsentOnlyWhenASecondNodeAgrees(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	sig, _ := landed(t, ln, "second-"+fmt.Sprint(time.Now().UnixNano()))
	ps, urls := proxies(t, ln, 2)
	ps[0].Set(t, localnettest.ProxyFaults{Rewrite: nullStatuses})
	ctx := context.Background()
	for range 10 {
		c := solana.NewPoolClient(urls, solana.Devnet, time.Second)
		s, err := c.Settled(ctx, []sol.Signature{sig}, []uint64{0})
		if err != nil {
			t.Fatal(err)
		}
		if st := s.Statuses[0]; !st.Found || st.Absent {
			t.Fatalf("landed, one node lying: %+v (doubt %q)", st, s.Doubt)
		}
	}

	ps[1].Set(t, localnettest.ProxyFaults{Refuse: true})
	c := solana.NewPoolClient(urls, solana.Devnet, time.Second)
	s, err := c.Settled(ctx, []sol.Signature{sig}, []uint64{0})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Statuses[0]; st.Found || st.Absent || !strings.Contains(s.Doubt, "second node") {
		t.Fatalf("the lying node alone: %+v (doubt %q)", st, s.Doubt)
	}
}

// nullStatuses makes a node answer every getSignatureStatuses with nulls,
// its context slot untouched.
func nullStatuses(method string, r json.RawMessage) json.RawMessage {
	if method != "getSignatureStatuses" {
		return r
	}
	var res struct {
		Context json.RawMessage `json:"context"`
		Value   []any           `json:"value"`
	}
	json.Unmarshal(r, &res)
	for i := range res.Value {
		res.Value[i] = nil
	}
	out, _ := json.Marshal(res)
	return out
}

// FindLanding on a node whose history lags: a search from a slot past
// the lag is refused by the node (minContextSlot), so the payment is never
// Absent; without a slot it is not Absent either. Caught up, it is Found;
// a memo never paid is Absent only when searched from a slot.
func TestFindLanding_LaggingNodeIsNeverAbsent(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	memo := "x402-lag-" + fmt.Sprint(time.Now().UnixNano())
	sig, ata, stuck := stuckBeforeLanding(t, ln, memo)
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	ctx := context.Background()
	signedAt := time.Now().Add(-time.Minute)

	for _, since := range []uint64{0, stuck + 1} {
		l, err := c.FindLanding(ctx, ata, sig, memo, signedAt, sol.Signature{}, since)
		if err != nil {
			t.Fatal(err)
		}
		if l.Found || l.Absent {
			t.Fatalf("since %d: lagging node: %+v", since, l)
		}
	}
	l, err := c.FindLanding(ctx, ata, sig, memo, signedAt, sol.Signature{}, stuck+1)
	if err != nil || !strings.Contains(l.Doubt, "behind") {
		t.Fatalf("doubt %+v %v", l, err)
	}

	ln.SetFaults(t, localnettest.Faults{})
	l, err = c.FindLanding(ctx, ata, sig, memo, signedAt, sol.Signature{}, stuck+1)
	if err != nil || !l.Found || l.Signature != sig.String() {
		t.Fatalf("caught up: %+v %v", l, err)
	}
	var other sol.Signature
	other[0] = 9
	for since, absent := range map[uint64]bool{0: false, stuck + 1: true} {
		l, err := c.FindLanding(ctx, ata, other, "never-paid", signedAt, sol.Signature{}, since)
		if err != nil || l.Found || !l.Complete || l.Absent != absent {
			t.Fatalf("since %d: never paid: %+v %v", since, l, err)
		}
	}
}
