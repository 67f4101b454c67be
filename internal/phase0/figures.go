package phase0

import (
	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

// Iperf3Figures is what iperf3 itself reports of a run: a client's own
// run, and with one client the cell's.
type Iperf3Figures struct {
	// ThroughputMbps is the receiver's (iperf3's sum_received), the
	// figure quoted; with several clients the cell's is the sum of what
	// each moved within the window in which every client was measuring,
	// over that window.
	ThroughputMbps *float64 `json:"throughput_mbps"`
	SenderMbps     *float64 `json:"sender_mbps"`
	Retransmits    *float64 `json:"retransmits"`
	// ClientCPUPct and ServerCPUPct are iperf3's own measure of each
	// end (cpu_utilization_percent, % of one CPU, user + system).
	ClientCPUPct *float64 `json:"iperf3_client_cpu_pct"`
	ServerCPUPct *float64 `json:"iperf3_server_cpu_pct"`
}

// Figures is a Phase 0 cell's figures (its summary.json metrics).
type Figures struct {
	Iperf3Figures
	// LinkUtilization is ThroughputMbps over the link's TCP ceiling, a
	// fraction; nil without a ceiling.
	LinkUtilization *float64 `json:"link_utilization"`
	// OwnRuns is set for a cell of several clients whose window could
	// be measured.
	*OwnRuns
	// CPU, NIC and Counters are the monitored hosts' (server, client;
	// client1, ... with several clients).
	CPU      map[string]hostdata.CPUFigures     `figures:"prefixed"`
	NIC      map[string]hostdata.NICFigures     `figures:"prefixed"`
	Counters map[string]hostdata.CounterFigures `figures:"prefixed"`
}

// OwnRuns is what only a cell of several clients has: the plain sum of
// the clients' own whole-run receiver figures, for comparison.
type OwnRuns struct {
	ThroughputOwnRunsMbps *float64 `json:"throughput_own_runs_mbps"`
}

// ClientFigures is one client's figures of a cell of several clients
// (its summary.json per-client metrics).
type ClientFigures struct {
	Iperf3Figures
	// OverlapMbps is what it moved within the window in which every
	// client was measuring, over that window.
	OverlapMbps *float64 `json:"overlap_mbps"`
	// HostCPUPct and HostCPUMaxCorePct are its host's (mpstat).
	HostCPUPct        *float64 `json:"host_cpu_pct"`
	HostCPUMaxCorePct *float64 `json:"host_cpu_max_core_pct"`
}

// Stream is one stream of a multi-stream cell (its details). Its fields
// are in the order of their names: the order summary.json has them in.
type Stream struct {
	Retransmits    *float64 `json:"retransmits"`
	SenderMbps     *float64 `json:"sender_mbps"`
	Stream         int      `json:"stream"`
	ThroughputMbps *float64 `json:"throughput_mbps"`
}

// figuresOf reads every cell's figures, in the order of s.Cells.
func figuresOf(s *summary.Summary) []Figures {
	out := make([]Figures, len(s.Cells))
	for i, c := range s.Cells {
		summary.Figures(c.Metrics, &out[i])
	}
	return out
}

// maxCore is the busiest core of any host.
func (f *Figures) maxCore() float64 {
	v := 0.0
	for _, c := range f.CPU {
		if c.MaxCorePct != nil && *c.MaxCorePct > v {
			v = *c.MaxCorePct
		}
	}
	return v
}
