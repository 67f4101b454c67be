package httpphase

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

func TestVerdict(t *testing.T) {
	two := summary.F(2)
	hosts := map[string]summary.Host{"server": {CPUs: two}, "client": {CPUs: two}}
	basis := Basis{Mbps: summary.F(940), What: "Phase 0 s2c-1 940.0 Mbit/s"}
	for _, tc := range []struct {
		name, lab, tool, threads string
		m                        map[string]float64
		want                     string
	}{
		{"at the link", "ssh", "wrk", "2", map[string]float64{"throughput_mbps": 935, "link_utilization": 0.995, "server_cpu_pct": 40}, BoundNetwork},
		{"server process saturates its host", "ssh", "wrk", "4",
			map[string]float64{"throughput_mbps": 600, "link_utilization": 0.64, "server_proc_cpu_pct": 185, "client_proc_cpu_pct": 90, "server_cpu_pct": 93, "client_cpu_pct": 30}, BoundServer},
		{"wrk's one thread is saturated", "ssh", "wrk", "1",
			map[string]float64{"throughput_mbps": 600, "link_utilization": 0.64, "server_proc_cpu_pct": 60, "client_proc_cpu_pct": 99, "server_cpu_pct": 30, "client_cpu_pct": 50}, BoundClient},
		{"both hosts busy", "ssh", "oha", "",
			map[string]float64{"throughput_mbps": 600, "link_utilization": 0.64, "server_proc_cpu_pct": 150, "client_proc_cpu_pct": 150, "server_cpu_pct": 95, "client_cpu_pct": 96}, BoundBoth},
		{"one machine, both halves busy", "netns", "wrk", "2",
			map[string]float64{"throughput_mbps": 500, "link_utilization": 0.53, "server_proc_cpu_pct": 100, "client_proc_cpu_pct": 75, "server_cpu_pct": 96, "client_cpu_pct": 96}, BoundShared},
		{"one machine, CPUs 60% busy", "netns", "oha", "",
			map[string]float64{"throughput_mbps": 500, "link_utilization": 0.53, "server_proc_cpu_pct": 100, "client_proc_cpu_pct": 80, "server_cpu_pct": 60, "client_cpu_pct": 60}, BoundUnclear},
		{"below the link, idle", "ssh", "wrk", "2",
			map[string]float64{"throughput_mbps": 300, "link_utilization": 0.32, "server_proc_cpu_pct": 20, "client_proc_cpu_pct": 20, "server_cpu_pct": 10, "client_cpu_pct": 10}, BoundUnclear},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &summary.Summary{Lab: tc.lab, Hosts: hosts}
			c := &summary.Cell{Status: "ok", Params: map[string]string{"loadgen": tc.tool, "threads": tc.threads}, Metrics: map[string]*float64{}}
			// Every figure of a cell is there, null unless the case sets it.
			summary.PutFigures(c.Metrics, &Figures{CPU: map[string]hostdata.CPUFigures{"server": {}, "client": {}},
				Procs: map[string]hostdata.ProcFigures{"server": {}, "client": {}}})
			for k, v := range tc.m {
				c.Metrics[k] = summary.F(v)
			}
			v := Verdict(s, c, basis)
			if v.Bound != tc.want {
				t.Errorf("bound %q, want %q (evidence: %s)", v.Bound, tc.want, v.Evidence)
			}
			if !strings.Contains(v.Evidence, "% of Phase 0 s2c-1 940.0 Mbit/s") {
				t.Errorf("evidence lacks the comparison: %s", v.Evidence)
			}
		})
	}
	c := &summary.Cell{Status: "refused", Error: strp("fd limit: ..."), Metrics: map[string]*float64{}}
	if v := Verdict(&summary.Summary{Hosts: hosts}, c, basis); v.Bound != BoundNone || v.Evidence != "refused: fd limit: ..." {
		t.Errorf("refused: %+v", v)
	}
}

func strp(s string) *string { return &s }

// wrk as it really printed (internal/parse/testdata): figures from the
// hook's line, its text agreeing.
func TestReadWrk(t *testing.T) {
	l, err := ReadWrk("../parse/testdata/wrk-200.txt")
	if err != nil {
		t.Fatal(err)
	}
	if l.CrossCheck != "" {
		t.Errorf("cross-check: %s", l.CrossCheck)
	}
	if l.Responses != 148767 || l.OK != 148767 || *l.WireBytes != 18000807 || math.Abs(l.DurationS-2.100614) > 1e-9 {
		t.Errorf("%+v", l)
	}
	if *l.Latency["p99"] != 1.91 || *l.Latency["p99_9"] != 4.074 || *l.Latency["max"] != 5.784 {
		t.Errorf("latency %v %v %v", *l.Latency["p99"], *l.Latency["p99_9"], *l.Latency["max"])
	}
	l, err = ReadWrk("../parse/testdata/wrk-503.txt")
	if err != nil {
		t.Fatal(err)
	}
	if l.OK != 0 || l.Errors["status"] != l.Responses || l.ErrorsTotal < l.Responses {
		t.Errorf("503s: ok %v status %v of %v", l.OK, l.Errors["status"], l.Responses)
	}
}

// oha's real output: bodies only, so the wire bytes come from the response
// curl captured.
func TestReadOha(t *testing.T) {
	resp := 119.0
	path := "/work/shared/fixtures/oha/oha-json-c20-z10s.json"
	if _, err := os.Stat(path); err != nil {
		path = "../parse/testdata/oha-json-c20-z10s.json" // the same output, copied
	}
	l, err := ReadOha(path, &resp)
	if err != nil {
		t.Fatal(err)
	}
	if l.Responses != 27653 || l.OK != 27653 || l.Aborted != 20 || l.ErrorsTotal != 0 || *l.WireBytes != 27653*119 {
		t.Errorf("%+v", l)
	}
	if l.Latency["stdev"] != nil || math.Abs(*l.Latency["p50"]-4.653315) > 1e-9 {
		t.Errorf("latency: stdev %v p50 %v", l.Latency["stdev"], *l.Latency["p50"])
	}
	if l, _ = ReadOha("../parse/testdata/oha-json-c20-z10s.json", nil); l.WireBytes != nil {
		t.Error("no capture: wire bytes must be unknown, not bodies")
	}
}

func TestResponseBytes(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "raw", "headers"), 0o755)
	os.WriteFile(filepath.Join(dir, "raw", "headers", "10k.txt"), []byte("HTTP/1.1 200 OK\r\n\r\n"), 0o644)
	if v := ResponseBytes(dir, "10k"); v == nil || *v != 19+10240 {
		t.Errorf("10k: %v", summary.Val(v))
	}
	if v := ResponseBytes(dir, "1k"); v != nil {
		t.Errorf("no capture: %v, want nil", *v)
	}
}

// With N clients each client is judged on its own: client2's wrk at its
// two threads' limit makes the cell client-CPU-bound, named; the same
// load spread evenly (sum 180 % of one CPU over two 2-thread clients)
// does not.
func TestVerdictClients(t *testing.T) {
	two := summary.F(2)
	hosts := map[string]summary.Host{"server": {CPUs: two}, "client1": {CPUs: two}, "client2": {CPUs: two}}
	basis := Basis{Mbps: summary.F(940), What: "Phase 0 s2c-1 940.0 Mbit/s"}
	cl := &summary.Clients{N: 2, Hosts: []summary.ClientHost{{Label: "client1", CPUs: "1"}, {Label: "client2"}}}
	for _, tc := range []struct {
		name     string
		lab      string
		p1, p2   float64
		want     string
		evidence string
	}{
		{"client2 saturated", "ssh", 40, 185, BoundClient, "client2 is CPU-bound (wrk 185% of one CPU, limit 2 thread(s))"},
		{"client1 at its one CPU", "netns", 95, 40, BoundClient, "client1 is CPU-bound (wrk 95% of one CPU, limit its CPUs)"},
		{"spread evenly", "ssh", 85, 170, BoundUnclear, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &summary.Summary{Lab: tc.lab, Hosts: hosts, Clients: cl}
			c := &summary.Cell{Status: "ok", Params: map[string]string{"loadgen": "wrk", "threads": "2"}, Metrics: map[string]*float64{
				"throughput_mbps": summary.F(500), "link_utilization": summary.F(0.53), "server_proc_cpu_pct": summary.F(30),
				"client_proc_cpu_pct": summary.F(tc.p1 + tc.p2), "server_cpu_pct": summary.F(50)}}
			c.Clients = []summary.ClientCell{
				{Label: "client1", Metrics: map[string]*float64{"loadgen_cpu_pct": summary.F(tc.p1), "host_cpu_pct": summary.F(50)}},
				{Label: "client2", Metrics: map[string]*float64{"loadgen_cpu_pct": summary.F(tc.p2), "host_cpu_pct": summary.F(50)}},
			}
			v := Verdict(s, c, basis)
			if v.Bound != tc.want || !strings.Contains(v.Evidence, tc.evidence) {
				t.Errorf("bound %q, want %q; evidence: %s", v.Bound, tc.want, v.Evidence)
			}
		})
	}
}

// Two real wrk runs (internal/parse/testdata) merged: counts add up, the
// latency figures are those of all their samples together.
func TestMergeLoads(t *testing.T) {
	a, err := ReadWrk("../parse/testdata/wrk-dist-200.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadWrk("../parse/testdata/wrk-dist-c1.txt")
	if err != nil {
		t.Fatal(err)
	}
	if a.Dist == nil || b.Dist == nil || a.CrossCheck != "" || b.CrossCheck != "" {
		t.Fatalf("dists %v %v, cross-checks %q %q", a.Dist != nil, b.Dist != nil, a.CrossCheck, b.CrossCheck)
	}
	m := MergeLoads([]*Load{a, b})
	if m.Responses != a.Responses+b.Responses || m.ErrorsTotal != a.ErrorsTotal+b.ErrorsTotal {
		t.Errorf("responses %v, errors %v", m.Responses, m.ErrorsTotal)
	}
	var all []uint64
	for _, d := range []*Load{a, b} {
		for _, p := range d.Dist.Pairs() {
			for i := uint64(0); i < p.Count; i++ {
				all = append(all, p.Value)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	n := float64(len(all))
	for k, p := range map[string]float64{"p50": 50, "p90": 90, "p99": 99, "p99_9": 99.9} {
		// wrk's rank, round(p/100*n + 0.5), is exact here in float64.
		rank := int(math.Round(p/100*n + 0.5))
		if want := float64(all[rank-1]) / 1000; m.Latency[k] == nil || *m.Latency[k] != want {
			t.Errorf("%s = %v, want %v", k, summary.Val(m.Latency[k]), want)
		}
	}
	if want := float64(all[len(all)-1]) / 1000; *m.Latency["max"] != want {
		t.Errorf("max %v, want %v", *m.Latency["max"], want)
	}
	// Without one client's distribution: the maximum only.
	b.Dist = nil
	m = MergeLoads([]*Load{a, b})
	if m.Dist != nil || m.Latency["p99"] != nil || m.Latency["max"] == nil || m.Latency["mean"] != nil {
		t.Errorf("not mergeable, yet %+v", m.Latency)
	}
}

// A distribution line that disagrees with the JSON line, or cannot be
// read, is not merged: the run's own figures stand, the reason is noted.
func TestReadWrkBadDistribution(t *testing.T) {
	raw, err := os.ReadFile("../parse/testdata/wrk-dist-c1.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(string) string{
		"empty": func(l string) string {
			return `CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","values":[]}`
		},
		"malformed": func(l string) string { return l[:len(l)/2] },
	} {
		var lines []string
		for _, l := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(l, "CSB_WRK_DIST ") {
				l = edit(l)
			}
			lines = append(lines, l)
		}
		p := filepath.Join(t.TempDir(), "w.txt")
		os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644)
		l, err := ReadWrk(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if l.Dist != nil || l.DistMissing == "" || !strings.Contains(l.CrossCheck, "distribution line") || l.Latency["p99"] == nil {
			t.Errorf("%s: dist %v, missing %q, cross-check %q", name, l.Dist != nil, l.DistMissing, l.CrossCheck)
		}
	}
}
