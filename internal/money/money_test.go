package money

import (
	"errors"
	"strconv"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want Micros[USD]
		err  error
	}{
		{"0", 0, nil},
		{"12", 12_000_000, nil},
		{"12.5", 12_500_000, nil},
		{"0.000001", 1, nil},
		{"1.000000", 1_000_000, nil},
		{"1e3", 1_000_000_000, nil},
		{"1.5E+2", 150_000_000, nil},
		{"25e-6", 25, nil},
		{"1000000000000", MaxMicros, nil},
		{"-0", 0, nil},
		{"0.0000001", 0, ErrPrecision},
		{"1.0000001", 0, ErrPrecision},
		{"1e-7", 0, ErrPrecision},
		{"-1", 0, ErrNegative},
		{"-0.5", 0, ErrNegative},
		{"1000000000000.000001", 0, ErrRange},
		{"1e19", 0, ErrRange},
		{"1e400", 0, ErrRange},
		{"99999999999999999999999", 0, ErrRange},
		{"", 0, ErrSyntax},
		{"abc", 0, ErrSyntax},
		{"1.", 0, ErrSyntax},
		{".5", 0, ErrSyntax},
		{"NaN", 0, ErrSyntax},
		{"Infinity", 0, ErrSyntax},
		{"1e", 0, ErrSyntax},
		{"0x10", 0, ErrSyntax},
	}
	for _, tc := range cases {
		got, err := Parse[USD](tc.in)
		if !errors.Is(err, tc.err) || (tc.err == nil && got != tc.want) {
			t.Errorf("Parse[USD](%q) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	for v, want := range map[Micros[EUR]]string{0: "0", 1: "0.000001", 12_500_000: "12.5", 3_000_000: "3", -1_500_000: "-1.5"} {
		if got := v.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", v, got, want)
		}
	}
}

// FuzzParse checks Parse never panics and that whatever it accepts prints
// back to a string that parses to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "12.5", "1e3", "0.000001", "-1", "1e-7", "1e400", "1.", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse[USD](s)
		if err != nil {
			return
		}
		if v < 0 || v > MaxMicros {
			t.Fatalf("Parse[USD](%q) = %d out of range", s, v)
		}
		back, err := Parse[USD](v.String())
		if err != nil || back != v {
			t.Fatalf("round trip %q → %d → %q → %d, %v", s, v, v.String(), back, err)
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && f < 1e9 {
			if d := f*1e6 - float64(v); d > 1 || d < -1 {
				t.Fatalf("Parse[USD](%q) = %d, float says %f", s, v, f*1e6)
			}
		}
	})
}

// An Amount answers only in its own currency: euros never read as dollars.
func TestAmount_AnswersOnlyInItsCurrency(t *testing.T) {
	t.Parallel()
	eur := Of(Micros[EUR](2_500_000))
	if _, ok := As[USD](eur); ok {
		t.Fatal("an amount of euros was read as dollars")
	}
	if m, ok := As[EUR](eur); !ok || m != 2_500_000 {
		t.Fatalf("As[EUR] = %v, %v", m, ok)
	}
	if got := eur.String(); got != "2.5 EUR" {
		t.Fatalf("String() = %q", got)
	}
	if _, err := AmountOf("GBP", 1); err == nil {
		t.Fatal("an unknown currency was accepted")
	}
	usd, err := AmountOf(CodeUSD, 7)
	if m, ok := As[USD](usd); err != nil || !ok || m != 7 {
		t.Fatalf("AmountOf(USD, 7) = %v, %v, %v", m, ok, err)
	}
}
