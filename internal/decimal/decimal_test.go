package decimal

import (
	"math"
	"testing"
)

func f(v float64) *float64 { return &v }

func TestRound(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		d    int
		want float64
	}{
		{1.2345, 2, 1.23}, {1.235, 1, 1.2}, {2.5, 0, 3}, {-2.5, 0, -3}, {0.0005, 3, 0.001}, {1234.5, -2, 1200},
	} {
		if got := Round(tc.v, tc.d); got != tc.want {
			t.Errorf("Round(%v, %d) = %v, want %v", tc.v, tc.d, got, tc.want)
		}
	}
	// The open-coded form the packages used before: the same bits.
	for _, v := range []float64{0.1234567, 98.76543, 1e6 / 3, 12.05} {
		if Round(v, 1) != math.Round(v*10)/10 || Round(v, 3) != math.Round(v*1000)/1000 {
			t.Errorf("Round(%v) differs from math.Round(v*10^d)/10^d", v)
		}
	}
	if Rounded(nil, 1) != nil || Rounded(f(math.NaN()), 1) != nil {
		t.Error("Rounded: nil or NaN must give nil")
	}
	if got := Rounded(f(3.14159), 2); got == nil || *got != 3.14 {
		t.Errorf("Rounded(3.14159, 2) = %v", got)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		p    *float64
		d    int
		want string
	}{
		{nil, 1, "—"}, {f(math.NaN()), 0, "—"}, {f(941.04), 1, "941.0"}, {f(941.06), 0, "941"}, {f(0.125), 2, "0.12"}, {f(-3), 1, "-3.0"},
	} {
		if got := Format(tc.p, tc.d); got != tc.want {
			t.Errorf("Format(%v, %d) = %q, want %q", tc.p, tc.d, got, tc.want)
		}
	}
	for _, tc := range []struct {
		p    *float64
		want string
	}{
		{nil, "—"}, {f(0.5), "50.0%"}, {f(0.9876), "98.8%"}, {f(1.2), "120.0%"},
	} {
		if got := Pct(tc.p); got != tc.want {
			t.Errorf("Pct(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
