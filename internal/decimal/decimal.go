// Package decimal holds the numeric helpers that computing and presenting
// share: a figure rounded to a stated number of decimals, and a figure
// written as text ("—" for a value not measured), so that summary.json's
// evidence sentences and the reports write a number the same way.
package decimal

import (
	"math"
	"strconv"
)

// Round rounds v to decimals places (half away from zero).
func Round(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

// Rounded returns a rounded copy of *p, or nil when p is nil or NaN.
func Rounded(p *float64, decimals int) *float64 {
	if p == nil || math.IsNaN(*p) {
		return nil
	}
	v := Round(*p, decimals)
	return &v
}

// Format writes *p with decimals places; "—" for nil or NaN.
func Format(p *float64, decimals int) string {
	if p == nil || math.IsNaN(*p) {
		return "—"
	}
	return strconv.FormatFloat(*p, 'f', decimals, 64)
}

// Pct writes the ratio *p as a percentage with one decimal ("0.5" is
// "50.0%"); "—" for nil or NaN.
func Pct(p *float64) string {
	if p == nil || math.IsNaN(*p) {
		return "—"
	}
	return strconv.FormatFloat(*p*100, 'f', 1, 64) + "%"
}
