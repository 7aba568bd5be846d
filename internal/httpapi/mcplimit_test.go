package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
)

// mcpPost posts one JSON-RPC message to /mcp with the env's key: the HTTP
// status, the body and the headers.
func mcpPost(t *testing.T, e *env, msg string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest("POST", e.url+httpapi.MCPPath, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// What an MCP client sends besides tool calls (initialize, tools/list,
// ping) is a read of its key: past the key's read limit it is 429, with
// Retry-After. A tool call is counted once, where it acts: as the API
// request it makes under the key.
func TestMCPCountsEveryRequestAgainstTheKey(t *testing.T) {
	t.Parallel()
	t.Run("handshake and listing", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOpts{limits: &ratelimit.Limits{Read: 3, Write: 1000, Send: 1000, Anonymous: 1000}})
		for i, method := range []string{"initialize", "tools/list", "ping", "ping"} {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, i+1, method)
			status, body, h := mcpPost(t, e, msg)
			if i < 3 {
				if status != http.StatusOK || h.Get("x-ratelimit-remaining") != fmt.Sprint(2-i) {
					t.Fatalf("%s: %d %s, remaining %q", method, status, body, h.Get("x-ratelimit-remaining"))
				}
				continue
			}
			var refused map[string]any
			if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" || json.Unmarshal([]byte(body), &refused) != nil || refused["error"] != "Rate limited" {
				t.Fatalf("%s past the limit: %d %s %v", method, status, body, h)
			}
		}
	})
	t.Run("tool calls counted once", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOpts{limits: &ratelimit.Limits{Read: 2, Write: 1000, Send: 1000, Anonymous: 1000}})
		call := func(i int) (int, map[string]any) {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_recent_transactions","arguments":{"limit":5}}}`, i)
			status, body, _ := mcpPost(t, e, msg)
			var answer struct {
				Result map[string]any `json:"result"`
			}
			if status == http.StatusOK {
				if err := json.Unmarshal([]byte(body), &answer); err != nil {
					t.Fatalf("call %d: %s", i, body)
				}
			}
			return status, answer.Result
		}
		for i := 1; i <= 2; i++ {
			if status, res := call(i); status != http.StatusOK || res["isError"] == true {
				t.Fatalf("call %d within the limit: %d %v", i, status, res)
			}
		}
		// The third is refused by the API it calls, and answered as the
		// tool's error: the MCP request itself was not counted.
		if status, res := call(3); status != http.StatusOK || res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "ate limit") {
			t.Fatalf("call 3: %d %v", status, res)
		}
	})
}
