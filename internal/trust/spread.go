package trust

import (
	"fmt"
	"math"
	"sort"

	"csbench/internal/report"
	"csbench/internal/summary"
)

// MinSpreadReps is the fewest repetitions a spread is given for.
const MinSpreadReps = 3

// Spread is how much one figure moved over a cell's repetitions.
type Spread struct {
	N                int
	Median, Min, Max float64
	// Pct is (max - min) / median, in percent: how far apart the
	// repetitions landed.
	Pct float64
}

// SpreadOf the values of the repetitions that measured a figure (nil
// entries are skipped). N is 0 when none did.
func SpreadOf(vals []*float64) Spread {
	var xs []float64
	for _, v := range vals {
		if v != nil && !math.IsNaN(*v) {
			xs = append(xs, *v)
		}
	}
	if len(xs) == 0 {
		return Spread{}
	}
	sort.Float64s(xs)
	n := len(xs)
	med := xs[n/2]
	if n%2 == 0 {
		med = (xs[n/2-1] + xs[n/2]) / 2
	}
	sp := Spread{N: n, Median: med, Min: xs[0], Max: xs[n-1], Pct: math.NaN()}
	if med != 0 {
		sp.Pct = (sp.Max - sp.Min) / math.Abs(med) * 100
	}
	return sp
}

// Text is "median M (min–max, spread P %)" with REPEAT >= MinSpreadReps,
// else the single value or the values.
func (s Spread) Text(decimals int) string {
	switch {
	case s.N == 0:
		return "—"
	case s.N == 1:
		return report.N(summary.F(s.Median), decimals)
	case s.N < MinSpreadReps:
		return fmt.Sprintf("%s and %s", report.N(summary.F(s.Min), decimals), report.N(summary.F(s.Max), decimals))
	}
	return fmt.Sprintf("median %s (%s–%s, spread %.1f %%)", report.N(summary.F(s.Median), decimals),
		report.N(summary.F(s.Min), decimals), report.N(summary.F(s.Max), decimals), s.Pct)
}
