// Package phase3 summarizes and reports Phase 3, C10K and beyond: how many
// keep-alive connections the server holds, what they cost in memory and
// CPU, what load on them does to latency, and which wall each scenario met.
//
// A cell is one scenario of lib/c10k.sh: idle (connclient idle: open, one
// request each, hold until one end agreed for every process), lowrate
// (connclient lowrate: an open-model schedule over the connections, from
// one start for every process) or active (wrk, a closed loop on every
// connection, one wrk per client host). Its raw files: raw/<cell>.plan.json
// (how the runner split it and why, read as the c10kplan.Plan it is;
// plan.env in runs made before the plan document, converted into one when
// read), raw/<cell>.client-N.json (one connclient process per source
// address, on every client host; its ramp, first attempts and hold
// instants where it recorded them), raw/<label>/<cell>.txt (wrk, one per
// client host; raw/<cell>.wrk.txt in runs from one host made before each
// had its own directory), raw/<cell>.tw-wait.tsv (a TIME_WAIT wait, if
// any), and monitors/<host>/c10k/<cell>.{before,held}.* (the server
// processes' /proc/PID/status, sockstat, `ss` of the ESTABLISHED sockets);
// run.env's c10k.<cell>.hold_end_ms is the end every idle process held to.
package phase3

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"csbench/internal/decimal"
	"csbench/internal/hostdata"
	"csbench/internal/httpphase"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// ReportName is the report's file name in the run directory.
const ReportName = "Report_03-c10k.md"

// CooldownFile is the retry runner's TIME_WAIT wait before its scenarios.
const CooldownFile = "raw/tw-cooldown.tsv"

// Phase implements cli.Phase for 03-c10k.
type Phase struct{}

// Summarize reads every cell's raw files and the monitors.
func (Phase) Summarize(r *rundir.Run, s *summary.Summary) error {
	hosts := hostdata.Load(r.Dir)
	for _, p := range hosts.Problems {
		s.Notes = append(s.Notes, "monitor data: "+p)
	}
	cool, coolErr := readTWWait(filepath.Join(r.Dir, CooldownFile), num(r.Settings["TW_THRESHOLD"]))
	if coolErr == nil {
		s.Notes = append(s.Notes, fmt.Sprintf("Before its scenarios the run waited %.0f s for the client's TIME_WAIT toward the server to drain: %.0f → %.0f sockets (threshold %s).",
			cool.WaitS, cool.Start, cool.End, r.Settings["TW_THRESHOLD"]))
	}
	plans := readPlans(r)
	var figs []*Figures
	for _, rc := range r.Cells {
		c, f := summary.NewCell(rc), &Figures{}
		s.Notes = append(s.Notes, measure(r, hosts, rc, plans[rc.Name], &c, f)...)
		// Requests that failed (timed out, refused, an error status) make
		// a low-rate cell whose processes all ended well not ok: its
		// figures stand, with errors. The runner asked the same verdict of
		// each process's result (csb check connclient); a run it recorded
		// before it did is judged here. The active scenario's load
		// generator has the HTTP phases' verdict (measureActive).
		if kind(&c) == "lowrate" && c.Status == "ok" {
			errs, _ := c.Details["errors"].(map[string]float64)
			if err := requestsVerdict(f.RequestsFailed, errs); err != nil {
				msg := err.Error()
				c.Status, c.Error = rundir.StatusErrors, &msg
			}
		}
		c.Trust = trust.Disturb(hosts, rc, s.Lab, trust.Threshold(r))
		if coolErr == nil {
			f.ClientTWCooldownS = summary.F(round(cool.WaitS, 1))
			f.ClientTimeWaitCooldownStart = summary.F(cool.Start)
			f.ClientTimeWaitCooldownEnd = summary.F(cool.End)
		}
		s.Cells, figs = append(s.Cells, c), append(figs, f)
	}
	fillRunFigures(figs)
	for i, f := range figs {
		summary.PutFigures(s.Cells[i].Metrics, f)
	}
	// The active scenario's verdict compares with the service time that the
	// low-rate scenarios of the same run measured.
	for i := range s.Cells {
		s.Cells[i].Verdict = verdict(s, &s.Cells[i], plans[s.Cells[i].Name].Plan)
	}
	return nil
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

var round = decimal.Round

// rounded returns p rounded, or nil.
func rounded(p *float64, decimals int) *float64 {
	if p == nil {
		return nil
	}
	return summary.F(round(*p, decimals))
}

// measure fills one cell's figures f and details; it returns notes for the
// summary. A cell whose client output is missing or unreadable becomes
// "failed" with the reason, its figures null.
func measure(r *rundir.Run, hosts *hostdata.Hosts, rc rundir.Cell, cp cellPlan, c *summary.Cell, f *Figures) []string {
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, "cell "+rc.Name+": "+fmt.Sprintf(format, a...)) }
	f.ConnectionsTarget = summary.F(num(rc.Params["connections"]))
	f.ServerProcs = summary.F(num(rc.Params["server_procs"]))
	f.ClientProcs = summary.F(num(rc.Params["client_procs"]))
	if v := num(rc.Params["rps"]); !math.IsNaN(v) {
		f.RPSTarget = summary.F(v)
	}

	details := map[string]any{}
	plan := cp.Plan
	if cp.Err == nil {
		details["plan"] = cp.View
		if w, err := readTWWait(filepath.Join(r.Dir, "raw", rc.Name+".tw-wait.tsv"), float64(plan.Scenario.TWThreshold)); err == nil {
			f.TWWaitS = summary.F(round(w.WaitS, 1))
			details["tw_wait"] = map[string]any{"wait_s": round(w.WaitS, 1), "time_wait_start": w.Start, "time_wait_end": w.End, "below_threshold": w.BelowTarget}
		}
	} else {
		note("no plan (%s): %v", cp.File, cp.Err)
	}
	c.Details = details

	labels := clientLabels(hosts)
	for _, p := range hostFiguresOf(r, hosts, rc, labels, f) {
		note("%s", p)
	}
	if len(labels) > 1 {
		f.aggregateHosts(labels)
		details["client_hosts_basis"] = ClientHostsBasis
	}

	c10k := func(host, when, ext string) string {
		return filepath.Join(r.Dir, "monitors", host, "c10k", rc.Name+"."+when+"."+ext)
	}
	if rc.Status == "refused" {
		return notes
	}
	base, held := measureServer(r, c10k, labels, f, details, note)

	var clients []*Client
	switch rc.Params["scenario"] {
	case "active":
		measureActive(r, rc, c, f, labels, note)
	default:
		clients = measureConnclients(r, rc, c, f, plan, note)
	}
	if rc.Params["scenario"] == "idle" {
		holdFigures(r, rc, clients, processHosts(plan), c, f, note)
	}
	// Memory is per connection the clients hold (their own count); ss's
	// listing is the server's view, but past a few hundred thousand
	// sockets its netlink dump comes back cut short (269,097 of 1,000,000
	// held at C1M): then the clients' count is used, and said.
	n := f.ServerEstablished
	if ce := f.ConnectionsEstablished; ce != nil && *ce > 0 && (n == nil || *n < *ce) {
		if n != nil && *n > 0 && *n < 0.99**ce {
			note("ss listed %.0f ESTABLISHED sockets on the server port, the clients hold %.0f: its dump was cut short; memory per connection is per the clients' %.0f", *n, *ce, *ce)
		}
		n = ce
	}
	if f.ServerRSSHeldMB != nil && f.ServerRSSBaselineMB != nil && n != nil && *n > 0 {
		f.ServerRSSPerConnKB = summary.F(round((held-base) / *n, 1))
		if st := streams(rc); st > 1 {
			// HTTP/2: every connection carries st requests in flight.
			f.ServerRSSPerStreamKB = summary.F(round((held-base)/(*n*float64(st)), 2))
		}
	}
	lab := r.Get("lab")
	for _, p := range measureMemory(c10k, clients, labels, n, lab == "netns" || lab == "local", &f.MemoryFigures, details) {
		note("%s", p)
	}
	return notes
}

// hostFiguresOf fills the monitored hosts' figures of f (CPU, counters,
// processes) and the clients' TIME_WAIT before the cell; it returns the
// problems reading the counters.
func hostFiguresOf(r *rundir.Run, hosts *hostdata.Hosts, rc rundir.Cell, labels []string, f *Figures) []string {
	f.CPU = hosts.CPU(rc)
	counters, problems := hosts.Counters(rc)
	f.Counters = counters
	f.ClientTimeWaitBefore = sumHosts(labels, func(l string) *float64 {
		ss, err := hostdata.ReadSockstat(filepath.Join(r.Dir, "monitors", l, "counters", rc.Name+".before.sockstat"))
		if v, ok := ss["TCP.tw"]; err == nil && ok {
			return summary.F(v)
		}
		return nil
	})
	// The server processes were started before the cell: their pidstat
	// samples inside the cell are the cell's. The clients' pidstat started
	// with them, at the cell's start: its first sample, stamped less than a
	// second after it, is theirs too.
	f.Procs = map[string]hostdata.ProcFigures{"server": hosts.Procs(rc, "server/csb-server-"+rc.Name)}
	f.PeakProcs, f.PeakCPU = map[string]hostdata.PeakProcFigures{}, map[string]hostdata.PeakCPUFigures{}
	lg := rc
	lg.Start = rc.Start.Add(-time.Second)
	tool := "connclient"
	if rc.Params["scenario"] == "active" {
		tool = activeTool(rc)
	}
	for _, l := range labels {
		f.Procs[l] = hosts.Procs(lg, l+"/"+tool+"-"+rc.Name)
		f.PeakProcs[l] = hosts.PeakProcs(lg, l+"/"+tool+"-"+rc.Name)
		f.PeakCPU[l] = hosts.PeakCPU(rc, l)
	}
	return problems
}

// measureServer fills the connections each end held (ESTABLISHED) and the
// server's RSS before and with them held; it returns that RSS, KiB.
func measureServer(r *rundir.Run, c10k func(host, when, ext string) string, labels []string, f *Figures, details map[string]any, note func(string, ...any)) (base, held float64) {
	v, basis := established(c10k, "server", r.Get("lab") == "local")
	f.ServerEstablished = v
	if basis != "" {
		details["established_basis"] = basis
	}
	// With several client hosts, the sum of every host's count.
	f.ClientEstablished = sumHosts(labels, func(l string) *float64 {
		v, basis := established(c10k, l, r.Get("lab") == "local")
		if basis != "" {
			details["established_basis"] = basis
		}
		return v
	})
	base, _, errB := readStatusRSS(c10k("server", "before", "status"))
	held, _, errH := readStatusRSS(c10k("server", "held", "status"))
	if errB == nil {
		f.ServerRSSBaselineMB = summary.F(round(base/1024, 1))
	} else {
		note("%v", errB)
	}
	if errH == nil {
		f.ServerRSSHeldMB = summary.F(round(held/1024, 1))
	} else {
		note("%v", errH)
	}
	return base, held
}

// ClientHostsBasis says, in details "client_hosts_basis", how a run with
// several client hosts gives the client_* figures: counts, memory and
// traffic summed over the hosts, CPU the busiest host's (a client host is
// CPU-bound when one is); each host's own are client<k>_*.
const ClientHostsBasis = "sum_over_hosts_cpu_busiest"

// clientLabels are the client hosts of the run: "client", or with N
// clients "client1" ... "clientN" (monitors/<label>/).
func clientLabels(hosts *hostdata.Hosts) []string {
	var out []string
	for _, n := range hosts.Names {
		if n != "server" {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = []string{"client"}
	}
	return out
}

// sumHosts sums get over the client hosts; nil when one has no value.
func sumHosts(labels []string, get func(string) *float64) *float64 {
	vs := make([]*float64, len(labels))
	for i, l := range labels {
		vs[i] = get(l)
	}
	return sumAll(vs)
}

// sumAll is the sum of vs, nil when any is nil (not measured).
func sumAll(vs []*float64) *float64 {
	t := 0.0
	for _, v := range vs {
		if v == nil {
			return nil
		}
		t += *v
	}
	return summary.F(t)
}

// established counts a host's connections on the server port with every
// connection held: the lines of `ss` when it was taken (idle holds), else
// the growth of /proc/net/sockstat's "TCP inuse" since before the clients
// started (ss walks the socket hash and stalls a running schedule). With
// LAB=local both ends share one namespace with everything else on the
// host: sockstat cannot tell them apart, so there is no count.
func established(path func(host, when, ext string) string, host string, local bool) (*float64, string) {
	// ss's listing, gzipped by the runner (70 MB a host at C1M), or its
	// count that the committed references keep in its place.
	if v, err := rundir.CountLines(path(host, "held", "established")); err == nil {
		return summary.F(float64(v)), "ss -Htn state established on the server port, with every connection held"
	}
	if local {
		return nil, ""
	}
	before, err1 := hostdata.ReadSockstat(path(host, "before", "sockstat"))
	held, err2 := hostdata.ReadSockstat(path(host, "held", "sockstat"))
	b, ok1 := before["TCP.inuse"]
	h, ok2 := held["TCP.inuse"]
	if err1 != nil || err2 != nil || !ok1 || !ok2 {
		return nil, ""
	}
	return summary.F(h - b), "/proc/net/sockstat TCP inuse held − before (no ss while requests run: it stalls them)"
}

func fail(c *summary.Cell, msg string) {
	c.Status = "failed"
	c.Error = &msg
}

// activeTool is the active cell's load generator: h2load over HTTP/2
// (params loadgen=h2load), wrk otherwise.
func activeTool(rc rundir.Cell) string {
	if rc.Params["loadgen"] == "h2load" {
		return "h2load"
	}
	return "wrk"
}

// streams is a cell's HTTP/2 streams per connection (params streams=S);
// 1 over HTTP/1.1.
func streams(rc rundir.Cell) int {
	if v, err := strconv.Atoi(rc.Params["streams"]); err == nil && v > 0 {
		return v
	}
	return 1
}

// measureActive reads the active cell's load generator outputs, one per
// client host: wrk's (raw/<label>/<cell>.txt; raw/<cell>.wrk.txt in a run
// from one host before each had its own directory), the report.lua hook's
// JSON cross-checked with wrk's text; or over HTTP/2 h2load's
// (raw/<label>/<cell>.h2load.txt and its log of every request, from which
// the latencies come). They are merged as the HTTP phases merge (counts and
// rates summed, percentiles from the merged distributions; one host's
// figures are its own). Neither tool reports a connection count: the
// connections established are those `ss` saw on the clients half way
// through the run.
func measureActive(r *rundir.Run, rc rundir.Cell, c *summary.Cell, f *Figures, labels []string, note func(string, ...any)) {
	var loads []*httpphase.Load
	tool := activeTool(rc)
	for _, l := range labels {
		var ld *httpphase.Load
		var err error
		if tool == "h2load" {
			ld, err = httpphase.ReadH2load(filepath.Join(r.Dir, "raw", l, rc.Name+".h2load.txt"))
		} else {
			path := filepath.Join(r.Dir, "raw", l, rc.Name+".txt")
			if old := filepath.Join(r.Dir, "raw", rc.Name+".wrk.txt"); len(labels) == 1 && !exists(path) && exists(old) {
				path = old
			}
			ld, err = httpphase.ReadWrk(path)
		}
		if err != nil {
			if rc.Measured() {
				fail(c, err.Error())
			}
			return
		}
		if ld.CrossCheck != "" {
			note("%s's text and its latencies disagree: %s", tool, ld.CrossCheck)
		}
		if ld.DistMissing != "" && len(labels) > 1 {
			note("%s: latency percentiles not merged exactly: %s", l, ld.DistMissing)
		}
		loads = append(loads, ld)
	}
	l := httpphase.MergeLoads(loads)
	f.ConnectionsEstablished = f.ClientEstablished
	held := f.ConnectionsEstablished
	if held == nil && l.Errors["connect"] == 0 {
		// No count (LAB=local), but wrk opened every connection it was
		// told to without a connect error.
		held = f.ConnectionsTarget
	}
	f.RequestsCompleted = summary.F(l.OK)
	f.RequestsFailed = summary.F(l.ErrorsTotal)
	f.RPSAchieved = summary.F(round(l.RPS(), 1))
	for _, p := range []struct {
		k   string
		dst **float64
	}{{"p50", &f.LatencyP50Ms}, {"p90", &f.LatencyP90Ms}, {"p99", &f.LatencyP99Ms}, {"p99_9", &f.LatencyP999Ms}, {"max", &f.LatencyMaxMs}} {
		*p.dst = rounded(l.Latency[p.k], 3)
	}
	f.ErrorsTotal = summary.F(l.ErrorsTotal)
	c.Details["errors"] = l.Errors
	c.Details["latency_mean_ms"] = rounded(l.Latency["mean"], 3)
	if len(loads) > 1 {
		c.Details["latency_merge"] = summary.LatencyMergeExact
		if l.Dist == nil {
			c.Details["latency_merge"] = summary.LatencyMergeNone
		}
	}
	if n, rps := held, f.RPSAchieved; n != nil && rps != nil && *rps > 0 {
		// A closed loop of n connections of st streams each, served at rps
		// requests/s: each request waits n × st / rps on average (Little's
		// law).
		f.LittlesLawLatencyMs = summary.F(round(*n*float64(streams(rc)) / *rps * 1000, 1))
	}
	// The runner's verdict (csb check wrk) is this one.
	if why := httpphase.CellVerdict(r.Settings, rc, loads, labels); why != "" {
		fail(c, why)
	}
}

// exists tells whether a raw file is there, plain or gzipped.
func exists(p string) bool { return rundir.Exists(p) }

// kind is a cell's scenario.
func kind(c *summary.Cell) string { return c.Params["scenario"] }

// label names a cell the way the seed's table does.
func label(c *summary.Cell) string {
	n := c.Params["connections"]
	if v := num(n); !math.IsNaN(v) && math.Mod(v, 1000) == 0 {
		n = strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	}
	switch kind(c) {
	case "idle":
		return n + " idle"
	case "lowrate":
		return n + " low-rate at " + c.Params["rps"] + " req/s"
	case "active":
		if st := c.Params["streams"]; st != "" {
			return n + " HTTP/2 connections × " + st + " streams on " + c.Params["path"]
		}
		return n + " active on " + c.Params["path"]
	}
	return strings.TrimSpace(n + " " + kind(c))
}
