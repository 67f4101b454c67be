package phase4

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"csbench/internal/connclient"
	"csbench/internal/hostdata"
	"csbench/internal/kv"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// ReportName is the report's file name in the run directory.
const ReportName = "Report_04-connections.md"

// ErrorPctMax is the share of failed connections below which an accept
// step counts as sustained (the "errors under 1 %").
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

var round = kv.Round

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
	for _, rc := range r.Cells {
		c := summary.NewCell(rc)
		s.Notes = append(s.Notes, measure(r, hosts, rc, &c)...)
		c.Trust = trust.Disturb(hosts, rc, s.Lab, trust.Threshold(r))
		c.Verdict = verdict(&c)
		s.Cells = append(s.Cells, c)
	}
	return nil
}

func measure(r *rundir.Run, hosts *hostdata.Hosts, rc rundir.Cell, c *summary.Cell) []string {
	m := c.Metrics
	for _, k := range MetricKeys {
		m[k] = nil
	}
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, "cell "+rc.Name+": "+fmt.Sprintf(format, a...)) }
	details := map[string]any{}
	c.Details = details
	hosts.CPU(rc, m)
	for _, p := range hosts.Counters(rc, m) {
		note("%s", p)
	}
	srvName := rc.Params["server"]
	if srvName == "" {
		srvName = "csb-server-" + rc.Name
	}
	hosts.Procs(rc, "server/"+srvName, "server", m)
	hosts.Procs(rc, "client/connclient-"+rc.Name, "client", m)
	timeWait(hosts, rc, m, details)

	raw := filepath.Join(r.Dir, "raw", rc.Name)
	cli, errC := ReadFacts(raw + ".facts.client.env")
	srv, errS := ReadFacts(raw + ".facts.server.env")
	if errC == nil && errS == nil {
		if v, err := strconv.Atoi(srv["net.core.somaxconn"]); err == nil {
			m["server_somaxconn"] = summary.F(float64(v))
		}
		if v, err := strconv.Atoi(srv["net.ipv4.tcp_abort_on_overflow"]); err == nil {
			m["server_abort_on_overflow"] = summary.F(float64(v))
		}
		if tw := cli.TimeWait(); tw >= 0 {
			m["client_time_wait_before"] = summary.F(float64(tw))
		}
	} else if rc.Status != "refused" {
		note("no settings read before the cell: %v", firstErr(errC, errS))
	}

	if rc.Status == "refused" {
		return notes
	}
	b, err := os.ReadFile(raw + ".json")
	if err != nil {
		c.SetRawError(r.Dir, raw+".json", err)
		return notes
	}
	res, err := connclient.DecodeResult(raw+".json", b)
	if err != nil {
		c.SetRawError(r.Dir, raw+".json", err)
		return notes
	}
	switch {
	case res.Churn != nil:
		churn(res.Churn, m, details)
		if errC == nil && errS == nil {
			in := Input{Client: cli, Server: srv, Close: res.Churn.Close, RatePerS: float64(res.Churn.RateTargetPerS),
				DurationS: res.Churn.DurationS, Sources: 1, Lab: r.Get("lab")}
			p, err := Predict(in)
			if err != nil {
				note("no prediction: %v", err)
			} else {
				details["prediction"] = p
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
		}
		if v := m["server_proc_cpu_pct"]; v != nil && m["rate_achieved_per_s"] != nil && *m["rate_achieved_per_s"] > 0 {
			m["server_cpu_us_per_conn"] = summary.F(round(*v/100*1e6 / *m["rate_achieved_per_s"], 1))
			if res.Churn.TLS != nil {
				m["server_cpu_us_per_handshake"] = m["server_cpu_us_per_conn"]
			}
		}
		if Kind(c) == "accept" {
			m["accept_p99_bound_ms"] = summary.F(num(rc.Params["p99_bound_ms"]))
		}
	case res.Burst != nil:
		burst(res.Burst, m, details)
		m["backlog"] = summary.F(num(rc.Params["backlog"]))
	default:
		c.SetRawError(r.Dir, raw+".json", fmt.Errorf("connclient mode %q is not one of Phase 4", res.Common.Mode))
	}
	return notes
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

func churn(res *connclient.ChurnResult, m map[string]*float64, details map[string]any) {
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

func burst(res *connclient.BurstResult, m map[string]*float64, details map[string]any) {
	m["connections_target"] = summary.F(float64(res.ConnsTarget))
	m["connections_completed"] = summary.F(float64(res.ConnsCompleted))
	m["connections_failed"] = summary.F(float64(res.ConnsFailed))
	m["connections_never_up"] = summary.F(float64(res.ConnsNeverUp))
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

// TWPoint is one second of TIME_WAIT on both hosts (sar), seconds from the
// cell's start; -1 where a host had no sample.
type TWPoint struct {
	T      float64 `json:"t_s"`
	Client int     `json:"client"`
	Server int     `json:"server"`
}

// timeWait adds the TIME_WAIT peaks over the cell and its per-second series
// (details "time_wait") from sar's net-sock samples of each host.
func timeWait(h *hostdata.Hosts, rc rundir.Cell, m map[string]*float64, details map[string]any) {
	series := map[float64]*TWPoint{}
	for _, host := range []string{"client", "server"} {
		r := h.Sadf[host]
		if r == nil {
			continue
		}
		peak := -1
		for _, s := range r.Samples {
			if s.Sock == nil || s.Time.Before(rc.Start) || s.Time.After(rc.End.Add(time.Second)) {
				continue
			}
			t := round(s.Time.Sub(rc.Start).Seconds(), 0)
			p := series[t]
			if p == nil {
				p = &TWPoint{T: t, Client: -1, Server: -1}
				series[t] = p
			}
			if host == "client" {
				p.Client = s.Sock.TCPTW
			} else {
				p.Server = s.Sock.TCPTW
			}
			peak = max(peak, s.Sock.TCPTW)
		}
		if peak >= 0 {
			m[host+"_time_wait_peak"] = summary.F(float64(peak))
		}
	}
	pts := make([]TWPoint, 0, len(series))
	for _, p := range series {
		pts = append(pts, *p)
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].T < pts[j].T })
	details["time_wait"] = pts
}
