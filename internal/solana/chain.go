package solana

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Genesis hashes of the public clusters: a node answers getGenesisHash
// with its cluster's, whatever its URL says.
const (
	MainnetGenesisHash = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
	DevnetGenesisHash  = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"
	TestnetGenesisHash = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"
)

// PublicGenesis says whether h is a public cluster's genesis hash; any
// other is a local chain's.
func PublicGenesis(h string) bool {
	return h == MainnetGenesisHash || h == DevnetGenesisHash || h == TestnetGenesisHash
}

// GenesisHash is the network's cluster genesis hash.
func (n Network) GenesisHash() string {
	if n == Mainnet {
		return MainnetGenesisHash
	}
	return DevnetGenesisHash
}

// ChainCheck is how a client vets its node before it is trusted with
// money: Variable names the setting that chose the node's URL (for the
// message), and LocalChain accepts a local chain (a genesis hash of no
// public cluster), for development and tests.
type ChainCheck struct {
	Variable   string
	LocalChain bool
}

// WrongChainError is a node of another chain than its network's: a
// mainnet wallet must never be signed for against a chain that is not
// mainnet, which would report transfers that moved nothing real.
type WrongChainError struct {
	Variable string
	Network  Network
	URL      string // redacted
	Got      string
	Local    bool // a local chain, refused for want of the setting
	// Pinned: another node of the network answered this hash first (a
	// network's nodes must all be of one chain).
	Pinned string
}

func (e *WrongChainError) Error() string {
	if e.Pinned != "" {
		return fmt.Sprintf("%s (%s) answers genesis hash %s, another of its %s nodes answered %s: one network's nodes must all be of one chain",
			e.Variable, e.URL, e.Got, e.Network, e.Pinned)
	}
	msg := fmt.Sprintf("%s (%s) is not a %s node: it answers genesis hash %s, %s has %s",
		e.Variable, e.URL, e.Network, e.Got, e.Network, e.Network.GenesisHash())
	if e.Local {
		msg += "; set SOLANA_LOCAL_CHAIN=true to use a local chain (development only)"
	}
	return msg
}

// errUnverified: no node's chain has been established yet (none has
// answered getGenesisHash).
var errUnverified = errors.New("the node's chain is not verified yet")

// CheckChain makes the client use only nodes that answered getGenesisHash
// with their network's hash (VerifyChain), and refuse to be trusted
// (ChainErr) until one has. A client without a check (tests, tools) uses
// its nodes as they are.
func (c *Client) CheckChain(check ChainCheck) *Client {
	c.pool.check = &check
	return c
}

// ChainErr is nil when the client may be used: a node's chain was
// verified (or no check is configured); else why not (a *WrongChainError
// when a node is of another chain and none verified, or ErrUnavailable
// while none has ever answered).
func (c *Client) ChainErr() error {
	p := c.pool
	if p.check == nil {
		return nil
	}
	var wrong error
	for _, n := range p.nodes {
		n.mu.Lock()
		state, w := n.state, n.wrong
		n.mu.Unlock()
		switch {
		case state == nodeVerified:
			return nil
		case state == nodeWrong && wrong == nil:
			wrong = w
		}
	}
	if wrong != nil {
		return wrong
	}
	return fmt.Errorf("%w: %s", ErrUnavailable, errUnverified)
}

// VerifyChain asks every node for its genesis hash and records each
// verdict. It answers a *WrongChainError when a node is of another chain,
// else nil when at least one node passed, else an ErrRPC (none answered).
// A node that does not answer keeps its last verdict: one that never
// answered is used only once it has, and passed.
func (c *Client) VerifyChain(ctx context.Context) error {
	return c.verifyNodes(ctx, func(*node) bool { return true })
}

func (c *Client) verifyNodes(ctx context.Context, which func(*node) bool) error {
	p := c.pool
	if p.check == nil {
		return nil
	}
	errs := make([]error, len(p.nodes))
	var wg sync.WaitGroup
	for i, n := range p.nodes {
		if which(n) {
			wg.Go(func() { errs[i] = p.verify(ctx, n) })
		}
	}
	wg.Wait()
	var failed []string
	for i, err := range errs {
		var wrong *WrongChainError
		if errors.As(err, &wrong) {
			return err
		}
		if err != nil {
			failed = append(failed, p.nodes[i].name+": "+p.redact(err.Error()))
		}
	}
	if c.ChainErr() == nil {
		return nil
	}
	return fmt.Errorf("%w: getGenesisHash: %s", ErrRPC, strings.Join(failed, "; "))
}

// unverifiedRetry is how soon a node that has never answered
// getGenesisHash, or is resting after failures, is looked at again.
const unverifiedRetry = 2 * time.Second

// WatchChain verifies every node's chain every interval until ctx ends
// (a node behind a URL can change: a new DNS answer, a provider's
// failover), and every 2 s those that never answered or are down and due
// for a probe. onWrong is called with each *WrongChainError found.
func (c *Client) WatchChain(ctx context.Context, interval time.Duration, log *slog.Logger, onWrong func(error)) {
	p := c.pool
	if p.check == nil {
		return
	}
	t := time.NewTicker(unverifiedRetry)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		which := func(n *node) bool {
			n.mu.Lock()
			defer n.mu.Unlock()
			return n.state == nodeUnverified || n.down && !p.now().Before(n.retryAt)
		}
		if time.Since(last) >= interval {
			which, last = func(*node) bool { return true }, time.Now()
		}
		err := c.verifyNodes(ctx, which)
		var wrong *WrongChainError
		switch {
		case errors.As(err, &wrong):
			if onWrong != nil {
				onWrong(err)
			}
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "could not verify the Solana nodes' chain", "network", c.network, "err", err)
		}
	}
}
