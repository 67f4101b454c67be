package phase4

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"csbench/internal/clienthosts"
	"csbench/internal/connresult"
	"csbench/internal/decimal"
	"csbench/internal/hostdata"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// ReportName is the report's file name in the run directory.
const ReportName = "Report_04-connections.md"

// ErrorPctMax is the share of failed connections below which an accept
// step counts as sustained (the issue's "errors under 1 %").
const ErrorPctMax = 1.0

// Phase implements cli.Phase for 04-connections.
type Phase struct{}

// Verdict bounds.
const (
	BoundPorts    = "ephemeral ports"
	BoundBacklog  = "listen backlog"
	BoundRate     = "rate not kept"
	BoundLatency  = "latency bound"
	BoundNone     = "none"
	BoundNoResult = "no result"
)

// MetricKeys are the metrics every cell has, measured or null, besides
// those of hostdata (CPU, nstat deltas, socket states).
var MetricKeys = []string{
	"rate_target_per_s", "rate_achieved_per_s", "rate_achieved_ratio",
	"connections_target", "connections_completed", "connections_failed", "connections_never_up", "error_pct",
	"errors_eaddrnotavail", "errors_econnreset", "errors_econnrefused", "errors_etimedout", "first_eaddrnotavail_s",
	"connect_latency_p50_ms", "connect_latency_p99_ms", "connect_latency_max_ms",
	"latency_p50_ms", "latency_p99_ms", "latency_max_ms", "schedule_lag_p99_ms",
	"latency_under_1s", "latency_1s_to_3s", "latency_3s_to_7s", "latency_7s_and_more",
	"predicted_sustainable_rate_per_s", "predicted_cell_rate_per_s", "predicted_exhaust_s", "predicted_eaddrnotavail",
	"predicted_client_time_wait", "predicted_server_time_wait",
	"ports", "ports_left", "client_time_wait_before", "client_time_wait_peak", "server_time_wait_peak",
	"backlog", "server_somaxconn", "server_abort_on_overflow", "server_cpu_us_per_conn", "accept_p99_bound_ms",
	// A burst: how long its connects took to issue (the slowest host's),
	// and with a paced accept (BURST_ACCEPT_EVERY) its interval and
	// whether the burst must overflow (1), cannot (0) or may (null).
	"burst_issue_s", "accept_every_ms", "predicted_listen_overflow",
	// SCHEME=https (null in cleartext): the TLS handshakes of the churn and
	// accept cells, full and resumed apart, and the server's CPU per
	// handshake (one per connection).
	"tls_handshakes_full", "tls_handshakes_resumed",
	"tls_handshake_full_p50_ms", "tls_handshake_full_p99_ms", "tls_handshake_resumed_p50_ms", "tls_handshake_resumed_p99_ms",
	"server_cpu_us_per_handshake",
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

var round = decimal.Round

func intp(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Kind is a cell's scenario: backlog, accept or churn.
func Kind(c *summary.Cell) string { return c.Params["scenario"] }

// Summarize reads every cell's raw files and the monitors.
func (Phase) Summarize(r *rundir.Run, s *summary.Summary) error {
	hosts := hostdata.Load(r.Dir)
	for _, p := range hosts.Problems {
		s.Notes = append(s.Notes, "monitor data: "+p)
	}
	set := s.ClientSet()
	for _, rc := range r.Cells {
		c := summary.NewCell(rc)
		s.Notes = append(s.Notes, measure(r, set, hosts, rc, &c)...)
		c.Trust = trust.Disturb(hosts, rc, s.Lab, trust.Threshold(r))
		c.Verdict = verdict(&c)
		s.Cells = append(s.Cells, c)
	}
	return nil
}

// share is one client host's part of a cell: its settings read before the
// cell, its connclient result, its prediction and its own figures, by the
// cell's metric names.
type share struct {
	label    string
	facts    Facts
	factsErr error
	pred     *Prediction
	m        map[string]*float64
}

// measure fills a cell from every client host's connclient result, merged
// (mergeChurn, mergeBurst: one host's result is the cell's, unchanged),
// each host's own figures in c.Clients; the port prediction per host and
// combined (Combine); the monitors of every host.
func measure(r *rundir.Run, set *clienthosts.Set, hosts *hostdata.Hosts, rc rundir.Cell, c *summary.Cell) []string {
	m := c.Metrics
	for _, k := range MetricKeys {
		m[k] = nil
	}
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, "cell "+rc.Name+": "+fmt.Sprintf(format, a...)) }
	details := map[string]any{}
	c.Details = details
	summary.PutFigures(m, hosts.CPU(rc))
	counters := map[string]*float64{}
	cf, problems := hosts.Counters(rc)
	summary.PutFigures(counters, cf)
	for _, p := range problems {
		note("%s", p)
	}
	for k, v := range counters {
		m[k] = v
	}
	sumClientCounters(set, counters, m)
	srvName := rc.Params["server"]
	if srvName == "" {
		srvName = "csb-server-" + rc.Name
	}
	summary.PutPrefixed(m, "server", hosts.Procs(rc, "server/"+srvName))
	shares, errC := readShares(r, set, hosts, rc, m)
	defer fillClients(c, shares)
	timeWait(hosts, rc, m, details, shares)

	srv, errS := ReadFacts(filepath.Join(r.Dir, "raw", rc.Name+".facts.server.env"))
	if errC == nil && errS == nil {
		if v, err := strconv.Atoi(srv["net.core.somaxconn"]); err == nil {
			m["server_somaxconn"] = summary.F(float64(v))
		}
		if v, err := strconv.Atoi(srv["net.ipv4.tcp_abort_on_overflow"]); err == nil {
			m["server_abort_on_overflow"] = summary.F(float64(v))
		}
		m["client_time_wait_before"] = sumOf(metricOf(shares, "client_time_wait_before"))
	} else if rc.Status != "refused" {
		note("no settings read before the cell: %v", firstErr(errC, errS))
	}
	notes = append(notes, readTimings(r, set, rc, c)...)

	if rc.Status == "refused" {
		return notes
	}
	churns, bursts, ok := readResults(r, set, rc, c, shares)
	if !ok {
		return notes
	}
	var mr *mergeResult
	switch {
	case len(churns) > 0:
		var res *connresult.ChurnResult
		res, mr = mergeChurn(churns)
		churn(res, m, details)
		if errC == nil && errS == nil {
			for _, n := range predictCell(r, shares, churns, srv, m, details) {
				note("%s", n)
			}
		}
		cpuPerConn(m, shares, res.TLS != nil)
		if Kind(c) == "accept" {
			m["accept_p99_bound_ms"] = summary.F(num(rc.Params["p99_bound_ms"]))
		}
	case len(bursts) > 0:
		var res *connresult.BurstResult
		res, mr = mergeBurst(bursts)
		burst(res, m, details)
		m["backlog"] = summary.F(num(rc.Params["backlog"]))
		if d, err := time.ParseDuration(rc.Params["accept_every"]); err == nil && d > 0 {
			every := float64(d) / 1e6
			m["accept_every_ms"] = summary.F(every)
			m["predicted_listen_overflow"] = PredictOverflow(float64(res.ConnsTarget), num(rc.Params["backlog"]), res.IssueS, every)
		}
	}
	if mr != nil && set.N() > 1 {
		c.LatencyMerge = summary.LatencyMergeExact
		if !mr.exactLatency() {
			c.LatencyMerge = summary.LatencyMergeNone
		}
		if len(mr.Upper) > 0 {
			details["upper_bound_metrics"] = mr.Upper
		}
		for _, p := range mr.Problems {
			note("latency not merged exactly: %s", p)
		}
	}
	return notes
}

// readShares starts each client host's share of a cell: its connclient's
// CPU and memory (pidstat), its host's CPU and TIME_WAIT after the cell
// (from m), its settings before the cell (raw/<cell>.facts.<client>.env);
// the cell's client_proc_cpu_pct and client_rss_mb are the hosts' added up.
// It returns the first settings file that could not be read.
func readShares(r *rundir.Run, set *clienthosts.Set, hosts *hostdata.Hosts, rc rundir.Cell, m map[string]*float64) ([]*share, error) {
	shares := make([]*share, set.N())
	var errC error
	for i, cl := range set.Clients {
		h := &share{label: cl.Label, m: map[string]*float64{}}
		for _, k := range ClientMetricKeys {
			h.m[k] = nil
		}
		cp := hosts.Procs(rc, cl.Label+"/connclient-"+rc.Name)
		h.m["client_proc_cpu_pct"], h.m["client_rss_mb"] = cp.CPUPct, cp.RSSMB
		h.m["client_time_wait"] = m[cl.Label+"_time_wait"]
		h.m["host_cpu_pct"], h.m["host_cpu_max_core_pct"] = m[cl.Label+"_cpu_pct"], m[cl.Label+"_cpu_max_core_pct"]
		h.facts, h.factsErr = ReadFacts(filepath.Join(r.Dir, "raw", rc.Name+".facts."+cl.Label+".env"))
		if h.factsErr != nil {
			errC = firstErr(errC, h.factsErr)
		} else if tw := h.facts.TimeWait(); tw >= 0 {
			h.m["client_time_wait_before"] = summary.F(float64(tw))
		}
		shares[i] = h
	}
	m["client_proc_cpu_pct"] = sumOf(metricOf(shares, "client_proc_cpu_pct"))
	m["client_rss_mb"] = sumOf(metricOf(shares, "client_rss_mb"))
	return shares, errC
}

// readResults reads every client host's connclient result of a cell
// (set.RawPath: raw/<client>/<cell>.json, or raw/<cell>.json in a run of
// one client from before) into its share's figures. It returns the churn
// or the burst results, one per host, or false (the cell failed, naming
// the file) when one is missing, malformed, of another mode or of another
// mode than the other hosts'.
func readResults(r *rundir.Run, set *clienthosts.Set, rc rundir.Cell, c *summary.Cell, shares []*share) ([]*connresult.ChurnResult, []*connresult.BurstResult, bool) {
	var churns []*connresult.ChurnResult
	var bursts []*connresult.BurstResult
	for _, h := range shares {
		path := set.RawPath(r.Dir, "", h.label, rc.Name+".json")
		b, err := os.ReadFile(path)
		if err != nil {
			c.SetRawError(r.Dir, path, err)
			return nil, nil, false
		}
		res, err := connresult.DecodeResult(path, b)
		if err != nil {
			c.SetRawError(r.Dir, path, err)
			return nil, nil, false
		}
		switch {
		case res.Churn != nil:
			churns = append(churns, res.Churn)
			churn(res.Churn, h.m, map[string]any{})
		case res.Burst != nil:
			bursts = append(bursts, res.Burst)
			burst(res.Burst, h.m, map[string]any{})
		default:
			c.SetRawError(r.Dir, path, fmt.Errorf("connclient mode %q is not one of Phase 4", res.Common.Mode))
			return nil, nil, false
		}
		if len(churns) > 0 && len(bursts) > 0 {
			c.SetRawError(r.Dir, path, fmt.Errorf("connclient churn on some client hosts of the cell, burst on others"))
			return nil, nil, false
		}
	}
	return churns, bursts, true
}

// predictCell predicts each client host's share of a churn cell from its
// own settings and its share of the rate (churns, one per host), then the
// cell (Combine) into m and details "prediction" (with several hosts each
// one's in "predictions"). It returns why a host has none (then the cell
// has none either).
func predictCell(r *rundir.Run, shares []*share, churns []*connresult.ChurnResult, srv Facts, m map[string]*float64, details map[string]any) []string {
	var notes []string
	preds := make([]*Prediction, 0, len(shares))
	labels := make([]string, len(shares))
	for i, h := range shares {
		labels[i] = h.label
		in := Input{Client: h.facts, Server: srv, Close: churns[i].Close, RatePerS: float64(churns[i].RateTargetPerS),
			DurationS: churns[i].DurationS, Sources: 1, Lab: r.Get("lab")}
		p, err := Predict(in)
		if err != nil {
			who := ""
			if len(shares) > 1 {
				who = h.label + ": "
			}
			notes = append(notes, fmt.Sprintf("%sno prediction: %v", who, err))
			continue
		}
		h.pred = p
		setPrediction(h.m, p)
		preds = append(preds, p)
	}
	if len(preds) < len(shares) {
		return notes
	}
	p := Combine(labels, preds, srv)
	details["prediction"] = p
	setPrediction(m, p)
	if len(shares) > 1 {
		per := map[string]*Prediction{}
		for _, h := range shares {
			per[h.label] = h.pred
		}
		details["predictions"] = per
	}
	return notes
}

// cpuPerConn: the processes' CPU over the connections completed per
// second, the server's over the cell's merged rate (every host's
// connections), each client host's connclient over its own.
func cpuPerConn(m map[string]*float64, shares []*share, tls bool) {
	if v := m["server_proc_cpu_pct"]; v != nil && m["rate_achieved_per_s"] != nil && *m["rate_achieved_per_s"] > 0 {
		m["server_cpu_us_per_conn"] = summary.F(round(*v/100*1e6 / *m["rate_achieved_per_s"], 1))
		if tls {
			m["server_cpu_us_per_handshake"] = m["server_cpu_us_per_conn"]
		}
	}
	for _, h := range shares {
		if v, rate := h.m["client_proc_cpu_pct"], h.m["rate_achieved_per_s"]; v != nil && rate != nil && *rate > 0 {
			h.m["client_cpu_us_per_conn"] = summary.F(round(*v/100*1e6 / *rate, 1))
		}
	}
}

// setPrediction sets a prediction's metrics; ports left is the ports less
// the client TIME_WAIT after the cell (m's client_time_wait).
func setPrediction(m map[string]*float64, p *Prediction) {
	m["predicted_sustainable_rate_per_s"] = p.SustainableRatePerS
	m["predicted_cell_rate_per_s"] = summary.F(p.CellRatePerS)
	m["predicted_exhaust_s"] = p.ExhaustS
	m["predicted_eaddrnotavail"] = summary.F(b2f(p.EAddrNotAvail))
	m["predicted_client_time_wait"] = summary.F(float64(p.ClientTimeWait))
	m["predicted_server_time_wait"] = summary.F(float64(p.ServerTimeWait))
	m["ports"] = summary.F(float64(p.Ports))
	if tw := m["client_time_wait"]; tw != nil {
		m["ports_left"] = summary.F(math.Max(0, float64(p.Ports)-*tw))
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func errorsDetail(errs map[string]uint64, m map[string]*float64, details map[string]any) {
	e := map[string]float64{}
	for k, v := range errs {
		e[k] = float64(v)
	}
	details["errors"] = e
	for _, k := range []string{"eaddrnotavail", "econnreset", "econnrefused", "etimedout"} {
		m["errors_"+k] = summary.F(e[k])
	}
}

func churn(res *connresult.ChurnResult, m map[string]*float64, details map[string]any) {
	m["rate_target_per_s"] = summary.F(float64(res.RateTargetPerS))
	m["rate_achieved_per_s"] = res.RateAchievedPerS
	if res.RateAchievedPerS != nil {
		m["rate_achieved_ratio"] = summary.F(round(*res.RateAchievedPerS/float64(res.RateTargetPerS), 4))
	}
	m["connections_target"] = summary.F(float64(res.ConnsScheduled))
	m["connections_completed"] = summary.F(float64(res.ConnsCompleted))
	m["connections_failed"] = summary.F(float64(res.ConnsFailed))
	if res.ConnsScheduled > 0 {
		m["error_pct"] = summary.F(round(100*float64(res.ConnsFailed)/float64(res.ConnsScheduled), 2))
	}
	m["first_eaddrnotavail_s"] = res.FirstAddrNotAvail
	latencies(m, res.ConnectLatencyP50Ms, res.ConnectLatencyP99Ms, res.ConnectLatencyMaxMs, res.LatencyP50Ms, res.LatencyP99Ms, res.LatencyMaxMs)
	m["schedule_lag_p99_ms"] = res.ScheduleLagP99Ms
	errorsDetail(res.Errors, m, details)
	details["close"] = res.Close
	details["per_second"] = res.PerSecond
	if t := res.TLS; t != nil {
		m["tls_handshakes_full"] = summary.F(float64(t.HandshakesFull))
		m["tls_handshakes_resumed"] = summary.F(float64(t.HandshakesResumed))
		m["tls_handshake_full_p50_ms"], m["tls_handshake_full_p99_ms"] = t.HandshakeFullP50Ms, t.HandshakeFullP99Ms
		m["tls_handshake_resumed_p50_ms"], m["tls_handshake_resumed_p99_ms"] = t.HandshakeResumeP50, t.HandshakeResumeP99
		if t.First != nil {
			details["tls"] = t.First
		}
	}
}

// latencies sets the connect and request latency percentiles of a cell.
func latencies(m map[string]*float64, v ...*float64) {
	for i, k := range []string{"connect_latency_p50_ms", "connect_latency_p99_ms", "connect_latency_max_ms",
		"latency_p50_ms", "latency_p99_ms", "latency_max_ms"} {
		m[k] = v[i]
	}
}

func burst(res *connresult.BurstResult, m map[string]*float64, details map[string]any) {
	m["connections_target"] = summary.F(float64(res.ConnsTarget))
	m["connections_completed"] = summary.F(float64(res.ConnsCompleted))
	m["connections_failed"] = summary.F(float64(res.ConnsFailed))
	m["connections_never_up"] = summary.F(float64(res.ConnsNeverUp))
	m["burst_issue_s"] = summary.F(res.IssueS)
	if res.ConnsTarget > 0 {
		m["error_pct"] = summary.F(round(100*float64(res.ConnsFailed)/float64(res.ConnsTarget), 2))
	}
	latencies(m, res.ConnectLatencyP50, res.ConnectLatencyP99, res.ConnectLatencyMax, res.LatencyP50Ms, res.LatencyP99Ms, res.LatencyMaxMs)
	m["latency_under_1s"] = summary.F(float64(res.Steps.Under1s))
	m["latency_1s_to_3s"] = summary.F(float64(res.Steps.From1s))
	m["latency_3s_to_7s"] = summary.F(float64(res.Steps.From3s))
	m["latency_7s_and_more"] = summary.F(float64(res.Steps.From7sUp))
	errorsDetail(res.Errors, m, details)
}
