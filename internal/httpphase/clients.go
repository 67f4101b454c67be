package httpphase

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"csbench/internal/clienthosts"
	"csbench/internal/decimal"
	"csbench/internal/dist"
	"csbench/internal/hostdata"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// RawName is the file name of a cell's load generator output on each
// client host: <cell>.txt (wrk), <cell>.json (oha) or <cell>.h2load.txt
// (h2load, its log beside it: H2loadLogName).
func RawName(c rundir.Cell) string {
	switch c.Params["loadgen"] {
	case "oha":
		return c.Name + ".json"
	case "h2load":
		return c.Name + ".h2load.txt"
	}
	return c.Name + ".txt"
}

// ReadLoad reads one load generator output, whichever tool wrote it.
func ReadLoad(dir string, c rundir.Cell, path string) (*Load, error) {
	switch c.Params["loadgen"] {
	case "oha":
		return ReadOha(path, ResponseBytes(dir, c.Params["payload"]))
	case "h2load":
		return ReadH2load(path)
	}
	return ReadWrk(path)
}

// threadBound tells a load generator that runs one thread per -t and can
// use at most one CPU each (wrk, h2load); oha uses the client's CPUs.
func threadBound(tool string) bool { return tool == "wrk" || tool == "h2load" }

// readClients reads every client host's share of a cell: its load
// generator's output (raw/<label>/<cell>.<ext>), its process (pidstat) and
// host CPU, and when it ran (the timing `csb start-at` wrote beside the
// output, on a run that has one), into c.Clients; the window in which
// every client was loading into c.Overlap; the clients' CPU into the
// cell's client_proc_cpu_pct and client_rss_mb (summed: f.Procs["client"]);
// each client's figures into clients, aligned with c.Clients. It returns
// each client's load (nil when the cell was not ok or an output could not
// be read: the cell then failed, naming the file) and notes.
func readClients(r *rundir.Run, s *summary.Summary, hosts *hostdata.Hosts, rc rundir.Cell, c *summary.Cell, f *Figures, clients *[]ClientFigures) ([]*Load, []string) {
	set := s.ClientSet()
	var notes []string
	// pidstat-loadgen-<cell>.txt watched this cell's load generator only,
	// from its start to its end: every sample in it is the cell's, the
	// first one too, which hostdata.Window would drop (it is stamped less
	// than a second after the start). So the window opens a second early.
	lg := rc
	lg.Start = rc.Start.Add(-time.Second)
	var timings []clienthosts.Timing
	timed := true
	loads := make([]*Load, set.N())
	var cpu, rss float64
	for i, cl := range set.Clients {
		cc := summary.ClientCell{Label: cl.Label, Metrics: map[string]*float64{}}
		if n, err := strconv.ParseFloat(rc.Params[cl.Label+".connections"], 64); err == nil {
			cc.Connections = &n
		} else if n, err := strconv.ParseFloat(rc.Params["connections"], 64); err == nil && set.N() == 1 {
			cc.Connections = &n
		}
		lgp := hosts.Procs(lg, cl.Label+"/loadgen-"+rc.Name)
		cpu += summary.Val(lgp.CPUPct)
		rss += summary.Val(lgp.RSSMB)
		host := f.CPU[cl.Label]
		cf := ClientFigures{LoadgenCPUPct: lgp.CPUPct, LoadgenRSSMB: lgp.RSSMB, HostCPUPct: host.Pct, HostCPUMaxCorePct: host.MaxCorePct}
		path := set.RawPath(r.Dir, "", cl.Label, RawName(rc))
		t, more := summary.ClientTiming(set, rc, path, "the load generator", &cc)
		notes = append(notes, more...)
		if t == nil {
			timed = false
		} else {
			timings = append(timings, *t)
		}
		c.Clients = append(c.Clients, cc)
		*clients = append(*clients, cf)
		if !rc.Measured() {
			continue
		}
		l, err := ReadLoad(r.Dir, rc, path)
		if err != nil {
			c.SetRawError(r.Dir, path, err)
			return nil, notes
		}
		who := ""
		if set.N() > 1 {
			who = cl.Label + ": "
		}
		if l.CrossCheck != "" {
			what := "wrk's text and the hook's lines disagree: "
			if l.Tool == "h2load" {
				what = "h2load's text and its log disagree: "
			}
			notes = append(notes, "cell "+rc.Name+": "+who+what+l.CrossCheck)
		}
		if l.DistMissing != "" && set.N() > 1 {
			notes = append(notes, "cell "+rc.Name+": "+who+"latency percentiles not merged exactly: "+l.DistMissing)
		}
		loads[i] = l
	}
	var procs hostdata.ProcFigures
	if !math.IsNaN(cpu) {
		procs.CPUPct = summary.F(decimal.Round(cpu, 1))
	}
	if !math.IsNaN(rss) {
		procs.RSSMB = summary.F(decimal.Round(rss, 1))
	}
	f.Procs["client"] = procs
	if timed {
		if w, err := clienthosts.Overlap(set.Clients, timings, 0); err != nil {
			notes = append(notes, "cell "+rc.Name+": "+err.Error())
		} else {
			c.Overlap = &summary.Overlap{FromMs: w.FromMs, ToMs: w.ToMs, S: decimal.Round(w.S(), 3),
				StartSpreadMs: decimal.Round(w.StartSpreadMs, 1), EndSpreadMs: decimal.Round(w.EndSpreadMs, 1)}
			for i, sp := range w.Spans {
				c.Clients[i].StartMs, c.Clients[i].EndMs = summary.F(sp.StartMs), summary.F(sp.EndMs)
			}
		}
	}
	if !rc.Measured() {
		return nil, notes
	}
	return loads, notes
}

// MergeLoads adds up the clients' counts and merges their latency
// distributions. Its Latency is exact where every client has a Dist (all
// figures of the merge) and holds only the maximum otherwise (never an
// average of percentiles). DurationS is the longest client's. The merge of
// one load is that load: one client's figures are its own.
func MergeLoads(ls []*Load) *Load {
	if len(ls) == 1 {
		return ls[0]
	}
	out := &Load{Tool: ls[0].Tool, WireBasis: ls[0].WireBasis, Errors: map[string]float64{}, StatusCodes: map[string]float64{},
		Latency: map[string]*float64{}, Parts: ls}
	var ds []dist.Dist
	exact := true
	maxMs := math.Inf(-1)
	var protos []string // the clients' protocols, each once: one unless they disagree
	for _, l := range ls {
		if !slices.Contains(protos, l.Protocol) {
			protos = append(protos, l.Protocol)
		}
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
	out.Protocol = strings.Join(protos, ",")
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
	if d.Count() != 0 {
		out.Latency = latencyOf(d)
	}
	return out
}

// ClientVerdicts marks each client of a cell CPU-bound when its load
// generator used >= CPUSaturated % of what it can (wrk: its threads, at
// most the client's CPUs; oha: the client's CPUs) or, on a host of its
// own, the host was >= CPUSaturated % busy. A client's CPUs are those it
// was pinned to, else its host's. It returns the bound clients' labels.
func ClientVerdicts(s *summary.Summary, c *summary.Cell) []string {
	var bound []string
	shared := s.SharedCPUs()
	set := s.ClientSet()
	if len(c.Clients) == 0 {
		// A cell read without its per-client table (one client: the file
		// leaves it out) is its one client's.
		f := FiguresOf(c)
		label := set.Clients[0].Label
		one := summary.ClientCell{Label: label, Metrics: map[string]*float64{}}
		summary.PutFigures(one.Metrics, &ClientFigures{LoadgenCPUPct: f.Procs["client"].CPUPct, HostCPUPct: f.CPU[label].Pct})
		c.Clients = []summary.ClientCell{one}
	}
	for i := range c.Clients {
		cc := &c.Clients[i]
		cf := ClientFiguresOf(cc)
		cc.CPUBound, cc.CPUBoundEvidence = false, ""
		cpus := summary.Val(s.Hosts[cc.Label].CPUs)
		if i < set.N() {
			if n := clienthosts.CPUCount(set.Clients[i].CPUs); n > 0 {
				cpus = float64(n)
			}
		}
		limit := cpus
		what := "its CPUs"
		threads := c.Params[cc.Label+".threads"]
		if threads == "" {
			threads = c.Params["threads"]
		}
		if th, err := strconv.ParseFloat(threads, 64); err == nil && threadBound(c.Params["loadgen"]) && (math.IsNaN(limit) || th <= limit) {
			limit, what = th, threads+" thread(s)"
		}
		proc := summary.Val(cf.LoadgenCPUPct)
		host := summary.Val(cf.HostCPUPct)
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
			m := ClientFiguresOf(&cc)
			bound := "—"
			if cc.CPUBound {
				bound = "**CPU-bound**: " + cc.CPUBoundEvidence
			}
			rows = append(rows, []string{"`" + c.Name + "`", cc.Label, report.N(cc.Connections, 0), report.N(m.RPS, 0),
				report.N(m.ThroughputMbps, 1), report.N(m.LatencyP50Ms, 2), report.N(m.LatencyP99Ms, 2),
				report.N(m.LatencyMaxMs, 2), report.N(m.ErrorsTotal, 0), report.N(m.LoadgenCPUPct, 0),
				report.N(m.HostCPUPct, 0), bound, report.N(cc.StartLagMs, 0), spread})
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

// latencyOf is the latency figures of a distribution of microseconds, in
// ms: all nil when it is empty.
func latencyOf(d dist.Dist) map[string]*float64 {
	out := map[string]*float64{}
	for _, k := range LatencyKeys {
		out[k] = nil
	}
	if d.Count() == 0 {
		return out
	}
	ms := func(us float64) *float64 { v := us / 1000; return &v }
	mean, _ := d.Mean()
	out["mean"] = ms(mean)
	if sd, ok := d.Stdev(); ok {
		out["stdev"] = ms(sd)
	}
	mx, _ := d.Max()
	out["max"] = ms(float64(mx))
	for _, p := range []struct {
		k string
		p float64
	}{{"p50", 50}, {"p75", 75}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p99_9", 99.9}} {
		v, _ := d.Percentile(p.p)
		out[p.k] = ms(float64(v))
	}
	return out
}
