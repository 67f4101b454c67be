// Package phase3 summarizes and reports Phase 3, C10K and beyond: how many
// keep-alive connections the server holds, what they cost in memory and
// CPU, what load on them does to latency, and which wall each scenario met.
//
// A cell is one scenario of lib/c10k.sh: idle (connclient idle: open, one
// request each, hold), lowrate (connclient lowrate: an open-model schedule
// over the connections) or active (wrk, a closed loop on every connection).
// Its raw files: raw/<cell>.plan.json (how the runner split it and why;
// plan.env in runs made before the plan document),
// raw/<cell>.client-N.json (one connclient process per source address) or
// raw/<cell>.wrk.txt, raw/<cell>.tw-wait.tsv (a TIME_WAIT wait, if any),
// and monitors/{server,client}/c10k/<cell>.{before,held}.* (the server
// processes' /proc/PID/status, sockstat, `ss` of the ESTABLISHED sockets).
package phase3

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"csbench/internal/hostdata"
	"csbench/internal/httpphase"
	"csbench/internal/kv"
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

// MetricKeys are the metrics every cell has, measured or null, besides
// those of hostdata (host and process CPU, nstat deltas, socket states).
var MetricKeys = []string{
	"connections_target", "connections_established", "connections_failed", "connections_alive_end",
	"server_established", "client_established", "setup_s", "connect_rate_target_per_s", "connect_rate_achieved_per_s",
	"connect_latency_p50_ms", "connect_latency_p99_ms", "connect_latency_max_ms",
	"server_procs", "client_procs",
	"server_rss_baseline_mb", "server_rss_held_mb", "server_rss_per_conn_kb",
	"client_time_wait_before",
	"rps_target", "rps_achieved", "rps_achieved_ratio", "requests_completed", "requests_failed",
	"latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "latency_p99_9_ms", "latency_max_ms",
	"service_latency_p50_ms", "service_latency_p90_ms", "service_latency_p99_ms", "service_latency_p99_9_ms",
	"service_latency_max_ms", "sender_lag_p99_ms", "request_latency_p99_ms",
	"littles_law_latency_ms", "errors_total", "tw_wait_s",
	"client_tw_cooldown_s", "client_time_wait_cooldown_start", "client_time_wait_cooldown_end",
}

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
	for _, rc := range r.Cells {
		c := summary.NewCell(rc)
		s.Notes = append(s.Notes, measure(r, hosts, rc, &c)...)
		c.Trust = trust.Disturb(hosts, rc, s.Lab, trust.Threshold(r))
		if coolErr == nil {
			c.Metrics["client_tw_cooldown_s"] = summary.F(round(cool.WaitS, 1))
			c.Metrics["client_time_wait_cooldown_start"] = summary.F(cool.Start)
			c.Metrics["client_time_wait_cooldown_end"] = summary.F(cool.End)
		}
		s.Cells = append(s.Cells, c)
	}
	// The active scenario's verdict compares with the service time that the
	// low-rate scenarios of the same run measured.
	for i := range s.Cells {
		s.Cells[i].Verdict = verdict(s, &s.Cells[i])
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

var round = kv.Round

// rounded returns p rounded, or nil.
func rounded(p *float64, decimals int) *float64 {
	if p == nil {
		return nil
	}
	return summary.F(round(*p, decimals))
}

// measure fills one cell's metrics and details; it returns notes for the
// summary. A cell whose client output is missing or unreadable becomes
// "failed" with the reason, its figures null.
func measure(r *rundir.Run, hosts *hostdata.Hosts, rc rundir.Cell, c *summary.Cell) []string {
	m := c.Metrics
	for _, k := range MetricKeys {
		m[k] = nil
	}
	for _, k := range MemoryKeys {
		m[k] = nil
	}
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, "cell "+rc.Name+": "+fmt.Sprintf(format, a...)) }
	m["connections_target"] = summary.F(num(rc.Params["connections"]))
	m["server_procs"] = summary.F(num(rc.Params["server_procs"]))
	m["client_procs"] = summary.F(num(rc.Params["client_procs"]))
	if v := num(rc.Params["rps"]); !math.IsNaN(v) {
		m["rps_target"] = summary.F(v)
	}

	details := map[string]any{}
	plan, planFile, err := readPlan(r.Dir, rc.Name)
	if err == nil {
		details["plan"] = plan
		if w, err := readTWWait(filepath.Join(r.Dir, "raw", rc.Name+".tw-wait.tsv"), num(plan["tw_threshold"])); err == nil {
			m["tw_wait_s"] = summary.F(round(w.WaitS, 1))
			details["tw_wait"] = map[string]any{"wait_s": round(w.WaitS, 1), "time_wait_start": w.Start, "time_wait_end": w.End, "below_threshold": w.BelowTarget}
		}
	} else {
		note("no plan (%s): %v", planFile, err)
	}
	c.Details = details

	hosts.CPU(rc, m)
	for _, p := range hosts.Counters(rc, m) {
		note("%s", p)
	}
	labels := clientLabels(hosts)
	m["client_time_wait_before"] = sumHosts(labels, func(l string) *float64 {
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
	hosts.Procs(rc, "server/csb-server-"+rc.Name, "server", m)
	lg := rc
	lg.Start = rc.Start.Add(-time.Second)
	tool := "connclient"
	if rc.Params["scenario"] == "active" {
		tool = "wrk"
	}
	for _, l := range labels {
		hosts.Procs(lg, l+"/"+tool+"-"+rc.Name, l, m)
		hosts.PeakProcs(lg, l+"/"+tool+"-"+rc.Name, l, m)
		hosts.PeakCPU(rc, l, m)
	}
	if len(labels) > 1 {
		aggregateHosts(labels, m)
		details["client_hosts_basis"] = ClientHostsBasis
	}

	c10k := func(host, when, ext string) string {
		return filepath.Join(r.Dir, "monitors", host, "c10k", rc.Name+"."+when+"."+ext)
	}
	if rc.Status == "refused" {
		return notes
	}
	// lib/c10k.sh names the client hosts whose idle processes had ended
	// their hold before every host held (c10k.<cell>.hold_ended).
	if v := r.Get("c10k." + rc.Name + ".hold_ended"); v != "" {
		details["hold_ended_early"] = strings.Split(v, ",")
		note("the idle processes on %s ended their hold before every client host held its connections: the counts and memory with every connection held miss theirs (raise HOLD above the spread of the hosts' ramps)", v)
	}
	v, basis := established(c10k, "server", r.Get("lab") == "local")
	m["server_established"] = v
	if basis != "" {
		details["established_basis"] = basis
	}
	// With several client hosts, the sum of every host's count.
	m["client_established"] = sumHosts(labels, func(l string) *float64 {
		v, basis := established(c10k, l, r.Get("lab") == "local")
		if basis != "" {
			details["established_basis"] = basis
		}
		return v
	})
	base, _, errB := readStatusRSS(c10k("server", "before", "status"))
	held, _, errH := readStatusRSS(c10k("server", "held", "status"))
	if errB == nil {
		m["server_rss_baseline_mb"] = summary.F(round(base/1024, 1))
	} else {
		note("%v", errB)
	}
	if errH == nil {
		m["server_rss_held_mb"] = summary.F(round(held/1024, 1))
	} else {
		note("%v", errH)
	}

	var clients []*Client
	switch rc.Params["scenario"] {
	case "active":
		measureWrk(r, rc, c, note)
	default:
		clients = measureClients(r, rc, c, note)
	}
	n := m["server_established"]
	if n == nil || *n == 0 {
		n = m["connections_established"]
	}
	if m["server_rss_held_mb"] != nil && m["server_rss_baseline_mb"] != nil && n != nil && *n > 0 {
		m["server_rss_per_conn_kb"] = summary.F(round((held-base) / *n, 1))
	}
	lab := r.Get("lab")
	for _, p := range measureMemory(c10k, clients, n, lab == "netns" || lab == "local", m, details) {
		note("%s", p)
	}
	return notes
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
	t := 0.0
	for _, l := range labels {
		v := get(l)
		if v == nil {
			return nil
		}
		t += *v
	}
	return summary.F(t)
}

// aggregateHosts sets each client_<x> that the client hosts' client<k>_<x>
// give and the cell does not have yet: the busiest host's for CPU figures,
// else the sum over the hosts (nil when one host has none).
func aggregateHosts(labels []string, m map[string]*float64) {
	prefix := labels[0] + "_"
	var suffixes []string
	for k := range m {
		if x, ok := strings.CutPrefix(k, prefix); ok {
			suffixes = append(suffixes, x)
		}
	}
	for _, x := range suffixes {
		if _, have := m["client_"+x]; have {
			continue
		}
		if strings.Contains(x, "cpu") {
			var best *float64
			for _, l := range labels {
				if v := m[l+"_"+x]; v != nil && (best == nil || *v > *best) {
					best = v
				}
			}
			m["client_"+x] = best
			continue
		}
		m["client_"+x] = sumHosts(labels, func(l string) *float64 { return m[l+"_"+x] })
		if v := m["client_"+x]; v != nil {
			m["client_"+x] = summary.F(round(*v, 1))
		}
	}
}

// established counts a host's connections on the server port with every
// connection held: the lines of `ss` when it was taken (idle holds), else
// the growth of /proc/net/sockstat's "TCP inuse" since before the clients
// started (ss walks the socket hash and stalls a running schedule). With
// LAB=local both ends share one namespace with everything else on the
// host: sockstat cannot tell them apart, so there is no count.
func established(path func(host, when, ext string) string, host string, local bool) (*float64, string) {
	if v, err := countLines(path(host, "held", "established")); err == nil {
		return summary.F(v), "ss -Htn state established on the server port, with every connection held"
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

// measureClients combines the connclient processes of an idle or lowrate
// cell: counts and rates add up; the setup time is the slowest process's;
// latency percentiles and maxima come from the processes' histograms merged
// bucket by bucket (exactly those of all the samples). Results written
// before connclient dumped its histograms give, with several processes, the
// largest of their percentiles (an upper bound, said in details
// "percentile_basis"). It returns the clients it read.
func measureClients(r *rundir.Run, rc rundir.Cell, c *summary.Cell, note func(string, ...any)) []*Client {
	m := c.Metrics
	clients, err := readClients(r.Dir, rc.Name)
	if err != nil {
		note("%v", err)
	}
	if len(clients) == 0 {
		if rc.Status == "ok" {
			fail(c, "no connclient result in raw/"+rc.Name+".client-*.json")
		}
		return nil
	}
	basis := BasisOneProcess
	if len(clients) > 1 {
		basis = BasisMerged
	}
	// merge replaces the largest-of-processes figures by the merged ones.
	merge := func(name, prefix string, suffixes ...string) {
		ok, err := mergedPercentiles(clients, name, prefix, m, suffixes...)
		if err != nil {
			note("%v", err)
		}
		if !ok && len(clients) > 1 {
			basis = BasisLargest
		}
	}
	defer func() { c.Details["percentile_basis"] = basis }()
	sum := func(get func(*Client) *float64) *float64 {
		t := 0.0
		for _, cl := range clients {
			v := get(cl)
			if v == nil {
				return nil
			}
			t += *v
		}
		return summary.F(t)
	}
	most := func(get func(*Client) *float64) *float64 {
		var best *float64
		for _, cl := range clients {
			if v := get(cl); v != nil && (best == nil || *v > *best) {
				best = v
			}
		}
		return best
	}
	count := func(f func(*Client) int64) *float64 {
		t := int64(0)
		for _, cl := range clients {
			t += f(cl)
		}
		return summary.F(float64(t))
	}
	m["connections_established"] = count(func(cl *Client) int64 { return cl.ConnectionsEstablished })
	m["connections_failed"] = count(func(cl *Client) int64 { return cl.ConnectionsFailed })
	m["connections_alive_end"] = sum(func(cl *Client) *float64 { return cl.ConnectionsAliveEnd })
	m["setup_s"] = rounded(most(func(cl *Client) *float64 { return cl.SetupS }), 3)
	m["connect_rate_achieved_per_s"] = rounded(sum(func(cl *Client) *float64 { return cl.ConnectRateAchieved }), 1)
	m["connect_rate_target_per_s"] = sum(func(cl *Client) *float64 { return cl.ConnectRateTarget })
	m["connect_latency_p50_ms"] = most(func(cl *Client) *float64 { return cl.ConnectLatencyP50Ms })
	m["connect_latency_p99_ms"] = most(func(cl *Client) *float64 { return cl.ConnectLatencyP99Ms })
	m["connect_latency_max_ms"] = most(func(cl *Client) *float64 { return cl.ConnectLatencyMaxMs })
	merge("connect", "connect_latency_", "p50_ms", "p99_ms", "max_ms")
	errs := map[string]float64{}
	total := 0.0
	var perProc []map[string]any
	// The host of each process (the plan's sources, in order), when the
	// plan names more than one.
	var procHost []string
	if plan, ok := c.Details["plan"].(map[string]string); ok && num(plan["client_hosts"]) > 1 {
		procHost = strings.Split(plan["client_source_hosts"], ",")
	}
	type hostSum struct {
		procs       int
		established int64
		rssMB       float64
		rssKnown    bool
	}
	byHost := map[string]*hostSum{}
	var hostOrder []string
	partial := 0
	for i, cl := range clients {
		for k, v := range cl.Errors {
			errs[k] += float64(v)
			total += float64(v)
		}
		if cl.Status != "complete" {
			partial++
		}
		src := ""
		if cl.Source != nil {
			src = *cl.Source
		}
		p := map[string]any{"process": i + 1, "source": src, "status": cl.Status,
			"connections_target": cl.ConnectionsTarget, "connections_established": cl.ConnectionsEstablished,
			"setup_s": cl.SetupS, "client_rss_mb": cl.ClientRSSMB, "errors": cl.Errors}
		if i < len(procHost) {
			h := procHost[i]
			p["host"] = h
			if byHost[h] == nil {
				byHost[h] = &hostSum{rssKnown: true}
				hostOrder = append(hostOrder, h)
			}
			b := byHost[h]
			b.procs++
			b.established += cl.ConnectionsEstablished
			if cl.ClientRSSMB == nil {
				b.rssKnown = false
			} else {
				b.rssMB += *cl.ClientRSSMB
			}
		}
		if rc.Params["scenario"] == "lowrate" {
			p["rps_target"], p["rps_achieved"] = cl.RPSTarget, cl.RPSAchieved
			p["latency_p99_ms"], p["service_latency_p99_ms"] = cl.LatencyP99Ms, cl.ServiceLatencyP99Ms
		} else {
			p["connections_alive_end"], p["first_drop_s"], p["drops"] = cl.ConnectionsAliveEnd, cl.FirstDropS, cl.Drops
		}
		perProc = append(perProc, p)
	}
	if partial > 0 {
		note("%d of %d connclient processes report a partial result (interrupted)", partial, len(clients))
	}
	m["errors_total"] = summary.F(total)
	c.Details["errors"] = errs
	c.Details["processes"] = perProc
	if len(hostOrder) > 0 {
		// Each client host's share: its processes, connections and their
		// memory (connclient's own VmRSS), per connection.
		var per []map[string]any
		for _, h := range hostOrder {
			b := byHost[h]
			e := map[string]any{"host": h, "processes": b.procs, "connections_established": b.established,
				"client_vmrss_mb": nil, "client_rss_per_conn_kb": nil}
			if b.rssKnown {
				e["client_vmrss_mb"] = round(b.rssMB, 1)
				if b.established > 0 {
					e["client_rss_per_conn_kb"] = round(b.rssMB*1024/float64(b.established), 1)
				}
			}
			per = append(per, e)
		}
		c.Details["client_hosts"] = per
	}
	if rc.Params["scenario"] == "idle" {
		m["request_latency_p99_ms"] = most(func(cl *Client) *float64 { return cl.RequestP99Ms })
		drops := map[string]float64{}
		for _, cl := range clients {
			for k, v := range cl.Drops {
				drops[k] += float64(v)
			}
		}
		c.Details["drops"] = drops
		merge("request", "request_latency_", "p99_ms")
		return clients
	}
	m["requests_completed"] = sum(func(cl *Client) *float64 { return cl.RequestsCompleted })
	m["requests_failed"] = sum(func(cl *Client) *float64 { return cl.RequestsFailed })
	m["rps_achieved"] = rounded(sum(func(cl *Client) *float64 { return cl.RPSAchieved }), 1)
	if t, a := m["rps_target"], m["rps_achieved"]; t != nil && a != nil && *t > 0 {
		m["rps_achieved_ratio"] = summary.F(round(*a / *t, 4))
	}
	for k, get := range map[string]func(*Client) *float64{
		"latency_p50_ms":           func(cl *Client) *float64 { return cl.LatencyP50Ms },
		"latency_p90_ms":           func(cl *Client) *float64 { return cl.LatencyP90Ms },
		"latency_p99_ms":           func(cl *Client) *float64 { return cl.LatencyP99Ms },
		"latency_p99_9_ms":         func(cl *Client) *float64 { return cl.LatencyP999Ms },
		"latency_max_ms":           func(cl *Client) *float64 { return cl.LatencyMaxMs },
		"service_latency_p50_ms":   func(cl *Client) *float64 { return cl.ServiceLatencyP50Ms },
		"service_latency_p90_ms":   func(cl *Client) *float64 { return cl.ServiceLatencyP90Ms },
		"service_latency_p99_ms":   func(cl *Client) *float64 { return cl.ServiceLatencyP99Ms },
		"service_latency_p99_9_ms": func(cl *Client) *float64 { return cl.ServiceLatencyP999Ms },
		"service_latency_max_ms":   func(cl *Client) *float64 { return cl.ServiceLatencyMaxMs },
		"sender_lag_p99_ms":        func(cl *Client) *float64 { return cl.SenderLagP99Ms },
	} {
		m[k] = most(get)
	}
	merge("latency", "latency_", "p50_ms", "p90_ms", "p99_ms", "p99_9_ms", "max_ms")
	merge("service", "service_latency_", "p50_ms", "p90_ms", "p99_ms", "p99_9_ms", "max_ms")
	merge("sender_lag", "sender_lag_", "p99_ms")
	return clients
}

// measureWrk reads the active cell's wrk output (the report.lua hook's JSON,
// cross-checked with wrk's text). wrk reports no connection count: the
// connections established are those `ss` saw on the client half way
// through the run.
func measureWrk(r *rundir.Run, rc rundir.Cell, c *summary.Cell, note func(string, ...any)) {
	m := c.Metrics
	l, err := httpphase.ReadWrk(filepath.Join(r.Dir, "raw", rc.Name+".wrk.txt"))
	if err != nil {
		if rc.Status == "ok" {
			fail(c, err.Error())
		}
		return
	}
	if l.CrossCheck != "" {
		note("wrk's text and the hook's JSON disagree: %s", l.CrossCheck)
	}
	m["connections_established"] = m["client_established"]
	held := m["connections_established"]
	if held == nil && l.Errors["connect"] == 0 {
		// No count (LAB=local), but wrk opened every connection it was
		// told to without a connect error.
		held = m["connections_target"]
	}
	m["requests_completed"] = summary.F(l.OK)
	m["requests_failed"] = summary.F(l.ErrorsTotal)
	m["rps_achieved"] = summary.F(round(l.Responses/l.DurationS, 1))
	for _, k := range []string{"p50", "p90", "p99", "p99_9", "max"} {
		m["latency_"+k+"_ms"] = rounded(l.Latency[k], 3)
	}
	m["errors_total"] = summary.F(l.ErrorsTotal)
	c.Details["errors"] = l.Errors
	c.Details["latency_mean_ms"] = rounded(l.Latency["mean"], 3)
	if n, rps := held, m["rps_achieved"]; n != nil && rps != nil && *rps > 0 {
		// A closed loop of n connections served at rps requests/s: each
		// request waits n/rps on average (Little's law).
		m["littles_law_latency_ms"] = summary.F(round(*n / *rps * 1000, 1))
	}
}

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
		return n + " active on " + c.Params["path"]
	}
	return strings.TrimSpace(n + " " + kind(c))
}
