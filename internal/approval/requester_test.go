package approval_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/approval"
)

// The requester rule: an approver is refused when one of the payment's
// requesters is in its ancestry. Approvals recorded before requesters were
// fall back to the requester's lineage (a key's, or the person's).
func TestRefuses_WhoeverDescendsFromTheRequester(t *testing.T) {
	t.Parallel()
	lineage, minted, stranger := uuid.New(), uuid.New(), uuid.New()
	key := func(id uuid.UUID) string { return "key_" + id.String() }
	person := "PersonAddress"
	for _, c := range []struct {
		name     string
		a        approval.Approval
		ancestry []string
		want     bool
	}{
		{"the requesting key's line", approval.Approval{Requesters: []string{key(lineage)}}, []string{key(lineage)}, true},
		{"a key the requester minted", approval.Approval{Requesters: []string{key(lineage)}}, []string{key(minted), key(lineage)}, true},
		{"an admin key's creator", approval.Approval{Requesters: []string{key(lineage), "user:" + person}}, []string{"user:" + person}, true},
		{"another key", approval.Approval{Requesters: []string{key(lineage)}}, []string{key(stranger)}, false},
		{"a person, for a key's payment", approval.Approval{Requesters: []string{key(lineage)}}, []string{"user:" + person}, false},
		{"a reject (no ancestry)", approval.Approval{Requesters: []string{key(lineage)}}, nil, false},
		{"before requesters: the key's lineage",
			approval.Approval{RequestedLineage: uuid.NullUUID{UUID: lineage, Valid: true}}, []string{key(lineage)}, true},
		{"before requesters: the person",
			approval.Approval{RequestedByUser: &person}, []string{"user:" + person}, true},
		{"before requesters: another key",
			approval.Approval{RequestedLineage: uuid.NullUUID{UUID: lineage, Valid: true}}, []string{key(stranger)}, false},
		{"no requester known", approval.Approval{}, []string{""}, false},
	} {
		if got := c.a.Refuses(c.ancestry); got != c.want {
			t.Errorf("%s: Refuses(%q) = %v, want %v", c.name, c.ancestry, got, c.want)
		}
	}
}

// The requester is the key that made the send, else the dashboard person,
// else unknown; its lineage names the key's rotation line instead of the
// key itself.
func TestRequester_NamesTheKeyOrThePerson(t *testing.T) {
	t.Parallel()
	id, lineage := uuid.New(), uuid.New()
	person := "PersonAddress"
	for _, c := range []struct {
		name                   string
		a                      approval.Approval
		requester, requesterOf string
	}{
		{"a key", approval.Approval{RequestedBy: uuid.NullUUID{UUID: id, Valid: true}, RequestedLineage: uuid.NullUUID{UUID: lineage, Valid: true}},
			"key_" + id.String(), "key_" + lineage.String()},
		{"a person", approval.Approval{RequestedByUser: &person}, "user:" + person, "user:" + person},
		{"unknown", approval.Approval{}, "", ""},
	} {
		if got := c.a.Requester(); got != c.requester {
			t.Errorf("%s: Requester() = %q, want %q", c.name, got, c.requester)
		}
		if got := c.a.RequesterLineage(); got != c.requesterOf {
			t.Errorf("%s: RequesterLineage() = %q, want %q", c.name, got, c.requesterOf)
		}
	}
}

// Public approval ids are "ap_<uuid>"; the bare uuid is read too.
func TestParseID(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	for _, c := range []struct {
		in string
		ok bool
	}{
		{approval.PublicID(id), true},
		{id.String(), true},
		{"ap_", false},
		{"ap_" + id.String()[:35], false},
		{"wh_" + id.String(), false},
		{"", false},
	} {
		got, ok := approval.ParseID(c.in)
		if ok != c.ok || (ok && got != id) {
			t.Errorf("ParseID(%q) = %v %v, want ok %v", c.in, got, ok, c.ok)
		}
	}
}
