package compare

import (
	"strconv"
	"strings"
	"testing"

	"csbench/internal/summary"
)

func cell(name, rep string, rps float64) summary.Cell {
	p := map[string]string{"payload": "1k"}
	if rep != "" {
		p["rep"] = rep
	}
	return summary.Cell{Name: name, Status: "ok", Params: p, Metrics: map[string]*float64{"rps": summary.F(rps), "latency_p99_ms": nil}}
}

func TestRepetitionsAndSpread(t *testing.T) {
	a := &summary.Summary{Phase: "02-http-matrix", RunID: "a", Lab: "netns", Profile: "quick", Cells: []summary.Cell{
		cell("p1k-c16-r1", "1", 100), cell("p1k-c16-r2", "2", 110), cell("p1k-c16-r3", "3", 105),
		cell("p1k-c64-r1", "1", 200), cell("p1k-c64-r2", "2", 220),
		cell("gone", "", 1),
	}}
	b := &summary.Summary{Phase: "02-http-matrix", RunID: "b", Lab: "netns", Profile: "quick", Cells: []summary.Cell{
		cell("p1k-c16-r1", "1", 150), cell("p1k-c16-r2", "2", 160), cell("p1k-c16-r3", "3", 155),
		cell("p1k-c64-r1", "1", 210), cell("p1k-c64-r2", "2", 215),
		cell("new", "", 1),
	}}
	r, err := Runs(a, b, []string{"rps", "latency_p99_ms"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 2 {
		t.Fatalf("rows: %+v", r.Rows)
	}
	c16, c64 := r.Rows[0], r.Rows[1]
	if c16.Cell != "p1k-c16" || c16.A.Median() != 105 || c16.B.Median() != 155 || c16.BeyondSpread() != "yes" {
		t.Errorf("c16: %+v median %v/%v spread %q", c16, c16.A.Median(), c16.B.Median(), c16.BeyondSpread())
	}
	if c64.A.Median() != 210 || c64.BeyondSpread() != "no" {
		t.Errorf("c64: median %v spread %q", c64.A.Median(), c64.BeyondSpread())
	}
	if got := c16.Ratio(); got < 1.476 || got > 1.477 {
		t.Errorf("ratio %v", got)
	}
	md := r.Markdown()
	for _, want := range []string{"| `p1k-c16` | rps | 105 (100–110) | 155 (150–160) | +50 | 1.476× | — (n=3+3) |", "Only in A: gone.", "Only in B: new.", "median of the repetitions"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// latency_p99_ms is null in both: not compared, never shown as 0.
	if strings.Contains(md, "latency_p99_ms") {
		t.Error("a null metric was compared")
	}
}

func TestDifferentPhasesRefused(t *testing.T) {
	_, err := Runs(&summary.Summary{Phase: "00-iperf3"}, &summary.Summary{Phase: "03-c10k"}, nil)
	if err == nil || !strings.Contains(err.Error(), "different phases") {
		t.Fatalf("err = %v", err)
	}
}

func TestDifferentServersLabelColumns(t *testing.T) {
	m := func(rps, cpu float64) map[string]*float64 {
		return map[string]*float64{"rps": summary.F(rps), "server_proc_cpu_pct": summary.F(cpu)}
	}
	a := &summary.Summary{Phase: "01-http-baseline", RunID: "a", Server: &summary.Server{Kind: "csb"},
		Cells: []summary.Cell{{Name: "1k", Status: "ok", Metrics: m(20000, 100)}}}
	b := &summary.Summary{Phase: "01-http-baseline", RunID: "b",
		Server: &summary.Server{Kind: "nginx", Version: "nginx version: nginx/1.22.1; package nginx-light 1.22.1"},
		Cells:  []summary.Cell{{Name: "1k", Status: "ok", Metrics: m(40000, 100)}}}
	r, err := Runs(a, b, []string{"rps", ServerCPUPerRequest})
	if err != nil {
		t.Fatal(err)
	}
	md := r.Markdown()
	for _, want := range []string{
		"| cell | metric | A: csb | B: nginx 1.22.1 | change | ratio | significance |",
		"A is csb, B is nginx 1.22.1",
		"| `1k` | rps | 20000 | 40000 | +20000 | 2.000× | — (n=1+1) |",
		"| `1k` | server_cpu_us_per_req | 50 | 25 | -25 | 0.500× | — (n=1+1) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// The same server: plain A and B.
	b.Server = &summary.Server{Kind: "csb"}
	if r, _ = Runs(a, b, nil); !strings.Contains(r.Markdown(), "| cell | metric | A | B |") {
		t.Errorf("same server, labelled columns:\n%s", r.Markdown())
	}
}

// A run from two client hosts against a one-client run: the aggregate
// figures are compared as they are, and the comparison says the client
// count differs. Two one-client runs say nothing of clients.
func TestClientCounts(t *testing.T) {
	m := func(rps float64) map[string]*float64 { return map[string]*float64{"rps": summary.F(rps)} }
	a := &summary.Summary{Phase: "01-http-baseline", RunID: "a", Cells: []summary.Cell{{Name: "1k", Status: "ok", Metrics: m(20000)}}}
	b := &summary.Summary{Phase: "01-http-baseline", RunID: "b", Clients: &summary.Clients{N: 2},
		Cells: []summary.Cell{{Name: "1k", Status: "ok", Metrics: m(38000)}}}
	r, err := Runs(a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := r.Markdown()
	for _, want := range []string{"Client hosts: A 1, B 2.", "different numbers of client hosts", "| `1k` | rps | 20000 | 38000 | +18000 | 1.900× | — (n=1+1) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	b.Clients = nil
	if r, _ = Runs(a, b, nil); strings.Contains(r.Markdown(), "Client hosts") {
		t.Errorf("one client each, yet:\n%s", r.Markdown())
	}
}

func TestTLSCost(t *testing.T) {
	m := func(rps, mbps, srv, cli float64) summary.Cell {
		return summary.Cell{Name: "1k", Status: "ok", Params: map[string]string{"payload": "1k"}, Metrics: map[string]*float64{
			"rps": summary.F(rps), "throughput_mbps": summary.F(mbps), "server_proc_cpu_pct": summary.F(srv), "client_proc_cpu_pct": summary.F(cli)}}
	}
	plain := &summary.Summary{Phase: "01-http-baseline", RunID: "plain", Cells: []summary.Cell{m(10000, 100, 50, 50)}}
	enc := &summary.Summary{Phase: "01-http-baseline", RunID: "enc", TLS: &summary.TLS{Scheme: "https"}, Cells: []summary.Cell{m(5000, 50, 50, 26)}}
	// Either order: https against http.
	for _, ab := range [][2]*summary.Summary{{plain, enc}, {enc, plain}} {
		r, err := Runs(ab[0], ab[1], nil)
		if err != nil {
			t.Fatal(err)
		}
		md := r.Markdown()
		// server 50 → 100 µs/req (+50), client 50 → 52 (+2): the server took it.
		for _, want := range []string{"The runs differ in scheme", "### What TLS cost",
			"| `1k` | 0.500 | 0.500 | 50 → 100 (+50) | 50 → 52 (+2) | the server |"} {
			if !strings.Contains(md, want) {
				t.Errorf("markdown lacks %q:\n%s", want, md)
			}
		}
	}
	// Same scheme: no TLS section.
	r, _ := Runs(plain, plain, nil)
	if strings.Contains(r.Markdown(), "What TLS cost") {
		t.Error("a TLS section for two http runs")
	}
}

// Phase 5 runs compare each payload's capacity, never their steps (a
// search picks its own rates), with what ended each search.
func TestCapacityRuns(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	a := &summary.Summary{Phase: "05-capacity", RunID: "a", Cells: []summary.Cell{{Name: "1k-s01", Status: "ok", Metrics: map[string]*float64{"latency_p99_ms": f(1)}}},
		Capacity: []summary.Capacity{{Payload: "1k", CapacityRPS: f(40000), HighRPS: f(41000), Bound: "latency", Cause: "server_cpu"}, {Payload: "10k", CapacityRPS: f(9000), Bound: "client_bound", Cause: "client"}}}
	b := &summary.Summary{Phase: "05-capacity", RunID: "b", Cells: a.Cells,
		Capacity: []summary.Capacity{{Payload: "1k", CapacityRPS: f(30000), HighRPS: f(31000), Bound: "latency", Cause: "link"}}}
	r, err := Runs(a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 1 || r.Rows[0].Cell != "1k" || r.Rows[0].Metric != CapacityMetric || r.Rows[0].Ratio() != 0.75 {
		t.Errorf("rows: %+v", r.Rows)
	}
	if len(r.OnlyInA) != 1 || r.OnlyInA[0] != "10k" || len(r.Bounds) != 1 || r.Bounds[0] != [3]string{"1k", "latency/server_cpu", "latency/link"} {
		t.Errorf("only in A %v, bounds %v", r.OnlyInA, r.Bounds)
	}
	if md := r.Markdown(); !strings.Contains(md, "| 1k | latency/server_cpu | latency/link |") {
		t.Errorf("markdown:\n%s", md)
	}
}

// With repetitions enough for α: p-values as benchstat prints them, ~ for a
// difference that may be noise, the medians' 95 % intervals from 6 runs,
// and the JSON row's p-value and verdict code.
func TestSignificance(t *testing.T) {
	reps := func(vals ...float64) []summary.Cell {
		var cs []summary.Cell
		for i, v := range vals {
			n := strconv.Itoa(i + 1)
			cs = append(cs, summary.Cell{Name: "1k-r" + n, Status: "ok", Params: map[string]string{"rep": n},
				Metrics: map[string]*float64{"rps": summary.F(v), "latency_p99_ms": summary.F(float64(10 + i%2))}})
		}
		return cs
	}
	a := &summary.Summary{Phase: "01-http-baseline", RunID: "a", Cells: reps(100, 101, 102, 103, 104, 105)}
	b := &summary.Summary{Phase: "01-http-baseline", RunID: "b", Cells: reps(110, 111, 112, 113, 114, 115)}
	r, err := Runs(a, b, []string{"rps", "latency_p99_ms"})
	if err != nil {
		t.Fatal(err)
	}
	md := r.Markdown()
	for _, want := range []string{
		"| `1k` | rps | 102.5 [100, 105] | 112.5 [110, 115] | +10 | 1.098× | p=0.002 n=6+6 |",
		"| `1k` | latency_p99_ms | 10.5 [10, 11] | 10.5 [10, 11] | 0 | 1.000× | ~ (p=1.000 n=6+6) |",
		"≥ 4 a side",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	d := r.Document()
	if row := d.Rows[0]; row.PValue == nil || *row.PValue != 2.0/924 || row.Significance == nil || *row.Significance != Significant || row.Alpha != 0.05 {
		t.Errorf("JSON row: %+v", row)
	}
	// At α = 0.001 six a side are too few for any verdict.
	r.Alpha = 0.001
	if md := r.Markdown(); !strings.Contains(md, "| +10 | 1.098× | — (n=6+6) |") || !strings.Contains(md, "≥ 7 a side") {
		t.Errorf("α = 0.001:\n%s", md)
	}
}

// Runs of one runner a side (an A/B's rounds) pool as repetitions: five
// single runs a side reach a verdict where each pair alone has none; a
// set of one run is Runs of that run; Phase 5's capacity is a value per
// run, its bounds tallied.
func TestSetsPoolRuns(t *testing.T) {
	run := func(id string, rps float64) *summary.Summary {
		return &summary.Summary{Phase: "01-http-baseline", RunID: id, Lab: "netns", Status: "ok", Profile: "quick",
			Cells: []summary.Cell{cell("1k", "", rps)}}
	}
	var as, bs []*summary.Summary
	for i, v := range []float64{100, 104, 101, 103, 102} {
		as = append(as, run("a"+strconv.Itoa(i), v))
		bs = append(bs, run("b"+strconv.Itoa(i), v+10))
	}
	r, err := Sets(as, bs, []string{"rps"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 1 || len(r.Rows[0].A) != 5 || r.Rows[0].A.Median() != 102 || r.Rows[0].B.Median() != 112 || r.Reps != [2]int{5, 5} {
		t.Fatalf("rows %+v reps %v", r.Rows, r.Reps)
	}
	if p, v := r.Rows[0].Significance(DefaultAlpha); v != Significant || p != 2.0/252 {
		t.Errorf("significance %v %q, want p = 2/252", p, v)
	}
	md := r.Markdown()
	for _, want := range []string{"Baseline A: 5 runs (`a0`, `a1`, `a2`, `a3`, `a4`) (netns, ok ×5, profile quick", "| p=0.008 n=5+5 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	one, _ := Sets(as[:1], bs[:1], []string{"rps"})
	pair, _ := Runs(as[0], bs[0], []string{"rps"})
	if one.Markdown() != pair.Markdown() {
		t.Errorf("a set of one run differs from Runs:\n%s\n%s", one.Markdown(), pair.Markdown())
	}
	if _, err := Sets(as, append(bs, &summary.Summary{Phase: "03-c10k", RunID: "x"}), nil); err == nil {
		t.Error("a side mixing phases was compared")
	}

	f := func(v float64) *float64 { return &v }
	capRun := func(id string, v float64, cause string) *summary.Summary {
		return &summary.Summary{Phase: "05-capacity", RunID: id, Status: "ok",
			Capacity: []summary.Capacity{{Payload: "1k", CapacityRPS: f(v), HighRPS: f(v + 100), Bound: "latency", Cause: cause}}}
	}
	ca := []*summary.Summary{capRun("a1", 4000, "server_cpu"), capRun("a2", 4100, "server_cpu"), capRun("a3", 3900, "queue"), capRun("a4", 4050, "server_cpu")}
	cb := []*summary.Summary{capRun("b1", 4400, "server_cpu"), capRun("b2", 4450, "server_cpu"), capRun("b3", 4380, "server_cpu"), capRun("b4", 4420, "server_cpu")}
	r, err = Sets(ca, cb, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 1 || len(r.Rows[0].A) != 4 || r.Rows[0].B.Median() != 4410 || r.Reps != [2]int{4, 4} {
		t.Fatalf("capacity rows %+v reps %v", r.Rows, r.Reps)
	}
	if r.Bounds[0] != [3]string{"1k", "latency/server_cpu ×3, latency/queue ×1", "latency/server_cpu ×4"} {
		t.Errorf("bounds %v", r.Bounds)
	}
	if p, v := r.Rows[0].Significance(DefaultAlpha); v != Significant || p != 2.0/70 {
		t.Errorf("capacity significance %v %q, want p = 2/70", p, v)
	}
}
