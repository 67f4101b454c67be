package phase3_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"csbench/internal/c10kplan"
	"csbench/internal/cli"
	"csbench/internal/golden"
	"csbench/internal/summary"
)

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

func metric(t *testing.T, c *summary.Cell, key string) float64 {
	t.Helper()
	v, ok := c.Metrics[key]
	if !ok {
		t.Fatalf("%s: no metric %s", c.Name, key)
	}
	if v == nil {
		t.Fatalf("%s: %s is null", c.Name, key)
	}
	return *v
}

func edit(t *testing.T, path string, f func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(f(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The fixture is a real smoke run on the netns lab, made small: 800
// connections, with the server's hard fd limit lowered to 700 so that each
// scenario is split across two server processes (testdata/README.md). With
// no gnuplot on PATH the report says the charts were skipped, so the golden
// files do not depend on this machine.
func TestSummarizeRealRun(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	s := summarize(t, dir)
	if s.Status != "ok" || len(s.Cells) != 4 {
		t.Fatalf("status %q, %d cells", s.Status, len(s.Cells))
	}
	idle := s.Cell("idle-800")
	if got := metric(t, idle, "connections_established"); got != 800 {
		t.Errorf("idle established %v, want 800", got)
	}
	if got := metric(t, idle, "server_established"); got != 800 {
		t.Errorf("idle server_established %v, want 800 (ss lines)", got)
	}
	if kb := metric(t, idle, "server_rss_per_conn_kb"); kb < 5 || kb > 60 {
		t.Errorf("idle RSS per connection %v KiB, want 5-60", kb)
	}
	if got := metric(t, idle, "server_procs"); got != 2 {
		t.Errorf("server_procs %v, want 2", got)
	}
	if !strings.HasPrefix(idle.Verdict.Bound, "fd limit per process (server 700, client 1000) → split across 2 server processes") {
		t.Errorf("idle verdict %q", idle.Verdict.Bound)
	}
	low := s.Cell("lowrate-800-100rps")
	if r := metric(t, low, "rps_achieved_ratio"); r < 0.98 {
		t.Errorf("lowrate achieved %v of its target", r)
	}
	if co, svc := metric(t, low, "latency_p99_ms"), metric(t, low, "service_latency_p99_ms"); co < svc {
		t.Errorf("p99 from the due time %v < service p99 %v", co, svc)
	}
	if got := metric(t, low, "server_established"); got != 800 {
		t.Errorf("lowrate server_established %v, want 800 (sockstat growth)", got)
	}
	act := s.Cell("active-800-1k")
	if metric(t, act, "rps_achieved") <= 0 || metric(t, act, "littles_law_latency_ms") <= 0 {
		t.Errorf("active: %v", act.Metrics)
	}
	if !strings.HasPrefix(act.Verdict.Bound, "queueing") {
		t.Errorf("active verdict %q", act.Verdict.Bound)
	}
	for _, c := range s.Cells {
		for _, k := range []string{"server_listen_overflows", "client_time_wait", "server_time_wait", "server_proc_cpu_pct", "server_rss_mb"} {
			metric(t, &c, k)
		}
		// Not measured is null, never 0: an idle scenario has no rate.
		if c.Params["scenario"] == "idle" && c.Metrics["rps_achieved"] != nil {
			t.Errorf("idle rps_achieved %v, want null", *c.Metrics["rps_achieved"])
		}
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "summary.json", string(b)+"\n")
	report, _ := os.ReadFile(filepath.Join(dir, "Report_03-c10k.md"))
	golden.Check(t, "Report_03-c10k.md", string(report))
	for _, name := range []string{"server-rss", "p99-rate"} {
		for _, ext := range []string{"gp", "dat"} {
			b, err := os.ReadFile(filepath.Join(dir, name+"."+ext))
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, name+"."+ext, string(b))
		}
	}

	// notes.md is included, and regeneration keeps it.
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("Another lab ran wrk at the same time.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	summarize(t, dir)
	report, _ = os.ReadFile(filepath.Join(dir, "Report_03-c10k.md"))
	if !strings.Contains(string(report), "Another lab ran wrk at the same time.") {
		t.Error("notes.md is not in the regenerated report")
	}
}

// The retry runner's cool-down (raw/tw-cooldown.tsv) becomes metrics of
// every cell and a note saying how long the run waited.
func TestCooldown(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	tsv := "epoch_ms\ttime_wait\n1796025000000\t39984\n1796025010000\t39984\n1796025041000\t19982\n1796025050500\t0\n"
	if err := os.WriteFile(filepath.Join(dir, "raw", "tw-cooldown.tsv"), []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	s := summarize(t, dir)
	c := s.Cell("lowrate-800-100rps")
	if w := metric(t, c, "client_tw_cooldown_s"); w != 50.5 {
		t.Errorf("client_tw_cooldown_s %v, want 50.5", w)
	}
	if a, b := metric(t, c, "client_time_wait_cooldown_start"), metric(t, c, "client_time_wait_cooldown_end"); a != 39984 || b != 0 {
		t.Errorf("cool-down %v -> %v", a, b)
	}
	if len(s.Notes) == 0 || !strings.Contains(strings.Join(s.Notes, "\n"), "waited 50 s") {
		t.Errorf("notes %q", s.Notes)
	}
}

// refusedPlan writes raw/<cell>.plan.json as the runner would for a
// low-rate scenario whose one source address is held by TIME_WAIT: planned
// by c10kplan from the fixture's recorded limits.
func refusedPlan(t *testing.T, dir, cell string) *c10kplan.Plan {
	t.Helper()
	srv, err := c10kplan.ReadFacts(filepath.Join(dir, "raw", "limits.server.env"))
	if err != nil {
		t.Fatal(err)
	}
	cli, err := c10kplan.ReadFacts(filepath.Join(dir, "raw", "limits.client.env"))
	if err != nil {
		t.Fatal(err)
	}
	var ss strings.Builder
	for i := 0; i < 28000; i++ {
		fmt.Fprintf(&ss, "TIME-WAIT 0 0 198.18.0.2:%d 198.18.0.1:8080\n", 30000+i)
	}
	socks, err := c10kplan.ReadSockets(strings.NewReader(ss.String()), false)
	if err != nil {
		t.Fatal(err)
	}
	p := c10kplan.Compute(c10kplan.Input{Kind: "lowrate", Conns: 800, RPS: 200, ConnectRate: 1000, Lab: "ssh",
		ServerIP: "198.18.0.1", ServerPort: 8080, ClientIP: "198.18.0.2", ClientNIC: "csbc0", TWThreshold: 500, TWWaited: true,
		Server: srv, Client: cli, Sockets: socks, Present: map[string]bool{}})
	if p.OK || p.Code() != c10kplan.CodeTimeWait {
		t.Fatalf("plan ok=%v code %q, want a time_wait refusal", p.OK, p.Code())
	}
	if err := c10kplan.Write(filepath.Join(dir, "raw", cell+".plan.json"), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A scenario whose connects failed with EADDRNOTAVAIL met the client's
// ports; one refused before it started names the wall from its plan's
// refusal code, whatever its sentence says.
func TestWalls(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	edit(t, filepath.Join(dir, "raw", "idle-800.client-1.json"), func(s string) string {
		s = strings.Replace(s, `"connections_established": 800`, `"connections_established": 500`, 1)
		s = strings.Replace(s, `"connections_failed": 0`, `"connections_failed": 300`, 1)
		return strings.Replace(s, `"errors": {}`, `"errors": {"eaddrnotavail": 300}`, 1)
	})
	refusedPlan(t, dir, "lowrate-800-200rps")
	// The sentence is for people: reworded, the wall stays.
	reason := "the ports were all taken (reworded)"
	edit(t, filepath.Join(dir, "cells.tsv"), func(s string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "lowrate-800-200rps\t") {
				f := strings.Split(l, "\t")
				f[1], f[5] = "refused", reason
				lines[i] = strings.Join(f, "\t")
			}
		}
		return strings.Join(lines, "\n")
	})
	s := summarize(t, dir)
	idle := s.Cell("idle-800")
	if idle.Verdict.Bound != "client ephemeral ports / TIME_WAIT" || !strings.Contains(idle.Verdict.Evidence, "300 connects failed with EADDRNOTAVAIL") {
		t.Errorf("idle verdict %+v", idle.Verdict)
	}
	ref := s.Cell("lowrate-800-200rps")
	if ref.Status != "refused" || ref.Verdict.Bound != "client ephemeral ports / TIME_WAIT (refused before it started)" || ref.Verdict.Evidence != reason {
		t.Errorf("refused verdict %q %+v", ref.Status, ref.Verdict)
	}
	if ref.Metrics["server_rss_per_conn_kb"] != nil || ref.Metrics["rps_achieved"] != nil {
		t.Errorf("a refused scenario measured nothing, got %v", ref.Metrics)
	}
}

// A scenario whose client printed nothing is failed, its figures null.
func TestMissingClientOutput(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	if err := os.Remove(filepath.Join(dir, "raw", "lowrate-800-100rps.client-1.json")); err != nil {
		t.Fatal(err)
	}
	s := summarize(t, dir)
	c := s.Cell("lowrate-800-100rps")
	if c.Status != "failed" || c.Error == nil || !strings.Contains(*c.Error, "no connclient result") {
		t.Fatalf("status %q error %v", c.Status, c.Error)
	}
	for _, k := range []string{"rps_achieved", "latency_p99_ms", "connections_established"} {
		if c.Metrics[k] != nil {
			t.Errorf("%s = %v, want null", k, *c.Metrics[k])
		}
	}
	if c.Verdict == nil || c.Verdict.Bound != "none (failed)" {
		t.Errorf("verdict %+v", c.Verdict)
	}
}

// Two client processes: counts and rates add up, percentiles are the
// largest of the two.
func TestTwoClientProcesses(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	src := filepath.Join(dir, "raw", "lowrate-800-100rps.client-1.json")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var one map[string]any
	if err := json.Unmarshal(b, &one); err != nil {
		t.Fatal(err)
	}
	one["latency_p99_ms"] = 99.0
	one["rps_achieved"] = 50.0
	two, _ := json.Marshal(one)
	if err := os.WriteFile(filepath.Join(dir, "raw", "lowrate-800-100rps.client-2.json"), two, 0o644); err != nil {
		t.Fatal(err)
	}
	s := summarize(t, dir)
	c := s.Cell("lowrate-800-100rps")
	if got := metric(t, c, "connections_established"); got != 1600 {
		t.Errorf("established %v, want 800+800", got)
	}
	if got := metric(t, c, "latency_p99_ms"); got != 99 {
		t.Errorf("p99 %v, want the larger, 99", got)
	}
	var orig map[string]any
	_ = json.Unmarshal(b, &orig)
	want := orig["rps_achieved"].(float64) + 50
	if got := metric(t, c, "rps_achieved"); fmt.Sprintf("%.1f", got) != fmt.Sprintf("%.1f", want) {
		t.Errorf("rps_achieved %v, want %v", got, want)
	}
}

// A connclient result or a plan of an unknown schema version is refused,
// naming the file and both versions.
func TestSchemaVersions(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	edit(t, filepath.Join(dir, "raw", "idle-800.client-1.json"), func(s string) string {
		return strings.Replace(s, `"schema_version": 1`, `"schema_version": 2`, 1)
	})
	p := refusedPlan(t, dir, "lowrate-800-200rps")
	p.SchemaVersion = 7
	if err := c10kplan.Write(filepath.Join(dir, "raw", "lowrate-800-200rps.plan.json"), p); err != nil {
		t.Fatal(err)
	}
	s := summarize(t, dir)
	notes := strings.Join(s.Notes, "\n")
	for _, want := range []string{"raw/idle-800.client-1.json: connclient schema_version 2, this reader knows version 1",
		"lowrate-800-200rps.plan.json: plan schema_version 7, this csb reads version 1"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// A run with plan documents (plan.json, no plan.env): the verdict and the
// report read the same figures as from the old plan.env.
func TestPlanDocument(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	raw := filepath.Join(dir, "raw")
	srv, _ := c10kplan.ReadFacts(filepath.Join(raw, "limits.server.env"))
	cli, _ := c10kplan.ReadFacts(filepath.Join(raw, "limits.client.env"))
	socks, err := c10kplan.ReadSocketsFile(filepath.Join(raw, "idle-800.ports.txt"), false)
	if err != nil {
		t.Fatal(err)
	}
	p := c10kplan.Compute(c10kplan.Input{Kind: "idle", Conns: 800, ConnectRate: 1000, Lab: "netns",
		ServerIP: "198.18.0.1", ServerPort: 8080, ClientIP: "198.18.0.2", ClientNIC: "csbc0", TWThreshold: 500,
		Server: srv, Client: cli, Sockets: socks, Present: map[string]bool{"198.18.0.2": true}})
	if !p.OK {
		t.Fatalf("plan refused: %s", p.Refusal())
	}
	if err := c10kplan.Write(filepath.Join(raw, "idle-800.plan.json"), p); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(raw, "*.plan.env"))
	for _, f := range old {
		os.Remove(f)
	}
	s := summarize(t, dir)
	c := s.Cell("idle-800")
	plan := map[string]string{}
	switch v := c.Details["plan"].(type) {
	case map[string]string:
		plan = v
	case map[string]any:
		for k, x := range v {
			plan[k], _ = x.(string)
		}
	}
	if plan["server_conns_per_proc_max"] != "572" || plan["client_sources"] != "198.18.0.2" || plan["source.198.18.0.2.time_wait"] != "20" {
		t.Errorf("plan view %v", plan)
	}
	if !strings.HasPrefix(c.Verdict.Bound, "fd limit per process (server 700, client 1000) → split across 2 server processes") {
		t.Errorf("verdict %+v", c.Verdict)
	}
	report, _ := os.ReadFile(filepath.Join(dir, "Report_03-c10k.md"))
	if !strings.Contains(string(report), "`raw/<cell>.plan.json`") {
		t.Error("the report does not name plan.json")
	}
}

// Connections the server under test closed during the hold (its keep-alive
// timeout) are its wall, not a drop of the lab.
func TestServerClosesIdle(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	edit(t, filepath.Join(dir, "raw", "idle-800.client-1.json"), func(s string) string {
		s = strings.Replace(s, `"connections_alive_end": 800`, `"connections_alive_end": 0`, 1)
		return regexp.MustCompile(`"drops": \{[^}]*\}`).ReplaceAllString(s, `"drops": {"eof": 800}`)
	})
	idle := summarize(t, dir).Cell("idle-800")
	if idle.Verdict.Bound != "the server under test closes idle connections" || !strings.Contains(idle.Verdict.Evidence, "800 of 800 held connections were closed by the server under test") {
		t.Errorf("idle verdict %+v", idle.Verdict)
	}
}

// A ramp that fell short does not hide a server that then closed every
// held connection: the close is the bound, the ramp is in the evidence.
func TestServerClosesIdleAfterShortRamp(t *testing.T) {
	t.Setenv("PATH", "")
	dir := golden.CopyTree(t, "testdata/run", "")
	edit(t, filepath.Join(dir, "raw", "idle-800.client-1.json"), func(s string) string {
		s = strings.Replace(s, `"connections_alive_end": 800`, `"connections_alive_end": 0`, 1)
		s = strings.Replace(s, `"connect_rate_achieved_per_s": 1000.4`, `"connect_rate_achieved_per_s": 400`, 1)
		return regexp.MustCompile(`"drops": \{[^}]*\}`).ReplaceAllString(s, `"drops": {"eof": 800}`)
	})
	idle := summarize(t, dir).Cell("idle-800")
	if idle.Verdict.Bound != "the server under test closes idle connections" || !strings.Contains(idle.Verdict.Evidence, "the ramp: short ramp: 400 of 1000 connects/s") {
		t.Errorf("idle verdict %+v", idle.Verdict)
	}
}
