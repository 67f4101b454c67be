package trust

import (
	"encoding/json"
	"testing"

	"csbench/internal/golden"
	"csbench/internal/hostdata"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// judge runs Disturb over every cell of a recorded run directory.
func judge(t *testing.T, dir, lab string, threshold float64) map[string]*summary.Trust {
	t.Helper()
	r, err := rundir.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := hostdata.Load(dir)
	out := map[string]*summary.Trust{}
	for _, c := range r.Cells {
		out[c.Name] = Disturb(h, c, lab, threshold)
	}
	return out
}

// testdata/hog: Phase 1 on the netns lab with a busy loop (pid 25630)
// started beside it (see testdata/README.md).
func TestDisturbHog(t *testing.T) {
	got := judge(t, "testdata/hog", "netns", DefaultDisturbPct)
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "hog.json", string(b)+"\n")
	c := got["100k"]
	if c == nil || !c.Disturbed {
		t.Fatalf("100k: not disturbed: %+v", c)
	}
	found := false
	for _, p := range c.OtherLoad[0].Top {
		found = found || p.PID == 25630
	}
	if !found {
		t.Errorf("100k: the busy loop (pid 25630) is not named: %+v", c.OtherLoad[0].Top)
	}
	// The run's own processes are never "others".
	for _, ol := range c.OtherLoad {
		for _, p := range ol.Top {
			if p.Command == "wrk" || p.Command == "pidstat" || p.Command == "sadc" {
				t.Errorf("a process of the run counted as other: %+v", p)
			}
		}
	}
	golden.Check(t, "hog-line.txt", DisturbLine(c)+"\n")
}

// A threshold above what the others took leaves the cell unmarked, with
// its evidence kept.
func TestDisturbThreshold(t *testing.T) {
	got := judge(t, "testdata/hog", "netns", 1000)
	for name, c := range got {
		if c == nil || c.Disturbed || len(c.OtherLoad) != 1 || c.OtherLoad[0].OthersCPUPct == nil {
			t.Errorf("%s: %+v", name, c)
		}
		if DisturbLine(c) != "" {
			t.Errorf("%s: a line for an unmarked cell", name)
		}
	}
}

// A run without procs-pidstat.txt is not judged: nil, not "quiet".
func TestDisturbNoMonitor(t *testing.T) {
	h := hostdata.Load(t.TempDir())
	if got := Disturb(h, rundir.Cell{Name: "x"}, "netns", 10); got != nil {
		t.Errorf("got %+v, want nil", got)
	}
}

func TestKernelThread(t *testing.T) {
	for cmd, want := range map[string]bool{"ksoftirqd/0": true, "kworker/1:2-events": true, "bash": false, "kworkers": false} {
		if kernelThread(cmd) != want {
			t.Errorf("kernelThread(%q) = %v", cmd, !want)
		}
	}
}
