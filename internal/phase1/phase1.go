// Package phase1 summarizes and reports Phase 1: wrk against the
// fixed-payload server, one cell per payload size — can HTTP fill the link?
package phase1

import (
	"fmt"
	"sort"
	"strings"

	"csbench/internal/chart"
	"csbench/internal/hostdata"
	"csbench/internal/httpphase"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// ReportName is the report's file name in the run directory.
const ReportName = "Report_01-http-baseline.md"

// Phase implements cli.Phase for 01-http-baseline.
type Phase struct{}

// Summarize reads raw/<cell>.txt (wrk with the CSB_WRK_JSON hook) and the
// monitors for every cell.
func (Phase) Summarize(r *rundir.Run, s *summary.Summary) error {
	hosts := hostdata.Load(r.Dir)
	for _, p := range hosts.Problems {
		s.Notes = append(s.Notes, "monitor data: "+p)
	}
	basis := httpphase.FindBaseline(r, s)
	for _, rc := range r.Cells {
		c := summary.NewCell(rc)
		s.Notes = append(s.Notes, httpphase.Measure(r, s, hosts, rc, &c, basis)...)
		c.Verdict = httpphase.Verdict(s, &c, basis)
		s.Cells = append(s.Cells, c)
	}
	return nil
}

// Report writes Report_01-http-baseline.md and its chart.
func (Phase) Report(r *rundir.Run, s *summary.Summary) error {
	basis := httpphase.BasisFromLink(s)
	var d report.Doc
	tools := "wrk"
	h2 := s.HTTP != nil
	if h2 {
		tools = "h2load"
		if s.HTTP.Versions != "2" {
			tools = "wrk, h2load"
		}
	}
	report.Header(&d, s, "Phase 1 — HTTP baseline: can an HTTP server fill the link? ("+tools+")")

	d.H(2, "What HTTP delivers")
	d.P("%s", headline(s, basis))

	d.H(2, "Cells")
	var rows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		m := httpphase.FiguresOf(c)
		load := "-t " + c.Params["threads"] + " -c " + c.Params["connections"]
		if h2 {
			load = c.Params["loadgen"] + " " + load
			if c.Params["loadgen"] == "h2load" {
				load += " -m " + c.Params["streams"]
			}
		}
		rows = append(rows, trust.MarkRow([]string{
			"`" + c.Name + "`", load, c.Params["duration_s"] + " s",
			report.N(m.RPS, 0), report.N(m.ThroughputMbps, 1), report.N(m.GoodputMbps, 1), report.Pct(m.LinkUtilization),
			report.N(m.LatencyP50Ms, 2), report.N(m.LatencyP90Ms, 2), report.N(m.LatencyP99Ms, 2),
			report.N(m.LatencyP999Ms, 2), report.N(m.LatencyMaxMs, 2), report.N(m.ErrorsTotal, 0), c.Status,
		}, c, 3))
	}
	loadCol, procCol := "wrk", "wrk % of one CPU"
	if h2 {
		loadCol, procCol = "load", "load generator % of one CPU"
	}
	d.Table([]string{"payload", loadCol, "time", "RPS", "throughput Mbit/s", "goodput Mbit/s", "of basis",
		"p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "status"}, rows)
	d.P("Throughput counts every HTTP byte wrk read (status lines, headers, bodies), as iperf3 counts TCP payload, so the two compare directly; goodput counts the bodies of 2xx/3xx responses only. Throughput is compared with %s. Latencies are wrk's (from the `done()` hook, `lib/wrk/report.lua`; wrk's own text is kept beside it in `raw/<payload>.txt` and cross-checked); %s %s",
		basis.What, httpphase.WrkLatencyNote, warmupNote(s))
	if h2 {
		d.P("%s", httpphase.H2loadNote)
		protocolSection(&d, s)
	}
	httpphase.ClientsSection(&d, s)
	trust.Section(&d, s.Cells)
	trust.TimelineChart(&d, r.Dir, s.GeneratedBy, s.Cells)

	spreadSection(&d, s)

	trust.VerdictSection(&d, s, "payload")
	d.P("%s", httpphase.Rules(s))

	d.H(2, "CPU")
	var crows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		m := httpphase.FiguresOf(c)
		srv, cli := m.CPU["server"], m.CPU["client"]
		crows = append(crows, trust.MarkRow([]string{"`" + c.Name + "`",
			report.N(srv.Pct, 0), report.N(cli.Pct, 0),
			report.N(srv.MaxCorePct, 0), report.N(cli.MaxCorePct, 0),
			report.N(m.Procs["server"].CPUPct, 0), report.N(m.Procs["client"].CPUPct, 0),
			report.N(m.Procs["server"].RSSMB, 1)}, c, 1))
	}
	d.Table([]string{"payload", "server host %", "client host %", "server busiest core %", "client busiest core %",
		"csb-server % of one CPU", procCol, "csb-server RSS MB"}, crows)
	d.P("Host columns: mpstat's mean busy share of all CPUs over the cell (from its second second on). Process columns: pidstat, summed over the process's threads, in %% of one CPU (so up to 100 x CPUs).")

	d.H(2, "Errors")
	var erows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		m := httpphase.FiguresOf(c)
		erows = append(erows, trust.MarkRow([]string{"`" + c.Name + "`", report.N(m.Requests, 0), report.N(m.ErrorsConnect, 0),
			report.N(m.ErrorsRead, 0), report.N(m.ErrorsWrite, 0), report.N(m.ErrorsTimeout, 0), report.N(m.ErrorsStatus, 0)}, c, 1))
	}
	d.Table([]string{"payload", "responses", "connect", "read", "write", "timeout", "non-2xx/3xx"}, erows)

	d.H(2, "The hosts' own counters (sar, nstat, sockstat over each cell)")
	var hrows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		m := httpphase.FiguresOf(c)
		srv, cli := m.Counters["server"], m.Counters["client"]
		hrows = append(hrows, trust.MarkRow([]string{"`" + c.Name + "`", report.N(m.NIC["server"].TxMbps, 0), report.N(m.NIC["server"].TxPPS, 0),
			report.N(srv.RetransSegs, 0), report.N(cli.RetransSegs, 0),
			report.N(srv.ListenOverflows, 0), report.N(srv.ListenDrops, 0), report.N(srv.EstabResets, 0),
			report.N(srv.TimeWait, 0), report.N(cli.TimeWait, 0)}, c, 1))
	}
	d.Table([]string{"payload", "server NIC tx Mbit/s (sar)", "server NIC tx packets/s", "server TcpRetransSegs", "client TcpRetransSegs",
		"server ListenOverflows", "server ListenDrops", "server EstabResets", "server TIME_WAIT after", "client TIME_WAIT after"}, hrows)
	d.P("The NIC columns are the kernel's own counters of the server's benchmark interface (sar: frames with their Ethernet header, mean over the cell): an independent check of wrk's figure, and the packet rate that small payloads are bound by.")

	d.H(2, "Chart")
	ch := &chart.Chart{Name: "throughput", Title: "HTTP throughput per payload (wrk, bytes incl. headers)", XLabel: "payload", YLabel: "Mbit/s",
		Bars: true, HLine: summary.Val(basis.Mbps), HLineLbl: basis.What}
	tp := chart.Series{Title: "throughput"}
	gp := chart.Series{Title: "goodput (bodies)"}
	for i := range s.Cells {
		c := &s.Cells[i]
		m := httpphase.FiguresOf(c)
		tp.Points = append(tp.Points, chart.Point{Label: c.Name, Y: summary.Val(m.ThroughputMbps)})
		gp.Points = append(gp.Points, chart.Point{Label: c.Name, Y: summary.Val(m.GoodputMbps)})
	}
	ch.Series = []chart.Series{tp, gp}
	svg, skipped := ch.Render(r.Dir, s.GeneratedBy)
	report.Chart(&d, ch.Title, svg, skipped)

	report.Notes(&d, r.Dir)
	report.Environment(&d, s)
	report.Files(&d)
	d.P("`raw/<payload>.txt` is wrk's stdout and stderr with the hook's `CSB_WRK_JSON` line; `raw/warmup/` the unrecorded warm-up runs; `raw/headers/` one response's status line and headers per payload (curl); `monitors/client/pidstat-loadgen-<payload>.txt` pidstat on wrk during the cell.")
	return report.Write(r.Dir, ReportName, &d)
}

func warmupNote(s *summary.Summary) string {
	if len(s.Cells) == 0 {
		return ""
	}
	w := s.Cells[0].Params["warmup_s"]
	if w == "" || w == "0" {
		return "No warm-up preceded the cells."
	}
	return fmt.Sprintf("Each cell was preceded by %s s of the same wrk load, not recorded (its output is in `raw/warmup/`).", w)
}

// headline is the phase's one-paragraph finding.
func headline(s *summary.Summary, basis httpphase.Basis) string {
	var parts []string
	for _, g := range groups(s) {
		if len(g.Cells) == 1 {
			parts = append(parts, cellHeadline(g.Cells[0]))
			continue
		}
		rps := g.spread(figRPS)
		if rps.N == 0 {
			parts = append(parts, fmt.Sprintf("%s: not measured (%s)", g.Payload, g.Cells[0].Status))
			continue
		}
		mk := ""
		if x := trust.GroupMarks(g.Cells); x != "" {
			mk = " " + x
		}
		tp, p99 := g.spread(figThroughput), g.spread(figP99)
		bound := ""
		if g.cpuBound() {
			bound = ", CPU-bound"
		}
		parts = append(parts, fmt.Sprintf("**%s**%s: %s RPS, %s Mbit/s (p99 %s ms%s; medians of %d repetitions, RPS %s–%s)", g.Payload, mk,
			report.N(summary.F(rps.Median), 0), report.N(summary.F(tp.Median), 1), report.N(summary.F(p99.Median), 2), bound, rps.N,
			report.N(summary.F(rps.Min), 0), report.N(summary.F(rps.Max), 0)))
	}
	if len(parts) == 0 {
		return "No cell was measured: see the status above and `logs/console.log`."
	}
	line := strings.Join(parts, "; ") + ". Throughput is compared with " + basis.What + "."
	if s.Clients != nil {
		line = fmt.Sprintf("From %d client hosts at once (RPS and throughput summed over the clients, latencies from their merged distributions): ", s.Clients.N) + line
	}
	atLink, gs := 0, groups(s)
	for _, g := range gs {
		for _, c := range g.Cells {
			if c.Verdict != nil && c.Verdict.Code == httpphase.BoundNetwork {
				atLink++
				break
			}
		}
	}
	switch {
	case basis.Mbps == nil:
		line += " With no link, every figure here measures CPU and memory."
	case atLink > 0:
		line += fmt.Sprintf(" %d of %d payloads fill the path (≥ %.0f%% of the basis): HTTP with a minimal server can reach what raw TCP does.", atLink, len(gs), httpphase.AtLink*100)
	default:
		line += " No payload fills the path: see the verdicts for what held each one back."
	}
	return line + " For comparison, the seed's 1 GbE lab: 1 KB ~101k RPS, 10 KB ~11.3k RPS, 100 KB ~1.15k RPS, all at ~110-112 MB/s."
}

// payloadGroup is one payload's repetitions over one HTTP version, in
// cells.tsv order.
type payloadGroup struct {
	Payload string // the payload, with -h2 over HTTP/2: the cells' name less -r<rep>
	HTTP    string // "1.1" or "2"
	Cells   []*summary.Cell
}

// groups gathers the cells by payload and HTTP version, sorted by payload
// size, HTTP/1.1 before HTTP/2.
func groups(s *summary.Summary) []*payloadGroup {
	by := map[string]*payloadGroup{}
	var out []*payloadGroup
	for i := range s.Cells {
		c := &s.Cells[i]
		p, v := c.Params["payload"], httpOf(c)
		if v == "2" {
			p += "-h2"
		}
		if by[p] == nil {
			by[p] = &payloadGroup{Payload: p, HTTP: v}
			out = append(out, by[p])
		}
		by[p].Cells = append(by[p].Cells, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		bi, bj := httpphase.Param(out[i].Cells[0], "payload_bytes"), httpphase.Param(out[j].Cells[0], "payload_bytes")
		if bi != bj {
			return bi < bj
		}
		return out[i].HTTP < out[j].HTTP
	})
	return out
}

// httpOf is a cell's HTTP version: its http parameter, 1.1 for the cells
// of runs from before it.
func httpOf(c *summary.Cell) string {
	if v := c.Params["http"]; v != "" {
		return v
	}
	return "1.1"
}

// figure is one figure of a cell's.
type figure func(*httpphase.Figures) *float64

var (
	figRPS         figure = func(f *httpphase.Figures) *float64 { return f.RPS }
	figThroughput  figure = func(f *httpphase.Figures) *float64 { return f.ThroughputMbps }
	figP99         figure = func(f *httpphase.Figures) *float64 { return f.LatencyP99Ms }
	figServerProcs figure = func(f *httpphase.Figures) *float64 { return f.Procs["server"].CPUPct }
	figClientProcs figure = func(f *httpphase.Figures) *float64 { return f.Procs["client"].CPUPct }
)

// spread is one figure over the repetitions that measured.
func (g *payloadGroup) spread(get figure) trust.Spread {
	var vals []*float64
	for _, c := range g.Cells {
		if c.Status == "ok" {
			f := httpphase.FiguresOf(c)
			vals = append(vals, get(&f))
		}
	}
	return trust.SpreadOf(vals)
}

// cpuBound reports whether most measured repetitions were CPU-bound: where
// figures move most from run to run.
func (g *payloadGroup) cpuBound() bool {
	n, cpu := 0, 0
	for _, c := range g.Cells {
		if c.Status != "ok" || c.Verdict == nil {
			continue
		}
		n++
		switch c.Verdict.Code {
		case httpphase.BoundServer, httpphase.BoundClient, httpphase.BoundBoth, httpphase.BoundShared:
			cpu++
		}
	}
	return n > 0 && cpu*2 >= n
}

// spreadSection says, per payload, how much its figures moved over the
// repetitions (REPEAT), and for a CPU-bound payload measured once that its
// figure is a single sample.
func spreadSection(d *report.Doc, s *summary.Summary) {
	d.H(2, "Spread over repetitions")
	reps := 0
	var rows [][]string
	var lines []string
	for _, g := range groups(s) {
		rps := g.spread(figRPS)
		reps = max(reps, len(g.Cells))
		bound := "—"
		if g.cpuBound() {
			bound = "CPU-bound"
		}
		marks := trust.GroupMarks(g.Cells)
		if marks != "" {
			marks = " " + marks
		}
		rows = append(rows, []string{"`" + g.Payload + "`" + marks, fmt.Sprintf("%d of %d", rps.N, len(g.Cells)), rps.Text(0),
			g.spread(figThroughput).Text(1), g.spread(figP99).Text(2), bound})
		if g.cpuBound() && rps.N == 1 {
			lines = append(lines, fmt.Sprintf("`%s` is a single sample of a CPU-bound cell: its RPS (%s) can move by several percent from one run to the next on the same machine; run with `-s REPEAT=5` to see how much.", g.Payload, rps.Text(0)))
		} else if g.cpuBound() && rps.N >= trust.MinSpreadReps {
			lines = append(lines, fmt.Sprintf("`%s` is CPU-bound: its RPS moved by %.1f %% over %d repetitions (%s to %s); quote the median, %s, with that range.", g.Payload, rps.Pct, rps.N,
				report.N(summary.F(rps.Min), 0), report.N(summary.F(rps.Max), 0), report.N(summary.F(rps.Median), 0)))
		}
	}
	d.Table([]string{"payload", "measured", "RPS", "throughput Mbit/s", "p99 ms", "bound"}, rows)
	stat := "Each payload ran once (REPEAT=1): the figures are single samples."
	if reps > 1 {
		stat = fmt.Sprintf("Each payload ran up to %d times (REPEAT), all repetitions in one shuffled order, every one kept in the table above; with %d or more the figure is the median of the repetitions that measured, then the least and greatest, and the spread = (max − min) / median.", reps, trust.MinSpreadReps)
	}
	d.P("%s", stat)
	for _, l := range lines {
		d.P("%s", l)
	}
}

// cellHeadline is one measured cell's part of the headline.
func cellHeadline(c *summary.Cell) string {
	m := httpphase.FiguresOf(c)
	if m.RPS == nil {
		return fmt.Sprintf("%s: not measured (%s)", c.Name, c.Status)
	}
	of := ""
	if m.LinkUtilization != nil {
		of = " = " + report.Pct(m.LinkUtilization) + " of the basis"
	}
	bound := ""
	if c.Verdict != nil {
		bound = ", " + c.Verdict.Bound
	}
	mk := ""
	if x := trust.Marks(c); x != "" {
		mk = " " + x
	}
	return fmt.Sprintf("**%s**%s: %s RPS, %s Mbit/s%s (p99 %s ms%s)", c.Name, mk, report.N(m.RPS, 0),
		report.N(m.ThroughputMbps, 1), of, report.N(m.LatencyP99Ms, 2), bound)
}

// protocolSection sets each payload's HTTP/1.1 and HTTP/2 figures side by
// side (HTTP=1.1,2): medians over the repetitions that measured, the
// change HTTP/2 made, and the CPU each side spent per request (its
// processes' CPU over the cell / the requests per second), which says
// whose CPU multiplexing moved.
func protocolSection(d *report.Doc, s *summary.Summary) {
	byPayload := map[string]map[string]*payloadGroup{}
	var order []string
	for _, g := range groups(s) {
		p := g.Cells[0].Params["payload"]
		if byPayload[p] == nil {
			byPayload[p] = map[string]*payloadGroup{}
			order = append(order, p)
		}
		byPayload[p][g.HTTP] = g
	}
	var rows [][]string
	for _, p := range order {
		h1, h2 := byPayload[p]["1.1"], byPayload[p]["2"]
		if h1 == nil || h2 == nil {
			continue
		}
		med := func(g *payloadGroup, k figure) *float64 {
			sp := g.spread(k)
			if sp.N == 0 {
				return nil
			}
			return summary.F(sp.Median)
		}
		perReq := func(g *payloadGroup, k figure) *float64 {
			cpu, rps := med(g, k), med(g, figRPS)
			if cpu == nil || rps == nil || *rps <= 0 {
				return nil
			}
			return summary.F(*cpu / 100 * 1e6 / *rps)
		}
		pair := func(k figure, dec int) string {
			return report.N(med(h1, k), dec) + " → " + report.N(med(h2, k), dec)
		}
		change := "—"
		if a, b := med(h1, figRPS), med(h2, figRPS); a != nil && b != nil && *a > 0 {
			change = fmt.Sprintf("%+.1f %%", (*b / *a - 1)*100)
		}
		marks := trust.GroupMarks(append(append([]*summary.Cell{}, h1.Cells...), h2.Cells...))
		if marks != "" {
			marks = " " + marks
		}
		rows = append(rows, []string{"`" + p + "`" + marks, pair(figRPS, 0), change, pair(figThroughput, 1), pair(figP99, 2),
			report.N(perReq(h1, figServerProcs), 1) + " → " + report.N(perReq(h2, figServerProcs), 1),
			report.N(perReq(h1, figClientProcs), 1) + " → " + report.N(perReq(h2, figClientProcs), 1)})
	}
	if len(rows) == 0 {
		return
	}
	d.H(2, "HTTP/1.1 → HTTP/2")
	d.Table([]string{"payload", "RPS", "RPS change", "throughput Mbit/s", "p99 ms", "server CPU µs / request", "client CPU µs / request"}, rows)
	d.P("Each pair is HTTP/1.1 (wrk) → HTTP/2 (h2load), the same connections and one stream per connection, so both keep the same number of requests in flight: what moves is the protocol's cost (framing, HPACK, flow control) and the load generator's. Medians over the repetitions that measured. CPU per request is the processes' CPU over the cell (pidstat, the server under test's and the load generator's) divided by the requests per second: the side whose figure moved is the side HTTP/2 cost or saved. Throughput counts what each tool read (wrk: HTTP/1.1 status lines, headers and bodies; h2load: every HTTP/2 frame).")
}
