package progress

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAt(t *testing.T) {
	for _, c := range []struct {
		k         int
		in, first float64
		plan      []float64
		want      string
	}{
		// Cell 1: the whole plan is left, the setup before it is not counted.
		{1, 20, 20, []float64{10, 10, 10}, "cell 1/3 x; 20s in, about 30s left"},
		// On plan: what is left is the plan's rest.
		{2, 30, 20, []float64{10, 10, 10}, "cell 2/3 x; 30s in, about 20s left"},
		// Cell 1 took 30 s for 10: the two left take three times theirs.
		{2, 50, 20, []float64{10, 10, 10}, "cell 2/3 x; 50s in, about 1m00s left"},
		// Faster than planned never shortens the plan.
		{3, 25, 20, []float64{10, 10, 10}, "cell 3/3 x; 25s in, about 10s left"},
		// Past the plan's end.
		{4, 60, 20, []float64{10, 10, 10}, "cell 4/4 x; 1m00s in, about 0s left"},
		// A step whose plan is unknown, still ahead.
		{1, 0, 0, []float64{60, -1}, "phase 1/2 x; 0s in, at least 1m00s left (1 with no plan)"},
		{2, 3700, 0, []float64{60, -1, 10}, "phase 2/3 x; 1h01m in, at least 10m17s left (1 with no plan)"},
	} {
		what := "cell"
		if c.plan[1] < 0 {
			what = "phase"
		}
		if got := At(c.k, c.in, c.first, c.plan).Line(what, "x"); got != c.want {
			t.Errorf("At(%d, %v, %v, %v) = %q, want %q", c.k, c.in, c.first, c.plan, got, c.want)
		}
	}
}

func TestTook(t *testing.T) {
	root := t.TempDir()
	write := func(name, env string) {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "run.env"), []byte(env), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const base = "runner=01-http-baseline/run_http_baseline.sh\nlab=netns\nsetting.PROFILE=quick\n"
	write("2026-12-01_040000_http-baseline", base+"started_at=2026-12-01T04:00:00Z\nfinished_at=2026-12-01T04:03:20Z\nstatus=ok\n")
	// Newer, but partial, another profile, or another lab: not taken.
	write("2026-12-01_050000_http-baseline", base+"started_at=2026-12-01T05:00:00Z\nfinished_at=2026-12-01T05:00:09Z\nstatus=partial\n")
	write("2026-12-01_060000_http-baseline", "runner=01-http-baseline/run_http_baseline.sh\nlab=netns\nsetting.PROFILE=smoke\nstarted_at=2026-12-01T06:00:00Z\nfinished_at=2026-12-01T06:00:30Z\nstatus=ok\n")
	write("2026-12-01_070000_http-baseline", "runner=01-http-baseline/run_http_baseline.sh\nlab=local\nsetting.PROFILE=quick\nstarted_at=2026-12-01T07:00:00Z\nfinished_at=2026-12-01T07:00:30Z\nstatus=ok\n")
	d, dir, _, from, ok := Took([]string{root, filepath.Join(root, "missing")}, "01-http-baseline/run_http_baseline.sh", "netns", "quick", 1)
	if !ok || d != 200*time.Second || from != 0 || filepath.Base(dir) != "2026-12-01_040000_http-baseline" {
		t.Fatalf("Took = %v %s %d %v, want 3m20s from the 04:00 run", d, dir, from, ok)
	}
	// A REPEAT=5 run of 20 s setup, 150 s of cells and 30 s after them,
	// planned for REPEAT=1: 20 + 30 + 150/5.
	write("2026-12-01_080000_http-baseline", base+"setting.REPEAT=5\nstarted_at=2026-12-01T08:00:00Z\nfinished_at=2026-12-01T08:03:20Z\nstatus=ok\n")
	cells := "name\tstatus\tstart\tend\tparams\terror\n1k-r1\tok\t1796112020000\t1796112050000\t\t\n1k-r5\tok\t1796112140000\t1796112170000\t\t\n"
	if err := os.WriteFile(filepath.Join(root, "2026-12-01_080000_http-baseline", "cells.tsv"), []byte(cells), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, _, _, from, ok := Took([]string{root}, "01-http-baseline/run_http_baseline.sh", "netns", "quick", 1); !ok || d != 80*time.Second || from != 5 {
		t.Fatalf("Took of a REPEAT=5 run for REPEAT=1 = %v from %d, want 1m20s from 5", d, from)
	}
	if d, _, _, from, _ := Took([]string{root}, "01-http-baseline/run_http_baseline.sh", "netns", "quick", 5); d != 200*time.Second || from != 0 {
		t.Fatalf("Took of a REPEAT=5 run for REPEAT=5 = %v from %d, want 3m20s as it was", d, from)
	}
	// No like run on LAB=ssh: the newest on another lab, said so.
	if d, _, lab, _, ok := Took([]string{root}, "01-http-baseline/run_http_baseline.sh", "ssh", "smoke", 1); !ok || lab != "netns" || d != 30*time.Second {
		t.Fatalf("Took on another lab = %v on %q, want 30s on netns", d, lab)
	}
	if _, _, _, _, ok := Took([]string{root}, "00-iperf3/run_iperf3_baseline.sh", "netns", "quick", 1); ok {
		t.Fatal("Took found a run of a runner that never ran")
	}
}
