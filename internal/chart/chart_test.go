package chart

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/golden"
)

func TestScriptAndData(t *testing.T) {
	c := &Chart{Name: "rps", Title: "RPS vs concurrency", XLabel: "concurrency", YLabel: "requests/s",
		LogX: true, HLine: math.NaN(), Series: []Series{
			{Title: "1k", Points: []Point{{X: 16, Y: 30000}, {X: 64, Y: 32000.5}}},
			{Title: "100k", Points: []Point{{X: 16, Y: 1100}, {X: 64, Y: math.NaN()}}},
		}}
	golden.Check(t, "lines.gp", c.Script("test"))
	golden.Check(t, "lines.dat", c.Data())
	b := &Chart{Name: "tp", Title: "throughput", XLabel: "cell", YLabel: "Mbit/s", Bars: true, HLine: 941.5,
		HLineLbl: "TCP ceiling", Series: []Series{{Title: "rx", Points: []Point{{Label: "c2s-1", Y: 941}, {Label: "s2c-1", Y: 940}}}}}
	golden.Check(t, "bars.gp", b.Script("test"))
	golden.Check(t, "bars.dat", b.Data())
}

func TestRenderWithoutGnuplotSaysWhy(t *testing.T) {
	t.Setenv("PATH", "")
	dir := t.TempDir()
	c := &Chart{Name: "x", HLine: math.NaN(), Series: []Series{{Title: "a", Points: []Point{{X: 1, Y: 1}}}}}
	svg, skipped := c.Render(dir, "test")
	if svg != "" || skipped == "" {
		t.Fatalf("svg %q skipped %q", svg, skipped)
	}
	if _, err := os.Stat(dir + "/x.gp"); err != nil {
		t.Fatal("the script must stay for later rendering:", err)
	}
}

func TestRenderWritesCompleteSVG(t *testing.T) {
	if _, err := exec.LookPath("gnuplot"); err != nil {
		t.Skip("gnuplot not installed")
	}
	dir := t.TempDir()
	c := &Chart{Name: "x", Title: "t", HLine: math.NaN(), Series: []Series{{Title: "a", Points: []Point{{X: 1, Y: 1}, {X: 2, Y: 3}}}}}
	svg, skipped := c.Render(dir, "test")
	if svg != "x.svg" {
		t.Fatalf("svg %q skipped %q", svg, skipped)
	}
	b, err := os.ReadFile(filepath.Join(dir, svg))
	if err != nil || !strings.Contains(string(b), "</svg>") {
		t.Fatalf("svg incomplete (%v): %.200s", err, b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("want x.dat, x.gp, x.svg and no temporary file, got %d entries", len(ents))
	}
}
