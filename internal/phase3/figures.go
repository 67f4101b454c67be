package phase3

import (
	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

// Figures is a Phase 3 cell's figures (its summary.json metrics). Every
// cell has each figure of ConnectFigures, LoadFigures, MemoryFigures and
// TimeWaitFigures, null where not measured.
type Figures struct {
	ConnectFigures
	LoadFigures
	MemoryFigures
	TimeWaitFigures
	// ServerRSSPerStreamKB is the server's RSS growth per stream in
	// flight, KiB: only an HTTP/2 cell of several streams per connection
	// has it.
	ServerRSSPerStreamKB *float64 `json:"server_rss_per_stream_kb,omitempty"`
	// RampFigures is set on every cell of a run whose connclient results
	// record their ramp; HoldFigures on every cell of a run whose idle
	// processes recorded their hold.
	*RampFigures
	*HoldFigures
	// CPU, Counters, Procs (the server's and the clients' processes),
	// PeakProcs and PeakCPU (the client hosts') are by host: server,
	// client; with several client hosts client1, ... and client, their
	// aggregate (aggregateHosts).
	CPU       map[string]hostdata.CPUFigures      `figures:"prefixed"`
	Counters  map[string]hostdata.CounterFigures  `figures:"prefixed"`
	Procs     map[string]hostdata.ProcFigures     `figures:"prefixed"`
	PeakProcs map[string]hostdata.PeakProcFigures `figures:"prefixed"`
	PeakCPU   map[string]hostdata.PeakCPUFigures  `figures:"prefixed"`
}

// ConnectFigures are the connections and how they opened.
type ConnectFigures struct {
	ConnectionsTarget      *float64 `json:"connections_target"`
	ConnectionsEstablished *float64 `json:"connections_established"` // the clients' count
	ConnectionsFailed      *float64 `json:"connections_failed"`
	ConnectionsAliveEnd    *float64 `json:"connections_alive_end"` // idle: at the end of the hold
	// ServerEstablished and ClientEstablished are each end's ESTABLISHED
	// sockets with every connection held (ss, else sockstat's growth).
	ServerEstablished *float64 `json:"server_established"`
	ClientEstablished *float64 `json:"client_established"`
	// SetupS is the slowest process's first connect to last connection
	// opened, seconds.
	SetupS                  *float64 `json:"setup_s"`
	ConnectRateTargetPerS   *float64 `json:"connect_rate_target_per_s"`
	ConnectRateAchievedPerS *float64 `json:"connect_rate_achieved_per_s"`
	ConnectLatencyP50Ms     *float64 `json:"connect_latency_p50_ms"`
	ConnectLatencyP99Ms     *float64 `json:"connect_latency_p99_ms"`
	ConnectLatencyMaxMs     *float64 `json:"connect_latency_max_ms"`
	ServerProcs             *float64 `json:"server_procs"` // server processes (SO_REUSEPORT)
	ClientProcs             *float64 `json:"client_procs"` // connclient processes
}

// LoadFigures are the requests on the connections: a low-rate schedule's
// (connclient) or a closed loop's (wrk, h2load).
type LoadFigures struct {
	RPSTarget         *float64 `json:"rps_target"`
	RPSAchieved       *float64 `json:"rps_achieved"`
	RPSAchievedRatio  *float64 `json:"rps_achieved_ratio"` // achieved / target, a fraction
	RequestsCompleted *float64 `json:"requests_completed"`
	RequestsFailed    *float64 `json:"requests_failed"`
	// Latency*: low-rate from each request's due time; active, the load
	// generator's.
	LatencyP50Ms  *float64 `json:"latency_p50_ms"`
	LatencyP90Ms  *float64 `json:"latency_p90_ms"`
	LatencyP99Ms  *float64 `json:"latency_p99_ms"`
	LatencyP999Ms *float64 `json:"latency_p99_9_ms"`
	LatencyMaxMs  *float64 `json:"latency_max_ms"`
	// ServiceLatency*: low-rate, from the actual send.
	ServiceLatencyP50Ms  *float64 `json:"service_latency_p50_ms"`
	ServiceLatencyP90Ms  *float64 `json:"service_latency_p90_ms"`
	ServiceLatencyP99Ms  *float64 `json:"service_latency_p99_ms"`
	ServiceLatencyP999Ms *float64 `json:"service_latency_p99_9_ms"`
	ServiceLatencyMaxMs  *float64 `json:"service_latency_max_ms"`
	SenderLagP99Ms       *float64 `json:"sender_lag_p99_ms"`      // low-rate: how late requests were sent
	RequestLatencyP99Ms  *float64 `json:"request_latency_p99_ms"` // idle: the one request per connection
	// LittlesLawLatencyMs is a closed loop's mean wait, connections ×
	// streams / rate.
	LittlesLawLatencyMs *float64 `json:"littles_law_latency_ms"`
	ErrorsTotal         *float64 `json:"errors_total"`
}

// MemoryFigures are the memory the held connections cost:
// the server's RSS, the clients', the kernel's TCP slab and buffers, the
// hosts' MemAvailable.
type MemoryFigures struct {
	ServerRSSBaselineMB    *float64 `json:"server_rss_baseline_mb"` // before the clients started
	ServerRSSHeldMB        *float64 `json:"server_rss_held_mb"`     // with every connection held
	ServerRSSPerConnKB     *float64 `json:"server_rss_per_conn_kb"`
	ClientVmRSSMB          *float64 `json:"client_vmrss_mb"` // connclient's own, summed
	ClientRSSPerConnKB     *float64 `json:"client_rss_per_conn_kb"`
	TCPMemPagesBefore      *float64 `json:"tcp_mem_pages_before"` // sockstat TCP mem, pages
	TCPMemPagesHeld        *float64 `json:"tcp_mem_pages_held"`
	TCPSlabObjsBefore      *float64 `json:"tcp_slab_objs_before"` // slabinfo TCP active objects
	TCPSlabObjsHeld        *float64 `json:"tcp_slab_objs_held"`
	TCPSlabObjBytes        *float64 `json:"tcp_slab_obj_bytes"`
	KernelTCPMemKBPerConn  *float64 `json:"kernel_tcp_mem_kb_per_conn"`
	KernelTCPSlabKBPerConn *float64 `json:"kernel_tcp_slab_kb_per_conn"`
	KernelKBPerConn        *float64 `json:"kernel_kb_per_conn"` // slab + buffers
	// HostMemKBPerConn is the server host's MemAvailable fall per
	// connection, KiB; ClientHostMemKBPerConn the client hosts' summed.
	HostMemKBPerConn       *float64 `json:"host_mem_kb_per_conn"`
	ClientHostMemKBPerConn *float64 `json:"client_host_mem_kb_per_conn"`
}

// TimeWaitFigures are the client's sockets in TIME_WAIT toward the server
// and the runner's waits for them to drain.
type TimeWaitFigures struct {
	ClientTimeWaitBefore *float64 `json:"client_time_wait_before"` // before the cell, summed over the client hosts
	TWWaitS              *float64 `json:"tw_wait_s"`               // the wait before this cell, seconds
	// ClientTWCooldownS is the run's wait before its scenarios, seconds,
	// from ClientTimeWaitCooldownStart to ClientTimeWaitCooldownEnd
	// sockets.
	ClientTWCooldownS           *float64 `json:"client_tw_cooldown_s"`
	ClientTimeWaitCooldownStart *float64 `json:"client_time_wait_cooldown_start"`
	ClientTimeWaitCooldownEnd   *float64 `json:"client_time_wait_cooldown_end"`
}

// RampFigures are a cell's connect ramp from connclient's "ramp" objects
// (rampFigures): counts summed over the processes, paced rates summed,
// the first attempts' connect percentiles merged.
type RampFigures struct {
	ConnectionsAttempted                   *float64 `json:"connections_attempted"`
	ConnectionsFirstAttemptEstablished     *float64 `json:"connections_first_attempt_established"`
	ConnectionsFirstAttemptFailed          *float64 `json:"connections_first_attempt_failed"`
	ConnectionsFirstAttemptConnectTimeouts *float64 `json:"connections_first_attempt_connect_timeouts"`
	ConnectionsFirstAttemptRespTimeouts    *float64 `json:"connections_first_attempt_response_timeouts"`
	ConnectionsFirstAttemptSlow            *float64 `json:"connections_first_attempt_slow"`
	ConnectionsRetried                     *float64 `json:"connections_retried"`
	ConnectionsEstablishedAfterRetry       *float64 `json:"connections_established_after_retry"`
	ConnectionsRetryAttempts               *float64 `json:"connections_retry_attempts"`
	ConnectRatePacedMinPerS                *float64 `json:"connect_rate_paced_min_per_s"`
	ConnectRatePacedMaxPerS                *float64 `json:"connect_rate_paced_max_per_s"`
	ConnectLatencyFirstAttemptP50Ms        *float64 `json:"connect_latency_first_attempt_p50_ms"`
	ConnectLatencyFirstAttemptP99Ms        *float64 `json:"connect_latency_first_attempt_p99_ms"`
	ConnectLatencyFirstAttemptMaxMs        *float64 `json:"connect_latency_first_attempt_max_ms"`
}

// HoldFigures are an idle cell's hold across its processes (holdFigures).
type HoldFigures struct {
	// HoldMissedProcs is the processes that did not hold over the one
	// end agreed for all (0: every process held at one shared instant).
	HoldMissedProcs *float64 `json:"hold_missed_procs"`
	// HoldSharedS is how long every process held at once, seconds (from
	// the last to begin holding to the first to end).
	HoldSharedS *float64 `json:"hold_shared_s"`
	// HoldBeganSpreadS is how far apart the processes began, seconds.
	HoldBeganSpreadS *float64 `json:"hold_began_spread_s"`
}

// RampKeys and HoldKeys are the names of RampFigures and HoldFigures: a
// run whose results carry them has them on every cell, null where not
// measured; a run made before has none.
var (
	RampKeys = summary.FigureNames(RampFigures{})
	HoldKeys = summary.FigureNames(HoldFigures{})
)

// hostFigures is one host's figures, from every per-host map of Figures.
type hostFigures struct {
	CPU       hostdata.CPUFigures
	Counters  hostdata.CounterFigures
	Procs     hostdata.ProcFigures
	PeakProcs hostdata.PeakProcFigures
	PeakCPU   hostdata.PeakCPUFigures
}

// host is the figures of host (server, client); nil figures where it has
// none.
func (f *Figures) host(name string) hostFigures {
	return hostFigures{CPU: f.CPU[name], Counters: f.Counters[name], Procs: f.Procs[name],
		PeakProcs: f.PeakProcs[name], PeakCPU: f.PeakCPU[name]}
}

// ramp is the cell's ramp figures; every one nil when it has none.
func (f *Figures) ramp() *RampFigures {
	if f.RampFigures == nil {
		return &RampFigures{}
	}
	return f.RampFigures
}

// hold is the cell's hold figures; every one nil when it has none.
func (f *Figures) hold() *HoldFigures {
	if f.HoldFigures == nil {
		return &HoldFigures{}
	}
	return f.HoldFigures
}

// figuresOf reads a cell's figures.
func figuresOf(c *summary.Cell) *Figures {
	var f Figures
	summary.Figures(c.Metrics, &f)
	return &f
}

// allFigures reads every cell's figures, in the order of s.Cells.
func allFigures(s *summary.Summary) []*Figures {
	out := make([]*Figures, len(s.Cells))
	for i := range s.Cells {
		out[i] = figuresOf(&s.Cells[i])
	}
	return out
}

// fillRunFigures gives every cell the ramp and hold figures, null, when
// some cell of the run has them: the figures of newer results are in
// every cell of a run that has them, and in none of a run made before.
func fillRunFigures(figs []*Figures) {
	ramp, hold := false, false
	for _, f := range figs {
		ramp = ramp || f.RampFigures != nil
		hold = hold || f.HoldFigures != nil
	}
	for _, f := range figs {
		if ramp && f.RampFigures == nil {
			f.RampFigures = &RampFigures{}
		}
		if hold && f.HoldFigures == nil {
			f.HoldFigures = &HoldFigures{}
		}
	}
}

// aggregateHosts gives each per-host map the entry "client" from the
// client hosts' (labels): the busiest host's for CPU figures, else the sum
// over the hosts rounded to 0.1 (nil when one host has none).
func (f *Figures) aggregateHosts(labels []string) {
	busy := func(get func(string) *float64) *float64 { return busiest(labels, get) }
	cpu, procs, peakProcs, peakCPU := f.CPU, f.Procs, f.PeakProcs, f.PeakCPU
	cpu["client"] = hostdata.CPUFigures{
		Pct:        busy(func(l string) *float64 { return cpu[l].Pct }),
		MaxCorePct: busy(func(l string) *float64 { return cpu[l].MaxCorePct }),
	}
	procs["client"] = hostdata.ProcFigures{
		CPUPct: busy(func(l string) *float64 { return procs[l].CPUPct }),
		RSSMB:  summedHosts(labels, func(l string) *float64 { return procs[l].RSSMB }),
	}
	peakProcs["client"] = hostdata.PeakProcFigures{CPUPeakPct: busy(func(l string) *float64 { return peakProcs[l].CPUPeakPct })}
	peakCPU["client"] = hostdata.PeakCPUFigures{Pct: busy(func(l string) *float64 { return peakCPU[l].Pct })}
	f.Counters["client"] = sumCounters(f.Counters, labels)
}

// busiest is the largest of the hosts' figures; nil when none has one.
func busiest(labels []string, get func(string) *float64) *float64 {
	var best *float64
	for _, l := range labels {
		if v := get(l); v != nil && (best == nil || *v > *best) {
			best = v
		}
	}
	return best
}

// summedHosts is sumHosts rounded to 0.1.
func summedHosts(labels []string, get func(string) *float64) *float64 {
	return rounded(sumHosts(labels, get), 1)
}

// sumCounters is every counter of the hosts summed (summedHosts).
func sumCounters(by map[string]hostdata.CounterFigures, labels []string) hostdata.CounterFigures {
	each := make([]hostdata.CounterFigures, len(labels))
	for i, l := range labels {
		each[i] = by[l]
	}
	return summary.FieldWise(each, func(vs []*float64) *float64 { return rounded(sumAll(vs), 1) })
}
