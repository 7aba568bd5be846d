package httpapi

import "testing"

// Which /mcp bodies are tool calls only (counted where they act) and
// which are counted at /mcp as a read.
func TestOnlyToolCalls(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, true},
		{`[{"method":"tools/call"},{"method":"tools/call"}]`, true},
		{`[{"method":"tools/call"},{"method":"ping"}]`, false},
		{`[{"method":"ping"},{"id":2}]`, false},
		{`[{"method":"tools/call"},{"id":2}]`, false},
		{`{"method":"initialize"}`, false},
		{`{"method":"tools/list"}`, false},
		{`{"method":"notifications/initialized"}`, false},
		{`[]`, false},
		{``, false},
		{`not json`, false},
		{`{"method":"TOOLS/CALL"}`, false},
	} {
		if got := onlyToolCalls([]byte(c.body)); got != c.want {
			t.Errorf("%q: %v, want %v", c.body, got, c.want)
		}
	}
}

func FuzzOnlyToolCalls(f *testing.F) {
	f.Add([]byte(`{"method":"tools/call"}`))
	f.Add([]byte(`[{"method":"tools/call"},{"method":"ping"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		onlyToolCalls(body) // never panics, whatever the body
	})
}
