package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/client"
)

// RunStdio serves the MCP tools on stdin/stdout for an MCP host (`api mcp`),
// acting through the service at AGENTWALLET_API_URL (defaultURL when unset)
// with the key in AGENTWALLET_API_KEY, until the host closes stdin or ctx
// ends. PAY_PREFERENCE (mpp or x402; default mpp) is the protocol
// pay_fetch pays when a seller offers both and the call does not say.
func RunStdio(ctx context.Context, getenv func(string) string, defaultURL string) error {
	key := getenv("AGENTWALLET_API_KEY")
	if key == "" {
		return errors.New("AGENTWALLET_API_KEY is required: the API key the tools act with")
	}
	base := cmp.Or(getenv("AGENTWALLET_API_URL"), defaultURL)
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return fmt.Errorf("AGENTWALLET_API_URL %q is not a URL", base)
	}
	prefer, err := ParsePayPreference(getenv("PAY_PREFERENCE"))
	if err != nil {
		return fmt.Errorf("PAY_PREFERENCE: %w", err)
	}
	// x402_fetch and pay_fetch run here, on the agent's machine: they
	// reach what the agent could reach itself, so no SSRF guard, only a
	// timeout and caps.
	s := New(client.New(base, key), u.Scheme+"://"+u.Host, WithX402(FetchClient()), WithPayPreference(prefer))
	return s.Run(ctx, &mcp.StdioTransport{})
}
