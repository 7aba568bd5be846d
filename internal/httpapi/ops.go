package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynq/x/metrics"
	"github.com/hibiken/asynqmon"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/tasks"
)

// OpsConfig guards the operator routes. With no credentials the queue UI is
// refused outright rather than left open.
type OpsConfig struct {
	Username, Password string
	// RedisConnOpt reaches the asynq queues for the UI and queue metrics;
	// nil leaves both out.
	RedisConnOpt asynq.RedisConnOpt
}

// RequestTimeout bounds the handling of one request.
const RequestTimeout = 30 * time.Second

// QueuesPath is where asynqmon is mounted.
const QueuesPath = "/ops/queues"

// httpMetrics counts and times requests by route pattern, and counts
// refused sign-ins by reason (they are not audited: see signInVerify).
type httpMetrics struct {
	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	signInRefusals *prometheus.CounterVec
}

func newHTTPMetrics() httpMetrics {
	return httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
		signInRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dashboard_sign_in_refusals_total", Help: "Refused dashboard sign-in requests (challenge and sign-in) by reason.",
		}, []string{"reason"}),
	}
}

// registerOps mounts /healthz, /readyz, /metrics and the queue UI. The
// returned func releases what they hold.
func (s *server) registerOps(mux *http.ServeMux) func() {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		s.metrics.requests, s.metrics.duration, s.metrics.signInRefusals)
	closers := []func(){}

	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.ready)

	if opt := s.Ops.RedisConnOpt; opt != nil {
		insp := asynq.NewInspector(opt)
		closers = append(closers, func() { insp.Close() })
		reg.MustRegister(metrics.NewQueueMetricsCollector(insp))

		mon := asynqmon.New(asynqmon.Options{RootPath: QueuesPath, RedisConnOpt: opt})
		closers = append(closers, func() { mon.Close() })
		mux.Handle(QueuesPath+"/", s.operatorOnly(mon))
		mux.Handle(QueuesPath, http.RedirectHandler(QueuesPath+"/", http.StatusMovedPermanently))
	}
	if nodes, ok := s.Balances.(NodeHealth); ok {
		reg.MustRegister(nodeCollector{nodes})
	}
	if s.Redis != nil {
		reg.MustRegister(signerCollector{s})
	}
	if s.DB != nil {
		reg.MustRegister(differenceCollector{s})
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return func() {
		for _, c := range closers {
			c()
		}
	}
}

// ready answers 200 only when Postgres and Redis both answer in time.
func (s *server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"postgres": "ok", "redis": "ok"}
	ok := true
	if s.DB == nil || s.DB.PingContext(ctx) != nil {
		checks["postgres"], ok = "unreachable", false
	}
	if s.Redis == nil || s.Redis.Ping(ctx).Err() != nil {
		checks["redis"], ok = "unreachable", false
	}
	if !ok {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "not ready", "checks": checks})
		return
	}
	if err := s.checkSealKey(ctx); err != nil {
		checks["wallet_key"] = err.Error()
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "not ready", "checks": checks})
		return
	}
	// Informational: when a worker last ran the scheduler's heartbeat. The
	// API serves without workers, so this never fails readiness.
	checks["worker"] = "no heartbeat seen"
	if ts, err := s.Redis.Get(ctx, tasks.HeartbeatKey).Int64(); err == nil {
		checks["worker"] = fmt.Sprintf("heartbeat %ds ago", max(0, time.Now().Unix()-ts))
	}
	answer := map[string]any{"status": "ready", "checks": checks}
	if hs := s.signerHealth(ctx); len(hs) > 0 {
		answer["signers"] = signerReadiness(hs, checks)
	}
	if nodes, ok := s.Balances.(NodeHealth); ok {
		answer["solana"] = solanaReadiness(nodes.Health(), checks)
	}
	writeJSON(w, http.StatusOK, answer)
}

// NodeHealth is implemented by Balances that report their RPC nodes
// (solana.Clients): /readyz and /metrics show each node.
type NodeHealth interface {
	Health() []solana.NodeHealth
}

// solanaReadiness is each network's nodes for /readyz, and a check per
// network: "ok" (every node up), "degraded: n of m nodes up" or
// "unavailable: no node up". It never fails readiness: every API instance
// sees the same providers, and taking them all out of a load balancer
// would not bring a node back (the API serves the other network, and
// everything that needs no node, meanwhile).
func solanaReadiness(health []solana.NodeHealth, checks map[string]string) map[string]any {
	type nodeView struct {
		Node           string  `json:"node"`
		State          string  `json:"state"`
		Up             bool    `json:"up"`
		LatencySeconds float64 `json:"latency_seconds"`
		Error          string  `json:"error,omitempty"`
	}
	byNetwork := map[solana.Network][]nodeView{}
	up := map[solana.Network]int{}
	for _, h := range health {
		byNetwork[h.Network] = append(byNetwork[h.Network], nodeView{h.Node, h.State, h.Up, h.Latency.Seconds(), h.Error})
		if h.Up {
			up[h.Network]++
		}
	}
	out := map[string]any{}
	for network, nodes := range byNetwork {
		check := "ok"
		switch {
		case up[network] == 0:
			check = "unavailable: no node up"
		case up[network] < len(nodes):
			check = fmt.Sprintf("degraded: %d of %d nodes up", up[network], len(nodes))
		}
		checks["solana_"+string(network)] = check
		out[string(network)] = map[string]any{"status": check, "nodes": nodes}
	}
	return out
}

// nodeCollector exports each RPC node's health at scrape time.
type nodeCollector struct{ nodes NodeHealth }

var (
	nodeUpDesc = prometheus.NewDesc("solana_rpc_node_up",
		"1 when the Solana RPC node is verified and answering, else 0.", []string{"network", "node"}, nil)
	nodeLatencyDesc = prometheus.NewDesc("solana_rpc_node_latency_seconds",
		"Moving average of the Solana RPC node's answered calls.", []string{"network", "node"}, nil)
)

func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nodeUpDesc
	ch <- nodeLatencyDesc
}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	for _, h := range c.nodes.Health() {
		up := 0.0
		if h.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(nodeUpDesc, prometheus.GaugeValue, up, string(h.Network), h.Node)
		ch <- prometheus.MustNewConstMetric(nodeLatencyDesc, prometheus.GaugeValue, h.Latency.Seconds(), string(h.Network), h.Node)
	}
}

// errKeyMismatch: the workers' heartbeat lists their master keys, and the
// key this API seals to is not among them.
var errKeyMismatch = errorf(http.StatusServiceUnavailable,
	"wallet creation is disabled: no running worker holds the master key for WALLET_PUBLIC_KEY")

// checkSealKey refuses to seal new wallets to a key no worker can open.
// Before any worker has reported its keys there is nothing to compare.
func (s *server) checkSealKey(ctx context.Context) error {
	if s.Redis == nil || s.Sealer == nil {
		return nil
	}
	known, err := s.Redis.Exists(ctx, tasks.WorkerKeysKey).Result()
	if err != nil || known == 0 {
		return nil
	}
	ok, err := s.Redis.SIsMember(ctx, tasks.WorkerKeysKey, s.Sealer.KeyID()).Result()
	if err == nil && !ok {
		return errKeyMismatch
	}
	return nil
}

// walletKeys is where new wallets' keys are made: Keys when set (an HSM or
// a KMS, through a worker), else the envelope, once checkSealKey holds.
func (s *server) walletKeys(ctx context.Context) (signer.Maker, error) {
	if s.Keys != nil {
		return s.Keys, nil
	}
	if err := s.checkSealKey(ctx); err != nil {
		return nil, err
	}
	m, ok := s.Sealer.(signer.Maker)
	if !ok {
		return nil, errorf(http.StatusServiceUnavailable, "wallet creation is disabled: no signer is configured")
	}
	return m, nil
}

// operatorOnly puts HTTP basic auth with the operator credentials in front
// of h; with none configured it refuses everyone.
func (s *server) operatorOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Ops.Username == "" || s.Ops.Password == "" {
			writeError(w, http.StatusForbidden, "operator access is disabled: set OPS_USERNAME and OPS_PASSWORD")
			return
		}
		u, p, ok := r.BasicAuth()
		// Compare digests: equal lengths, so no length leaks through timing.
		uh, wantU := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(s.Ops.Username))
		ph, wantP := sha256.Sum256([]byte(p)), sha256.Sum256([]byte(s.Ops.Password))
		userOK := subtle.ConstantTimeCompare(uh[:], wantU[:]) == 1
		passOK := subtle.ConstantTimeCompare(ph[:], wantP[:]) == 1
		if !ok || !userOK || !passOK {
			w.Header().Set("WWW-Authenticate", `Basic realm="operators"`)
			writeError(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
		// Browsers resend basic credentials on cross-site requests: refuse
		// state changes (pause a queue, delete tasks) that another site
		// started, and never render inside another site's frame.
		w.Header().Set("X-Frame-Options", "DENY")
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
			writeError(w, http.StatusForbidden, "cross-site request refused")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether a browser request came from this host. Tools
// that send neither header (curl) are not browsers and pass.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		return err == nil && u.Host == r.Host
	}
	return true
}

// methodLabel keeps the metrics' method label to a fixed set: clients
// choose the method, and every new value would be a new series.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

// instrument wraps the mux: metrics and a log line per request, and JSON
// answers for unknown routes (404) and wrong methods (405), which the
// standard mux would answer in plain text.
func (s *server) instrument(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestIDFrom(r.Header.Get(RequestIDHeader))
		w.Header().Set(RequestIDHeader, id)
		// Bound every request: a saturated pool or a lock wait answers an
		// error instead of holding the connection until the write timeout.
		ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), requestIDKey{}, id), RequestTimeout)
		if r.URL.Path == EventsPath {
			// A stream lasts as long as its session: it bounds itself.
			cancel()
			ctx, cancel = context.WithCancel(context.WithValue(r.Context(), requestIDKey{}, id))
		}
		defer cancel()
		r = r.WithContext(ctx)
		h, pattern := mux.Handler(r)
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		if pattern == "" {
			// Let the mux decide between 404 and 405 (it sets Allow), then
			// answer in our shape.
			probe := &probeWriter{header: http.Header{}}
			h.ServeHTTP(probe, r)
			status := probe.status
			if status == http.StatusMethodNotAllowed {
				w.Header().Set("Allow", probe.header.Get("Allow"))
				writeError(rec, status, "method not allowed")
			} else if status == 0 || status == http.StatusNotFound {
				writeError(rec, http.StatusNotFound, "not found")
			} else {
				// A redirect (e.g. path cleaning): pass it through.
				for k, v := range probe.header {
					w.Header()[k] = v
				}
				rec.WriteHeader(status)
			}
			pattern = "unmatched"
		} else {
			mux.ServeHTTP(rec, r)
		}
		d := time.Since(start)
		method := methodLabel(r.Method)
		s.metrics.requests.WithLabelValues(pattern, method, strconv.Itoa(rec.status)).Inc()
		s.metrics.duration.WithLabelValues(pattern, method).Observe(d.Seconds())
		s.log.LogAttrs(r.Context(), levelFor(rec.status), "http request",
			slog.String("method", method), slog.String("route", pattern),
			slog.Int("status", rec.status), slog.Duration("duration", d))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer (flushes,
// deadlines).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// probeWriter captures a status and headers and discards the body.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header { return p.header }
func (p *probeWriter) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}
func (p *probeWriter) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}

// writeJSON answers outside huma (ops routes, mux fallbacks).
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// levelFor logs failures loudly and successes only at debug.
func levelFor(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// signerHealth is the workers' signers as their last heartbeat reported
// them (none before a worker has run one).
func (s *server) signerHealth(ctx context.Context) []signer.Health {
	if s.Redis == nil {
		return nil
	}
	raw, err := s.Redis.HGetAll(ctx, tasks.SignersKey).Result()
	if err != nil {
		return nil
	}
	var out []signer.Health
	for _, b := range signer.Backends {
		var h signer.Health
		if v, ok := raw[string(b)]; ok && json.Unmarshal([]byte(v), &h) == nil {
			out = append(out, h)
		}
	}
	return out
}

// signerReadiness is each signer for /readyz, and a check per signer. Like
// the nodes, it never fails readiness: the API signs nothing, and a signer
// down answers 503 on what needs it (its wallets' payments, new wallets
// when it is WALLET_SIGNER's) while the rest is served.
func signerReadiness(hs []signer.Health, checks map[string]string) map[string]signer.Health {
	out := map[string]signer.Health{}
	for _, h := range hs {
		check := "ok"
		if !h.Up {
			check = "unavailable: " + h.Reason
		}
		checks["signer_"+string(h.Backend)] = check
		out[string(h.Backend)] = h
	}
	return out
}

// signerCollector exports the signers' health and signing latency at
// scrape time, as the workers last reported them.
type signerCollector struct{ s *server }

var (
	signerUpDesc = prometheus.NewDesc("wallet_signer_up",
		"1 when the workers' wallet signer (local, pkcs11, vault, awskms) passed its last check, else 0.", []string{"backend"}, nil)
	signerLatencyDesc = prometheus.NewDesc("wallet_signer_sign_seconds",
		"Moving average of the signer's signatures, as the last reporting worker measured it.", []string{"backend"}, nil)
	signerCheckDesc = prometheus.NewDesc("wallet_signer_check_seconds",
		"How long the signer's last health check took.", []string{"backend"}, nil)
)

func (c signerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- signerUpDesc
	ch <- signerLatencyDesc
	ch <- signerCheckDesc
}

func (c signerCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, h := range c.s.signerHealth(ctx) {
		up := 0.0
		if h.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(signerUpDesc, prometheus.GaugeValue, up, string(h.Backend))
		ch <- prometheus.MustNewConstMetric(signerLatencyDesc, prometheus.GaugeValue, h.SignSeconds, string(h.Backend))
		ch <- prometheus.MustNewConstMetric(signerCheckDesc, prometheus.GaugeValue, h.CheckSeconds, string(h.Backend))
	}
}

// differenceCollector counts, at scrape time, the movements of wallets'
// money the service did not make or did not see, over every account:
// an operator alerts on any increase (each is also an event to the
// account's endpoints).
type differenceCollector struct{ s *server }

var differencesDesc = prometheus.NewDesc("wallet_balance_differences_total",
	"Unexplained movements of wallets' money: unexplained_outflow (a transaction the service did not make) and snapshot (chain and ledger apart at a snapshot).",
	[]string{"kind"}, nil)

func (c differenceCollector) Describe(ch chan<- *prometheus.Desc) { ch <- differencesDesc }

func (c differenceCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var n struct {
		Outflows  int64 `bun:"outflows"`
		Snapshots int64 `bun:"snapshots"`
	}
	// A database that does not answer leaves the metric out of this
	// scrape (absent, not zero).
	if err := c.s.DB.NewRaw(`SELECT (SELECT count(*) FROM unexplained_outflows) AS outflows,
		(SELECT count(*) FROM balance_snapshots WHERE chain <> ledger) AS snapshots`).Scan(ctx, &n); err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(differencesDesc, prometheus.CounterValue, float64(n.Outflows), "unexplained_outflow")
	ch <- prometheus.MustNewConstMetric(differencesDesc, prometheus.CounterValue, float64(n.Snapshots), "snapshot")
}
