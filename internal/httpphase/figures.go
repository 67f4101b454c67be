package httpphase

import (
	"csbench/internal/decimal"
	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

// LoadFigures is what one load measured: a client's own run, or the
// cell's merge of every client's.
type LoadFigures struct {
	// RPS is the responses that carried the payload, per second (a
	// merge's: the sum of its clients' rates, each over its own run).
	RPS       *float64 `json:"rps"`
	Requests  *float64 `json:"requests"`   // responses read, whatever their status
	DurationS *float64 `json:"duration_s"` // the run's wall time, s (a merge's: its longest client's)
	// ThroughputMbps counts every HTTP byte read (status lines, headers,
	// bodies), Mbit/s; nil when the tool's byte count is unknown.
	ThroughputMbps *float64 `json:"throughput_mbps"`
	GoodputMbps    *float64 `json:"goodput_mbps"` // bodies of the responses that carried the payload, Mbit/s
	// The latencies, ms.
	LatencyMeanMs *float64 `json:"latency_mean_ms"`
	LatencyMaxMs  *float64 `json:"latency_max_ms"`
	LatencyP50Ms  *float64 `json:"latency_p50_ms"`
	LatencyP90Ms  *float64 `json:"latency_p90_ms"`
	LatencyP99Ms  *float64 `json:"latency_p99_ms"`
	LatencyP999Ms *float64 `json:"latency_p99_9_ms"`
	ErrorsTotal   *float64 `json:"errors_total"` // requests that failed
}

// MoreLatencyFigures are the latencies, ms, a cell always has and a
// client only once its load was read.
type MoreLatencyFigures struct {
	LatencyStdevMs *float64 `json:"latency_stdev_ms"`
	LatencyP75Ms   *float64 `json:"latency_p75_ms"`
	LatencyP95Ms   *float64 `json:"latency_p95_ms"`
}

// ErrorFigures are the cell's failed requests by kind: wrk's connect,
// read, write, timeout and status (non-2xx/3xx); h2load's status and
// timeout; oha's status and the requests its deadline aborted.
type ErrorFigures struct {
	ErrorsConnect         *float64 `json:"errors_connect"`
	ErrorsRead            *float64 `json:"errors_read"`
	ErrorsWrite           *float64 `json:"errors_write"`
	ErrorsTimeout         *float64 `json:"errors_timeout"`
	ErrorsStatus          *float64 `json:"errors_status"`
	ErrorsDeadlineAborted *float64 `json:"errors_deadline_aborted"`
}

// Figures is an HTTP cell's figures (its summary.json metrics): Phases 1
// and 2 write these and no more.
type Figures struct {
	LoadFigures
	MoreLatencyFigures
	ErrorFigures
	// LinkUtilization is ThroughputMbps over the basis, a fraction; nil
	// without a basis.
	LinkUtilization *float64 `json:"link_utilization"`
	// CPU, NIC and Counters are the monitored hosts' (server, client;
	// client1, ... with several clients).
	CPU      map[string]hostdata.CPUFigures     `figures:"prefixed"`
	NIC      map[string]hostdata.NICFigures     `figures:"prefixed"`
	Counters map[string]hostdata.CounterFigures `figures:"prefixed"`
	// Procs are the processes' CPU (% of one CPU) and RSS (MB): "server"
	// the server under test's, "client" the load generators' summed over
	// the clients (left out when a client's output could not be read).
	Procs map[string]hostdata.ProcFigures `figures:"prefixed"`
}

// ClientFigures is one client's figures of a cell (its summary.json
// per-client metrics).
type ClientFigures struct {
	LoadFigures
	// MoreLatencyFigures is set once the client's load was read.
	*MoreLatencyFigures
	LoadgenCPUPct *float64 `json:"loadgen_cpu_pct"` // its load generator, % of one CPU (pidstat)
	LoadgenRSSMB  *float64 `json:"loadgen_rss_mb"`  // its load generator's largest RSS, MB
	// HostCPUPct and HostCPUMaxCorePct are its host's (mpstat), %.
	HostCPUPct        *float64 `json:"host_cpu_pct"`
	HostCPUMaxCorePct *float64 `json:"host_cpu_max_core_pct"`
}

// FiguresOf reads a cell's figures.
func FiguresOf(c *summary.Cell) Figures {
	var f Figures
	summary.Figures(c.Metrics, &f)
	return f
}

// ClientFiguresOf reads a client's figures of a cell.
func ClientFiguresOf(cc *summary.ClientCell) ClientFigures {
	var f ClientFigures
	summary.Figures(cc.Metrics, &f)
	return f
}

// loadFigures is the figures of one load (a client's, or the merge of
// every client's): its duration (a merge's: its longest client's),
// requests, the rates and throughputs (a merge's are the sums of its
// clients' rates, each over its own run: wrk and oha give one total per
// run), the latencies, the error count.
func loadFigures(l *Load, body int) (LoadFigures, MoreLatencyFigures) {
	var tput, good float64
	wire := true
	for _, p := range l.parts() {
		good += p.OK * float64(body) * 8 / p.DurationS / 1e6
		if p.WireBytes == nil {
			wire = false
		} else {
			tput += *p.WireBytes * 8 / p.DurationS / 1e6
		}
	}
	f := LoadFigures{
		DurationS:   summary.F(decimal.Round(l.DurationS, 3)),
		Requests:    summary.F(l.Responses),
		RPS:         summary.F(decimal.Round(l.RPS(), 1)),
		GoodputMbps: summary.F(decimal.Round(good, 2)),
		ErrorsTotal: summary.F(l.ErrorsTotal),
	}
	if wire {
		f.ThroughputMbps = summary.F(decimal.Round(tput, 2))
	}
	lat := func(k string) *float64 { return decimal.Rounded(l.Latency[k], 3) }
	f.LatencyMeanMs, f.LatencyMaxMs, f.LatencyP50Ms = lat("mean"), lat("max"), lat("p50")
	f.LatencyP90Ms, f.LatencyP99Ms, f.LatencyP999Ms = lat("p90"), lat("p99"), lat("p99_9")
	more := MoreLatencyFigures{LatencyStdevMs: lat("stdev"), LatencyP75Ms: lat("p75"), LatencyP95Ms: lat("p95")}
	return f, more
}
