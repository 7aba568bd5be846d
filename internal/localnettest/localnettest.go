// Package localnettest starts the project's localnet (localnet/server.js, a
// Solana VM behind JSON-RPC) for Go tests, and wraps its cheat methods.
// `make test` installs localnet's npm packages first. It also holds what
// tests around the chain share: stopping a child process at cleanup, and
// an owner whose USDC account is the costliest to create.
package localnettest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/solana"
)

// Localnet is a running localnet.
type Localnet struct {
	URL string
	// PID is the node process's id (the benchmarks read its CPU time).
	PID int
	// shared is the test binary's one localnet (Shared), which every
	// test may be using at once: it refuses faults.
	shared bool
}

var (
	sharedOnce sync.Once
	shared     *Localnet
	sharedErr  error
)

// Shared returns the test binary's one localnet, started on first use and
// killed when the binary exits. Tests that inject faults use Start instead.
func Shared(t testing.TB) *Localnet {
	t.Helper()
	sharedOnce.Do(func() {
		// No cleanup: Pdeathsig kills it when the test binary exits.
		shared, _, sharedErr = start(defaultSlot)
		if sharedErr == nil {
			shared.shared = true
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// defaultSlot is the test localnet's slot time: fast, so blockhashes
// expire within a test.
const defaultSlot = 100 * time.Millisecond

// Start runs a private localnet for this test, stopped at cleanup.
func Start(t testing.TB) *Localnet { return StartSlots(t, defaultSlot) }

// StartSlots is Start with slots of the given length; a long one leaves
// the chain still until the test advances it (localnet_advance), so a
// transaction stays at processed commitment as long as the test needs.
func StartSlots(t testing.TB, slot time.Duration) *Localnet {
	t.Helper()
	ln, cmd, err := start(slot)
	if err != nil {
		t.Fatal(err)
	}
	StopAtCleanup(t, cmd)
	return ln
}

// StopAtCleanup stops cmd, a started child process, when the test ends:
// SIGTERM, then SIGKILL if it has not exited within 5 s. The cleanup
// returns once it has exited.
func StopAtCleanup(t testing.TB, cmd *exec.Cmd) {
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

func start(slot time.Duration) (*Localnet, *exec.Cmd, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, nil, err
	}
	dir := filepath.Join(root, "localnet")
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		return nil, nil, fmt.Errorf("localnet: %s/node_modules is missing: run `make test` (or `npm ci` in localnet/)", dir)
	}
	cmd := exec.Command("node", "server.js", "--port", "0", "--slot-ms", strconv.FormatInt(slot.Milliseconds(), 10))
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	// The localnet dies with the test binary, even if it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("localnet: start node: %w", err)
	}
	urlc := make(chan string, 1)
	eof := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "localnet ready "); ok {
				urlc <- strings.TrimSpace(u)
				break
			}
		}
		// Keep draining so the process never blocks on a full pipe.
		io.Copy(io.Discard, out)
		close(eof)
	}()
	select {
	case u := <-urlc:
		return &Localnet{URL: u, PID: cmd.Process.Pid}, cmd, nil
	case <-eof:
		cmd.Wait()
		return nil, nil, fmt.Errorf("localnet: exited before it was ready (see its stderr above)")
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, nil, fmt.Errorf("localnet: no ready line in 60s")
	}
}

// RepoRoot is the directory holding go.mod above the working directory
// (a test's package directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Call makes a JSON-RPC call and decodes its result into out (may be nil).
func (l *Localnet) Call(t testing.TB, out any, method string, params ...any) {
	t.Helper()
	Call(t, l.URL, out, method, params...)
}

// Call makes a JSON-RPC call to the node at url and decodes its result
// into out (may be nil); any failure fails t.
func Call(t testing.TB, url string, out any, method string, params ...any) {
	t.Helper()
	if params == nil {
		params = []any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("localnet %s: %v", method, err)
	}
	defer resp.Body.Close()
	var rpcResp struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rpcResp); err != nil {
		t.Fatalf("localnet %s: status %d: %v", method, resp.StatusCode, err)
	}
	if rpcResp.Error != nil {
		t.Fatalf("localnet %s: %d %s", method, rpcResp.Error.Code, rpcResp.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(rpcResp.Result, out); err != nil {
			t.Fatalf("localnet %s: decode result: %v", method, err)
		}
	}
}

// SetLamports sets an account's SOL balance (surfnet_setAccount).
func (l *Localnet) SetLamports(t testing.TB, pubkey string, lamports uint64) {
	t.Helper()
	l.Call(t, nil, "surfnet_setAccount", pubkey, map[string]any{"lamports": lamports})
}

// SetTokenBalance sets owner's associated token account of mint to amount
// base units (surfnet_setTokenAccount).
func (l *Localnet) SetTokenBalance(t testing.TB, owner, mint string, amount uint64) {
	t.Helper()
	l.Call(t, nil, "surfnet_setTokenAccount", owner, mint, map[string]any{"amount": amount})
}

// Faults are localnet_setFaults' parameters; the zero value turns all off.
type Faults struct {
	LatencyMs int     `json:"latencyMs,omitempty"`
	DropRate  float64 `json:"dropRate,omitempty"`
	FailSends bool    `json:"failSends,omitempty"`
	Down      bool    `json:"down,omitempty"`
	// HistorySlot, when set, makes the history methods answer as a
	// backend stuck at that slot (getSignatureStatuses' context slot, and
	// nothing that landed after it), while the height stays current.
	HistorySlot *uint64 `json:"historySlot,omitempty"`
}

// SetFaults injects faults; only on a private localnet (Start).
func (l *Localnet) SetFaults(t testing.TB, f Faults) {
	t.Helper()
	l.private(t, "faults")
	l.Call(t, nil, "localnet_setFaults", f)
}

// SetMinPriorityFee makes the chain a congested market (localnet_setMarket):
// a transaction whose compute-unit price is below microLamports is accepted
// by sendTransaction but never lands, and getRecentPrioritizationFees
// answers microLamports for every recent slot. 0 clears it. Use only on a
// private localnet (Start).
func (l *Localnet) SetMinPriorityFee(t testing.TB, microLamports uint64) {
	t.Helper()
	l.private(t, "a fee market")
	l.Call(t, nil, "localnet_setMarket", map[string]any{"minPriorityFee": microLamports})
}

// private fails the test when l is the shared localnet: a fault there
// reaches every test running beside it.
func (l *Localnet) private(t testing.TB, what string) {
	t.Helper()
	if l.shared {
		t.Fatalf("localnet: %s on the shared localnet would reach the tests running beside this one; use localnettest.Start", what)
	}
}

// Programs are the programs of a confirmed transaction's top-level
// instructions, in order; the test fails if it is unknown or failed.
func (l *Localnet) Programs(t testing.TB, signature string) []string {
	t.Helper()
	var tx *struct {
		Meta        struct{ Err any }
		Transaction struct {
			Message struct {
				AccountKeys  []string
				Instructions []struct{ ProgramIDIndex int }
			}
		}
	}
	l.Call(t, &tx, "getTransaction", signature, map[string]any{"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0})
	if tx == nil || tx.Meta.Err != nil {
		t.Fatalf("transaction %s: not landed, or failed: %+v", signature, tx)
	}
	m := tx.Transaction.Message
	out := make([]string, len(m.Instructions))
	for i, ix := range m.Instructions {
		out[i] = m.AccountKeys[ix.ProgramIDIndex]
	}
	return out
}

// Calls is how many times each RPC method was called since the start or
// the last ResetCalls (localnet_getStats; the cheat methods are not
// counted).
func (l *Localnet) Calls(t testing.TB) map[string]int {
	t.Helper()
	var out struct {
		Calls map[string]int `json:"calls"`
	}
	l.Call(t, &out, "localnet_getStats")
	return out.Calls
}

// ResetCalls zeroes the counts Calls returns.
func (l *Localnet) ResetCalls(t testing.TB) {
	t.Helper()
	l.Call(t, nil, "localnet_resetStats")
}

// ProxyFaults are the faults a FaultProxy injects, as one RPC node of
// several would show them; the zero value forwards everything.
type ProxyFaults struct {
	// Refuse closes the proxy's port (and its open connections):
	// connections are refused until the faults change.
	Refuse bool
	// Delay holds each call this long before forwarding it.
	Delay time.Duration
	// Status answers this HTTP status (429, 500, 503…) instead of the
	// node's answer.
	Status int
	// StatusAfterForward forwards the call first (the node acts on it),
	// then answers Status: the caller cannot tell whether it went out.
	StatusAfterForward bool
	// Methods limits the faults above to these JSON-RPC methods (empty:
	// every method).
	Methods []string
	// Rewrite, when set, replaces the result of every successful call
	// (a lying or lagging node); it gets the method and the result.
	Rewrite func(method string, result json.RawMessage) json.RawMessage
}

// FaultProxy is one "RPC node" in front of a localnet: an HTTP proxy whose
// faults the test sets, so failover is tested with several nodes of one
// chain.
type FaultProxy struct {
	URL    string
	target string
	addr   string

	mu     sync.Mutex
	faults ProxyFaults
	srv    *http.Server
	calls  map[string]int
}

// NewFaultProxy starts a proxy to target (a localnet's URL), stopped at
// cleanup.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	p := &FaultProxy{target: target, calls: map[string]int{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = l.Addr().String()
	p.URL = "http://" + p.addr
	p.serve(l)
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.srv != nil {
			p.srv.Close()
			p.srv = nil
		}
	})
	return p
}

func (p *FaultProxy) serve(l net.Listener) {
	p.srv = &http.Server{Handler: http.HandlerFunc(p.handle)}
	go p.srv.Serve(l)
}

// Set replaces the proxy's faults.
func (p *FaultProxy) Set(t testing.TB, f ProxyFaults) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = f
	switch {
	case f.Refuse && p.srv != nil:
		p.srv.Close() // the listener and every open connection
		p.srv = nil
	case !f.Refuse && p.srv == nil:
		var l net.Listener
		var err error
		for range 50 { // the port may linger a moment after Close
			if l, err = net.Listen("tcp", p.addr); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("fault proxy: listen again on %s: %v", p.addr, err)
		}
		p.serve(l)
	}
}

// Calls is how many calls of method reached the proxy.
func (p *FaultProxy) Calls(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[method]
}

func (p *FaultProxy) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var methods []string
	var one struct {
		Method string `json:"method"`
	}
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &one) == nil {
		methods = []string{one.Method}
	} else if json.Unmarshal(body, &batch) == nil {
		for _, b := range batch {
			methods = append(methods, b.Method)
		}
	}
	p.mu.Lock()
	f := p.faults
	for _, m := range methods {
		p.calls[m]++
	}
	p.mu.Unlock()
	applies := len(f.Methods) == 0
	for _, m := range methods {
		applies = applies || slices.Contains(f.Methods, m)
	}
	if applies && f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if applies && f.Status != 0 && !f.StatusAfterForward {
		http.Error(w, http.StatusText(f.Status), f.Status)
		return
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, p.target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if applies && f.Status != 0 {
		http.Error(w, http.StatusText(f.Status), f.Status)
		return
	}
	if f.Rewrite != nil && len(methods) == 1 && one.Method != "" {
		var msg map[string]json.RawMessage
		if json.Unmarshal(out, &msg) == nil && msg["result"] != nil {
			msg["result"] = f.Rewrite(one.Method, msg["result"])
			out, _ = json.Marshal(msg)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
}

// LowBumpOwner grinds an owner whose devnet USDC account's bump is at most
// max (about one key in 2^(255-max)): cheap for anyone choosing a
// recipient, and an account whose creation costs a transfer the most
// compute.
func LowBumpOwner(t testing.TB, max uint8) (sol.PublicKey, sol.PrivateKey) {
	t.Helper()
	for range 1 << 20 {
		k := sol.NewWallet().PrivateKey
		if _, bump, err := sol.FindAssociatedTokenAddress(k.PublicKey(), solana.DevnetUSDCMint); err == nil && bump <= max {
			return k.PublicKey(), k
		}
	}
	t.Fatal("no low-bump owner found")
	return sol.PublicKey{}, nil
}

// StartReady runs node with args in dir for the test (its environment
// without the variables of prefix, so only the flags configure it; its
// stderr the test's; killed with the test binary, stopped at cleanup) and
// decodes into ready the first line of its stdout that is a JSON object
// with "ready": true. name says whose failure it is. Used for the sellers
// built on official packages (examples/x402-seller, examples/mpp-seller).
func StartReady(t testing.TB, name, dir, prefix string, args []string, ready any) {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, prefix) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: start node: %v", name, err)
	}
	StopAtCleanup(t, cmd)
	got := make(chan struct{})
	eof := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var r struct {
				Ready bool `json:"ready"`
			}
			if json.Unmarshal(sc.Bytes(), &r) == nil && r.Ready && json.Unmarshal(sc.Bytes(), ready) == nil {
				close(got)
				break
			}
		}
		// Keep draining so the process never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, out)
		close(eof)
	}()
	select {
	case <-got:
	case <-eof:
		t.Fatalf("%s: exited before it was ready (see its stderr above)", name)
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no ready line in 60s", name)
	}
}
