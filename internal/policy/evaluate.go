package policy

import (
	"time"

	"github.com/agentwallet/agentwallet/internal/usdc"
)

// Outcome is what a send becomes.
type Outcome int

// The three outcomes of a send.
const (
	Send          Outcome = iota + 1 // sign and broadcast
	NeedsApproval                    // park for a human
	Blocked                          // refuse, with a Reason
)

func (o Outcome) String() string {
	switch o {
	case Send:
		return "send"
	case NeedsApproval:
		return "needs_approval"
	case Blocked:
		return "blocked"
	}
	return "unknown"
}

// Reason says why a send was blocked; the values are the spec's.
type Reason string

// Block reasons, in the order they are checked.
const (
	WalletFrozen        Reason = "wallet_frozen"
	RecipientNotAllowed Reason = "recipient_not_allowed"
	ExceedsMaxTx        Reason = "exceeds_max_tx"
	ExceedsDailyLimit   Reason = "exceeds_daily_limit"
)

// Request describes one send to evaluate. SpentToday is what the wallet has
// reserved or spent in the current UTC day (pending and confirmed sends;
// failed ones and pending approvals count nothing).
type Request struct {
	To         string
	Amount     usdc.Micros
	Frozen     bool
	SpentToday usdc.Micros
}

// Decision is the value a policy check produces: a denial is a Decision,
// not an error.
type Decision struct {
	Outcome Outcome
	Reason  Reason // set when Outcome is Blocked
	// RemainingToday is what the daily limit still allows before this
	// send, so a blocked agent can adjust.
	RemainingToday usdc.Micros
}

// Evaluate applies the policy to a send. The first failing rule wins:
// frozen, recipient, per-send maximum, daily limit; then an amount at or
// above the approval threshold needs a human, and anything else is sent.
func (p Policy) Evaluate(r Request) Decision {
	d := Decision{RemainingToday: max(0, p.DailyLimit-r.SpentToday)}
	switch {
	case r.Frozen:
		d.Outcome, d.Reason = Blocked, WalletFrozen
	case !p.allows(r.To):
		d.Outcome, d.Reason = Blocked, RecipientNotAllowed
	case r.Amount > p.MaxTx:
		d.Outcome, d.Reason = Blocked, ExceedsMaxTx
	case r.Amount > d.RemainingToday:
		d.Outcome, d.Reason = Blocked, ExceedsDailyLimit
	case r.Amount >= p.ApprovalThreshold:
		d.Outcome = NeedsApproval
	default:
		d.Outcome = Send
	}
	return d
}

func (p Policy) allows(to string) bool {
	if len(p.Allowlist) == 0 {
		return true
	}
	for _, a := range p.Allowlist {
		if a == to {
			return true
		}
	}
	return false
}

// DayStart is the start of t's UTC calendar day: the daily limit's window.
func DayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
