package crossreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/golden"
)

// testdata/root holds the summary.json of real smoke runs on the netns lab
// (each phase's report replaced by a one-line stand-in).
func TestReportFromRealRuns(t *testing.T) {
	t.Setenv("PATH", "") // no gnuplot: the report says the charts were skipped
	in, err := Find("testdata/root", false)
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
	got := strings.ReplaceAll(string(b), out, "<out>")
	// Links are relative to the output directory, which is a temp dir here.
	got = strings.ReplaceAll(got, relPrefix(out), "")
	golden.Check(t, "README.md", got)
	for _, name := range []string{"http-throughput", "rps-vs-concurrency", "p99-vs-concurrency"} {
		if _, err := os.Stat(filepath.Join(out, name+".gp")); err != nil {
			t.Errorf("chart %s: %v", name, err)
		}
	}
}

func relPrefix(out string) string {
	abs, _ := filepath.Abs("testdata/root")
	r, _ := filepath.Rel(out, abs)
	return filepath.ToSlash(r) + "/"
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
// and both versions; a run directory without one is skipped.
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
	if err == nil || !strings.Contains(err.Error(), sum+" has schema_version 9; this csb reads schema_version 1") {
		t.Fatalf("err = %v, want the file and both versions named", err)
	}
}

// A Phase 1 run from two client hosts: its finding says so, and the runs
// table gains a client count; the other phases read as before.
func TestReportTwoClients(t *testing.T) {
	t.Setenv("PATH", "")
	root := golden.CopyTree(t, "testdata/root", "root")
	sums, _ := filepath.Glob(filepath.Join(root, "01-http-baseline", "*", "summary.json"))
	if len(sums) != 1 {
		t.Fatalf("phase 1 summaries: %v", sums)
	}
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
	for _, want := range []string{"**2 client hosts** (rates and throughputs summed", "| client hosts |", "the server and 2 clients share one"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	if n := strings.Count(string(md), "**2 client hosts**"); n != 1 {
		t.Errorf("%d findings say 2 client hosts, want 1 (phase 1)", n)
	}
}
