package phase3

import (
	"testing"

	"csbench/internal/summary"
)

// With several client hosts the client_* figures are the hosts' summed
// (counts, memory, traffic) or the busiest host's (CPU); one host without
// a figure leaves the sum null; figures the cell already has stay.
func TestAggregateHosts(t *testing.T) {
	f := summary.F
	m := map[string]*float64{
		"client1_proc_cpu_pct": f(40), "client2_proc_cpu_pct": f(70),
		"client1_cpu_peak_pct": f(90), "client2_cpu_peak_pct": f(55),
		"client1_rss_mb": f(21.2), "client2_rss_mb": f(21.4),
		"client1_retrans_segs": f(3), "client2_retrans_segs": f(4),
		"client1_time_wait": f(10), "client2_time_wait": nil,
		"client1_established_x": f(1), "client_established_x": f(7),
	}
	aggregateHosts([]string{"client1", "client2"}, m)
	want := map[string]*float64{
		"client_proc_cpu_pct": f(70), "client_cpu_peak_pct": f(90), "client_rss_mb": f(42.6),
		"client_retrans_segs": f(7), "client_time_wait": nil, "client_established_x": f(7),
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
