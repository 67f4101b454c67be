package httpphase

import (
	"fmt"
	"strconv"

	"csbench/internal/decimal"
	"csbench/internal/hostdata"
	"csbench/internal/kv"
	"csbench/internal/rundir"
	"csbench/internal/sizes"
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

// Measure fills a cell's metrics and details from its client hosts' raw
// output (one or more: a list of one is the case of one client) and the
// hosts' monitors (CPU, processes, the NICs' counters, nstat, sockstat);
// basis is what link_utilization compares with. Each client's figures are
// its own run's; the cell's are their merge (MergeLoads: one client's pass
// unchanged). It returns notes for the summary (disagreements, missing
// data). A cell whose output cannot be read, or that got no response
// carrying the payload, becomes "failed" with the reason.
func Measure(r *rundir.Run, s *summary.Summary, hosts *hostdata.Hosts, rc rundir.Cell, c *summary.Cell, basis Basis) []string {
	m := c.Metrics
	for _, k := range MetricKeys {
		m[k] = nil
	}
	var notes []string
	summary.PutFigures(m, hosts.CPU(rc))
	summary.PutFigures(m, hosts.NIC(rc, NICs(s)))
	summary.PutPrefixed(m, "server", hosts.Procs(rc, "server/csb-server"))
	counters, problems := hosts.Counters(rc)
	summary.PutFigures(m, counters)
	for _, p := range problems {
		notes = append(notes, "cell "+rc.Name+": "+p)
	}
	c.Trust = trust.Disturb(hosts, rc, s.Lab, trust.Threshold(r))
	// The warm-up (WARMUP) ran before the cell: its whole window counts.
	c.Trust = trust.Steady(c.Trust, hosts, rc, trust.Sender{Host: "server", NIC: s.Hosts["server"].NIC}, 0, trust.CVThreshold(r))
	loads, more := readClients(r, s, hosts, rc, c)
	notes = append(notes, more...)
	if !rc.Measured() || loads == nil {
		return notes
	}
	body, err := sizes.ParseSize(rc.Params["payload"])
	if err != nil {
		fail(c, fmt.Sprintf("payload %q: %v", rc.Params["payload"], err))
		return notes
	}
	for i, l := range loads {
		loadMetrics(c.Clients[i].Metrics, l, body)
	}
	agg := MergeLoads(loads)
	loadMetrics(m, agg, body)
	if basis.Mbps != nil && m["throughput_mbps"] != nil {
		m["link_utilization"] = summary.F(decimal.Round(*m["throughput_mbps"] / *basis.Mbps, 3))
	}
	if agg.Dist != nil || len(loads) == 1 {
		c.LatencyMerge = summary.LatencyMergeExact
	} else {
		c.LatencyMerge = summary.LatencyMergeNone
	}
	switch agg.Tool {
	case "wrk":
		for _, k := range []string{"connect", "read", "write", "timeout", "status"} {
			m["errors_"+k] = summary.F(agg.Errors[k])
		}
	case "h2load":
		// Its streams closed in error are in errors_total and details.
		m["errors_status"] = summary.F(agg.Errors["status"])
		m["errors_timeout"] = summary.F(agg.Errors["timeout"])
	default:
		m["errors_status"] = summary.F(agg.Errors["status"])
		m["errors_deadline_aborted"] = summary.F(agg.Aborted)
	}
	errs := map[string]any{}
	for _, k := range kv.SortedKeys(agg.Errors) {
		errs[k] = agg.Errors[k]
	}
	codes := map[string]any{}
	for _, k := range kv.SortedKeys(agg.StatusCodes) {
		codes[k] = agg.StatusCodes[k]
	}
	c.Details = map[string]any{
		"loadgen": agg.Tool, "status_codes": codes, "errors": errs, "throughput_basis": agg.WireBasis,
	}
	if agg.Protocol != "" {
		c.Details["protocol"] = agg.Protocol
	}
	labels := make([]string, len(c.Clients))
	for i, cl := range c.Clients {
		labels[i] = cl.Label
	}
	if why := CellVerdict(r.Settings, rc, loads, labels); why != "" {
		fail(c, why)
	}
	return notes
}

// loadMetrics fills the figures of one load (a client's, or the merge of
// every client's) into m: its duration (a merge's: its longest client's),
// requests, the rates and throughputs (a merge's are the sums of its
// clients' rates, each over its own run: wrk and oha give one total per
// run), the latencies, the error count.
func loadMetrics(m map[string]*float64, l *Load, body int) {
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
	m["duration_s"] = summary.F(decimal.Round(l.DurationS, 3))
	m["requests"] = summary.F(l.Responses)
	m["rps"] = summary.F(decimal.Round(l.RPS(), 1))
	if wire {
		m["throughput_mbps"] = summary.F(decimal.Round(tput, 2))
	}
	m["goodput_mbps"] = summary.F(decimal.Round(good, 2))
	for _, k := range LatencyKeys {
		m["latency_"+k+"_ms"] = decimal.Rounded(l.Latency[k], 3)
	}
	m["errors_total"] = summary.F(l.ErrorsTotal)
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
