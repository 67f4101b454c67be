package phase0

import (
	"slices"
	"testing"

	"csbench/internal/golden"
	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

// cell0 is a constructed cell: throughput tp Mbit/s (NaN: none), its share
// u of the ceiling (NaN: no ceiling), a busiest core of core %.
func cell0(tp, u, core float64) (*summary.Summary, *Figures) {
	s := &summary.Summary{Link: summary.Link{CeilingBasis: "no ceiling"}}
	f := &Figures{CPU: map[string]hostdata.CPUFigures{"server": {MaxCorePct: summary.F(core)}, "client": {MaxCorePct: summary.F(10)}}}
	f.ThroughputMbps, f.Retransmits = summary.F(tp), summary.F(0)
	if u == u {
		s.Link.TCPCeilingMbps = summary.F(tp / u)
		f.LinkUtilization = summary.F(u)
	}
	return s, f
}

func TestVerdictRules(t *testing.T) {
	nan := func() float64 { var z float64; return z / z }()
	for _, tc := range []struct {
		name        string
		status      string
		tp, u, core float64
		rule        rule
		code, bound string
	}{
		{"failed", "failed", 900, 0.95, 10, failedRule, CodeFailed, "none (failed)"},
		{"no throughput", "ok", nan, 0.95, 10, failedRule, CodeFailed, "none (failed)"},
		{"no link", "ok", 9000, nan, 100, noLinkRule, CodeCPUNoLink, "cpu (no link)"},
		{"link", "ok", 950, 0.95, 10, linkRule, CodeLink, "link"},
		{"cpu", "ok", 500, 0.5, 95, cpuRule, CodeCPU, "cpu"},
		{"unclear", "ok", 500, 0.5, 50, unclearRule, CodeUnclear, "unclear (below the link, CPU not saturated)"},
	} {
		s, f := cell0(tc.tp, tc.u, tc.core)
		j := &judged{s: s, status: tc.status, f: f}
		v := tc.rule(j)
		if v == nil || v.Code != tc.code || v.Bound != tc.bound || v.Evidence == "" {
			t.Errorf("%s: rule gave %+v, want code %q bound %q", tc.name, v, tc.code, tc.bound)
		}
		if w := verdict(s, tc.status, f); w == nil || w.Code != tc.code {
			t.Errorf("%s: verdict %+v, want code %q", tc.name, w, tc.code)
		}
	}
	// A rule that does not hold says nothing.
	s, f := cell0(500, 0.5, 50)
	j := &judged{s: s, status: "ok", f: f}
	for name, r := range map[string]rule{"failed": failedRule, "no link": noLinkRule, "link": linkRule, "cpu": cpuRule} {
		if v := r(j); v != nil {
			t.Errorf("%s holds on a cell at half the link with idle CPUs: %+v", name, v)
		}
	}
}

// Every code a rule returns is in Codes (and so in docs/verdicts.md).
func TestVerdictCodesListed(t *testing.T) {
	nan := func() float64 { var z float64; return z / z }()
	for _, st := range []string{"ok", "failed"} {
		for _, tp := range []float64{nan, 500, 950} {
			for _, u := range []float64{nan, 0.5, 0.95, 1} {
				for _, core := range []float64{nan, 10, 95} {
					s, f := cell0(tp, u, core)
					if v := verdict(s, st, f); v == nil || !slices.Contains(Codes, v.Code) {
						t.Errorf("status %s, %v Mbit/s, utilization %v, core %v: verdict %+v not in %v", st, tp, u, core, v, Codes)
					}
				}
			}
		}
	}
}

func TestVerdictCodesDocumented(t *testing.T) {
	golden.Documented(t, "../../docs/verdicts.md", "## Phase 0", Codes)
}
