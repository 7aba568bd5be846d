package solana_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

func TestPercentile_IsNearestRank(t *testing.T) {
	t.Parallel()
	ten := []uint64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	cases := []struct {
		values []uint64
		p      int
		want   uint64
	}{
		{nil, 75, 0},
		{[]uint64{42}, 1, 42},
		{[]uint64{42}, 100, 42},
		{ten, 1, 1},
		{ten, 10, 1},
		{ten, 11, 2},
		{ten, 50, 5},
		{ten, 75, 8},
		{ten, 90, 9},
		{ten, 100, 10},
		{[]uint64{0, 0, 0, 50_000}, 75, 0},
		{[]uint64{0, 0, 50_000, 50_000}, 75, 50_000},
	}
	for _, c := range cases {
		if got := solana.Percentile(c.values, c.p); got != c.want {
			t.Errorf("Percentile(%v, %d) = %d, want %d", c.values, c.p, got, c.want)
		}
	}
	if ten[0] != 10 {
		t.Fatal("Percentile sorted its caller's slice")
	}
}

func TestFeePolicy_PriceIsPercentileFlooredAndCapped(t *testing.T) {
	t.Parallel()
	flat := func(v uint64) []uint64 {
		out := make([]uint64, 150)
		for i := range out {
			out[i] = v
		}
		return out
	}
	ramp := make([]uint64, 100) // 1_000 … 100_000
	for i := range ramp {
		ramp[i] = uint64(i+1) * 1_000
	}
	p := solana.FeePolicy{Percentile: 75, MinMicroLamports: 1_000, MaxMicroLamports: 100_000, MaxLamports: 1_000_000}
	cases := []struct {
		name    string
		policy  solana.FeePolicy
		recent  []uint64
		units   uint32
		want    uint64
		overCap uint64 // the market reported over the cap; 0: within
	}{
		{"quiet market: the floor", p, flat(0), 20_000, 1_000, 0},
		{"no reading: the floor", p, nil, 20_000, 1_000, 0},
		{"congested within the cap", p, flat(50_000), 20_000, 50_000, 0},
		{"the 75th percentile of a ramp", p, ramp, 20_000, 75_000, 0},
		{"the 50th percentile of a ramp", solana.FeePolicy{Percentile: 50, MaxMicroLamports: 100_000, MaxLamports: 1_000_000}, ramp, 20_000, 50_000, 0},
		{"at the price cap exactly", p, flat(100_000), 20_000, 100_000, 0},
		{"above the price cap", solana.FeePolicy{Percentile: 75, MaxMicroLamports: 10_000, MaxLamports: 1_000_000}, flat(50_000), 20_000, 10_000, 50_000},
		// 100 lamports over 20,000 units: at most 5,000 µlamports per unit
		{"above the lamport cap", solana.FeePolicy{Percentile: 75, MaxMicroLamports: 100_000, MaxLamports: 100}, flat(50_000), 20_000, 5_000, 50_000},
		{"the lamport cap lowers the floor too", solana.FeePolicy{Percentile: 75, MinMicroLamports: 9_000, MaxMicroLamports: 100_000, MaxLamports: 100}, flat(0), 20_000, 5_000, 0},
		{"the lamport cap with no units", solana.FeePolicy{Percentile: 75, MaxMicroLamports: 100_000, MaxLamports: 1}, flat(7), 0, 7, 0},
	}
	for _, c := range cases {
		got, err := c.policy.Price(c.recent, c.units)
		if got != c.want {
			t.Errorf("%s: price %d, want %d", c.name, got, c.want)
		}
		var over *solana.FeeAboveCapError
		switch {
		case c.overCap == 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.overCap != 0 && (!errors.As(err, &over) || over.Market != c.overCap || over.Cap != c.want):
			t.Errorf("%s: err %v, want the market %d above the cap %d", c.name, err, c.overCap, c.want)
		}
		if err == nil && c.units > 0 && solana.PriorityFee(got, c.units) > c.policy.MaxLamports {
			t.Errorf("%s: %d lamports of priority fee, over the cap %d", c.name, solana.PriorityFee(got, c.units), c.policy.MaxLamports)
		}
	}
}

func TestFeePolicy_Validate(t *testing.T) {
	t.Parallel()
	if err := solana.DefaultFeePolicy.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]solana.FeePolicy{
		"percentile": {Percentile: 0, MaxMicroLamports: 1, MaxLamports: 1},
		"100":        {Percentile: 101, MaxMicroLamports: 1, MaxLamports: 1},
		"below":      {Percentile: 75, MinMicroLamports: 2, MaxMicroLamports: 1, MaxLamports: 1},
		"above 0":    {Percentile: 75, MaxMicroLamports: 1},
	}
	for want, p := range bad {
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want an error naming %q", p, err, want)
		}
	}
}

// The compute-unit limit covers what each shape of transfer runs on the
// localnet, and is tight: above it by at most the classic-token allowance
// (SPL Token only), the memo estimate's slack and 10%. For USDC and for
// PYUSD (Token-2022, with mainnet PYUSD's extensions).
func TestComputeUnits_TightForEachTransferShape(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	memos := []string{"", "a", strings.Repeat("a", 200), strings.Repeat("é", 200), strings.Repeat("😀", 180)}
	for _, tk := range []solana.Token{solana.Devnet.USDC(), pyusd} {
		t.Run(tk.Symbol, func(t *testing.T) {
			t.Parallel()
			owner, secret := fundedWallet(t, ln, 0)
			ln.SetTokenBalance(t, owner.String(), tk.Mint.String(), 10_000_000)
			bh, err := c.LatestBlockhash(ctx)
			if err != nil {
				t.Fatal(err)
			}
			bumps := map[uint8]bool{}
			for i := 0; i < 12; i++ {
				for _, memo := range memos {
					if err := solana.CheckTokenTransferSize(solana.Devnet, tk, memo); err != nil {
						t.Fatalf("memo of %d bytes: %v", len(memo), err)
					}
					for _, exists := range []bool{false, true} {
						to, _ := newWallet(t)
						if exists {
							ln.SetTokenBalance(t, to.String(), tk.Mint.String(), 1)
						}
						_, bump, _ := sol.FindAssociatedTokenAddressWithProgram(to, tk.Mint, tk.Program)
						bumps[bump] = true
						tr := solana.Transfer{Token: tk, Owner: owner, To: to, Amount: 1, Memo: memo, Reference: to, RecipientAccountExists: exists}
						known, err := c.TokenAccountExistsOf(ctx, to, tk)
						if err != nil || known != exists {
							t.Fatalf("TokenAccountExistsOf: %v %v, want %v", known, err, exists)
						}
						limit, err := solana.TransferComputeUnits(solana.Devnet, tr)
						if err != nil {
							t.Fatal(err)
						}
						tx, err := c.BuildTransfer(tr, bh)
						if err != nil {
							t.Fatal(err)
						}
						if _, _, err := solana.Sign(context.Background(), tx, signer.Plain(secret)); err != nil {
							t.Fatal(err)
						}
						res, err := c.RPC().SimulateTransactionWithOpts(ctx, tx, &rpc.SimulateTransactionOpts{Commitment: rpc.CommitmentConfirmed})
						if err != nil || res.Value.Err != nil {
							t.Fatalf("simulate: %v %v %v", err, res.Value.Err, res.Value.Logs)
						}
						used := uint32(*res.Value.UnitsConsumed)
						allowance := uint32(0)
						if !tk.Is2022() {
							allowance = 6_200
							if !exists {
								allowance += 7_000
							}
						}
						tight := (used+allowance+250)*11/10 + 100
						if used > limit || limit > tight {
							t.Errorf("memo %d bytes, account exists %v, bump %d: used %d, limit %d (want between, at most %d)",
								len(memo), exists, bump, used, limit, tight)
						}
					}
				}
			}
			if len(bumps) < 2 {
				t.Fatalf("only bumps %v were tried", bumps)
			}
		})
	}
}

// A burst of concurrent readers makes one getRecentPrioritizationFees call;
// the reading is the localnet's market.
func TestFeeCache_BurstMakesOneCall(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	ln.SetMinPriorityFee(t, 50_000)
	ln.Call(t, nil, "localnet_advance", map[string]any{"slots": 150})
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	fc := solana.NewFeeCache(c, time.Minute)
	someone, _ := newWallet(t)
	ln.ResetCalls(t)
	var wg sync.WaitGroup
	readings := make([]solana.FeeReading, 32)
	errs := make([]error, 32)
	for i := range readings {
		wg.Go(func() { readings[i], errs[i] = fc.Get(context.Background(), []sol.PublicKey{someone}) })
	}
	wg.Wait()
	for i, r := range readings {
		if errs[i] != nil || r.Fallback || len(r.Fees) < 100 || solana.Percentile(r.Fees, 75) != 50_000 {
			t.Fatalf("reading %d: %d fees, fallback %v, err %v", i, len(r.Fees), r.Fallback, errs[i])
		}
	}
	if n := ln.Calls(t)["getRecentPrioritizationFees"]; n != 1 {
		t.Fatalf("%d getRecentPrioritizationFees calls for a burst of 32, want 1", n)
	}
}

// A node that does not answer never blocks a send: the last reading
// serves, or, with none, an empty one (the floor).
func TestFeeCache_FallsBackWhenTheNodeFails(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	ln.SetMinPriorityFee(t, 50_000)
	c := solana.NewClient(ln.URL, solana.Devnet, time.Second)
	someone, _ := newWallet(t)
	accounts := []sol.PublicKey{someone}

	fresh := solana.NewFeeCache(c, time.Millisecond)
	ln.SetFaults(t, localnettest.Faults{Down: true})
	r, err := fresh.Get(context.Background(), accounts)
	if err == nil || !r.Fallback || len(r.Fees) != 0 {
		t.Fatalf("no reading yet, node down: %+v %v, want an empty fallback and the error", r, err)
	}

	ln.SetFaults(t, localnettest.Faults{})
	fc := solana.NewFeeCache(c, time.Millisecond)
	if r, err := fc.Get(context.Background(), accounts); err != nil || r.Fallback {
		t.Fatalf("first reading: %+v %v", r, err)
	}
	time.Sleep(5 * time.Millisecond)
	ln.SetFaults(t, localnettest.Faults{Down: true})
	r, err = fc.Get(context.Background(), accounts)
	if err == nil || !r.Fallback || solana.Percentile(r.Fees, 75) != 50_000 {
		t.Fatalf("node down after a reading: %d fees, fallback %v, err %v; want the last reading", len(r.Fees), r.Fallback, err)
	}

	// A stalled node: the caller's deadline ends the wait.
	ln.SetFaults(t, localnettest.Faults{LatencyMs: 3_000})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err = fc.Get(ctx, accounts)
	if err == nil || !r.Fallback || time.Since(start) > time.Second {
		t.Fatalf("stalled node: %v after %v, fallback %v", err, time.Since(start), r.Fallback)
	}
}
