package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Outside is what becomes of a payment asked for outside a wallet's
// active hours.
type Outside string

// What happens outside the active hours. The zero value is OutsideBlock.
const (
	OutsideBlock   Outside = "block"   // blocked, reason outside_active_hours
	OutsideApprove Outside = "approve" // parked for a human, whatever the amount
)

// orBlock is o with the zero value spelled out.
func (o Outside) orBlock() Outside {
	if o == "" {
		return OutsideBlock
	}
	return o
}

// Weekdays is a set of days of the week: bit d is time.Weekday d.
type Weekdays uint8

// Has reports whether d is in the set.
func (w Weekdays) Has(d time.Weekday) bool { return w&(1<<d) != 0 }

// dayNames are the days as the API spells them, in the order they are
// printed (the ISO week: Monday first).
var dayNames = []struct {
	name string
	day  time.Weekday
}{
	{"mon", time.Monday}, {"tue", time.Tuesday}, {"wed", time.Wednesday}, {"thu", time.Thursday},
	{"fri", time.Friday}, {"sat", time.Saturday}, {"sun", time.Sunday},
}

// Names lists the days, Monday first.
func (w Weekdays) Names() []string {
	out := []string{}
	for _, d := range dayNames {
		if w.Has(d.day) {
			out = append(out, d.name)
		}
	}
	return out
}

// MinutesPerDay is the end of a day on the clock: "24:00".
const MinutesPerDay = 24 * 60

// ActiveHours is when a wallet's agent may pay: on Days, from From
// (inclusive) to To (exclusive), wall-clock minutes after midnight in the
// IANA time zone Timezone, so daylight-saving changes follow the zone's
// rules. From after To is an overnight window: it opens on a listed day
// at From and closes at To on the next day, whether or not that day is
// listed. To may be MinutesPerDay ("24:00"), the end of the day. Make one
// with ParseActiveHours; the zero value is not a valid window.
type ActiveHours struct {
	Timezone string
	Days     Weekdays
	From, To int
	loc      *time.Location
}

// ParseActiveHours reads active hours as the API spells them: an IANA
// zone name, days "mon" … "sun" and times "HH:MM". A problem is a
// *FieldError naming the field under "active_hours".
func ParseActiveHours(timezone string, days []string, from, to string) (ActiveHours, error) {
	h := ActiveHours{Timezone: timezone}
	var err error
	if h.loc, err = loadZone(timezone); err != nil {
		return ActiveHours{}, &FieldError{"active_hours.timezone", err.Error()}
	}
	if len(days) == 0 {
		return ActiveHours{}, &FieldError{"active_hours.days", "must name at least one day (mon, tue, wed, thu, fri, sat, sun)"}
	}
	for i, name := range days {
		field := fmt.Sprintf("active_hours.days[%d]", i)
		d, ok := dayOf(name)
		if !ok {
			return ActiveHours{}, &FieldError{field, fmt.Sprintf("%q is not a day: use mon, tue, wed, thu, fri, sat or sun", truncate(name))}
		}
		if h.Days.Has(d) {
			return ActiveHours{}, &FieldError{field, fmt.Sprintf("%q is listed twice", name)}
		}
		h.Days |= 1 << d
	}
	if h.From, err = parseClock(from, false); err != nil {
		return ActiveHours{}, &FieldError{"active_hours.from", err.Error()}
	}
	if h.To, err = parseClock(to, true); err != nil {
		return ActiveHours{}, &FieldError{"active_hours.to", err.Error()}
	}
	if h.From == h.To {
		return ActiveHours{}, &FieldError{"active_hours.to", "must differ from from (for whole days use 00:00 to 24:00)"}
	}
	return h, nil
}

func dayOf(name string) (time.Weekday, bool) {
	for _, d := range dayNames {
		if d.name == name {
			return d.day, true
		}
	}
	return 0, false
}

// parseClock reads "HH:MM" (00:00 to 23:59, and 24:00 when end) into
// minutes after midnight.
func parseClock(s string, end bool) (int, error) {
	upTo := "23:59"
	if end {
		upTo = "24:00"
	}
	bad := fmt.Errorf("%q is not a time of day: use HH:MM, 00:00 to %s", truncate(s), upTo)
	if len(s) != 5 || s[2] != ':' {
		return 0, bad
	}
	digits := func(a, b byte) (int, bool) {
		if a < '0' || a > '9' || b < '0' || b > '9' {
			return 0, false
		}
		return int(a-'0')*10 + int(b-'0'), true
	}
	h, ok1 := digits(s[0], s[1])
	m, ok2 := digits(s[3], s[4])
	switch {
	case !ok1 || !ok2 || m > 59 || h > 24:
		return 0, bad
	case h == 24 && (m != 0 || !end):
		return 0, bad
	}
	return h*60 + m, nil
}

// zones caches loaded time zones: loading reads the tz database.
var zones sync.Map // name → *time.Location

// loadZone loads an IANA zone by name. "Local" (the server's zone) and ""
// are refused: a policy must mean the same on every server.
func loadZone(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	bad := fmt.Errorf("%q is not a time zone of the IANA database (e.g. America/New_York, Europe/Paris, UTC)", truncate(name))
	if name == "" || name == "Local" || len(name) > 64 || strings.ContainsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/_+-", r))
	}) {
		return nil, bad
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, bad
	}
	zones.Store(name, l)
	return l, nil
}

// Valid reports a problem with h (one not made by ParseActiveHours or
// UnmarshalJSON), naming the field under "active_hours".
func (h ActiveHours) Valid() *FieldError {
	switch {
	case h.loc == nil:
		return &FieldError{"active_hours.timezone", "is not a loaded time zone"}
	case h.Days == 0 || h.Days >= 1<<7:
		return &FieldError{"active_hours.days", "must name at least one day"}
	case h.From < 0 || h.From >= MinutesPerDay:
		return &FieldError{"active_hours.from", "must be 00:00 to 23:59"}
	case h.To < 0 || h.To > MinutesPerDay:
		return &FieldError{"active_hours.to", "must be 00:00 to 24:00"}
	case h.From == h.To:
		return &FieldError{"active_hours.to", "must differ from from"}
	}
	return nil
}

// Contains reports whether t is within the active hours, read on the
// zone's wall clock at t (so 09:00 is 09:00 in summer and in winter).
func (h ActiveHours) Contains(t time.Time) bool {
	l := t.In(h.loc)
	s := l.Hour()*3600 + l.Minute()*60 + l.Second()
	from, to := h.From*60, h.To*60
	day := l.Weekday()
	if h.From < h.To {
		return h.Days.Has(day) && from <= s && s < to
	}
	// Overnight: the evening of a listed day, or the morning after one.
	return h.Days.Has(day) && s >= from || h.Days.Has((day+6)%7) && s < to
}

// Equal reports whether h and o are the same window.
func (h ActiveHours) Equal(o ActiveHours) bool {
	return h.Timezone == o.Timezone && h.Days == o.Days && h.From == o.From && h.To == o.To
}

// week is the window as minutes of the week on the zone's wall clock
// (Sunday 00:00 is minute 0).
func (h ActiveHours) week() []bool {
	w := make([]bool, 7*MinutesPerDay)
	for d := range 7 {
		if !h.Days.Has(time.Weekday(d)) {
			continue
		}
		start, end := d*MinutesPerDay+h.From, d*MinutesPerDay+h.To
		if h.From > h.To {
			end += MinutesPerDay
		}
		for m := start; m < end; m++ {
			w[m%len(w)] = true
		}
	}
	return w
}

// within reports whether every minute of h is a minute of o (both in the
// same zone).
func (h ActiveHours) within(o ActiveHours) bool {
	inner, outer := h.week(), o.week()
	for m, in := range inner {
		if in && !outer[m] {
			return false
		}
	}
	return true
}

func clock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// activeHoursJSON is the API's (and the stored) spelling.
type activeHoursJSON struct {
	Timezone string   `json:"timezone"`
	Days     []string `json:"days"`
	From     string   `json:"from"`
	To       string   `json:"to"`
}

// MarshalJSON writes {"timezone","days","from","to"}, days Monday first.
func (h ActiveHours) MarshalJSON() ([]byte, error) {
	return json.Marshal(activeHoursJSON{Timezone: h.Timezone, Days: h.Days.Names(), From: clock(h.From), To: clock(h.To)})
}

// UnmarshalJSON reads what MarshalJSON writes, loading the zone: a zone
// the binary's tz database lacks is an error, never a silent UTC.
func (h *ActiveHours) UnmarshalJSON(b []byte) error {
	var j activeHoursJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	p, err := ParseActiveHours(j.Timezone, j.Days, j.From, j.To)
	if err != nil {
		return fmt.Errorf("active hours: %w", err)
	}
	*h = p
	return nil
}

// String is the window for people: "mon,tue 09:00-18:00 America/New_York".
func (h ActiveHours) String() string {
	return strings.Join(h.Days.Names(), ",") + " " + clock(h.From) + "-" + clock(h.To) + " " + h.Timezone
}
