// Package compare sets two runs of the same phase side by side: first
// where their environments differ (Environments: the machines, the link,
// the pinning, the sysctls, the server under test, the tools, each fact
// under a stable code), then cell by cell: each metric's value in both, the
// change and the ratio, and — where both runs repeated the cell — whether
// the change is real: a two-sided Mann-Whitney U test of the repetitions
// (internal/stats), `~` where its p-value is α or more, and no verdict
// with fewer repetitions than could ever reach α (Significance). Runs that differ in HTTP version, or a run over both, get
// each HTTP/1.1 cell beside its HTTP/2 partners as well (PairMux, MuxRow).
package compare

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"csbench/internal/mdtext"
	"csbench/internal/stats"
	"csbench/internal/summary"
)

// DefaultAlpha is the significance level unless the caller sets one: a
// change is called real when its p-value is under it.
const DefaultAlpha = 0.05

// CIConf is the level of each median's confidence interval.
const CIConf = 0.95

// The codes of Significance's verdict.
const (
	Significant    = "significant"     // p < α
	NotSignificant = "not_significant" // p ≥ α: printed ~
	TooFew         = "too_few"         // fewer repetitions than could reach α: no verdict
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

// ClientCPUPerRequest is the same for the load generator (its pidstat,
// client_proc_cpu_pct): where TLS's client side shows.
const ClientCPUPerRequest = "client_cpu_us_per_req"

// costFigures are the figures a CPU per request is derived from,
// whichever phase wrote them.
type costFigures struct {
	ServerProcCPUPct *float64 `json:"server_proc_cpu_pct"` // the server processes, % of one core
	ClientProcCPUPct *float64 `json:"client_proc_cpu_pct"` // the load generator, % of one core
	RPS              *float64 `json:"rps"`                 // responses per second (Phases 1, 2)
	RPSAchieved      *float64 `json:"rps_achieved"`        // requests answered per second (Phase 3 lowrate)
}

func derived(m map[string]*float64, name string) *float64 {
	var f costFigures
	summary.Figures(m, &f)
	var cpu *float64
	switch name {
	case ServerCPUPerRequest:
		cpu = f.ServerProcCPUPct
	case ClientCPUPerRequest:
		cpu = f.ClientProcCPUPct
	default:
		return m[name]
	}
	rps := f.RPS
	if rps == nil {
		rps = f.RPSAchieved
	}
	if cpu == nil || rps == nil || *rps <= 0 {
		return nil
	}
	v := *cpu / 100 / *rps * 1e6
	return &v
}

// Scheme is a run's scheme, http for runs from before SCHEME.
func Scheme(s *summary.Summary) string {
	if s.TLS == nil || s.TLS.Scheme == "" {
		return "http"
	}
	return s.TLS.Scheme
}

// tlsCost: for runs of different schemes, what TLS cost per cell: RPS and
// throughput as a fraction of http, and the CPU per request it added on
// each side (pidstat of the server processes and of the load generator),
// naming the side that took it. "" when the schemes are the same.
func tlsCost(r *Result) string {
	plain, enc := r.A, r.B
	plainRuns, encRuns := sideRuns(r.RunsA, r.A), sideRuns(r.RunsB, r.B)
	if Scheme(r.A) == Scheme(r.B) {
		return ""
	}
	if Scheme(r.A) == "https" {
		plain, enc = r.B, r.A
		plainRuns, encRuns = encRuns, plainRuns
	}
	ms := []string{"rps", "throughput_mbps", ServerCPUPerRequest, ClientCPUPerRequest}
	cp, order, _ := collect(plainRuns, ms)
	ce, _, _ := collect(encRuns, ms)
	var b strings.Builder
	b.WriteString("\n### What TLS cost\n\n")
	fmt.Fprintf(&b, "https (%s) against http (%s), medians: RPS and throughput as a fraction of http; CPU per request (pidstat: the server processes, the load generator) in µs, http → https. ", mdtext.Code(enc.RunID), mdtext.Code(plain.RunID))
	b.WriteString("The side named took most of the added CPU (its increase at least twice the other's; else both).\n\n")
	b.WriteString("| cell | RPS https/http | throughput https/http | server µs/req | client µs/req | encryption's CPU went to |\n|---|---|---|---|---|---|\n")
	n := 0
	for _, cell := range order {
		e, ok := ce[cell]
		if !ok {
			continue
		}
		p := cp[cell]
		frac := func(m string) string {
			if len(p[m]) == 0 || len(e[m]) == 0 || p[m].Median() == 0 {
				return "—"
			}
			return strconv.FormatFloat(e[m].Median()/p[m].Median(), 'f', 3, 64)
		}
		cpu := func(m string) (string, float64) {
			if len(p[m]) == 0 || len(e[m]) == 0 {
				return "—", math.NaN()
			}
			d := e[m].Median() - p[m].Median()
			sign := "+"
			if d < 0 {
				sign = ""
			}
			return fmt.Sprintf("%s → %s (%s%s)", num(p[m].Median()), num(e[m].Median()), sign, num(d)), d
		}
		sv, ds := cpu(ServerCPUPerRequest)
		cl, dc := cpu(ClientCPUPerRequest)
		if len(p["rps"]) == 0 && math.IsNaN(ds) && math.IsNaN(dc) {
			continue // no request rate (an idle hold): nothing per request
		}
		side := "—"
		switch {
		case math.IsNaN(ds) || math.IsNaN(dc):
		case ds <= 0 && dc <= 0:
			side = "neither measurably"
		case ds >= 2*dc:
			side = "the server"
		case dc >= 2*ds:
			side = "the client"
		default:
			side = "both"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdtext.CodeCell(cell), frac("rps"), frac("throughput_mbps"), sv, cl, side)
		n++
	}
	if n == 0 {
		return ""
	}
	return b.String()
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

// Significance is the row's two-sided Mann-Whitney U test of A's
// repetitions against B's at level alpha: its p-value (NaN when not run)
// and a verdict code (Significant, NotSignificant, TooFew), "" when a side
// has no value.
func (r Row) Significance(alpha float64) (p float64, verdict string) {
	if len(r.A) == 0 || len(r.B) == 0 {
		return math.NaN(), ""
	}
	if stats.MinP(len(r.A), len(r.B)) >= alpha {
		return math.NaN(), TooFew
	}
	_, p = stats.MannWhitney(r.A, r.B)
	if p < alpha {
		return p, Significant
	}
	return p, NotSignificant
}

// Result is a whole comparison.
type Result struct {
	// Alpha is the significance level (0: DefaultAlpha).
	Alpha float64
	// A and B are each side's latest run (its environment, labels and
	// HTTP versions stand for the side); RunsA and RunsB every run of the
	// side, in time order, whose values are pooled (one run: that run).
	A, B         *summary.Summary
	RunsA, RunsB []*summary.Summary
	Rows         []Row
	OnlyInA      []string
	OnlyInB      []string
	Reps         [2]int // most repetitions of a cell in A and in B
	Compared     []string
	Unmatched    []string // metrics asked for that neither run has
	// Env is where the two runs' environments differ (Environments).
	Env *Env
	// Bounds: Phase 5's payloads, each with what ended A's and B's
	// search (capacityBound).
	Bounds [][3]string
	// Mux: each HTTP/1.1 cell beside its HTTP/2 partners (muxRows).
	Mux []MuxRow
}

// collect is every ok cell's values of metrics over the runs ss, pooled
// by cell (repetitions and runs alike), in the order cells first appear;
// and the most values a cell has.
func collect(ss []*summary.Summary, metrics []string) (map[string]map[string]Values, []string, int) {
	cells := map[string]map[string]Values{}
	var order []string
	reps := map[string]int{}
	maxReps := 0
	for _, c := range allCells(ss) {
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

func allCells(ss []*summary.Summary) []summary.Cell {
	var out []summary.Cell
	for _, s := range ss {
		out = append(out, s.Cells...)
	}
	return out
}

// Runs compares b against a (a is the baseline): Sets of one run a side.
func Runs(a, b *summary.Summary, metrics []string) (*Result, error) {
	return Sets([]*summary.Summary{a}, []*summary.Summary{b}, metrics)
}

// Sets compares the runs bs against the runs as (the baseline), each a
// side's runs of one runner in time order (an A/B's rounds, or one run):
// a cell's values are pooled over the side's runs and repetitions. metrics
// nil means DefaultMetrics; "all" as the only element means every metric
// either side has.
func Sets(as, bs []*summary.Summary, metrics []string) (*Result, error) {
	if len(as) == 0 || len(bs) == 0 {
		return nil, fmt.Errorf("a side with no run (A %d, B %d)", len(as), len(bs))
	}
	a, b := as[len(as)-1], bs[len(bs)-1]
	for _, s := range append(append([]*summary.Summary(nil), as...), bs...) {
		if s.Phase != a.Phase {
			return nil, fmt.Errorf("runs of different phases: %s is %s, %s is %s", a.RunID, a.Phase, s.RunID, s.Phase)
		}
	}
	if len(metrics) == 1 && metrics[0] == "all" {
		set := map[string]bool{}
		for _, ss := range [][]*summary.Summary{as, bs} {
			for _, c := range allCells(ss) {
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
	if len(a.Capacity) > 0 || len(b.Capacity) > 0 {
		return capacityRuns(as, bs), nil
	}
	ca, orderA, repsA := collect(as, metrics)
	cb, orderB, repsB := collect(bs, metrics)
	r := &Result{A: a, B: b, RunsA: as, RunsB: bs, Reps: [2]int{repsA, repsB}, Env: Environments(a, b, "", "")}
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
	r.Mux = muxRows(a, b)
	return r, nil
}

// CapacityMetric is Phase 5's compared figure: each payload's capacity
// within the SLO. Its steps are not compared: a search picks its own
// rates, so a step of one run has no like in the other.
const CapacityMetric = "capacity_rps"

// capacityRuns compares two sides' Phase 5 runs payload by payload: the
// capacity (a lower bound where a search ended without a failing step
// above it), one value per run, and, in Bounds, what ended each side's
// searches.
func capacityRuns(as, bs []*summary.Summary) *Result {
	a, b := as[len(as)-1], bs[len(bs)-1]
	r := &Result{A: a, B: b, RunsA: as, RunsB: bs, Env: Environments(a, b, "", "")}
	type side struct {
		values map[string]Values
		bounds map[string][]string
		order  []string
	}
	of := func(ss []*summary.Summary) side {
		sd := side{values: map[string]Values{}, bounds: map[string][]string{}}
		for _, s := range ss {
			for _, c := range s.Capacity {
				if _, seen := sd.bounds[c.Payload]; !seen {
					sd.order = append(sd.order, c.Payload)
				}
				sd.bounds[c.Payload] = append(sd.bounds[c.Payload], capacityBound(c))
				if c.CapacityRPS != nil {
					sd.values[c.Payload] = append(sd.values[c.Payload], *c.CapacityRPS)
				}
			}
		}
		return sd
	}
	sa, sb := of(as), of(bs)
	for _, p := range sa.order {
		if _, ok := sb.bounds[p]; !ok {
			r.OnlyInA = append(r.OnlyInA, p)
			continue
		}
		r.Bounds = append(r.Bounds, [3]string{p, tally(sa.bounds[p]), tally(sb.bounds[p])})
		va, vb := sa.values[p], sb.values[p]
		r.Reps = [2]int{max(r.Reps[0], len(va)), max(r.Reps[1], len(vb))}
		if len(va) == 0 || len(vb) == 0 {
			continue
		}
		r.Rows = append(r.Rows, Row{Cell: p, Metric: CapacityMetric, A: va, B: vb})
	}
	for _, p := range sb.order {
		if _, ok := sa.bounds[p]; !ok {
			r.OnlyInB = append(r.OnlyInB, p)
		}
	}
	if len(r.Rows) > 0 {
		r.Compared = []string{CapacityMetric}
	}
	return r
}

// tally is a list of codes as each distinct one with how many times it
// came, in the order they first came: "latency" for one run,
// "latency ×4, server_cpu ×1" for five.
func tally(codes []string) string {
	n := map[string]int{}
	var order []string
	for _, c := range codes {
		if n[c] == 0 {
			order = append(order, c)
		}
		n[c]++
	}
	if len(codes) == 1 {
		return codes[0]
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%s ×%d", c, n[c])
	}
	return strings.Join(parts, ", ")
}

// capacityBound is what ended a payload's search, as codes: the bound,
// then what ran out ("latency/server_cpu"), "lower bound" marked.
func capacityBound(c summary.Capacity) string {
	t := c.Bound
	if c.Cause != "" && c.Cause != c.Bound {
		t += "/" + c.Cause
	}
	if c.CapacityRPS != nil && c.HighRPS == nil {
		t += ", a lower bound"
	}
	return t
}

// Dirs is Runs of the summaries of run directories dirA and dirB, whose
// environments are compared with what only the directories hold (each
// host's qdisc) as well.
func Dirs(dirA, dirB string, a, b *summary.Summary, metrics []string) (*Result, error) {
	return DirSets(dirA, dirB, []*summary.Summary{a}, []*summary.Summary{b}, metrics)
}

// DirSets is Sets whose sides' latest runs are in dirA and dirB: their
// environments are compared with what only the directories hold as well.
func DirSets(dirA, dirB string, as, bs []*summary.Summary, metrics []string) (*Result, error) {
	r, err := Sets(as, bs, metrics)
	if err != nil {
		return nil, err
	}
	r.Env = Environments(r.A, r.B, dirA, dirB)
	return r, nil
}

// ClientCount is how many client hosts drove a run: 1 unless its
// summary lists several.
func ClientCount(s *summary.Summary) int {
	if s.Clients != nil && s.Clients.N > 1 {
		return s.Clients.N
	}
	return 1
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
	if lo, hi, ok := stats.MedianCI(v, CIConf); ok {
		return fmt.Sprintf("%s [%s, %s]", num(v.Median()), num(lo), num(hi))
	}
	lo, hi := v.Range()
	return fmt.Sprintf("%s (%s–%s)", num(v.Median()), num(lo), num(hi))
}

// alpha is the comparison's significance level.
func (r *Result) alpha() float64 {
	if r.Alpha > 0 {
		return r.Alpha
	}
	return DefaultAlpha
}

// significanceCell is a row's test as benchstat prints it: "p=0.008 n=5+5"
// when significant, "~ (p=0.310 n=5+5)" when not, and no verdict with too
// few repetitions.
func significanceCell(row Row, alpha float64) string {
	p, v := row.Significance(alpha)
	n := fmt.Sprintf("n=%d+%d", len(row.A), len(row.B))
	switch v {
	case Significant:
		return fmt.Sprintf("p=%.3f %s", p, n)
	case NotSignificant:
		return fmt.Sprintf("~ (p=%.3f %s)", p, n)
	case TooFew:
		return "— (" + n + ")"
	}
	return "—"
}

// sideRuns is a side's runs; a Result built without its list (a test's)
// has its one run.
func sideRuns(runs []*summary.Summary, latest *summary.Summary) []*summary.Summary {
	if len(runs) == 0 {
		return []*summary.Summary{latest}
	}
	return runs
}

// runIDs names a side's runs: the run's id for one, "N runs (`id`, ...)"
// for several. latest stands for a side built without its list.
func runIDs(runs []*summary.Summary, latest *summary.Summary) string {
	if len(runs) <= 1 {
		return mdtext.Code(latest.RunID)
	}
	ids := make([]string, len(runs))
	for i, s := range runs {
		ids[i] = mdtext.Code(s.RunID)
	}
	return fmt.Sprintf("%d runs (%s)", len(runs), strings.Join(ids, ", "))
}

// statuses is a side's run statuses, tallied ("ok", "ok ×4, partial ×1").
func statuses(runs []*summary.Summary, latest *summary.Summary) string {
	if len(runs) <= 1 {
		return latest.Status
	}
	st := make([]string, len(runs))
	for i, s := range runs {
		st[i] = s.Status
	}
	return tally(st)
}

// Markdown renders the comparison as a table, one row per cell and metric.
func (r *Result) Markdown() string {
	var b strings.Builder
	la, lb := serverLabel(r.A), serverLabel(r.B)
	if Scheme(r.A) != Scheme(r.B) {
		la, lb = la+" "+Scheme(r.A), lb+" "+Scheme(r.B)
	}
	same := la == lb
	la, lb = mdtext.Text(la), mdtext.Text(lb)
	t := mdtext.Text
	fmt.Fprintf(&b, "Baseline A: %s (%s, %s, profile %s, server under test %s). Compared B: %s (%s, %s, profile %s, server under test %s).\n\n",
		runIDs(r.RunsA, r.A), t(r.A.Lab), t(statuses(r.RunsA, r.A)), t(r.A.Profile), la, runIDs(r.RunsB, r.B), t(r.B.Lab), t(statuses(r.RunsB, r.B)), t(r.B.Profile), lb)
	b.WriteString(r.Env.Markdown())
	colA, colB := "A", "B"
	if !same {
		colA, colB = "A: "+la, "B: "+lb
		if serverLabel(r.A) != serverLabel(r.B) {
			fmt.Fprintf(&b, "The runs measured different servers under test: A is %s, B is %s; a ratio is B's server against A's on the same path.\n\n", la, lb)
		} else {
			fmt.Fprintf(&b, "The runs differ in scheme: A is %s, B is %s; a ratio is what TLS changes on the same path.\n\n", Scheme(r.A), Scheme(r.B))
		}
	}
	if na, nb := ClientCount(r.A), ClientCount(r.B); na > 1 || nb > 1 {
		fmt.Fprintf(&b, "Client hosts: A %d, B %d. With several, a cell's rates and throughputs are the clients' sum and its latency percentiles come from their merged distributions (see each run's report).\n\n", na, nb)
		if na != nb {
			b.WriteString("**The runs drove the server from different numbers of client hosts: a change may be the clients', not the server's.**\n\n")
		}
	}
	need := stats.RunsNeeded(r.alpha())
	stat := fmt.Sprintf("single runs: no spread to compare a change with, and no verdict on it (the test needs ≥ %d runs a side at α = %g: REPEAT=%d, or interleaved runs)", need, r.alpha(), need)
	if r.Reps[0] > 1 || r.Reps[1] > 1 {
		stat = fmt.Sprintf("median of the repetitions (A up to %d, B up to %d), its %g %% confidence interval in square brackets (6 or more repetitions), else min–max in round ones", r.Reps[0], r.Reps[1], 100*CIConf)
	}
	fmt.Fprintf(&b, "Values: %s. Change = B − A, ratio = B / A. Significance: a two-sided Mann-Whitney U test of A's repetitions against B's, exact p-value, n = A's + B's; `~` where p ≥ α = %g (the change may be noise), — where a side has fewer repetitions than could ever reach α (≥ %d a side).\n\n", stat, r.alpha(), need)
	fmt.Fprintf(&b, "| cell | metric | %s | %s | change | ratio | significance |\n|---|---|---|---|---|---|---|\n", colA, colB)
	for _, row := range r.Rows {
		ch := num(row.Change())
		if row.Change() > 0 {
			ch = "+" + ch
		}
		ratio := "—"
		if v := row.Ratio(); !math.IsNaN(v) {
			ratio = strconv.FormatFloat(v, 'f', 3, 64) + "×"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdtext.CodeCell(row.Cell), row.Metric, cellValue(row.A), cellValue(row.B), ch, ratio, significanceCell(row, r.alpha()))
	}
	if len(r.Rows) == 0 {
		b.WriteString("| — | no cell measured in both runs | | | | | |\n")
	}
	if len(r.Bounds) > 0 {
		fmt.Fprintf(&b, "\nPhase 5 compares each payload's capacity within the SLO, not its steps (each search picks its own rates). What ended each search (bound/what ran out at the failing step):\n\n| payload | %s | %s |\n|---|---|---|\n", colA, colB)
		for _, x := range r.Bounds {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", x[0], x[1], x[2])
		}
	}
	if len(r.OnlyInA) > 0 {
		fmt.Fprintf(&b, "\nOnly in A: %s.\n", strings.Join(r.OnlyInA, ", "))
	}
	if len(r.OnlyInB) > 0 {
		fmt.Fprintf(&b, "\nOnly in B: %s.\n", strings.Join(r.OnlyInB, ", "))
	}
	b.WriteString(tlsCost(r))
	b.WriteString(muxMarkdown(r))
	return b.String()
}

// Figure is cell c's value of metric (a figure of its own, or one derived
// from them such as ServerCPUPerRequest), nil when it has none.
func Figure(c summary.Cell, metric string) *float64 { return derived(c.Metrics, metric) }
