package phase1_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/cli"
	"csbench/internal/golden"
	"csbench/internal/httpphase"
	"csbench/internal/summary"
)

// only returns the single run directory under root/phase.
func only(t *testing.T, root, phase string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, phase, "*"))
	if len(dirs) != 1 {
		t.Fatalf("want one run under %s, got %v", phase, dirs)
	}
	return dirs[0]
}

func summarize(t *testing.T, dir string) *summary.Summary {
	t.Helper()
	if err := cli.Summarize(dir, cli.GeneratedBy); err != nil {
		t.Fatal(err)
	}
	s, err := summary.Load(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The fixture is a real smoke run on the netns lab, beside the Phase 0
// smoke run made just before it. Without gnuplot on PATH the report says
// the chart was skipped, so the golden files do not depend on this machine.
func TestSummarizeRealRun(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/results", "results")
	dir := only(t, root, "01-http-baseline")
	p0 := only(t, root, "00-iperf3")
	s := summarize(t, dir)
	if s.Status != "ok" || len(s.Cells) != 3 {
		t.Fatalf("status %q, %d cells", s.Status, len(s.Cells))
	}
	if want := "../../00-iperf3/" + filepath.Base(p0); s.Link.BaselineRun != want || s.Link.BaselineMbps == nil {
		t.Fatalf("baseline %q %v, want %q", s.Link.BaselineRun, summary.Val(s.Link.BaselineMbps), want)
	}
	for _, c := range s.Cells {
		m := c.Metrics
		for _, k := range []string{"rps", "throughput_mbps", "goodput_mbps", "link_utilization", "latency_p50_ms", "latency_p99_ms",
			"latency_p99_9_ms", "errors_total", "server_cpu_pct", "client_cpu_pct", "server_proc_cpu_pct", "client_proc_cpu_pct",
			"server_retrans_segs", "server_listen_overflows"} {
			if m[k] == nil {
				t.Errorf("%s: %s is null", c.Name, k)
			}
		}
		if *m["goodput_mbps"] >= *m["throughput_mbps"] {
			t.Errorf("%s: goodput %v >= throughput %v", c.Name, *m["goodput_mbps"], *m["throughput_mbps"])
		}
		if m["errors_deadline_aborted"] != nil {
			t.Errorf("%s: wrk has no deadline aborts, want null", c.Name)
		}
	}
	if b := s.Cell("100k").Verdict.Bound; b != httpphase.BoundNetwork {
		t.Errorf("100k: %s, want %s", b, httpphase.BoundNetwork)
	}
	if b := s.Cell("1k").Verdict.Bound; b != httpphase.BoundShared {
		t.Errorf("1k: %s, want %s", b, httpphase.BoundShared)
	}

	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "summary.json", string(b)+"\n")
	report, _ := os.ReadFile(filepath.Join(dir, "Report_01-http-baseline.md"))
	golden.Check(t, "Report_01-http-baseline.md", string(report))
	gp, _ := os.ReadFile(filepath.Join(dir, "throughput.gp"))
	golden.Check(t, "throughput.gp", string(gp))

	// notes.md is included, and regeneration keeps it.
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("The 1 KB cell shared two cores with wrk.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	summarize(t, dir)
	report, _ = os.ReadFile(filepath.Join(dir, "Report_01-http-baseline.md"))
	if !strings.Contains(string(report), "The 1 KB cell shared two cores with wrk.") {
		t.Error("notes.md is not in the regenerated report")
	}
}

// Without a Phase 0 run of the same lab, link rate and server before this
// run, the basis is the TCP ceiling of LINK_RATE, and the summary says why.
func TestBaselineMustMatchTheLab(t *testing.T) {
	t.Setenv("PATH", "")
	for _, tc := range []struct {
		name string
		edit func(map[string]any)
	}{
		{"other lab", func(p map[string]any) { p["lab"] = "local" }},
		{"other link rate", func(p map[string]any) { p["settings"].(map[string]any)["LINK_RATE"] = "100mbit" }},
		{"started later", func(p map[string]any) { p["started_at"] = "2099-01-01T00:00:00Z" }},
		{"failed", func(p map[string]any) { p["status"] = "failed" }},
		{"no phase 0", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := golden.CopyTree(t, "testdata/results", "results")
			p0 := only(t, root, "00-iperf3")
			if tc.edit == nil {
				os.RemoveAll(p0)
			} else {
				path := filepath.Join(p0, "summary.json")
				var p map[string]any
				b, _ := os.ReadFile(path)
				if err := json.Unmarshal(b, &p); err != nil {
					t.Fatal(err)
				}
				tc.edit(p)
				b, _ = json.Marshal(p)
				os.WriteFile(path, b, 0o644)
			}
			s := summarize(t, only(t, root, "01-http-baseline"))
			if s.Link.BaselineRun != "" || s.Link.BaselineMbps != nil {
				t.Fatalf("baseline %q used", s.Link.BaselineRun)
			}
			if !strings.Contains(s.Link.BaselineComment, "compared with the TCP ceiling of LINK_RATE instead") {
				t.Errorf("comment: %q", s.Link.BaselineComment)
			}
			u, tp := s.Cell("100k").Metrics["link_utilization"], s.Cell("100k").Metrics["throughput_mbps"]
			if u == nil || *u != float64(int(*tp / *s.Link.TCPCeilingMbps * 1000 + 0.5))/1000 {
				t.Errorf("100k utilization %v against the ceiling %v", summary.Val(u), summary.Val(s.Link.TCPCeilingMbps))
			}
		})
	}
}

// A cell whose wrk could not connect is failed with wrk's own words, its
// metrics null (never 0), its verdict "not measured".
func TestWrkThatNeverConnected(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/results", "results")
	dir := only(t, root, "01-http-baseline")
	refused, err := os.ReadFile("../parse/testdata/wrk-refused.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raw", "10k.txt"), refused, 0o644); err != nil {
		t.Fatal(err)
	}
	s := summarize(t, dir)
	c := s.Cell("10k")
	if c.Status != "failed" || c.Error == nil || !strings.Contains(*c.Error, "unable to connect") {
		t.Fatalf("10k: status %q error %v", c.Status, c.Error)
	}
	for _, k := range []string{"rps", "throughput_mbps", "latency_p99_ms", "link_utilization"} {
		if c.Metrics[k] != nil {
			t.Errorf("10k: %s = %v, want null", k, *c.Metrics[k])
		}
	}
	if c.Verdict.Bound != httpphase.BoundNone {
		t.Errorf("10k verdict %q", c.Verdict.Bound)
	}
}
