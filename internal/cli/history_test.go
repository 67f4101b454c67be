package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// csb history over the committed references: a table per figure, a chart
// each (where gnuplot is), and bad input exits 2 naming it.
func TestHistoryOfTheReferences(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if rc := Main([]string{"history", "-cell", "1k", "-out", out, "../.."}, &stdout, &stderr); rc != 0 {
		t.Fatalf("exit %d: %s", rc, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## 01-http-baseline http-baseline: 1k, rps", "| 2026-12-01_040843_http-baseline | 2026-12-01T04:08:43Z | 1: 892e3fff |",
		"## 05-capacity capacity-csb: capacity 1k, capacity_rps"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	ext := "*.gp"
	if _, err := exec.LookPath("gnuplot"); err == nil {
		ext = "*.svg"
	}
	if m, _ := filepath.Glob(filepath.Join(out, ext)); len(m) == 0 {
		t.Errorf("no %s chart in %s", ext, out)
	}
	for _, bad := range [][]string{{"history"}, {"history", "-alpha", "2", "../.."}, {"history", "-cell", "no such cell", "../.."}} {
		stderr.Reset()
		if rc := Main(bad, &stdout, &stderr); rc != 2 || !strings.HasPrefix(stderr.String(), "error: ") {
			t.Errorf("%v: exit %d, %q", bad, rc, stderr.String())
		}
	}
}
