package httpphase

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"csbench/internal/hostdata"
	"csbench/internal/kv"
	"csbench/internal/rundir"
	"csbench/internal/server"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// MetricKeys are the metrics every HTTP cell has, measured or null, besides
// those of hostdata (host and process CPU, nstat deltas, socket states).
var MetricKeys = []string{
	"rps", "requests", "duration_s", "throughput_mbps", "goodput_mbps", "link_utilization",
	"latency_mean_ms", "latency_stdev_ms", "latency_max_ms", "latency_p50_ms", "latency_p75_ms",
	"latency_p90_ms", "latency_p95_ms", "latency_p99_ms", "latency_p99_9_ms",
	"errors_total", "errors_connect", "errors_read", "errors_write", "errors_timeout", "errors_status",
	"errors_deadline_aborted",
}

// RawPath is where a cell's load generator output is.
func RawPath(dir string, c rundir.Cell) string {
	if c.Params["loadgen"] == "oha" {
		return filepath.Join(dir, "raw", c.Name+".json")
	}
	return filepath.Join(dir, "raw", c.Name+".txt")
}

// Measure fills a cell's metrics and details from its raw output and the
// hosts' monitors (CPU, processes, the NICs' counters, nstat, sockstat); basis is what link_utilization compares with. It returns
// notes for the summary (disagreements, missing data). A cell whose output
// cannot be read, or that got no response carrying the payload, becomes
// "failed" with the reason.
func Measure(r *rundir.Run, s *summary.Summary, hosts *hostdata.Hosts, rc rundir.Cell, c *summary.Cell, basis Basis) []string {
	m := c.Metrics
	for _, k := range MetricKeys {
		m[k] = nil
	}
	var notes []string
	hosts.CPU(rc, m)
	hosts.NIC(rc, NICs(s), m)
	hosts.Procs(rc, "server/csb-server", "server", m)
	// pidstat-loadgen-<cell>.txt watched this cell's load generator only,
	// from its start to its end: every sample in it is the cell's, the
	// first one too, which hostdata.Window would drop (it is stamped less
	// than a second after the start). So the window opens a second early.
	lg := rc
	lg.Start = rc.Start.Add(-time.Second)
	hosts.Procs(lg, "client/loadgen-"+rc.Name, "client", m)
	for _, p := range hosts.Counters(rc, m) {
		notes = append(notes, "cell "+rc.Name+": "+p)
	}
	c.Trust = trust.Disturb(hosts, rc, s.Lab, trust.Threshold(r))
	// The warm-up (WARMUP) ran before the cell: its whole window counts.
	c.Trust = trust.Steady(c.Trust, hosts, rc, trust.Sender{Host: "server", NIC: s.Hosts["server"].NIC}, 0, trust.CVThreshold(r))
	if set := s.Clients.Set(); set != nil {
		return append(notes, measureClients(r, s, hosts, rc, c, set, basis)...)
	}
	if rc.Status != "ok" {
		return notes
	}
	var l *Load
	var err error
	if rc.Params["loadgen"] == "oha" {
		l, err = ReadOha(RawPath(r.Dir, rc), ResponseBytes(r.Dir, rc.Params["payload"]))
	} else {
		l, err = ReadWrk(RawPath(r.Dir, rc))
	}
	if err != nil {
		c.SetRawError(r.Dir, RawPath(r.Dir, rc), err)
		return notes
	}
	if l.CrossCheck != "" {
		notes = append(notes, "cell "+rc.Name+": wrk's text and the hook's JSON disagree: "+l.CrossCheck)
	}
	body, err := server.ParseSize(rc.Params["payload"])
	if err != nil {
		fail(c, fmt.Sprintf("payload %q: %v", rc.Params["payload"], err))
		return notes
	}
	d := l.DurationS
	m["duration_s"] = summary.F(round(d, 3))
	m["requests"] = summary.F(l.Responses)
	m["rps"] = summary.F(round(l.Responses/d, 1))
	if l.WireBytes != nil {
		m["throughput_mbps"] = summary.F(round(*l.WireBytes*8/d/1e6, 2))
	}
	m["goodput_mbps"] = summary.F(round(l.OK*float64(body)*8/d/1e6, 2))
	if basis.Mbps != nil && m["throughput_mbps"] != nil {
		m["link_utilization"] = summary.F(round(*m["throughput_mbps"] / *basis.Mbps, 3))
	}
	for _, k := range LatencyKeys {
		m["latency_"+k+"_ms"] = rounded(l.Latency[k], 3)
	}
	m["errors_total"] = summary.F(l.ErrorsTotal)
	if l.Tool == "wrk" {
		for _, k := range []string{"connect", "read", "write", "timeout", "status"} {
			m["errors_"+k] = summary.F(l.Errors[k])
		}
	} else {
		m["errors_status"] = summary.F(l.Errors["status"])
		m["errors_deadline_aborted"] = summary.F(l.Aborted)
	}
	errs := map[string]any{}
	for _, k := range kv.SortedKeys(l.Errors) {
		errs[k] = l.Errors[k]
	}
	codes := map[string]any{}
	for _, k := range kv.SortedKeys(l.StatusCodes) {
		codes[k] = l.StatusCodes[k]
	}
	c.Details = map[string]any{
		"loadgen": l.Tool, "status_codes": codes, "errors": errs, "throughput_basis": l.WireBasis,
	}
	if l.OK == 0 {
		fail(c, fmt.Sprintf("no response carried the payload (%.0f responses, %.0f errors)", l.Responses, l.ErrorsTotal))
	}
	return notes
}

// NICs maps each monitored host to its benchmark interface: "server",
// "client", and with N clients "client1", ... from run.env.
func NICs(s *summary.Summary) map[string]string {
	nics := map[string]string{"server": s.Hosts["server"].NIC, "client": s.Hosts["client"].NIC}
	if s.Clients != nil {
		for _, h := range s.Clients.Hosts {
			nics[h.Label] = h.NIC
		}
	}
	return nics
}

func fail(c *summary.Cell, msg string) {
	c.Status = "failed"
	c.Error = &msg
}

// Param returns a cell parameter as a number, or NaN.
func Param(c *summary.Cell, key string) float64 {
	v, err := strconv.ParseFloat(c.Params[key], 64)
	if err != nil {
		return nan
	}
	return v
}
