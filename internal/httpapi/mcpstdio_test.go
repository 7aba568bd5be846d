package httpapi_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwallet/agentwallet/internal/mcpserver"
)

// mcpStdioChild marks this test binary, started again by a test, as the
// `api mcp` process: it serves the tools on its real stdin and stdout with
// the same code as the command.
const mcpStdioChild = "AGENTWALLET_TEST_MCP_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(mcpStdioChild) == "1" {
		if err := mcpserver.RunStdio(context.Background(), os.Getenv, ""); err != nil {
			fmt.Fprintln(os.Stderr, "mcp:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// connectStdio starts the MCP server as its own process acting with key
// on the service at url, and connects to it over the process's stdio.
func connectStdio(t *testing.T, url, key string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mcpStdioChild+"=1", "AGENTWALLET_API_URL="+url, "AGENTWALLET_API_KEY="+key)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
