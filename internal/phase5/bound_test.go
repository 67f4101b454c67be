package phase5

import (
	"slices"
	"strings"
	"testing"

	"csbench/internal/summary"
)

// A failing step at the bracket's high rate, marked disturbed, makes the
// capacity a lower bound, said in the headline with what disturbed it; a
// disturbed step that passed, or one at another rate, does not.
func TestBoundDisturbed(t *testing.T) {
	busy := &summary.Trust{Disturbed: true, DisturbThresholdPct: 10, OtherLoad: []summary.OtherLoad{{Host: "machine", CPUs: 2,
		OthersCPUPct: summary.F(71.5), Top: []summary.OtherProc{{PID: 2089, Command: "bash", CPUPct: 33.8}}}}}
	step := func(name string, rps float64, code string, tr *summary.Trust) summary.Cell {
		return summary.Cell{Name: name, Params: map[string]string{"payload": "1k"}, Metrics: map[string]*float64{"offered_rps": summary.F(rps)},
			Verdict: &summary.Verdict{Code: code, Bound: code}, Trust: tr}
	}
	cells := []summary.Cell{step("1k-s01", 1000, "pass", busy), step("1k-s02", 2000, "latency", busy),
		step("1k-s03", 1500, "latency", busy), step("1k-s04", 2000, "latency", &summary.Trust{DisturbThresholdPct: 10})}
	high := 2000.0
	got := boundDisturbed(cells, "1k", &high)
	if !slices.Equal(got, []string{"1k-s02"}) {
		t.Fatalf("bound disturbed: %v, want [1k-s02]", got)
	}
	if got := boundDisturbed(cells, "1k", nil); got != nil {
		t.Fatalf("no failing rate: %v", got)
	}
	if got := boundDisturbed(cells, "10k", &high); got != nil {
		t.Fatalf("another payload: %v", got)
	}
	c := summary.Capacity{Payload: "1k", SLOPercentile: 99, SLOLatencyMs: 50, CapacityRPS: summary.F(1969), LowRPS: summary.F(1969),
		HighRPS: summary.F(2000), Bound: "latency", Steps: 4}
	c.BoundDisturbed = []string{"1k-s02"}
	h := Headline(c, cells)
	for _, want := range []string{"⚑", "`1k-s02` disturbed", "`bash` (pid 2089) 34 %", "lower bound"} {
		if !strings.Contains(h, want) {
			t.Errorf("headline lacks %q:\n%s", want, h)
		}
	}
	c.BoundDisturbed = nil
	if h := Headline(c, cells); strings.Contains(h, "⚑") {
		t.Errorf("undisturbed headline marked:\n%s", h)
	}
}
