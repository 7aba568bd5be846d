package waitfor

import (
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
