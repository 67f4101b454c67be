// Package phase2 summarizes and reports Phase 2: the payload x concurrency
// matrix (oha, or wrk standing in) — what payload and concurrency do to RPS,
// CPU and tail latency, where each payload's RPS plateaus, and whether the
// latency past the plateau is queueing.
package phase2

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"csbench/internal/chart"
	"csbench/internal/hostdata"
	"csbench/internal/httpphase"
	"csbench/internal/loadplan"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// ReportName is the report's file name in the run directory.
const ReportName = "Report_02-http-matrix.md"

// StandInNote is the first note of a run in which wrk stood in for oha,
// for people; readers decide by its code, summary.NoteWrkForOha.
const StandInNote = "wrk stood in for oha: oha is not installed on the client (LOADGEN=auto), so every cell ran wrk with lib/wrk/report.lua; figures are wrk's."

// Phase implements cli.Phase for 02-http-matrix.
type Phase struct{}

// Summarize reads every cell's raw output (raw/<cell>.json from oha,
// raw/<cell>.txt from wrk) and the monitors.
func (Phase) Summarize(r *rundir.Run, s *summary.Summary) error {
	if r.Get("loadgen_standin") == "1" {
		s.Notes = append(s.Notes, StandInNote)
		s.NoteCodes = append(s.NoteCodes, summary.NoteWrkForOha)
	}
	hosts := hostdata.Load(r.Dir)
	for _, p := range hosts.Problems {
		s.Notes = append(s.Notes, "monitor data: "+p)
	}
	basis := httpphase.FindBaseline(r, s)
	var refused []string
	for _, rc := range r.Cells {
		c := summary.NewCell(rc)
		s.Notes = append(s.Notes, httpphase.Measure(r, s, hosts, rc, &c, basis)...)
		c.Verdict = httpphase.Verdict(s, &c, basis)
		if c.Status == "refused" {
			refused = append(refused, c.Name)
		}
		s.Cells = append(s.Cells, c)
	}
	if len(refused) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d cell(s) refused before they ran, for want of file descriptors on the client: %s (see “Limits” in the report)", len(refused), strings.Join(refused, ", ")))
	}
	if n := somaxconn(s); n > 0 && n < maxConc(s) {
		s.Notes = append(s.Notes, fmt.Sprintf("the server's net.core.somaxconn (%d) is below the largest concurrency (%d): a burst of connects can overflow its listen backlog (see ListenOverflows)", n, maxConc(s)))
	}
	return nil
}

func somaxconn(s *summary.Summary) int {
	n, _ := strconv.Atoi(s.Hosts["server"].Sysctls["net.core.somaxconn"])
	return n
}

func maxConc(s *summary.Summary) int {
	best := 0
	for _, c := range s.Cells {
		if n, err := strconv.Atoi(c.Params["concurrency"]); err == nil && n > best {
			best = n
		}
	}
	return best
}

func tool(r *rundir.Run, s *summary.Summary) string {
	if t := r.Get("loadgen"); t != "" {
		return t
	}
	if len(s.Cells) > 0 {
		return s.Cells[0].Params["loadgen"]
	}
	return "?"
}

func repeat(s *summary.Summary) int {
	n, err := strconv.Atoi(s.Settings["REPEAT"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// figure is one figure of a cell's (or a group's median, least or
// greatest).
type figure func(*httpphase.Figures) *float64

var (
	figRPS figure = func(f *httpphase.Figures) *float64 { return f.RPS }
	figP99 figure = func(f *httpphase.Figures) *float64 { return f.LatencyP99Ms }
)

// span formats "min–max" of a figure over the repetitions, or "" for one.
func span(g *Group, k figure, decimals int) string {
	if len(g.OK) < 2 || k(&g.Min) == nil {
		return ""
	}
	return report.N(k(&g.Min), decimals) + "–" + report.N(k(&g.Max), decimals)
}

func withSpan(g *Group, k figure, decimals int) string {
	v := report.N(k(&g.Med), decimals)
	if sp := span(g, k, decimals); sp != "" {
		v += " (" + sp + ")"
	}
	return v
}

func verdictOf(g *Group) string {
	if g.Rep == nil || g.Rep.Verdict == nil {
		return "—"
	}
	return g.Rep.Verdict.Bound
}

// Report writes Report_02-http-matrix.md and its charts.
func (Phase) Report(r *rundir.Run, s *summary.Summary) error {
	basis := httpphase.BasisFromLink(s)
	groups := Groups(s)
	plateaus := Plateaus(groups)
	byPayload := map[string]*Plateau{}
	for _, p := range plateaus {
		byPayload[p.Payload] = p
	}
	var d report.Doc
	report.Header(&d, s, "Phase 2 — HTTP matrix: payload x concurrency ("+tool(r, s)+")")

	d.H(2, "What the matrix shows")
	d.P("%s", headline(plateaus))
	stat := "Each cell ran once."
	if n := repeat(s); n > 1 {
		stat = fmt.Sprintf("Each cell ran %d times, all cells in one shuffled order (see `cells.tsv`); every figure below is the median over the repetitions, computed column by column, with the min–max in parentheses. Every repetition is in `summary.json`.", n)
	}
	loop := "the load generator keeps exactly *concurrency* connections, each with one request in flight (a closed loop)"
	if s.HTTP != nil {
		loop = "over HTTP/2 h2load keeps exactly *concurrency* connections (c), each with *streams* requests in flight (-m; a series `<payload> -m <streams>`), a closed loop of c × m requests"
	}
	d.P("%s Throughput counts HTTP bytes incl. headers and is compared with %s; %s.", stat, basis.What, loop)

	d.H(2, "Plateau per payload")
	var prow [][]string
	for _, p := range plateaus {
		if p.Knee == nil {
			prow = append(prow, []string{"`" + p.Payload + "`", "not measured", "—", "—", "—", "—", "—", "—"})
			continue
		}
		last := lastMeasured(p)
		prow = append(prow, []string{"`" + p.Payload + "`", fmt.Sprintf("**c%d**", p.Knee.Conc), report.N(p.Knee.Med.RPS, 0),
			fmt.Sprintf("%s at c%d", report.N(p.Best.Med.RPS, 0), p.Best.Conc), report.N(p.Knee.Med.ThroughputMbps, 1),
			verdictOf(p.Knee), report.N(p.Knee.Med.LatencyP99Ms, 2), fmt.Sprintf("%s at c%d", report.N(last.Med.LatencyP99Ms, 2), last.Conc)})
	}
	d.Table([]string{"payload", "plateau from", "RPS there", "best RPS", "throughput there Mbit/s", "bound there", "p99 there ms", "p99 at the largest c ms"}, prow)
	d.P("The plateau is the smallest concurrency whose RPS is within %.0f%% of the payload's best.", (1-PlateauShare)*100)

	d.H(2, "Matrix")
	for _, p := range plateaus {
		d.H(3, "Payload "+p.Payload)
		var rows [][]string
		for _, g := range p.Groups {
			rows = append(rows, trust.MarkGroupRow([]string{fmt.Sprintf("c%d", g.Conc), withSpan(g, figRPS, 0), report.N(g.Med.ThroughputMbps, 1),
				report.N(g.Med.GoodputMbps, 1), report.Pct(g.Med.LinkUtilization), report.N(g.Med.LatencyMeanMs, 2),
				report.N(g.Med.LatencyP50Ms, 2), report.N(g.Med.LatencyP95Ms, 2), withSpan(g, figP99, 2),
				report.N(g.Med.ErrorsTotal, 0), report.N(g.Med.CPU["server"].Pct, 0), report.N(g.Med.CPU["client"].Pct, 0),
				report.N(g.Med.Procs["server"].CPUPct, 0), report.N(g.Med.Procs["client"].CPUPct, 0),
				report.N(g.Med.Counters["server"].TimeWait, 0) + " / " + report.N(g.Med.Counters["client"].TimeWait, 0), verdictOf(g), g.Status()}, g.Cells, 1))
		}
		d.Table([]string{"c", "RPS", "Mbit/s", "goodput Mbit/s", "of basis", "mean ms", "p50 ms", "p95 ms", "p99 ms", "errors",
			"server host CPU %", "client host CPU %", "csb-server % of 1 CPU", tool(r, s) + " % of 1 CPU", "TIME_WAIT after (server / client)", "bound by", "status"}, rows)
	}
	d.P("Host CPU: mpstat's mean busy share of all CPUs over the cell; process CPU: pidstat, in %% of one CPU. TIME_WAIT: `/proc/net/sockstat` on each host right after the cell.")
	httpphase.ClientsSection(&d, s)
	trust.Section(&d, s.Cells)
	movingSection(&d, plateaus)
	trust.TimelineChart(&d, r.Dir, s.GeneratedBy, s.Cells)

	d.H(2, "Little's law: service or queueing?")
	d.P("In a closed loop of *c* connections, each holding one request, Little's law gives the time each request occupies its connection: W = c / RPS. Up to the plateau, W is the time to serve a request at that load (**service**). Past the plateau RPS stays flat, so W grows in step with c: the added connections only wait (**queueing**); the waiting share is the part of W above W at the plateau's knee. The tool's own mean latency should equal W (L/c = RPS x mean / c near 1): well below 1 (**short**) means time went outside the measured latency — in the load generator (client-bound) or on errors.%s%s", wrkLittleNote(tool(r, s)), h2Little(s))
	var lrows [][]string
	for _, g := range groups {
		lt := LittleOf(g, byPayload[g.Payload])
		lrows = append(lrows, []string{"`" + g.Payload + "`", fmt.Sprintf("c%d", g.Conc), report.N(g.Med.RPS, 0), report.N(lt.WMs, 3),
			report.N(g.Med.LatencyMeanMs, 3), report.N(lt.Ratio, 2), reading(lt, p99Knee(byPayload[g.Payload]), tool(r, s))})
	}
	d.Table([]string{"payload", "c", "RPS", "W = c / RPS ms", "measured mean ms", "L / c", "reading"}, lrows)

	d.H(2, "Charts")
	rpsChart := &chart.Chart{Name: "rps", Title: "RPS vs concurrency, one line per payload (" + tool(r, s) + ")", XLabel: "concurrency (connections)",
		YLabel: "requests/s (log scale)", LogX: true, LogY: true, HLine: nan}
	p99Chart := &chart.Chart{Name: "p99", Title: "p99 latency vs concurrency, one line per payload (" + tool(r, s) + ")", XLabel: "concurrency (connections)",
		YLabel: "p99 latency, ms (log scale)", LogX: true, LogY: true, HLine: nan}
	for _, p := range plateaus {
		rs, ps := chart.Series{Title: p.Payload}, chart.Series{Title: p.Payload}
		for _, g := range p.Groups {
			rs.Points = append(rs.Points, chart.Point{X: float64(g.Conc), Y: summary.Val(g.Med.RPS)})
			ps.Points = append(ps.Points, chart.Point{X: float64(g.Conc), Y: summary.Val(g.Med.LatencyP99Ms)})
		}
		rpsChart.Series = append(rpsChart.Series, rs)
		p99Chart.Series = append(p99Chart.Series, ps)
	}
	for _, ch := range []*chart.Chart{rpsChart, p99Chart} {
		svg, skipped := ch.Render(r.Dir, s.GeneratedBy)
		report.Chart(&d, ch.Title, svg, skipped)
	}

	d.H(2, "Verdict per cell")
	var vrows [][]string
	for _, g := range groups {
		ev := "—"
		if g.Rep != nil && g.Rep.Verdict != nil {
			ev = g.Rep.Verdict.Evidence
			if len(g.Cells) > 1 {
				ev = "(" + g.Rep.Name + ", the repetition nearest the median RPS) " + ev
			}
		}
		vrows = append(vrows, trust.MarkGroupRow([]string{"`" + g.Payload + "`", fmt.Sprintf("c%d", g.Conc), "**" + verdictOf(g) + "**", ev}, g.Cells, 2))
	}
	d.Table([]string{"payload", "c", "bound by", "evidence"}, vrows)
	d.P("%s", httpphase.Rules(s))

	d.H(2, "Status codes and errors")
	var srows [][]string
	for _, c := range s.Cells {
		srv := httpphase.FiguresOf(&c).Counters["server"]
		srows = append(srows, []string{"`" + c.Name + "`", c.Status, dist(c.Details["status_codes"]), dist(c.Details["errors"]),
			report.N(srv.ListenOverflows, 0), report.N(srv.RetransSegs, 0), errText(&c)})
	}
	d.Table([]string{"cell", "status", "status codes", "errors by kind", "server ListenOverflows", "server TcpRetransSegs", "note"}, srows)

	d.H(2, "Limits: file descriptors and listen backlog")
	d.P("%s", limits(r, s))

	report.Notes(&d, r.Dir)
	report.Environment(&d, s)
	report.Files(&d)
	d.P("`raw/<cell>.json` (oha) or `raw/<cell>.txt` (wrk with the `CSB_WRK_JSON` hook line) per cell, verbatim; `raw/warmup/` the unrecorded warm-ups; `raw/headers/` one response's status line and headers per payload (curl; oha counts bodies only, so its throughput is responses x that size); `monitors/client/pidstat-loadgen-<cell>.txt` pidstat on the load generator.")
	return report.Write(r.Dir, ReportName, &d)
}

var nan = summary.Val(nil)

// h2Little says how Little's law reads over HTTP/2.
func h2Little(s *summary.Summary) string {
	if s.HTTP == nil {
		return ""
	}
	return " Over HTTP/2 each connection carries m streams, each holding one request: c in these formulas is c × m, the requests in flight (W = c × m / RPS)."
}

// wrkLittleNote explains why wrk's mean latency overstates W.
func wrkLittleNote(tool string) string {
	if tool != "wrk" {
		return ""
	}
	return " " + httpphase.WrkLatencyNote + " So L/c above 1 is expected with wrk; W = c / RPS does not depend on it."
}

// p99Knee is the knee's concurrency, for the reading's wording.
func p99Knee(p *Plateau) *Group {
	if p == nil {
		return nil
	}
	return p.Knee
}

// reading words a Little check.
func reading(lt Little, knee *Group, tool string) string {
	var out string
	switch lt.Reading {
	case "":
		return "not measured"
	case "queueing":
		out = "**queueing**: RPS is on the plateau"
		if lt.QueueShare != nil && knee != nil {
			out += fmt.Sprintf("; %s of W is waiting (W at the knee c%d: %s ms)", report.Pct(lt.QueueShare), knee.Conc,
				fmtMs(float64(knee.Conc)/summary.Val(knee.Med.RPS)*1000))
		}
	default:
		out = "service"
	}
	switch lt.Consistency {
	case "short":
		out += "; **short**: fewer requests in flight than connections — the load generator (or errors) held the load back"
	case "over":
		if tool == "wrk" {
			out += "; L/c > 1: wrk's corrected latency"
		} else {
			out += "; **inconsistent**: L/c > 1.1 — check timeouts and errors"
		}
	}
	return out
}

func fmtMs(v float64) string { return report.N(summary.F(v), 2) }

func errText(c *summary.Cell) string {
	if c.Error == nil {
		return ""
	}
	return strings.ReplaceAll(*c.Error, "|", "/")
}

// dist formats a distribution from Details ("200: 1000, 503: 3").
func dist(v any) string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		if ok {
			return "none"
		}
		return "—"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %v", strings.ReplaceAll(k, "|", "/"), m[k]))
	}
	return strings.Join(parts, ", ")
}

// limits states the fd limit and somaxconn against the largest concurrency.
func limits(r *rundir.Run, s *summary.Summary) string {
	mc := maxConc(s)
	var parts []string
	refusedText := func() string {
		var refused []string
		for _, c := range s.Cells {
			if c.Status == "refused" {
				refused = append(refused, "`"+c.Name+"`")
			}
		}
		if len(refused) > 0 {
			return " Refused, not run: " + strings.Join(refused, ", ") + ". The seed's c1024 cell hit this wall and measured the client's fd limit, not the server: a refused cell says so instead."
		}
		return " Every cell got its fds."
	}
	if set := s.ClientSet(); r.Get("client.1.fd_hard") != "" {
		var hosts []string
		for _, c := range set.Clients {
			hosts = append(hosts, c.Label+" "+r.Get(fmt.Sprintf("client.%d.fd_hard", c.K)))
		}
		share := loadplan.Split(int64(mc), set.N())[0]
		parts = append(parts, fmt.Sprintf("Client hard fd limit (every tool runs with its soft limit raised to it): %s; the largest concurrency, c%d, needs %d on a host (its share, one per connection, + %d spare).%s",
			strings.Join(hosts, ", "), mc, share+loadplan.FDMargin, loadplan.FDMargin, refusedText()))
	} else if r.Get("fd_soft") != "" {
		fd := fmt.Sprintf("Client fd limit: soft %s (was %s), hard %s; the largest concurrency, c%d, needs %s (one per connection + spare).",
			r.Get("fd_soft"), r.Get("fd_soft_initial"), r.Get("fd_hard"), mc, r.Get("fd_needed_max"))
		fd += refusedText()
		parts = append(parts, fd)
	}
	if n := somaxconn(s); n > 0 {
		if n >= mc {
			parts = append(parts, fmt.Sprintf("Server `net.core.somaxconn` = %d ≥ c%d: the listen backlog can hold every connection of the largest cell arriving at once.", n, mc))
		} else {
			parts = append(parts, fmt.Sprintf("Server `net.core.somaxconn` = %d < c%d: a burst of connects can overflow the listen backlog; check ListenOverflows above (the seed's 003 lesson).", n, mc))
		}
	} else {
		parts = append(parts, "Server `net.core.somaxconn` was not captured.")
	}
	return strings.Join(parts, " ")
}

// headline is the matrix's finding: the plateau of each payload.
func headline(plateaus []*Plateau) string {
	var parts []string
	past := false
	for _, p := range plateaus {
		if p.Knee == nil {
			parts = append(parts, fmt.Sprintf("**%s**: not measured", p.Payload))
			continue
		}
		part := fmt.Sprintf("**%s** plateaus at **c%d** (%s RPS, %s Mbit/s, %s)", p.Payload, p.Knee.Conc,
			report.N(p.Knee.Med.RPS, 0), report.N(p.Knee.Med.ThroughputMbps, 0), verdictOf(p.Knee))
		last := lastMeasured(p)
		if last != p.Knee && last.Med.LatencyP99Ms != nil && p.Knee.Med.LatencyP99Ms != nil {
			past = true
			part += fmt.Sprintf("; from there to c%d RPS changes by %s while p99 goes from %s to %s ms",
				last.Conc, pctChange(p.Knee.Med.RPS, last.Med.RPS), report.N(p.Knee.Med.LatencyP99Ms, 2), report.N(last.Med.LatencyP99Ms, 2))
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "No cell was measured: see the status above and `logs/console.log`."
	}
	line := strings.Join(parts, ". ") + "."
	if past {
		line += " Past the plateau more concurrency buys no throughput; the added connections queue, and tail latency grows."
	}
	return line + " (The seed's 1 GbE lab: 1 KB plateaued at about c64, ~101k RPS; 4 KB from c64; 10 KB and 100 KB were network-bound from c16.)"
}

// lastMeasured is the payload's largest concurrency with a p99 (the knee
// at worst).
func lastMeasured(p *Plateau) *Group {
	for i := len(p.Groups) - 1; i >= 0; i-- {
		if p.Groups[i].Med.LatencyP99Ms != nil {
			return p.Groups[i]
		}
	}
	return p.Knee
}

func pctChange(from, to *float64) string {
	if from == nil || to == nil || *from == 0 {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", (*to / *from - 1)*100)
}

// movingSection says, for each point that is CPU-bound or past its
// payload's plateau (where figures move most from run to run), how much
// its RPS moved over the repetitions, or that it is a single sample.
func movingSection(d *report.Doc, plateaus []*Plateau) {
	var lines []string
	for _, p := range plateaus {
		for _, g := range p.Groups {
			var why []string
			switch verdictOf(g) {
			case httpphase.BoundServer, httpphase.BoundClient, httpphase.BoundBoth, httpphase.BoundShared:
				why = append(why, "CPU-bound")
			}
			if p.Knee != nil && g.Conc > p.Knee.Conc {
				why = append(why, fmt.Sprintf("past the plateau (from c%d)", p.Knee.Conc))
			}
			if len(why) == 0 {
				continue
			}
			var vals []*float64
			for _, c := range g.OK {
				vals = append(vals, httpphase.FiguresOf(c).RPS)
			}
			sp := trust.SpreadOf(vals)
			what := fmt.Sprintf("`%s` c%d (%s)", g.Payload, g.Conc, strings.Join(why, ", "))
			switch {
			case sp.N == 0:
				continue
			case sp.N == 1:
				lines = append(lines, fmt.Sprintf("- %s: RPS %s is a single sample; such a figure can move by several percent between runs (REPEAT=3 or more shows how much).", what, sp.Text(0)))
			default:
				lines = append(lines, fmt.Sprintf("- %s: RPS %s over %d repetitions.", what, sp.Text(0), sp.N))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	d.H(3, "Where the figures move most")
	d.P("%s", strings.Join(lines, "\n"))
}
