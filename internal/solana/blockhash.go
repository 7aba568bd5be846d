package solana

import (
	"context"
	"fmt"
	"sync"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
)

// Blockhash is a recent blockhash and the last block height at which a
// transaction using it can still land.
type Blockhash struct {
	Hash                 sol.Hash
	LastValidBlockHeight uint64
}

// LatestBlockhash asks the node for its newest blockhash.
func (c *Client) LatestBlockhash(ctx context.Context) (Blockhash, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return Blockhash{}, c.rpcError("getLatestBlockhash", err)
	}
	if res == nil || res.Value == nil {
		return Blockhash{}, fmt.Errorf("%w: getLatestBlockhash: empty answer", ErrRPC)
	}
	return Blockhash{Hash: res.Value.Blockhash, LastValidBlockHeight: res.Value.LastValidBlockHeight}, nil
}

// BlockhashCache keeps a recent blockhash so a send does not pay a round
// trip for one. A blockhash stays usable for ~150 blocks (about a minute);
// one at most MaxAge old leaves nearly all of that window to land.
type BlockhashCache struct {
	client *Client
	maxAge time.Duration
	now    func() time.Time

	mu       sync.Mutex
	current  Blockhash
	fetched  time.Time
	inflight chan struct{} // closed when the running fetch ends
	fetchErr error         // the last fetch's failure
}

// NewBlockhashCache caches c's blockhash for maxAge (zero means 2 s).
func NewBlockhashCache(c *Client, maxAge time.Duration) *BlockhashCache {
	if maxAge <= 0 {
		maxAge = 2 * time.Second
	}
	return &BlockhashCache{client: c, maxAge: maxAge, now: time.Now}
}

// StaleBlockhashUse is how old a cached blockhash may be and still be
// used when a fresh one does not come in time: a blockhash lives about
// 150 blocks (~60 s), and the transaction's LastValidBlockHeight, read with
// it, bounds its re-broadcasts either way.
const StaleBlockhashUse = 20 * time.Second

// Get returns the cached blockhash, fetching a new one when it is older
// than maxAge. Concurrent callers share one fetch, which runs outside the
// lock; a caller stops waiting when its ctx ends, and then gets the cached
// one if it is younger than StaleBlockhashUse.
func (b *BlockhashCache) Get(ctx context.Context) (Blockhash, error) {
	b.mu.Lock()
	if !b.fetched.IsZero() && b.now().Sub(b.fetched) < b.maxAge {
		defer b.mu.Unlock()
		return b.current, nil
	}
	wait := b.inflight
	if wait == nil {
		wait = make(chan struct{})
		b.inflight = wait
		go b.fetch(wait)
	}
	b.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		// A slow node: a blockhash fetched moments ago is still good for
		// most of its ~60 s life, and better than no payment at all.
		b.mu.Lock()
		defer b.mu.Unlock()
		if !b.fetched.IsZero() && b.now().Sub(b.fetched) < StaleBlockhashUse {
			return b.current, nil
		}
		return Blockhash{}, fmt.Errorf("%w: waiting for a blockhash: %w", ErrRPC, ctx.Err())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fetchErr != nil {
		return Blockhash{}, b.fetchErr
	}
	return b.current, nil
}

// fetch asks the node (bounded by the client's timeout) and wakes the
// waiters.
func (b *BlockhashCache) fetch(done chan struct{}) {
	bh, err := b.client.LatestBlockhash(context.Background())
	b.mu.Lock()
	if err == nil {
		b.store(bh)
	}
	b.fetchErr, b.inflight = err, nil
	b.mu.Unlock()
	close(done)
}

// store keeps bh unless the cache holds a newer one fetched within
// maxAge: a refresh that started earlier (Run's beside a Get's) may answer
// after a later one, and must not take the cache back. Past maxAge any
// answer replaces it (a node failed over to may be at a lower height).
// b.mu is held.
func (b *BlockhashCache) store(bh Blockhash) {
	if !b.fetched.IsZero() && b.now().Sub(b.fetched) < b.maxAge && bh.LastValidBlockHeight < b.current.LastValidBlockHeight {
		return
	}
	b.current, b.fetched = bh, b.now()
}

// Run refreshes the cache in the background until ctx ends, so sends find
// a fresh blockhash without waiting: the fetch happens outside the lock,
// and senders keep using the current one meanwhile. Failures are retried
// on the next tick.
func (b *BlockhashCache) Run(ctx context.Context) {
	tick := time.NewTicker(b.maxAge / 2)
	defer tick.Stop()
	for {
		if bh, err := b.client.LatestBlockhash(ctx); err == nil {
			b.mu.Lock()
			b.store(bh)
			b.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
