// Package waitfor polls a condition in a test until it holds, for things
// that happen in another goroutine or process (a worker's run, a webhook's
// delivery, a service coming back).
package waitfor

import (
	"testing"
	"time"
)

// Bound is how long True polls before it fails the test: a bound for a
// stuck test, not a claim about speed.
const Bound = 20 * time.Second

// every is the pause between two polls.
const every = 20 * time.Millisecond

// True polls cond until it holds; after Bound the test fails, naming what
// it waited for.
func True(t testing.TB, what string, cond func() bool) {
	t.Helper()
	within(t, Bound, what, cond)
}

func within(t testing.TB, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(bound); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s in vain for: %s", bound, what)
			return
		}
		time.Sleep(every)
	}
}

// Returned waits for the error a function running in another goroutine
// sends on done as it returns (a binary's run once its context ended):
// the test fails if that error is not nil, or if none comes within Bound.
func Returned(t testing.TB, what string, done <-chan error) {
	t.Helper()
	returnedWithin(t, Bound, what, done)
}

func returnedWithin(t testing.TB, bound time.Duration, what string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(bound):
		t.Fatalf("waited %s in vain for: %s", bound, what)
	}
}
