// Package compare sets two runs of the same phase side by side, cell by
// cell: each metric's value in both, the change and the ratio, and — where
// both runs repeated the cell — whether the change is bigger than the
// spread of the repetitions (the ranges do not overlap).
package compare

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"csbench/internal/summary"
)

// DefaultMetrics are compared unless the caller asks for others: the
// figures a report's verdicts rest on.
var DefaultMetrics = []string{
	"throughput_mbps", "goodput_mbps", "rps", "rps_achieved",
	"latency_p50_ms", "latency_p99_ms", "service_latency_p99_ms",
	"retransmits", "server_cpu_pct", "client_cpu_pct", "server_proc_cpu_pct", ServerCPUPerRequest,
	"connections_established", "server_rss_mb", "server_rss_per_conn_kb", "setup_s",
	"errors", "server_listen_overflows", "server_retrans_segs",
	// Phase 4: new connections.
	"rate_achieved_per_s", "errors_eaddrnotavail", "connections_never_up", "server_listen_drops",
	"server_cpu_us_per_conn",
}

// ServerCPUPerRequest is derived here, per cell: the server processes' CPU
// (server_proc_cpu_pct, % of one core) over the requests per second (rps,
// else rps_achieved), in microseconds of CPU per request, so two servers'
// cost of one response can be set side by side.
const ServerCPUPerRequest = "server_cpu_us_per_req"

func derived(m map[string]*float64, name string) *float64 {
	if name != ServerCPUPerRequest {
		return m[name]
	}
	cpu, rps := m["server_proc_cpu_pct"], m["rps"]
	if rps == nil {
		rps = m["rps_achieved"]
	}
	if cpu == nil || rps == nil || *rps <= 0 {
		return nil
	}
	v := *cpu / 100 / *rps * 1e6
	return &v
}

// repSuffix is how a repetition is named: <cell>-r<N> (REPEAT=N), with the
// repetition's number in params.rep.
var repSuffix = regexp.MustCompile(`-r[0-9]+$`)

// BaseName is a cell's name without its repetition suffix.
func BaseName(c summary.Cell) string {
	if _, ok := c.Params["rep"]; ok {
		return repSuffix.ReplaceAllString(c.Name, "")
	}
	return c.Name
}

// Values are one metric's measurements of one cell in one run, in the
// order of the repetitions.
type Values []float64

// Median of the values; NaN when there are none.
func (v Values) Median() float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Range returns the smallest and largest value.
func (v Values) Range() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// Row is one metric of one cell in both runs.
type Row struct {
	Cell, Metric string
	A, B         Values
}

// Change is B's median minus A's.
func (r Row) Change() float64 { return r.B.Median() - r.A.Median() }

// Ratio is B's median over A's; NaN when A's is 0.
func (r Row) Ratio() float64 {
	if r.A.Median() == 0 {
		return math.NaN()
	}
	return r.B.Median() / r.A.Median()
}

// BeyondSpread says whether both runs repeated the cell and their ranges do
// not overlap: "yes", "no", or "" when there is no spread to compare with.
func (r Row) BeyondSpread() string {
	if len(r.A) < 2 || len(r.B) < 2 {
		return ""
	}
	alo, ahi := r.A.Range()
	blo, bhi := r.B.Range()
	if bhi < alo || blo > ahi {
		return "yes"
	}
	return "no"
}

// Result is a whole comparison.
type Result struct {
	A, B      *summary.Summary
	Rows      []Row
	OnlyInA   []string
	OnlyInB   []string
	Reps      [2]int // most repetitions of a cell in A and in B
	Compared  []string
	Unmatched []string // metrics asked for that neither run has
}

func collect(s *summary.Summary, metrics []string) (map[string]map[string]Values, []string, int) {
	cells := map[string]map[string]Values{}
	var order []string
	reps := map[string]int{}
	maxReps := 0
	for _, c := range s.Cells {
		if c.Status != "ok" {
			continue
		}
		base := BaseName(c)
		if cells[base] == nil {
			cells[base] = map[string]Values{}
			order = append(order, base)
		}
		reps[base]++
		maxReps = max(maxReps, reps[base])
		for _, m := range metrics {
			if p := derived(c.Metrics, m); p != nil {
				cells[base][m] = append(cells[base][m], *p)
			}
		}
	}
	return cells, order, maxReps
}

// Runs compares b against a (a is the baseline). metrics nil means
// DefaultMetrics; "all" as the only element means every metric either has.
func Runs(a, b *summary.Summary, metrics []string) (*Result, error) {
	if a.Phase != b.Phase {
		return nil, fmt.Errorf("runs of different phases: %s is %s, %s is %s", a.RunID, a.Phase, b.RunID, b.Phase)
	}
	if len(metrics) == 1 && metrics[0] == "all" {
		set := map[string]bool{}
		for _, s := range []*summary.Summary{a, b} {
			for _, c := range s.Cells {
				for k := range c.Metrics {
					set[k] = true
				}
				if derived(c.Metrics, ServerCPUPerRequest) != nil {
					set[ServerCPUPerRequest] = true
				}
			}
		}
		metrics = metrics[:0]
		for k := range set {
			metrics = append(metrics, k)
		}
		sort.Strings(metrics)
	} else if metrics == nil {
		metrics = DefaultMetrics
	}
	ca, orderA, repsA := collect(a, metrics)
	cb, orderB, repsB := collect(b, metrics)
	r := &Result{A: a, B: b, Reps: [2]int{repsA, repsB}}
	used := map[string]bool{}
	for _, cell := range orderA {
		mb, ok := cb[cell]
		if !ok {
			r.OnlyInA = append(r.OnlyInA, cell)
			continue
		}
		for _, m := range metrics {
			va, vb := ca[cell][m], mb[m]
			if len(va) == 0 || len(vb) == 0 {
				continue
			}
			used[m] = true
			r.Rows = append(r.Rows, Row{Cell: cell, Metric: m, A: va, B: vb})
		}
	}
	for _, cell := range orderB {
		if _, ok := ca[cell]; !ok {
			r.OnlyInB = append(r.OnlyInB, cell)
		}
	}
	for _, m := range metrics {
		if used[m] {
			r.Compared = append(r.Compared, m)
		}
	}
	return r, nil
}

// serverLabel: the server under test of a run, in a few words; a summary
// without one (Phase 0, or written before SERVER) says "csb".
func serverLabel(s *summary.Summary) string {
	if s.Server == nil {
		return "csb"
	}
	return s.Server.Label()
}

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	a, p := math.Abs(v), 1.0
	switch {
	case a >= 1000:
	case a >= 10:
		p = 10
	default:
		p = 1000
	}
	return strconv.FormatFloat(math.Round(v*p)/p, 'f', -1, 64)
}

func cellValue(v Values) string {
	if len(v) < 2 {
		return num(v.Median())
	}
	lo, hi := v.Range()
	return fmt.Sprintf("%s (%s–%s)", num(v.Median()), num(lo), num(hi))
}

// Markdown renders the comparison as a table, one row per cell and metric.
func (r *Result) Markdown() string {
	var b strings.Builder
	la, lb := serverLabel(r.A), serverLabel(r.B)
	fmt.Fprintf(&b, "Baseline A: `%s` (%s, %s, profile %s, server under test %s). Compared B: `%s` (%s, %s, profile %s, server under test %s).\n\n",
		r.A.RunID, r.A.Lab, r.A.Status, r.A.Profile, la, r.B.RunID, r.B.Lab, r.B.Status, r.B.Profile, lb)
	colA, colB := "A", "B"
	if la != lb {
		colA, colB = "A: "+la, "B: "+lb
		fmt.Fprintf(&b, "The runs measured different servers under test: A is %s, B is %s; a ratio is B's server against A's on the same path.\n\n", la, lb)
	}
	if r.A.Lab != r.B.Lab || r.A.Profile != r.B.Profile {
		b.WriteString("**The runs differ in lab or profile: read the changes as differences of setup, not of the system.**\n\n")
	}
	stat := "single runs: no spread to compare a change with"
	if r.Reps[0] > 1 && r.Reps[1] > 1 {
		stat = fmt.Sprintf("median of the repetitions (A up to %d, B up to %d), min–max in brackets; \"beyond spread\" = the two ranges do not overlap", r.Reps[0], r.Reps[1])
	}
	fmt.Fprintf(&b, "Values: %s. Change = B − A, ratio = B / A.\n\n", stat)
	fmt.Fprintf(&b, "| cell | metric | %s | %s | change | ratio | beyond spread |\n|---|---|---|---|---|---|---|\n", colA, colB)
	for _, row := range r.Rows {
		ch := num(row.Change())
		if row.Change() > 0 {
			ch = "+" + ch
		}
		ratio := "—"
		if v := row.Ratio(); !math.IsNaN(v) {
			ratio = strconv.FormatFloat(v, 'f', 3, 64) + "×"
		}
		spread := row.BeyondSpread()
		if spread == "" {
			spread = "—"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", row.Cell, row.Metric, cellValue(row.A), cellValue(row.B), ch, ratio, spread)
	}
	if len(r.Rows) == 0 {
		b.WriteString("| — | no cell measured in both runs | | | | | |\n")
	}
	if len(r.OnlyInA) > 0 {
		fmt.Fprintf(&b, "\nOnly in A: %s.\n", strings.Join(r.OnlyInA, ", "))
	}
	if len(r.OnlyInB) > 0 {
		fmt.Fprintf(&b, "\nOnly in B: %s.\n", strings.Join(r.OnlyInB, ", "))
	}
	return b.String()
}
