package crossreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/golden"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// testdata/root holds the summary.json of real smoke runs on the netns lab
// (each phase's report replaced by a one-line stand-in).
func TestReportFromRealRuns(t *testing.T) {
	got, out := writeReport(t, "testdata/root")
	golden.Check(t, "README.md", got)
	checkRows(t, got)
	for _, name := range []string{"http-throughput", "rps-vs-concurrency", "p99-vs-concurrency"} {
		if _, err := os.Stat(filepath.Join(out, name+".gp")); err != nil {
			t.Errorf("chart %s: %v", name, err)
		}
	}
}

// findingsRows are the rows of the "What this lab found" table.
func findingsRows(md string) []string {
	var rows []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "## What this lab found"):
			in = true
		case strings.HasPrefix(line, "## "):
			in = false
		case in && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| question |"):
			rows = append(rows, line)
		}
	}
	return rows
}

// checkRows: every row of the findings table is a line a person reads, at
// most MaxRowLen characters, and none lists a repetition by its cell name.
func checkRows(t *testing.T, md string) {
	t.Helper()
	rows := findingsRows(md)
	if len(rows) == 0 {
		t.Fatalf("no findings table:\n%s", md)
	}
	for _, r := range rows {
		if n := len([]rune(r)); n > MaxRowLen {
			t.Errorf("findings row of %d characters (at most %d): %s", n, MaxRowLen, r)
		}
		if strings.Contains(r, "-r1") || strings.Contains(r, "-r2") {
			t.Errorf("findings row lists repetitions one by one: %s", r)
		}
	}
}

// A Phase 1 run of REPEAT=5 (3 payloads x 5 repetitions, the committed
// reference run's figures, trimmed): each payload is one median with its
// min–max and the number of runs, never its five repetitions.
func TestReportRepeat5(t *testing.T) {
	got, _ := writeReport(t, "testdata/repeat5")
	golden.Check(t, "repeat5-README.md", got)
	checkRows(t, got)
	rows := findingsRows(got)
	for _, want := range []string{
		"**1k**: 81,858 RPS median (79,292–89,524, 5 runs), 76–86 % of Phase 0, unclear 5/5",
		"**10k**: 11,480 RPS median (11,478–11,481, 5 runs), 100 % of Phase 0, network-bound 5/5",
		"**100k**: 1163 RPS median (1162–1164, 5 runs), 100 % of Phase 0, network-bound 5/5",
	} {
		if len(rows) < 2 || !strings.Contains(rows[1], want) {
			t.Errorf("the Phase 1 row lacks %q:\n%v", want, rows)
		}
	}
	if !strings.Contains(got, "- **1k** (5 of 5 runs measured): 81,858 RPS median (79,292–89,524, 5 runs); 747.9 Mbit/s median (724.4–817.9, 5 runs)") {
		t.Errorf("the Phase 1 detail lacks the 1k medians:\n%s", got)
	}
}

// writeReport writes the report of the runs under root (no gnuplot: the
// report says the charts were skipped) into a temp dir and returns its
// README.md with that dir written <out> and the links relative to it made
// relative to root, and the dir.
func writeReport(t *testing.T, root string) (string, string) {
	t.Helper()
	t.Setenv("PATH", "")
	in, err := Find(root, false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report")
	if err := Write(in, out, "bin/csb report -root <results root>"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(root)
	r, _ := filepath.Rel(out, abs)
	got := strings.ReplaceAll(string(b), out, "<out>")
	return strings.ReplaceAll(got, filepath.ToSlash(r)+"/", ""), out
}

// A results root whose path looks like a glob pattern ('[', '*', a space)
// is the directory it names: its runs are found, each with its report.
func TestRootThatLooksLikeAPattern(t *testing.T) {
	root := golden.CopyTree(t, "testdata/root", "My Runs [x]*")
	in, err := Find(root, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Phases[:3] {
		runs := in.Runs[p.Name]
		if len(runs) != 1 || runs[0].Report != "Report_"+p.Name+".md" {
			t.Errorf("%s: runs %+v, want one with its report", p.Name, runs)
		}
	}
}

func TestNoRunsIsAnError(t *testing.T) {
	if _, err := Find(t.TempDir(), false); err == nil || !strings.Contains(err.Error(), "no summarized run") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunnerOf(t *testing.T) {
	for in, want := range map[string]string{
		"/x/2026-11-30_075434_iperf3-baseline": "iperf3-baseline",
		"2026-11-30_075434_c10k-beyond-2":      "c10k-beyond-2",
		"odd":                                  "odd",
	} {
		if got := runnerOf(in); got != want {
			t.Errorf("runnerOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// A summary.json of an unknown schema_version is refused, naming the file
// and both versions; a run directory without one is skipped. A root with
// no other run is an error that says why its run was skipped.
func TestUnknownSchemaVersionRefused(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "00-iperf3", "2026-11-30_075434_iperf3-baseline")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "00-iperf3", "2026-11-30_080000_unsummarized"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := filepath.Join(run, "summary.json")
	if err := os.WriteFile(sum, []byte(`{"schema_version": 9, "phase": "00-iperf3"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Find(root, false)
	if err == nil || !strings.Contains(err.Error(), run+": summary.json has schema_version 9; this csb reads schema_version 2") ||
		!strings.Contains(err.Error(), "no summarized run of any phase under "+root+" that could be read; 1 skipped") {
		t.Fatalf("err = %v, want the run, the file and both versions named", err)
	}
}

// corrupt writes a run directory dir under root/phase holding the
// summary.json doc.
func corrupt(t *testing.T, root, phase, dir, doc string) string {
	t.Helper()
	run := filepath.Join(root, phase, dir)
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, summary.File), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return run
}

// withoutSkipped is a report without its "Skipped runs" section.
func withoutSkipped(md string) string {
	i := strings.Index(md, "## Skipped runs\n")
	if i < 0 {
		return md
	}
	j := strings.Index(md[i+1:], "\n[r1]:")
	if j < 0 {
		return md[:i]
	}
	return md[:i] + md[i+1+j+1:]
}

// Real runs, beside them one older run whose summary.json was cut short
// and one newer of another schema_version: both are skipped, each named
// with why under "Skipped runs", and the rest of the report is the one
// the real runs make alone (the newer run's runner falls back to its
// latest run that can be read).
func TestCorruptRunSkipped(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/root", "root")
	runs, _ := rundir.Files(filepath.Join(root, "01-http-baseline"), "", "")
	real, _ := os.ReadFile(filepath.Join(runs[0], summary.File))
	cut := corrupt(t, root, "01-http-baseline", "2026-11-29_120000_http-baseline", string(real[:len(real)/2]))
	newer := corrupt(t, root, "00-iperf3", "2026-12-24_120000_iperf3-baseline", `{"schema_version": 9, "phase": "00-iperf3"}`)
	in, err := Find(root, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Skipped) != 2 || in.Skipped[0].Dir != newer || in.Skipped[1].Dir != cut {
		t.Fatalf("skipped %+v, want %s and %s", in.Skipped, newer, cut)
	}
	var warn strings.Builder
	in.Warn(&warn, "report")
	want := "report: skipped " + newer + ": summary.json has schema_version 9; this csb reads schema_version 2"
	if !strings.HasPrefix(warn.String(), want) || !strings.Contains(warn.String(), "report: skipped "+cut+": summary.json: unexpected end of JSON input") {
		t.Errorf("warnings:\n%s\nwant them to start %q and name %s", warn.String(), want, cut)
	}
	got, _ := writeReport(t, root)
	for _, want := range []string{
		"## Skipped runs\n",
		"| `00-iperf3/2026-12-24_120000_iperf3-baseline` | summary.json has schema_version 9; this csb reads schema_version 2",
		"| `01-http-baseline/2026-11-29_120000_http-baseline` | summary.json: unexpected end of JSON input |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("README lacks %q:\n%s", want, got)
		}
	}
	ref, _ := writeReport(t, "testdata/root")
	if got := strings.ReplaceAll(withoutSkipped(got), "`"+root+"`", "`testdata/root`"); got != ref {
		t.Errorf("without its skipped runs the report differs from the real runs' own:\n%s", golden.Diff(ref, got))
	}
}

// A Phase 1 run from two client hosts: its finding says so, and the runs
// table gains a client count; the other phases read as before.
func TestReportTwoClients(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/root", "root")
	runs, _ := rundir.Files(filepath.Join(root, "01-http-baseline"), "", "")
	if len(runs) != 1 {
		t.Fatalf("phase 1 runs: %v", runs)
	}
	sums := []string{filepath.Join(runs[0], "summary.json")}
	b, _ := os.ReadFile(sums[0])
	b = []byte(strings.Replace(string(b), `"cells":`, `"clients": {"n": 2, "hosts": [{"label": "client1"}, {"label": "client2"}]}, "cells":`, 1))
	if err := os.WriteFile(sums[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Find(root, false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report")
	if err := Write(in, out, "bin/csb report -root <results root>"); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "README.md"))
	for _, want := range []string{"**2 client hosts** (rates and throughputs summed", "| client hosts |", "the server and 2 clients shared the 2 CPUs of one host"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	if n := strings.Count(string(md), "**2 client hosts**"); n != 1 {
		t.Errorf("%d findings say 2 client hosts, want 1 (phase 1)", n)
	}
}

// pinRuns rewrites the summaries of the given phases under root as a
// CPU_PIN run writes them: cpu_pin set, and each host's facts counting
// its own CPU set (one CPU), not the machine's two.
func pinRuns(t *testing.T, root string, phases ...string) {
	t.Helper()
	for _, p := range phases {
		runs, _ := rundir.Files(filepath.Join(root, p), "", "")
		if len(runs) != 1 {
			t.Fatalf("%s runs: %v", p, runs)
		}
		f := filepath.Join(runs[0], "summary.json")
		b, _ := os.ReadFile(f)
		s := strings.ReplaceAll(string(b), `"cpus": 2`, `"cpus": 1`)
		s = strings.Replace(s, `"cells":`, `"cpu_pin": {"server_cpus": "0", "client_cpus": "1"}, "cells":`, 1)
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func lab(t *testing.T, root string) string {
	t.Helper()
	in, err := Find(root, false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report")
	if err := Write(in, out, "bin/csb report -root <results root>"); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "README.md"))
	for _, line := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(line, "Lab / profile of these runs:") {
			return line
		}
	}
	t.Fatalf("README has no lab line:\n%s", md)
	return ""
}

// Runs whose hosts were pinned to CPUs of their own (summary.cpu_pin) do
// not "share one 1-CPU host": the report says which CPUs each host had;
// where only some runs were pinned, it names them.
func TestReportPinnedHosts(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/root", "root")
	pinRuns(t, root, "00-iperf3", "01-http-baseline", "02-http-matrix", "05-capacity")
	got := lab(t, root)
	want := "in every run server and client ran on 2 CPUs of one host (AMD EPYC), each host pinned to a CPU of its own (server CPU 0, client CPU 1). CPU-bound figures are those CPUs', not two machines'."
	if !strings.Contains(got, want) || strings.Contains(got, "shared") {
		t.Errorf("all pinned:\n got %s\nwant %s", got, want)
	}

	root = golden.CopyTree(t, "testdata/root", "mixed")
	pinRuns(t, root, "01-http-baseline")
	got = lab(t, root)
	want = "in `2026-11-30_075500_http-baseline` server and client ran on 2 CPUs of one host (AMD EPYC), each host pinned to a CPU of its own (server CPU 0, client CPU 1); in every other run server and client shared the 2 CPUs of one host (AMD EPYC). CPU-bound figures are this host's, not two machines'."
	if !strings.Contains(got, want) {
		t.Errorf("one run pinned:\n got %s\nwant %s", got, want)
	}
}

func TestPinText(t *testing.T) {
	s := &summary.Summary{Pin: &summary.Pin{Server: "0", Client: "1-3"},
		Clients: &summary.Clients{N: 2, Hosts: []summary.ClientHost{{Label: "client1"}, {Label: "client2"}}}}
	if got, want := pinText(s), "server CPU 0, clients CPUs 1-3"; got != want {
		t.Errorf("pinText: %q, want %q", got, want)
	}
	if n := len(cpuUnion(s.Pin)); n != 4 {
		t.Errorf("cpuUnion: %d CPUs, want 4", n)
	}
}
