package httpphase

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"csbench/internal/clients"
	"csbench/internal/dist"
	"csbench/internal/hostdata"
	"csbench/internal/kv"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/server"
	"csbench/internal/summary"
)

// ClientRawPath is where client label's load generator output of a cell
// is in an N-client run: raw/<label>/<cell>.txt (wrk) or .json (oha).
func ClientRawPath(dir, label string, c rundir.Cell) string {
	ext := ".txt"
	if c.Params["loadgen"] == "oha" {
		ext = ".json"
	}
	return filepath.Join(dir, "raw", label, c.Name+ext)
}

// ClientMetricKeys are the figures kept per client of an N-client cell.
var ClientMetricKeys = []string{
	"rps", "requests", "duration_s", "throughput_mbps", "goodput_mbps",
	"latency_mean_ms", "latency_max_ms", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "latency_p99_9_ms",
	"errors_total", "loadgen_cpu_pct", "loadgen_rss_mb", "host_cpu_pct", "host_cpu_max_core_pct",
}

// measureClients fills an N-client cell: each client's output read as a
// one-client cell's is, the rates and throughputs summed (each client's
// over its own run: wrk and oha give one total per run), the latency
// figures from the merge of the clients' full distributions, the counts
// summed, and every client's own figures in c.Clients. set is the run's
// clients; m already holds the server's figures.
func measureClients(r *rundir.Run, s *summary.Summary, hosts *hostdata.Hosts, rc rundir.Cell, c *summary.Cell, set *clients.Set, basis Basis) []string {
	m := c.Metrics
	var notes []string
	lg := rc
	lg.Start = rc.Start.Add(-time.Second) // as for one client, see Measure
	var timings []clients.Timing
	timed := true
	loads := make([]*Load, set.N())
	sumProc := 0.0
	for i, cl := range set.Clients {
		cc := summary.ClientCell{Label: cl.Label, Metrics: map[string]*float64{}}
		for _, k := range ClientMetricKeys {
			cc.Metrics[k] = nil
		}
		if n, err := strconv.ParseFloat(rc.Params[cl.Label+".connections"], 64); err == nil {
			cc.Connections = &n
		}
		pm := map[string]*float64{}
		hosts.Procs(lg, cl.Label+"/loadgen-"+rc.Name, cl.Label, pm)
		cc.Metrics["loadgen_cpu_pct"], cc.Metrics["loadgen_rss_mb"] = pm[cl.Label+"_proc_cpu_pct"], pm[cl.Label+"_rss_mb"]
		sumProc += summary.Val(cc.Metrics["loadgen_cpu_pct"])
		cc.Metrics["host_cpu_pct"], cc.Metrics["host_cpu_max_core_pct"] = m[cl.Label+"_cpu_pct"], m[cl.Label+"_cpu_max_core_pct"]
		t, err := clients.ReadTiming(clients.TimingPath(r.Dir, cl.Label, rc.Name))
		if err != nil {
			timed = false
			notes = append(notes, fmt.Sprintf("cell %s: %s: no timing: %s", rc.Name, cl.Label, summary.OneLine(err.Error(), summary.MaxErrorLen)))
		} else {
			timings = append(timings, t)
			lag := float64(*t.StartMs - *t.DueMs)
			cc.StartLagMs = &lag
			if *t.Exit != 0 {
				notes = append(notes, fmt.Sprintf("cell %s: %s: the load generator exited %d", rc.Name, cl.Label, *t.Exit))
			}
		}
		c.Clients = append(c.Clients, cc)
		if rc.Status != "ok" {
			continue
		}
		var l *Load
		path := ClientRawPath(r.Dir, cl.Label, rc)
		if rc.Params["loadgen"] == "oha" {
			l, err = ReadOha(path, ResponseBytes(r.Dir, rc.Params["payload"]))
		} else {
			l, err = ReadWrk(path)
		}
		if err != nil {
			c.SetRawError(r.Dir, path, err)
			return notes
		}
		if l.CrossCheck != "" {
			notes = append(notes, "cell "+rc.Name+": "+cl.Label+": wrk's text and the hook's lines disagree: "+l.CrossCheck)
		}
		if l.DistMissing != "" {
			notes = append(notes, "cell "+rc.Name+": "+cl.Label+": latency percentiles not merged exactly: "+l.DistMissing)
		}
		loads[i] = l
	}
	if !math.IsNaN(sumProc) {
		m["client_proc_cpu_pct"] = summary.F(round(sumProc, 1))
	}
	if timed {
		if w, err := clients.Overlap(set.Clients, timings, 0); err != nil {
			notes = append(notes, "cell "+rc.Name+": "+err.Error())
		} else {
			c.Overlap = &summary.Overlap{FromMs: w.FromMs, ToMs: w.ToMs, S: round(w.S(), 3),
				StartSpreadMs: round(w.StartSpreadMs, 1), EndSpreadMs: round(w.EndSpreadMs, 1)}
			for i, sp := range w.Spans {
				c.Clients[i].StartMs, c.Clients[i].EndMs = summary.F(sp.StartMs), summary.F(sp.EndMs)
			}
		}
	}
	if rc.Status != "ok" {
		return notes
	}
	body, err := server.ParseSize(rc.Params["payload"])
	if err != nil {
		fail(c, fmt.Sprintf("payload %q: %v", rc.Params["payload"], err))
		return notes
	}
	agg := mergeLoads(loads)
	for i, l := range loads {
		cm := c.Clients[i].Metrics
		cm["duration_s"] = summary.F(round(l.DurationS, 3))
		cm["requests"] = summary.F(l.Responses)
		cm["rps"] = summary.F(round(l.Responses/l.DurationS, 1))
		if l.WireBytes != nil {
			cm["throughput_mbps"] = summary.F(round(*l.WireBytes*8/l.DurationS/1e6, 2))
		}
		cm["goodput_mbps"] = summary.F(round(l.OK*float64(body)*8/l.DurationS/1e6, 2))
		for _, k := range []string{"mean", "max", "p50", "p90", "p99", "p99_9"} {
			cm["latency_"+k+"_ms"] = rounded(l.Latency[k], 3)
		}
		cm["errors_total"] = summary.F(l.ErrorsTotal)
	}
	// Sums of per-client rates, each over its own run, unrounded.
	var rps, tput, good float64
	wireKnown := true
	for _, l := range loads {
		rps += l.Responses / l.DurationS
		good += l.OK * float64(body) * 8 / l.DurationS / 1e6
		if l.WireBytes == nil {
			wireKnown = false
		} else {
			tput += *l.WireBytes * 8 / l.DurationS / 1e6
		}
	}
	m["rps"] = summary.F(round(rps, 1))
	m["requests"] = summary.F(agg.Responses)
	if c.Overlap != nil {
		m["duration_s"] = summary.F(c.Overlap.S)
	}
	if wireKnown {
		m["throughput_mbps"] = summary.F(round(tput, 2))
	}
	m["goodput_mbps"] = summary.F(round(good, 2))
	if basis.Mbps != nil && m["throughput_mbps"] != nil {
		m["link_utilization"] = summary.F(round(*m["throughput_mbps"] / *basis.Mbps, 3))
	}
	m["clients"] = summary.F(float64(set.N()))
	for _, k := range LatencyKeys {
		m["latency_"+k+"_ms"] = rounded(agg.Latency[k], 3)
	}
	if agg.Dist != nil {
		c.LatencyMerge = summary.LatencyMergeExact
	} else {
		c.LatencyMerge = summary.LatencyMergeNone
	}
	m["errors_total"] = summary.F(agg.ErrorsTotal)
	if agg.Tool == "wrk" {
		for _, k := range []string{"connect", "read", "write", "timeout", "status"} {
			m["errors_"+k] = summary.F(agg.Errors[k])
		}
	} else {
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
	if agg.OK == 0 {
		fail(c, fmt.Sprintf("no response carried the payload (%.0f responses, %.0f errors)", agg.Responses, agg.ErrorsTotal))
	}
	return notes
}

// mergeLoads adds up the clients' counts and merges their latency
// distributions. Its Latency is exact where every client has a Dist (all
// figures of the merge) and holds only the maximum otherwise (never an
// average of percentiles). DurationS is the longest client's.
func mergeLoads(ls []*Load) *Load {
	out := &Load{Tool: ls[0].Tool, WireBasis: ls[0].WireBasis, Errors: map[string]float64{}, StatusCodes: map[string]float64{},
		Latency: map[string]*float64{}}
	var ds []dist.Dist
	exact := true
	maxMs := math.Inf(-1)
	for _, l := range ls {
		out.DurationS = math.Max(out.DurationS, l.DurationS)
		out.Responses += l.Responses
		out.OK += l.OK
		out.ErrorsTotal += l.ErrorsTotal
		out.Aborted += l.Aborted
		for k, v := range l.Errors {
			out.Errors[k] += v
		}
		for k, v := range l.StatusCodes {
			out.StatusCodes[k] += v
		}
		if l.Dist == nil {
			exact = false
		} else {
			ds = append(ds, *l.Dist)
		}
		if p := l.Latency["max"]; p != nil {
			maxMs = math.Max(maxMs, *p)
		}
	}
	for _, k := range LatencyKeys {
		out.Latency[k] = nil
	}
	if !exact {
		if !math.IsInf(maxMs, -1) {
			out.Latency["max"] = &maxMs
		}
		return out
	}
	d := dist.Merge(ds...)
	out.Dist = &d
	if d.Count() == 0 {
		return out
	}
	ms := func(us float64) *float64 { v := us / 1000; return &v }
	mean, _ := d.Mean()
	out.Latency["mean"] = ms(mean)
	if sd, ok := d.Stdev(); ok {
		out.Latency["stdev"] = ms(sd)
	}
	mx, _ := d.Max()
	out.Latency["max"] = ms(float64(mx))
	for _, p := range []struct {
		k string
		p float64
	}{{"p50", 50}, {"p75", 75}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p99_9", 99.9}} {
		v, _ := d.Percentile(p.p)
		out.Latency[p.k] = ms(float64(v))
	}
	return out
}

// ClientVerdicts marks each client of an N-client cell CPU-bound when its
// load generator used >= CPUSaturated % of what it can (wrk: its threads,
// at most the client's CPUs; oha: the client's CPUs) or, on a host of its
// own, the host was >= CPUSaturated % busy. It returns the bound clients'
// labels.
func ClientVerdicts(s *summary.Summary, c *summary.Cell) []string {
	var bound []string
	shared := s.SharedCPUs()
	for i := range c.Clients {
		cc := &c.Clients[i]
		cc.CPUBound, cc.CPUBoundEvidence = false, ""
		cpus := summary.Val(s.Hosts[cc.Label].CPUs)
		if s.Clients != nil && i < len(s.Clients.Hosts) {
			if n := clients.CPUCount(s.Clients.Hosts[i].CPUs); n > 0 {
				cpus = float64(n)
			}
		}
		limit := cpus
		what := "its CPUs"
		if th := Param(c, "threads"); c.Params["loadgen"] == "wrk" && !math.IsNaN(th) && (math.IsNaN(limit) || th <= limit) {
			limit, what = th, c.Params["threads"]+" thread(s)"
		}
		proc := summary.Val(cc.Metrics["loadgen_cpu_pct"])
		host := summary.Val(cc.Metrics["host_cpu_pct"])
		var ev []string
		if ge(proc, CPUSaturated*limit) {
			ev = append(ev, fmt.Sprintf("%s %.0f%% of one CPU, limit %s", c.Params["loadgen"], proc, what))
		}
		if !shared && ge(host, CPUSaturated) {
			ev = append(ev, fmt.Sprintf("host %.0f%% busy", host))
		}
		if len(ev) > 0 {
			cc.CPUBound, cc.CPUBoundEvidence = true, strings.Join(ev, ", ")
			bound = append(bound, cc.Label)
		}
	}
	sort.Strings(bound)
	return bound
}

// ClientsSection writes an N-client run's per-client table: every cell's
// share of each client, how far apart the clients started and ended, and
// how the latencies were combined. Nothing for a one-client run.
func ClientsSection(d *report.Doc, s *summary.Summary) {
	if s.Clients == nil {
		return
	}
	d.H(2, fmt.Sprintf("Per client (%d client hosts)", s.Clients.N))
	var rows [][]string
	merged := map[string]bool{}
	for i := range s.Cells {
		c := &s.Cells[i]
		merged[c.LatencyMerge] = true
		spread := "—"
		if o := c.Overlap; o != nil {
			spread = fmt.Sprintf("start %s ms, end %s ms apart; overlap %s s", report.N(&o.StartSpreadMs, 0), report.N(&o.EndSpreadMs, 0), report.N(&o.S, 3))
		}
		for _, cc := range c.Clients {
			m := cc.Metrics
			bound := "—"
			if cc.CPUBound {
				bound = "**CPU-bound**: " + cc.CPUBoundEvidence
			}
			rows = append(rows, []string{"`" + c.Name + "`", cc.Label, report.N(cc.Connections, 0), report.N(m["rps"], 0),
				report.N(m["throughput_mbps"], 1), report.N(m["latency_p50_ms"], 2), report.N(m["latency_p99_ms"], 2),
				report.N(m["latency_max_ms"], 2), report.N(m["errors_total"], 0), report.N(m["loadgen_cpu_pct"], 0),
				report.N(m["host_cpu_pct"], 0), bound, report.N(cc.StartLagMs, 0), spread})
		}
	}
	d.Table([]string{"cell", "client", "connections", "RPS", "throughput Mbit/s", "p50 ms", "p99 ms", "max ms", "errors",
		"load generator % of one CPU", "host %", "bound", "started after the agreed moment, ms", "clients apart"}, rows)
	d.P("Each client ran the same load generator at one agreed moment (`csb start-at`); its figures are over its own run. The cell's RPS and throughput are the **sum of the clients' rates**, each over its own run (wrk and oha report one total per run, not per second), so they stand for the window in which all were loading only as far as the clients started and ended together: the last column says how far apart they were (on the controller's clock: each client's times less its clock offset), and the overlap, the window in which every client was loading.")
	d.P("Each client host has its own directories: `raw/<client>/` (its load generator's output and `<cell>.timing.json`, when `csb start-at` started and ended it, on that host's clock), `monitors/<client>/` and `env/<client>/`.")
	switch {
	case merged[summary.LatencyMergeNone]:
		d.P("**Latency not merged exactly** for the cells marked so in `summary.json` (`latency_merge: %s`): a client's output carries no full distribution (oha's JSON has percentiles and a coarse histogram only; a wrk hook older than its `CSB_WRK_DIST` line has none). Those cells give only the exact maximum over the clients; their percentiles are per client, above. Percentiles are never averaged.", summary.LatencyMergeNone)
	case merged[summary.LatencyMergeExact]:
		d.P("Latency percentiles of the cells are **exact**: computed from the merge of every client's full distribution (wrk's `CSB_WRK_DIST` line: every recorded value with its count), by wrk's own rule, so they are what one wrk would have said had it made every request. Percentiles are never averaged.")
	}
}
