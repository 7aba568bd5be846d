// Package config loads each process's typed configuration from environment
// variables, with local defaults so a development stack needs none, and
// validates it at start with errors that name the variable at fault.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/feepayer"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// Secret is configuration that must never be printed: fmt and slog show
// it redacted. Reveal returns the value for the one place that uses it.
type Secret string

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString hides the value from %#v.
func (s Secret) GoString() string { return s.String() }

// MarshalJSON hides the value from JSON (slog's JSON handler prints
// structs through it).
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// LogValue hides the value from slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Getenv looks a variable up; os.Getenv in production, a map in tests.
type Getenv func(string) string

// Common is what every process needs.
type Common struct {
	DatabaseURL string // DATABASE_URL
	// Redis: REDIS_URL, or REDIS_SENTINELS with REDIS_MASTER_NAME (and
	// REDIS_SENTINEL_USERNAME, REDIS_SENTINEL_PASSWORD).
	Redis    Redis
	LogLevel slog.Level // LOG_LEVEL: debug, info, warn, error
}

// Debug is opt-in diagnostics of the api and the worker.
type Debug struct {
	// PprofAddr (PPROF_ADDR, loopback host:port, port 0 picks one) serves
	// net/http/pprof there; empty (the default) serves nothing. Profiles
	// show code paths and cost CPU while taken, so only a loopback
	// address is accepted: reach it from the host (or through a tunnel).
	PprofAddr string
}

// Solana is where each network's RPC nodes are.
type Solana struct {
	DevnetRPCURLs  []string      // SOLANA_RPC_URL_DEVNET, comma-separated
	MainnetRPCURLs []string      // SOLANA_RPC_URL_MAINNET, comma-separated
	RPCTimeout     time.Duration // SOLANA_RPC_TIMEOUT: bound on one call to one node
	// LocalChain (SOLANA_LOCAL_CHAIN) accepts nodes of a local chain for
	// both networks: without it each node must answer its network's
	// genesis hash (mainnet-beta's, devnet's) before it is used.
	LocalChain bool
	// Assets (ASSETS adds to asset.Defaults) are the tokens of each
	// network; the worker checks them on chain before it starts.
	Assets asset.Table
}

// RPCVariable names the setting of a network's nodes, for messages.
func (s Solana) RPCVariable(n solana.Network) string {
	if n == solana.Mainnet {
		return "SOLANA_RPC_URL_MAINNET"
	}
	return "SOLANA_RPC_URL_DEVNET"
}

// Client is a network's RPC client over its nodes, each used only once
// its chain is verified.
func (s Solana) Client(n solana.Network) *solana.Client {
	return solana.NewPoolClient(s.RPCURLs(n), n, s.RPCTimeout).
		CheckChain(solana.ChainCheck{Variable: s.RPCVariable(n), LocalChain: s.LocalChain}).
		WithTokens(s.Assets.Tokens(n))
}

// RPCURLs are the nodes of a network.
func (s Solana) RPCURLs(n solana.Network) []string {
	if n == solana.Mainnet {
		return s.MainnetRPCURLs
	}
	return s.DevnetRPCURLs
}

// API configures cmd/api. It holds the wallet PUBLIC key only: the API can
// seal new wallet secrets but never open one.
type API struct {
	Common
	Solana
	Debug
	HTTPAddr        string // HTTP_ADDR
	WalletPublicKey string // WALLET_PUBLIC_KEY: base64 X25519 public key
	// WalletSigner (WALLET_SIGNER) is where new wallets' keys are made: local
	// (sealed here) or an HSM or a KMS, which a worker reaches for the API.
	WalletSigner    signer.Backend
	OpsUsername     string        // OPS_USERNAME: operator UI credentials
	OpsPassword     Secret        // OPS_PASSWORD
	ShutdownTimeout time.Duration // SHUTDOWN_TIMEOUT
	// SEND_TIMEOUT: how long a send waits for a worker's decision before
	// it is cancelled (503, never executed later).
	SendTimeout time.Duration
	Webhooks
	// SLACK_SIGNING_SECRET: the Slack app's signing secret, which
	// authenticates Approve/Reject clicks; unset refuses them.
	SlackSigningSecret Secret
	// RATE_LIMIT_READ, RATE_LIMIT_WRITE, RATE_LIMIT_SEND: requests per
	// minute per key for GETs, other writes, and sends.
	RateLimitRead, RateLimitWrite, RateLimitSend int
	// RateLimitAnonymous (RATE_LIMIT_ANONYMOUS) bounds requests without a
	// valid key per client address and minute.
	RateLimitAnonymous int
	// TrustedProxies (TRUSTED_PROXIES: CIDRs or addresses, comma
	// separated) are the reverse proxies whose X-Forwarded-For names the
	// client address that requests without a key are counted under. Empty
	// (the default) trusts none: the TCP peer is the client.
	TrustedProxies ratelimit.Proxies
	// MaxWallets (MAX_WALLETS_PER_ACCOUNT) and MaxWebhookEndpoints
	// (MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT) cap an account's wallets and
	// live webhook endpoints. The endpoints are listed whole, so at most
	// 100 (about 10 KiB each at worst).
	MaxWallets, MaxWebhookEndpoints int
	// PayPreference (PAY_PREFERENCE: mpp or x402, default mpp) is the
	// protocol the MCP tool pay_fetch pays when a seller offers both.
	PayPreference string
	// MaxWalletsByAgents (MAX_WALLETS_BY_AGENT_KEYS) and MaxKeysByAgents
	// (MAX_KEYS_BY_AGENT_KEYS) cap, per account, the wallets agent keys
	// created and the live keys agent keys created, so agents cannot fill
	// the account's caps.
	MaxWalletsByAgents, MaxKeysByAgents int
	// FeePayerDailyBudget (FEE_PAYER_DAILY_BUDGET_SOL, in SOL) is the
	// daily budget, in lamports, of a fee payer enabled without one.
	FeePayerDailyBudget int64
	// EventStreamsPerSession (EVENT_STREAMS_PER_SESSION),
	// EventStreamsPerPerson (EVENT_STREAMS_PER_PERSON: a person's sessions
	// in an account together) and EventStreamsPerAccount
	// (EVENT_STREAMS_PER_ACCOUNT) cap the dashboard's live event streams
	// open at once (429 past them).
	EventStreamsPerSession, EventStreamsPerPerson, EventStreamsPerAccount int
}

// Webhooks configures webhook delivery.
type Webhooks struct {
	// WEBHOOK_ALLOW_PRIVATE: test (devnet) accounts' webhook endpoints
	// may be saved with, and delivered to, loopback and private addresses
	// (local receivers). Live accounts never may, and it does not apply to
	// Slack's response_url.
	AllowPrivate bool
	// DashboardOrigin (DASHBOARD_ORIGIN, scheme://host[:port]) is where the
	// dashboard is served: the Sign-In With Solana domain, the only origin
	// of cookie-authenticated writes, and the base of the approval links
	// in Slack messages. Default http://127.0.0.1:8080.
	DashboardOrigin string
}

// webhooks reads the settings both the api and the worker use.
func (r *reader) webhooks() Webhooks {
	w := Webhooks{AllowPrivate: r.boolean("WEBHOOK_ALLOW_PRIVATE", false),
		DashboardOrigin: r.url("DASHBOARD_ORIGIN", "http://"+DefaultHTTPAddr, "http", "https")}
	if u, err := url.Parse(w.DashboardOrigin); err == nil && (u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil) {
		r.fail("DASHBOARD_ORIGIN", fmt.Sprintf("%q: want scheme://host[:port], nothing after it", w.DashboardOrigin))
	}
	w.DashboardOrigin = strings.TrimSuffix(w.DashboardOrigin, "/")
	return w
}

// Worker configures cmd/worker, the only process that opens wallet secrets.
type Worker struct {
	Common
	Solana
	Debug
	WalletMasterKey Secret        // WALLET_MASTER_KEY: base64 X25519 private key(s), comma separated
	Concurrency     int           // WORKER_CONCURRENCY
	Queues          string        // WORKER_QUEUES: comma separated, empty means all
	ShutdownTimeout time.Duration // SHUTDOWN_TIMEOUT: time given to in-flight tasks
	Webhooks
	// PriorityFees: PRIORITY_FEE_PERCENTILE, PRIORITY_FEE_MIN_MICROLAMPORTS,
	// PRIORITY_FEE_MAX_MICROLAMPORTS, PRIORITY_FEE_MAX_LAMPORTS.
	PriorityFees solana.FeePolicy
	// SEND_MAX_ATTEMPTS: how many transactions one payment may be signed
	// as; a new one only after the current one expired unseen (1 never
	// signs again).
	SendMaxAttempts int
	Signers         Signers
}

// Signers configures where wallet keys live (the worker's; the API reads
// only WALLET_SIGNER). A backend is configured when its settings are
// present, whatever the default: a fleet may hold wallets of several.
type Signers struct {
	// Default (WALLET_SIGNER: local, pkcs11, vault, awskms) is where new
	// wallets' keys are made; default local, the sealed envelope.
	Default signer.Backend
	PKCS11  PKCS11
	Vault   Vault
	AWSKMS  AWSKMS
}

// PKCS11 configures an HSM token: PKCS11_MODULE (the library's path),
// PKCS11_TOKEN_LABEL, PKCS11_PIN or PKCS11_PIN_FILE, PKCS11_SESSIONS.
type PKCS11 struct {
	Module, TokenLabel string
	PIN                Secret
	Sessions           int
}

// Vault configures Vault or OpenBao Transit: VAULT_ADDR, VAULT_TOKEN or
// VAULT_TOKEN_FILE, VAULT_TRANSIT_MOUNT (default transit), VAULT_NAMESPACE.
type Vault struct {
	Addr, Mount, Namespace string
	Token                  Secret
}

// AWSKMS configures AWS KMS: AWS_KMS_REGION (or AWS_REGION),
// AWS_KMS_ENDPOINT (a VPC endpoint), AWS_KMS_ALIAS_PREFIX; credentials come
// from the SDK's default chain (environment, shared files, instance role).
type AWSKMS struct {
	Region, Endpoint, AliasPrefix string
}

// Configured reports whether the backend b has settings.
func (s Signers) Configured(b signer.Backend) bool {
	switch b {
	case signer.Local:
		return true
	case signer.PKCS11:
		return s.PKCS11.Module != ""
	case signer.Vault:
		return s.Vault.Addr != ""
	case signer.AWSKMS:
		return s.AWSKMS.Region != ""
	}
	return false
}

// walletSigner reads WALLET_SIGNER, the one setting the API needs.
func (r *reader) walletSigner() signer.Backend {
	b, err := signer.ParseBackend(r.str("WALLET_SIGNER", "local"))
	if err != nil {
		r.fail("WALLET_SIGNER", err.Error())
	}
	return b
}

// signers reads the worker's signer settings.
func (r *reader) signers(concurrency int) Signers {
	s := Signers{
		Default: r.walletSigner(),
		PKCS11: PKCS11{
			Module:     r.str("PKCS11_MODULE", ""),
			TokenLabel: r.str("PKCS11_TOKEN_LABEL", ""),
			PIN:        Secret(r.secret("PKCS11_PIN", "PKCS11_PIN_FILE")),
			Sessions:   r.integer("PKCS11_SESSIONS", concurrency, 1, 1000),
		},
		Vault: Vault{
			Addr:      r.str("VAULT_ADDR", ""),
			Token:     Secret(r.secret("VAULT_TOKEN", "VAULT_TOKEN_FILE")),
			Mount:     r.str("VAULT_TRANSIT_MOUNT", "transit"),
			Namespace: r.str("VAULT_NAMESPACE", ""),
		},
		AWSKMS: AWSKMS{
			Region:      r.str("AWS_KMS_REGION", ""),
			Endpoint:    r.str("AWS_KMS_ENDPOINT", ""),
			AliasPrefix: r.str("AWS_KMS_ALIAS_PREFIX", "agentwallet-"),
		},
	}
	if s.AWSKMS.Region == "" && s.Default == signer.AWSKMS {
		s.AWSKMS.Region = r.str("AWS_REGION", "")
	}
	if s.PKCS11.Module != "" && (s.PKCS11.TokenLabel == "" || s.PKCS11.PIN == "") {
		r.fail("PKCS11_MODULE", "needs PKCS11_TOKEN_LABEL and PKCS11_PIN (or PKCS11_PIN_FILE)")
	}
	if !s.Configured(s.Default) {
		name := map[signer.Backend]string{signer.PKCS11: "PKCS11_MODULE", signer.Vault: "VAULT_ADDR", signer.AWSKMS: "AWS_KMS_REGION (or AWS_REGION)"}[s.Default]
		r.fail("WALLET_SIGNER", fmt.Sprintf("%s needs %s", s.Default, name))
	}
	return s
}

// secret reads a secret from the variable name, or from the file the
// variable file names (Docker and Kubernetes secrets), not both.
func (r *reader) secret(name, file string) string {
	v, path := r.str(name, ""), r.str(file, "")
	if path == "" {
		return v
	}
	if v != "" {
		r.fail(file, "set "+name+" or "+file+", not both")
		return ""
	}
	raw, err := readPrivate(path)
	if err != nil {
		r.fail(file, err.Error())
		return ""
	}
	return strings.TrimSpace(string(raw))
}

// readPrivate reads a secret's file (a PIN, a token) only when no one but
// its owner may read, write or run it (no bit of 0o077: 0600, 0400).
// Group or others reading it hold the secret without the host's root;
// writing it, they choose what the worker logs in with. The mode is read
// from the file opened, not from its path a second time.
func readPrivate(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s is mode %04o: make it readable by its owner only (chmod 600)", path, perm)
	}
	return io.ReadAll(f)
}

// Scheduler configures cmd/scheduler.
type Scheduler struct {
	Common
}

// Defaults for a local stack.
const (
	DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/agentwallet?sslmode=disable"
	DefaultRedisURL    = "redis://127.0.0.1:6379/0"
	DefaultRPCURL      = "http://127.0.0.1:8899"
	DefaultHTTPAddr    = "127.0.0.1:8080"
)

// LoadAPI reads and validates the API's configuration.
func LoadAPI(getenv Getenv) (API, error) {
	r := reader{getenv: getenv}
	c := API{
		Common:                 r.common(),
		Solana:                 r.solana(),
		Debug:                  r.debug(),
		HTTPAddr:               r.str("HTTP_ADDR", DefaultHTTPAddr),
		WalletPublicKey:        r.str("WALLET_PUBLIC_KEY", ""),
		WalletSigner:           r.walletSigner(),
		OpsUsername:            r.str("OPS_USERNAME", ""),
		OpsPassword:            Secret(r.str("OPS_PASSWORD", "")),
		ShutdownTimeout:        r.duration("SHUTDOWN_TIMEOUT", 20*time.Second),
		SendTimeout:            r.duration("SEND_TIMEOUT", 10*time.Second),
		Webhooks:               r.webhooks(),
		SlackSigningSecret:     Secret(r.str("SLACK_SIGNING_SECRET", "")),
		RateLimitRead:          r.integer("RATE_LIMIT_READ", 120, 1, 1_000_000),
		RateLimitWrite:         r.integer("RATE_LIMIT_WRITE", 60, 1, 1_000_000),
		RateLimitSend:          r.integer("RATE_LIMIT_SEND", 30, 1, 1_000_000),
		RateLimitAnonymous:     r.integer("RATE_LIMIT_ANONYMOUS", 60, 1, 1_000_000),
		TrustedProxies:         r.proxies("TRUSTED_PROXIES"),
		MaxWallets:             r.integer("MAX_WALLETS_PER_ACCOUNT", 10_000, 1, 10_000_000),
		MaxWebhookEndpoints:    r.integer("MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT", 50, 1, 100),
		MaxWalletsByAgents:     r.integer("MAX_WALLETS_BY_AGENT_KEYS", 100, 1, 10_000_000),
		MaxKeysByAgents:        r.integer("MAX_KEYS_BY_AGENT_KEYS", 20, 1, 100),
		FeePayerDailyBudget:    r.feePayerBudget(),
		PayPreference:          r.str("PAY_PREFERENCE", "mpp"),
		EventStreamsPerSession: r.integer("EVENT_STREAMS_PER_SESSION", 5, 1, 100),
		EventStreamsPerPerson:  r.integer("EVENT_STREAMS_PER_PERSON", 10, 1, 1000),
		EventStreamsPerAccount: r.integer("EVENT_STREAMS_PER_ACCOUNT", 100, 1, 100_000),
	}
	if c.PayPreference != "mpp" && c.PayPreference != "x402" {
		r.fail("PAY_PREFERENCE", "want mpp or x402")
	}
	if c.SendTimeout < 100*time.Millisecond || c.SendTimeout > 20*time.Second {
		r.fail("SEND_TIMEOUT", "want between 100ms and 20s (a request may take at most 30s)")
	}
	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		r.fail("HTTP_ADDR", "want host:port, e.g. 127.0.0.1:8080")
	}
	if c.WalletPublicKey == "" {
		r.fail("WALLET_PUBLIC_KEY", "is required (the worker's `keygen` prints one)")
	} else if _, err := signer.NewSealer(c.WalletPublicKey); err != nil {
		r.fail("WALLET_PUBLIC_KEY", err.Error())
	}
	if (c.OpsUsername == "") != (c.OpsPassword == "") {
		r.fail("OPS_PASSWORD", "OPS_USERNAME and OPS_PASSWORD are set together or not at all")
	}
	return c, r.err()
}

// LoadWorker reads and validates the worker's configuration.
func LoadWorker(getenv Getenv) (Worker, error) {
	r := reader{getenv: getenv}
	c := Worker{
		Common:          r.common(),
		Solana:          r.solana(),
		Debug:           r.debug(),
		WalletMasterKey: Secret(r.str("WALLET_MASTER_KEY", "")),
		Concurrency:     r.integer("WORKER_CONCURRENCY", 10, 1, 1000),
		Queues:          r.str("WORKER_QUEUES", ""),
		ShutdownTimeout: r.duration("SHUTDOWN_TIMEOUT", 20*time.Second),
		Webhooks:        r.webhooks(),
		PriorityFees:    r.priorityFees(),
		SendMaxAttempts: r.integer("SEND_MAX_ATTEMPTS", 3, 1, 10),
	}
	c.Signers = r.signers(c.Concurrency)
	if c.WalletMasterKey == "" {
		r.fail("WALLET_MASTER_KEY", "is required (`worker keygen` prints one)")
	} else if _, err := signer.NewKeystore(c.WalletMasterKey.Reveal()); err != nil {
		r.fail("WALLET_MASTER_KEY", err.Error())
	}
	for _, q := range strings.Split(c.Queues, ",") {
		if c.Queues != "" && !validQueue(strings.TrimSpace(q)) {
			r.fail("WORKER_QUEUES", fmt.Sprintf("%q is not a queue name (letters, digits, _ : -)", q))
		}
	}
	return c, r.err()
}

// LoadScheduler reads and validates the scheduler's configuration.
func LoadScheduler(getenv Getenv) (Scheduler, error) {
	r := reader{getenv: getenv}
	c := Scheduler{Common: r.common()}
	return c, r.err()
}

// LoadCommon reads only the shared part, for one-shot commands (migrate,
// bootstrap) that need no keys.
func LoadCommon(getenv Getenv) (Common, error) {
	r := reader{getenv: getenv}
	c := r.common()
	return c, r.err()
}

func validQueue(q string) bool {
	if q == "" {
		return false
	}
	for _, c := range q {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// reader collects every problem so one start shows them all.
type reader struct {
	getenv Getenv
	errs   []error
}

func (r *reader) fail(name, msg string) {
	r.errs = append(r.errs, fmt.Errorf("%s: %s", name, msg))
}

func (r *reader) err() error { return errors.Join(r.errs...) }

func (r *reader) str(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.fail(name, fmt.Sprintf("%q is not a positive duration like 5s", v))
		return def
	}
	return d
}

func (r *reader) boolean(name string, def bool) bool {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(name, fmt.Sprintf("%q is not true or false", v))
		return def
	}
	return b
}

func (r *reader) integer(name string, def, lo, hi int) int {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		r.fail(name, fmt.Sprintf("%q is not an integer in [%d, %d]", v, lo, hi))
		return def
	}
	return n
}

// priorityFees reads the fee policy; a maximum below the minimum names
// the maximum.
func (r *reader) priorityFees() solana.FeePolicy {
	d := solana.DefaultFeePolicy
	p := solana.FeePolicy{
		Percentile:       r.integer("PRIORITY_FEE_PERCENTILE", d.Percentile, 1, 100),
		MinMicroLamports: uint64(r.integer("PRIORITY_FEE_MIN_MICROLAMPORTS", int(d.MinMicroLamports), 0, 1_000_000_000_000)),
		MaxMicroLamports: uint64(r.integer("PRIORITY_FEE_MAX_MICROLAMPORTS", int(d.MaxMicroLamports), 0, 1_000_000_000_000)),
		// At most 10 SOL of priority fee on one payment.
		MaxLamports: uint64(r.integer("PRIORITY_FEE_MAX_LAMPORTS", int(d.MaxLamports), 1, 10*solana.LamportsPerSOL)),
	}
	if p.MaxMicroLamports < p.MinMicroLamports {
		r.fail("PRIORITY_FEE_MAX_MICROLAMPORTS", fmt.Sprintf("%d is below PRIORITY_FEE_MIN_MICROLAMPORTS (%d)", p.MaxMicroLamports, p.MinMicroLamports))
		p.MaxMicroLamports = p.MinMicroLamports
	}
	return p
}

// feePayerBudget reads FEE_PAYER_DAILY_BUDGET_SOL: above 0, at most
// feepayer.MaxBudget, in lamports.
func (r *reader) feePayerBudget() int64 {
	const name = "FEE_PAYER_DAILY_BUDGET_SOL"
	v := r.str(name, "")
	if v == "" {
		return feepayer.DefaultBudget
	}
	l, err := solana.ParseSOL(v)
	switch {
	case err != nil:
		r.fail(name, fmt.Sprintf("%q %v", v, err))
	case l <= 0 || l > feepayer.MaxBudget:
		r.fail(name, fmt.Sprintf("%q: want above 0 and at most %d SOL", v, feepayer.MaxBudget/solana.LamportsPerSOL))
	}
	return l
}

func (r *reader) proxies(name string) ratelimit.Proxies {
	ps, err := ratelimit.ParseProxies(r.str(name, ""))
	if err != nil {
		r.fail(name, err.Error())
	}
	return ps
}

func (r *reader) url(name, def string, schemes ...string) string {
	v := r.str(name, def)
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		r.fail(name, fmt.Sprintf("%q is not a URL", redact(v)))
		return v
	}
	for _, s := range schemes {
		if u.Scheme == s {
			return v
		}
	}
	r.fail(name, fmt.Sprintf("scheme %q is not one of %s", u.Scheme, strings.Join(schemes, ", ")))
	return v
}

// urls reads a comma-separated list of URLs, each checked as url does.
func (r *reader) urls(name, def string, schemes ...string) []string {
	var out []string
	for _, v := range strings.Split(r.str(name, def), ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || u.Host == "" {
			r.fail(name, fmt.Sprintf("%q is not a URL", redact(v)))
			continue
		}
		if !slices.Contains(schemes, u.Scheme) {
			r.fail(name, fmt.Sprintf("scheme %q is not one of %s", u.Scheme, strings.Join(schemes, ", ")))
			continue
		}
		if slices.Contains(out, v) {
			// One node twice would be failed over to itself and sent
			// every broadcast twice.
			r.fail(name, fmt.Sprintf("%q is listed twice", redact(v)))
			continue
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		r.fail(name, "no URL given")
	}
	return out
}

func (r *reader) common() Common {
	c := Common{
		DatabaseURL: r.url("DATABASE_URL", DefaultDatabaseURL, "postgres", "postgresql"),
		Redis:       r.redis(),
	}
	switch lvl := strings.ToLower(r.str("LOG_LEVEL", "info")); lvl {
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "info":
		c.LogLevel = slog.LevelInfo
	case "warn":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		r.fail("LOG_LEVEL", fmt.Sprintf("%q is not one of debug, info, warn, error", lvl))
	}
	return c
}

// debug reads PPROF_ADDR: empty, or a loopback host:port.
func (r *reader) debug() Debug {
	const name = "PPROF_ADDR"
	d := Debug{PprofAddr: r.str(name, "")}
	if d.PprofAddr == "" {
		return d
	}
	host, port, err := net.SplitHostPort(d.PprofAddr)
	if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil {
		r.fail(name, fmt.Sprintf("%q: want host:port, e.g. 127.0.0.1:6060", d.PprofAddr))
		return d
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		r.fail(name, fmt.Sprintf("%q: only a loopback address (127.0.0.1, ::1, localhost) is accepted", d.PprofAddr))
	}
	return d
}

func (r *reader) solana() Solana {
	assets, err := asset.Defaults().With(r.str("ASSETS", ""))
	if err != nil {
		r.errs = append(r.errs, err) // names ASSETS itself
	}
	return Solana{
		DevnetRPCURLs:  r.urls("SOLANA_RPC_URL_DEVNET", DefaultRPCURL, "http", "https"),
		MainnetRPCURLs: r.urls("SOLANA_RPC_URL_MAINNET", DefaultRPCURL, "http", "https"),
		RPCTimeout:     r.duration("SOLANA_RPC_TIMEOUT", 5*time.Second),
		LocalChain:     r.boolean("SOLANA_LOCAL_CHAIN", false),
		Assets:         assets,
	}
}

// redact hides a password in a URL before it reaches an error message.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	// A provider's key may be in the query or the path as well as the
	// password: only scheme, user and host are shown then.
	if u.RawQuery != "" || (u.Path != "" && u.Path != "/") {
		return (&url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host}).Redacted() + "/… (redacted)"
	}
	return u.Redacted()
}
