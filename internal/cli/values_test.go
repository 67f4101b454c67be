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

// Issue 21's values in a real summary: csb compare and csb report exit 1
// naming the file and the field, and print no comparison or report.
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
		for _, args := range [][]string{
			{"compare", goodRuns[0], runs[0]},
			{"report", "-root", root, "-out", filepath.Join(t.TempDir(), "report")},
		} {
			var stdout, stderr bytes.Buffer
			if got := Main(args, &stdout, &stderr); got != 1 {
				t.Errorf("csb %s with %s: status %d, want 1 (stderr %q)", args[0], c.new, got, stderr.String())
			}
			if want := sum + `: cells["`; !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), c.field) {
				t.Errorf("csb %s: stderr %q, want the file and %q", args[0], stderr.String(), c.field)
			}
			if stdout.Len() != 0 {
				t.Errorf("csb %s: printed %q although it refused", args[0], stdout.String())
			}
		}
	}
}
