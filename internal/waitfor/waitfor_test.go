package waitfor

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fatalTB records a Fatalf instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) { f.msg = fmt.Sprintf(format, args...) }

func TestTrue_ReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var polls atomic.Int32
	True(t, "the third poll", func() bool { return polls.Add(1) == 3 })
	if n := polls.Load(); n != 3 {
		t.Fatalf("polled %d times, want 3", n)
	}
}

func TestWithin_FailsNamingWhatItWaitedFor(t *testing.T) {
	t.Parallel()
	f := &fatalTB{TB: t}
	start := time.Now()
	within(f, 50*time.Millisecond, "a condition that never holds", func() bool { return false })
	if !strings.Contains(f.msg, "a condition that never holds") {
		t.Fatalf("failure %q does not name what it waited for", f.msg)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("gave up after %s, before its bound", d)
	}
}

func TestReturned_FailsOnAnErrorOrNone(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		send func(chan<- error)
		want string // "" when it passes, else part of the failure
	}{
		{"nil", func(done chan<- error) { done <- nil }, ""},
		{"an error", func(done chan<- error) { done <- errors.New("boom") }, "the run to stop: boom"},
		{"none", func(chan<- error) {}, "in vain for: the run to stop"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &fatalTB{TB: t}
			done := make(chan error, 1)
			c.send(done)
			returnedWithin(f, 50*time.Millisecond, "the run to stop", done)
			if c.want == "" && f.msg != "" || !strings.Contains(f.msg, c.want) {
				t.Fatalf("failure %q, want one containing %q", f.msg, c.want)
			}
		})
	}
}
