package phase0_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"csbench/internal/cli"
	"csbench/internal/golden"
	"csbench/internal/parse"
	"csbench/internal/summary"
)

// Two clients (testdata/clients2, laid out from two real smoke runs, see
// its README): the aggregate is recomputed here from the per-client iperf3
// JSON and timing files: each interval placed on the controller's clock,
// the window every client measured in, the bytes in it summed.
func TestSummarizeTwoClients(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/clients2/run", "")
	if err := cli.Summarize(dir, cli.GeneratedBy); err != nil {
		t.Fatal(err)
	}
	s, err := summary.Load(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != "ok" || len(s.Cells) != 4 || s.Clients == nil || len(s.Notes) != 0 {
		t.Fatalf("status %q, %d cells, clients %v, notes %q", s.Status, len(s.Cells), s.Clients, s.Notes)
	}
	offsets := map[string]float64{"client1": 0, "client2": -250}
	for _, c := range s.Cells {
		type iv struct{ a, b, bytes float64 }
		per := map[string][]iv{}
		from, to := math.Inf(-1), math.Inf(1)
		own := 0.0
		for _, label := range []string{"client1", "client2"} {
			f, err := os.Open(filepath.Join(dir, "raw", label, c.Name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := parse.ParseIperf3(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			own += *res.ReceiverBitsPerSecond
			b, _ := os.ReadFile(filepath.Join(dir, "raw", label, c.Name+".timing.json"))
			var tm struct {
				StartMs float64 `json:"start_ms"`
			}
			if err := json.Unmarshal(b, &tm); err != nil {
				t.Fatal(err)
			}
			// The measured timeline starts omit_s after the client did;
			// each measured interval runs from the previous one's end.
			omit, _ := strconv.ParseFloat(c.Params["omit_s"], 64)
			t0 := tm.StartMs - offsets[label] + omit*1000
			prev := 0.0
			for _, x := range res.Intervals {
				if !x.Omitted {
					per[label] = append(per[label], iv{t0 + prev*1000, t0 + x.EndS*1000, float64(x.Bytes)})
					prev = x.EndS
				}
			}
			l := per[label]
			from, to = math.Max(from, l[0].a), math.Min(to, l[len(l)-1].b)
		}
		total := 0.0
		for _, l := range per {
			for _, x := range l {
				if cut := math.Min(x.b, to) - math.Max(x.a, from); cut > 0 {
					total += x.bytes * 8 * cut / (x.b - x.a)
				}
			}
		}
		want := math.Round(total/((to-from)/1000)/1e4) / 100
		if got := c.Metrics["throughput_mbps"]; got == nil || *got != want {
			t.Errorf("%s: throughput %v, want %v", c.Name, summary.Val(got), want)
		}
		// Within 1 % of the plain sum of the clients' own figures.
		if got := *c.Metrics["throughput_mbps"]; math.Abs(got-own/1e6) > own/1e6/100 {
			t.Errorf("%s: %v Mbit/s in the window, %v over their own runs", c.Name, got, own/1e6)
		}
		if len(c.Clients) != 2 || c.Overlap == nil || c.Overlap.StartSpreadMs != 22 {
			t.Errorf("%s: %d clients, overlap %+v", c.Name, len(c.Clients), c.Overlap)
		}
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "clients2.summary.json", string(b)+"\n")
	report, _ := os.ReadFile(filepath.Join(dir, "Report_00-iperf3.md"))
	golden.Check(t, "clients2.Report_00-iperf3.md", string(report))
	if !strings.Contains(string(report), "| `s2c-1` | client2 |") {
		t.Error("no per-client row in the report")
	}
}
