package phase4_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/cli"
	"csbench/internal/connresult"
	"csbench/internal/golden"
	"csbench/internal/summary"
)

func metric(t *testing.T, s *summary.Summary, cell, key string) float64 {
	t.Helper()
	c := s.Cell(cell)
	if c == nil {
		t.Fatalf("no cell %s", cell)
	}
	v := c.Metrics[key]
	if v == nil {
		t.Fatalf("%s: %s is null", cell, key)
	}
	return *v
}

// The fixture is a real smoke run on the netns lab (testdata/README.md).
// With no gnuplot on PATH the report says the chart was skipped, so the
// golden files do not depend on this machine.
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
	if s.Status != "ok" || len(s.Cells) != 9 {
		t.Fatalf("status %q, %d cells", s.Status, len(s.Cells))
	}
	// The wall predicted from the settings read before the cell is met.
	if metric(t, s, "churn-client-500", "predicted_eaddrnotavail") != 1 || metric(t, s, "churn-client-500", "errors_eaddrnotavail") == 0 {
		t.Error("churn-client-500: the predicted port wall is not met")
	}
	if b := s.Cell("churn-client-500").Verdict.Bound; b != "ephemeral ports" {
		t.Errorf("churn-client-500 verdict %q", b)
	}
	if metric(t, s, "backlog-128", "server_listen_overflows") == 0 || metric(t, s, "backlog-4096", "server_listen_overflows") != 0 {
		t.Error("backlog 128 should overflow and 4096 not")
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "summary.json", string(b)+"\n")
	report, _ := os.ReadFile(filepath.Join(dir, "Report_04-connections.md"))
	golden.Check(t, "Report_04-connections.md", string(report))
	for _, ext := range []string{"gp", "dat"} {
		b, err := os.ReadFile(filepath.Join(dir, "time-wait."+ext))
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "time-wait."+ext, string(b))
	}

	// notes.md is included, and regeneration keeps it.
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("Five helpers shared the machine.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cli.Summarize(dir, cli.GeneratedBy); err != nil {
		t.Fatal(err)
	}
	report, _ = os.ReadFile(filepath.Join(dir, "Report_04-connections.md"))
	if !strings.Contains(string(report), "Five helpers shared the machine.") {
		t.Error("notes.md is not in the regenerated report")
	}
}

// A churn result that is cut short fails its cell with the file named, and
// the run is partial.
func TestSummarizeBrokenResult(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	p := filepath.Join(dir, "raw", "churn-server-500.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	err = cli.Summarize(dir, cli.GeneratedBy)
	if err == nil || !strings.Contains(err.Error(), "raw/churn-server-500.json") {
		t.Fatalf("err %v, want one naming raw/churn-server-500.json", err)
	}
	s, _ := summary.Load(filepath.Join(dir, "summary.json"))
	if s == nil || s.Status != "partial" || s.Cell("churn-server-500").Status != "failed" {
		t.Errorf("summary %+v", s)
	}
}

// The TLS fixture is a real smoke run over https (testdata/README.md): the
// burst cleartext, accept steps with full and resumed handshakes, one churn
// cell toward 100 client ports.
func TestSummarizeTLSRun(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run-tls", "")
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
	if s.Cell("backlog-128").Metrics["tls_handshakes_full"] != nil {
		t.Error("the burst has TLS handshakes; it stays cleartext")
	}
	if metric(t, s, "accept-full-400", "tls_handshakes_full") != 800 || metric(t, s, "accept-full-400", "tls_handshakes_resumed") != 0 {
		t.Error("accept-full-400: not 800 full handshakes")
	}
	if metric(t, s, "accept-resumed-400", "tls_handshakes_resumed") < 700 {
		t.Error("accept-resumed-400: fewer than 700 resumed handshakes")
	}
	for _, c := range []string{"accept-full-400", "accept-resumed-400"} {
		if metric(t, s, c, "server_cpu_us_per_handshake") != metric(t, s, c, "server_cpu_us_per_conn") {
			t.Errorf("%s: CPU per handshake is not CPU per connection", c)
		}
	}
	report, _ := os.ReadFile(filepath.Join(dir, "Report_04-connections.md"))
	for _, want := range []string{"## TLS: handshakes per second, CPU per handshake, the churn wall",
		"**Sustained with the ecdsa-p256 server key: full handshakes ", "The churn wall over TLS: the port prediction"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	golden.Check(t, "Report_04-connections-tls.md", string(report))
}

// The two-client fixture is a real smoke run on the netns lab with
// CLIENTS=2 (testdata/README.md): every cell split across two client
// hosts. Its merged figures are recomputed here from the per-host raw
// files: counts added, percentiles from the union of both hosts'
// histograms.
func TestSummarizeTwoClientRun(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run-2clients", "")
	if err := cli.Summarize(dir, cli.GeneratedBy); err != nil {
		t.Fatal(err)
	}
	s, err := summary.Load(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != "ok" || len(s.Cells) != 10 || s.Clients == nil || s.Clients.N != 2 {
		t.Fatalf("status %q, %d cells, clients %+v", s.Status, len(s.Cells), s.Clients)
	}
	for i := range s.Cells {
		c := &s.Cells[i]
		var hosts []*connresult.Result
		for _, l := range []string{"client1", "client2"} {
			p := filepath.Join(dir, "raw", l, c.Name+".json")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			r, err := connresult.DecodeResult(p, b)
			if err != nil {
				t.Fatal(err)
			}
			hosts = append(hosts, r)
		}
		var completed int64
		var lat connresult.Histogram
		for _, r := range hosts {
			var hs map[string]*connresult.Dump
			if r.Churn != nil {
				completed += r.Churn.ConnsCompleted
				hs = r.Churn.Histograms
			} else {
				completed += r.Burst.ConnsCompleted
				hs = r.Burst.Histograms
			}
			h, err := connresult.LoadDump(hs["latency"])
			if err != nil {
				t.Fatal(err)
			}
			lat.Merge(h)
		}
		if got := metric(t, s, c.Name, "connections_completed"); got != float64(completed) {
			t.Errorf("%s: %v completed, the hosts' sum is %d", c.Name, got, completed)
		}
		for k, q := range map[string]float64{"latency_p50_ms": 0.5, "latency_p99_ms": 0.99, "latency_max_ms": 1} {
			if got, want := metric(t, s, c.Name, k), connresult.QuantileMs(&lat, q); got != *want {
				t.Errorf("%s: %s %v, want %v (both hosts' histograms merged)", c.Name, k, got, *want)
			}
		}
		if len(c.Clients) != 2 || c.Clients[1].StartLagMs == nil || c.Overlap == nil || c.LatencyMerge != summary.LatencyMergeExact {
			t.Errorf("%s: clients %+v, overlap %+v, latency merge %q", c.Name, c.Clients, c.Overlap, c.LatencyMerge)
		}
	}
	// Each host meets its own port wall, as each host's prediction says.
	c := s.Cell("churn-client-2000")
	for _, cc := range c.Clients {
		if v := cc.Metrics["predicted_eaddrnotavail"]; v == nil || *v != 1 || *cc.Metrics["errors_eaddrnotavail"] == 0 {
			t.Errorf("churn-client-2000 %s: the predicted port wall is not met", cc.Label)
		}
	}
	if c.Verdict.Bound != "ephemeral ports" || metric(t, s, "churn-client-2000", "predicted_cell_rate_per_s") !=
		*c.Clients[0].Metrics["predicted_cell_rate_per_s"]+*c.Clients[1].Metrics["predicted_cell_rate_per_s"] {
		t.Errorf("churn-client-2000: verdict %q, the predicted rate is not the hosts' sum", c.Verdict.Bound)
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "summary-2clients.json", string(b)+"\n")
	report, _ := os.ReadFile(filepath.Join(dir, "Report_04-connections.md"))
	golden.Check(t, "Report_04-connections-2clients.md", string(report))
	for _, ext := range []string{"gp", "dat"} {
		b, err := os.ReadFile(filepath.Join(dir, "time-wait."+ext))
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "time-wait-2clients."+ext, string(b))
	}
}

// One client host's result cut short fails the cell with that host's file
// named; the run is partial.
func TestSummarizeTwoClientBrokenHost(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run-2clients", "")
	p := filepath.Join(dir, "raw", "client2", "churn-server-500.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	err = cli.Summarize(dir, cli.GeneratedBy)
	if err == nil || !strings.Contains(err.Error(), "raw/client2/churn-server-500.json") {
		t.Fatalf("err %v, want one naming raw/client2/churn-server-500.json", err)
	}
	s, _ := summary.Load(filepath.Join(dir, "summary.json"))
	if s == nil || s.Status != "partial" || s.Cell("churn-server-500").Status != "failed" || s.Cell("churn-server-2000").Status != "ok" {
		t.Errorf("summary %+v", s)
	}
}
