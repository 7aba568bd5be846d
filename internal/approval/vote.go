package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// Vote is one person's approve of an approval (m-of-n approvals: the
// wallet's approvals_required). Votes are added under the approval row's
// lock, so they are counted one at a time.
type Vote struct {
	bun.BaseModel `bun:"table:approval_votes,alias:v"`

	ApprovalID uuid.UUID `bun:"approval_id,pk,type:uuid"`
	// Person is who the vote counts as: user:<address> (a dashboard user,
	// the person behind an admin key, a Slack member linked to a user),
	// or the actor itself when it is no person of the account (a
	// command-line key, an unlinked Slack member: only while one approve
	// suffices).
	Person string `bun:"person,pk"`
	// By is the actor that voted: key_<id>, user:<address> or slack:<id>.
	By string `bun:"by_actor"`
	// Claims are every actor the vote speaks for (By, Person and the
	// voter's ancestry): a later vote that meets them is the same
	// person's.
	Claims []string  `bun:"claims,array"`
	Note   *string   `bun:"note"`
	At     time.Time `bun:"at,nullzero"` // the database's clock_timestamp()
}

// Voter is who approves.
type Voter struct {
	// Actor names it on the approval and in the audit log: key_<id>,
	// user:<address> or slack:<member id>.
	Actor string
	// Person is the person it counts as: user:<address>, or "" when it is
	// none of the account's (a command-line key, an unlinked Slack
	// member), which may approve only while one approve suffices.
	Person string
	// Ancestry is what the requester rule compares with the payment's
	// requesters (auth.Principal.Ancestry; a Slack member's is slack:<id>
	// and the user it is linked to).
	Ancestry []string
}

// claims are the actors v's vote speaks for.
func (v Voter) claims() []string {
	cs := []string{v.Actor}
	for _, c := range append([]string{v.Person}, v.Ancestry...) {
		if c != "" && !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// ErrNoPerson refuses a vote that cannot be counted as a person of the
// account while more than one approve is needed, or that speaks for a
// person removed from the account (see NoPersonError).
var ErrNoPerson = errors.New("this approver is no person of the account")

// NoPersonError refuses a vote no person of the account can be counted
// for, when the approval needs several people, or one that speaks for a
// person no longer of the account: Reason says why.
type NoPersonError struct{ Reason string }

func (e *NoPersonError) Error() string { return e.Reason }

// Is makes errors.Is(err, ErrNoPerson) true.
func (e *NoPersonError) Is(target error) bool { return target == ErrNoPerson }

// AlreadyVotedError refuses a second vote of the same person: By is the
// earlier vote's actor; the approval is still pending with Votes of
// Needed.
type AlreadyVotedError struct {
	By            string
	Votes, Needed int
}

func (e *AlreadyVotedError) Error() string {
	return fmt.Sprintf("you already approved this payment (as %s); it has %d of %d approvals and needs another person", e.By, e.Votes, e.Needed)
}

// quorumSQL is the approvals a payment of wallet w needs now: its
// approvals_required, at most the account's people who can approve (its
// dashboard owners and approvers; when people leave, the quorum shrinks to
// those who remain), at least 1.
const quorumSQL = `LEAST(w.approvals_required, GREATEST(1, (SELECT count(*) FROM users AS u WHERE u.account_id = w.account_id AND u.role IN ('owner', 'approver'))))::int`

// Quorum is how many people must approve a payment of wallet now (see
// quorumSQL).
func Quorum(ctx context.Context, db bun.IDB, walletID uuid.UUID) (int, error) {
	var n int
	if err := db.NewRaw("SELECT "+quorumSQL+" FROM wallets AS w WHERE w.id = ?", walletID).Scan(ctx, &n); err != nil {
		return 0, fmt.Errorf("read the quorum: %w", err)
	}
	return n, nil
}

// VoteFor records voter's approve of a pending approval, under the
// approval row's lock: the requester rule first (ErrRequester), then the
// state (*NotPendingError; one past its lifetime is expired on the spot),
// then the people (*NoPersonError when a person it speaks for is no
// longer a user of the account, or when several are needed and it is
// none, or no longer one who may approve), then the votes
// (*AlreadyVotedError when the voter, or a person it speaks for, voted
// already). A vote that reaches the quorum moves the approval to
// signing, approved_by the voter
// (final): the payment engine then evaluates the policy again and signs,
// as for a single approve; its approval.approved audit entry records the
// votes. A vote short of it keeps the approval pending with an
// approval.voted audit entry and an approval.vote event.
//
// A voter who voted already completes the quorum when the votes cast
// reach it by now (approvals_required was lowered, or people left).
func VoteFor(ctx context.Context, db *bun.DB, accountID, id uuid.UUID, voter Voter, note *string) (a Approval, final bool, err error) {
	var (
		expire bool
		needed int
	)
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		people, err := lockPeople(ctx, tx, accountID, voter)
		if err != nil {
			return err
		}
		err = tx.NewSelect().Model(&a).Where("a.id = ? AND a.account_id = ?", id, accountID).For("UPDATE").Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("lock approval: %w", err)
		}
		if a.Refuses(voter.Ancestry) {
			return ErrRequester
		}
		if a.Status != Pending {
			return &NotPendingError{Status: a.Status}
		}
		var now time.Time
		if err := tx.NewRaw("SELECT now()").Scan(ctx, &now); err != nil {
			return fmt.Errorf("read the clock: %w", err)
		}
		if !a.ExpiresAt.After(now) {
			expire = true
			return &NotPendingError{Status: Expired}
		}
		if needed, err = Quorum(ctx, tx, a.WalletID); err != nil {
			return err
		}
		if err := people.allThere(); err != nil {
			return err
		}
		person := voter.Person
		if needed > 1 {
			if err := mayCount(people, voter, needed); err != nil {
				return err
			}
		} else if person == "" {
			person = voter.Actor
		}
		var votes []Vote
		if err := tx.NewSelect().Model(&votes).Where("approval_id = ?", a.ID).Order("at").Scan(ctx); err != nil {
			return fmt.Errorf("read votes: %w", err)
		}
		claims := voter.claims()
		if i := slices.IndexFunc(votes, func(v Vote) bool {
			return slices.ContainsFunc(v.Claims, func(c string) bool { return slices.Contains(claims, c) })
		}); i >= 0 {
			if len(votes) < needed {
				return &AlreadyVotedError{By: votes[i].By, Votes: len(votes), Needed: needed}
			}
			// The votes cast already reach a quorum lowered since:
			// this approve completes it.
		} else {
			v := Vote{ApprovalID: a.ID, Person: person, By: voter.Actor, Claims: claims, Note: note}
			err := tx.NewInsert().Model(&v).On("CONFLICT DO NOTHING").Returning("at").Scan(ctx)
			if errors.Is(err, sql.ErrNoRows) {
				return &AlreadyVotedError{By: person, Votes: len(votes), Needed: needed}
			}
			if err != nil {
				return fmt.Errorf("record vote: %w", err)
			}
			votes = append(votes, v)
		}
		if len(votes) >= needed {
			final = true
			return tx.NewRaw(`UPDATE approvals SET status = ?, approved_by = ?, note = ?, decided_at = now(), approvals_needed = ?
				WHERE id = ? RETURNING *, `+labelColumn, Signing, voter.Actor, note, needed, a.ID).Scan(ctx, &a)
		}
		err = tx.NewRaw(`UPDATE approvals SET approvals_needed = ? WHERE id = ? RETURNING *, `+labelColumn, needed, a.ID).Scan(ctx, &a)
		if err != nil {
			return fmt.Errorf("count vote: %w", err)
		}
		a.Votes, a.Needed = votes, needed
		at := votes[len(votes)-1].At
		if _, err := webhook.Emit(ctx, tx, a.AccountID, at, webhook.KindApprovalVote, map[string]any{
			"approval_id": PublicID(a.ID), "wallet_id": a.WalletID, "amount": a.Amount, "to": a.To,
			"by": voter.Actor, "approvals": VotesDoc(votes), "approvals_needed": needed,
		}); err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Entry{AccountID: a.AccountID, At: at, Actor: audit.Actor(voter.Actor), Action: audit.ActionApprovalVoted, Target: target(a.ID), Details: map[string]any{
			"approval_id": PublicID(a.ID), "wallet_id": a.WalletID, "amount": a.Amount, "to": a.To, "note": note,
			"person": person, "approvals": len(votes), "approvals_needed": needed,
		}})
	})
	if expire {
		if _, err := expireOne(ctx, db, id, time.Time{}, "now()"); err != nil {
			return Approval{}, false, err
		}
	}
	if err != nil {
		return Approval{}, false, err
	}
	if final {
		if err := loadVotes(ctx, db, []*Approval{&a}); err != nil {
			return Approval{}, false, err
		}
		a.Needed = needed
	}
	return a, final, nil
}

// people are the persons a vote speaks for (the user:<address> among its
// claims), each with whether they may approve now (owner or approver);
// one missing from the map is no user of the account.
type people struct {
	claimed []string
	may     map[string]bool
}

// lockPeople reads the users a vote speaks for, locked FOR SHARE until the
// vote commits: a removal or demotion of one of them (RemoveUser, SetRole,
// then WithdrawPerson, in one transaction) that locked the row first is
// committed before the vote reads it, which then finds the person gone or
// changed; one that comes second waits for the vote's commit, then sees
// and withdraws its vote. FOR SHARE, not FOR KEY SHARE: the latter lets
// an UPDATE of the role through. Users are locked before the approval, in
// the order of the removal and the demotion (users, then approvals).
func lockPeople(ctx context.Context, tx bun.Tx, accountID uuid.UUID, v Voter) (people, error) {
	p := people{may: map[string]bool{}}
	var addresses []string
	for _, c := range v.claims() {
		if address, ok := audit.Actor(c).Person(); ok {
			p.claimed = append(p.claimed, c)
			addresses = append(addresses, address)
		}
	}
	if len(addresses) == 0 {
		return p, nil
	}
	var rows []struct {
		Address string `bun:"address"`
		May     bool   `bun:"may"`
	}
	err := tx.NewRaw(`SELECT address, role IN ('owner', 'approver') AS may FROM users
		WHERE account_id = ? AND address IN (?) ORDER BY address FOR SHARE`, accountID, bun.List(addresses)).Scan(ctx, &rows)
	if err != nil {
		return p, fmt.Errorf("lock the approver: %w", err)
	}
	for _, r := range rows {
		p.may[string(audit.UserActor(r.Address))] = r.May
	}
	return p, nil
}

// allThere refuses a vote that speaks for a person who is no user of the
// account: only a removal that committed while the vote was being cast
// leaves one (a removed person's sessions end and their keys are revoked
// with them, and a Slack member's link goes with the user).
func (p people) allThere() error {
	for _, c := range p.claimed {
		if _, ok := p.may[c]; !ok {
			return &NoPersonError{Reason: fmt.Sprintf("this approve speaks for %s, who is no longer a person of the account", c)}
		}
	}
	return nil
}

// mayCount refuses, when needed people must approve, a voter who is no
// person of the account who may approve now.
func mayCount(p people, v Voter, needed int) error {
	if !audit.Actor(v.Person).IsPerson() {
		what := "an API key made on the command line belongs to no person of the account"
		switch {
		case strings.HasPrefix(v.Actor, "slack:"):
			what = "this Slack member is linked to no person of the account (an owner links it: slack_user_id on the Users page or PATCH /users/{address})"
		case audit.Actor(v.Actor).IsKey():
			what = "this admin key was made on the command line, not by a person of the account"
		}
		return &NoPersonError{Reason: fmt.Sprintf("this payment needs %d people to approve it, and every approve must count as one of them: %s", needed, what)}
	}
	if !p.may[v.Person] {
		return &NoPersonError{Reason: fmt.Sprintf("this payment needs %d people to approve it, and %s, whom this approve counts as, is no longer an owner or approver of the account", needed, v.Person)}
	}
	return nil
}

// VoteDoc is a vote as events and the audit log show it.
type VoteDoc struct {
	By   string    `json:"by"`
	At   time.Time `json:"at"`
	Note *string   `json:"note"`
}

// VotesDoc is votes as events show them, oldest first.
func VotesDoc(votes []Vote) []VoteDoc {
	out := make([]VoteDoc, len(votes))
	for i, v := range votes {
		out[i] = VoteDoc{By: v.By, At: v.At.UTC(), Note: v.Note}
	}
	return out
}

// loadVotes reads the votes of as, oldest first.
func loadVotes(ctx context.Context, db bun.IDB, as []*Approval) error {
	if len(as) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(as))
	byID := make(map[uuid.UUID]*Approval, len(as))
	for i, a := range as {
		ids[i] = a.ID
		byID[a.ID] = a
		a.Votes = []Vote{}
	}
	var votes []Vote
	if err := db.NewSelect().Model(&votes).Where("approval_id IN (?)", bun.List(ids)).Order("at").Scan(ctx); err != nil {
		return fmt.Errorf("read votes: %w", err)
	}
	for _, v := range votes {
		a := byID[v.ApprovalID]
		a.Votes = append(a.Votes, v)
	}
	return nil
}

// votesOf reads one approval's votes inside tx, for its events.
func votesOf(ctx context.Context, tx bun.IDB, id uuid.UUID) ([]VoteDoc, error) {
	var votes []Vote
	if err := tx.NewSelect().Model(&votes).Where("approval_id = ?", id).Order("at").Scan(ctx); err != nil {
		return nil, fmt.Errorf("read votes: %w", err)
	}
	return VotesDoc(votes), nil
}

// withdrawSQL deletes the final vote of the approvals in "old" (id,
// approved_by): an approve that was never executed leaves no vote, so its
// voter may approve again.
const withdrawSQL = `del AS (DELETE FROM approval_votes AS v USING old WHERE v.approval_id = old.id AND v.by_actor = old.approved_by)`

// WithdrawPerson deletes, in tx, the votes on the account's pending
// approvals that speak for actor (a person removed from the account, or
// no longer an owner or approver): they no longer count. It locks those
// approvals first, so a vote counted at the same time sees the change.
func WithdrawPerson(ctx context.Context, tx bun.IDB, accountID uuid.UUID, actor string) (int, error) {
	var n int
	err := tx.NewRaw(`WITH locked AS (
			SELECT a.id FROM approvals AS a
			WHERE a.account_id = ? AND a.status = ? AND EXISTS (SELECT 1 FROM approval_votes AS v WHERE v.approval_id = a.id AND ? = ANY(v.claims))
			FOR UPDATE),
		del AS (DELETE FROM approval_votes AS v USING locked WHERE v.approval_id = locked.id AND ? = ANY(v.claims) RETURNING 1)
		SELECT count(*) FROM del`, accountID, Pending, actor, actor).Scan(ctx, &n)
	if err != nil {
		return 0, fmt.Errorf("withdraw votes: %w", err)
	}
	return n, nil
}
