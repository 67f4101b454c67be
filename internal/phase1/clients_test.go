package phase1_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/dist"
	"csbench/internal/golden"
	"csbench/internal/parse"
	"csbench/internal/summary"
)

// A run with two client hosts (testdata/clients2, laid out from real wrk
// output, see its README): the cell's figures are recomputed here from the
// per-client raw files, independently of httpphase: rates summed, counts
// summed, latency percentiles from all the samples of both clients.
func TestSummarizeTwoClients(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/clients2/results", "results")
	dir := only(t, root, "01-http-baseline")
	s := summarize(t, dir)
	if s.Status != "ok" || len(s.Cells) != 2 || s.Clients == nil || s.Clients.N != 2 {
		t.Fatalf("status %q, %d cells, clients %+v", s.Status, len(s.Cells), s.Clients)
	}
	if len(s.Notes) != 0 {
		t.Errorf("notes: %q", s.Notes)
	}
	for _, c := range s.Cells {
		var rps, mbps, requests float64
		var samples []uint64
		maxUs := 0.0
		for _, label := range []string{"client1", "client2"} {
			raw, err := os.ReadFile(filepath.Join(dir, "raw", label, c.Name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			j, err := parse.ParseWrkJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			sec := float64(j.DurationUs) / 1e6
			rps += float64(j.Requests) / sec
			mbps += float64(j.Bytes) * 8 / sec / 1e6
			requests += float64(j.Requests)
			maxUs = math.Max(maxUs, *j.LatencyMaxUs)
			// The distribution line, expanded back into samples.
			line := raw[bytes.Index(raw, []byte(parse.WrkDistPrefix))+len(parse.WrkDistPrefix):]
			var in struct {
				Values [][2]uint64 `json:"values"`
			}
			if err := json.NewDecoder(bytes.NewReader(line)).Decode(&in); err != nil {
				t.Fatal(err)
			}
			for _, p := range in.Values {
				for i := uint64(0); i < p[1]; i++ {
					samples = append(samples, p[0])
				}
			}
		}
		m := c.Metrics
		want := func(k string, v float64, decimals int) {
			t.Helper()
			p := math.Pow(10, float64(decimals))
			if got := m[k]; got == nil || *got != math.Round(v*p)/p {
				t.Errorf("%s: %s = %v, want %v", c.Name, k, summary.Val(got), math.Round(v*p)/p)
			}
		}
		want("rps", rps, 1)
		want("throughput_mbps", mbps, 2)
		want("requests", requests, 0)
		want("latency_max_ms", maxUs/1000, 3)
		all := dist.FromSamples(samples)
		for k, p := range map[string]float64{"p50": 50, "p90": 90, "p99": 99, "p99_9": 99.9} {
			v, _ := all.Percentile(p)
			want("latency_"+k+"_ms", float64(v)/1000, 3)
		}
		if c.LatencyMerge != summary.LatencyMergeExact || len(c.Clients) != 2 {
			t.Errorf("%s: latency_merge %q, %d clients", c.Name, c.LatencyMerge, len(c.Clients))
		}
		// client2 started 40 ms after client1 on the controller's clock
		// (its own clock is 250 ms ahead).
		if o := c.Overlap; o == nil || o.StartSpreadMs != 40 || o.S <= 1.9 {
			t.Errorf("%s: overlap %+v", c.Name, o)
		}
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "clients2.summary.json", string(b)+"\n")
	report, _ := os.ReadFile(filepath.Join(dir, "Report_01-http-baseline.md"))
	golden.Check(t, "clients2.Report_01-http-baseline.md", string(report))
	for _, want := range []string{"## Per client (2 client hosts)", "| `100k` | client2 | 16 |", "exact", "CPUs it had (cpuset)"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// A client whose wrk ran a hook without the distribution line: the cell's
// percentiles are not given (never averaged), its maximum is, and the
// report says why.
func TestTwoClientsWithoutDistribution(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/clients2/results", "results")
	dir := only(t, root, "01-http-baseline")
	p := filepath.Join(dir, "raw", "client2", "1k.txt")
	raw, _ := os.ReadFile(p)
	var kept []string
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(l, parse.WrkDistPrefix) {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(p, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	s := summarize(t, dir)
	c := s.Cell("1k")
	if c.LatencyMerge != summary.LatencyMergeNone || c.Metrics["latency_p99_ms"] != nil || c.Metrics["latency_max_ms"] == nil {
		t.Fatalf("merge %q, p99 %v, max %v", c.LatencyMerge, summary.Val(c.Metrics["latency_p99_ms"]), summary.Val(c.Metrics["latency_max_ms"]))
	}
	if c.Clients[1].Metrics["latency_p99_ms"] == nil {
		t.Error("client2's own p99 is lost")
	}
	report, _ := os.ReadFile(filepath.Join(dir, "Report_01-http-baseline.md"))
	if !strings.Contains(string(report), "Latency not merged exactly") {
		t.Error("the report does not say the latency could not be merged")
	}
}
