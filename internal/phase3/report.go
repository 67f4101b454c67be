package phase3

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"csbench/internal/c10kplan"
	"csbench/internal/chart"
	"csbench/internal/decimal"
	"csbench/internal/kv"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// Report writes Report_03-c10k.md and its two charts. Its sentences about
// how each scenario was run read the cells' plans again from the run
// directory (readPlans), as Summarize did.
func (Phase) Report(r *rundir.Run, s *summary.Summary) error {
	plans := readPlans(r)
	figs := allFigures(s)
	var d report.Doc
	report.Header(&d, s, "Phase 3 — C10K and beyond: idle, low-rate and active connections")

	d.H(2, "What the server held")
	d.P("%s", headline(s, figs))

	d.H(2, "Scenarios")
	var rows [][]string
	for i := range s.Cells {
		c, f := &s.Cells[i], figs[i]
		srv, cli := f.host("server"), f.host("client")
		rows = append(rows, trust.MarkRow([]string{
			label(c), "`" + c.Name + "`",
			decimal.Format(f.ConnectionsEstablished, 0) + " / " + decimal.Format(f.ConnectionsTarget, 0),
			rpsCell(c, f), decimal.Format(f.LatencyP50Ms, 2) + " / " + decimal.Format(f.LatencyP99Ms, 2),
			decimal.Format(f.ServerRSSHeldMB, 1), decimal.Format(f.ServerRSSPerConnKB, 1),
			decimal.Format(srv.Procs.CPUPct, 1), decimal.Format(srv.Counters.TimeWait, 0) + " / " + decimal.Format(cli.Counters.TimeWait, 0),
			decimal.Format(srv.Counters.ListenOverflows, 0), c.Status,
		}, c, 2))
	}
	d.Table([]string{"scenario", "cell", "connections established / target", "RPS", "p50 / p99 ms", "server RSS MB",
		"RSS per connection KiB", "server CPU %", "TIME_WAIT server / client", "listen overflows", "status"}, rows)
	d.P("%s", tableNotes(s))
	d.P("%s", SeedFigures)
	trust.Section(&d, s.Cells)

	d.H(2, "The wall each scenario met")
	var vrows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		if c.Verdict != nil {
			vrows = append(vrows, trust.MarkRow([]string{label(c), "**" + c.Verdict.Bound + "**", c.Verdict.Evidence}, c, 1))
		}
	}
	d.Table([]string{"scenario", "wall", "evidence"}, vrows)
	d.P("Walls, in the order they are checked: connects that failed for want of a local port (EADDRNOTAVAIL: **%s**) or of a descriptor (EMFILE: **%s**); connections missing with the listen queue overflowing (**%s**); a low-rate schedule that fell more than %.0f%% short of its rate, or whose p99 from the due time exceeds %d× the service time while the sender lagged (the client fell behind); a closed loop, where every request queues behind the others (**%s**). A scenario that met none says which limit was nearest. A scenario split across processes names the limit that split it.",
		WallPorts, WallFD, WallBacklog, RateTolerance*100, QueueingFactor, WallQueueing)
	if hasRamp(s) {
		d.P("%s", rampWallsText())
	}

	d.H(2, "How each scenario was run")
	var prows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		plan := plans[c.Name].Plan
		prows = append(prows, []string{label(c), c.Params["server_procs"], c.Params["client_procs"], "`" + sourcesText(c, plan) + "`",
			fdLimits(plan), portRange(plan), twAtStart(plan), decimal.Format(figs[i].TWWaitS, 0), planNote(plan)})
	}
	d.Table([]string{"scenario", "server processes", "client processes", "client sources", "hard fd limit", "port range",
		"TIME_WAIT toward the server at the start", "waited for TIME_WAIT s", "what the runner did"}, prows)
	d.P("Before each scenario the runner (`lib/c10k.sh`) read both hosts' limits and the client's sockets toward the server (`raw/<cell>.%s`, `%s`): one server process holds at most %d%% of its hard fd limit less %d connections (SO_REUSEPORT spreads connections by a hash, not evenly), one connclient process its hard limit less %d, one per source address; a source address with TW_THRESHOLD or more sockets in TIME_WAIT toward the server is busy (each connect() searches past them), so the netns lab adds a fresh address instead and removes it at the end. It changes no sysctl.",
		planFile(r.Dir), portsFile(r), c10kplan.ReusePortSlackPct, c10kplan.FDMargin, c10kplan.FDMargin)

	if hrows := hostRows(s); len(hrows) > 0 {
		d.P("The client processes ran on several client hosts (`CLIENTS`): the plan split each scenario evenly across them, each host's share planned on its own limits (`raw/limits.<host>.env`) and sockets (`raw/<cell>.<host>.ports.txt`), each process started on its host (the low-rate ones at one start time, written on every host) and its result copied back (`raw/<cell>.client-N.json`, N in the plan's order). Client counts, memory and traffic below are summed over the hosts, client CPU is the busiest host's; each host's share:")
		d.Table([]string{"scenario", "client host", "processes", "connections", "client RSS MB", "client RSS per connection KB"}, hrows)
	}

	d.H(2, "Connections")
	var crows [][]string
	for i := range s.Cells {
		c, f := &s.Cells[i], figs[i]
		cli := f.host("client")
		crows = append(crows, []string{label(c), decimal.Format(f.SetupS, 2), decimal.Format(f.ConnectRateAchievedPerS, 0),
			decimal.Format(f.ConnectLatencyP50Ms, 2) + " / " + decimal.Format(f.ConnectLatencyP99Ms, 2),
			decimal.Format(f.ServerEstablished, 0) + " / " + decimal.Format(f.ClientEstablished, 0),
			decimal.Format(f.ConnectionsAliveEnd, 0), decimal.Format(f.ConnectionsFailed, 0), errorsText(c, f),
			decimal.Format(cli.Procs.CPUPct, 1), decimal.Format(cli.Procs.RSSMB, 1)})
	}
	d.Table([]string{"scenario", "setup s", "connects/s", "connect p50 / p99 ms", "ESTABLISHED server / client (held)",
		"alive at the end", "connections failed", "errors by cause", "client CPU %", "client RSS MB"}, crows)
	d.P("Setup is the first connect to the last connection opened (with its first response), the slowest client process. ESTABLISHED is counted once every client held its connections (idle: `ss` of the server port on each host), half way through the schedule (low-rate) or through wrk's run (active): there the growth of `/proc/net/sockstat`'s TCP inuse since before the clients started, because `ss` walks the kernel's socket table, shared by every namespace, and stalled a running 2000 req/s schedule by 20 ms. Client CPU and RSS are the client processes' (pidstat, %% of one core).")
	if rows := rampRows(s, figs); len(rows) > 0 {
		d.Table(rampHead, rows)
		d.P("%s", rampTableText(s))
	}
	if rows := holdRows(s, figs); len(rows) > 0 {
		d.Table(holdHead, rows)
		d.P("%s", holdTableText)
	}

	d.H(2, "Latency")
	var lrows [][]string
	for i := range s.Cells {
		c, f := &s.Cells[i], figs[i]
		if kind(c) == "idle" {
			continue
		}
		lrows = append(lrows, []string{label(c), decimal.Format(f.RPSAchieved, 1), decimal.Pct(f.RPSAchievedRatio),
			decimal.Format(f.LatencyP50Ms, 2), decimal.Format(f.LatencyP90Ms, 2), decimal.Format(f.LatencyP99Ms, 2), decimal.Format(f.LatencyP999Ms, 2), decimal.Format(f.LatencyMaxMs, 2),
			decimal.Format(f.ServiceLatencyP50Ms, 2) + " / " + decimal.Format(f.ServiceLatencyP99Ms, 2), decimal.Format(f.SenderLagP99Ms, 2),
			decimal.Format(f.LittlesLawLatencyMs, 1)})
	}
	if len(lrows) > 0 {
		d.Table([]string{"scenario", "RPS", "of target", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms",
			"service p50 / p99 ms", "sender lag p99 ms", "Little's law ms"}, lrows)
		active := "Active latencies are wrk's (closed loop: a slow response delays the next request on its connection, which wrk does not count); Little's law (connections / rate) gives the mean wait a closed loop implies. "
		if s.HTTP != nil {
			active = "Active latencies are wrk's, over HTTP/2 h2load's from its log of every request (closed loop: a slow response delays the next request on its connection or stream, which neither counts); Little's law (connections × streams per connection / rate) gives the mean wait a closed loop implies. "
		}
		if warmedUp(s) {
			active += "Over TLS the active scenario is h2load's (HTTP/1.1), measured after a warm-up that opened its connections: the warm-up's length comes from the server's handshakes per second, probed just before the cell, so the measured seconds carry requests, not handshakes. "
		}
		d.P("%s", strings.TrimSpace("Low-rate latencies are connclient's, measured from each request's due time on the open-model schedule, so a request that waited for its connection counts its wait (coordinated omission corrected); the service time is from the actual send. "+active+basisText(s)))
	} else {
		d.P("No scenario carried requests.")
	}

	d.H(2, "Memory per connection")
	var mrows [][]string
	for i := range s.Cells {
		c, f := &s.Cells[i], figs[i]
		if c.Status == "refused" {
			continue
		}
		mrows = append(mrows, []string{label(c), decimal.Format(heldConns(f), 0),
			decimal.Format(f.ServerRSSBaselineMB, 1) + " → " + decimal.Format(f.ServerRSSHeldMB, 1), decimal.Format(f.ServerRSSPerConnKB, 1),
			decimal.Format(f.ClientVmRSSMB, 1), decimal.Format(f.ClientRSSPerConnKB, 1),
			decimal.Format(f.TCPSlabObjsBefore, 0) + " → " + decimal.Format(f.TCPSlabObjsHeld, 0) + " × " + decimal.Format(f.TCPSlabObjBytes, 0) + " B",
			decimal.Format(f.TCPMemPagesBefore, 0) + " → " + decimal.Format(f.TCPMemPagesHeld, 0),
			kernelCell(f)})
	}
	if len(mrows) > 0 {
		d.Table([]string{"scenario", "connections held", "server RSS MB before → held", "server KiB / conn",
			"client RSS MB", "client KiB / conn", "TCP slab objects before → held × size", "sockstat TCP mem pages before → held",
			"kernel KiB / conn (slab + buffers)"}, mrows)
		d.P("%s", memoryText(s))
	}

	d.H(2, "Network health (nstat over each scenario)")
	var hrows [][]string
	for i := range s.Cells {
		c, f := &s.Cells[i], figs[i]
		srv, cli := f.host("server").Counters, f.host("client").Counters
		hrows = append(hrows, []string{label(c), decimal.Format(srv.ListenOverflows, 0), decimal.Format(srv.ListenDrops, 0),
			decimal.Format(srv.RetransSegs, 0) + " / " + decimal.Format(cli.RetransSegs, 0),
			decimal.Format(srv.EstabResets, 0) + " / " + decimal.Format(cli.EstabResets, 0),
			decimal.Format(srv.OutRsts, 0) + " / " + decimal.Format(cli.OutRsts, 0),
			decimal.Format(cli.AttemptFails, 0),
			decimal.Format(f.ClientTimeWaitBefore, 0) + " → " + decimal.Format(cli.TimeWait, 0), decimal.Format(srv.TimeWait, 0)})
	}
	d.Table([]string{"scenario", "ListenOverflows", "ListenDrops", "retransmits server / client", "EstabResets server / client",
		"OutRsts server / client", "client AttemptFails", "client TIME_WAIT before → after", "server TIME_WAIT after"}, hrows)
	d.P("TIME_WAIT counts are `/proc/net/sockstat` of each host's network namespace; the side that closes first keeps it for 60 s (the client here: connclient closes its connections at the end).")

	d.H(2, "Charts")
	svg, skipped := rssChart(s, figs).Render(r.Dir, s.GeneratedBy)
	report.Chart(&d, "Memory against connections held", svg, skipped)
	d.P("%s", rssChartText(s, figs))
	svg, skipped = p99Chart(s, figs).Render(r.Dir, s.GeneratedBy)
	report.Chart(&d, "p99 latency against offered rate", svg, skipped)
	d.P("Low-rate scenarios at their offered rate (open model): p99 from the due time and of the service time. The active scenario at the rate its closed loop reached: there the rate is an outcome, and the p99 is the queue.")

	report.Notes(&d, r.Dir)
	report.Environment(&d, s)
	report.Files(&d)
	d.Table([]string{"Phase 3 path", "what"}, append([][]string{
		planFileRow(r.Dir),
		{"`" + portsFile(r) + "`", "the client's sockets toward the server (`ss`) the plan counted ports from"},
		{"`raw/<cell>.client-N.json`, `.log`", "each connclient process's JSON result and progress"},
		wrkFileRow(r),
		{"`raw/<cell>.tw-wait.tsv`, `raw/tw-cooldown.tsv`", "TIME_WAIT toward the server, once a second, while the runner waited"},
		{"`raw/limits.{server,client}.env`", "fd limits, sysctls, MemAvailable, fs.file-nr read before the run"},
		{"`monitors/server/c10k/<cell>.{before,held}.status`", "the server processes' `/proc/PID/status` (VmRSS) before the clients started and with every connection held"},
		{"`monitors/{server,client}/c10k/<cell>.held.established.gz`", "idle: `ss` of the ESTABLISHED sockets on the server port (gzip; in a committed reference its count, `.held.established.lines.json`)"},
		{"`monitors/{server,client}/c10k/<cell>.{before,held}.meminfo`", "`/proc/meminfo`: MemAvailable's fall per connection, the cost a larger step is planned from"},
		{"`monitors/{server,client}/c10k/<cell>.{before,held}.sockstat`", "`/proc/net/sockstat` before the clients started and with every connection held"},
		{"`monitors/server/limits-csb-server-<cell>.txt`", "the server processes' `/proc/PID/limits`"},
	}, agreedFileRows(r)...))
	return report.Write(r.Dir, ReportName, &d)
}

// SeedFigures are what the seed's two mini PCs measured (1 GbE, separate
// hosts), for comparison; the netns lab shares one machine's CPUs between
// both ends and with anything else running on it.
const SeedFigures = "For comparison, the seed's two mini PCs (separate hosts, 1 GbE): 10k idle ≈ 209 MB of server RSS (≈ 20 KB per connection) with the CPU near idle; 10k at ≈ 1k req/s p99 ≈ 1 ms, server CPU 13-15%; at ≈ 2k req/s p99 ≈ 1.5 ms, CPU ≈ 26%; 10k active on /payload/1k ≈ 100k req/s with p99 ≈ 0.77-0.79 s; 20k idle held; 20k low-rate on /healthz (≈ 2k req/s) worked once TIME_WAIT had cooled down."

func rpsCell(c *summary.Cell, f *Figures) string {
	switch kind(c) {
	case "idle":
		return "— (idle)"
	case "lowrate":
		return decimal.Format(f.RPSAchieved, 1) + " of " + decimal.Format(f.RPSTarget, 0)
	}
	return decimal.Format(f.RPSAchieved, 0)
}

func tableNotes(s *summary.Summary) string {
	return "RSS is the server processes' VmRSS summed (`/proc/PID/status`) with every connection held; RSS per connection is (RSS held − RSS before the clients started) / the server's ESTABLISHED sockets at the same moment. " +
		"Server CPU is the server processes' mean CPU over the scenario (pidstat, % of one core; " + cpuScope(s) + "). " +
		"p50 / p99 of a low-rate scenario are measured from each request's due time (coordinated omission corrected); of the active scenario they are wrk's. " +
		"TIME_WAIT is the number of sockets in that state on each host right after the scenario; listen overflows is the server's TcpExtListenOverflows over it."
}

func cpuScope(s *summary.Summary) string {
	if s.Lab == "netns" || s.Lab == "local" {
		return "the host CPU columns of summary.json are the whole machine's, which both ends share here"
	}
	return "the server host's CPU is server_cpu_pct in summary.json"
}

func errorsText(c *summary.Cell, f *Figures) string {
	errs, _ := c.Details["errors"].(map[string]float64)
	var parts []string
	for _, k := range kv.SortedKeys(errs) {
		if errs[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, errs[k]))
		}
	}
	if len(parts) == 0 {
		if f.ErrorsTotal == nil {
			return "—"
		}
		return "none"
	}
	return strings.Join(parts, ", ")
}

func twAtStart(plan *c10kplan.Plan) string {
	ips, tw := sourceTimeWait(plan)
	if len(ips) == 0 {
		if plan == nil {
			return "—"
		}
		return "none"
	}
	var parts []string
	for _, ip := range ips {
		parts = append(parts, fmt.Sprintf("%s: %d", ip, tw[ip]))
	}
	return strings.Join(parts, ", ")
}

func planNote(plan *c10kplan.Plan) string {
	if plan == nil {
		return "—"
	}
	var parts []string
	if n := plan.Note(); n != "" {
		parts = append(parts, n)
	}
	if plan.Scenario.TWWaited {
		parts = append(parts, "waited for TIME_WAIT to drain")
	}
	if r := plan.Refusal(); r != "" {
		parts = append(parts, "refused: "+r)
	}
	if len(parts) == 0 {
		return "nothing to adjust"
	}
	return strings.Join(parts, "; ")
}

// rssChart: memory against connections held, one line per kind (server
// user space: RSS growth; client user space: RSS; kernel: TCP slab and
// socket buffers growth), from 0 through each step. The idle scenarios are
// the steps (their connections only held); a run without any uses every
// scenario that held connections.
func rssChart(s *summary.Summary, figs []*Figures) *chart.Chart {
	ch := &chart.Chart{Name: "server-rss", Title: "Memory against connections held", XLabel: "connections held (server ESTABLISHED)",
		YLabel: "memory (MB)", HLine: math.NaN()}
	cells := chartCells(s)
	kinds := []struct {
		title string
		mb    func(f *Figures, n float64) float64
	}{
		{"server user space (RSS growth)", func(f *Figures, _ float64) float64 {
			return summary.Val(f.ServerRSSHeldMB) - summary.Val(f.ServerRSSBaselineMB)
		}},
		{"client user space (RSS)", func(f *Figures, _ float64) float64 { return summary.Val(f.ClientVmRSSMB) }},
		{"kernel (TCP slab + socket buffers)", func(f *Figures, n float64) float64 {
			return round(summary.Val(f.KernelKBPerConn)*n/1024, 1)
		}},
	}
	for _, k := range kinds {
		ser := chart.Series{Title: k.title, Points: []chart.Point{{X: 0, Y: 0}}}
		for _, i := range cells {
			n := summary.Val(heldConns(figs[i]))
			if y := k.mb(figs[i], n); !math.IsNaN(n) && !math.IsNaN(y) {
				ser.Points = append(ser.Points, chart.Point{X: n, Y: round(y, 1)})
			}
		}
		sort.SliceStable(ser.Points, func(i, j int) bool { return ser.Points[i].X < ser.Points[j].X })
		if len(ser.Points) > 1 {
			ch.Series = append(ch.Series, ser)
		}
	}
	return ch
}

// chartCells are the memory chart's steps, by index in s.Cells: the idle
// scenarios, or every scenario when the run has no idle one.
func chartCells(s *summary.Summary) []int {
	var idle, all []int
	for i := range s.Cells {
		c := &s.Cells[i]
		if c.Status == "refused" || kind(c) == "active" {
			continue
		}
		all = append(all, i)
		if kind(c) == "idle" {
			idle = append(idle, i)
		}
	}
	if len(idle) > 0 {
		return idle
	}
	return all
}

// heldConns is the connections a cell held: the server's ESTABLISHED, else
// the clients' count.
func heldConns(f *Figures) *float64 {
	if n := f.ServerEstablished; n != nil && *n > 0 {
		return n
	}
	return f.ConnectionsEstablished
}

func rssChartText(s *summary.Summary, figs []*Figures) string {
	what := "the idle scenarios"
	if cells := chartCells(s); len(cells) > 0 && kind(&s.Cells[cells[0]]) != "idle" {
		what = "the scenarios"
	}
	return "One line per kind of memory, through 0 and " + what + " (connections held, on the server): the server processes' RSS growth since before the clients started, the client processes' RSS, and the kernel's TCP socket slab and socket buffer growth (see Memory per connection). A line's slope is that kind's memory per connection."
}

// kernelCell: slab + buffers = kernel memory per connection, or what of
// it was measured.
func kernelCell(f *Figures) string {
	if f.KernelKBPerConn != nil {
		return decimal.Format(f.KernelTCPSlabKBPerConn, 2) + " + " + decimal.Format(f.KernelTCPMemKBPerConn, 2) + " = " + decimal.Format(f.KernelKBPerConn, 2)
	}
	if f.KernelTCPMemKBPerConn != nil {
		return "slab unreadable + " + decimal.Format(f.KernelTCPMemKBPerConn, 2)
	}
	return "—"
}

// memoryText says how the memory table was measured, and what the kernel
// figure covers on this lab.
func memoryText(s *summary.Summary) string {
	t := "Memory per connection, three ways, each divided by the connections held (the server's ESTABLISHED with every connection held): " +
		"server user space is the growth of the server processes' VmRSS (`/proc/PID/status`) since before the clients started; " +
		"client user space is the connclient processes' own VmRSS (idle: at the end of the hold; low-rate: half way through the schedule), runtime included; " +
		"kernel is the growth of the `TCP` cache of `/proc/slabinfo` (active objects × object size; root only) plus that of `/proc/net/sockstat`'s TCP `mem` (pages of socket buffers; one counter for the whole kernel, the same in every namespace), on the server host, between the same two moments."
	t += " Both kernel counters are the whole machine's: sockets that other processes on it open or close between the two moments count too (a small step on a busy machine shows it; `mem` can even shrink)."
	if s.Lab == "netns" || s.Lab == "local" {
		t += " Both ends run on this one kernel here: the slab holds the client's sockets too, so the kernel figure is per connection with both its ends (about twice one end's)."
	}
	return t
}

// basisText says how the latency percentiles of the cells were obtained.
func basisText(s *summary.Summary) string {
	n := map[string]int{}
	for i := range s.Cells {
		if b, ok := s.Cells[i].Details["percentile_basis"].(string); ok {
			n[b]++
		}
	}
	var parts []string
	if n[BasisMerged] > 0 {
		parts = append(parts, "Where a scenario ran several connclient processes, its percentiles come from their histograms merged bucket by bucket (`raw/<cell>.client-N.json`, `*_histogram`): exactly those of all the requests, not a combination of the processes' percentiles.")
	}
	if n[BasisLargest] > 0 {
		parts = append(parts, "**Not exact:** the results of a scenario with several processes carry no histograms (written before connclient dumped them): the percentiles shown are the largest of the processes', an upper bound, not the run's.")
	}
	return strings.Join(parts, " ")
}

// p99Chart: p99 against the offered rate (low-rate: the target; active: the
// rate wrk's closed loop reached), log-log.
func p99Chart(s *summary.Summary, figs []*Figures) *chart.Chart {
	ch := &chart.Chart{Name: "p99-rate", Title: "p99 latency against offered rate", XLabel: "offered rate (req/s; active: achieved)",
		YLabel: "p99 latency (ms)", LogX: true, LogY: true, HLine: math.NaN()}
	co := chart.Series{Title: "low-rate p99 from the due time"}
	svc := chart.Series{Title: "low-rate p99 service time"}
	act := chart.Series{Title: "active p99 (wrk, closed loop)"}
	for i := range s.Cells {
		f := figs[i]
		switch kind(&s.Cells[i]) {
		case "lowrate":
			x := summary.Val(f.RPSTarget)
			co.Points = append(co.Points, chart.Point{X: x, Y: summary.Val(f.LatencyP99Ms)})
			svc.Points = append(svc.Points, chart.Point{X: x, Y: summary.Val(f.ServiceLatencyP99Ms)})
		case "active":
			act.Points = append(act.Points, chart.Point{X: summary.Val(f.RPSAchieved), Y: summary.Val(f.LatencyP99Ms)})
		}
	}
	for _, ser := range []chart.Series{co, svc, act} {
		sort.Slice(ser.Points, func(i, j int) bool { return ser.Points[i].X < ser.Points[j].X })
		if len(ser.Points) > 0 {
			ch.Series = append(ch.Series, ser)
		}
	}
	return ch
}

// headline is the phase's finding in one paragraph, from the cells.
func headline(s *summary.Summary, figs []*Figures) string {
	if len(s.Cells) == 0 {
		return "No scenario ran: see the status above and `logs/console.log`."
	}
	var parts []string
	for i := range s.Cells {
		c, f := &s.Cells[i], figs[i]
		srvCPU := f.host("server").Procs.CPUPct
		switch {
		case c.Status == "refused":
			parts = append(parts, fmt.Sprintf("%s was refused (%s)", label(c), wallOf(c)))
		case c.Status != "ok" && f.ConnectionsEstablished == nil:
			parts = append(parts, fmt.Sprintf("%s failed", label(c)))
		case kind(c) == "idle":
			parts = append(parts, fmt.Sprintf("%s: %s of %s connections held (opened at %s/s), %s KiB of server RSS each%s, server CPU %s%% of one core%s",
				label(c), decimal.Format(f.ConnectionsEstablished, 0), decimal.Format(f.ConnectionsTarget, 0),
				decimal.Format(f.ConnectRateAchievedPerS, 0), decimal.Format(f.ServerRSSPerConnKB, 1), otherMemory(f),
				decimal.Format(srvCPU, 1), procsText(f)))
		case kind(c) == "lowrate":
			parts = append(parts, fmt.Sprintf("%s: %s req/s delivered (%s), p99 %s ms (service %s ms), server CPU %s%%%s",
				label(c), decimal.Format(f.RPSAchieved, 1), decimal.Pct(f.RPSAchievedRatio), decimal.Format(f.LatencyP99Ms, 2),
				decimal.Format(f.ServiceLatencyP99Ms, 2), decimal.Format(srvCPU, 1), procsText(f)))
		case kind(c) == "active":
			parts = append(parts, fmt.Sprintf("%s: %s req/s with p99 %s ms — %s", label(c), decimal.Format(f.RPSAchieved, 0),
				decimal.Format(f.LatencyP99Ms, 1), wallOf(c)))
		}
	}
	return strings.Join(parts, ". ") + ". The wall each scenario met, with its evidence, is below."
}

// otherMemory: the client's and the kernel's memory per connection, when
// measured.
func otherMemory(f *Figures) string {
	t := ""
	if f.ClientRSSPerConnKB != nil {
		t += ", client " + decimal.Format(f.ClientRSSPerConnKB, 1) + " KiB"
	}
	if f.KernelKBPerConn != nil {
		t += ", kernel " + decimal.Format(f.KernelKBPerConn, 1) + " KiB"
	}
	return t
}

func procsText(f *Figures) string {
	sp, cp := summary.Val(f.ServerProcs), summary.Val(f.ClientProcs)
	if sp > 1 || cp > 1 {
		return fmt.Sprintf(" (split across %.0f server and %.0f client processes)", sp, cp)
	}
	return ""
}

func wallOf(c *summary.Cell) string {
	if c.Verdict == nil {
		return "no verdict"
	}
	return c.Verdict.Bound
}

// planFile is the name of the run's plan files: plan.json, or plan.env in
// runs made before the plan document.
func planFile(dir string) string {
	if m, _ := rundir.Files(filepath.Join(dir, "raw"), "", ".plan.env"); len(m) > 0 {
		return "plan.env"
	}
	return "plan.json"
}

func planFileRow(dir string) []string {
	if planFile(dir) == "plan.env" {
		return []string{"`raw/<cell>.plan.env`", "how the runner split the scenario, the limits it read and why"}
	}
	return []string{"`raw/<cell>.plan.json`", "the plan (`csb c10k-plan`): how the runner split the scenario, the limits it read, and why it refused (a code and a sentence)"}
}

// sourcesText is a cell's client sources; with several client hosts each
// prefixed by its host (the plan's sources, in order).
func sourcesText(c *summary.Cell, plan *c10kplan.Plan) string {
	if !multiHost(plan) || len(plan.Sources) == 0 {
		return c.Params["sources"]
	}
	var out []string
	for _, src := range plan.Sources {
		out = append(out, src.Host+":"+src.IP)
	}
	return strings.Join(out, ",")
}

// hostRows is one row per scenario and client host of a run with several
// (details client_hosts); none with one.
func hostRows(s *summary.Summary) [][]string {
	var rows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		var hosts []map[string]any
		switch v := c.Details["client_hosts"].(type) {
		case []map[string]any:
			hosts = v
		case []any: // read back from summary.json
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					hosts = append(hosts, m)
				}
			}
		}
		for _, h := range hosts {
			f := func(k string) string {
				if v, ok := h[k].(float64); ok {
					return strconv.FormatFloat(v, 'f', -1, 64)
				}
				return "–"
			}
			rows = append(rows, []string{label(c), fmt.Sprint(h["host"]), fmt.Sprint(h["processes"]), fmt.Sprint(h["connections_established"]),
				f("client_vmrss_mb"), f("client_rss_per_conn_kb")})
		}
	}
	return rows
}

// portsFile is the name of the client sockets the plans counted ports
// from: one per client host in runs of run.env schema 2.
func portsFile(r *rundir.Run) string {
	if r.Schema >= 2 {
		return "raw/<cell>.<host>.ports.txt"
	}
	return "raw/<cell>.ports.txt"
}

func wrkFileRow(r *rundir.Run) []string {
	if r.Schema >= 2 {
		return []string{"`raw/<host>/<cell>.txt`", "each client host's wrk output (`<host>`: client, or client1 … clientN) with the `CSB_WRK_JSON` hook line"}
	}
	return []string{"`raw/<cell>.wrk.txt`", "wrk's output with the `CSB_WRK_JSON` hook line"}
}

// agreedFileRows: the files of the instants every process waits for, in
// runs of run.env schema 2.
func agreedFileRows(r *rundir.Run) [][]string {
	if r.Schema < 2 {
		return nil
	}
	return [][]string{{"`raw/<cell>.hold`, `raw/<cell>.start`", "the one end of an idle hold and the one start of a low-rate schedule (Unix ms), written on every client host; the end is also `c10k.<cell>.hold_end_ms` in run.env"}}
}

// warmedUp: an active cell of the run was measured after a TLS warm-up.
func warmedUp(s *summary.Summary) bool {
	for _, c := range s.Cells {
		if c.Params["warmup_s"] != "" {
			return true
		}
	}
	return false
}
