package crossreport

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"csbench/internal/mdtext"
	"csbench/internal/phase4"
	"csbench/internal/report"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// This file renders what stats.go computed: the "What this lab found"
// table, one row per question of Plan.md, and the per-phase detail. No
// figure is computed here; each is written as stats.go left it.

// MaxRowLen is the longest a row of the findings table should be, in
// characters (runes) of its Markdown line: a line a person reads.
const MaxRowLen = 400

// Question is one question of Plan.md and the phase that answers it.
type Question struct {
	N     int
	Text  string
	Phase string // "" for a question answered across phases (TLS)
}

// Questions are Plan.md's, in its order, as the findings table asks them.
var Questions = []Question{
	{1, "Link ceiling: what does the path carry as raw TCP?", "00-iperf3"},
	{2, "Can a minimal HTTP server fill it?", "01-http-baseline"},
	{3, "Where does RPS plateau over concurrency?", "02-http-matrix"},
	{4, "Connections held: how many, at what cost?", "03-c10k"},
	{5, "Connection setup: rate, backlog, ports?", "04-connections"},
	{6, "Capacity within a latency budget?", "05-capacity"},
	{7, "What does TLS cost?", ""},
}

// linker names each run's report: Markdown reference links ([runner][rN])
// keep the table's rows short, their targets listed once at the end.
type linker struct {
	out    string
	labels map[string]string // run dir -> rN
	defs   []string
}

func newLinker(in *Inputs, out string) *linker {
	l := &linker{out: out, labels: map[string]string{}}
	n := 0
	for _, p := range Phases {
		for _, r := range in.Runs[p.Name] {
			n++
			if r.Report == "" {
				continue
			}
			lab := "r" + strconv.Itoa(n)
			l.labels[r.Dir] = lab
			l.defs = append(l.defs, fmt.Sprintf("[%s]: %s", lab, mdtext.Target(rel(out, filepath.Join(r.Dir, r.Report)))))
		}
	}
	return l
}

// ref is a link to r's report by its runner's name; the name in code when
// the run has no report.
func (l *linker) ref(r Run) string {
	name := runnerOf(r.Dir)
	lab, ok := l.labels[r.Dir]
	if !ok {
		return mdtext.CodeCell(name)
	}
	s := "[" + mdtext.Label(name) + "][" + lab + "]"
	if r.Summary.Status != "ok" {
		s += " (" + mdtext.Text(r.Summary.Status) + ")"
	}
	return s
}

// inline is the same link written in full ([name](path)).
func (l *linker) inline(r Run) string {
	if r.Report == "" {
		return mdtext.CodeCell(runnerOf(r.Dir))
	}
	return mdtext.Link(runnerOf(r.Dir), rel(l.out, filepath.Join(r.Dir, r.Report)))
}

func (l *linker) refs(rs []Run) string {
	var parts []string
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Dir] {
			seen[r.Dir] = true
			parts = append(parts, l.ref(r))
		}
	}
	return strings.Join(parts, " ")
}

// val writes v with decimals places, thousands separated from 10,000.
func val(v float64, decimals int) string { return fmtN(v, decimals) }

func valp(p *float64, decimals int) string { return fmtN(summary.Val(p), decimals) }

// span is "min–max", or the one value when both write the same.
func span(sp trust.Spread, decimals int) string {
	if sp.N == 0 {
		return "—"
	}
	lo, hi := val(sp.Min, decimals), val(sp.Max, decimals)
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}

// rep is a figure over repetitions: "M unit median (min–max, N runs)", the
// value alone for one run, "—" for none.
func rep(sp trust.Spread, decimals int, unit string) string {
	u := ""
	if unit != "" {
		u = " " + unit
	}
	switch sp.N {
	case 0:
		return "—"
	case 1:
		return val(sp.Median, decimals) + u
	}
	if r := span(sp, decimals); r != val(sp.Min, decimals) {
		return fmt.Sprintf("%s%s median (%s, %d runs)", val(sp.Median, decimals), u, r, sp.N)
	}
	return fmt.Sprintf("%s%s (each of %d runs)", val(sp.Median, decimals), u, sp.N)
}

// pctSpan is a ratio's min–max as a percentage ("76–86 %").
func pctSpan(sp trust.Spread) string {
	if sp.N == 0 {
		return "—"
	}
	return span(trust.Spread{N: sp.N, Min: sp.Min * 100, Max: sp.Max * 100}, 0) + " %"
}

// bounds writes the verdict codes of a group: "network-bound 5/5",
// "network-bound 3/5, unclear 2/5"; the code alone for one cell.
func bounds(bs []boundCount) string {
	total := 0
	for _, b := range bs {
		total += b.N
	}
	if total == 0 {
		return "no verdict"
	}
	if total == 1 {
		return bs[0].Code
	}
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = fmt.Sprintf("%s %d/%d", b.Code, b.N, total)
	}
	return strings.Join(parts, ", ")
}

// kConns writes a connection count as the plan names it: 10k, 100k.
func kConns(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return strconv.Itoa(n/1000) + "k"
	}
	return val(float64(n), 0)
}

func errText(es []errCount) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Code + " " + val(e.N, 0)
	}
	return strings.Join(parts, ", ")
}

func basisName(s *summary.Summary) string {
	if s.Link.BaselineMbps != nil {
		return "Phase 0"
	}
	return "the TCP ceiling"
}

// --- the findings table ---

func finding0(st iperfStat) string {
	names := make([]string, len(st.Cells))
	for i, c := range st.Cells {
		names[i] = c.Name
	}
	t := fmt.Sprintf("%s Mbit/s over %d cells (%s)", span(st.Throughput, 0), len(st.Cells), strings.Join(names, ", "))
	if st.CeilingMbs != nil {
		t += fmt.Sprintf(", TCP ceiling %s Mbit/s", report.N(st.CeilingMbs, 1))
	}
	return t + "; bound: " + bounds(st.Bounds)
}

func finding1(s *summary.Summary, ps []payloadStat) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("**%s**: %s, %s of %s, %s", p.Payload, rep(p.RPS, 0, "RPS"), pctSpan(p.Util), basisName(s), bounds(p.Bounds))
	}
	return strings.Join(parts, "; ")
}

func finding2(s *summary.Summary, ps []plateauStat) string {
	var parts []string
	for _, p := range ps {
		if p.Knee == nil {
			parts = append(parts, "**"+p.Payload+"**: no plateau measured")
			continue
		}
		t := fmt.Sprintf("**%s** from c%d: %s, %s", p.Payload, p.Knee.Conc, rep(p.Knee.RPS, 0, "RPS"), bounds(p.Knee.Bounds))
		if p.Best != p.Knee {
			t += fmt.Sprintf(" (best c%d)", p.Best.Conc)
		}
		parts = append(parts, t)
	}
	t := strings.Join(parts, "; ")
	if s.HasNote(summary.NoteWrkForOha) {
		t += "; wrk stood in for oha"
	}
	return t
}

func finding3(ss []scenarioStat) string {
	var parts []string
	for _, s := range ss {
		t := "**" + s.Scenario + "**"
		if s.Loads.N > 0 {
			t += " " + span(s.Loads, 0) + " RPS"
		}
		var held []string
		if s.HeldUpTo > 0 {
			held = append(held, "all held to "+kConns(s.HeldUpTo))
			if s.P99ms.N > 0 {
				held = append(held, "p99 "+span(s.P99ms, 2)+" ms")
			}
			if s.Loads.N == 0 && s.RPS.N > 0 {
				held = append(held, span(s.RPS, 0)+" RPS")
			}
			held = append(held, span(s.RSSKiB, 1)+" KiB/conn")
		}
		if g := s.FirstLoss; g != nil {
			l := fmt.Sprintf("%s: %s/%s", kConns(g.Conns), span(g.Held, 0), val(g.Target, 0))
			if len(g.Errors) > 0 {
				l += " (" + errText(g.Errors) + ")"
			} else {
				l += " held"
			}
			held = append(held, l)
		}
		parts = append(parts, t+": "+strings.Join(held, ", "))
	}
	return strings.Join(parts, "; ")
}

// closeWho is who ends a churn connection, by its close parameter.
func closeWho(v string) string {
	switch v {
	case "client":
		return "client closes"
	case "server":
		return "server closes"
	case "linger0":
		return "client resets"
	}
	return v
}

// stepWord is a rate step's verdict code in words: phase4.BoundNone on a
// rate step is a rate sustained.
func stepWord(st rateStep) string {
	if st.Sustained {
		return "sustained"
	}
	return phase4.Word(st.Code)
}

func burstWord(b burst) string {
	if b.Code == phase4.BoundNone {
		return "absorbed"
	}
	return phase4.Word(b.Code)
}

func finding4(cs connStat) string {
	var parts []string
	var churn []string
	for _, g := range cs.Churn {
		t := closeWho(g.Close) + " "
		if g.Best != nil {
			t += valp(g.Best.Achieved, 0) + "/s"
		} else {
			t += "none"
		}
		if g.Wall != nil && g.Best == nil {
			t += fmt.Sprintf(" (%s at %s/s", phase4.Word(g.Wall.Code), valp(g.Wall.Target, 0))
			if g.PredictedRate != nil {
				t += ", predicted " + valp(g.PredictedRate, 1) + "/s"
			}
			t += ")"
		}
		churn = append(churn, t)
	}
	if len(churn) > 0 {
		parts = append(parts, "churn sustained: "+strings.Join(churn, ", "))
	}
	var bl []string
	for _, b := range cs.Bursts {
		t := fmt.Sprintf("backlog %s, burst %s: %s", valp(b.Backlog, 0), valp(b.Burst, 0), burstWord(b))
		if summary.Val(b.Overflows) > 0 {
			t += " (" + valp(b.Overflows, 0) + " overflows)"
		}
		bl = append(bl, t)
	}
	parts = append(parts, bl...)
	for _, g := range cs.Accept {
		what := "accept"
		if g.Handshake != "" {
			what = g.Handshake + " TLS handshakes"
		}
		t := what + " "
		if g.Best != nil {
			t += valp(g.Best.Achieved, 0) + "/s sustained"
			if g.CPUus != nil {
				t += " (" + valp(g.CPUus, 0) + " µs server CPU each)"
			}
		} else {
			t += "no step sustained"
		}
		if g.Wall != nil && (g.Best == nil || summary.Val(g.Wall.Target) > summary.Val(g.Best.Target)) {
			t += fmt.Sprintf(", %s from %s/s", phase4.Word(g.Wall.Code), valp(g.Wall.Target, 0))
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "no cell ran"
	}
	return strings.Join(parts, "; ")
}

func findingTLS(rs []Run) string {
	if len(rs) == 0 {
		return "not measured: every run here used http (run with SCHEME=https, then `csb compare` the two)"
	}
	return fmt.Sprintf("%d run(s) over https: their reports give RPS, CPU and handshakes; `csb compare` sets them against http", len(rs))
}

// clientsPrefix says a finding's runs were driven from several client
// hosts.
func clientsPrefix(rs []Run) string {
	if n := maxClients(rs); n > 1 {
		return fmt.Sprintf("**%d client hosts** (rates and throughputs summed, latency percentiles merged): ", n)
	}
	return ""
}

// findingRows are the rows of "What this lab found": question, finding,
// the reports it comes from.
func findingRows(in *Inputs, l *linker) [][]string {
	var rows [][]string
	for _, q := range Questions {
		var text string
		var rs []Run
		if q.Phase == "" {
			rs = httpsRuns(in)
			text = findingTLS(rs)
		} else {
			rs = in.Runs[q.Phase]
			if len(rs) == 0 {
				continue
			}
			last := rs[len(rs)-1]
			switch q.Phase {
			case "00-iperf3":
				text = finding0(phase0Stat(last))
			case "01-http-baseline":
				text = finding1(last.Summary, phase1Stats(last.Summary))
			case "02-http-matrix":
				text = finding2(last.Summary, phase2Stats(last.Summary))
			case "03-c10k":
				text = finding3(scenarioStats(phase3Stats(rs)))
			case "04-connections":
				text = finding4(phase4Stat(last.Summary))
			case "05-capacity":
				text = finding5(in, rs)
			}
			if q.Phase != "03-c10k" && q.Phase != "05-capacity" {
				rs = rs[len(rs)-1:]
			}
			text = clientsPrefix(rs) + text
		}
		links := l.refs(rs)
		if links == "" {
			links = "—"
		}
		rows = append(rows, []string{fmt.Sprintf("%d. %s", q.N, q.Text), text + ".", links})
	}
	return rows
}

// --- the per-phase detail ---

func bullets(d *report.Doc, lines []string) {
	if len(lines) == 0 {
		return
	}
	d.P("%s", "- "+strings.Join(lines, "\n- "))
}

func detail0(d *report.Doc, l *linker, st iperfStat) {
	d.H(3, "Phase 0: raw TCP — "+l.inline(st.Run))
	var lines []string
	for _, c := range st.Cells {
		b := "no verdict"
		if c.Verdict != nil {
			b = c.Verdict.Bound
		}
		lines = append(lines, fmt.Sprintf("`%s`: %s Mbit/s, %s retransmits; %s", c.Name, valp(iperfMbps(c), 1), valp(iperfRetr(c), 0), b))
	}
	bullets(d, lines)
}

func detail1(d *report.Doc, l *linker, r Run, ps []payloadStat) {
	d.H(3, "Phase 1: HTTP baseline — "+l.inline(r))
	var lines []string
	for _, p := range ps {
		t := fmt.Sprintf("**%s** (%d of %d runs measured): %s; %s = %s of %s; p99 %s; %s",
			p.Payload, p.RPS.N, p.Runs, rep(p.RPS, 0, "RPS"), rep(p.Mbps, 1, "Mbit/s"), pctSpan(p.Util), basisName(r.Summary), rep(p.P99ms, 2, "ms"), bounds(p.Bounds))
		lines = append(lines, t)
	}
	bullets(d, lines)
}

func detail2(d *report.Doc, l *linker, r Run, ps []plateauStat) {
	d.H(3, "Phase 2: payload × concurrency — "+l.inline(r))
	var lines []string
	for _, p := range ps {
		var pts []string
		for _, pt := range p.Points {
			pts = append(pts, fmt.Sprintf("c%d %s, p99 %s", pt.Conc, rep(pt.RPS, 0, "RPS"), rep(pt.P99ms, 2, "ms")))
		}
		t := "**" + p.Payload + "**: " + strings.Join(pts, " · ")
		if p.Knee != nil {
			t += fmt.Sprintf("; plateau from c%d (%s)", p.Knee.Conc, bounds(p.Knee.Bounds))
		}
		lines = append(lines, t)
	}
	bullets(d, lines)
	if r.Summary.HasNote(summary.NoteWrkForOha) {
		d.P("wrk stood in for oha in this run.")
	}
}

func detail3(d *report.Doc, l *linker, rs []Run, ss []scenarioStat) {
	var names []string
	for _, r := range rs {
		names = append(names, l.inline(r))
	}
	d.H(3, "Phase 3: connections held — "+strings.Join(names, ", "))
	d.P("By scenario and connection count; every connection was held unless a count says otherwise. KiB/conn is the server's RSS per held connection; p99 is from the due time.")
	var lines []string
	for _, s := range ss {
		var pts []string
		for _, g := range s.Groups {
			var runs []Run
			for _, hc := range g.Cells {
				runs = append(runs, hc.Run)
			}
			var fs []string
			if g.Load != "" && s.Scenario == "active" {
				fs = append(fs, "on "+g.Load)
			} else if g.Load != "" {
				fs = append(fs, g.Load+" RPS offered")
			}
			if g.Lost {
				h := fmt.Sprintf("%s/%s held", rep(g.Held, 0, ""), val(g.Target, 0))
				if len(g.Errors) > 0 {
					h += " (" + errText(g.Errors) + ")"
				}
				fs = append(fs, h)
			}
			if s.Scenario == "active" {
				fs = append(fs, rep(g.RPS, 0, "RPS"))
			}
			if g.P99ms.N > 0 {
				fs = append(fs, "p99 "+rep(g.P99ms, 2, "ms"))
			}
			fs = append(fs, rep(g.RSSKiB, 1, "KiB/conn"))
			if g.RampShort {
				fs = append(fs, "connect ramp short of its rate")
			}
			pts = append(pts, fmt.Sprintf("%s: %s %s", kConns(g.Conns), strings.Join(fs, ", "), l.refs(runs)))
		}
		lines = append(lines, "**"+s.Scenario+"** — "+strings.Join(pts, " · "))
	}
	bullets(d, lines)
}

func stepText(st rateStep) string {
	t := fmt.Sprintf("%s/s: %s/s", valp(st.Target, 0), valp(st.Achieved, 0))
	if st.P99ms != nil {
		t += ", p99 " + valp(st.P99ms, 2) + " ms"
	}
	return t + ", " + stepWord(st)
}

func detail4(d *report.Doc, l *linker, r Run, cs connStat) {
	d.H(3, "Phase 4: connection setup — "+l.inline(r))
	d.P("Each step: the rate asked for, the rate achieved, the p99 from the due time, and the verdict.")
	var lines []string
	for _, g := range cs.Churn {
		var steps []string
		for _, st := range g.Steps {
			steps = append(steps, stepText(st))
		}
		t := "**churn, the " + closeWho(g.Close) + "**: " + strings.Join(steps, " · ")
		if g.PredictedRate != nil {
			t += "; predicted sustainable " + valp(g.PredictedRate, 1) + "/s"
		}
		lines = append(lines, t)
	}
	for _, b := range cs.Bursts {
		lines = append(lines, fmt.Sprintf("**backlog %s**, a burst of %s connects: %s ListenOverflows, %s never up, p99 %s ms; %s",
			valp(b.Backlog, 0), valp(b.Burst, 0), valp(b.Overflows, 0), valp(b.NeverUp, 0), valp(b.P99ms, 1), burstWord(b)))
	}
	for _, g := range cs.Accept {
		what := "accept"
		if g.Handshake != "" {
			what = g.Handshake + " TLS handshakes"
		}
		var steps []string
		for _, st := range g.Steps {
			steps = append(steps, stepText(st))
		}
		t := "**" + what + "**: " + strings.Join(steps, " · ")
		if g.CPUus != nil {
			t += fmt.Sprintf("; server CPU at the highest rate sustained: %s µs each", valp(g.CPUus, 1))
		}
		lines = append(lines, t)
	}
	bullets(d, lines)
}

// details writes the per-phase detail of every phase that has runs.
func details(d *report.Doc, in *Inputs, l *linker) {
	d.H(2, "Phase by phase")
	d.P("Repetitions (REPEAT, or one scenario measured by several runs) are given as the median, then the least and greatest (min–max) and the number of runs; each figure links to the report of its run, where every repetition and its raw output are.")
	for _, p := range Phases {
		rs := in.Runs[p.Name]
		if len(rs) == 0 {
			continue
		}
		last := rs[len(rs)-1]
		switch p.Name {
		case "00-iperf3":
			detail0(d, l, phase0Stat(last))
		case "01-http-baseline":
			detail1(d, l, last, phase1Stats(last.Summary))
		case "02-http-matrix":
			detail2(d, l, last, phase2Stats(last.Summary))
		case "03-c10k":
			detail3(d, l, rs, scenarioStats(phase3Stats(rs)))
		case "04-connections":
			detail4(d, l, last, phase4Stat(last.Summary))
		case "05-capacity":
			detail5(d, l, in, rs)
		}
	}
}

// causeWords are Phase 5's cause codes in a few words.
var causeWords = map[string]string{"server_cpu": "the server's CPU", "link": "the link", "slots": "the slots",
	"errors": "errors", "client": "the client", "unexplained": "neither CPU nor link", "nginx_cork": "nginx's tcp_nopush, not load"}

// capacityText is one payload's capacity in a few words: "1k 11,375
// (the link)", "1k ≥ 32,000 (the client)".
func capacityText(c summary.Capacity) string {
	v := "none"
	if c.CapacityRPS != nil {
		v = valp(c.CapacityRPS, 0)
		if c.HighRPS == nil || c.Bound == "max_steps" || c.Bound == "max_time" {
			v = "≥ " + v
		}
	}
	why := causeWords[c.Cause]
	if why == "" {
		why = map[string]string{"max_steps": "steps ran out", "max_time": "time ran out", "never_met": "SLO never met", "cut_short": "cut short"}[c.Bound]
	}
	if why != "" {
		v += " (" + why + ")"
	}
	return c.Payload + " " + v
}

// phase2Beside is Phase 2's closed-loop maximum at payload in the newest
// Phase 2 run of the report with r's lab, server kind and pinning (a
// pinned server has one core, an unpinned one two), NaN for none.
func phase2Beside(in *Inputs, r Run, payload string) float64 {
	best := math.NaN()
	for _, p2 := range in.Runs["02-http-matrix"] {
		s := p2.Summary
		if s.Lab != r.Summary.Lab || s.Server == nil || r.Summary.Server == nil || s.Server.Kind != r.Summary.Server.Kind || (s.Pin == nil) != (r.Summary.Pin == nil) {
			continue
		}
		best = math.NaN()
		for i := range s.Cells {
			if v := figVal(&s.Cells[i], httpRPS); s.Cells[i].Params["payload"] == payload && s.Cells[i].Status == "ok" && !(v <= best) {
				best = v
			}
		}
	}
	return best
}

// finding5: per run (server) the capacity of each payload at the SLO.
func finding5(in *Inputs, rs []Run) string {
	var parts []string
	for _, r := range rs {
		s := r.Summary
		var ps []string
		for _, c := range s.Capacity {
			ps = append(ps, capacityText(c))
		}
		if len(ps) == 0 {
			continue
		}
		name := serverName(s)
		c0 := s.Capacity[0]
		parts = append(parts, fmt.Sprintf("%s at p%g ≤ %g ms: %s req/s", name, c0.SLOPercentile, c0.SLOLatencyMs, strings.Join(ps, ", ")))
	}
	if len(parts) == 0 {
		return "no capacity found"
	}
	return strings.Join(parts, "; ")
}

// serverName is the kind of s's server, with nginx's tcp_nopush when it
// was off (not as nginx ships: Phase 5's 10 KB figures differ by it).
func serverName(s *summary.Summary) string {
	switch {
	case s.Server == nil:
		return "server"
	case s.Server.TCPNopush() == "off":
		return s.Server.Kind + " (tcp_nopush off)"
	}
	return s.Server.Kind
}

// detail5: per run and payload the capacity, its bracket, what bounded
// it, and Phase 2's closed-loop maximum of the same lab and server beside.
func detail5(d *report.Doc, l *linker, in *Inputs, rs []Run) {
	d.H(3, "Phase 5 — capacity within a latency budget")
	var lines []string
	for _, r := range rs {
		s := r.Summary
		name := serverName(s)
		for _, c := range s.Capacity {
			line := fmt.Sprintf("%s %s: %s req/s at p%g ≤ %g ms", name, c.Payload, valp(c.CapacityRPS, 0), c.SLOPercentile, c.SLOLatencyMs)
			if c.LowRPS != nil && c.HighRPS != nil {
				line += fmt.Sprintf(" (bracket %s–%s)", valp(c.LowRPS, 0), valp(c.HighRPS, 0))
			}
			if c.Cause != "" {
				line += ", bound by " + causeWords[c.Cause]
			} else if c.Bound != "" {
				line += ", ended by " + c.Bound
			}
			if m := phase2Beside(in, r, c.Payload); !math.IsNaN(m) {
				line += fmt.Sprintf("; Phase 2's closed-loop maximum %s RPS", val(m, 0))
				if c.CapacityRPS != nil {
					line += fmt.Sprintf(" (the SLO holds to %s %% of it)", val(100**c.CapacityRPS/m, 0))
				}
			}
			lines = append(lines, line+" "+l.inline(r))
		}
	}
	bullets(d, lines)
}
