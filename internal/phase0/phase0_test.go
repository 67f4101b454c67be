package phase0_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/cli"
	"csbench/internal/golden"
	"csbench/internal/summary"
)

// The fixture is a real smoke run on the netns lab (large environment files
// removed). Without gnuplot on PATH the report says the chart was skipped,
// so the golden file does not depend on this machine.
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
	if s.Status != "ok" || len(s.Cells) != 4 {
		t.Fatalf("status %q, %d cells", s.Status, len(s.Cells))
	}
	for _, c := range s.Cells {
		tp := c.Metrics["throughput_mbps"]
		if tp == nil || *tp < 850 || *tp > 1000 {
			t.Errorf("%s: throughput %v outside the shaped link's 850-1000 Mbit/s", c.Name, summary.Val(tp))
		}
		if c.Verdict == nil || c.Verdict.Bound != "link" {
			t.Errorf("%s: verdict %+v, want link", c.Name, c.Verdict)
		}
		if c.Metrics["server_cpu_pct"] == nil || c.Metrics["client_retrans_segs"] == nil {
			t.Errorf("%s: host metrics missing: %v", c.Name, c.Metrics)
		}
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "summary.json", string(b)+"\n")
	report, _ := os.ReadFile(filepath.Join(dir, "Report_00-iperf3.md"))
	golden.Check(t, "Report_00-iperf3.md", string(report))
	gp, _ := os.ReadFile(filepath.Join(dir, "throughput.gp"))
	golden.Check(t, "throughput.gp", string(gp))

	// notes.md is included, and regeneration keeps it.
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("The switch was a cheap one.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cli.Summarize(dir, cli.GeneratedBy); err != nil {
		t.Fatal(err)
	}
	report, _ = os.ReadFile(filepath.Join(dir, "Report_00-iperf3.md"))
	if !strings.Contains(string(report), "The switch was a cheap one.") {
		t.Error("notes.md is not in the regenerated report")
	}
}

// A cell whose iperf3 JSON reports an error is failed, its metrics null.
func TestFailedCellIsNullNotZero(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	refused, err := os.ReadFile("../parse/testdata/iperf3-refused.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raw", "c2s-4.json"), refused, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cli.Summarize(dir, cli.GeneratedBy); err != nil {
		t.Fatal(err)
	}
	s, err := summary.Load(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cell("c2s-4")
	if c.Status != "failed" || c.Error == nil || c.Metrics["throughput_mbps"] != nil {
		t.Fatalf("c2s-4: status %q error %v throughput %v", c.Status, c.Error, c.Metrics["throughput_mbps"])
	}
}
