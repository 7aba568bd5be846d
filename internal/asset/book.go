package asset

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentwallet/agentwallet/internal/solana"
)

// Book keeps the last Reading of each network's mints, for the API's
// GET /assets: an issuer's powers (freeze, a permanent delegate, a
// default frozen state) and how its amounts read are facts of the chain,
// not of the table. A network never read yet has no reading; Get then
// tries one read. The zero Book is not usable: make one with NewBook.
type Book struct {
	table Table
	nodes map[solana.Network]Mints

	mu   sync.Mutex
	read map[solana.Network]Reading
}

// NewBook is a Book of t's assets read through each network's node.
func NewBook(t Table, nodes map[solana.Network]Mints) *Book {
	return &Book{table: t.OrDefaults(), nodes: nodes, read: map[solana.Network]Reading{}}
}

// BookReadWait bounds Get's read of a network not read yet, so a node
// that does not answer delays GET /assets by this much at most.
const BookReadWait = 2 * time.Second

// Refresh reads network n's mints now and keeps the answer. A table that
// disagrees with the chain is kept too (the mints that exist have facts)
// and its MismatchError returned; a node that did not answer changes
// nothing.
func (b *Book) Refresh(ctx context.Context, n solana.Network) error {
	c, ok := b.nodes[n]
	if !ok || c == nil {
		return errors.New("no node for " + string(n))
	}
	r, err := b.table.Read(ctx, n, c)
	var mismatch *MismatchError
	if err != nil && !errors.As(err, &mismatch) {
		return err
	}
	b.mu.Lock()
	b.read[n] = r
	b.mu.Unlock()
	return err
}

// Get is network n's last reading; without one it reads now (at most
// BookReadWait). ok is false when there is still none.
func (b *Book) Get(ctx context.Context, n solana.Network) (Reading, bool) {
	if b == nil {
		return Reading{}, false
	}
	b.mu.Lock()
	r, ok := b.read[n]
	b.mu.Unlock()
	if ok {
		return r, true
	}
	ctx, cancel := context.WithTimeout(ctx, BookReadWait)
	defer cancel()
	_ = b.Refresh(ctx, n)
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok = b.read[n]
	return r, ok
}

// Run refreshes every network's reading each every until ctx ends, so an
// issuer's change (a delegate set, a multiplier moved) shows within it;
// a failed read keeps the last reading and is logged.
func (b *Book) Run(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for n := range b.nodes {
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			if err := b.Refresh(rctx, n); err != nil && log != nil {
				log.Warn("the network's asset mints could not be read; GET /assets keeps the last reading", "network", n, "err", err)
			}
			cancel()
		}
	}
}
