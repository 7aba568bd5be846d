package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/danielgtaylor/huma/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/mcpserver"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// MCPPath serves the MCP server over streamable HTTP; the caller's API key
// is its bearer token.
const MCPPath = "/mcp"

// inProcess carries a client's requests to the API's own handler: the MCP
// tools call the public API as the caller, through every middleware
// (authentication, permissions, rate limits), without a network hop.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// mcpKeyOf carries the caller's admitted key to the MCP server it builds.
type mcpKeyOf struct{}

// mcpCaller is the admitted key and who it is: its principal, whose
// actor names its rate-limit buckets.
type mcpCaller struct {
	key       string
	principal auth.Principal
}

func (c mcpCaller) actor() string { return c.principal.ActorID() }

// mcpHandler is the MCP endpoint over api (the whole API handler).
// Stateless: each request builds a server whose tools act with that
// request's key, so no session outlives or outranks its key.
func (s *server) mcpHandler(api *http.Handler) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return s.mcpServer(r.Context().Value(mcpKeyOf{}).(mcpCaller), *api)
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, ok := s.mcpAuthenticate(w, r)
		if !ok {
			return
		}
		// The API's bound on bodies: the SDK would read any size.
		raw, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
		switch {
		case err != nil:
			writeError(w, http.StatusBadRequest, "could not read request body")
			return
		case len(raw) > MaxBodyBytes:
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d KiB", MaxBodyBytes>>10))
			return
		}
		// Every message counts on its own. A tool call is counted where
		// it acts (countToolCalls); anything else (initialize,
		// tools/list, ping, a notification) acts on nothing, and is
		// counted here as a read.
		if n := readsAtMCP(raw); n > 0 && !s.limitHTTPN(w, r, caller.actor(), ratelimit.Read, n, true) {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mcpKeyOf{}, caller)))
	})
}

// mcpAuthenticate admits an /mcp request by its bearer key as the API's
// authenticate does: no valid key is 401 {"error":"Unauthorized"},
// counted in the client's anonymous bucket (429 past it; its headers on
// both); a key that cannot be checked (database down) is a fixed 503,
// never the driver's text. A valid key's messages are counted by the
// handler: each on its own, a tool call before it acts.
func (s *server) mcpAuthenticate(w http.ResponseWriter, r *http.Request) (mcpCaller, bool) {
	const bearer = "Bearer "
	h := r.Header.Get("Authorization")
	err := auth.ErrUnauthorized
	var key string
	var p auth.Principal
	if len(h) > len(bearer) && strings.EqualFold(h[:len(bearer)], bearer) {
		key = h[len(bearer):]
		c, cancel := context.WithTimeout(r.Context(), authTimeout)
		p, err = auth.Authenticate(c, s.DB, key)
		cancel()
	}
	switch {
	case errors.Is(err, auth.ErrUnauthorized):
		if s.limitHTTP(w, r, "ip:"+s.requestClient(r), ratelimit.Anonymous, false) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="api"`)
			writeError(w, http.StatusUnauthorized, "Unauthorized")
		}
		return mcpCaller{}, false
	case err != nil:
		s.log.WarnContext(r.Context(), "authentication unavailable", "err", err)
		limitAnswer{result: s.unknownLimit(ratelimit.Anonymous)}.headers(w.Header().Set)
		writeError(w, http.StatusServiceUnavailable, "authentication unavailable; try again")
		return mcpCaller{}, false
	}
	return mcpCaller{key: key, principal: p}, true
}

// readsAtMCP is how many reads a /mcp body counts at /mcp itself: one for
// each JSON-RPC message that is not a tools/call request (those are
// counted where they act), and one for a body that is no message at all
// (what does not parse, an empty batch).
func readsAtMCP(body []byte) int {
	var batch []json.RawMessage
	if err := json.Unmarshal(body, &batch); err != nil {
		batch = []json.RawMessage{body}
	}
	if len(batch) == 0 {
		return 1
	}
	n := 0
	for _, m := range batch {
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(m, &msg) != nil || msg.Method != methodCallTool {
			n++
		}
	}
	return n
}

// methodCallTool is the JSON-RPC method of a tool call.
const methodCallTool = "tools/call"

// mcpServer is the MCP server of one /mcp request: its tools act with the
// caller's key through api in process, and every tool call is counted
// before it acts (countToolCalls, admitX402).
func (s *server) mcpServer(caller mcpCaller, api http.Handler) *mcp.Server {
	hc := &http.Client{Transport: inProcess{api}}
	c := client.New("http://in-process", caller.key, client.WithRetries(0), client.WithHTTPClient(hc))
	srv := mcpserver.New(c, s.DashboardOrigin, mcpserver.WithX402(s.x402Fetcher(caller.principal.Network)),
		mcpserver.WithX402Admission(s.admitX402(caller)), mcpserver.WithPayPreference(s.PayPreference))
	srv.AddReceivingMiddleware(s.countToolCalls(caller))
	return srv
}

// toolCall is how one /mcp tool call has been counted. It rides in the
// context of the call, and so of the API requests its tool makes in
// process (which no outside request can carry).
type toolCall struct {
	actor string
	// counted: something was counted for the call (an API request of
	// its tool, or x402_fetch's send).
	counted atomic.Bool
	// sendCounted: x402_fetch counted its send before fetching, so the
	// x402 payment it may then make is not counted again (once).
	sendCounted atomic.Bool
}

type toolCallKey struct{}

// countToolCalls counts every tools/call message of the caller on its own:
// a tool counts where it acts (the API requests it makes under the key,
// in their buckets; x402_fetch in the send bucket before it fetches), and
// a call that reached nothing (an unknown tool, arguments the schema or
// the tool refused) counts as a read of the key; past the read limit its
// answer is the rate limit's.
func (s *server) countToolCalls(caller mcpCaller) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != methodCallTool {
				return next(ctx, method, req)
			}
			tc := &toolCall{actor: caller.actor()}
			res, err := next(context.WithValue(ctx, toolCallKey{}, tc), method, req)
			if tc.counted.Load() {
				return res, err
			}
			if a := s.count(ctx, caller.actor(), ratelimit.Read, 1, true); a.status != 0 {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: a.toolError().Error()}}}, nil
			}
			return res, err
		}
	}
}

// countedByTool reports whether a request of a /mcp tool call's tool is
// already counted: the payment (x402 or MPP) of an x402_fetch or
// pay_fetch, whose send was counted before it fetched (once per call). Any other request of a tool
// call is counted as every request is, and marks its call counted.
func countedByTool(ctx context.Context, p auth.Principal, op *huma.Operation) bool {
	tc, ok := ctx.Value(toolCallKey{}).(*toolCall)
	if !ok || tc.actor != p.ActorID() {
		return false
	}
	if (op.OperationID == opX402Pay || op.OperationID == opMPPPay) && tc.sendCounted.CompareAndSwap(true, false) {
		return true
	}
	tc.counted.Store(true)
	return false
}

// opX402Pay is the operation x402_fetch pays through, and the permission
// it needs.
const opX402Pay = "x402-pay"

// opMPPPay is the operation pay_fetch pays an MPP charge through.
const opMPPPay = "mpp-pay"

// x402FetchesInFlight is how many x402_fetch calls of one key fetch at
// once in one API process; more wait for a slot within the call's
// mcpserver.X402FetchTimeout.
const x402FetchesInFlight = 4

// admitX402 admits one x402_fetch of caller before it fetches, in this
// order: it counts in the key's send bucket (it may pay; its payment is
// then not counted again), checks the caller may pay x402 challenges
// (403, audited, as the API refuses) and reaches the wallet (404 for
// another account's, a missing one, or one outside a scoped key), and
// waits for one of the key's x402FetchesInFlight slots. A refusal is a
// tool error naming the status, as the API's answers are.
func (s *server) admitX402(caller mcpCaller) mcpserver.Admit {
	return func(ctx context.Context, walletID string) (func(), error) {
		tc, _ := ctx.Value(toolCallKey{}).(*toolCall)
		if tc != nil {
			tc.counted.Store(true)
		}
		if a := s.count(ctx, caller.actor(), ratelimit.Send, 1, true); a.status != 0 {
			return nil, a.toolError()
		}
		p := caller.principal
		ctx = context.WithValue(ctx, principalKey{}, p)
		if auth.Can(p, opX402Pay) == auth.Refused {
			d := auth.Deny(p, opX402Pay)
			if id, ok := parseID(walletID); ok {
				d.Target = wallet.Target(id)
			}
			return nil, apiToolError(s.denied(ctx, d))
		}
		if _, err := s.wallet(ctx, walletID); err != nil {
			return nil, apiToolError(err)
		}
		release, err := s.x402InFlight.Acquire(ctx, caller.actor())
		if err != nil {
			return nil, fmt.Errorf("this key's other x402_fetch calls (at most %d at a time) did not finish in time; try again", x402FetchesInFlight)
		}
		if tc != nil {
			tc.sendCounted.Store(true)
		}
		return release, nil
	}
}

// apiToolError words an API error for a model as the tools word the API's
// answers: "the service answered 404: agent not found".
func apiToolError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return fmt.Errorf("the service answered %d: %s", e.status, e.Message)
	}
	return err
}

// x402Fetcher is the HTTP client x402_fetch reaches sellers with from the
// API process: the webhook deliveries' SSRF guard (public addresses only,
// checked on the address dialled, no proxy), so a key cannot make the
// service reach its own network; test (devnet) accounts may reach private
// addresses when WebhookAllowPrivate is set, as their webhooks may. The
// timeout covers the whole exchange; redirects are followed up to 5, each
// dial guarded.
func (s *server) x402Fetcher(network solana.Network) *http.Client {
	s.x402FetchOnce.Do(func() {
		public := *webhook.Client(false)
		public.Timeout, public.CheckRedirect = mcpserver.X402FetchTimeout, mcpserver.LimitRedirects
		s.x402Public, s.x402Private = &public, &public
		if s.WebhookAllowPrivate {
			private := *webhook.Client(true)
			private.Timeout, private.CheckRedirect = mcpserver.X402FetchTimeout, mcpserver.LimitRedirects
			s.x402Private = &private
		}
	})
	if network == solana.Mainnet {
		return s.x402Public
	}
	return s.x402Private
}
