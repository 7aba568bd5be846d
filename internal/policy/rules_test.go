package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/money"
)

func hours(t testing.TB, tz string, days []string, from, to string) *ActiveHours {
	t.Helper()
	h, err := ParseActiveHours(tz, days, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return &h
}

var weekdays = []string{"mon", "tue", "wed", "thu", "fri"}

func ptr[T any](v T) *T { return &v }

func TestParseActiveHours(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		tz       string
		days     []string
		from, to string
		field    string // "" means valid
	}{
		{"office hours", "America/New_York", weekdays, "09:00", "18:00", ""},
		{"UTC", "UTC", []string{"sun"}, "00:00", "24:00", ""},
		{"overnight", "Europe/Paris", []string{"fri"}, "22:00", "06:00", ""},
		{"unknown zone", "Mars/Olympus", weekdays, "09:00", "18:00", "active_hours.timezone"},
		{"empty zone", "", weekdays, "09:00", "18:00", "active_hours.timezone"},
		{"server's zone", "Local", weekdays, "09:00", "18:00", "active_hours.timezone"},
		{"path in zone", "../../etc/passwd", weekdays, "09:00", "18:00", "active_hours.timezone"},
		{"lower-case zone", "america/new_york", weekdays, "09:00", "18:00", "active_hours.timezone"},
		{"no days", "UTC", []string{}, "09:00", "18:00", "active_hours.days"},
		{"bad day", "UTC", []string{"mon", "Tue"}, "09:00", "18:00", "active_hours.days[1]"},
		{"duplicate day", "UTC", []string{"mon", "tue", "mon"}, "09:00", "18:00", "active_hours.days[2]"},
		{"single-digit hour", "UTC", weekdays, "9:00", "18:00", "active_hours.from"},
		{"minute 60", "UTC", weekdays, "09:60", "18:00", "active_hours.from"},
		{"hour 25", "UTC", weekdays, "09:00", "25:00", "active_hours.to"},
		{"from 24:00", "UTC", weekdays, "24:00", "18:00", "active_hours.from"},
		{"to 24:30", "UTC", weekdays, "09:00", "24:30", "active_hours.to"},
		{"seconds", "UTC", weekdays, "09:00:00", "18:00", "active_hours.from"},
		{"words", "UTC", weekdays, "9am", "18:00", "active_hours.from"},
		{"empty window", "UTC", weekdays, "09:00", "09:00", "active_hours.to"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, err := ParseActiveHours(tc.tz, tc.days, tc.from, tc.to)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if fe := h.Valid(); fe != nil {
					t.Fatalf("parsed hours invalid: %v", fe)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("error %v, want a FieldError on %s", err, tc.field)
			}
		})
	}
}

func TestActiveHours_Contains(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	at := func(y int, m time.Month, d, hh, mm, ss int) time.Time { return time.Date(y, m, d, hh, mm, ss, 0, ny) }
	office := hours(t, "America/New_York", weekdays, "09:00", "18:00")
	night := hours(t, "America/New_York", []string{"fri"}, "22:00", "06:00")
	early := hours(t, "America/New_York", []string{"sun"}, "01:00", "03:00")
	allMonday := hours(t, "America/New_York", []string{"mon"}, "00:00", "24:00")
	cases := []struct {
		name string
		h    *ActiveHours
		t    time.Time
		in   bool
	}{
		// 2026-11-21 is a Saturday, 2026-11-24 a Tuesday.
		{"saturday 10:00", office, at(2026, 11, 21, 10, 0, 0), false},
		{"tuesday 10:00", office, at(2026, 11, 24, 10, 0, 0), true},
		{"from is inclusive", office, at(2026, 11, 24, 9, 0, 0), true},
		{"a second before from", office, at(2026, 11, 24, 8, 59, 59), false},
		{"a second before to", office, at(2026, 11, 24, 17, 59, 59), true},
		{"to is exclusive", office, at(2026, 11, 24, 18, 0, 0), false},
		// The zone's wall clock, whatever the offset: 09:30 in summer
		// (UTC-4) and in winter (UTC-5).
		{"summer 09:30", office, time.Date(2026, 7, 14, 13, 30, 0, 0, time.UTC), true},
		{"winter 09:30", office, time.Date(2026, 1, 13, 14, 30, 0, 0, time.UTC), true},
		{"summer 08:30 (12:30 UTC)", office, time.Date(2026, 7, 14, 12, 30, 0, 0, time.UTC), false},
		{"winter 08:30 (13:30 UTC)", office, time.Date(2026, 1, 13, 13, 30, 0, 0, time.UTC), false},
		// 2026-03-08: clocks jump from 02:00 EST to 03:00 EDT.
		{"spring forward: 01:59 EST", early, time.Date(2026, 3, 8, 6, 59, 0, 0, time.UTC), true},
		{"spring forward: 03:00 EDT, an hour later", early, time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), false},
		// 2026-11-01: 01:00–02:00 happens twice; both are inside.
		{"fall back: first 01:30", early, time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), true},
		{"fall back: second 01:30", early, time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC), true},
		{"fall back: 02:30 EST", early, time.Date(2026, 11, 1, 7, 30, 0, 0, time.UTC), true},
		{"fall back: 03:00 EST", early, time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC), false},
		// Overnight: Friday 22:00 to Saturday 06:00.
		{"friday 21:59", night, at(2026, 11, 20, 21, 59, 0), false},
		{"friday 22:00", night, at(2026, 11, 20, 22, 0, 0), true},
		{"saturday 05:59", night, at(2026, 11, 21, 5, 59, 0), true},
		{"saturday 06:00", night, at(2026, 11, 21, 6, 0, 0), false},
		{"saturday 23:00 (saturday not listed)", night, at(2026, 11, 21, 23, 0, 0), false},
		{"friday 03:00 (thursday not listed)", night, at(2026, 11, 20, 3, 0, 0), false},
		{"monday 23:59:59 to 24:00", allMonday, at(2026, 11, 23, 23, 59, 59), true},
		{"tuesday 00:00", allMonday, at(2026, 11, 24, 0, 0, 0), false},
	}
	for _, tc := range cases {
		if got := tc.h.Contains(tc.t); got != tc.in {
			t.Errorf("%s: Contains(%v) = %v, want %v", tc.name, tc.t.In(ny), got, tc.in)
		}
	}
}

// Active hours are stored and shown as the API spells them, days Monday
// first, and read back to the same window.
func TestActiveHours_JSONRoundTrip(t *testing.T) {
	t.Parallel()
	h := hours(t, "America/New_York", []string{"fri", "mon"}, "22:00", "24:00")
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"timezone":"America/New_York","days":["mon","fri"],"from":"22:00","to":"24:00"}`; string(b) != want {
		t.Fatalf("marshalled %s, want %s", b, want)
	}
	var back ActiveHours
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(*h) || back.Valid() != nil {
		t.Fatalf("read back %+v (%v)", back, err)
	}
	if err := json.Unmarshal([]byte(`{"timezone":"Nowhere/Town","days":["mon"],"from":"09:00","to":"18:00"}`), &back); err == nil {
		t.Fatal("an unknown stored zone was read")
	}
}

func TestValidate_OptionalRules(t *testing.T) {
	t.Parallel()
	with := func(f func(*Policy)) Policy { p := Default(); f(&p); return p }
	cases := []struct {
		name  string
		p     Policy
		field string
	}{
		{"every rule", with(func(p *Policy) {
			p.WeeklyLimit, p.MonthlyLimit, p.MaxTxPerHour, p.MaxTxPerDay = ptr(500*money.Dollar), ptr(money.Micros[money.USD](0)), ptr(0), ptr(MaxTxCount)
			p.ActiveHours, p.OutsideActiveHours = hours(t, "UTC", weekdays, "09:00", "18:00"), OutsideApprove
		}), ""},
		{"outside without hours", with(func(p *Policy) { p.OutsideActiveHours = OutsideApprove }), ""},
		{"negative weekly", with(func(p *Policy) { p.WeeklyLimit = ptr(money.Micros[money.USD](-1)) }), "weekly_limit_usdc"},
		{"huge monthly", with(func(p *Policy) { p.MonthlyLimit = ptr(money.Micros[money.USD](money.MaxMicros) + 1) }), "monthly_limit_usdc"},
		{"negative per hour", with(func(p *Policy) { p.MaxTxPerHour = ptr(-1) }), "max_tx_per_hour"},
		{"huge per day", with(func(p *Policy) { p.MaxTxPerDay = ptr(MaxTxCount + 1) }), "max_tx_per_day"},
		{"hours not parsed", with(func(p *Policy) { p.ActiveHours = &ActiveHours{Timezone: "UTC", Days: 1, From: 0, To: 60} }), "active_hours.timezone"},
		{"bad outside", with(func(p *Policy) { p.OutsideActiveHours = "ask" }), "outside_active_hours"},
	}
	for _, tc := range cases {
		err := tc.p.Validate()
		var fe *FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("%s: error %v, want a FieldError on %s", tc.name, err, tc.field)
		}
	}
}

func TestEvaluate_OptionalRules(t *testing.T) {
	t.Parallel()
	const u = money.Dollar
	tuesday := time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC) // 10:00 in New York
	saturday := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	base := Policy{DailyLimit: 100 * u, MaxTx: 25 * u, ApprovalThreshold: 10 * u}
	with := func(f func(*Policy)) Policy { p := base; f(&p); return p }
	rules := with(func(p *Policy) {
		p.WeeklyLimit, p.MonthlyLimit = ptr(300*u), ptr(1000*u)
		p.MaxTxPerHour, p.MaxTxPerDay = ptr(10), ptr(50)
		p.ActiveHours = hours(t, "America/New_York", weekdays, "09:00", "18:00")
	})
	parks := with(func(p *Policy) { *p = rules; p.OutsideActiveHours = OutsideApprove })
	req := func(amount money.Micros[money.USD], at time.Time, f func(*Usage)) Request {
		r := Request{To: addrB, Amount: usd(amount), At: at}
		if f != nil {
			f(&r.Usage)
		}
		return r
	}
	cases := []struct {
		name    string
		p       Policy
		r       Request
		outcome Outcome
		reason  Reason
		rule    Rule
	}{
		{"no new rule: today's behaviour", base, req(1*u, saturday, func(u *Usage) { u.PaymentsLastHour = 1000 }), Send, "", ""},
		{"within every rule", rules, req(1*u, tuesday, nil), Send, "", ""},
		{"threshold still parks", rules, req(10*u, tuesday, nil), NeedsApproval, "", RuleApprovalThreshold},
		{"week: spent + amount = limit passes", rules, req(5*u, tuesday, func(x *Usage) { x.USD.Week = 295 * u }), Send, "", ""},
		{"week: a micro over", rules, req(5*u+1, tuesday, func(x *Usage) { x.USD.Week = 295 * u }), Blocked, ExceedsWeeklyLimit, RuleWeeklyLimit},
		{"week overspent (lowered)", rules, req(1, tuesday, func(x *Usage) { x.USD.Week = 400 * u }), Blocked, ExceedsWeeklyLimit, RuleWeeklyLimit},
		{"month: a micro over", rules, req(5*u+1, tuesday, func(x *Usage) { x.USD.Month = 995 * u }), Blocked, ExceedsMonthlyLimit, RuleMonthlyLimit},
		{"zero weekly limit blocks", with(func(p *Policy) { p.WeeklyLimit = ptr(money.Micros[money.USD](0)) }), req(1, tuesday, nil), Blocked, ExceedsWeeklyLimit, RuleWeeklyLimit},
		{"hour: 9 before passes", rules, req(1*u, tuesday, func(x *Usage) { x.PaymentsLastHour = 9 }), Send, "", ""},
		{"hour: 10 before blocks", rules, req(1*u, tuesday, func(x *Usage) { x.PaymentsLastHour = 10 }), Blocked, ExceedsVelocity, RuleMaxTxPerHour},
		{"day: 50 before blocks", rules, req(1*u, tuesday, func(x *Usage) { x.PaymentsLastDay = 50 }), Blocked, ExceedsVelocity, RuleMaxTxPerDay},
		{"zero per hour blocks all", with(func(p *Policy) { p.MaxTxPerHour = ptr(0) }), req(1, tuesday, nil), Blocked, ExceedsVelocity, RuleMaxTxPerHour},
		{"saturday blocked", rules, req(1*u, saturday, nil), Blocked, OutsideActiveHours, RuleActiveHours},
		{"saturday parked with approve", parks, req(1, saturday, nil), NeedsApproval, "", RuleActiveHours},
		{"tuesday with approve is sent", parks, req(1*u, tuesday, nil), Send, "", ""},
		// Order: ... → daily → weekly → monthly → per hour → per day → hours.
		{"daily beats weekly", rules, req(20*u, tuesday, func(x *Usage) { x.USD.Today, x.USD.Week = 90*u, 300*u }), Blocked, ExceedsDailyLimit, RuleDailyLimit},
		{"weekly beats monthly", rules, req(1*u, tuesday, func(x *Usage) { x.USD.Week, x.USD.Month = 300*u, 1000*u }), Blocked, ExceedsWeeklyLimit, RuleWeeklyLimit},
		{"monthly beats velocity", rules, req(1*u, tuesday, func(x *Usage) { x.USD.Month, x.PaymentsLastHour = 1000*u, 10 }), Blocked, ExceedsMonthlyLimit, RuleMonthlyLimit},
		{"velocity beats hours", rules, req(1*u, saturday, func(x *Usage) { x.PaymentsLastHour = 10 }), Blocked, ExceedsVelocity, RuleMaxTxPerHour},
		{"max_tx beats hours", rules, req(30*u, saturday, nil), Blocked, ExceedsMaxTx, RuleMaxTx},
		{"frozen first", rules, Request{To: addrB, Amount: usd(1), Frozen: true, At: saturday}, Blocked, WalletFrozen, RuleState},
		// A payment a human approved: its count and hours were judged
		// when it was asked for; its amounts are judged again.
		{"approved: hours and velocity not again", rules, Request{To: addrB, Amount: usd(1 * u), At: saturday, Approved: true,
			Usage: Usage{PaymentsLastHour: 99, PaymentsLastDay: 99}}, Send, "", ""},
		{"approved: weekly again", rules, Request{To: addrB, Amount: usd(1 * u), At: saturday, Approved: true,
			Usage: Usage{USD: Spent[money.USD]{Week: 300 * u}}}, Blocked, ExceedsWeeklyLimit, RuleWeeklyLimit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := tc.p.Evaluate(tc.r)
			if d.Outcome != tc.outcome || d.Reason != tc.reason || d.Rule != tc.rule {
				t.Fatalf("got %v/%q/%q, want %v/%q/%q", d.Outcome, d.Reason, d.Rule, tc.outcome, tc.reason, tc.rule)
			}
		})
	}
}

func TestLoosening_OptionalRules(t *testing.T) {
	t.Parallel()
	const u = money.Dollar
	base := Default()
	with := func(p Policy, f func(*Policy)) Policy { f(&p); return p }
	office := hours(t, "America/New_York", weekdays, "09:00", "18:00")
	ruled := with(base, func(p *Policy) {
		p.WeeklyLimit, p.MonthlyLimit, p.MaxTxPerHour, p.MaxTxPerDay = ptr(300*u), ptr(1000*u), ptr(10), ptr(50)
		p.ActiveHours = office
	})
	parks := with(ruled, func(p *Policy) { p.OutsideActiveHours = OutsideApprove })
	for _, c := range []struct {
		name          string
		before, after Policy
		want          string // in the answer; "" means it only tightens
	}{
		{"set every rule", base, ruled, ""},
		{"unchanged", ruled, ruled, ""},
		{"lower weekly", ruled, with(ruled, func(p *Policy) { p.WeeklyLimit = ptr(299 * u) }), ""},
		{"lower monthly to 0", ruled, with(ruled, func(p *Policy) { p.MonthlyLimit = ptr(money.Micros[money.USD](0)) }), ""},
		{"lower per hour", ruled, with(ruled, func(p *Policy) { p.MaxTxPerHour = ptr(1) }), ""},
		{"lower per day", ruled, with(ruled, func(p *Policy) { p.MaxTxPerDay = ptr(0) }), ""},
		{"narrow hours", ruled, with(ruled, func(p *Policy) {
			p.ActiveHours = hours(t, "America/New_York", []string{"tue", "wed"}, "10:00", "17:00")
		}), ""},
		{"approve → block", parks, ruled, ""},
		{"raise weekly", ruled, with(ruled, func(p *Policy) { p.WeeklyLimit = ptr(300*u + 1) }), "weekly_limit_usdc from 300 to 300.000001"},
		{"remove weekly", ruled, with(ruled, func(p *Policy) { p.WeeklyLimit = nil }), "remove a policy limit (weekly_limit_usdc"},
		{"raise monthly", ruled, with(ruled, func(p *Policy) { p.MonthlyLimit = ptr(2000 * u) }), "monthly_limit_usdc"},
		{"remove monthly", ruled, with(ruled, func(p *Policy) { p.MonthlyLimit = nil }), "monthly_limit_usdc"},
		{"raise per hour", ruled, with(ruled, func(p *Policy) { p.MaxTxPerHour = ptr(11) }), "max_tx_per_hour from 10 to 11"},
		{"remove per hour", ruled, with(ruled, func(p *Policy) { p.MaxTxPerHour = nil }), "max_tx_per_hour"},
		{"raise per day", ruled, with(ruled, func(p *Policy) { p.MaxTxPerDay = ptr(51) }), "max_tx_per_day"},
		{"remove per day", ruled, with(ruled, func(p *Policy) { p.MaxTxPerDay = nil }), "max_tx_per_day"},
		{"remove hours", ruled, with(ruled, func(p *Policy) { p.ActiveHours = nil }), "remove the active hours"},
		{"add a day", ruled, with(ruled, func(p *Policy) {
			p.ActiveHours = hours(t, "America/New_York", append([]string{"sat"}, weekdays...), "09:00", "18:00")
		}), "widen the active hours"},
		{"start earlier", ruled, with(ruled, func(p *Policy) {
			p.ActiveHours = hours(t, "America/New_York", weekdays, "08:59", "18:00")
		}), "widen the active hours"},
		{"end later", ruled, with(ruled, func(p *Policy) {
			p.ActiveHours = hours(t, "America/New_York", weekdays, "09:00", "18:01")
		}), "widen the active hours"},
		{"overnight spilling into an unlisted morning", with(base, func(p *Policy) {
			p.ActiveHours = hours(t, "UTC", []string{"fri"}, "00:00", "24:00")
		}), with(base, func(p *Policy) {
			p.ActiveHours = hours(t, "UTC", []string{"fri"}, "22:00", "01:00")
		}), "widen the active hours"},
		{"overnight within two listed days", with(base, func(p *Policy) {
			p.ActiveHours = hours(t, "UTC", []string{"fri", "sat"}, "00:00", "24:00")
		}), with(base, func(p *Policy) {
			p.ActiveHours = hours(t, "UTC", []string{"fri"}, "22:00", "01:00")
		}), ""},
		{"another zone", ruled, with(ruled, func(p *Policy) {
			p.ActiveHours = hours(t, "America/Chicago", weekdays, "10:00", "17:00")
		}), "time zone"},
		{"block → approve", ruled, parks, "outside_active_hours from block to approve"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Loosening(c.before, c.after)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Fatalf("Loosening = %q, want %q", got, c.want)
			}
		})
	}
}

// A patch sets, keeps or removes each optional rule.
func TestApply_SetsKeepsOrRemovesRules(t *testing.T) {
	t.Parallel()
	ruled := Default()
	ruled.WeeklyLimit, ruled.MaxTxPerHour = ptr(7*money.Dollar), ptr(3)
	ruled.ActiveHours = hours(t, "UTC", weekdays, "09:00", "18:00")
	got := ruled.Apply(Patch{WeeklyLimit: Remove[money.Micros[money.USD]](), MonthlyLimit: To(9 * money.Dollar), OutsideActiveHours: ptr(OutsideApprove)})
	if got.WeeklyLimit != nil || *got.MonthlyLimit != 9*money.Dollar || *got.MaxTxPerHour != 3 || got.ActiveHours == nil || got.OutsideActiveHours != OutsideApprove {
		t.Fatalf("applied: %+v", got)
	}
	if ruled.Same(got) || !ruled.Same(ruled.Apply(Patch{})) {
		t.Fatal("Same does not tell the policies apart")
	}
}
