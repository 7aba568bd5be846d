package solana

import (
	"testing"
	"time"
)

// A failing node's backoff doubles from 1 s and stops at 30 s, so a node
// down for long is still probed twice a minute; one answer resets it.
func TestIssue22FailoverBackoffDoublesUpToItsCap(t *testing.T) {
	n := &node{}
	now := time.Unix(1_700_000_000, 0)
	var got []time.Duration
	for range 8 {
		n.failed(now, "down")
		got = append(got, n.retryAt.Sub(now))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("backoffs %v, want %v seconds", got, want)
		}
	}
	n.succeeded(time.Millisecond)
	n.failed(now, "down")
	if d := n.retryAt.Sub(now); d != time.Second || !n.down {
		t.Fatalf("after an answer, the next failure rests %s", d)
	}
}
