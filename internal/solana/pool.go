package solana

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
)

// ErrUnavailable: no node of the network answered (each refused the
// connection, timed out, was rate limited or failed). It is an ErrRPC;
// the API answers it 503, and a bad answer from a node that did answer
// 502.
var ErrUnavailable = fmt.Errorf("%w: no node answered", ErrRPC)

// Node health: a node that fails is skipped for a backoff that doubles
// from backoffMin with each failure up to backoffMax, then probed
// (getGenesisHash, which also re-checks its chain); an answer brings it
// back at once, and the count starts over once it has served 2×backoffMax
// without failing (a flaky node does not come back every second).
const (
	backoffMin = time.Second
	backoffMax = 30 * time.Second
	// maxReadAttempts bounds the nodes one read tries.
	maxReadAttempts = 3
)

type nodeState int

const (
	nodeUnverified nodeState = iota // never answered getGenesisHash
	nodeVerified
	nodeWrong // answered another chain's genesis hash
)

// node is one RPC endpoint of a pool and what is known of its health.
type node struct {
	name string // redacted URL: safe for logs, metrics and /readyz
	rpc  jsonrpc.RPCClient

	mu       sync.Mutex
	state    nodeState
	wrong    error // the *WrongChainError, when state is nodeWrong
	down     bool
	fails    int // recent failures (see failed)
	lastFail time.Time
	retryAt  time.Time
	probing  bool
	latency  time.Duration // moving average of answered calls
	lastErr  string
	verified time.Time // last getGenesisHash answer
}

// pool routes the JSON-RPC calls of one network's client over its nodes:
// reads to the healthiest verified node with failover, sendTransaction
// to every healthy one. It implements solana-go's rpc.JSONRPCClient.
type pool struct {
	network Network
	nodes   []*node
	timeout time.Duration // one attempt on one node
	secrets []string
	check   *ChainCheck
	genesis atomic.Pointer[string] // the first verified node's: every other must match
	now     func() time.Time
}

func newPool(urls []string, network Network, timeout time.Duration) *pool {
	p := &pool{network: network, timeout: timeout, now: time.Now}
	seen := map[string]int{}
	for _, u := range urls {
		httpClient := &http.Client{Timeout: timeout, Transport: &http.Transport{
			MaxIdleConnsPerHost: 32,
			IdleConnTimeout:     90 * time.Second,
		}}
		name := redactURL(u)
		seen[name]++
		if seen[name] > 1 { // two keys at one provider: keep labels distinct
			name = fmt.Sprintf("%s #%d", name, seen[name])
		}
		p.nodes = append(p.nodes, &node{name: name,
			rpc: jsonrpc.NewClientWithOpts(u, &jsonrpc.RPCClientOpts{HTTPClient: statusClient{httpClient}})})
		p.secrets = append(p.secrets, urlSecrets(u)...)
	}
	return p
}

// statusClient turns a 401, 403, 429 or 5xx answer into an error before
// its body is read: whatever it says, that node did not serve the call
// (solana-go would otherwise decode a JSON-RPC body and lose the status).
// A provider refusing our key (401, 403) is a node another may replace.
type statusClient struct{ *http.Client }

func (c statusClient) Do(r *http.Request) (*http.Response, error) {
	resp, err := c.Client.Do(r)
	if err != nil {
		return nil, err
	}
	if !servedStatus(resp.StatusCode) {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		return nil, &statusError{Code: resp.StatusCode}
	}
	return resp, nil
}

// servedStatus reports whether an HTTP status carries the node's answer.
func servedStatus(code int) bool {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return false
	}
	return code < 500
}

type statusError struct{ Code int }

func (e *statusError) Error() string { return fmt.Sprintf("HTTP status %d", e.Code) }

// nodeFault reports whether err says the node did not serve the call
// (transport, timeout, 429, 5xx, an unreadable answer, or the node
// declaring itself unhealthy), as opposed to an answer.
func nodeFault(err error) bool {
	var re *jsonrpc.RPCError
	if errors.As(err, &re) {
		return re.Code == -32005 || re.Code == http.StatusTooManyRequests
	}
	return err != nil
}

// notDelivered reports whether a failed call certainly never reached the
// node (the connection was refused or could not be made).
func notDelivered(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (p *pool) redact(msg string) string {
	for _, s := range p.secrets {
		msg = strings.ReplaceAll(msg, s, "REDACTED")
	}
	return msg
}

// succeeded brings the node back. Its failure count stays until it has
// served a while (see failed): a node that fails again soon after coming
// back rests twice as long as before.
func (n *node) succeeded(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.down = false
	if n.latency == 0 {
		n.latency = d
	} else {
		n.latency = (4*n.latency + d) / 5
	}
}

// failed rests the node: 1 s, doubling with each failure up to 30 s. A
// node that served for twice the cap since its last failure starts over.
func (n *node) failed(now time.Time, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.down && now.Sub(n.lastFail) > 2*backoffMax {
		n.fails = 0
	}
	n.fails++
	d := backoffMin << min(n.fails-1, 5)
	n.down, n.retryAt, n.lastErr, n.lastFail = true, now.Add(min(d, backoffMax)), msg, now
}

// usable: the node may be asked (its chain verified, or no check).
func (p *pool) usable(n *node) bool {
	return p.check == nil || n.state == nodeVerified
}

// attempt makes one call on one node, bounded by the pool's timeout, and
// records the node's health. The caller's own end (ctx done) is not the
// node's failure.
func (p *pool) attempt(ctx context.Context, n *node, method string, params []any) (json.RawMessage, error) {
	actx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	start := time.Now()
	var raw json.RawMessage
	err := n.rpc.CallForInto(actx, &raw, method, params)
	switch {
	case err == nil:
		n.succeeded(time.Since(start))
	case ctx.Err() != nil:
	case nodeFault(err):
		n.failed(p.now(), p.redact(err.Error()))
	default:
		n.succeeded(time.Since(start)) // an answer, if an error one
	}
	return raw, err
}

// candidates lists the usable nodes to try, best first: the healthy ones
// (the fastest first, but one must be twice as fast to overtake a node
// listed before it, so reads do not wander), or when none is, the resting
// ones, soonest due first. Nodes whose backoff has passed, and unverified
// ones, are probed in the background.
func (p *pool) candidates() []*node {
	now := p.now()
	type view struct {
		n       *node
		latency time.Duration
		retryAt time.Time
	}
	var healthy, resting []view
	for _, n := range p.nodes {
		n.mu.Lock()
		usable, down, v := p.usable(n), n.down, view{n, n.latency, n.retryAt}
		due := !now.Before(n.retryAt) && !n.probing && n.state != nodeWrong
		n.mu.Unlock()
		if (!usable || down) && due {
			p.probe(n)
		}
		switch {
		case !usable:
		case !down:
			healthy = append(healthy, v)
		default:
			resting = append(resting, v)
		}
	}
	var out []*node
	if len(healthy) > 0 {
		best := 0
		for i, v := range healthy {
			if v.latency > 0 && 2*v.latency < healthy[best].latency { // unmeasured: no claim
				best = i
			}
		}
		out = append(out, healthy[best].n)
		for i, v := range healthy {
			if i != best {
				out = append(out, v.n)
			}
		}
		return out
	}
	slices.SortStableFunc(resting, func(a, b view) int { return a.retryAt.Compare(b.retryAt) })
	for _, v := range resting {
		out = append(out, v.n)
	}
	return out
}

// probe checks a resting or unverified node in the background, once at a
// time per node.
func (p *pool) probe(n *node) {
	n.mu.Lock()
	if n.probing {
		n.mu.Unlock()
		return
	}
	n.probing = true
	n.mu.Unlock()
	go func() {
		defer func() {
			n.mu.Lock()
			n.probing = false
			n.mu.Unlock()
		}()
		p.verify(context.Background(), n)
	}()
}

// verify asks the node its genesis hash and records the verdict: nil, a
// *WrongChainError, or the call's error (the node keeps its last
// verdict). With a check, every node of the pool must answer one hash:
// its network's, or with LocalChain the first verified node's local one.
func (p *pool) verify(ctx context.Context, n *node) error {
	raw, err := p.attempt(ctx, n, "getGenesisHash", nil)
	if err != nil {
		if ctx.Err() == nil && !nodeFault(err) {
			// An answer, but an error one: not a node to trust.
			n.failed(p.now(), p.redact(err.Error()))
		}
		return err
	}
	var h string
	if err := json.Unmarshal(raw, &h); err != nil {
		n.failed(p.now(), "getGenesisHash: "+err.Error())
		return err
	}
	if p.check == nil {
		return nil
	}
	verdict := p.judge(n, h)
	n.mu.Lock()
	n.verified = p.now()
	if verdict == nil {
		n.state, n.wrong = nodeVerified, nil
	} else {
		n.state, n.wrong = nodeWrong, verdict
	}
	n.mu.Unlock()
	return verdict
}

func (p *pool) judge(n *node, h string) error {
	wrong := &WrongChainError{Variable: p.check.Variable, Network: p.network, URL: n.name, Got: h,
		Local: !p.check.LocalChain && !PublicGenesis(h)}
	if h != p.network.GenesisHash() && (!p.check.LocalChain || PublicGenesis(h)) {
		return wrong
	}
	// One chain per network: the first verified node's hash is pinned,
	// so a local and a public chain (or two local ones) never mix.
	if p.genesis.CompareAndSwap(nil, &h) {
		return nil
	}
	if pinned := *p.genesis.Load(); pinned != h {
		wrong.Pinned = pinned
		return wrong
	}
	return nil
}

// pinKey marks a context whose calls must all go to one node.
type pinKey struct{}

type pin struct {
	mu      sync.Mutex
	n       *node
	exclude *node // never this one (a second opinion's first node)
}

// onOneNode returns a context whose calls through the pool all go to the
// node that answers the first of them, with no failover after that: for
// reads whose answers must agree (a block height and the statuses it
// decides on).
func onOneNode(ctx context.Context) context.Context {
	return context.WithValue(ctx, pinKey{}, &pin{})
}

// onAnotherNode is onOneNode on a node other than the one pinned in
// first (which must have answered): a second opinion.
func onAnotherNode(ctx, first context.Context) context.Context {
	p := &pin{}
	if fp, ok := first.Value(pinKey{}).(*pin); ok {
		fp.mu.Lock()
		p.exclude = fp.n
		fp.mu.Unlock()
	}
	return context.WithValue(ctx, pinKey{}, p)
}

// nodes is how many nodes the client's pool routes over.
func (c *Client) nodes() int { return len(c.pool.nodes) }

// route runs call on the best node, failing over to the next on a node
// fault, and answers ErrUnavailable when no node served it.
func (p *pool) route(ctx context.Context, method string, call func(context.Context, *node) error) error {
	pn, _ := ctx.Value(pinKey{}).(*pin)
	if pn != nil {
		pn.mu.Lock()
		defer pn.mu.Unlock()
		if pn.n != nil {
			err := call(ctx, pn.n)
			if nodeFault(err) {
				return fmt.Errorf("%w: %s on %s: %s", ErrUnavailable, method, pn.n.name, p.redact(err.Error()))
			}
			return err
		}
	}
	nodes := p.candidates()
	if pn != nil && pn.exclude != nil {
		nodes = slices.DeleteFunc(nodes, func(n *node) bool { return n == pn.exclude })
	}
	if len(nodes) == 0 && pn != nil && pn.exclude != nil {
		return fmt.Errorf("%w: %s: no other node of %s is verified", ErrUnavailable, method, p.network)
	}
	if len(nodes) == 0 {
		return fmt.Errorf("%w: %s: no node of %s is verified", ErrUnavailable, method, p.network)
	}
	var fails []string
	for i, n := range nodes {
		if i == maxReadAttempts {
			break
		}
		err := call(ctx, n)
		if !nodeFault(err) { // an answer
			if pn != nil {
				pn.n = n
			}
			return err
		}
		fails = append(fails, n.name+": "+p.redact(err.Error()))
		if ctx.Err() != nil { // the caller's time is up
			break
		}
	}
	return fmt.Errorf("%w: %s: %s", ErrUnavailable, method, strings.Join(fails, "; "))
}

// CallForInto routes one call: sendTransaction to every healthy node,
// anything else to one.
func (p *pool) CallForInto(ctx context.Context, out any, method string, params []any) error {
	if method == "sendTransaction" {
		return p.broadcast(ctx, out, params)
	}
	return p.route(ctx, method, func(ctx context.Context, n *node) error {
		raw, err := p.attempt(ctx, n, method, params)
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, out)
	})
}

// CallWithCallback routes like a read.
func (p *pool) CallWithCallback(ctx context.Context, method string, params []any, callback func(*http.Request, *http.Response) error) error {
	return p.route(ctx, method, func(ctx context.Context, n *node) error {
		actx, cancel := context.WithTimeout(ctx, p.timeout)
		defer cancel()
		start := time.Now()
		err := n.rpc.CallWithCallback(actx, method, params, callback)
		switch {
		case err == nil || (!nodeFault(err) && ctx.Err() == nil):
			n.succeeded(time.Since(start))
		case ctx.Err() == nil:
			n.failed(p.now(), p.redact(err.Error()))
		}
		return err
	})
}

// CallBatch sends a batch to one node (its answers agree with each other).
func (p *pool) CallBatch(ctx context.Context, requests jsonrpc.RPCRequests) (jsonrpc.RPCResponses, error) {
	var out jsonrpc.RPCResponses
	err := p.route(ctx, "batch", func(ctx context.Context, n *node) error {
		actx, cancel := context.WithTimeout(ctx, p.timeout)
		defer cancel()
		start := time.Now()
		res, err := n.rpc.CallBatch(actx, requests)
		switch {
		case err == nil:
			n.succeeded(time.Since(start))
			out = res
		case ctx.Err() == nil && nodeFault(err):
			n.failed(p.now(), p.redact(err.Error()))
		}
		return err
	})
	return out, err
}

// broadcast sends the same signed bytes to every healthy node (or, when
// none is, to every resting one) and combines their answers:
//
//   - any node accepting it, or saying it already processed it, is success;
//   - else, if any node may have received it without refusing it (a
//     timeout, a reset, 429, 5xx, another error answer), a non-refusal
//     error: it may land, so it stays pending and is sent again;
//   - else a definite refusal (*jsonrpc.RPCError) from a node that
//     simulated it, the others never having received it;
//   - else "blockhash not found" (a lagging node: not a verdict);
//   - else, nothing delivered anywhere, ErrUnavailable.
//
// It returns at the first success; the other sends finish in the
// background within the pool's timeout (the caller's end does not cut
// them: the bytes may already be on their way).
func (p *pool) broadcast(ctx context.Context, out any, params []any) error {
	targets := p.candidates()
	if len(targets) == 0 {
		return fmt.Errorf("%w: sendTransaction: no node of %s is verified", ErrUnavailable, p.network)
	}
	type answer struct {
		n   *node
		raw json.RawMessage
		err error
	}
	answers := make(chan answer, len(targets))
	detached := context.WithoutCancel(ctx)
	for _, n := range targets {
		go func() {
			raw, err := p.attempt(detached, n, "sendTransaction", params)
			answers <- answer{n, raw, err}
		}()
	}
	var refusal, lagging *jsonrpc.RPCError
	var ambiguous, undelivered []string
	for range targets {
		var a answer
		select {
		case a = <-answers:
		case <-ctx.Done():
			return fmt.Errorf("sendTransaction: waiting for the nodes: %w", ctx.Err())
		}
		if a.err == nil {
			return json.Unmarshal(a.raw, out)
		}
		msg := a.n.name + ": " + p.redact(a.err.Error())
		var re *jsonrpc.RPCError
		switch {
		case errors.As(a.err, &re) && alreadyProcessed(re.Message):
			sig, err := firstSignature(params)
			if err != nil {
				return err
			}
			return json.Unmarshal([]byte(`"`+sig.String()+`"`), out)
		case errors.As(a.err, &re) && blockhashNotFound(re.Message):
			lagging = re
			undelivered = append(undelivered, msg)
		case errors.As(a.err, &re) && definiteRefusal(re.Code):
			if refusal == nil {
				refusal = re
			}
		case notDelivered(a.err):
			undelivered = append(undelivered, msg)
		default:
			ambiguous = append(ambiguous, msg)
		}
	}
	switch {
	case len(ambiguous) > 0:
		return fmt.Errorf("sendTransaction: no node accepted it, and it may have reached %s", strings.Join(ambiguous, "; "))
	case refusal != nil:
		return refusal
	case lagging != nil:
		return lagging
	}
	return fmt.Errorf("%w: sendTransaction: %s", ErrUnavailable, strings.Join(undelivered, "; "))
}

func alreadyProcessed(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "already been processed") || strings.Contains(m, "alreadyprocessed")
}

func blockhashNotFound(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "blockhash not found")
}

// firstSignature is the id of the base64 transaction sendTransaction was
// given.
func firstSignature(params []any) (sol.Signature, error) {
	if len(params) == 0 {
		return sol.Signature{}, errors.New("sendTransaction: no transaction")
	}
	s, _ := params[0].(string)
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return sol.Signature{}, fmt.Errorf("sendTransaction: %w", err)
	}
	tx, err := sol.TransactionFromBytes(raw)
	if err != nil || len(tx.Signatures) == 0 {
		return sol.Signature{}, fmt.Errorf("sendTransaction: unreadable transaction: %v", err)
	}
	return tx.Signatures[0], nil
}

// NodeHealth is what is known of one node, for /metrics and /readyz.
type NodeHealth struct {
	Network Network
	Node    string // its URL, redacted
	// Up: the node may be used (its chain verified) and last answered.
	Up bool
	// State: "up", "down", "unverified" (never answered getGenesisHash)
	// or "wrong chain".
	State   string
	Latency time.Duration // moving average of answered calls
	Error   string        // the last failure, redacted
}

// Health reports each node of the client's network.
func (c *Client) Health() []NodeHealth {
	p := c.pool
	out := make([]NodeHealth, 0, len(p.nodes))
	for _, n := range p.nodes {
		n.mu.Lock()
		h := NodeHealth{Network: p.network, Node: n.name, Latency: n.latency, Error: n.lastErr}
		switch {
		case p.check != nil && n.state == nodeWrong:
			h.State, h.Error = "wrong chain", n.wrong.Error()
		case p.check != nil && n.state == nodeUnverified:
			h.State = "unverified"
		case n.down:
			h.State = "down"
		default:
			h.State, h.Up, h.Error = "up", true, ""
		}
		n.mu.Unlock()
		out = append(out, h)
	}
	return out
}

// Health reports every node of every network, devnet first.
func (c Clients) Health() []NodeHealth {
	var out []NodeHealth
	for _, n := range []Network{Devnet, Mainnet} {
		if cl, ok := c[n]; ok {
			out = append(out, cl.Health()...)
		}
	}
	return out
}
