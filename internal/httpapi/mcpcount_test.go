package httpapi

import "testing"

// How many reads a /mcp body counts at /mcp itself: one per message that
// is not a tools/call (those count where they act), one for a body that
// is no message.
func TestReadsAtMCP(t *testing.T) {
	for _, c := range []struct {
		body string
		want int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, 0},
		{`[{"method":"tools/call"},{"method":"tools/call"}]`, 0},
		{`[{"method":"tools/call"},{"method":"ping"}]`, 1},
		{`[{"method":"ping"},{"id":2}]`, 2},
		{`[{"method":"ping"},{"method":"ping"},{"method":"ping"}]`, 3},
		{`[{"method":"tools/call"},{"id":2}]`, 1},
		{`{"method":"initialize"}`, 1},
		{`{"method":"tools/list"}`, 1},
		{`{"method":"notifications/initialized"}`, 1},
		{`[]`, 1},
		{``, 1},
		{`not json`, 1},
		{`[1,2]`, 2},
		{`{"method":"TOOLS/CALL"}`, 1},
	} {
		if got := readsAtMCP([]byte(c.body)); got != c.want {
			t.Errorf("%q: %d, want %d", c.body, got, c.want)
		}
	}
}

func FuzzReadsAtMCP(f *testing.F) {
	f.Add([]byte(`{"method":"tools/call"}`))
	f.Add([]byte(`[{"method":"tools/call"},{"method":"ping"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if n := readsAtMCP(body); n < 0 {
			t.Fatalf("%d reads", n)
		}
	})
}
