package solana

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
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
}

func (e *WrongChainError) Error() string {
	msg := fmt.Sprintf("%s (%s) is not a %s node: it answers genesis hash %s, %s has %s",
		e.Variable, e.URL, e.Network, e.Got, e.Network, e.Network.GenesisHash())
	if e.Local {
		msg += "; set SOLANA_LOCAL_CHAIN=true to use a local chain (development only)"
	}
	return msg
}

// errUnverified: the node's chain has not been established yet (it has
// not answered getGenesisHash).
var errUnverified = errors.New("the node's chain is not verified yet")

// chainState is a client's check and its last verdict.
type chainState struct {
	check   *ChainCheck
	verdict atomic.Pointer[error] // nil pointer: verified
}

// CheckChain makes the client refuse to be trusted (ChainErr) until its
// node has answered getGenesisHash with its network's hash (VerifyChain).
// A client without a check (tests, tools) is trusted as it is.
func (c *Client) CheckChain(check ChainCheck) *Client {
	c.chain.check = &check
	err := fmt.Errorf("%w: %s", ErrRPC, errUnverified)
	c.chain.verdict.Store(&err)
	return c
}

// ChainErr is nil when the node may be used: its chain was verified (or
// no check is configured); else why not (*WrongChainError, or an ErrRPC
// while it has never answered).
func (c *Client) ChainErr() error {
	if p := c.chain.verdict.Load(); p != nil {
		return *p
	}
	return nil
}

// VerifyChain asks the node for its genesis hash and records the verdict:
// nil, a *WrongChainError, or an ErrRPC when it did not answer (a node
// that does not answer keeps its last verdict: a reconnect is verified
// again before it is trusted with a new one).
func (c *Client) VerifyChain(ctx context.Context) error {
	if c.chain.check == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	got, err := c.rpc.GetGenesisHash(ctx)
	if err != nil {
		return c.rpcError("getGenesisHash", err)
	}
	var verdict error
	switch h := got.String(); {
	case h == c.network.GenesisHash():
	case c.chain.check.LocalChain && !PublicGenesis(h):
	default:
		verdict = &WrongChainError{Variable: c.chain.check.Variable, Network: c.network, URL: c.redacted, Got: h,
			Local: !PublicGenesis(h)}
	}
	if verdict == nil {
		c.chain.verdict.Store(nil)
	} else {
		c.chain.verdict.Store(&verdict)
	}
	return verdict
}

// unverifiedRetry is how soon a node that has never answered
// getGenesisHash is asked again.
const unverifiedRetry = 2 * time.Second

// WatchChain verifies the client's chain every interval until ctx ends
// (a node behind a URL can change: a new DNS answer, a provider's
// failover), and every 2 s while it has never answered. onWrong is called
// with each *WrongChainError found.
func (c *Client) WatchChain(ctx context.Context, interval time.Duration, log *slog.Logger, onWrong func(error)) {
	if c.chain.check == nil {
		return
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		var known *WrongChainError
		if err := c.ChainErr(); err != nil && !errors.As(err, &known) {
			t.Reset(unverifiedRetry)
		} else {
			t.Reset(interval)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := c.VerifyChain(ctx)
		var wrong *WrongChainError
		switch {
		case errors.As(err, &wrong):
			if onWrong != nil {
				onWrong(err)
			}
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "could not verify the Solana node's chain", "network", c.network, "err", err)
		}
	}
}
