package phase4

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"csbench/internal/chart"
	"csbench/internal/connresult"
	"csbench/internal/kv"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// SeedLessons are the seeds this phase measures.
const SeedLessons = "The seeds: `003_*`, a listen backlog of 128 (somaxconn) turning a burst of ab connections into \"Connection reset by peer\"; `004_*`, thousands of probers opening a connection every few seconds with TIME_WAIT piling up until SO_LINGER=0; the seed's own Phase 3, \"cannot assign requested address\" until TIME_WAIT cooled down: 28,232 ports / 60 s ≈ 470 new connections/s per source address and server port."

// cellsOf is the cells of a scenario (Kind), in run order.
func cellsOf(cells []Cell, kind string) []*Cell {
	var out []*Cell
	for i := range cells {
		if Kind(cells[i].Cell) == kind {
			out = append(out, &cells[i])
		}
	}
	return out
}

// Headline is the phase's findings in a few sentences (the report's and
// the cross-phase report's).
func Headline(s *summary.Summary) string { return headline(s, figured(s)) }

// headline is Headline of s's cells with their figures.
func headline(s *summary.Summary, cells []Cell) string {
	var parts []string
	byClose := map[string][]*Cell{}
	for _, c := range cellsOf(cells, "churn") {
		byClose[c.Params["close"]] = append(byClose[c.Params["close"]], c)
	}
	for _, v := range kv.SortedKeys(byClose) {
		best, wall := bestSustained(byClose[v])
		p := "churn, " + closeLabel(v) + ": "
		if best != nil {
			p += "sustained " + report.N(best.Fig.RateAchievedPerS, 0) + "/s"
		} else {
			p += "no rate sustained"
		}
		if wall != nil {
			p += fmt.Sprintf(", %s at %s/s", wall.Verdict.Bound, report.N(wall.Fig.RateTargetPerS, 0))
			if w := wall.Fig.PredictedSustainableRatePerS; w != nil && wall.Verdict.Code == BoundPorts {
				p += " (predicted wall " + report.N(w, 1) + "/s)"
			}
		}
		parts = append(parts, p)
	}
	for _, c := range cellsOf(cells, "backlog") {
		parts = append(parts, fmt.Sprintf("backlog %s, burst of %s: ListenOverflows %s, %s never up, p99 %s ms",
			report.N(c.Fig.Backlog, 0), report.N(c.Fig.ConnectionsTarget, 0),
			report.N(c.Fig.Counters["server"].ListenOverflows, 0), report.N(c.Fig.ConnectionsNeverUp, 0), report.N(c.Fig.LatencyP99Ms, 1)))
	}
	for _, acc := range acceptGroups(cells) {
		if len(acc) == 0 {
			continue
		}
		if h := acc[0].Params["handshake"]; h != "" {
			best, _ := bestSustained(acc)
			if best != nil {
				parts = append(parts, fmt.Sprintf("%s TLS handshakes (%s key): %s/s sustained (p99 %s ms, server CPU %s µs per handshake)",
					h, keyType(s, acc), report.N(best.Fig.RateAchievedPerS, 0), report.N(best.Fig.LatencyP99Ms, 2),
					report.N(best.Fig.ServerCPUUsPerHandshake, 1)))
			} else {
				parts = append(parts, fmt.Sprintf("%s TLS handshakes (%s key): no step sustained", h, keyType(s, acc)))
			}
			continue
		}
		best, _ := bestSustained(acc)
		if best != nil {
			parts = append(parts, fmt.Sprintf("accept rate %s/s sustained (p99 %s ms, server CPU %s µs per connection)",
				report.N(best.Fig.RateAchievedPerS, 0), report.N(best.Fig.LatencyP99Ms, 2), report.N(best.Fig.ServerCPUUsPerConn, 1)))
		} else {
			most := acc[0]
			for _, c := range acc {
				if intp(c.Fig.RateAchievedPerS) > intp(most.Fig.RateAchievedPerS) {
					most = c
				}
			}
			parts = append(parts, fmt.Sprintf("no accept step sustained (the most: %s/s of %s/s, p99 %s ms)",
				report.N(most.Fig.RateAchievedPerS, 0), report.N(most.Fig.RateTargetPerS, 0), report.N(most.Fig.LatencyP99Ms, 1)))
		}
	}
	if len(parts) == 0 {
		return "No cell ran."
	}
	return strings.Join(parts, "; ") + "."
}

// bestSustained returns the sustained cell of the highest target and the
// first cell (by target) that was not.
func bestSustained(cells []*Cell) (best, wall *Cell) {
	for _, c := range cells {
		t := intp(c.Fig.RateTargetPerS)
		if Sustained(c.Cell) {
			if best == nil || t > intp(best.Fig.RateTargetPerS) {
				best = c
			}
		} else if c.Verdict != nil && (wall == nil || t < intp(wall.Fig.RateTargetPerS)) {
			wall = c
		}
	}
	return best, wall
}

func closeLabel(v string) string {
	switch v {
	case "client":
		return "the client closes"
	case "server":
		return "the server closes"
	case "linger0":
		return "the client resets (SO_LINGER=0)"
	}
	return v
}

// Report writes Report_04-connections.md and its chart.
func (Phase) Report(r *rundir.Run, s *summary.Summary) error {
	var d report.Doc
	report.Header(&d, s, "Phase 4 — connection setup: new connections per second, the listen backlog, TIME_WAIT and SO_LINGER")
	all := figured(s)
	d.H(2, "Findings")
	d.P("%s", headline(s, all))
	d.P("%s", SeedLessons)

	d.H(2, "Churn: new connections per second, by who closes")
	var rows [][]string
	for _, c := range cellsOf(all, "churn") {
		f := &c.Fig
		rows = append(rows, trust.MarkRow([]string{closeLabel(c.Params["close"]), "`" + c.Name + "`",
			report.N(f.RateTargetPerS, 0), report.N(f.RateAchievedPerS, 1), report.N(f.PredictedCellRatePerS, 1),
			report.N(f.PredictedSustainableRatePerS, 1),
			report.N(f.ErrorsEAddrNotAvail, 0) + " / " + eaddrPred(&f.PredictionFigures),
			report.N(f.ConnectLatencyP50Ms, 2) + " / " + report.N(f.ConnectLatencyP99Ms, 2),
			report.N(f.LatencyP50Ms, 2) + " / " + report.N(f.LatencyP99Ms, 2) + " / " + report.N(f.LatencyMaxMs, 1),
			report.N(f.ClientTimeWaitPeak, 0) + " / " + report.N(f.ServerTimeWaitPeak, 0) +
				" (" + report.N(f.PredictedClientTimeWait, 0) + " / " + report.N(f.PredictedServerTimeWait, 0) + ")",
			report.N(f.PortsLeft, 0), errorsText(c.Cell), c.Status}, c.Cell, 2))
	}
	if len(rows) > 0 {
		d.Table([]string{"variant", "cell", "target /s", "achieved /s", "predicted /s", "wall /s (predicted)",
			"EADDRNOTAVAIL: seen / predicted", "connect p50 / p99 ms", "request p50 / p99 / max ms",
			"TIME_WAIT peak client / server (predicted)", "ports left", "failures by cause", "status"}, rows)
		d.P("Achieved is the connections completed (connect, one request, the close asked for) over the schedule (at least its duration). Predicted is `csb conn-predict` on the settings read before the cell (`raw/<cell>.facts.*.env`): a connection the client closes first holds its client port in TIME_WAIT for %d s (%d s when tcp_tw_reuse applies), so one source address toward one server port sustains ports / %d s; ports already in TIME_WAIT at the start are taken, and a cell runs out after free ports / rate seconds. The server-closed and reset variants leave the client no TIME_WAIT and have no port wall; the server-closed one leaves the server at most one TIME_WAIT socket per client port used (a new SYN on the 4-tuple of a TIME_WAIT socket takes it over), and a client whose ports are freed at once uses half its range (connect() takes ports of one parity first). Latencies are from each connection's due time on the open-model schedule (coordinated omission corrected). TIME_WAIT peaks are sar's, once a second, of each host's namespace; ports left is the port range less the client's TIME_WAIT right after the cell.", TimeWaitS, TWReuseS, TimeWaitS)
	} else {
		d.P("No churn cell in this run.")
	}

	d.H(2, "Backlog: a burst of simultaneous connects")
	rows = nil
	for _, c := range cellsOf(all, "backlog") {
		f := &c.Fig
		rows = append(rows, trust.MarkRow([]string{report.N(f.Backlog, 0), "`" + c.Name + "`", report.N(f.ConnectionsTarget, 0),
			report.N(f.Counters["server"].ListenOverflows, 0), report.N(f.Counters["server"].ListenDrops, 0),
			report.N(f.Counters["server"].SynRetrans, 0) + " / " + report.N(f.Counters["client"].SynRetrans, 0),
			report.N(f.LatencyUnder1s, 0) + " / " + report.N(f.LatencyFrom1s, 0) + " / " + report.N(f.LatencyFrom3s, 0) + " / " + report.N(f.LatencyFrom7s, 0),
			report.N(f.LatencyP50Ms, 1) + " / " + report.N(f.LatencyP99Ms, 1) + " / " + report.N(f.LatencyMaxMs, 1),
			report.N(f.ErrorsEConnReset, 0), report.N(f.ConnectionsNeverUp, 0), c.Status}, c.Cell, 2))
	}
	if len(rows) > 0 {
		d.Table([]string{"backlog", "cell", "connects", "ListenOverflows", "ListenDrops", "SYN retransmits server / client",
			"answered < 1 s / 1-3 s / 3-7 s / ≥ 7 s", "response p50 / p99 / max ms", "resets", "never up", "status"}, rows)
		d.P("%s", Absorbed(cellsOf(all, "backlog")))
		if p := PacedBursts(cellsOf(all, "backlog")); p != "" {
			d.P("%s", p)
		}
		d.P("The server host's net.core.somaxconn is set to the backlog before a fresh server starts (Go's listener takes somaxconn as its backlog). connclient burst calls connect() back to back on non-blocking sockets and sends one request on each once connected. When the accept queue is full the server drops what would add to it (ListenOverflows, ListenDrops): a SYN, which the client sends again after 1 s, then 3 s, 7 s … (client SYN retransmits), or the client's final ACK, after which the client believes the connection is up and its request waits for the server's SYN-ACK retransmission (server SYN retransmits) on the same 1 s, 3 s … steps. Either way the response latency falls in those steps, each its own mode in the columns above. With tcp_abort_on_overflow=1 the server resets such a connection instead (resets). Never up: no response within the burst's timeout. The seed 003 lesson as measured: a backlog absorbed the burst when its row shows no overflow.")
	} else {
		d.P("No backlog cell in this run.")
	}

	d.H(2, "Accept rate: the highest new-connection rate the server sustains")
	rows = nil
	acc := cellsOf(all, "accept")
	for _, c := range acc {
		f := &c.Fig
		rows = append(rows, trust.MarkRow([]string{report.N(f.RateTargetPerS, 0), "`" + c.Name + "`", report.N(f.RateAchievedPerS, 1),
			report.N(f.ErrorPct, 2), report.N(f.LatencyP99Ms, 2), report.N(f.Procs["server"].CPUPct, 1),
			report.N(f.ServerCPUUsPerConn, 1), report.N(f.Procs["client"].CPUPct, 1), verdictText(c.Cell)}, c.Cell, 2))
	}
	if len(rows) > 0 {
		d.Table([]string{"target /s", "cell", "achieved /s", "errors %", "p99 ms", "server CPU % of a core", "server CPU µs per connection", "client CPU %", "verdict"}, rows)
		bound := "—"
		if len(acc) > 0 {
			bound = report.N(acc[0].Fig.AcceptP99BoundMs, 0)
		}
		for _, g := range acceptGroups(all) {
			what := ""
			if h := g[0].Params["handshake"]; h != "" {
				what = " (" + h + " TLS handshakes)"
			}
			best, _ := bestSustained(g)
			if best != nil {
				d.P("**Sustained%s: %s new connections/s** (step %s/s), errors under %.0f %% and p99 under %s ms. Each step is one churn cell closed with SO_LINGER=0, so TIME_WAIT limits neither end; the steps are a fixed ladder (ACCEPT_RATES), the report takes the highest that held.",
					what, report.N(best.Fig.RateAchievedPerS, 1), report.N(best.Fig.RateTargetPerS, 0), ErrorPctMax, bound)
			} else {
				d.P("No step%s held errors under %.0f %% and p99 under %s ms.", what, ErrorPctMax, bound)
			}
		}
	} else {
		d.P("No accept cell in this run.")
	}

	tlsSection(&d, s, all)
	clientsSection(&d, s, all)

	d.H(2, "The wall each cell met")
	rows = nil
	for i := range s.Cells {
		c := &s.Cells[i]
		if c.Verdict != nil {
			rows = append(rows, trust.MarkRow([]string{"`" + c.Name + "`", "**" + c.Verdict.Bound + "**", c.Verdict.Evidence}, c, 1))
		}
	}
	d.Table([]string{"cell", "wall", "evidence"}, rows)
	trust.Section(&d, s.Cells)

	d.H(2, "TIME_WAIT against time")
	svg, skipped := twChart(s, all).Render(r.Dir, s.GeneratedBy)
	report.Chart(&d, "TIME_WAIT on each host during the churn cells", svg, skipped)
	d.P("Sockets in TIME_WAIT on each host (sar -n SOCK, once a second), against the seconds since the cell began, one line per churn cell and host. The side that closes first holds TIME_WAIT for %d s; SO_LINGER=0 leaves none.", TimeWaitS)

	report.Notes(&d, r.Dir)
	report.Environment(&d, s)
	report.Files(&d)
	d.Table([]string{"Phase 4 path", "what"}, filesRows(s))
	return report.Write(r.Dir, ReportName, &d)
}

// filesRows are the report's Phase 4 files: a run made before each client
// host had its own directory keeps raw/<cell>.json and the facts of
// "client" and "server".
func filesRows(s *summary.Summary) [][]string {
	if !s.ClientSet().OwnDirs {
		return [][]string{
			{"`raw/<cell>.json`, `.log`", "connclient churn or burst: the JSON result (mergeable histogram buckets, failures per second) and its progress"},
			{"`raw/<cell>.facts.{client,server}.env`", "the sysctls and `/proc/net/sockstat`'s TCP line read before the cell; the prediction's input"},
			{"`monitors/{server,client}/counters/<cell>.{before,after}.*`", "nstat (ListenOverflows, ListenDrops, TCPSynRetrans) and sockstat around the cell"},
			{"`run.env` `sysctl.<host>.<key>.{old,set,restored}`", "every sysctl the run changed, its old value and that it was put back"},
		}
	}
	return [][]string{
		{"`raw/<client>/<cell>.json`, `.log`", "each client host's connclient churn or burst: the JSON result (mergeable histogram buckets, failures per second) and its progress"},
		{"`raw/<client>/<cell>.timing.json`", "when `csb start-at` started and ended that host's connclient, and when it was due (on that host's clock)"},
		{"`raw/<cell>.facts.<host>.env`", "the sysctls and `/proc/net/sockstat`'s TCP line of the server and of each client host, read before the cell; the predictions' input"},
		{"`monitors/<host>/counters/<cell>.{before,after}.*`", "nstat (ListenOverflows, ListenDrops, TCPSynRetrans) and sockstat around the cell, per host"},
		{"`monitors/<client>/pidstat-connclient-<cell>.txt`", "each client host's connclient CPU and memory over the cell"},
		{"`run.env` `sysctl.<host>.<key>.{old,set,restored}`", "every sysctl the run changed, its old value and that it was put back"},
	}
}

// clientsSection writes an N-client run's per-client-host table: each
// host's share of every cell, its own figures and its own prediction, and
// how the cell's figures combine them. Nothing for a one-client run.
func clientsSection(d *report.Doc, s *summary.Summary, all []Cell) {
	if s.Clients == nil {
		return
	}
	d.H(2, fmt.Sprintf("Per client host (%d client hosts)", s.Clients.N))
	var rows [][]string
	upper, inexact := false, false
	for i := range all {
		c := all[i].Cell
		if c.LatencyMerge == summary.LatencyMergeNone {
			inexact = true
		}
		if len(upperBounds(c)) > 0 {
			upper = true
		}
		spread := "—"
		if o := c.Overlap; o != nil {
			spread = fmt.Sprintf("start %s ms, end %s ms apart", report.N(&o.StartSpreadMs, 0), report.N(&o.EndSpreadMs, 0))
		}
		unit := " /s"
		if Kind(c) == "backlog" {
			unit = " connects"
		}
		for j, cc := range c.Clients {
			g := &all[i].ClientFigs[j]
			share := "—"
			if cc.Connections != nil {
				share = report.N(cc.Connections, 0) + unit
			}
			pred := "—"
			if Kind(c) != "backlog" {
				pred = report.N(g.PredictedCellRatePerS, 1) + " /s, EADDRNOTAVAIL " + eaddrPred(&g.PredictionFigures)
			}
			rows = append(rows, []string{"`" + c.Name + "`", cc.Label, share, report.N(g.RateAchievedPerS, 1),
				report.N(g.ConnectionsCompleted, 0) + " / " + report.N(g.ConnectionsFailed, 0),
				report.N(g.ErrorsEAddrNotAvail, 0) + " / " + report.N(g.ErrorsEConnReset, 0) + " / " + report.N(g.ErrorsETimedOut, 0),
				report.N(g.ConnectLatencyP99Ms, 2), report.N(g.LatencyP50Ms, 2) + " / " + report.N(g.LatencyP99Ms, 2),
				pred, report.N(g.ClientTimeWaitPeak, 0) + " (" + report.N(g.PredictedClientTimeWait, 0) + ")",
				report.N(g.PortsLeft, 0), report.N(g.ClientProcCPUPct, 1) + " / " + report.N(g.ClientCPUUsPerConn, 1),
				report.N(g.HostCPUPct, 0), report.N(cc.StartLagMs, 0), spread})
		}
	}
	d.Table([]string{"cell", "client", "share", "achieved /s", "completed / failed", "EADDRNOTAVAIL / resets / timeouts",
		"connect p99 ms", "request p50 / p99 ms", "predicted (this host)", "TIME_WAIT peak (predicted)", "ports left",
		"connclient CPU % of one CPU / µs per connection", "host CPU %", "started after the due time, ms", "clients apart"}, rows)
	d.P("Each cell's count (a burst) or rate (churn, accept) is split across the client hosts, the first ones one more (the share column), and every host's connclient starts at one due time (`csb start-at`; a burst at one instant). The last column says how far apart they started and ended, on the controller's clock (each host's times less its measured clock offset).")
	d.P("The cell's figures in the tables above merge the hosts': connections, failures by cause, TLS handshakes and burst latency steps are added up, the target and achieved rates too (each host's completed connections over its own schedule), the first EADDRNOTAVAIL is the earliest host's, the per-second failures are added up by second. Latency, connect latency and TLS handshake percentiles come from every host's histogram merged bucket by bucket: exactly what one connclient making every connection would have printed, never an average of percentiles. The schedule lag, which connclient keeps no histogram of, is the largest host's: an upper bound (`upper_bound_metrics` in `summary.json`).")
	if inexact {
		d.P("**Latency not merged exactly** in the cells marked `latency_merge: %s` in `summary.json`: a host's result carries no histogram (connclient older than its dumps), so those percentiles are the largest host's, an upper bound (listed in `upper_bound_metrics`); the maxima are exact.", summary.LatencyMergeNone)
	} else if upper {
		d.P("Latency percentiles of every cell are exact (merged histograms); only the schedule lag is an upper bound.")
	}
	d.P("The port prediction is made per client host, from its own settings (`raw/<cell>.facts.<client>.env`: its port range, what it held in TIME_WAIT) and its share of the rate; each host has its own source address and ports, so the cell's predicted rates, ports, free ports and client TIME_WAIT are the hosts' added up (the server's TIME_WAIT too, at most tcp_max_tw_buckets), the wall is predicted when any host meets it, and the predicted exhaust time is the earliest host's. TIME_WAIT peaks per host are that host's own (sar); the cell's client peak is the peak of their per-second sum, and ports left the hosts' ports less their TIME_WAIT after the cell, added up.")
}

// upperBounds is a cell's metrics given as the largest host's value.
func upperBounds(c *summary.Cell) []string {
	switch u := c.Details["upper_bound_metrics"].(type) {
	case []string:
		return u
	case []any:
		out := make([]string, 0, len(u))
		for _, v := range u {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Absorbed says, for each backlog, the largest burst it took without an
// overflow and the smallest it did not: the seed 003 lesson as measured.
func Absorbed(cells []*Cell) string {
	type span struct{ took, lost float64 }
	by := map[float64]*span{}
	var order []float64
	for _, c := range cells {
		b, n, ov := intp(c.Fig.Backlog), intp(c.Fig.ConnectionsTarget), c.Fig.Counters["server"].ListenOverflows
		if math.IsNaN(b) || math.IsNaN(n) || ov == nil {
			continue
		}
		sp := by[b]
		if sp == nil {
			sp = &span{took: math.NaN(), lost: math.NaN()}
			by[b] = sp
			order = append(order, b)
		}
		if *ov == 0 {
			sp.took = math.Max(n, nanZero(sp.took))
		} else if math.IsNaN(sp.lost) || n < sp.lost {
			sp.lost = n
		}
	}
	if len(order) == 0 {
		return "No burst has both its backlog and the server's ListenOverflows."
	}
	var parts []string
	for _, b := range order {
		sp := by[b]
		p := fmt.Sprintf("backlog %.0f ", b)
		switch {
		case math.IsNaN(sp.lost):
			p += fmt.Sprintf("absorbed every burst (up to %.0f connects)", sp.took)
		case math.IsNaN(sp.took):
			p += fmt.Sprintf("overflowed at every burst (from %.0f connects)", sp.lost)
		default:
			p += fmt.Sprintf("absorbed %.0f connects and overflowed at %.0f", sp.took, sp.lost)
		}
		parts = append(parts, p)
	}
	return "Which burst each backlog absorbed (no ListenOverflows): " + strings.Join(parts, "; ") + "."
}

func nanZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// eaddrPred says whether and when a prediction f runs out of ports.
func eaddrPred(f *PredictionFigures) string {
	p := f.PredictedEAddrNotAvail
	switch {
	case p == nil:
		return "—"
	case *p == 1:
		return "yes, at " + report.N(f.PredictedExhaustS, 2) + " s"
	}
	return "no"
}

func verdictText(c *summary.Cell) string {
	if c.Verdict == nil {
		return "—"
	}
	return c.Verdict.Bound
}

func errorsText(c *summary.Cell) string {
	var errs map[string]float64
	switch e := c.Details["errors"].(type) {
	case map[string]float64:
		errs = e
	case map[string]any: // read back from summary.json
		errs = map[string]float64{}
		for k, v := range e {
			errs[k], _ = v.(float64)
		}
	default:
		return "—"
	}
	var b strings.Builder
	for _, k := range kv.SortedKeys(errs) {
		if errs[k] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.0f", k, errs[k])
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

func twChart(s *summary.Summary, all []Cell) *chart.Chart {
	ch := &chart.Chart{Name: "time-wait", Title: "TIME_WAIT during the churn cells", XLabel: "seconds since the cell began",
		YLabel: "sockets in TIME_WAIT", HLine: math.NaN()}
	for _, c := range cellsOf(all, "churn") {
		pts, _ := c.Details["time_wait"].([]TWPoint)
		if pts == nil {
			pts = twFromAny(c.Details["time_wait"])
		}
		// One line per host: with several client hosts each one's own
		// (its ports are its own), else the one client's.
		labels := []string{"client"}
		if s.Clients != nil {
			labels = labels[:0]
			for _, h := range s.Clients.Hosts {
				labels = append(labels, h.Label)
			}
		}
		series := make([]chart.Series, 0, len(labels)+1)
		for _, l := range labels {
			ser := chart.Series{Title: c.Name + " " + l}
			for _, p := range pts {
				v, ok := p.Client, p.Client >= 0
				if s.Clients != nil {
					v, ok = p.Clients[l]
				}
				if ok {
					ser.Points = append(ser.Points, chart.Point{X: p.T, Y: float64(v)})
				}
			}
			series = append(series, ser)
		}
		sv := chart.Series{Title: c.Name + " server"}
		for _, p := range pts {
			if p.Server >= 0 {
				sv.Points = append(sv.Points, chart.Point{X: p.T, Y: float64(p.Server)})
			}
		}
		for _, ser := range append(series, sv) {
			if len(ser.Points) > 0 {
				ch.Series = append(ch.Series, ser)
			}
		}
	}
	return ch
}

// twFromAny reads the series back from a summary loaded from JSON.
func twFromAny(v any) []TWPoint {
	list, _ := v.([]any)
	var out []TWPoint
	for _, e := range list {
		o, _ := e.(map[string]any)
		f := func(k string) float64 { x, _ := o[k].(float64); return x }
		p := TWPoint{T: f("t_s"), Client: int(f("client")), Server: int(f("server"))}
		if cs, ok := o["clients"].(map[string]any); ok {
			p.Clients = map[string]int{}
			for k, v := range cs {
				n, _ := v.(float64)
				p.Clients[k] = int(n)
			}
		}
		out = append(out, p)
	}
	return out
}

// acceptGroups are the accept cells by TLS handshake (params handshake:
// full, resumed; one group without it in cleartext), in run order.
func acceptGroups(cells []Cell) [][]*Cell {
	var order []string
	by := map[string][]*Cell{}
	for _, c := range cellsOf(cells, "accept") {
		h := c.Params["handshake"]
		if _, ok := by[h]; !ok {
			order = append(order, h)
		}
		by[h] = append(by[h], c)
	}
	out := make([][]*Cell, 0, len(order))
	for _, h := range order {
		out = append(out, by[h])
	}
	return out
}

// keyType is the server key's type of a TLS run: what the probe saw (or
// TLS_KEY_TYPE), else what a cell's first handshake saw.
func keyType(s *summary.Summary, cells []*Cell) string {
	if s.TLS != nil && s.TLS.KeyType != "" {
		return s.TLS.KeyType
	}
	for _, c := range cells {
		switch st := c.Details["tls"].(type) {
		case *connresult.TLSState:
			return st.KeyType
		case map[string]any:
			if k, _ := st["key_type"].(string); k != "" {
				return k
			}
		}
	}
	return "unknown"
}

// tlsSection: with SCHEME=https, the handshakes of every rate cell, the
// handshakes per second sustained (full and resumed) with the server's CPU
// per handshake, and whether the port prediction held over TLS.
func tlsSection(d *report.Doc, s *summary.Summary, all []Cell) {
	var cells []*Cell
	for i := range all {
		if c := &all[i]; c.Fig.TLSHandshakesFull != nil {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return
	}
	d.H(2, "TLS: handshakes per second, CPU per handshake, the churn wall")
	kt := keyType(s, cells)
	var rows [][]string
	for _, c := range cells {
		f := &c.Fig
		h := c.Params["handshake"]
		if h == "" {
			h = "full"
		}
		rows = append(rows, trust.MarkRow([]string{"`" + c.Name + "`", h, report.N(f.RateTargetPerS, 0), report.N(f.RateAchievedPerS, 1),
			report.N(f.TLSHandshakesFull, 0) + " / " + report.N(f.TLSHandshakesResumed, 0),
			report.N(f.TLSHandshakeFullP50Ms, 2) + " / " + report.N(f.TLSHandshakeFullP99Ms, 2),
			report.N(f.TLSHandshakeResumedP50Ms, 2) + " / " + report.N(f.TLSHandshakeResumedP99Ms, 2),
			report.N(f.ConnectLatencyP50Ms, 2) + " / " + report.N(f.ConnectLatencyP99Ms, 2),
			report.N(f.Procs["server"].CPUPct, 1), report.N(f.ServerCPUUsPerHandshake, 1), verdictText(c.Cell)}, c.Cell, 1))
	}
	d.Table([]string{"cell", "handshakes asked", "target /s", "achieved /s", "handshakes full / resumed", "full handshake p50 / p99 ms",
		"resumed handshake p50 / p99 ms", "TCP connect p50 / p99 ms", "server CPU % of a core", "server CPU µs per handshake", "verdict"}, rows)
	var parts []string
	for _, g := range acceptGroups(all) {
		h := g[0].Params["handshake"]
		if h == "" {
			continue
		}
		best, _ := bestSustained(g)
		if best != nil {
			parts = append(parts, fmt.Sprintf("%s handshakes %s/s (step %s/s, server CPU %s µs per handshake)", h,
				report.N(best.Fig.RateAchievedPerS, 1), report.N(best.Fig.RateTargetPerS, 0), report.N(best.Fig.ServerCPUUsPerHandshake, 1)))
		} else {
			parts = append(parts, h+" handshakes: no step sustained")
		}
	}
	if len(parts) > 0 {
		d.P("**Sustained with the %s server key: %s.**", kt, strings.Join(parts, "; "))
	}
	d.P("Key type: %s (TLS_KEY_TYPE, or the user's certificate). Every connection does one TLS handshake after its TCP connect, timed apart from it (from the established connection to the handshake's end, client side); the full and resumed counts are what the handshakes did, whatever was asked (a resumed step's first connections, before a session ticket came back, are full; with TLS_TICKETS=0 none resume). The server's CPU per handshake is its processes' CPU over the cell (pidstat) over the connections completed per second: each connection is one handshake, one request and the close, so it bounds the handshake's own cost from above. Latencies from the due time include the handshake.", kt)
	var held, missed, aborted []string
	for _, c := range cellsOf(all, "churn") {
		p := c.Fig.PredictedEAddrNotAvail
		if p == nil || c.Fig.TLSHandshakesFull == nil || c.Fig.ErrorsEAddrNotAvail == nil {
			continue
		}
		if (*p == 1) == (*c.Fig.ErrorsEAddrNotAvail > 0) {
			held = append(held, "`"+c.Name+"`")
		} else {
			missed = append(missed, "`"+c.Name+"`")
			if a := c.Fig.Counters["client"].AbortOnData; a != nil && *a > 0 && *p == 1 {
				aborted = append(aborted, fmt.Sprintf("`%s` %s of %s connections (client TIME_WAIT peak %s)", c.Name,
					report.N(a, 0), report.N(c.Fig.ConnectionsCompleted, 0), report.N(c.Fig.ClientTimeWaitPeak, 0)))
			}
		}
	}
	switch {
	case len(held)+len(missed) == 0:
		d.P("No churn cell over TLS has both a prediction and its failures: whether the port prediction holds over TLS is not measured here.")
	case len(missed) == 0:
		d.P("**The churn wall over TLS: the port prediction held** in every churn cell (%s): the handshake adds time per connection but no port, so EADDRNOTAVAIL came where and only where the settings predicted it.", strings.Join(held, ", "))
	default:
		d.P("**The churn wall over TLS: the port prediction did not hold** in %s (EADDRNOTAVAIL seen where none was predicted, or none where it was); it held in %d other cell(s).", strings.Join(missed, ", "), len(held))
		if len(aborted) > 0 {
			d.P("Why, from the client's nstat (TCPAbortOnData): %s. The client closes first with a TLS close_notify; the server answers with its own close_notify, which reaches a socket the client has already closed, and the client's kernel answers data on a closed socket with an RST: the connection is aborted, not left in TIME_WAIT, so the client keeps no port for 60 s and meets no port wall. Over TLS against a server that sends close_notify, the client-closed variant behaves like SO_LINGER=0 at the client; the prediction, which reads only the sysctls, does not know it.", strings.Join(aborted, "; "))
		}
	}
	d.P("The backlog bursts stay cleartext with SCHEME=https (their server is started without TLS): they measure the listen queue, which fills before any handshake.")
}

// PacedBursts sets each burst against its known answer when the server's
// accept was paced (BURST_ACCEPT_EVERY): what PredictOverflow said and
// what ListenOverflows shows. Empty when no burst was paced.
func PacedBursts(cells []*Cell) string {
	var parts []string
	var every *float64
	for _, c := range cells {
		f := &c.Fig
		if f.AcceptEveryMs == nil {
			continue
		}
		every = f.AcceptEveryMs
		want := "may overflow"
		if p := f.PredictedListenOverflow; p != nil {
			want = map[bool]string{true: "must overflow", false: "cannot overflow"}[*p == 1]
		}
		parts = append(parts, fmt.Sprintf("`%s` (%s connects issued in %s s into %s) %s: ListenOverflows %s",
			c.Name, report.N(f.ConnectionsTarget, 0), report.N(f.BurstIssueS, 3), report.N(f.Backlog, 0),
			want, report.N(f.Counters["server"].ListenOverflows, 0)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "The server accepted at most one connection per " + strconv.FormatFloat(*every, 'f', -1, 64) +
		" ms (BURST_ACCEPT_EVERY, csb-server -accept-every): a known accept rate, so a burst of N connects issued in T s into a backlog B must overflow when N > B + T / interval + 1 and cannot when N ≤ B. " +
		strings.Join(parts, "; ") + "."
}
