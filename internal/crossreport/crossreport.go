// Package crossreport builds report/README.md from the latest run of each
// phase in a results root: a "What this lab found" table, one row per
// question of Plan.md with its figure and its bound (repetitions as the
// median with min–max and the number of runs), the per-phase detail (Phase 3
// by scenario and connection count over its runs), each figure linked to
// its run's report, and the charts that span phases — HTTP throughput per
// payload against the iperf3 baseline and the line rate, RPS and p99
// against concurrency per payload, server RSS against connections.
package crossreport

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"csbench/internal/chart"
	"csbench/internal/clienthosts"
	"csbench/internal/compare"
	"csbench/internal/mdtext"
	"csbench/internal/phase2"
	"csbench/internal/report"
	"csbench/internal/rundir"
	"csbench/internal/sizes"
	"csbench/internal/summary"
)

// Phases in report order, with the question each answers.
var Phases = []struct{ Name, Question string }{
	{"00-iperf3", "What does the path carry as raw TCP?"},
	{"01-http-baseline", "Can a minimal HTTP server fill it?"},
	{"02-http-matrix", "What do payload and concurrency do to RPS and tail latency?"},
	{"03-c10k", "Can the server hold 10k, 20k … 100k connections, at what cost, and where is the wall?"},
	{"04-connections", "How many new connections a second, what does the backlog absorb, where do TIME_WAIT and the ports stop the client?"},
	{"05-capacity", "How many requests/s does the server take before its p99 leaves the budget?"},
}

// Run is one run directory used by the report.
type Run struct {
	Dir     string // as found under the root
	Summary *summary.Summary
	Report  string // the phase report's file name, "" when missing
}

// Inputs are the runs found for each phase, newest last.
type Inputs struct {
	Root string
	Runs map[string][]Run // phase -> the latest run of each runner (03-c10k has three)
	// Every is, beside each run of Runs, every run of its runner in the
	// root, in time order, the latest last: Every[phase][i] for Runs[phase][i].
	Every   map[string][][]Run
	Skipped []Skipped // run directories whose summary.json could not be read
}

// Skipped is a run directory whose summary.json Find could not read or
// refused (truncated, not JSON, another schema_version, a figure no tool
// produces), with why. The report lists it and uses the others: one
// corrupt old run does not hide a whole results root.
type Skipped struct {
	Dir    string
	Reason string // one line; the file is named summary.json, Dir says where
}

// skipReason is err on one line, the summary.json's path in it shortened
// to its name (the run directory is named beside it).
func skipReason(dir string, err error) string {
	msg := strings.ReplaceAll(err.Error(), filepath.Join(dir, summary.File), summary.File)
	return summary.OneLine(msg, 300)
}

// Warn prints one line per skipped run to w, each led by who ("report").
func (in *Inputs) Warn(w io.Writer, who string) {
	for _, s := range in.Skipped {
		fmt.Fprintf(w, "%s: skipped %s: %s\n", who, s.Dir, s.Reason)
	}
}

// PhaseDir is where a phase's runs live under root: <root>/<phase> for a
// RESULTS_ROOT, <repo>/<phase>/results for the repo itself.
func PhaseDir(root, phase string, repo bool) string {
	if repo {
		return filepath.Join(root, phase, "results")
	}
	return filepath.Join(root, phase)
}

// runnerOf is a run directory's name without its timestamp: the runner's
// run name ("iperf3-baseline", "c10k-beyond").
func runnerOf(dir string) string {
	base := filepath.Base(dir)
	if len(base) > 18 && base[10] == '_' && base[17] == '_' {
		return base[18:]
	}
	return base
}

// Find collects the latest summarized run of each runner of each phase.
func Find(root string, repo bool) (*Inputs, error) {
	in := &Inputs{Root: root, Runs: map[string][]Run{}, Every: map[string][][]Run{}}
	for _, p := range Phases {
		// Every entry of the phase's directory, by name (the timestamp
		// prefix sorts by time); root is matched by no pattern, so one
		// holding '[' or '*' is read as the directory it names.
		dirs, err := rundir.Files(PhaseDir(root, p.Name, repo), "", "")
		if err != nil {
			return nil, err
		}
		sort.Strings(dirs)
		latest := map[string]Run{}
		every := map[string][]Run{}
		var order []string
		for _, d := range dirs {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				continue
			}
			s, err := summary.LoadDir(d)
			if errors.Is(err, fs.ErrNotExist) {
				continue // not summarized (yet): not a run to report
			}
			if err != nil {
				in.Skipped = append(in.Skipped, Skipped{Dir: d, Reason: skipReason(d, err)})
				continue
			}
			if s.Phase != p.Name {
				continue
			}
			r := Run{Dir: d, Summary: s}
			if rs, _ := rundir.Files(d, "Report_", ".md"); len(rs) == 1 {
				r.Report = filepath.Base(rs[0])
			}
			k := runnerOf(d)
			if _, seen := latest[k]; !seen {
				order = append(order, k)
			}
			latest[k] = r
			every[k] = append(every[k], r)
		}
		for _, k := range order {
			in.Runs[p.Name] = append(in.Runs[p.Name], latest[k])
			in.Every[p.Name] = append(in.Every[p.Name], every[k])
		}
	}
	if len(in.Runs) == 0 {
		msg := fmt.Sprintf("no summarized run of any phase under %s", root)
		if len(in.Skipped) > 0 {
			var ss []string
			for _, s := range in.Skipped {
				ss = append(ss, s.Dir+": "+s.Reason)
			}
			msg += fmt.Sprintf(" that could be read; %d skipped: %s", len(in.Skipped), strings.Join(ss, "; "))
		}
		return nil, errors.New(msg)
	}
	return in, nil
}

func fmtN(v float64, decimals int) string {
	if math.IsNaN(v) {
		return "—"
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if decimals == 0 && math.Abs(v) >= 10000 {
		// 101234 -> 101,234
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		var b strings.Builder
		for i, ch := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(ch)
		}
		s = b.String()
		if neg {
			s = "-" + s
		}
	}
	return s
}

func iperfBaseline(in *Inputs) (float64, string) {
	for _, r := range in.Runs["00-iperf3"] {
		if c := r.Summary.Cell("s2c-1"); c != nil && iperfMbps(c) != nil {
			return *iperfMbps(c), r.Summary.RunID
		}
	}
	return math.NaN(), ""
}

// maxClients is the most client hosts any of rs was driven from (1 for
// one-client runs).
func maxClients(rs []Run) int {
	n := 1
	for _, r := range rs {
		n = max(n, compare.ClientCount(r.Summary))
	}
	return n
}

// Charts are the cross-phase charts that the inputs can fill.
func Charts(in *Inputs) []*chart.Chart {
	var out []*chart.Chart
	base, _ := iperfBaseline(in)
	rate := math.NaN()
	for _, p := range Phases {
		if rs := in.Runs[p.Name]; len(rs) > 0 && rs[0].Summary.Link.RateMbps != nil {
			rate = *rs[0].Summary.Link.RateMbps
			break
		}
	}
	// HTTP throughput per payload against the iperf3 baseline and the line rate.
	tp := &chart.Chart{Name: "http-throughput", Title: "HTTP throughput per payload vs the iperf3 baseline",
		XLabel: "payload bytes", YLabel: "Mbit/s", LogX: true, HLine: rate, HLineLbl: "line rate " + fmtN(rate, 0) + " Mbit/s"}
	var xs []float64
	if rs := in.Runs["01-http-baseline"]; len(rs) > 0 {
		ser := chart.Series{Title: "Phase 1 (wrk)"}
		for _, c := range rs[len(rs)-1].Summary.Cells {
			b, err := sizes.ParseSize(c.Params["payload"])
			if err == nil {
				ser.Points = append(ser.Points, chart.Point{X: float64(b), Y: figVal(&c, httpMbps)})
				xs = append(xs, float64(b))
			}
		}
		tp.Series = append(tp.Series, ser)
	}
	var groups []*phase2.Group
	if rs := in.Runs["02-http-matrix"]; len(rs) > 0 {
		groups = phase2.Groups(rs[len(rs)-1].Summary)
		ser := chart.Series{Title: "Phase 2 (best over concurrency)"}
		best := map[int]float64{}
		var order []int
		for _, g := range groups {
			v := summary.Val(g.Med.ThroughputMbps)
			if _, ok := best[g.Bytes]; !ok {
				order = append(order, g.Bytes)
				best[g.Bytes] = math.NaN()
			}
			if !math.IsNaN(v) && (math.IsNaN(best[g.Bytes]) || v > best[g.Bytes]) {
				best[g.Bytes] = v
			}
		}
		for _, b := range order {
			ser.Points = append(ser.Points, chart.Point{X: float64(b), Y: best[b]})
			xs = append(xs, float64(b))
		}
		tp.Series = append(tp.Series, ser)
	}
	if len(tp.Series) > 0 {
		if !math.IsNaN(base) && len(xs) > 0 {
			sort.Float64s(xs)
			tp.Series = append(tp.Series, chart.Series{Title: "iperf3 s2c-1 " + fmtN(base, 0) + " Mbit/s",
				Points: []chart.Point{{X: xs[0], Y: base}, {X: xs[len(xs)-1], Y: base}}})
		}
		out = append(out, tp)
	}
	// RPS and p99 against concurrency, one line per payload.
	if len(groups) > 0 {
		rps := &chart.Chart{Name: "rps-vs-concurrency", Title: "Phase 2: RPS vs concurrency", XLabel: "concurrency (connections)",
			YLabel: "requests/s (median, log scale)", LogX: true, LogY: true, HLine: math.NaN()}
		p99 := &chart.Chart{Name: "p99-vs-concurrency", Title: "Phase 2: p99 latency vs concurrency", XLabel: "concurrency (connections)",
			YLabel: "p99 ms (median)", LogX: true, LogY: true, HLine: math.NaN()}
		idx := map[string]int{}
		for _, g := range groups {
			i, ok := idx[g.Payload]
			if !ok {
				i = len(rps.Series)
				idx[g.Payload] = i
				rps.Series = append(rps.Series, chart.Series{Title: g.Payload})
				p99.Series = append(p99.Series, chart.Series{Title: g.Payload})
			}
			rps.Series[i].Points = append(rps.Series[i].Points, chart.Point{X: float64(g.Conc), Y: summary.Val(g.Med.RPS)})
			p99.Series[i].Points = append(p99.Series[i].Points, chart.Point{X: float64(g.Conc), Y: summary.Val(g.Med.LatencyP99Ms)})
		}
		out = append(out, rps, p99)
	}
	// Server RSS against connections held.
	if rs := in.Runs["03-c10k"]; len(rs) > 0 {
		rss := &chart.Chart{Name: "rss-vs-connections", Title: "Phase 3: server RSS vs connections", XLabel: "connections established",
			YLabel: "server RSS MB (all processes)", HLine: math.NaN()}
		by := map[string]int{}
		for _, r := range rs {
			for _, c := range r.Summary.Cells {
				y := figVal(&c, heldRSSHeld)
				if math.IsNaN(y) {
					y = figVal(&c, heldRSS)
				}
				x := figVal(&c, heldEstab)
				if math.IsNaN(x) || math.IsNaN(y) {
					continue
				}
				sc := c.Params["scenario"]
				i, ok := by[sc]
				if !ok {
					i = len(rss.Series)
					by[sc] = i
					rss.Series = append(rss.Series, chart.Series{Title: sc})
				}
				rss.Series[i].Points = append(rss.Series[i].Points, chart.Point{X: x, Y: y})
			}
		}
		for i := range rss.Series {
			sort.Slice(rss.Series[i].Points, func(a, b int) bool { return rss.Series[i].Points[a].X < rss.Series[i].Points[b].X })
		}
		if len(rss.Series) > 0 {
			out = append(out, rss)
		}
	}
	return out
}

// Write renders report/README.md and the charts into out. Links to the
// phase reports are relative to out.
func Write(in *Inputs, out, generatedBy string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var d report.Doc
	fmt.Fprintf(&d, "<!-- Generated by `%s`; do not edit. -->\n\n", generatedBy)
	d.H(1, "CS Benchmark — summary across phases")
	d.P("Built from the latest run of each phase (and of each Phase 3 runner) under %s. Each finding links to the phase's own report, where every figure has its raw output and its evidence.", mdtext.Code(in.Root))
	labs := map[string]bool{}
	for _, rs := range in.Runs {
		for _, r := range rs {
			labs[mdtext.Text(r.Summary.Lab)+" / "+mdtext.Text(r.Summary.Profile)] = true
		}
	}
	var ls []string
	for k := range labs {
		ls = append(ls, k)
	}
	sort.Strings(ls)
	d.P("Lab / profile of these runs: %s.%s", strings.Join(ls, ", "), emulatedNote(in))

	l := newLinker(in, out)
	d.H(2, "What this lab found")
	d.P("One row per question of `Plan.md`: the figure that answers it and what bound it (the verdict of each cell, counted), from the runs linked in the last column. Repetitions are the median with the least and greatest (min–max) and the number of runs.")
	d.Table([]string{"question", "finding: figure and bound", "report"}, findingRows(in, l))
	details(&d, in, l)

	d.H(2, "Charts")
	charts := Charts(in)
	if len(charts) == 0 {
		d.P("No chart: no run has the cells a chart needs.")
	}
	for _, c := range charts {
		svg, skipped := c.Render(out, generatedBy)
		report.Chart(&d, c.Title, svg, skipped)
	}
	d.H(2, "Runs used")
	var runRows [][]string
	multi := false
	for _, p := range Phases {
		multi = multi || maxClients(in.Runs[p.Name]) > 1
	}
	for _, p := range Phases {
		for _, r := range in.Runs[p.Name] {
			s := r.Summary
			row := []string{"`" + p.Name + "`", mdtext.CodeCell(rel(out, r.Dir)), mdtext.Text(s.Status), mdtext.Text(s.Lab), mdtext.Text(s.Profile),
				mdtext.Text(s.StartedAt), mdtext.CodeCell(shortCommit(s.Git.Commit))}
			if multi {
				row = append(row, strconv.Itoa(compare.ClientCount(r.Summary)))
			}
			runRows = append(runRows, row)
		}
	}
	head := []string{"phase", "run directory", "status", "lab", "profile", "started (UTC)", "commit"}
	if multi {
		head = append(head, "client hosts")
	}
	d.Table(head, runRows)
	skipped(&d, in, out)
	if len(l.defs) > 0 {
		d.WriteString(strings.Join(l.defs, "\n") + "\n")
	}
	return report.Write(out, "README.md", &d)
}

// skipped lists the run directories Find could not read, each with why;
// nothing when there are none.
func skipped(d *report.Doc, in *Inputs, out string) {
	if len(in.Skipped) == 0 {
		return
	}
	d.H(2, "Skipped runs")
	d.P("These run directories hold a summary.json that could not be read or was refused; the report is made without them. `bin/csb summarize <run directory>` regenerates one from its raw files.")
	var rows [][]string
	for _, s := range in.Skipped {
		rows = append(rows, []string{mdtext.CodeCell(rel(out, s.Dir)), mdtext.Text(s.Reason)})
	}
	d.Table([]string{"run directory", "why"}, rows)
}

// emulatedNote says, for runs on an emulated lab (netns, local: every host
// on one machine), what each run had of its CPUs, from the run's own
// record: the CPU model and count of its host facts, and whether each host
// was pinned to CPUs of its own (summary.json's cpu_pin: then a host's
// facts count its own set). Runs alike are said once: the largest group as
// "every other run", the rest by name. "" when every run was on separate
// machines (LAB=ssh).
func emulatedNote(in *Inputs) string {
	type group struct {
		text string
		runs []string
	}
	var groups []*group
	by := map[string]*group{}
	clients, pinned, n := 1, 0, 0
	for _, p := range Phases {
		for _, r := range in.Runs[p.Name] {
			if r.Summary.Lab == "ssh" {
				continue
			}
			n++
			clients = max(clients, compare.ClientCount(r.Summary))
			if r.Summary.Pin != nil {
				pinned++
			}
			t := cpusText(r.Summary)
			g := by[t]
			if g == nil {
				g = &group{text: t}
				by[t] = g
				groups = append(groups, g)
			}
			g.runs = append(g.runs, mdtext.Code(filepath.Base(r.Dir)))
		}
	}
	if n == 0 {
		return ""
	}
	big := 0
	for i, g := range groups {
		if len(g.runs) > len(groups[big].runs) {
			big = i
		}
	}
	var parts []string
	for i, g := range groups {
		if i != big {
			parts = append(parts, "in "+strings.Join(g.runs, ", ")+" "+g.text)
		}
	}
	if len(groups) == 1 {
		parts = append(parts, "in every run "+groups[big].text)
	} else {
		parts = append(parts, "in every other run "+groups[big].text)
	}
	whose, apart := "this host's", "two machines'"
	if pinned == n {
		whose = "those CPUs'"
	}
	if clients > 1 {
		apart = "separate machines'"
	}
	return fmt.Sprintf(" These were made on an emulated lab, every host on one machine: %s. CPU-bound figures are %s, not %s.", strings.Join(parts, "; "), whose, apart)
}

// cpusText is what one run had of its machine's CPUs: "server and client
// shared the 2 CPUs of one host (model)", or "server and client ran on 2
// CPUs of one host (model), each host pinned to a CPU of its own (server
// CPU 0, client CPU 1)".
func cpusText(s *summary.Summary) string {
	who := "server and client"
	if n := compare.ClientCount(s); n > 1 {
		who = fmt.Sprintf("the server and %d clients", n)
	}
	h := s.Hosts["server"]
	if s.Pin == nil {
		c := report.N(h.CPUs, 0) + " CPUs"
		if summary.Val(h.CPUs) == 1 {
			c = "one CPU"
		}
		return fmt.Sprintf("%s shared the %s of one host (%s)", who, c, mdtext.Text(h.CPUModel))
	}
	own := "a CPU"
	if clienthosts.CPUCount(s.Pin.Server) != 1 || clienthosts.CPUCount(s.Pin.Client) != 1 {
		own = "CPUs"
	}
	return fmt.Sprintf("%s ran on %d CPUs of one host (%s), each host pinned to %s of its own (%s)", who, len(cpuUnion(s.Pin)), mdtext.Text(h.CPUModel), own, pinText(s))
}

// pinText: "server CPU 0, client CPU 1", "server CPU 0, clients CPUs 1-3"
// (CPU_PIN puts every client host on the same set).
func pinText(s *summary.Summary) string {
	cpus := func(set string) string {
		if clienthosts.CPUCount(set) == 1 {
			return "CPU " + set
		}
		return "CPUs " + set
	}
	client := "client"
	if compare.ClientCount(s) > 1 {
		client = "clients"
	}
	return "server " + cpus(s.Pin.Server) + ", " + client + " " + cpus(s.Pin.Client)
}

// cpuUnion is the CPUs of the server's and the clients' sets together.
func cpuUnion(p *summary.Pin) map[string]bool {
	u := map[string]bool{}
	for _, c := range append(clienthosts.ExpandCPUs(p.Server), clienthosts.ExpandCPUs(p.Client)...) {
		u[c] = true
	}
	return u
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func rel(from, to string) string {
	af, err1 := filepath.Abs(from)
	at, err2 := filepath.Abs(to)
	if err1 != nil || err2 != nil {
		return to
	}
	r, err := filepath.Rel(af, at)
	if err != nil {
		return to
	}
	return filepath.ToSlash(r)
}
