// Package crossreport builds report/README.md: the latest run of each phase
// in a results root, one line of findings per phase with its figures, links
// to each phase's report, and the charts that span phases — HTTP throughput
// per payload against the iperf3 baseline and the line rate, RPS and p99
// against concurrency per payload, server RSS against connections.
package crossreport

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"csbench/internal/chart"
	"csbench/internal/compare"
	"csbench/internal/phase2"
	"csbench/internal/phase4"
	"csbench/internal/report"
	"csbench/internal/server"
	"csbench/internal/summary"
)

// Phases in report order, with the question each answers.
var Phases = []struct{ Name, Question string }{
	{"00-iperf3", "What does the path carry as raw TCP?"},
	{"01-http-baseline", "Can a minimal HTTP server fill it?"},
	{"02-http-matrix", "What do payload and concurrency do to RPS and tail latency?"},
	{"03-c10k", "Can the server hold 10k, 20k … 100k connections, at what cost, and where is the wall?"},
	{"04-connections", "How many new connections a second, what does the backlog absorb, where do TIME_WAIT and the ports stop the client?"},
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
	in := &Inputs{Root: root, Runs: map[string][]Run{}}
	for _, p := range Phases {
		dirs, _ := filepath.Glob(filepath.Join(PhaseDir(root, p.Name, repo), "*"))
		sort.Strings(dirs) // the timestamp prefix sorts by time
		latest := map[string]Run{}
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
				return nil, err
			}
			if s.Phase != p.Name {
				continue
			}
			r := Run{Dir: d, Summary: s}
			if rs, _ := filepath.Glob(filepath.Join(d, "Report_*.md")); len(rs) == 1 {
				r.Report = filepath.Base(rs[0])
			}
			k := runnerOf(d)
			if _, seen := latest[k]; !seen {
				order = append(order, k)
			}
			latest[k] = r
		}
		for _, k := range order {
			in.Runs[p.Name] = append(in.Runs[p.Name], latest[k])
		}
	}
	if len(in.Runs) == 0 {
		return nil, fmt.Errorf("no summarized run of any phase under %s", root)
	}
	return in, nil
}

func metric(c *summary.Cell, k string) float64 { return summary.Val(c.Metrics[k]) }

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

// Finding is one phase's line of the headline table.
type Finding struct {
	Phase, Question, Text string
	Runs                  []Run
}

func iperfBaseline(in *Inputs) (float64, string) {
	for _, r := range in.Runs["00-iperf3"] {
		if c := r.Summary.Cell("s2c-1"); c != nil && c.Metrics["throughput_mbps"] != nil {
			return *c.Metrics["throughput_mbps"], r.Summary.RunID
		}
	}
	return math.NaN(), ""
}

func phase0Finding(rs []Run) string {
	s := rs[len(rs)-1].Summary
	var parts []string
	link := 0
	for _, c := range s.Cells {
		parts = append(parts, fmt.Sprintf("%s %s", c.Name, fmtN(metric(&c, "throughput_mbps"), 0)))
		if c.Verdict != nil && c.Verdict.Bound == "link" {
			link++
		}
	}
	t := "Mbit/s: " + strings.Join(parts, ", ") + "."
	if s.Link.TCPCeilingMbps != nil {
		t += fmt.Sprintf(" %d of %d cells at the %s Mbit/s TCP ceiling.", link, len(s.Cells), report.N(s.Link.TCPCeilingMbps, 1))
	}
	return t
}

func phase1Finding(rs []Run) string {
	s := rs[len(rs)-1].Summary
	var parts []string
	for _, c := range s.Cells {
		b := "—"
		if c.Verdict != nil {
			b = c.Verdict.Bound
		}
		p := fmt.Sprintf("%s: %s RPS, %s Mbit/s", c.Params["payload"], fmtN(metric(&c, "rps"), 0), fmtN(metric(&c, "throughput_mbps"), 0))
		if u := metric(&c, "link_utilization"); !math.IsNaN(u) {
			p += fmt.Sprintf(" (%.0f%% of Phase 0)", u*100)
		}
		parts = append(parts, p+", "+b)
	}
	return strings.Join(parts, "; ") + "."
}

func phase2Finding(rs []Run) string {
	s := rs[len(rs)-1].Summary
	var parts []string
	for _, p := range phase2.Plateaus(phase2.Groups(s)) {
		if p.Knee == nil {
			parts = append(parts, p.Payload+": no plateau measured")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s plateaus at c%d (%s RPS; best %s at c%d)", p.Payload, p.Knee.Conc, fmtN(summary.Val(p.Knee.Med["rps"]), 0), fmtN(summary.Val(p.Best.Med["rps"]), 0), p.Best.Conc))
	}
	t := strings.Join(parts, "; ") + "."
	for _, n := range s.Notes {
		if n == phase2.StandInNote {
			t += " wrk stood in for oha."
		}
	}
	return t
}

func phase3Finding(rs []Run) string {
	var parts []string
	for _, r := range rs {
		for _, c := range r.Summary.Cells {
			p := fmt.Sprintf("%s %s/%s conns", c.Params["scenario"], fmtN(metric(&c, "connections_established"), 0), fmtN(metric(&c, "connections_target"), 0))
			if v := metric(&c, "rps_achieved"); !math.IsNaN(v) {
				p += fmt.Sprintf(" at %s RPS, p99 %s ms", fmtN(v, 0), fmtN(metric(&c, "latency_p99_ms"), 2))
			}
			if v := metric(&c, "server_rss_per_conn_kb"); !math.IsNaN(v) {
				p += fmt.Sprintf(", %s KB RSS/conn", fmtN(v, 1))
			}
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "; ") + "."
}

// Findings are the headline table's lines, for the phases that have runs.
func Findings(in *Inputs) []Finding {
	var out []Finding
	for _, p := range Phases {
		rs := in.Runs[p.Name]
		if len(rs) == 0 {
			continue
		}
		f := Finding{Phase: p.Name, Question: p.Question, Runs: rs}
		switch p.Name {
		case "00-iperf3":
			f.Text = phase0Finding(rs)
		case "01-http-baseline":
			f.Text = phase1Finding(rs)
		case "02-http-matrix":
			f.Text = phase2Finding(rs)
		case "03-c10k":
			f.Text = phase3Finding(rs)
		case "04-connections":
			f.Text = phase4.Headline(rs[len(rs)-1].Summary)
		}
		if n := maxClients(rs); n > 1 {
			f.Text = fmt.Sprintf("**%d client hosts** (rates and throughputs summed over the clients, latency percentiles from their merged distributions): %s", n, f.Text)
		}
		out = append(out, f)
	}
	return out
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
			b, err := server.ParseSize(c.Params["payload"])
			if err == nil {
				ser.Points = append(ser.Points, chart.Point{X: float64(b), Y: metric(&c, "throughput_mbps")})
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
			v := summary.Val(g.Med["throughput_mbps"])
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
			rps.Series[i].Points = append(rps.Series[i].Points, chart.Point{X: float64(g.Conc), Y: summary.Val(g.Med["rps"])})
			p99.Series[i].Points = append(p99.Series[i].Points, chart.Point{X: float64(g.Conc), Y: summary.Val(g.Med["latency_p99_ms"])})
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
				y := metric(&c, "server_rss_held_mb")
				if math.IsNaN(y) {
					y = metric(&c, "server_rss_mb")
				}
				x := metric(&c, "connections_established")
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
	d.P("Built from the latest run of each phase (and of each Phase 3 runner) under `%s`. Each finding links to the phase's own report, where every figure has its raw output and its evidence.", in.Root)
	labs := map[string]bool{}
	for _, rs := range in.Runs {
		for _, r := range rs {
			labs[r.Summary.Lab+" / "+r.Summary.Profile] = true
		}
	}
	var ls []string
	for k := range labs {
		ls = append(ls, k)
	}
	sort.Strings(ls)
	d.P("Lab / profile of these runs: %s.%s", strings.Join(ls, ", "), emulatedNote(in))

	d.H(2, "Findings")
	var rows [][]string
	for _, f := range Findings(in) {
		var links []string
		for _, r := range f.Runs {
			link := "`" + r.Summary.RunID + "`"
			if r.Report != "" {
				link = fmt.Sprintf("[%s](%s)", r.Summary.RunID, rel(out, filepath.Join(r.Dir, r.Report)))
			}
			status := ""
			if r.Summary.Status != "ok" {
				status = " (" + r.Summary.Status + ")"
			}
			links = append(links, link+status)
		}
		rows = append(rows, []string{"`" + f.Phase + "`", f.Question, f.Text, strings.Join(links, "<br>")})
	}
	d.Table([]string{"phase", "question", "finding", "run and report"}, rows)

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
			row := []string{"`" + p.Name + "`", "`" + rel(out, r.Dir) + "`", r.Summary.Status, r.Summary.Lab, r.Summary.Profile, r.Summary.StartedAt, "`" + shortCommit(r.Summary.Git.Commit) + "`"}
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
	return report.Write(out, "README.md", &d)
}

func emulatedNote(in *Inputs) string {
	clients := 1
	for _, rs := range in.Runs {
		clients = max(clients, maxClients(rs))
	}
	for _, rs := range in.Runs {
		for _, r := range rs {
			if r.Summary.Lab != "ssh" {
				h := r.Summary.Hosts["server"]
				if n := clients; n > 1 {
					return fmt.Sprintf(" These were made on an emulated lab: the server and %d clients share one %s-CPU host (%s), each pinned to its own CPUs where the run says so (see each report's Environment), so CPU-bound figures are this host's, not separate machines'.", n, report.N(h.CPUs, 0), h.CPUModel)
				}
				return fmt.Sprintf(" These were made on an emulated lab: server and client share one %s-CPU host (%s), so CPU-bound figures are this host's, not two machines'.", report.N(h.CPUs, 0), h.CPUModel)
			}
		}
	}
	return ""
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
