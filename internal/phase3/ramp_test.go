package phase3

import (
	"strings"
	"testing"

	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

func rampCell(metrics map[string]float64) *summary.Cell {
	c := &summary.Cell{Name: "idle", Params: map[string]string{"scenario": "idle"}, Metrics: map[string]*float64{}, Details: map[string]any{}}
	for k, v := range metrics {
		c.Metrics[k] = summary.F(v)
	}
	// A summary has every host's counters, null where not measured.
	for _, h := range []string{"server", "client"} {
		for _, k := range summary.FigureNames(hostdata.CounterFigures{}) {
			if _, ok := c.Metrics[h+"_"+k]; !ok {
				c.Metrics[h+"_"+k] = nil
			}
		}
	}
	return c
}

// The case: 3,034 of 5,000 connects/s, connect p99 2.5 s, the
// client busy; and the causes in the order they are named.
func TestRampWall(t *testing.T) {
	for _, tc := range []struct {
		name        string
		m           map[string]float64
		wall, cause string
		bound       string
	}{
		{"met", map[string]float64{"connect_rate_target_per_s": 5000, "connect_rate_achieved_per_s": 4600, "connect_latency_p99_ms": 3}, "", "", ""},
		{"short, client CPU", map[string]float64{"connect_rate_target_per_s": 5000, "connect_rate_achieved_per_s": 3034, "connect_latency_p99_ms": 20,
			"client_cpu_peak_pct": 95, "client_proc_cpu_peak_pct": 180, "client_procs": 6, "client_syn_retrans": 0, "server_listen_overflows": 0},
			"short_ramp", RampClientCPU, "short ramp: 3034 of 5000 connects/s (61%) (the client's CPU was busy)"},
		{"short and slow, SYN retransmits", map[string]float64{"connect_rate_target_per_s": 5000, "connect_rate_achieved_per_s": 3034, "connect_latency_p99_ms": 2500,
			"client_cpu_peak_pct": 95, "client_syn_retrans": 412, "server_listen_overflows": 0},
			"short_ramp", RampSynRetr, "short ramp: 3034 of 5000 connects/s (61%); slow connects: connect p99 2500 ms (SYNs were retransmitted)"},
		{"slow, backlog", map[string]float64{"connect_rate_target_per_s": 5000, "connect_rate_achieved_per_s": 4900, "connect_latency_p99_ms": 1030,
			"client_syn_retrans": 30, "server_listen_overflows": 12},
			"slow_connects", RampBacklog, "slow connects: connect p99 1030 ms (the server's listen queue overflowed)"},
		{"short and slow, SYN-ACKs retransmitted (a slow link)", map[string]float64{"connect_rate_target_per_s": 5000, "connect_rate_achieved_per_s": 230, "connect_latency_p99_ms": 1053,
			"client_cpu_peak_pct": 100, "client_syn_retrans": 0, "server_syn_retrans": 68, "server_listen_overflows": 0},
			"short_ramp", RampSynAckRetr, "short ramp: 230 of 5000 connects/s (5%); slow connects: connect p99 1053 ms (the server retransmitted SYN-ACKs: the handshakes' last ACK came late or was lost)"},
		{"short, nothing to show", map[string]float64{"connect_rate_target_per_s": 1e6, "connect_rate_achieved_per_s": 20000, "client_cpu_peak_pct": 40},
			"short_ramp", RampUnknown, "short ramp: 20000 of 1000000 connects/s (2%) (neither the client's CPU, SYN retransmits nor listen overflows explain it)"},
	} {
		c := rampCell(tc.m)
		v := rampWall(c, figuresOf(c), splitWalls{}, "")
		if tc.wall == "" {
			if v != nil {
				t.Errorf("%s: a wall: %+v", tc.name, v)
			}
			continue
		}
		if v == nil {
			t.Fatalf("%s: no wall", tc.name)
		}
		if v.Bound != tc.bound {
			t.Errorf("%s: bound %q, want %q", tc.name, v.Bound, tc.bound)
		}
		r, _ := c.Details["ramp"].(map[string]string)
		if r["wall"] != tc.wall || r["cause"] != tc.cause {
			t.Errorf("%s: details.ramp %v, want %s/%s", tc.name, r, tc.wall, tc.cause)
		}
		if !strings.Contains(v.Evidence, "client SYN retransmits") || !strings.Contains(v.Evidence, "ListenOverflows") {
			t.Errorf("%s: evidence %q", tc.name, v.Evidence)
		}
	}
}

// A short ramp of a scenario split across processes names both walls.
func TestRampWallWithSplit(t *testing.T) {
	c := rampCell(map[string]float64{"connect_rate_target_per_s": 5000, "connect_rate_achieved_per_s": 3034, "connect_latency_p99_ms": 2500,
		"client_cpu_peak_pct": 95, "client_procs": 6})
	v := rampWall(c, figuresOf(c), splitWalls{"fd limit per process (1024) → split across 6 client processes, one per source address", []string{QualSplitFD}}, "server RSS …")
	want := "short ramp: 3034 of 5000 connects/s (61%); slow connects: connect p99 2500 ms (the client's CPU was busy); fd limit per process (1024) → split across 6 client processes, one per source address"
	if v == nil || v.Bound != want {
		t.Fatalf("bound %+v, want %q", v, want)
	}
	if !strings.HasSuffix(v.Evidence, "; server RSS …") {
		t.Errorf("evidence %q", v.Evidence)
	}
}
