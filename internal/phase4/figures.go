package phase4

import (
	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

// ResultFigures are what a connclient result (churn or burst) gives that
// both a cell and each client host's share have: the cell's from the
// hosts' results merged, a share's from its host's own. A figure the
// result has not is nil (a burst has no rate, a churn no latency steps).
type ResultFigures struct {
	// RateTargetPerS is a churn's scheduled rate, connections/s;
	// RateAchievedPerS the connections completed over the schedule (at
	// least its duration), connections/s; RateAchievedRatio the one over
	// the other, a fraction.
	RateTargetPerS    *float64 `json:"rate_target_per_s"`
	RateAchievedPerS  *float64 `json:"rate_achieved_per_s"`
	RateAchievedRatio *float64 `json:"rate_achieved_ratio"`
	// ConnectionsTarget is the connections scheduled (a churn) or the
	// connects issued (a burst); Completed, Failed and NeverUp (a burst's
	// with no response within its timeout) are counts of them; ErrorPct
	// is Failed over Target, %.
	ConnectionsTarget    *float64 `json:"connections_target"`
	ConnectionsCompleted *float64 `json:"connections_completed"`
	ConnectionsFailed    *float64 `json:"connections_failed"`
	ConnectionsNeverUp   *float64 `json:"connections_never_up"`
	ErrorPct             *float64 `json:"error_pct"`
	// Errors* are the failures by cause, counts; FirstEAddrNotAvailS is
	// when the first connection that met EADDRNOTAVAIL was due, s into
	// the schedule.
	ErrorsEAddrNotAvail *float64 `json:"errors_eaddrnotavail"`
	ErrorsEConnReset    *float64 `json:"errors_econnreset"`
	ErrorsEConnRefused  *float64 `json:"errors_econnrefused"`
	ErrorsETimedOut     *float64 `json:"errors_etimedout"`
	FirstEAddrNotAvailS *float64 `json:"first_eaddrnotavail_s"`
	// ConnectLatency* is connect() alone, ms; Latency* a connection's
	// whole (connect, request, response) from its due time, ms;
	// ScheduleLagP99Ms how late connclient dispatched a connection, ms.
	ConnectLatencyP50Ms *float64 `json:"connect_latency_p50_ms"`
	ConnectLatencyP99Ms *float64 `json:"connect_latency_p99_ms"`
	LatencyP50Ms        *float64 `json:"latency_p50_ms"`
	LatencyP99Ms        *float64 `json:"latency_p99_ms"`
	LatencyMaxMs        *float64 `json:"latency_max_ms"`
	ScheduleLagP99Ms    *float64 `json:"schedule_lag_p99_ms"`
	// LatencyUnder1s ... LatencyFrom7s are a burst's responses by when
	// they came (the SYN retransmission steps), counts.
	LatencyUnder1s *float64 `json:"latency_under_1s"`
	LatencyFrom1s  *float64 `json:"latency_1s_to_3s"`
	LatencyFrom3s  *float64 `json:"latency_3s_to_7s"`
	LatencyFrom7s  *float64 `json:"latency_7s_and_more"`
	// TLSHandshakesFull and TLSHandshakesResumed are what the handshakes
	// did, counts; nil in cleartext.
	TLSHandshakesFull    *float64 `json:"tls_handshakes_full"`
	TLSHandshakesResumed *float64 `json:"tls_handshakes_resumed"`
}

// CellResultFigures are the figures of a connclient result that only a
// cell keeps (a share's are not kept).
type CellResultFigures struct {
	// ConnectLatencyMaxMs is the slowest connect(), ms.
	ConnectLatencyMaxMs *float64 `json:"connect_latency_max_ms"`
	// BurstIssueS is how long a burst's connects took to issue, s (the
	// slowest host's).
	BurstIssueS *float64 `json:"burst_issue_s"`
	// TLSHandshake* are the TLS handshakes' percentiles, full and
	// resumed apart, ms; nil in cleartext.
	TLSHandshakeFullP50Ms    *float64 `json:"tls_handshake_full_p50_ms"`
	TLSHandshakeFullP99Ms    *float64 `json:"tls_handshake_full_p99_ms"`
	TLSHandshakeResumedP50Ms *float64 `json:"tls_handshake_resumed_p50_ms"`
	TLSHandshakeResumedP99Ms *float64 `json:"tls_handshake_resumed_p99_ms"`
}

// PredictionFigures are a churn cell's port prediction (Predict; the
// cell's Combine) that both a cell and a share have.
type PredictionFigures struct {
	// PredictedSustainableRatePerS is the wall's steady rate,
	// connections/s (nil without a wall); PredictedCellRatePerS the rate
	// the cell should achieve, connections/s.
	PredictedSustainableRatePerS *float64 `json:"predicted_sustainable_rate_per_s"`
	PredictedCellRatePerS        *float64 `json:"predicted_cell_rate_per_s"`
	// PredictedExhaustS is when the free ports run out, s into the cell;
	// PredictedEAddrNotAvail 1 when they should, else 0.
	PredictedExhaustS      *float64 `json:"predicted_exhaust_s"`
	PredictedEAddrNotAvail *float64 `json:"predicted_eaddrnotavail"`
	// PredictedClientTimeWait is the client sockets the cell should leave
	// in TIME_WAIT, a count.
	PredictedClientTimeWait *float64 `json:"predicted_client_time_wait"`
	// Ports is the client's port range less its reserved ports, a count;
	// PortsLeft is Ports less the client's TIME_WAIT after the cell.
	Ports     *float64 `json:"ports"`
	PortsLeft *float64 `json:"ports_left"`
}

// ClientTimeWaitFigures are the client side's sockets in TIME_WAIT,
// counts: before the cell (sockstat) and its peak over the cell (sar).
type ClientTimeWaitFigures struct {
	ClientTimeWaitBefore *float64 `json:"client_time_wait_before"`
	ClientTimeWaitPeak   *float64 `json:"client_time_wait_peak"`
}

// Figures is a Phase 4 cell's figures (its summary.json metrics).
type Figures struct {
	ResultFigures
	CellResultFigures
	PredictionFigures
	ClientTimeWaitFigures
	// PredictedServerTimeWait is the server sockets the cell should leave
	// in TIME_WAIT, a count; ServerTimeWaitPeak the server's peak over the
	// cell (sar), a count.
	PredictedServerTimeWait *float64 `json:"predicted_server_time_wait"`
	ServerTimeWaitPeak      *float64 `json:"server_time_wait_peak"`
	// Backlog is a burst's listen backlog (params); ServerSomaxconn and
	// ServerAbortOnOverflow the server's net.core.somaxconn and
	// tcp_abort_on_overflow read before the cell.
	Backlog               *float64 `json:"backlog"`
	ServerSomaxconn       *float64 `json:"server_somaxconn"`
	ServerAbortOnOverflow *float64 `json:"server_abort_on_overflow"`
	// ServerCPUUsPerConn is the server processes' CPU per connection
	// completed, µs; ServerCPUUsPerHandshake the same over TLS (one
	// handshake per connection), nil in cleartext.
	ServerCPUUsPerConn      *float64 `json:"server_cpu_us_per_conn"`
	ServerCPUUsPerHandshake *float64 `json:"server_cpu_us_per_handshake"`
	// AcceptP99BoundMs is an accept cell's p99 bound, ms (params).
	AcceptP99BoundMs *float64 `json:"accept_p99_bound_ms"`
	// AcceptEveryMs is a paced burst's accept interval, ms
	// (BURST_ACCEPT_EVERY); PredictedListenOverflow 1 when the burst must
	// overflow, 0 when it cannot, nil when it may.
	AcceptEveryMs           *float64 `json:"accept_every_ms"`
	PredictedListenOverflow *float64 `json:"predicted_listen_overflow"`
	// CPU and Counters are the monitored hosts' (server, client; client1,
	// ... with several client hosts, and then the client side's counters
	// added up as "client").
	CPU      map[string]hostdata.CPUFigures     `figures:"prefixed"`
	Counters map[string]hostdata.CounterFigures `figures:"prefixed"`
	// Procs are the server's processes ("server") and the client hosts'
	// connclient added up ("client"), pidstat.
	Procs map[string]hostdata.ProcFigures `figures:"prefixed"`
}

// ClientFigures is one client host's share of a cell (its summary.json
// per-client metrics; with one client host the cell's own).
type ClientFigures struct {
	ResultFigures
	PredictionFigures
	ClientTimeWaitFigures
	// ClientProcCPUPct and ClientRSSMB are its connclient's CPU, % of one
	// CPU, and memory, MB (pidstat); ClientCPUUsPerConn that CPU per
	// connection it completed, µs.
	ClientProcCPUPct   *float64 `json:"client_proc_cpu_pct"`
	ClientRSSMB        *float64 `json:"client_rss_mb"`
	ClientCPUUsPerConn *float64 `json:"client_cpu_us_per_conn"`
	// HostCPUPct and HostCPUMaxCorePct are its host's CPU, % (mpstat).
	HostCPUPct        *float64 `json:"host_cpu_pct"`
	HostCPUMaxCorePct *float64 `json:"host_cpu_max_core_pct"`
}

// Cell is a cell of a Phase 4 summary with its figures and its client
// hosts' (ClientFigs, in the order of Cell.Clients), read back once
// (figured).
type Cell struct {
	*summary.Cell
	Fig        Figures
	ClientFigs []ClientFigures
}

// figured reads every cell's figures, in the order of s.Cells.
func figured(s *summary.Summary) []Cell {
	out := make([]Cell, len(s.Cells))
	for i := range s.Cells {
		c := &s.Cells[i]
		out[i].Cell = c
		summary.Figures(c.Metrics, &out[i].Fig)
		for _, cc := range c.Clients {
			var g ClientFigures
			summary.Figures(cc.Metrics, &g)
			out[i].ClientFigs = append(out[i].ClientFigs, g)
		}
	}
	return out
}
