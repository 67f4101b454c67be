package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/golden"
	"csbench/internal/summary"
)

// A real Phase 0 run whose disk filled as its second cell began: the row
// of c2s-4 has no start and the cell wrote no raw file. csb summarize
// writes the summary (no error), the cell failed with the reason first,
// the other cells as they were, the run partial.
func TestSummarizeCellCutShort(t *testing.T) {
	dir := golden.CopyTree(t, "../phase0/testdata/run", "")
	tsv := filepath.Join(dir, "cells.tsv")
	b, err := os.ReadFile(tsv)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Replace(string(b), "c2s-4\tok\t1796024090326\t1796024094355\tstreams=4;reverse=0;duration_s=3;omit_s=1\t\n",
		"c2s-4\tfailed\t\t1796024094355\tstreams=4;reverse=0;duration_s=3;omit_s=1\tdisk full: no space left on /mnt\n", 1)
	if cut == string(b) {
		t.Fatal("the test's cells.tsv edit matched nothing")
	}
	if err := os.WriteFile(tsv, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "raw", "c2s-4.json")); err != nil {
		t.Fatal(err)
	}
	if err := Summarize(dir, GeneratedBy); err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	s, err := summary.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cell("c2s-4")
	want := "the row of cell c2s-4 has no start: the run was cut short (disk full?); disk full: no space left on /mnt; raw/c2s-4.json: "
	if c == nil || c.Status != "failed" || c.Error == nil || !strings.HasPrefix(*c.Error, want) {
		t.Fatalf("c2s-4 = %+v, want failed with %q...", c, want)
	}
	if s.Status != "partial" {
		t.Errorf("status %q, want partial", s.Status)
	}
	for _, n := range []string{"c2s-1", "s2c-1", "s2c-4"} {
		if c := s.Cell(n); c == nil || c.Status != "ok" || c.Metrics["throughput_mbps"] == nil {
			t.Errorf("%s = %+v, want ok with its throughput", n, c)
		}
	}
}
