package solana

import (
	"testing"
	"time"
)

// A failing node's backoff doubles from 1 s and stops at 30 s, so a node
// down for long is still probed twice a minute; it starts over only once
// the node has served a minute without failing (no flapping).
func TestFailover_BackoffDoublesUpToItsCap(t *testing.T) {
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
	// Back, and failing again soon: it rests the longest again.
	n.succeeded(time.Millisecond)
	n.failed(now.Add(40*time.Second), "flaky")
	if d := n.retryAt.Sub(now.Add(40 * time.Second)); d != 30*time.Second || !n.down {
		t.Fatalf("failing soon after coming back rests %s", d)
	}
	// Served a minute without failing: it starts over at 1 s.
	n.succeeded(time.Millisecond)
	later := now.Add(40*time.Second + 61*time.Second)
	n.failed(later, "down")
	if d := n.retryAt.Sub(later); d != time.Second || !n.down {
		t.Fatalf("after serving a while, the next failure rests %s", d)
	}
}
