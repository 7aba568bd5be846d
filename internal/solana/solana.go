// Package solana wraps the Solana JSON-RPC client: which cluster an account
// lives on, its USDC mint, and the reads and writes the service makes.
package solana

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
)

// Network is the cluster an account and its wallets live on.
type Network string

// The two networks an account can belong to.
const (
	Devnet  Network = "devnet"
	Mainnet Network = "mainnet"
)

// USDC mint addresses per network (Circle's mints).
var (
	MainnetUSDCMint = sol.MustPublicKeyFromBase58("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
	DevnetUSDCMint  = sol.MustPublicKeyFromBase58("4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU")
)

// ParseNetwork accepts "devnet" or "mainnet".
func ParseNetwork(s string) (Network, error) {
	switch Network(s) {
	case Devnet, Mainnet:
		return Network(s), nil
	}
	return "", fmt.Errorf("unknown network %q (want devnet or mainnet)", s)
}

// USDCMint is the USDC mint of the network.
func (n Network) USDCMint() sol.PublicKey {
	if n == Mainnet {
		return MainnetUSDCMint
	}
	return DevnetUSDCMint
}

// LamportsPerSOL is the number of lamports in one SOL.
const LamportsPerSOL = 1_000_000_000

// Balance is a wallet's holdings: its SOL, and its tokens in their base
// units, the network's USDC first (always, zero without an account), then
// the client's other tokens (WithTokens) the owner has an associated
// account of, opened even when empty, in the client's order.
type Balance struct {
	Lamports uint64
	Tokens   []TokenBalance
}

// Units is b's holding of mint in base units (zero when b lists none).
func (b Balance) Units(mint sol.PublicKey) uint64 {
	t, _ := b.Of(mint)
	return t.Units
}

// Of is b's holding of mint, and whether b lists it.
func (b Balance) Of(mint sol.PublicKey) (TokenBalance, bool) {
	for _, t := range b.Tokens {
		if t.Mint.Equals(mint) {
			return t, true
		}
	}
	return TokenBalance{}, false
}

// Token is a token a balance read reports and a transfer moves.
type Token struct {
	Symbol        string
	Mint, Program sol.PublicKey
	Decimals      uint8
}

// TokenBalance is an owner's holding of a token, in its base units.
type TokenBalance struct {
	Token
	Units uint64
}

// ErrRPC wraps every failure to get an answer from the RPC node (unreachable,
// timed out, or an error answer), so callers can map it to 502 in one place
// (and ErrUnavailable, an ErrRPC, to 503).
var ErrRPC = errors.New("solana rpc")

// Client talks to the RPC nodes of one network (see pool). It is safe for
// concurrent use.
type Client struct {
	rpc      *rpc.Client
	pool     *pool
	network  Network
	timeout  time.Duration
	redacted string
	secrets  []string // parts of the URLs that may hold a provider's API key
	tokens   []Token  // reported by Balance beside USDC (WithTokens)
	terms    *termsCache
}

// NewClient returns a client for the node at url. Every call is bounded by
// timeout (zero means 5 s) so a stalled node never hangs a request.
func NewClient(url string, network Network, timeout time.Duration) *Client {
	return NewPoolClient([]string{url}, network, timeout)
}

// NewPoolClient returns a client over several nodes of one network:
// reads go to the healthiest and fail over, broadcasts go to all (see
// pool). timeout (zero means 5 s) bounds one attempt on one node; a call
// may try up to three nodes, so it is bounded by as many timeouts.
func NewPoolClient(urls []string, network Network, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	p := newPool(urls, network, timeout)
	names := make([]string, len(p.nodes))
	for i, n := range p.nodes {
		names[i] = n.name
	}
	return &Client{rpc: rpc.NewWithCustomRPCClient(p), pool: p, network: network,
		timeout:  timeout * time.Duration(max(1, min(len(urls), maxReadAttempts))),
		redacted: strings.Join(names, ", "), secrets: p.secrets, terms: newTermsCache()}
}

// rpcError wraps a failed call as ErrRPC (ErrUnavailable when no node
// answered). The client's errors quote the endpoint, whose query or user
// info may carry a provider's API key: it is replaced by a redacted form
// before the error can reach a log.
func (c *Client) rpcError(method string, err error) error {
	msg := err.Error()
	for _, s := range c.secrets {
		msg = strings.ReplaceAll(msg, s, "REDACTED")
	}
	kind := ErrRPC
	if errors.Is(err, ErrUnavailable) {
		kind = ErrUnavailable
	}
	return fmt.Errorf("%w: %s on %s: %s", kind, method, c.redacted, msg)
}

// urlSecrets lists the parts of an RPC URL that must not be shown: the
// query, the user info and the path (some providers put the key in the
// path: /v2/<key>), each raw, decoded and as Go re-encodes it.
func urlSecrets(raw string) []string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return []string{raw}
	}
	var out []string
	add := func(v ...string) {
		for _, s := range v {
			if s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	if u.RawQuery != "" {
		q, _ := neturl.QueryUnescape(u.RawQuery)
		add(u.RawQuery, q)
	}
	if u.User != nil {
		add(u.User.String())
		if _, rest, ok := strings.Cut(raw, "://"); ok {
			if info, _, ok := strings.Cut(rest, "@"); ok && !strings.ContainsAny(info, "/?#") {
				add(info)
			}
		}
		if p, ok := u.User.Password(); ok {
			add(p, neturl.QueryEscape(p), neturl.PathEscape(p))
		}
		add(u.User.Username())
	}
	if hidesPath(u) {
		add(u.EscapedPath(), u.Path)
	}
	// The longest first: a part inside another is replaced after it.
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// hidesPath reports whether an RPC URL's path is more than "/".
func hidesPath(u *neturl.URL) bool { return u.Path != "" && u.Path != "/" }

// redactURL keeps scheme and host of an RPC URL and hides the rest.
func redactURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return "(rpc url)"
	}
	out := u.Scheme + "://" + u.Host
	if hidesPath(u) {
		out += "/…"
	}
	if u.User != nil || u.RawQuery != "" || hidesPath(u) {
		out += " (credentials redacted)"
	}
	return out
}

// Network reports which cluster the client serves.
func (c *Client) Network() Network { return c.network }

// RPC exposes the underlying client for callers that build transactions.
func (c *Client) RPC() *rpc.Client { return c.rpc }

// Balance reads SOL and USDC of owner, and its other tokens (WithTokens),
// in ONE getMultipleAccounts call: the wallet account and its associated
// token accounts. A missing account counts as zero (for another token: it
// is not listed).
func (c *Client) Balance(ctx context.Context, owner sol.PublicKey) (Balance, error) {
	addrs := make([]sol.PublicKey, 2, 2+len(c.tokens))
	addrs[0] = owner
	ata, _, err := associatedTokenAddress(owner, c.network.USDCMint())
	if err != nil {
		return Balance{}, fmt.Errorf("derive token account: %w", err)
	}
	addrs[1] = ata
	for _, t := range c.tokens {
		a, _, err := associatedTokenAddressOf(owner, t.Program, t.Mint)
		if err != nil {
			return Balance{}, fmt.Errorf("derive %s token account: %w", t.Symbol, err)
		}
		addrs = append(addrs, a)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetMultipleAccountsWithOpts(ctx, addrs, &rpc.GetMultipleAccountsOpts{
		Encoding:   sol.EncodingBase64,
		Commitment: rpc.CommitmentConfirmed,
	})
	if err != nil {
		return Balance{}, c.rpcError("getMultipleAccounts", err)
	}
	if res == nil || len(res.Value) != len(addrs) {
		return Balance{}, fmt.Errorf("%w: getMultipleAccounts: malformed answer", ErrRPC)
	}
	var b Balance
	if acct := res.Value[0]; acct != nil {
		b.Lamports = acct.Lamports
	}
	usdc := TokenBalance{Token: c.network.USDC()}
	if acct := res.Value[1]; acct != nil {
		units, err := heldUnits(acct, sol.TokenProgramID, usdc.Mint, owner)
		if err != nil {
			return Balance{}, fmt.Errorf("%w: %w", ErrRPC, err)
		}
		usdc.Units = units
	}
	b.Tokens = append(b.Tokens, usdc)
	for i, t := range c.tokens {
		acct := res.Value[2+i]
		if acct == nil {
			continue
		}
		units, err := heldUnits(acct, t.Program, t.Mint, owner)
		if err != nil {
			return Balance{}, fmt.Errorf("%w: %s: %w", ErrRPC, t.Symbol, err)
		}
		b.Tokens = append(b.Tokens, TokenBalance{Token: t, Units: units})
	}
	return b, nil
}

// WithTokens makes every balance read also report ts (tokens other than
// USDC, each at its associated account of its program).
func (c *Client) WithTokens(ts []Token) *Client {
	c.tokens = ts
	return c
}

// heldUnits decodes a token account of program (SPL Token or Token-2022,
// which share the first 72 bytes: mint, owner, amount) and checks it is
// the expected one.
func heldUnits(acct *rpc.Account, program, mint, owner sol.PublicKey) (uint64, error) {
	if !acct.Owner.Equals(program) {
		return 0, fmt.Errorf("token account is owned by %s, not %s", acct.Owner, program)
	}
	data := acct.Data.GetBinary()
	if len(data) < 72 {
		return 0, fmt.Errorf("token account data is %d bytes", len(data))
	}
	if !sol.PublicKeyFromBytes(data[0:32]).Equals(mint) || !sol.PublicKeyFromBytes(data[32:64]).Equals(owner) {
		return 0, errors.New("token account has another mint or owner")
	}
	return binary.LittleEndian.Uint64(data[64:72]), nil
}

// Clients holds one client per network.
type Clients map[Network]*Client

// Balance reads owner's balance on network.
func (c Clients) Balance(ctx context.Context, network Network, owner string) (Balance, error) {
	cl, ok := c[network]
	if !ok {
		return Balance{}, fmt.Errorf("%w: no RPC node configured for %s", ErrRPC, network)
	}
	if err := cl.ChainErr(); err != nil {
		return Balance{}, err
	}
	pk, err := sol.PublicKeyFromBase58(owner)
	if err != nil {
		return Balance{}, fmt.Errorf("wallet address %q: %w", owner, err)
	}
	return cl.Balance(ctx, pk)
}
