package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/mcpserver"
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

// mcpHandler is the MCP endpoint over api (the whole API handler).
// Stateless: each request builds a server whose tools act with that
// request's key, so no session outlives or outranks its key.
func (s *server) mcpHandler(api *http.Handler) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		// RequireBearerToken admitted it: "Bearer <key>".
		key := strings.Fields(r.Header.Get("Authorization"))[1]
		c := client.New("http://in-process", key, client.WithRetries(0),
			client.WithHTTPClient(&http.Client{Transport: inProcess{*api}}))
		return mcpserver.New(c, s.DashboardOrigin)
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log})
	verify := func(ctx context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		c, cancel := context.WithTimeout(ctx, authTimeout)
		defer cancel()
		p, err := auth.Authenticate(c, s.DB, token)
		if errors.Is(err, auth.ErrUnauthorized) {
			return nil, mcpauth.ErrInvalidToken
		}
		if err != nil {
			return nil, err
		}
		return &mcpauth.TokenInfo{UserID: p.ActorID(), Expiration: time.Now().Add(time.Hour)}, nil
	}
	return mcpauth.RequireBearerToken(verify, nil)(h)
}
