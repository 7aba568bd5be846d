package policy_test

import (
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/policy"
)

// approvals_required: 1 by default (and for a zero value), 0 to 1000 valid
// here (the API refuses 0, and more than the account's approvers); raising
// it tightens, lowering it loosens; the audit's document carries it.
func TestApprovalsRequired_DefaultBoundsAndDirection(t *testing.T) {
	t.Parallel()
	if d := policy.Default(); d.Approvals() != 1 || d.Doc()["approvals_required"] != 1 {
		t.Fatalf("default %+v", d)
	}
	if (policy.Policy{}).Approvals() != 1 {
		t.Fatal("a zero policy needs one approve")
	}
	for n, ok := range map[int]bool{1: true, 2: true, 1000: true, 1001: false, -1: false} {
		p := policy.Default()
		p.ApprovalsRequired = n
		if err := p.Validate(); (err == nil) != ok {
			t.Errorf("approvals_required %d: %v", n, err)
		}
	}
	two := policy.Default().Apply(policy.Patch{ApprovalsRequired: new(2)})
	if two.Approvals() != 2 || two.Same(policy.Default()) {
		t.Fatalf("patched %+v", two)
	}
	if what := policy.Loosening(policy.Default(), two); what != "" {
		t.Fatalf("raising loosens: %s", what)
	}
	if what := policy.Loosening(two, policy.Default()); !strings.Contains(what, "approvals_required from 2 to 1") {
		t.Fatalf("lowering: %q", what)
	}
}
