package bench

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/mpp/mpptest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

// PayScenario is one pay-latency measurement and the machine's load
// average (/proc/loadavg) when it started.
type PayScenario struct {
	Result
	LoadAvg string `json:"loadavg"`
}

// PayProtocol is one protocol's four scenarios: the official client
// signing locally (local_*) and the service's pay route (service_*), at
// one client and at 32.
type PayProtocol struct {
	Local1    *PayScenario `json:"local_1_client"`
	Service1  *PayScenario `json:"service_1_client"`
	Local32   *PayScenario `json:"local_32_clients"`
	Service32 *PayScenario `json:"service_32_clients"`
	// LocalNoRPC1 (x402): the official client at one client signing the
	// challenge the official server sends when it has an RPC node
	// (extra.recentBlockhash), so it reads nothing from the chain: its
	// signing alone.
	LocalNoRPC1 *PayScenario `json:"local_1_client_blockhash_in_challenge,omitempty"`
	// Baseline names the local client measured.
	Baseline string `json:"baseline"`
}

// PayTargets are the service's latency over the local client's, in ms,
// of the same run; the goal is the one-client p50 within 5 ms.
type PayTargets struct {
	X402P50OverLocal1  float64 `json:"x402_p50_over_local_ms_1_client"`
	X402P99OverLocal1  float64 `json:"x402_p99_over_local_ms_1_client"`
	X402P50OverLocal32 float64 `json:"x402_p50_over_local_ms_32_clients"`
	X402P99OverLocal32 float64 `json:"x402_p99_over_local_ms_32_clients"`
	// Against the client that reads no blockhash (x402.LocalNoRPC1).
	X402P50OverLocalNoRPC1 float64         `json:"x402_p50_over_local_blockhash_in_challenge_ms_1_client"`
	MPPP50OverLocal1       float64         `json:"mpp_p50_over_local_ms_1_client"`
	MPPP99OverLocal1       float64         `json:"mpp_p99_over_local_ms_1_client"`
	MPPP50OverLocal32      float64         `json:"mpp_p50_over_local_ms_32_clients"`
	MPPP99OverLocal32      float64         `json:"mpp_p99_over_local_ms_32_clients"`
	Met                    map[string]bool `json:"met"`
	LoadAvgBefore          string          `json:"loadavg_before"`
	LoadAvgAfter           string          `json:"loadavg_after"`
	LocalClientsOneNode    bool            `json:"local_clients_share_one_node_process"`
}

// PayResults is bench/results/paylatency.json.
type PayResults struct {
	Setup   Setup       `json:"setup"`
	X402    PayProtocol `json:"x402"`
	MPP     PayProtocol `json:"mpp"`
	Targets PayTargets  `json:"targets"`
}

// BenchmarkPayLatency measures what paying a seller's 402 costs an agent in
// time: from having the challenge to having the header to retry with. In
// one run against one stack (the api and worker binaries over a private
// PostgreSQL and Redis, a localnet, the official x402 and MPP sellers),
// for x402 and for MPP, at one client and at 32: the official client
// packages signing the same challenge with a local key
// (x402-local-sign.mjs), against POST /agents/{id}/x402/pay and
// /mpp/pay answered signed. Each side's first header is paid to the
// seller first, so both are known to be accepted.
func BenchmarkPayLatency(b *testing.B) {
	one, many := envInt("BENCH_PAY_ONE", 300), envInt("BENCH_PAY_N", 1000)
	loadBefore := loadAvg()
	pprofOn := os.Getenv("BENCH_PPROF") == "1"
	stack := StartStack(b, StackOptions{WorkerConcurrency: clients, Private: true, Pprof: pprofOn, PGStatements: pprofOn})
	ln := stack.Localnet
	xs := x402test.Start(b, ln.URL, x402test.Options{})
	xsBlockhash := x402test.Start(b, ln.URL, x402test.Options{ChallengeBlockhash: true})
	ms := mpptest.Start(b, ln.URL, mpptest.Options{FeePayer: true, Expires: 15 * time.Minute})
	local := startLocalSigner(b, ln.URL, clients)
	procs := append(append([]Proc{}, stack.Procs...), local.proc)

	api := stack.client(stack.NewKey(b), clients*2)
	ids, _ := stack.fundedPayers(b, api, wallets, 1_000_000_000)
	for _, a := range append(append([]string{}, local.X402...), local.MPP...) {
		ln.SetTokenBalance(b, a, solana.DevnetUSDCMint.String(), 1_000_000_000)
	}
	wallet := func(c, i int) string { return ids[(c+clients*(i%2))%wallets] }

	// x402: the seller's challenge does not change from one request to the
	// next (the buyer's memo makes each payment unique), so every payment
	// pays the one challenge, as the PAYMENT-REQUIRED header carried it.
	challenge := xs.Challenge(b, x402test.Weather)
	header := base64.StdEncoding.EncodeToString(challenge)
	x402Pay := func(c, i int) (string, string, error) {
		status, body, err := api.do(0, "POST", "/api/public/v1/agents/"+wallet(c, i)+"/x402/pay", map[string]any{"payment_required": json.RawMessage(challenge)}, nil)
		if err != nil {
			return "", "", err
		}
		if status != 200 || body["status"] != "signed" {
			return "", "", fmt.Errorf("x402 pay: %d %v", status, body)
		}
		return body["header"].(string), body["payment_signature"].(string), nil
	}
	// MPP: a challenge is paid once per account, so every payment gets a
	// fresh one, fetched before the scenario starts.
	resource := ms.URL + mpptest.Weather
	var mppChallenges []string
	fresh := &mppSource{url: ms.URL + mpptest.Weather}
	mppPay := func(c, i int) (string, string, error) {
		status, body, err := api.do(0, "POST", "/api/public/v1/agents/"+wallet(c, i)+"/mpp/pay", map[string]any{"challenge": mppChallenges[i], "resource": resource}, nil)
		if err != nil {
			return "", "", err
		}
		if status != 200 || body["status"] != "signed" {
			return "", "", fmt.Errorf("mpp pay: %d %v", status, body)
		}
		return body["header"].(string), body["authorization"].(string), nil
	}
	op := func(pay func(c, i int) (string, string, error)) func(c, i int) error {
		return func(c, i int) error { _, _, err := pay(c, i); return err }
	}

	// Both sides' headers are accepted by the sellers (this also warms
	// every path: connections, token accounts, caches).
	if h, v, err := x402Pay(0, 0); err != nil {
		b.Fatal(err)
	} else if p := xs.Pay(b, x402test.Weather, h, v); p.Status != 200 {
		b.Fatalf("the seller refused the service's x402 payment: %d %s %s", p.Status, p.Error, p.Body)
	}
	if r := local.run(b, "x402", header, 1, 1, 20); r.Errors > 0 {
		b.Fatalf("local x402 signing: %s", r.Error)
	} else if p := xs.Pay(b, x402test.Weather, r.Header, r.Value); p.Status != 200 {
		b.Fatalf("the seller refused the official client's x402 payment: %d %s %s", p.Status, p.Error, p.Body)
	}
	mppChallenges = fresh.fetch(b, 1)
	if h, v, err := mppPay(0, 0); err != nil {
		b.Fatal(err)
	} else if a := ms.Get(b, mpptest.Weather, h, v); a.Status != 200 {
		b.Fatalf("the seller refused the service's MPP payment: %d %s %s", a.Status, a.Problem, a.Body)
	}
	localMPP := fresh.fetch(b, 1)[0]
	if r := local.run(b, "mpp", localMPP, 1, 1, 20); r.Errors > 0 {
		b.Fatalf("local MPP signing: %s", r.Error)
	} else if a := ms.Get(b, mpptest.Weather, r.Header, r.Value); a.Status != 200 {
		b.Fatalf("the seller refused the official client's MPP payment: %d %s %s", a.Status, a.Problem, a.Body)
	}
	measure(clients, clients*2, op(x402Pay))
	mppChallenges = fresh.fetch(b, clients*2)
	measure(clients, clients*2, op(mppPay))

	res := PayResults{Setup: Setup{
		APIs: 1, Accounts: 1, Workers: 1, WorkerConcurrency: clients, Wallets: wallets, CPUs: runtime.NumCPU(),
		GoVersion: runtime.Version(), ClockTicks: int(clockTicks), Date: time.Now().UTC().Format(time.RFC3339),
		Note: "latency from having the 402 challenge to having the payment header; local_* is the official client package signing in one Node process (x402-local-sign.mjs), service_* the pay route answered signed; CPU per op includes local-signer (the Node process)",
	}}
	res.X402.Baseline = "@x402/fetch's steps: @x402/core/client x402HTTPClient + @x402/svm ExactSvmScheme, a local keypair (@solana/kit)"
	res.MPP.Baseline = "mppx client (Mppx.create().createCredential) with @solana/mpp/client solana.charge, a local keypair (@solana/kit)"
	service := func(conc, n int, pay func(c, i int) (string, string, error)) *PayScenario {
		s := &PayScenario{LoadAvg: loadAvg()}
		before := sampleCPU(procs)
		s.Result = measure(conc, n, op(pay))
		s.CPU = cpuPerOp(procs, before, sampleCPU(procs), float64(n))
		return s
	}
	baseline := func(protocol, challenge string, conc, n int) *PayScenario {
		s := &PayScenario{LoadAvg: loadAvg()}
		before := sampleCPU(procs)
		r := local.run(b, protocol, challenge, conc, n, max(50, conc*4))
		s.Result = r.result(conc)
		s.CPU = cpuPerOp(procs, before, sampleCPU(procs), float64(n))
		if r.Errors > 0 {
			fmt.Fprintln(os.Stderr, "bench: local", protocol, "signing:", r.Error)
		}
		return s
	}
	// One client and 32, each baseline just before the service's, so
	// both see the same machine.
	res.X402.Local1 = baseline("x402", header, 1, one)
	res.X402.Service1 = service(1, one, x402Pay)
	res.X402.LocalNoRPC1 = baseline("x402", base64.StdEncoding.EncodeToString(xsBlockhash.Challenge(b, x402test.Weather)), 1, one)
	res.X402.Local32 = baseline("x402", header, clients, many)
	res.X402.Service32 = service(clients, many, x402Pay)
	res.MPP.Local1 = baseline("mpp", localMPP, 1, one)
	mppChallenges = fresh.fetch(b, one)
	res.MPP.Service1 = service(1, one, mppPay)
	res.MPP.Local32 = baseline("mpp", localMPP, clients, many)
	mppChallenges = fresh.fetch(b, many)
	res.MPP.Service32 = service(clients, many, mppPay)

	t := &res.Targets
	gap := func(svc, loc float64) float64 { return round(svc-loc, 3) }
	t.X402P50OverLocal1, t.X402P99OverLocal1 = gap(res.X402.Service1.P50ms, res.X402.Local1.P50ms), gap(res.X402.Service1.P99ms, res.X402.Local1.P99ms)
	t.X402P50OverLocal32, t.X402P99OverLocal32 = gap(res.X402.Service32.P50ms, res.X402.Local32.P50ms), gap(res.X402.Service32.P99ms, res.X402.Local32.P99ms)
	t.X402P50OverLocalNoRPC1 = gap(res.X402.Service1.P50ms, res.X402.LocalNoRPC1.P50ms)
	t.MPPP50OverLocal1, t.MPPP99OverLocal1 = gap(res.MPP.Service1.P50ms, res.MPP.Local1.P50ms), gap(res.MPP.Service1.P99ms, res.MPP.Local1.P99ms)
	t.MPPP50OverLocal32, t.MPPP99OverLocal32 = gap(res.MPP.Service32.P50ms, res.MPP.Local32.P50ms), gap(res.MPP.Service32.P99ms, res.MPP.Local32.P99ms)
	t.Met = map[string]bool{
		"x402_one_client_p50_within_local_plus_5ms": t.X402P50OverLocal1 <= 5,
		"mpp_one_client_p50_within_local_plus_5ms":  t.MPPP50OverLocal1 <= 5,
	}
	t.LoadAvgBefore, t.LoadAvgAfter, t.LocalClientsOneNode = loadBefore, loadAvg(), true
	printPay(&res)
	writeResults(b, "paylatency.json", res)
	if pprofOn {
		profileFull(b, stack, "paylatency-", 1, op(x402Pay))
	}
	b.ReportMetric(t.X402P50OverLocal1, "x402_p50_over_local_ms")
	b.ReportMetric(t.MPPP50OverLocal1, "mpp_p50_over_local_ms")
}

func printPay(r *PayResults) {
	fmt.Printf("\npay latency: from the 402 challenge to the payment header (ms); load %s → %s\n", r.Targets.LoadAvgBefore, r.Targets.LoadAvgAfter)
	fmt.Printf("%-22s %8s %8s %8s %8s %6s | %s\n", "scenario", "per_s", "p50_ms", "p95_ms", "p99_ms", "errors", "CPU ms per op: service (api worker postgres redis); local-signer; loadavg")
	for _, p := range []struct {
		name string
		p    *PayProtocol
	}{{"x402", &r.X402}, {"mpp", &r.MPP}} {
		for _, s := range []struct {
			name string
			s    *PayScenario
		}{{"local_1", p.p.Local1}, {"service_1", p.p.Service1}, {"local_1_no_rpc", p.p.LocalNoRPC1}, {"local_32", p.p.Local32}, {"service_32", p.p.Service32}} {
			if s.s == nil {
				continue
			}
			c := s.s.CPU
			fmt.Printf("%-22s %8.1f %8.2f %8.2f %8.2f %6d | %.2f (%.2f %.2f %.2f %.2f); %.2f; %s\n", p.name+" "+s.name, s.s.RPS, s.s.P50ms, s.s.P95ms, s.s.P99ms, s.s.Errors,
				c.Service, c.API, c.Worker, c.Postgres, c.Redis, c.ByProcess["local-signer"], s.s.LoadAvg)
		}
	}
	t := r.Targets
	fmt.Printf("one client: x402 p50 local+%.2f ms (goal ≤ 5: %v; local without its blockhash read +%.2f), p99 local+%.2f; MPP p50 local+%.2f ms (goal ≤ 5: %v), p99 local+%.2f\n",
		t.X402P50OverLocal1, t.Met["x402_one_client_p50_within_local_plus_5ms"], t.X402P50OverLocalNoRPC1, t.X402P99OverLocal1,
		t.MPPP50OverLocal1, t.Met["mpp_one_client_p50_within_local_plus_5ms"], t.MPPP99OverLocal1)
	fmt.Printf("32 clients: x402 p50 local+%.2f ms, p99 local+%.2f; MPP p50 local+%.2f ms, p99 local+%.2f\n",
		t.X402P50OverLocal32, t.X402P99OverLocal32, t.MPPP50OverLocal32, t.MPPP99OverLocal32)
}

// mppSource fetches fresh MPP challenges from a seller's paid url.
// The official seller's challenge id is an HMAC of what it asks and its
// expiry (in ms), so two 402s within a millisecond are one challenge:
// only challenges not seen before count.
type mppSource struct {
	url  string
	seen map[string]bool
}

// fetch returns n challenges never returned before, each answer's
// WWW-Authenticate values joined as the pay route takes them, asking 8 at
// a time.
func (m *mppSource) fetch(b *testing.B, n int) []string {
	if m.seen == nil {
		m.seen = map[string]bool{}
	}
	var out []string
	for round := 0; len(out) < n; round++ {
		if round == 50 {
			b.Fatalf("GET %s: %d fresh challenges after 50 rounds, want %d", m.url, len(out), n)
		}
		got := make([]string, n-len(out))
		errs := make([]error, len(got))
		spread(len(got), 8, func(_, i int) {
			resp, err := http.Get(m.url)
			if err != nil {
				errs[i] = err
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusPaymentRequired {
				errs[i] = fmt.Errorf("GET %s: %d, want 402", m.url, resp.StatusCode)
				return
			}
			got[i] = strings.Join(resp.Header.Values("WWW-Authenticate"), ", ")
		})
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
		for _, c := range got {
			if !m.seen[c] {
				m.seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// localSigner is x402-local-sign.mjs running: the official clients with
// local keys, one per client and protocol (X402, MPP: their addresses).
type localSigner struct {
	X402, MPP []string
	proc      Proc
	in        io.Writer
	out       *bufio.Scanner
}

// localRun is the signer's answer to one run.
type localRun struct {
	Latencies []float64 `json:"latencies_ms"`
	Seconds   float64   `json:"seconds"`
	Errors    int       `json:"errors"`
	Error     string    `json:"error"`
	Header    string    `json:"header"`
	Value     string    `json:"value"`
}

func startLocalSigner(b *testing.B, rpcURL string, n int) *localSigner {
	root, err := localnettest.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(root, "bench", "x402-local-sign.mjs"), "--rpc", rpcURL, "--clients", fmt.Sprint(n))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	runChild(b, cmd, syscall.SIGTERM, 5*time.Second)
	s := &localSigner{in: in, out: bufio.NewScanner(out), proc: Proc{Role: "local-signer", Name: "local-signer", PID: cmd.Process.Pid}}
	s.out.Buffer(make([]byte, 1<<20), 16<<20)
	var ready struct {
		Ready bool     `json:"ready"`
		X402  []string `json:"x402"`
		MPP   []string `json:"mpp"`
	}
	if !s.out.Scan() || json.Unmarshal(s.out.Bytes(), &ready) != nil || !ready.Ready {
		b.Fatalf("x402-local-sign.mjs: no ready line (%v): %s", s.out.Err(), s.out.Bytes())
	}
	s.X402, s.MPP = ready.X402, ready.MPP
	return s
}

// run has the signer sign challenge n times from conc clients, after warm
// unmeasured signings.
func (s *localSigner) run(b *testing.B, protocol, challenge string, conc, n, warm int) localRun {
	cmd, _ := json.Marshal(map[string]any{"op": protocol, "challenge": challenge, "clients": conc, "n": n, "warm": warm})
	if _, err := s.in.Write(append(cmd, '\n')); err != nil {
		b.Fatal(err)
	}
	var r localRun
	if !s.out.Scan() {
		b.Fatalf("x402-local-sign.mjs: no answer: %v", s.out.Err())
	}
	if err := json.Unmarshal(s.out.Bytes(), &r); err != nil {
		b.Fatalf("x402-local-sign.mjs: %v: %s", err, s.out.Bytes())
	}
	if len(r.Latencies) != n {
		b.Fatalf("x402-local-sign.mjs: %d latencies for %d signings: %s", len(r.Latencies), n, r.Error)
	}
	return r
}

// result summarises a local run as measure does a service scenario.
func (r localRun) result(conc int) Result {
	n := len(r.Latencies)
	lat := slices.Clone(r.Latencies)
	slices.Sort(lat)
	q := func(p float64) float64 { return round(lat[min(n-1, int(p*float64(n)))], 3) }
	return Result{RPS: round(float64(n)/r.Seconds, 1), P50ms: q(0.50), P95ms: q(0.95), P99ms: q(0.99), N: n, Errors: r.Errors, Clients: conc}
}
