package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The binary carries the tz database: wallet policies name IANA zones
// (active hours), and a deploy image may have no /usr/share/zoneinfo.
func TestIssue25TZDataLinked(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if !slices.Contains(strings.Fields(string(out)), "time/tzdata") {
		t.Fatal("time/tzdata is not linked into the binary")
	}
}
