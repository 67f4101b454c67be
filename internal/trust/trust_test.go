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

// judgeSteady runs Steady over every cell of a recorded run directory.
func judgeSteady(t *testing.T, dir string) map[string]*summary.Trust {
	t.Helper()
	r, err := rundir.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := hostdata.Load(dir)
	out := map[string]*summary.Trust{}
	for _, c := range r.Cells {
		out[c.Name] = Steady(nil, h, c, Sender{Host: "server", NIC: "csbs0"}, 0, DefaultUnsteadyCV)
	}
	return out
}

// testdata/ramp: Phase 1 with no warm-up; three busy loops stopped one
// every 1.5 s from the start of the CPU-bound 1k cell make its throughput
// ramp up through the window; the 100k cell after it is link-bound and
// steady (see testdata/README.md).
func TestSteadyRamp(t *testing.T) {
	got := judgeSteady(t, "testdata/ramp")
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "ramp.json", string(b)+"\n")
	if c := got["1k"]; c == nil || !c.Unsteady || c.Steadiness.Cause != "trend" || c.Steadiness.SlopePctPerS <= 0 {
		t.Errorf("1k: want unsteady, trending up: %+v", c.Steadiness)
	}
	if c := got["100k"]; c == nil || c.Unsteady || !c.Steadiness.Judged {
		t.Errorf("100k: want judged steady: %+v", c.Steadiness)
	}
	golden.Check(t, "ramp-line.txt", UnsteadyLine(got["1k"])+"\n")
}

func TestJudgeSeries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		xs    []float64
		cause string
		ok    bool
	}{
		{"flat", []float64{950, 951, 949, 950, 950, 951}, "", true},
		{"noisy", []float64{500, 900, 450, 950, 480, 920}, "variation", true},
		{"slow drift", []float64{900, 910, 920, 930, 940, 950, 960, 970}, "trend", true},
		{"tiny drift", []float64{950.0, 950.1, 950.2, 950.3, 950.4, 950.5}, "", true},
		{"too short", []float64{100, 900, 100}, "", false},
		{"no traffic", []float64{0, 0, 0, 0}, "", false},
	} {
		st := JudgeSeries(tc.xs, DefaultUnsteadyCV)
		if st.Cause != tc.cause || st.Judged != tc.ok {
			t.Errorf("%s: cause %q judged %v, want %q %v (%+v)", tc.name, st.Cause, st.Judged, tc.cause, tc.ok, st)
		}
	}
}

// The phase's timeline chart: one line per judged cell, named with its marks.
func TestTimelineChart(t *testing.T) {
	got := judgeSteady(t, "testdata/ramp")
	cells := []summary.Cell{{Name: "1k", Trust: got["1k"]}, {Name: "100k", Trust: got["100k"]}, {Name: "old"}}
	ch := Chart(cells)
	if ch == nil || len(ch.Series) != 2 {
		t.Fatalf("chart: %+v", ch)
	}
	golden.Check(t, "timeline.dat", ch.Data())
	golden.Check(t, "timeline.gp", ch.Script("csb test"))
	if Chart(cells[2:]) != nil {
		t.Error("a chart without any timeline")
	}
}

func TestSpread(t *testing.T) {
	f := summary.F
	for _, tc := range []struct {
		vals []*float64
		text string
	}{
		{nil, "—"},
		{[]*float64{f(82019)}, "82019"},
		{[]*float64{f(60000), nil}, "60000"},
		{[]*float64{f(60000), f(62000)}, "60000 and 62000"},
		// The five runs of the 1 KB cell.
		{[]*float64{f(58230), f(61000), f(63291), f(60500), f(59800)}, "median 60500 (58230–63291, spread 8.4 %)"},
	} {
		if got := SpreadOf(tc.vals).Text(0); got != tc.text {
			t.Errorf("%v: %q, want %q", tc.vals, got, tc.text)
		}
	}
}
