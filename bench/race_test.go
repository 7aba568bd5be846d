//go:build race

package bench

// raceEnabled: the test binary has the race detector, so the stack's
// binaries are built with it too (their packages are compiled so already).
const raceEnabled = true
