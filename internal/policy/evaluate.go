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
	ExceedsWeeklyLimit  Reason = "exceeds_weekly_limit"
	ExceedsMonthlyLimit Reason = "exceeds_monthly_limit"
	ExceedsVelocity     Reason = "exceeds_velocity"
	OutsideActiveHours  Reason = "outside_active_hours"
)

// Reasons are every block reason, in the order they are checked.
var Reasons = []Reason{
	WalletFrozen, RecipientNotAllowed, ExceedsMaxTx, ExceedsDailyLimit,
	ExceedsWeeklyLimit, ExceedsMonthlyLimit, ExceedsVelocity, OutsideActiveHours,
}

// Rule names what decided an outcome: the policy field whose rule it is
// ("state" for a frozen wallet); "" when no rule stopped a send.
type Rule string

// The rules, by the field that holds each.
const (
	RuleState             Rule = "state"
	RuleAllowlist         Rule = "allowlist"
	RuleMaxTx             Rule = "max_tx_usdc"
	RuleDailyLimit        Rule = "daily_limit_usdc"
	RuleWeeklyLimit       Rule = "weekly_limit_usdc"
	RuleMonthlyLimit      Rule = "monthly_limit_usdc"
	RuleMaxTxPerHour      Rule = "max_tx_per_hour"
	RuleMaxTxPerDay       Rule = "max_tx_per_day"
	RuleActiveHours       Rule = "active_hours"
	RuleApprovalThreshold Rule = "approval_threshold_usdc"
)

// Rules are every Rule, in the order they are checked.
var Rules = []Rule{
	RuleState, RuleAllowlist, RuleMaxTx, RuleDailyLimit, RuleWeeklyLimit, RuleMonthlyLimit,
	RuleMaxTxPerHour, RuleMaxTxPerDay, RuleActiveHours, RuleApprovalThreshold,
}

// Usage is what a wallet has used of its limits when a payment is
// decided. Amounts are what was reserved or spent: pending and confirmed
// transactions and signed x402 payments (failed and expired ones released
// theirs; pending approvals reserve nothing). Counts are the payments (sends
// and x402 payments) that were sent or parked for approval; blocked ones
// and those the node refused count nothing. Only the windows a policy
// limits need be read (Policy.Windows).
type Usage struct {
	// SpentToday: the current UTC day.
	SpentToday usdc.Micros
	// SpentWeek and SpentMonth: the last 7 and 30 days (rolling).
	SpentWeek, SpentMonth usdc.Micros
	// PaymentsLastHour and PaymentsLastDay: the last hour and 24 hours.
	PaymentsLastHour, PaymentsLastDay int
}

// Windows says which parts of a Usage a policy reads (SpentToday always).
type Windows struct {
	Week, Month, Hour, Day bool
}

// Windows are the usage windows p limits.
func (p Policy) Windows() Windows {
	return Windows{Week: p.WeeklyLimit != nil, Month: p.MonthlyLimit != nil, Hour: p.MaxTxPerHour != nil, Day: p.MaxTxPerDay != nil}
}

// Request describes one payment to evaluate.
type Request struct {
	To     string
	Amount usdc.Micros
	Frozen bool
	Usage
	// At is when the payment is decided: the active hours are read at it.
	At time.Time
	// Approved: a human has already approved this payment (it is being
	// executed, or an x402 grant redeemed). Its velocity was counted and
	// its hours judged when it was asked for, so neither is checked
	// again; every amount limit is.
	Approved bool
}

// Decision is the value a policy check produces: a denial is a Decision,
// not an error.
type Decision struct {
	Outcome Outcome
	Reason  Reason // set when Outcome is Blocked
	// Rule is what decided: the blocking rule, or for NeedsApproval the
	// approval threshold or the active hours; "" when sent.
	Rule Rule
	// RemainingToday is what the daily limit still allows before this
	// send, so a blocked agent can adjust.
	RemainingToday usdc.Micros
}

// Evaluate applies the policy to a payment. The first failing rule wins:
// frozen, recipient, per-send maximum, daily, weekly and monthly limits,
// payments per hour and per day, active hours (when they block); then a
// payment outside the active hours (when they park) or at or above the
// approval threshold needs a human, and anything else is sent.
func (p Policy) Evaluate(r Request) Decision {
	d := Decision{RemainingToday: max(0, p.DailyLimit-r.SpentToday)}
	over := func(limit *usdc.Micros, spent usdc.Micros) bool {
		return limit != nil && r.Amount > max(0, *limit-spent)
	}
	reached := func(limit *int, n int) bool { return !r.Approved && limit != nil && n >= *limit }
	outside := !r.Approved && p.ActiveHours != nil && !p.ActiveHours.Contains(r.At)
	block := func(reason Reason, rule Rule) { d.Outcome, d.Reason, d.Rule = Blocked, reason, rule }
	switch {
	case r.Frozen:
		block(WalletFrozen, RuleState)
	case !p.allows(r.To):
		block(RecipientNotAllowed, RuleAllowlist)
	case r.Amount > p.MaxTx:
		block(ExceedsMaxTx, RuleMaxTx)
	case r.Amount > d.RemainingToday:
		block(ExceedsDailyLimit, RuleDailyLimit)
	case over(p.WeeklyLimit, r.SpentWeek):
		block(ExceedsWeeklyLimit, RuleWeeklyLimit)
	case over(p.MonthlyLimit, r.SpentMonth):
		block(ExceedsMonthlyLimit, RuleMonthlyLimit)
	case reached(p.MaxTxPerHour, r.PaymentsLastHour):
		block(ExceedsVelocity, RuleMaxTxPerHour)
	case reached(p.MaxTxPerDay, r.PaymentsLastDay):
		block(ExceedsVelocity, RuleMaxTxPerDay)
	case outside && p.OutsideActiveHours.orBlock() == OutsideBlock:
		block(OutsideActiveHours, RuleActiveHours)
	case outside:
		d.Outcome, d.Rule = NeedsApproval, RuleActiveHours
	case r.Amount >= p.ApprovalThreshold:
		d.Outcome, d.Rule = NeedsApproval, RuleApprovalThreshold
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
