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

// nginx's tcp_nopush wait: nginx with it on, answers of several segments,
// most answers fast (the median within half the SLO); not with it off, not
// at 1 KB, not for a queue (the median up too), not for another server.
func TestCorked(t *testing.T) {
	run := func(kind, nginx, bytes string) *summary.Summary {
		return &summary.Summary{Server: &summary.Server{Kind: kind, Nginx: nginx},
			Cells: []summary.Cell{{Params: map[string]string{"payload": "x", "payload_bytes": bytes}}}}
	}
	fast, queued := &Figures{LatencyP50Ms: summary.F(0.18), LatencyP99Ms: summary.F(129.3)}, &Figures{LatencyP50Ms: summary.F(40), LatencyP99Ms: summary.F(129.3)}
	for _, c := range []struct {
		s    *summary.Summary
		m    *Figures
		want bool
	}{
		{run("nginx", "worker_processes=auto", "10240"), fast, true},
		{run("nginx", "tcp_nopush=on", "10240"), fast, true},
		{run("nginx", "tcp_nopush=off", "10240"), fast, false},
		{run("nginx", "tcp_nopush=on", "1024"), fast, false},
		{run("nginx", "tcp_nopush=on", "10240"), queued, false},
		{run("csb", "", "10240"), fast, false},
	} {
		if got := corked(c.s, c.m, "x", 10); got != c.want {
			t.Errorf("%+v %v: corked %v, want %v", *c.s.Server, c.s.Cells[0].Params, got, c.want)
		}
	}
}
