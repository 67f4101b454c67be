package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"csbench/internal/golden"
	"csbench/internal/rundir"
)

// Issue 21's values in a real summary: csb compare exits 1 naming the file
// and the field, and prints no comparison; csb report skips the run, names
// it and the field, and reports the others (issue 34).
func TestCompareAndReportRefuseImpossibleValues(t *testing.T) {
	for _, c := range []struct{ re, new, field string }{
		{`"rps": [0-9.]+`, `"rps": -1000`, ".metrics.rps is -1000: a request rate below zero"},
		{`"latency_p99_ms": [0-9.]+`, `"latency_p99_ms": -5`, ".metrics.latency_p99_ms is -5: a time in ms"},
		{`"throughput_mbps": [0-9.]+`, `"throughput_mbps": -1e308`, ".metrics.throughput_mbps is -1e+308: a throughput below zero"},
	} {
		root := golden.CopyTree(t, "../crossreport/testdata/root", "")
		runs, _ := rundir.Files(filepath.Join(root, "01-http-baseline"), "", "")
		sum := filepath.Join(runs[0], "summary.json")
		b, err := os.ReadFile(sum)
		if err != nil {
			t.Fatal(err)
		}
		loc := regexp.MustCompile(c.re).FindIndex(b)
		if loc == nil {
			t.Fatalf("%s not in %s", c.re, sum)
		}
		edited := string(b[:loc[0]]) + c.new + string(b[loc[1]:])
		if err := os.WriteFile(sum, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		good := golden.CopyTree(t, "../crossreport/testdata/root/01-http-baseline", "")
		goodRuns, _ := rundir.Files(good, "", "")
		var stdout, stderr bytes.Buffer
		if got := Main([]string{"compare", goodRuns[0], runs[0]}, &stdout, &stderr); got != 1 {
			t.Errorf("csb compare with %s: status %d, want 1 (stderr %q)", c.new, got, stderr.String())
		}
		if want := sum + `: cells["`; !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), c.field) {
			t.Errorf("csb compare: stderr %q, want the file and %q", stderr.String(), c.field)
		}
		if stdout.Len() != 0 {
			t.Errorf("csb compare: printed %q although it refused", stdout.String())
		}
		// csb report skips the run, naming it and the field, and reports
		// the others.
		stdout.Reset()
		stderr.Reset()
		out := filepath.Join(t.TempDir(), "report")
		if got := Main([]string{"report", "-root", root, "-out", out}, &stdout, &stderr); got != 0 {
			t.Errorf("csb report with %s: status %d, want 0 (stderr %q)", c.new, got, stderr.String())
		}
		if want := "report: skipped " + runs[0] + `: summary.json: cells["`; !strings.HasPrefix(stderr.String(), want) || !strings.Contains(stderr.String(), c.field) {
			t.Errorf("csb report: stderr %q, want it to start %q and hold %q", stderr.String(), want, c.field)
		}
		if md, _ := os.ReadFile(filepath.Join(out, "README.md")); !strings.Contains(string(md), "## Skipped runs") {
			t.Errorf("csb report: the report lists no skipped run:\n%s", md)
		}
	}
}
