package custody

import "testing"

// A recovery's amounts are written exactly, in their asset's units.
func TestFormatUnits_WritesAmountsExactlyInTheirAssetsUnits(t *testing.T) {
	for _, c := range []struct {
		units    uint64
		decimals uint8
		want     string
	}{
		{0, 6, "0"},
		{1, 6, "0.000001"},
		{3_250_000, 6, "3.25"},
		{7_000_001, 6, "7.000001"},
		{5_000_000, 6, "5"},
		{997_935_320, 9, "0.99793532"},
		{18_446_744_073_709_551_615, 9, "18446744073.709551615"},
		{42, 0, "42"},
	} {
		if got := formatUnits(c.units, c.decimals); got != c.want {
			t.Errorf("formatUnits(%d, %d) = %q, want %q", c.units, c.decimals, got, c.want)
		}
	}
}
