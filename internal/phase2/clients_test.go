package phase2_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/golden"
	"csbench/internal/summary"
)

// oha-run laid out as a two-client run, in this test: both clients'
// output is the real oha JSON of the cell (one file, twice), each client
// started 10 ms apart. oha's JSON carries percentiles, not its whole
// distribution: the cell's rates are summed, its maximum is exact, and
// no percentile is given (never an average of the clients'), as the
// report says.
func TestOhaTwoClients(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/oha-run", "")
	env, _ := os.ReadFile(filepath.Join(dir, "run.env"))
	env = append(env, []byte("clients=2\nclient.1.label=client1\nclient.1.ssh=local\nclient.1.cpus=\nclient.1.clock_offset_ms=0\n"+
		"client.2.label=client2\nclient.2.ssh=root@198.18.0.3\nclient.2.cpus=\nclient.2.clock_offset_ms=0\n")...)
	os.WriteFile(filepath.Join(dir, "run.env"), env, 0o644)
	for _, cell := range []struct {
		name    string
		startMs int64
		durMs   int64
	}{{"4-c20", 1796040001000, 10003}, {"1k-c64", 1796040013000, 5003}} {
		raw, err := os.ReadFile(filepath.Join(dir, "raw", cell.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= 2; k++ {
			d := filepath.Join(dir, "raw", fmt.Sprintf("client%d", k))
			os.MkdirAll(d, 0o755)
			os.WriteFile(filepath.Join(d, cell.name+".json"), raw, 0o644)
			start := cell.startMs + int64(k-1)*10
			os.WriteFile(filepath.Join(d, cell.name+".timing.json"), []byte(fmt.Sprintf(
				`{"schema":"csb.timing/v1","due_ms":%d,"start_ms":%d,"end_ms":%d,"exit":0}`, start, start, start+cell.durMs)), 0o644)
		}
		os.Remove(filepath.Join(dir, "raw", cell.name+".json"))
	}
	s, report := summarize(t, dir)
	c := s.Cell("4-c20")
	m := c.Metrics
	if c.Status != "ok" || c.LatencyMerge != summary.LatencyMergeNone || len(c.Clients) != 2 {
		t.Fatalf("status %q, merge %q, %d clients", c.Status, c.LatencyMerge, len(c.Clients))
	}
	// Real oha: 27653 responses in 10.003119191 s, slowest 71.233484 ms.
	if want := math.Round(2*27653/10.003119191*10) / 10; summary.Val(m["rps"]) != want {
		t.Errorf("rps %v, want %v", summary.Val(m["rps"]), want)
	}
	if summary.Val(m["requests"]) != 2*27653 || summary.Val(m["latency_max_ms"]) != 71.233 {
		t.Errorf("requests %v, max %v", summary.Val(m["requests"]), summary.Val(m["latency_max_ms"]))
	}
	for _, k := range []string{"latency_p50_ms", "latency_p99_ms", "latency_mean_ms"} {
		if m[k] != nil {
			t.Errorf("%s = %v: oha's percentiles cannot be merged, want null", k, *m[k])
		}
	}
	if p := c.Clients[1].Metrics["latency_p99_ms"]; p == nil || *p != 41.194 {
		t.Errorf("client2's own p99: %v", summary.Val(p))
	}
	if o := c.Overlap; o == nil || o.StartSpreadMs != 10 || o.EndSpreadMs != 10 {
		t.Errorf("overlap %+v", o)
	}
	for _, want := range []string{"## Per client (2 client hosts)", "**Latency not merged exactly**", "| `4-c20` | client2 |"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// Two wrk clients (testdata/clients2, from real netns smoke runs, see its
// README): rates summed, latencies from the merged distributions, a
// per-client table; golden summary and report.
func TestWrkTwoClients(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/clients2/results", "results")
	dirs, _ := filepath.Glob(filepath.Join(root, "02-http-matrix", "*"))
	if len(dirs) != 1 {
		t.Fatalf("runs: %v", dirs)
	}
	s, report := summarize(t, dirs[0])
	if s.Clients == nil || len(s.Cells) != 2 || s.Link.BaselineMbps == nil {
		t.Fatalf("clients %v, %d cells, baseline %v", s.Clients, len(s.Cells), s.Link.BaselineMbps)
	}
	for _, c := range s.Cells {
		var rps float64
		for _, cc := range c.Clients {
			rps += summary.Val(cc.Metrics["requests"]) / summary.Val(cc.Metrics["duration_s"])
		}
		// Per-client durations are rounded to ms: the sum agrees to 0.1 %.
		if got := summary.Val(c.Metrics["rps"]); c.LatencyMerge != summary.LatencyMergeExact || math.Abs(got-rps) > rps/1000 {
			t.Errorf("%s: rps %v, per-client sum %v, merge %q", c.Name, got, rps, c.LatencyMerge)
		}
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "clients2-summary.json", string(b)+"\n")
	golden.Check(t, "clients2-Report_02-http-matrix.md", report)
}
