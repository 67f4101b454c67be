package phase4

import (
	"slices"
	"strings"
	"testing"

	"csbench/internal/golden"
	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

// cell4 is a constructed cell of scenario kind whose figures are set by
// set on a cell that completed 100 connections at its rate.
func cell4(kind string, set func(f *Figures)) (*summary.Cell, *Figures) {
	c := &summary.Cell{Status: "ok", Params: map[string]string{"scenario": kind}}
	f := &Figures{Counters: map[string]hostdata.CounterFigures{}}
	f.ConnectionsCompleted, f.RateAchievedRatio, f.ErrorPct = summary.F(100), summary.F(1), summary.F(0)
	if set != nil {
		set(f)
	}
	return c, f
}

func TestVerdictRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind string
		set  func(f *Figures)
		rule rule
		code string
	}{
		{"no result", "churn", func(f *Figures) { f.ConnectionsCompleted = nil }, noResultRule, BoundNoResult},
		{"overflowed", "backlog", func(f *Figures) {
			f.Counters["server"] = hostdata.CounterFigures{ListenOverflows: summary.F(10)}
		}, backlogRule, BoundBacklog},
		{"absorbed", "backlog", nil, burstAbsorbedRule, BoundNone},
		{"ports", "churn", func(f *Figures) { f.ErrorsEAddrNotAvail = summary.F(3) }, portsRule, BoundPorts},
		{"errors", "churn", func(f *Figures) { f.ErrorPct = summary.F(2) }, rateRule, BoundRate},
		{"rate", "churn", func(f *Figures) { f.RateAchievedRatio = summary.F(0.9) }, rateRule, BoundRate},
		{"latency", "accept", func(f *Figures) { f.AcceptP99BoundMs, f.LatencyP99Ms = summary.F(10), summary.F(11) }, latencyRule, BoundLatency},
		{"sustained", "accept", func(f *Figures) { f.AcceptP99BoundMs, f.LatencyP99Ms = summary.F(10), summary.F(9) }, sustainedRule, BoundNone},
	} {
		c, f := cell4(tc.kind, tc.set)
		if v := tc.rule(c, f); v == nil || v.Code != tc.code || v.Bound != Word(tc.code) || v.Evidence == "" {
			t.Errorf("%s: rule gave %+v, want code %q", tc.name, v, tc.code)
		}
		if v := verdict(c, f); v == nil || v.Code != tc.code {
			t.Errorf("%s: verdict %+v, want code %q", tc.name, v, tc.code)
		}
	}
	// On a churn cell that kept its rate, no rule before the last holds.
	c, f := cell4("churn", nil)
	for i, r := range rules[:len(rules)-1] {
		if v := r(c, f); v != nil {
			t.Errorf("rule %d holds on a churn cell that kept its rate: %+v", i, v)
		}
	}
	if v := verdict(&summary.Cell{Status: "refused"}, f); v != nil {
		t.Errorf("a refused cell has verdict %+v, want none", v)
	}
}

// Every code a rule returns is in Codes (and so in docs/verdicts.md).
func TestVerdictCodesListed(t *testing.T) {
	sets := []func(f *Figures){nil,
		func(f *Figures) { f.ConnectionsCompleted = nil },
		func(f *Figures) { f.Counters["server"] = hostdata.CounterFigures{ListenOverflows: summary.F(1)} },
		func(f *Figures) { f.ErrorsEAddrNotAvail = summary.F(1) },
		func(f *Figures) { f.ErrorPct = summary.F(50) },
		func(f *Figures) { f.RateAchievedRatio = summary.F(0.1) },
		func(f *Figures) { f.AcceptP99BoundMs, f.LatencyP99Ms = summary.F(1), summary.F(2) },
	}
	for _, kind := range []string{"backlog", "accept", "churn"} {
		for i, set := range sets {
			c, f := cell4(kind, set)
			if v := verdict(c, f); v == nil || !slices.Contains(Codes, v.Code) {
				t.Errorf("%s, case %d: verdict %+v not in %v", kind, i, v, Codes)
			}
		}
	}
}

// A code is one word, for readers to decide by; its words are Word's.
func TestVerdictCodesAreWords(t *testing.T) {
	for _, c := range Codes {
		if strings.ContainsAny(c, " \t") || Word(c) == "" {
			t.Errorf("code %q: a code has no space and has words (Word)", c)
		}
	}
}

func TestVerdictCodesDocumented(t *testing.T) {
	golden.Documented(t, "../../docs/verdicts.md", "## Phase 4", Codes)
}
