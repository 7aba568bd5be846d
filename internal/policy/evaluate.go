package policy

import (
	"cmp"
	"slices"
	"time"

	"github.com/agentwallet/agentwallet/internal/money"
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
	AssetNotAllowed     Reason = "asset_not_allowed"
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
	WalletFrozen, AssetNotAllowed, RecipientNotAllowed, ExceedsMaxTx, ExceedsDailyLimit,
	ExceedsWeeklyLimit, ExceedsMonthlyLimit, ExceedsVelocity, OutsideActiveHours,
}

// Rule names what decided an outcome: the policy field whose rule it is
// ("state" for a frozen wallet); "" when no rule stopped a send.
type Rule string

// The rules, by the field that holds each.
const (
	RuleState             Rule = "state"
	RuleAssets            Rule = "assets"
	RuleAllowlist         Rule = "allowlist"
	RuleMaxTx             Rule = "max_tx_usdc"
	RuleDailyLimit        Rule = "daily_limit_usdc"
	RuleWeeklyLimit       Rule = "weekly_limit_usdc"
	RuleMonthlyLimit      Rule = "monthly_limit_usdc"
	RuleMaxTxPerHour      Rule = "max_tx_per_hour"
	RuleMaxTxPerDay       Rule = "max_tx_per_day"
	RuleActiveHours       Rule = "active_hours"
	RuleApprovalThreshold Rule = "approval_threshold_usdc"
	// The EUR limits' rules: what governs a payment in a EUR stablecoin.
	RuleMaxTxEUR             Rule = "max_tx_eur"
	RuleDailyLimitEUR        Rule = "daily_limit_eur"
	RuleWeeklyLimitEUR       Rule = "weekly_limit_eur"
	RuleMonthlyLimitEUR      Rule = "monthly_limit_eur"
	RuleApprovalThresholdEUR Rule = "approval_threshold_eur"
)

// Rules are every Rule, in the order they are checked (a payment meets
// the amount rules of its own currency only).
var Rules = []Rule{
	RuleState, RuleAssets, RuleAllowlist, RuleMaxTx, RuleMaxTxEUR, RuleDailyLimit, RuleDailyLimitEUR,
	RuleWeeklyLimit, RuleWeeklyLimitEUR, RuleMonthlyLimit, RuleMonthlyLimitEUR,
	RuleMaxTxPerHour, RuleMaxTxPerDay, RuleActiveHours, RuleApprovalThreshold, RuleApprovalThresholdEUR,
}

// amountRules are the rules of one currency's limits.
type amountRules struct{ maxTx, daily, weekly, monthly, threshold Rule }

func rulesOf(c money.Code) amountRules {
	if c == money.CodeEUR {
		return amountRules{RuleMaxTxEUR, RuleDailyLimitEUR, RuleWeeklyLimitEUR, RuleMonthlyLimitEUR, RuleApprovalThresholdEUR}
	}
	return amountRules{RuleMaxTx, RuleDailyLimit, RuleWeeklyLimit, RuleMonthlyLimit, RuleApprovalThreshold}
}

// Usage is what a wallet has used of its limits when a payment is
// decided. Amounts are what was reserved or spent: pending and confirmed
// transactions and signed x402 payments (failed and expired ones released
// theirs; pending approvals reserve nothing). Counts are the payments (sends
// and x402 payments) that were sent or parked for approval; blocked ones
// and those the node refused count nothing. Only the windows a policy
// limits need be read (Policy.Windows).
type Usage struct {
	// USD and EUR are what was reserved or spent in each currency: the
	// USD stablecoins' payments together, the EUR ones'.
	USD Spent[money.USD]
	EUR Spent[money.EUR]
	// PaymentsLastHour and PaymentsLastDay: the last hour and 24 hours,
	// payments in every asset.
	PaymentsLastHour, PaymentsLastDay int
}

// Spent is what one currency's payments reserved or spent.
type Spent[C money.Currency] struct {
	// Today: the current UTC day.
	Today money.Micros[C]
	// Week and Month: the last 7 and 30 days (rolling).
	Week, Month money.Micros[C]
}

// Windows says which parts of a Usage a policy reads: the day of the
// payment's currency always, and the windows it limits.
type Windows struct {
	// Currency is the payment's (zero value: USD): only its amounts are
	// read.
	Currency               money.Code
	Week, Month, Hour, Day bool
}

// Windows are the usage windows p limits for a payment in currency c.
func (p Policy) Windows(c money.Code) Windows {
	week, month := p.WeeklyLimit != nil, p.MonthlyLimit != nil
	if c == money.CodeEUR {
		l := p.EURLimits()
		week, month = l.WeeklyLimit != nil, l.MonthlyLimit != nil
	}
	return Windows{Currency: c, Week: week, Month: month, Hour: p.MaxTxPerHour != nil, Day: p.MaxTxPerDay != nil}
}

// Request describes one payment to evaluate.
type Request struct {
	To string
	// Also are the payment's other recipients (an MPP charge's splits):
	// the allowlist holds each of them as it holds To.
	Also []string
	// Asset is the symbol of what is paid (USDC, EURC, …; "" is USDC);
	// Amount is in the currency it is pegged to.
	Asset  string
	Amount money.Amount
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
	// RemainingToday is what the daily limit of the payment's currency
	// still allows before this send, so a blocked agent can adjust.
	RemainingToday money.Amount
}

// Evaluate applies the policy to a payment. The first failing rule wins:
// frozen, asset, recipient, then the limits of the payment's currency
// (per-send maximum, daily, weekly and monthly), payments per hour and
// per day, active hours (when they block); then a payment outside the
// active hours (when they park) or at or above the currency's approval
// threshold needs a human, and anything else is sent.
func (p Policy) Evaluate(r Request) Decision {
	if m, ok := money.As[money.EUR](r.Amount); ok {
		return evaluate(p, r, p.EURLimits(), r.Usage.EUR, m)
	}
	m, _ := money.As[money.USD](r.Amount)
	return evaluate(p, r, p.USDLimits(), r.Usage.USD, m)
}

// evaluate is Evaluate for a payment of amount in currency C, under that
// currency's limits and what its payments have spent.
func evaluate[C money.Currency](p Policy, r Request, l Limits[C], spent Spent[C], amount money.Micros[C]) Decision {
	left := max(0, l.DailyLimit-spent.Today)
	d := Decision{RemainingToday: money.Of(left)}
	names := rulesOf(money.CodeOf[C]())
	over := func(limit *money.Micros[C], spent money.Micros[C]) bool {
		return limit != nil && amount > max(0, *limit-spent)
	}
	reached := func(limit *int, n int) bool { return !r.Approved && limit != nil && n >= *limit }
	outside := !r.Approved && p.ActiveHours != nil && !p.ActiveHours.Contains(r.At)
	block := func(reason Reason, rule Rule) { d.Outcome, d.Reason, d.Rule = Blocked, reason, rule }
	switch {
	case r.Frozen:
		block(WalletFrozen, RuleState)
	case !p.Spends(cmp.Or(r.Asset, "USDC")):
		block(AssetNotAllowed, RuleAssets)
	case !p.allows(r.To) || slices.ContainsFunc(r.Also, func(to string) bool { return !p.allows(to) }):
		block(RecipientNotAllowed, RuleAllowlist)
	case amount > l.MaxTx:
		block(ExceedsMaxTx, names.maxTx)
	case amount > left:
		block(ExceedsDailyLimit, names.daily)
	case over(l.WeeklyLimit, spent.Week):
		block(ExceedsWeeklyLimit, names.weekly)
	case over(l.MonthlyLimit, spent.Month):
		block(ExceedsMonthlyLimit, names.monthly)
	case reached(p.MaxTxPerHour, r.PaymentsLastHour):
		block(ExceedsVelocity, RuleMaxTxPerHour)
	case reached(p.MaxTxPerDay, r.PaymentsLastDay):
		block(ExceedsVelocity, RuleMaxTxPerDay)
	case outside && p.OutsideActiveHours.orBlock() == OutsideBlock:
		block(OutsideActiveHours, RuleActiveHours)
	case outside:
		d.Outcome, d.Rule = NeedsApproval, RuleActiveHours
	case amount >= l.ApprovalThreshold:
		d.Outcome, d.Rule = NeedsApproval, names.threshold
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
