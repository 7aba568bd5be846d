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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/mcpserver"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/solana"
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

// mcpCaller is the admitted key, whose rate-limit bucket it is (its
// actor), and its account's network.
type mcpCaller struct {
	key     string
	actor   string
	network solana.Network
}

// mcpHandler is the MCP endpoint over api (the whole API handler).
// Stateless: each request builds a server whose tools act with that
// request's key, so no session outlives or outranks its key.
func (s *server) mcpHandler(api *http.Handler) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		caller := r.Context().Value(mcpKeyOf{}).(mcpCaller)
		hc := &http.Client{Transport: inProcess{*api}}
		c := client.New("http://in-process", caller.key, client.WithRetries(0), client.WithHTTPClient(hc))
		return mcpserver.New(c, s.DashboardOrigin, mcpserver.WithX402(s.x402Fetcher(caller.network)))
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
		// A tool call is counted where it acts: each is an API request
		// under the key. Anything else (initialize, tools/list, ping, a
		// notification) acts on nothing, and is counted here as a read.
		if !onlyToolCalls(raw) && !s.limitHTTP(w, r, caller.actor, ratelimit.Read, true) {
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
// never the driver's text. A valid key's requests are counted where they
// act: each tool call is an API request under the key.
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
	return mcpCaller{key: key, actor: p.ActorID(), network: p.Network}, true
}

// onlyToolCalls reports whether body is one JSON-RPC message, or a batch
// of them, that are all tools/call requests. What does not parse is not.
func onlyToolCalls(body []byte) bool {
	var batch []json.RawMessage
	if err := json.Unmarshal(body, &batch); err != nil {
		batch = []json.RawMessage{body}
	}
	for _, m := range batch {
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(m, &msg) != nil || msg.Method != "tools/call" {
			return false
		}
	}
	return len(batch) > 0
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
