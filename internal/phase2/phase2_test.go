package phase2_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/cli"
	"csbench/internal/golden"
	"csbench/internal/httpphase"
	"csbench/internal/phase2"
	"csbench/internal/summary"
)

func runDir(t *testing.T, root, glob string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "02-http-matrix", glob))
	if len(dirs) != 1 {
		t.Fatalf("want one run %s, got %v", glob, dirs)
	}
	return dirs[0]
}

func summarize(t *testing.T, dir string) (*summary.Summary, string) {
	t.Helper()
	if err := cli.Summarize(dir, cli.GeneratedBy); err != nil {
		t.Fatal(err)
	}
	s, err := summary.Load(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(dir, phase2.ReportName))
	if err != nil {
		t.Fatal(err)
	}
	return s, string(report)
}

func check(t *testing.T, prefix, dir string, s *summary.Summary, report string, files ...string) {
	t.Helper()
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, prefix+"-summary.json", string(b)+"\n")
	golden.Check(t, prefix+"-"+phase2.ReportName, report)
	for _, f := range files {
		got, _ := os.ReadFile(filepath.Join(dir, f))
		golden.Check(t, prefix+"-"+f, string(got))
	}
}

// A real smoke run on the netns lab, wrk standing in for oha: the stand-in
// is the summary's first note and in the report's first lines, each payload
// gets a plateau, both charts are written. Without gnuplot on PATH the
// report says the charts were skipped, so the golden files do not depend on
// this machine.
func TestSmokeRunWrkStandingIn(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/results", "")
	dir := runDir(t, root, "*_http-matrix")
	s, report := summarize(t, dir)
	if s.Status != "ok" || len(s.Cells) != 4 {
		t.Fatalf("status %q, %d cells", s.Status, len(s.Cells))
	}
	if len(s.Notes) == 0 || s.Notes[0] != phase2.StandInNote {
		t.Fatalf("first note %q, want the stand-in", s.Notes)
	}
	if lines := strings.SplitN(report, "\n", 6); !strings.Contains(lines[4], "**"+phase2.StandInNote+"**") {
		t.Errorf("the report's first lines do not say wrk stood in:\n%s", strings.Join(lines[:5], "\n"))
	}
	if s.Link.BaselineMbps == nil {
		t.Error("no Phase 0 baseline found beside the run")
	}
	for _, c := range s.Cells {
		for _, k := range []string{"rps", "throughput_mbps", "latency_p95_ms", "latency_p99_ms", "server_time_wait", "client_time_wait"} {
			if c.Metrics[k] == nil {
				t.Errorf("%s: %s is null", c.Name, k)
			}
		}
	}
	for _, want := range []string{"**1k** plateaus at **c", "**4k** plateaus at **c", "## Little's law", "_Chart \"RPS vs concurrency",
		"_Chart \"p99 latency vs concurrency", "Every cell got its fds.", "`net.core.somaxconn` = 4096 ≥ c64"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	check(t, "smoke", dir, s, report, "rps.gp", "rps.dat", "p99.gp", "p99.dat")
}

// The fd-limited run: c64 cells refused, never run; REPEAT=2 gives medians
// with their spread.
func TestRefusedCellsAndRepeats(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/results", "")
	dir := runDir(t, root, "*_http-matrix-refused")
	s, report := summarize(t, dir)
	if s.Status != "partial" || len(s.Cells) != 4 {
		t.Fatalf("status %q, %d cells", s.Status, len(s.Cells))
	}
	groups := phase2.Groups(s)
	if len(groups) != 2 || groups[0].Conc != 16 || len(groups[0].OK) != 2 || groups[1].Status() != "refused" {
		t.Fatalf("groups: %+v", groups)
	}
	g := groups[0]
	a, b := *g.OK[0].Metrics["rps"], *g.OK[1].Metrics["rps"]
	if got := *g.Med.RPS; math.Abs(got-(a+b)/2) > 1e-9 || *g.Min.RPS != math.Min(a, b) || *g.Max.RPS != math.Max(a, b) {
		t.Errorf("median %v min %v max %v of %v, %v", got, *g.Min.RPS, *g.Max.RPS, a, b)
	}
	if v := groups[1].Cells[0].Verdict; v.Bound != httpphase.BoundNone || !strings.Contains(v.Evidence, "fd limit") {
		t.Errorf("refused verdict %+v", v)
	}
	for _, want := range []string{"Each cell ran 2 times, all cells in one shuffled order", "Refused, not run:", "hard 100"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	check(t, "refused", dir, s, report)
}

// The oha path, on oha's real output and on one written from its schema.
func TestOhaRun(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/oha-run", "")
	s, report := summarize(t, dir)
	if len(s.Notes) > 0 && s.Notes[0] == phase2.StandInNote {
		t.Error("oha ran: no stand-in note")
	}
	// Real oha: 27653 responses of 4 bytes in 10.003119191 s, 20 aborted
	// at the deadline; a response is 115 header bytes + 4 (raw/headers/4.txt).
	m := s.Cell("4-c20").Metrics
	near := func(name string, got *float64, want float64, tol float64) {
		t.Helper()
		if got == nil || math.Abs(*got-want) > tol {
			t.Errorf("%s = %v, want %v", name, summary.Val(got), want)
		}
	}
	d := 10.003119191
	near("rps", m["rps"], 27653/d, 0.1)
	near("throughput_mbps", m["throughput_mbps"], 27653*119*8/d/1e6, 0.01)
	near("goodput_mbps", m["goodput_mbps"], 27653*4*8/d/1e6, 0.01)
	near("latency_p99_ms", m["latency_p99_ms"], 41.193928, 0.001)
	near("latency_p95_ms", m["latency_p95_ms"], 27.722344, 0.001)
	near("latency_max_ms", m["latency_max_ms"], 71.233484, 0.001)
	near("errors_deadline_aborted", m["errors_deadline_aborted"], 20, 0)
	near("errors_total", m["errors_total"], 0, 0)
	if m["latency_stdev_ms"] != nil || m["server_cpu_pct"] != nil {
		t.Error("oha has no stdev and this run no monitors: want null, not 0")
	}
	// Schema-made: 151520 x 200, 150 x 503, 2 connection errors, 64 aborted.
	// 503s are above NON2XX_MAX (0): the cell is not ok, its figures stand
	// and its RPS counts the 200s only.
	c := s.Cell("1k-c64")
	m = c.Metrics
	if want := "150 of 151670 responses (0.10 %) had an error status (by status: 503 150), above NON2XX_MAX=0"; c.Status != "failed" || c.Error == nil || *c.Error != want {
		t.Errorf("1k-c64: %s %v, want failed: %s", c.Status, c.Error, want)
	}
	d = 5.002113
	near("1k rps", m["rps"], 151520/d, 0.1)
	near("1k goodput_mbps", m["goodput_mbps"], 151520*1024*8/d/1e6, 0.01)
	near("1k errors_status", m["errors_status"], 150, 0)
	near("1k errors_total", m["errors_total"], 152, 0)
	near("1k errors_deadline_aborted", m["errors_deadline_aborted"], 64, 0)
	codes := s.Cell("1k-c64").Details["status_codes"].(map[string]any)
	if codes["200"] != 151520.0 || codes["503"] != 150.0 {
		t.Errorf("status codes %v", codes)
	}
	if c := s.Cell("1k-c1024"); c.Status != "refused" || c.Metrics["rps"] != nil {
		t.Errorf("1k-c1024: %s %v", c.Status, c.Metrics["rps"])
	}
	for _, want := range []string{"# Phase 2 — HTTP matrix: payload x concurrency (oha)", "200: 151520, 503: 150",
		"connection closed before message completed: 2", "Refused, not run: `1k-c1024`"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	check(t, "oha", dir, s, report)
}
