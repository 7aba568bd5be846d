package approval

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// While several people must approve, a vote counts only as a person of the
// account who may approve now: a command-line key, an unlinked Slack
// member, a person demoted or removed are refused, each saying why.
func TestMayCount_OnlyPeopleWhoMayApprove(t *testing.T) {
	t.Parallel()
	p := people{may: map[string]bool{"user:OWNER": true, "user:VIEWER": false}}
	for _, c := range []struct {
		name string
		v    Voter
		want string // "" counts
	}{
		{"an owner or approver", Voter{Actor: "user:OWNER", Person: "user:OWNER"}, ""},
		{"an admin key its maker may approve through", Voter{Actor: "key_k", Person: "user:OWNER"}, ""},
		{"a person now a viewer", Voter{Actor: "user:VIEWER", Person: "user:VIEWER"}, "user:VIEWER, whom this approve counts as, is no longer an owner or approver"},
		{"a person no longer of the account", Voter{Actor: "user:GONE", Person: "user:GONE"}, "user:GONE, whom this approve counts as, is no longer an owner or approver"},
		{"an unlinked Slack member", Voter{Actor: "slack:U123"}, "this Slack member is linked to no person of the account"},
		{"a command-line admin key", Voter{Actor: "key_k"}, "this admin key was made on the command line"},
		{"another actor", Voter{Actor: "system"}, "an API key made on the command line belongs to no person"},
	} {
		err := mayCount(p, c.v, 3)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (!errors.Is(err, ErrNoPerson) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "needs 3 people")):
			t.Errorf("%s: %v, want ErrNoPerson saying %q", c.name, err, c.want)
		}
	}
}

// A vote that speaks for a person no longer of the account is refused,
// naming them; a vote speaking for no person at all passes this check.
func TestAllThere_RefusesAVoteForSomeoneRemoved(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		p    people
		want string
	}{
		{"everyone there", people{claimed: []string{"user:A"}, may: map[string]bool{"user:A": false}}, ""},
		{"no person claimed", people{may: map[string]bool{}}, ""},
		{"one removed", people{claimed: []string{"user:A", "user:B"}, may: map[string]bool{"user:A": true}}, "user:B"},
	} {
		err := c.p.allThere()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (!errors.Is(err, ErrNoPerson) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want a refusal naming %s", c.name, err, c.want)
		}
	}
}

// A vote speaks for its actor, its person and its ancestry, each once: a
// later vote meeting any of them is the same person's.
func TestVoter_ClaimsEachActorOnce(t *testing.T) {
	t.Parallel()
	v := Voter{Actor: "key_a", Person: "user:P", Ancestry: []string{"key_root", "user:P", "", "key_a"}}
	if got, want := v.claims(), []string{"key_a", "user:P", "key_root"}; !slices.Equal(got, want) {
		t.Fatalf("claims %q, want %q", got, want)
	}
}
