// Package httpapi is the HTTP face of the service: huma operations under
// /api/public/v1 (one file per resource), operator routes, and the mapping
// of domain errors to statuses (errors.go). It holds no wallet secrets.
package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/dashboard"
	"github.com/agentwallet/agentwallet/internal/handoff"
	"github.com/agentwallet/agentwallet/internal/live"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// Prefix is where the public REST API lives.
const Prefix = "/api/public/v1"

// MaxBodyBytes bounds every request body (64 KiB); larger answers 413.
const MaxBodyBytes = 64 << 10

// Balances reads a wallet's live balance on one network.
type Balances interface {
	Balance(ctx context.Context, network solana.Network, owner string) (solana.Balance, error)
}

// Deps is what the API needs. Nil fields disable what uses them (the
// OpenAPI generator builds the API with none).
type Deps struct {
	DB     *bun.DB
	Redis  *redis.Client
	Sealer wallet.Sealer
	// Keys makes new wallets' keys where WALLET_SIGNER says: nil is the
	// envelope (Sealer); an HSM's or a KMS's through a worker (keymaker).
	Keys signer.Maker
	// Exports wakes a worker to seal an approved export and reads it
	// back (keymaker); nil: approvals are answered without waiting.
	Exports  ExportSealing
	Balances Balances
	// Assets are the tokens of each network (nil: asset.Defaults).
	Assets asset.Table
	// AssetFacts are the facts GET /assets shows of each asset's mint, as
	// last read on chain; nil reads them through Balances when it is a
	// solana.Clients, else GET /assets shows none.
	AssetFacts *asset.Book
	Log        *slog.Logger
	Ops        OpsConfig
	// SendWait bounds how long a send waits for its decision (default
	// DefaultSendWait); past it the send is cancelled and answers 503.
	SendWait time.Duration
	// WebhookAllowPrivate lets test accounts register webhook URLs on
	// loopback and private addresses.
	WebhookAllowPrivate bool
	// SlackSigningSecret verifies Slack button clicks; empty refuses them.
	SlackSigningSecret string
	// SlackResponseURLPrefix replaces https://hooks.slack.com/ as where a
	// click's response_url must point, and lets the message update reach
	// it on any address. Tests set it to their local receivers; no setting
	// of the binaries does (WEBHOOK_ALLOW_PRIVATE never applies here).
	SlackResponseURLPrefix string
	// RateLimits per key and minute; nil disables limiting (the api binary
	// always sets them).
	RateLimits *ratelimit.Limits
	// RateLimitClock is the rate limiter's clock (nil: time.Now); a test
	// that counts many requests holds it inside one window.
	RateLimitClock func() time.Time
	// PayPreference is the protocol /mcp's pay_fetch pays when a seller
	// offers both (mcpserver.PreferMPP, the default, or PreferX402).
	PayPreference string
	// DashboardOrigin is where the dashboard is served (scheme://host:port):
	// the Sign-In With Solana domain and URI, and the only Origin whose
	// cookie-authenticated unsafe requests are served.
	DashboardOrigin string
	// MaxWallets and MaxWebhookEndpoints cap an account's wallets and live
	// endpoints (409 past them); 0 takes wallet.DefaultMaxWallets and
	// webhook.DefaultMaxEndpoints.
	MaxWallets, MaxWebhookEndpoints int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client address that requests without a key are counted under;
	// nil trusts none (the TCP peer is the client).
	TrustedProxies ratelimit.Proxies
	// MaxWalletsByAgents and MaxKeysByAgents cap the wallets and the live
	// keys that agent keys create in an account (409 past them); 0 takes
	// wallet.DefaultMaxByAgents and auth.DefaultMaxKeysByAgents.
	MaxWalletsByAgents, MaxKeysByAgents int
	// Faucet funds wallets on a local chain (POST /wallets/{id}/fund);
	// nil on public chains, where that route answers 409.
	Faucet Faucet
	// FeePayerDailyBudget is the daily budget, in lamports, of a fee
	// payer enabled without one (FEE_PAYER_DAILY_BUDGET_SOL); 0 takes
	// feepayer.DefaultBudget.
	FeePayerDailyBudget int64
	// EventStreams bounds and paces the dashboard's event streams (zero
	// fields take the defaults).
	EventStreams EventStreams
	// Draining, when closed, ends every open event stream (saying so):
	// the server is shutting down, and Shutdown waits for no stream. Nil:
	// streams end only with the handler's release func.
	Draining <-chan struct{}
	// PolicyClock, when set, is the time previews decide at (as the
	// worker's payment.Engine.PolicyClock); nil reads the database's
	// clock, as decisions do. Tests set it.
	PolicyClock func() time.Time
}

// RedisTimeout bounds the API's Redis dials and calls (config.Redis.Open),
// and each call's own deadline is honoured (the rate limiter's is 500 ms),
// so an unreachable Redis answers 503 quickly instead of hanging.
const RedisTimeout = 2 * time.Second

type server struct {
	Deps
	log      *slog.Logger
	metrics  httpMetrics
	waiter   *payment.Waiter
	sendWait time.Duration
	// payments is the payment path's API side: handlers parse, it
	// records, hands off and waits, and they map its outcome.
	payments *payment.Gateway
	limiter  *ratelimit.Limiter

	slackOnce sync.Once
	slackHTTP *http.Client

	x402FetchOnce           sync.Once
	x402Public, x402Private *http.Client // x402_fetch's clients (x402Fetcher)
	// x402InFlight bounds each key's x402_fetch calls fetching at once.
	x402InFlight ratelimit.InFlight

	// The dashboard's event streams (events.go); hub and leases are nil
	// without a database and Redis.
	streams EventStreams
	hub     *live.Hub
	leases  *live.Leases
}

// NewAPI registers every public operation on mux and returns the huma API
// (whose OpenAPI document is the contract).
func NewAPI(mux *http.ServeMux, d Deps) huma.API {
	return newServer(d).newAPI(mux)
}

// New builds the whole HTTP handler: public API, operator routes, and
// JSON answers for unknown routes and methods. The returned func releases
// what the operator routes hold.
func New(d Deps) (http.Handler, func()) {
	s := newServer(d)
	mux := http.NewServeMux()
	s.newAPI(mux)
	mux.HandleFunc("POST "+SlackInteractionsPath, s.slackInteraction)
	s.registerSession(mux)
	mux.HandleFunc("GET "+EventsPath, s.events)
	stopStreams := s.startStreams()
	mux.Handle("GET "+dashboard.Path, dashboard.Handler())
	mux.Handle("GET /dashboard", http.RedirectHandler(dashboard.Path, http.StatusMovedPermanently))
	var root http.Handler // the whole API, for the MCP tools' calls
	mux.Handle(MCPPath, s.mcpHandler(&root))
	closeOps := s.registerOps(mux)
	stopWaiter := func() {}
	if d.Redis != nil {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.waiter.Run(ctx, d.Redis, s.log) }()
		stopWaiter = func() { cancel(); <-done }
	}
	root = s.instrument(mux)
	return root, func() { stopStreams(); stopWaiter(); closeOps() }
}

// policyTime is when a preview decides: the PolicyClock's time, or zero
// (the database's clock).
func (s *server) policyTime() time.Time {
	if s.PolicyClock == nil {
		return time.Time{}
	}
	return s.PolicyClock()
}

func newServer(d Deps) *server {
	useErrorShape()
	s := &server{Deps: d, log: d.Log, metrics: newHTTPMetrics(), waiter: payment.NewWaiter(), sendWait: d.SendWait,
		x402InFlight: ratelimit.InFlight{Max: x402FetchesInFlight}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if clients, ok := d.Balances.(solana.Clients); ok && s.AssetFacts == nil {
		nodes := map[solana.Network]asset.Mints{}
		for n, c := range clients {
			nodes[n] = c
		}
		s.AssetFacts = asset.NewBook(d.Assets, nodes)
	}
	s.log = slog.New(requestIDHandler{s.log.Handler()})
	if s.sendWait <= 0 {
		s.sendWait = DefaultSendWait
	}
	s.payments = &payment.Gateway{DB: d.DB, Handoff: handoff.Redis{Client: d.Redis}, Outcomes: s.waiter,
		Wait: s.sendWait, Grace: sendGrace, Log: s.log}
	if d.RateLimits != nil && d.Redis != nil {
		s.limiter = &ratelimit.Limiter{Redis: d.Redis, Limits: *d.RateLimits, Now: d.RateLimitClock}
	}
	return s
}

func (s *server) newAPI(mux *http.ServeMux) huma.API {
	cfg := huma.DefaultConfig("Agent Wallet API", "1.0.0")
	cfg.CreateHooks = nil // no $schema field, no Link header
	cfg.Formats = map[string]huma.Format{"application/json": jsonFormat, "json": jsonFormat}
	cfg.OpenAPIPath = Prefix + "/openapi"
	cfg.DocsPath = Prefix + "/docs"
	cfg.SchemasPath = Prefix + "/schemas"
	cfg.Info.Description = "USDC wallets on Solana for AI agents, gated by per-wallet spending policies. " +
		"Every route needs `Authorization: Bearer <API_KEY>`; keys start with `svc_test_` (devnet) or `svc_live_` (mainnet). " +
		"Errors answer `{\"error\": \"...\"}`. Amounts are JSON numbers in whole USDC with at most 6 decimals. " +
		"Operations without a request body refuse one (send none, or `{}`). Every answer carries `X-Request-Id` (the caller's, when it sends one of 1 to 128 characters of `[A-Za-z0-9._:-]`)."
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "An API key: svc_test_… or svc_live_…"},
	}
	cfg.Security = []map[string][]string{{"bearer": {}}}
	api := humago.New(mux, cfg)
	api.UseMiddleware(s.authenticate(api), s.authorize(api), refuseBody(api))

	s.registerAgents(api)
	s.registerWallets(api)
	s.registerExports(api)
	s.registerHistory(api)
	s.registerDifferences(api)
	s.registerAssets(api)
	s.registerSend(api)
	s.registerTransactions(api)
	s.registerApprovals(api)
	s.registerApprovalContext(api)
	s.registerKeys(api)
	s.registerAudit(api)
	s.registerAnalytics(api)
	s.registerWebhooks(api)
	s.registerUsers(api)
	s.registerFeePayer(api)
	s.registerAccountSettings(api)
	s.registerX402(api)
	s.registerMPP(api)
	documentRateLimits(api)
	documentPermissions(api)
	documentOtherSuccesses(api)
	return api
}

// documentOtherSuccesses gives a second success status of an operation
// (send's 202 pending_approval, approve's 202 signing) the body schema of
// its first: the handler answers the same body type with either, and
// generated clients would otherwise type it as empty.
func documentOtherSuccesses(api huma.API) {
	for _, item := range api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Patch, item.Put, item.Delete} {
			if op == nil {
				continue
			}
			var body map[string]*huma.MediaType
			for _, code := range []string{"200", "201"} {
				if r := op.Responses[code]; r != nil && r.Content != nil {
					body = r.Content
				}
			}
			for code, r := range op.Responses {
				if strings.HasPrefix(code, "2") && code != "204" && r.Content == nil && body != nil {
					r.Content = body
				}
			}
		}
	}
}

// documentRateLimits adds the 429 answer to every operation that takes a
// key, in the document, shaped like its 401.
func documentRateLimits(api huma.API) {
	for _, item := range api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Patch, item.Put, item.Delete} {
			if op == nil || op.Responses["401"] == nil || op.Responses["429"] != nil {
				continue
			}
			r := *op.Responses["401"]
			r.Description = "Rate limited: over the key's requests per minute for this kind of request (GET 120, POST 60, send 30 by default); Retry-After says when to try again."
			op.Responses["429"] = &r
		}
	}
}

type principalKey struct{}

// authTimeout bounds the key lookup: with the database unreachable every
// keyed route answers 503 within it (inside the 2 s a client is
// promised); a loaded database still answers a burst of lookups in time.
const authTimeout = 1500 * time.Millisecond

// authenticate resolves the principal of every public operation: a
// bearer key, or else a dashboard session's cookie (whose unsafe requests
// must carry its CSRF token and come from the dashboard's origin, else
// 403 and nothing runs). Any failure to authenticate is 401
// {"error":"Unauthorized"} without saying which.
func (s *server) authenticate(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		const bearer = "Bearer "
		h := ctx.Header("Authorization")
		var p auth.Principal
		err := auth.ErrUnauthorized
		c, cancel := context.WithTimeout(ctx.Context(), authTimeout)
		switch token := s.sessionToken(ctx.Header("Cookie")); {
		case len(h) > len(bearer) && strings.EqualFold(h[:len(bearer)], bearer):
			p, err = auth.Authenticate(c, s.DB, h[len(bearer):])
		case h == "" && token != "":
			var csrf string
			p, csrf, err = auth.SessionPrincipal(c, s.DB, token)
			if err == nil && unsafeMethod(ctx.Method()) {
				if msg := s.checkCSRF(ctx.Header("Origin"), ctx.Header(CSRFHeader), csrf); msg != "" {
					cancel()
					s.log.WarnContext(ctx.Context(), "dashboard request refused", "reason", msg, "user", p.User)
					huma.WriteErr(api, ctx, http.StatusForbidden, msg)
					return
				}
			}
		}
		cancel()
		switch {
		case errors.Is(err, auth.ErrUnauthorized):
			// Counted per client address: guessing keys is limited too.
			if s.limit(api, ctx, "ip:"+s.humaClient(ctx), ratelimit.Anonymous, false) {
				ctx.SetHeader("WWW-Authenticate", `Bearer realm="api"`)
				huma.WriteErr(api, ctx, http.StatusUnauthorized, "Unauthorized")
			}
		case err != nil:
			// The key could not be checked (database down or slow): the
			// caller may retry; never a 500 or a guess.
			s.log.WarnContext(ctx.Context(), "authentication unavailable", "err", err)
			limitAnswer{result: s.unknownLimit(bucketOf(ctx.Operation()))}.headers(ctx.SetHeader)
			huma.WriteErr(api, ctx, http.StatusServiceUnavailable, "authentication unavailable; try again")
		default:
			if countedByTool(ctx.Context(), p, ctx.Operation()) || s.limit(api, ctx, p.ActorID(), bucketOf(ctx.Operation()), true) {
				next(huma.WithValue(ctx, principalKey{}, p))
			}
		}
	}
}

// limitTimeout bounds the rate limiter's Redis call.
const limitTimeout = 500 * time.Millisecond

// bucketOf is the rate-limit bucket of an operation.
func bucketOf(op *huma.Operation) ratelimit.Bucket {
	switch {
	case op.Method == http.MethodGet:
		return ratelimit.Read
	case op.Path == Prefix+"/agents/{id}/send", op.Path == Prefix+"/agents/{id}/x402/pay", op.Path == Prefix+"/agents/{id}/mpp/pay":
		// An x402 or MPP payment is a send to the seller: one bucket.
		return ratelimit.Send
	}
	return ratelimit.Write
}

// limit counts the request under key in bucket and sets the rate-limit
// headers (they stay on every answer, errors included). Over the limit it
// answers 429 with Retry-After and returns false. Without Redis a keyed
// request (failClosed) is refused (503): nothing runs unmetered, and the
// queue a send or an approve needs is down anyway; an unkeyed one goes on
// to its 401.
func (s *server) limit(api huma.API, ctx huma.Context, key string, bucket ratelimit.Bucket, failClosed bool) bool {
	a := s.count(ctx.Context(), key, bucket, 1, failClosed)
	a.headers(ctx.SetHeader)
	if a.status != 0 {
		huma.WriteErr(api, ctx, a.status, a.message)
		return false
	}
	return true
}

// unknownLimit is the result to show when nothing was counted.
func (s *server) unknownLimit(b ratelimit.Bucket) ratelimit.Result {
	if s.limiter == nil {
		return ratelimit.Result{}
	}
	return s.limiter.Unknown(b)
}

// refuseBody holds operations that take no body to having none: a body
// that is not empty, null or {} is refused (400 when it is not JSON, 422
// otherwise, 413 past MaxBodyBytes) rather than silently ignored, so a
// client that meant to send something learns it was not read.
func refuseBody(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		if ctx.Operation().RequestBody != nil {
			next(ctx)
			return
		}
		raw, err := io.ReadAll(io.LimitReader(ctx.BodyReader(), MaxBodyBytes+1))
		var v any
		switch {
		case err != nil:
			huma.WriteErr(api, ctx, http.StatusBadRequest, "could not read request body")
		case len(raw) > MaxBodyBytes:
			huma.WriteErr(api, ctx, http.StatusRequestEntityTooLarge, "")
		case len(bytes.TrimSpace(raw)) == 0:
			next(ctx)
		case unmarshalJSON(raw, &v) != nil:
			huma.WriteErr(api, ctx, http.StatusBadRequest, "malformed JSON body: this operation takes no body, and what was sent is not JSON")
		default:
			obj, isObj := v.(map[string]any)
			switch {
			case v == nil || isObj && len(obj) == 0:
				next(ctx)
			case isObj:
				names := slices.Sorted(maps.Keys(obj))
				huma.WriteErr(api, ctx, http.StatusUnprocessableEntity, "", &huma.ErrorDetail{
					Location: "body." + names[0], Message: "unexpected property: this operation takes no body"})
			default:
				huma.WriteErr(api, ctx, http.StatusUnprocessableEntity, "body: this operation takes no body (send none, or {})")
			}
		}
	}
}

func principal(ctx context.Context) auth.Principal {
	return ctx.Value(principalKey{}).(auth.Principal)
}

// parseID reads a UUID path parameter; a malformed id is simply not found.
func parseID(s string) (uuid.UUID, bool) {
	id, err := uuid.Parse(s)
	return id, err == nil
}
