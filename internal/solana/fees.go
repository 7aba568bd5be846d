package solana

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	sol "github.com/gagliardetto/solana-go"
)

// BaseFeeLamports is what a transaction pays per signature, priority fee
// aside; a transfer has one signature, the wallet's.
const BaseFeeLamports = 5_000

// FeePolicy turns a reading of the fee market into the compute-unit price
// a transfer offers.
type FeePolicy struct {
	// Percentile (1–100) of the recent slots' minimum landing fees: 75
	// outbids three slots in four.
	Percentile int
	// MinMicroLamports is the floor of the price, whatever the market.
	MinMicroLamports uint64
	// MaxMicroLamports caps the price per compute unit.
	MaxMicroLamports uint64
	// MaxLamports caps one transfer's whole priority fee (price × units).
	MaxLamports uint64
}

// DefaultFeePolicy is the policy of an unset configuration: the 75th
// percentile, no floor, at most 10,000,000 µlamports per unit and 0.001 SOL
// of priority fee per payment.
var DefaultFeePolicy = FeePolicy{Percentile: 75, MaxMicroLamports: 10_000_000, MaxLamports: 1_000_000}

// Validate names the first field out of range.
func (p FeePolicy) Validate() error {
	switch {
	case p.Percentile < 1 || p.Percentile > 100:
		return fmt.Errorf("percentile %d: want 1 to 100", p.Percentile)
	case p.MaxMicroLamports < p.MinMicroLamports:
		return fmt.Errorf("the maximum price %d is below the minimum %d", p.MaxMicroLamports, p.MinMicroLamports)
	case p.MaxLamports == 0:
		return fmt.Errorf("the cap on one payment's priority fee must be above 0 lamports")
	}
	return nil
}

// FeeAboveCapError is a market whose price is above what the policy lets
// a transfer pay: a transaction at the cap would be skipped by the leaders.
type FeeAboveCapError struct {
	Market, Cap uint64 // µlamports per compute unit
}

func (e *FeeAboveCapError) Error() string {
	return fmt.Sprintf("the network's priority fee (%d µlamports per compute unit) is above this service's cap (%d)", e.Market, e.Cap)
}

// Price is the compute-unit price (µlamports) for a transfer of units
// compute units given the recent slots' minimum fees: the policy's
// percentile of them (nearest rank), raised to the floor and lowered to
// both caps (the price cap, and the lamport cap divided among the units).
// A market above the caps is a *FeeAboveCapError, with the capped price.
func (p FeePolicy) Price(recent []uint64, units uint32) (uint64, error) {
	market := Percentile(recent, p.Percentile)
	capped := p.MaxMicroLamports
	if units > 0 {
		// The largest price whose ceil(price × units / 1e6) stays within
		// MaxLamports.
		if byTotal := p.MaxLamports * 1_000_000 / uint64(units); byTotal < capped {
			capped = byTotal
		}
	}
	if market > capped {
		return capped, &FeeAboveCapError{Market: market, Cap: capped}
	}
	return min(max(market, p.MinMicroLamports), capped), nil
}

// Percentile is the nearest-rank p-th percentile (1–100) of values; 0 for
// none.
func Percentile(values []uint64, p int) uint64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 × n), 1-based
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

// PriorityFee is the lamports a price costs over units: ceil(price ×
// units / 1e6), as the runtime charges it.
func PriorityFee(microLamports uint64, units uint32) uint64 {
	return (microLamports*uint64(units) + 999_999) / 1_000_000
}

// RecentPrioritizationFees reads, per recent slot (about 150), the lowest
// compute-unit price a transaction writing one of accounts paid to land.
func (c *Client) RecentPrioritizationFees(ctx context.Context, accounts []sol.PublicKey) ([]uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetRecentPrioritizationFees(ctx, sol.PublicKeySlice(accounts))
	if err != nil {
		return nil, c.rpcError("getRecentPrioritizationFees", err)
	}
	out := make([]uint64, len(res))
	for i, f := range res {
		out[i] = f.PrioritizationFee
	}
	return out, nil
}

// FeeReading is the market as last read: the recent slots' fees.
type FeeReading struct {
	Fees []uint64
	At   time.Time
	// Fallback marks a reading that is not fresh: the node did not answer
	// and this is the last good one (or none: the floor applies).
	Fallback bool
}

// FeeCache keeps one network's fee reading for a few seconds so a burst of
// sends makes one getRecentPrioritizationFees call. Concurrent callers
// share one fetch (outside the lock). A fetch that fails or does not come
// in time never blocks a send: the last reading younger than StaleFeeUse
// serves, else an empty one (the policy's floor).
type FeeCache struct {
	client *Client
	maxAge time.Duration
	now    func() time.Time

	mu       sync.Mutex
	current  FeeReading
	inflight chan struct{}
	fetchErr error
}

// StaleFeeUse is how old a reading may be and still price a send when the
// node does not answer: the market moves within a minute.
const StaleFeeUse = time.Minute

// NewFeeCache caches c's fee reading for maxAge (zero means 3 s).
func NewFeeCache(c *Client, maxAge time.Duration) *FeeCache {
	if maxAge <= 0 {
		maxAge = 3 * time.Second
	}
	return &FeeCache{client: c, maxAge: maxAge, now: time.Now}
}

// Get returns the cached reading, or reads the market for accounts (the
// writable accounts of the transfer at hand) when it is older than maxAge.
// It waits for the read at most until ctx ends, then falls back; the error
// says why it fell back (the reading is usable either way).
func (f *FeeCache) Get(ctx context.Context, accounts []sol.PublicKey) (FeeReading, error) {
	f.mu.Lock()
	if !f.current.At.IsZero() && f.now().Sub(f.current.At) < f.maxAge {
		defer f.mu.Unlock()
		return f.current, nil
	}
	wait := f.inflight
	if wait == nil {
		wait = make(chan struct{})
		f.inflight = wait
		go f.fetch(wait, slices.Clone(accounts))
	}
	f.mu.Unlock()
	var why error
	select {
	case <-wait:
		f.mu.Lock()
		why = f.fetchErr
		f.mu.Unlock()
	case <-ctx.Done():
		why = fmt.Errorf("%w: waiting for the fee market: %w", ErrRPC, ctx.Err())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if why == nil {
		return f.current, nil
	}
	if !f.current.At.IsZero() && f.now().Sub(f.current.At) < StaleFeeUse {
		r := f.current
		r.Fallback = true
		return r, why
	}
	return FeeReading{At: f.now(), Fallback: true}, why
}

func (f *FeeCache) fetch(done chan struct{}, accounts []sol.PublicKey) {
	fees, err := f.client.RecentPrioritizationFees(context.Background(), accounts)
	f.mu.Lock()
	if err == nil {
		f.current = FeeReading{Fees: fees, At: f.now()}
	}
	f.fetchErr, f.inflight = err, nil
	f.mu.Unlock()
	close(done)
}

// KnownAccounts remembers, for a while, owners whose token account was
// seen to exist, so repeated payments to one recipient do not read it
// again. A closed account stays "known" until its entry ages out; the
// transfer then lacks the compute to create it and fails on chain, fee
// paid and nothing moved, so entries live only minutes.
type KnownAccounts struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	seen map[sol.PublicKey]time.Time
}

// maxKnownAccounts bounds the memory: past it the set starts over.
const maxKnownAccounts = 100_000

// NewKnownAccounts keeps entries for ttl (zero means 10 minutes).
func NewKnownAccounts(ttl time.Duration) *KnownAccounts {
	if ttl <= 0 {
		ttl = 10 * time.Minute
	}
	return &KnownAccounts{ttl: ttl, now: time.Now, seen: map[sol.PublicKey]time.Time{}}
}

// Has reports whether owner's token account was seen within the ttl.
func (k *KnownAccounts) Has(owner sol.PublicKey) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.seen[owner]
	return ok && k.now().Sub(at) < k.ttl
}

// Forget drops what was seen of owner's token account: a transfer built
// on it was refused (the account may be closed), and the next one reads
// the chain again.
func (k *KnownAccounts) Forget(owner sol.PublicKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.seen, owner)
}

// Add records that owner's token account exists now.
func (k *KnownAccounts) Add(owner sol.PublicKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.seen) >= maxKnownAccounts {
		clear(k.seen)
	}
	k.seen[owner] = k.now()
}
