package phase0_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/cli"
	"csbench/internal/golden"
	"csbench/internal/phase0"
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
		if c.Verdict == nil || c.Verdict.Code != phase0.CodeLink {
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

// A raw file cut short (a full disk, a killed copy) is not a measurement:
// summarize fails, the run becomes partial (summary.json, run.env, the
// report), and the cell's error is one line naming the file, with none of
// the raw bytes.
func TestTruncatedRawMarksRunPartial(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	raw := filepath.Join(dir, "raw", "s2c-1.json")
	b, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	cut := append(b[:len(b)/2:len(b)/2], "\x00\x1b[31m\xff"...)
	if err := os.WriteFile(raw, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	err = cli.Summarize(dir, cli.GeneratedBy)
	if err == nil {
		t.Fatal("summarize of a truncated raw file succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "partial") || !strings.Contains(msg, "raw/s2c-1.json") || strings.ContainsAny(msg, "\n\x00\x1b\xff") {
		t.Errorf("error %q: want one line naming raw/s2c-1.json and the partial status", msg)
	}
	s, lerr := summary.Load(filepath.Join(dir, "summary.json"))
	if lerr != nil {
		t.Fatal(lerr)
	}
	if s.Status != "partial" || s.Error == nil || !strings.Contains(*s.Error, "raw/s2c-1.json") {
		t.Fatalf("summary status %q error %v", s.Status, s.Error)
	}
	c := s.Cell("s2c-1")
	if c.Status != "failed" || c.Error == nil || c.Metrics["throughput_mbps"] != nil {
		t.Fatalf("s2c-1: status %q error %v throughput %v", c.Status, c.Error, c.Metrics["throughput_mbps"])
	}
	e := *c.Error
	if !strings.HasPrefix(e, "raw/s2c-1.json: ") || len(e) > summary.MaxErrorLen || strings.ContainsAny(e, "\n\x00\x1b") || strings.ContainsRune(e, '\uFFFD') {
		t.Errorf("cell error %q: want one short printable line starting with the file", e)
	}
	if s.Cell("c2s-1").Status != "ok" {
		t.Errorf("the other cells stay ok")
	}
	env, _ := os.ReadFile(filepath.Join(dir, "run.env"))
	// The runner's own error stays as it was; summarize's finding goes beside it.
	if !strings.HasSuffix(string(env), "status=partial\nsummarize_error="+*s.Error+"\n") {
		t.Errorf("run.env does not end with status=partial and summarize's finding:\n%s", env)
	}
	rep, _ := os.ReadFile(filepath.Join(dir, "Report_00-iperf3.md"))
	if !strings.Contains(string(rep), "| status | partial — "+*s.Error) {
		t.Errorf("the report's status line does not say partial and why")
	}
	// A second summarize says the same and adds nothing to run.env.
	if err2 := cli.Summarize(dir, cli.GeneratedBy); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second summarize: %v, want %v", err2, err)
	}
	env2, _ := os.ReadFile(filepath.Join(dir, "run.env"))
	if string(env2) != string(env) {
		t.Errorf("a second summarize changed run.env")
	}
}
