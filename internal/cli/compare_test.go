package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/golden"
)

// csb compare refuses a summary.json of an unknown schema_version, naming
// the file and both versions.
func TestCompareRefusesUnknownSchemaVersion(t *testing.T) {
	dir := t.TempDir()
	var runs []string
	for i, v := range []string{"3", "2"} {
		run := filepath.Join(dir, []string{"a", "b"}[i])
		if err := os.Mkdir(run, 0o755); err != nil {
			t.Fatal(err)
		}
		doc := `{"schema_version": ` + v + `, "phase": "00-iperf3", "cells": []}`
		if err := os.WriteFile(filepath.Join(run, "summary.json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	var stdout, stderr bytes.Buffer
	if got := Main(append([]string{"compare"}, runs...), &stdout, &stderr); got != 1 {
		t.Fatalf("status %d, want 1 (stderr %q)", got, stderr.String())
	}
	want := filepath.Join(runs[0], "summary.json") + " has schema_version 3; this csb reads schema_version 2"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not contain %q", stderr.String(), want)
	}
}

// csb compare -json of the committed Phase 1 reference against itself:
// one document whose environment has no difference; -json with -roots is
// bad usage.
func TestCompareJSONSameEnvironment(t *testing.T) {
	ref := filepath.Join("..", "..", "01-http-baseline", "results", "2026-12-01_040843_http-baseline")
	var stdout, stderr bytes.Buffer
	if got := Main([]string{"compare", "-json", ref, ref}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d (stderr %q)", got, stderr.String())
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Environment   struct {
			Checked     []string          `json:"checked"`
			Differences []json.RawMessage `json:"differences"`
		} `json:"environment"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, stdout.String())
	}
	if doc.SchemaVersion != 1 || len(doc.Environment.Differences) != 0 || len(doc.Environment.Checked) == 0 {
		t.Errorf("document: %s", stdout.String())
	}
	if got := Main([]string{"compare", "-json", "-roots", ref, ref}, &stdout, &stderr); got != 2 {
		t.Errorf("compare -json -roots: status %d, want 2", got)
	}
}

// twoRoots copies the crossreport test root (real smoke runs) twice, as A
// and B, and in B writes a run whose summary.json is not JSON beside the
// real ones; it returns A, B and that run.
func twoRoots(t *testing.T) (string, string, string) {
	t.Helper()
	src := filepath.Join("..", "crossreport", "testdata", "root")
	a := golden.CopyTree(t, src, "a")
	b := golden.CopyTree(t, src, "b")
	bad := filepath.Join(b, "01-http-baseline", "2026-11-29_120000_http-baseline")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "summary.json"), []byte("{\"schema_version\": 1, \"pha"), 0o644); err != nil {
		t.Fatal(err)
	}
	return a, b, bad
}

// csb compare -roots skips a run of either root whose summary.json cannot
// be read: named on stderr and under "Skipped runs", the others compared,
// status 0. A root with no run it can read is an error.
func TestCompareRootsSkipsUnreadableRun(t *testing.T) {
	t.Setenv("PATH", "")
	a, b, bad := twoRoots(t)
	out := filepath.Join(t.TempDir(), "vs.md")
	var stdout, stderr bytes.Buffer
	if got := Main([]string{"compare", "-roots", "-out", out, a, b}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d, want 0 (stderr %q)", got, stderr.String())
	}
	if want := "compare: skipped " + bad + ": summary.json: unexpected end of JSON input\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	md, _ := os.ReadFile(out)
	for _, want := range []string{"## 01-http-baseline:", "## 02-http-matrix:", "## Skipped runs",
		"| B | `" + bad + "` | summary.json: unexpected end of JSON input |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("comparison lacks %q:\n%s", want, md)
		}
	}

	empty := t.TempDir()
	if err := os.MkdirAll(filepath.Join(empty, "01-http-baseline", "2026-11-29_120000_http-baseline"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, "01-http-baseline", "2026-11-29_120000_http-baseline", "summary.json"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if got := Main([]string{"compare", "-roots", a, empty}, &stdout, &stderr); got != 1 {
		t.Fatalf("status %d, want 1 (stderr %q)", got, stderr.String())
	}
	if want := "error: no summarized run of any phase under " + empty + " that could be read; 1 skipped: "; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q, want it to start %q", stderr.String(), want)
	}
}

// csb report skips a run it cannot read in the same way: named on stderr
// and in the report, status 0.
func TestReportSkipsUnreadableRun(t *testing.T) {
	t.Setenv("PATH", "")
	_, b, bad := twoRoots(t)
	out := filepath.Join(t.TempDir(), "report")
	var stdout, stderr bytes.Buffer
	if got := Main([]string{"report", "-root", b, "-out", out}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d, want 0 (stderr %q)", got, stderr.String())
	}
	if want := "report: skipped " + bad + ": summary.json: unexpected end of JSON input\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	md, _ := os.ReadFile(filepath.Join(out, "README.md"))
	if !strings.Contains(string(md), "## Skipped runs") || !strings.Contains(string(md), "2026-11-29_120000_http-baseline` | summary.json: unexpected end of JSON input |") {
		t.Errorf("report does not list the skipped run:\n%s", md)
	}
}

// csb compare -roots -all pools every run of a runner in a root: a second
// copy of Phase 1's run under a later name doubles A's values, named in
// the header; without -all the latest run alone is compared.
func TestCompareRootsAll(t *testing.T) {
	t.Setenv("PATH", "")
	a, b, _ := twoRoots(t)
	runs, _ := filepath.Glob(filepath.Join(a, "01-http-baseline", "*_http-baseline"))
	if len(runs) != 1 {
		t.Fatalf("the fixture's Phase 1 runs: %v", runs)
	}
	again := filepath.Join(a, "01-http-baseline", "2099-01-01_000000_http-baseline")
	if err := os.Rename(golden.CopyTree(t, runs[0], "again2"), again); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if got := Main([]string{"compare", "-roots", "-all", a, b}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d (stderr %q)", got, stderr.String())
	}
	md := stdout.String()
	if !strings.Contains(md, "every run of each runner in each root, pooled") || !strings.Contains(md, "Baseline A: 2 runs (") {
		t.Errorf("-all:\n%s", md)
	}
	stdout.Reset()
	if got := Main([]string{"compare", "-roots", a, b}, &stdout, &stderr); got != 0 || strings.Contains(stdout.String(), "2 runs (") {
		t.Errorf("without -all: status %d\n%s", got, stdout.String())
	}
}
