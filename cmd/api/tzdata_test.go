package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The binaries that decide or preview payments (api, worker) carry the tz
// database: wallet policies name IANA zones (active hours), and a deploy
// image may have no /usr/share/zoneinfo.
func TestBinaries_CarryTheTZDatabase(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{".", "../worker"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		if !slices.Contains(strings.Fields(string(out)), "time/tzdata") {
			t.Errorf("time/tzdata is not linked into %s", pkg)
		}
	}
}
