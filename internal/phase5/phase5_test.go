package phase5_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/cli"
	"csbench/internal/golden"
	"csbench/internal/summary"
)

// The fixture is a real smoke run against the ground-truth server
// (testdata/README.md): the capacity is replayed from the steps' raw
// files and compared with the server's own account. With no gnuplot on
// PATH the report says the chart was skipped, so the golden files do not
// depend on this machine.
func TestSummarizeRealRun(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	if err := cli.Summarize(dir, cli.GeneratedBy); err != nil {
		t.Fatal(err)
	}
	s, err := summary.Load(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != "ok" || len(s.Cells) != 8 || len(s.Capacity) != 1 {
		t.Fatalf("status %q, %d cells, %d capacities", s.Status, len(s.Cells), len(s.Capacity))
	}
	c := s.Capacity[0]
	if c.CapacityRPS == nil || *c.CapacityRPS != 3875 || *c.HighRPS != 3938 || c.Bound != "latency" || c.TruthRPS == nil {
		t.Fatalf("capacity %+v", c)
	}
	if d := math.Abs(*c.CapacityRPS / *c.TruthRPS - 1); d > 0.05 {
		t.Errorf("capacity %v is %.1f%% off its truth %v", *c.CapacityRPS, 100*d, *c.TruthRPS)
	}
	for i, want := range []string{"pass", "pass", "latency", "pass", "pass", "pass", "pass", "latency"} {
		if got := s.Cells[i].Verdict.Bound; got != want {
			t.Errorf("step %d: %s, want %s", i+1, got, want)
		}
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "summary.json", string(b)+"\n")
	report, _ := os.ReadFile(filepath.Join(dir, "Report_05-capacity.md"))
	golden.Check(t, "Report_05-capacity.md", string(report))
	gp, _ := os.ReadFile(filepath.Join(dir, "latency-1k.gp"))
	golden.Check(t, "latency-1k.gp", string(gp))
	if !strings.Contains(string(report), "the search found 99.9 % of it") {
		t.Error("the report does not compare the capacity with its truth")
	}
}

// A step file that cannot be read makes the run partial, naming the file;
// the search is replayed over the steps that could be read.
func TestUnreadableStep(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	if err := os.WriteFile(filepath.Join(dir, "raw", "client", "1k-s08.json"), []byte(`{"tool":"connclient"`), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = cli.Summarize(dir, cli.GeneratedBy)
	s, err := summary.Load(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != "partial" || s.Cells[7].Status != "failed" || !strings.Contains(*s.Cells[7].Error, "1k-s08.json") {
		t.Fatalf("status %q, step 8 %q %v", s.Status, s.Cells[7].Status, s.Cells[7].Error)
	}
	if c := s.Capacity[0]; c.Done || c.Bound != "cut_short" || *c.LowRPS != 3875 {
		t.Errorf("capacity %+v", c)
	}
}
