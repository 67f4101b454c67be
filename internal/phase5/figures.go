package phase5

import (
	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

// Figures is a Phase 5 step's figures (its summary.json metrics); a step
// whose raw files could not be read has them null.
type Figures struct {
	OfferedRPS *float64 `json:"offered_rps"` // the rate the schedule offered, req/s
	// AchievedRPS is the rate the server delivered, req/s: the answers
	// received from the first tenth of the schedule after the median
	// latency to its end, over that window (capacity.SteadyRate); in a
	// step recorded before the tenths, the answers within the drain over
	// the schedule's duration.
	AchievedRPS *float64 `json:"achieved_rps"`
	// LatencyGrowthMsPerS is the trend of the latency from the due time
	// over the schedule, ms per s (capacity.LatencyGrowth): a queue that
	// grows; null before the tenths or with too few of them answered.
	LatencyGrowthMsPerS *float64 `json:"latency_growth_ms_per_s"`
	// The latency from each request's due time, ms.
	LatencyP50Ms  *float64 `json:"latency_p50_ms"`
	LatencyP99Ms  *float64 `json:"latency_p99_ms"`
	LatencyP999Ms *float64 `json:"latency_p999_ms"`
	// LatencySLOPercentileMs is that latency at the SLO's percentile, ms.
	LatencySLOPercentileMs *float64 `json:"latency_slo_percentile_ms"`
	// The latency from each request's send, ms.
	ServiceLatencyP50Ms  *float64 `json:"service_latency_p50_ms"`
	ServiceLatencyP99Ms  *float64 `json:"service_latency_p99_ms"`
	ServiceLatencyP999Ms *float64 `json:"service_latency_p999_ms"`
	// The sender's lag, send − due, ms.
	SenderLagP50Ms  *float64 `json:"sender_lag_p50_ms"`
	SenderLagP99Ms  *float64 `json:"sender_lag_p99_ms"`
	SenderLagP999Ms *float64 `json:"sender_lag_p999_ms"`
	Requests        *float64 `json:"requests"`
	Errors          *float64 `json:"errors"`
	ErrorsPct       *float64 `json:"errors_pct"` // failed requests, % of the requests
	// RequestsLatePoolBusy counts the requests that found every
	// connection busy when due.
	RequestsLatePoolBusy *float64 `json:"requests_late_pool_busy"`
	ClientLoopsBusyPct   *float64 `json:"client_loops_busy_pct"` // the client's event loops, % of their time
	ClientCPUsBusyPct    *float64 `json:"client_cpus_busy_pct"`  // the client's CPUs over the schedule, %
	ClientBound          *float64 `json:"client_bound"`          // 1 when the client was the limit, else 0
	// CPU and NIC are the monitored hosts' (server, client; client1, ...
	// with several clients); Procs["server"] the server under test's
	// processes.
	CPU   map[string]hostdata.CPUFigures  `figures:"prefixed"`
	NIC   map[string]hostdata.NICFigures  `figures:"prefixed"`
	Procs map[string]hostdata.ProcFigures `figures:"prefixed"`
}

// figuresOf reads a step's figures.
func figuresOf(c *summary.Cell) Figures {
	var f Figures
	summary.Figures(c.Metrics, &f)
	return f
}
