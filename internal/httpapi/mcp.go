package httpapi

import (
	"bytes"
	"context"
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

// mcpHandler is the MCP endpoint over api (the whole API handler).
// Stateless: each request builds a server whose tools act with that
// request's key, so no session outlives or outranks its key.
func (s *server) mcpHandler(api *http.Handler) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		key := r.Context().Value(mcpKeyOf{}).(string)
		c := client.New("http://in-process", key, client.WithRetries(0),
			client.WithHTTPClient(&http.Client{Transport: inProcess{*api}}))
		return mcpserver.New(c, s.DashboardOrigin)
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := s.mcpAuthenticate(w, r)
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
		r.Body = io.NopCloser(bytes.NewReader(raw))
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mcpKeyOf{}, key)))
	})
}

// mcpAuthenticate admits an /mcp request by its bearer key as the API's
// authenticate does: no valid key is 401 {"error":"Unauthorized"},
// counted in the client's anonymous bucket (429 past it; its headers on
// both); a key that cannot be checked (database down) is a fixed 503,
// never the driver's text. A valid key's requests are counted where they
// act: each tool call is an API request under the key.
func (s *server) mcpAuthenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	const bearer = "Bearer "
	h := r.Header.Get("Authorization")
	err := auth.ErrUnauthorized
	var key string
	if len(h) > len(bearer) && strings.EqualFold(h[:len(bearer)], bearer) {
		key = h[len(bearer):]
		c, cancel := context.WithTimeout(r.Context(), authTimeout)
		_, err = auth.Authenticate(c, s.DB, key)
		cancel()
	}
	switch {
	case errors.Is(err, auth.ErrUnauthorized):
		if s.limitHTTP(w, r, "ip:"+s.requestClient(r), ratelimit.Anonymous, false) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="api"`)
			writeError(w, http.StatusUnauthorized, "Unauthorized")
		}
		return "", false
	case err != nil:
		s.log.WarnContext(r.Context(), "authentication unavailable", "err", err)
		limitAnswer{result: s.unknownLimit(ratelimit.Anonymous)}.headers(w.Header().Set)
		writeError(w, http.StatusServiceUnavailable, "authentication unavailable; try again")
		return "", false
	}
	return key, true
}
