package phase3

import (
	"testing"

	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

// With several client hosts the client_* figures are the hosts' summed
// (counts, memory, traffic) or the busiest host's (CPU); one host without
// a figure leaves the sum null.
func TestAggregateHosts(t *testing.T) {
	f := summary.F
	fig := &Figures{
		CPU:       map[string]hostdata.CPUFigures{"server": {Pct: f(99)}, "client1": {Pct: f(20)}, "client2": {Pct: f(35)}},
		Procs:     map[string]hostdata.ProcFigures{"client1": {CPUPct: f(40), RSSMB: f(21.2)}, "client2": {CPUPct: f(70), RSSMB: f(21.4)}},
		PeakProcs: map[string]hostdata.PeakProcFigures{"client1": {}, "client2": {}},
		PeakCPU:   map[string]hostdata.PeakCPUFigures{"client1": {Pct: f(90)}, "client2": {Pct: f(55)}},
		Counters:  map[string]hostdata.CounterFigures{"client1": {RetransSegs: f(3), TimeWait: f(10)}, "client2": {RetransSegs: f(4)}},
	}
	fig.aggregateHosts([]string{"client1", "client2"})
	m := map[string]*float64{}
	summary.PutFigures(m, fig)
	want := map[string]*float64{
		"client_proc_cpu_pct": f(70), "client_cpu_peak_pct": f(90), "client_rss_mb": f(42.6), "client_cpu_pct": f(35),
		"client_retrans_segs": f(7), "client_time_wait": nil, "client_proc_cpu_peak_pct": nil,
	}
	for k, w := range want {
		got, ok := m[k]
		switch {
		case !ok:
			t.Errorf("%s not set", k)
		case w == nil && got != nil:
			t.Errorf("%s = %v, want null (a host has none)", k, *got)
		case w != nil && (got == nil || *got != *w):
			t.Errorf("%s = %v, want %v", k, got, *w)
		}
	}
	if v := sumHosts([]string{"client"}, func(string) *float64 { return f(5) }); v == nil || *v != 5 {
		t.Errorf("one host: %v, want its own figure", v)
	}
}
