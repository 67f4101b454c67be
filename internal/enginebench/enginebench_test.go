package enginebench

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"csbench/internal/connresult"
)

// testdata/enginebench is two repetitions of scripts/engine-bench.sh as the
// tools wrote them (wrk with lib/wrk/report.lua, connclient, /usr/bin/time),
// from a run on the 2-CPU build machine.
const benchDir = "testdata/enginebench"

// TestBenchReport: every figure is the raw files' own arithmetic, the
// spreads are of the repetitions, and the verdicts follow the medians.
func TestBenchReport(t *testing.T) {
	rep, err := BenchReportOf(benchDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Repetitions) != 2 || rep.Repetitions[0].Rep != "rep-1" || rep.Repetitions[1].Rep != "rep-2" {
		t.Fatalf("repetitions %+v", rep.Repetitions)
	}
	for _, r := range rep.Repetitions {
		tm, err := readTime(filepath.Join(benchDir, r.Rep, "wrk.time"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Wrk.CPUS != round(tm.UserS+tm.SysS, 3) || r.Wrk.Connections != 16 || r.Wrk.RPSTarget != nil {
			t.Errorf("%s wrk: %+v (time %+v)", r.Rep, r.Wrk, tm)
		}
		for name, run := range map[string]BenchRun{"wrk": r.Wrk, "engine": r.Engine, "knee": r.Knee, "ceiling": r.Ceiling, "lag": r.Lag} {
			if want := round(float64(run.Requests)/run.CPUS, 1); run.PerCPUS != want || run.Requests <= 0 {
				t.Errorf("%s %s: %v requests per CPU-second, want %v", r.Rep, name, run.PerCPUS, want)
			}
		}
		if want := round(r.Engine.PerCPUS/r.Wrk.PerCPUS, 3); r.Ratio != want {
			t.Errorf("%s ratio %v, want %v", r.Rep, r.Ratio, want)
		}
		if want := round(r.Knee.PerCPUS/r.Wrk.PerCPUS, 3); r.KneeRatio != want {
			t.Errorf("%s knee ratio %v, want %v", r.Rep, r.KneeRatio, want)
		}
		for name, run := range map[string]BenchRun{"wrk": r.Wrk, "engine": r.Engine, "knee": r.Knee, "ceiling": r.Ceiling, "lag": r.Lag} {
			if run.OtherCPUS == nil || *run.OtherCPUS < 0 || *run.OtherCPUS > run.WallS {
				t.Errorf("%s %s: other work on the client's CPU %v s, want 0 to its %v s", r.Rep, name, run.OtherCPUS, run.WallS)
			}
		}
		if r.Sustained == nil || r.SustainTried != 1 || *r.Sustained.RPSTarget >= int(r.Ceiling.RPS) {
			t.Errorf("%s: sustained %+v of %d runs, ceiling %v", r.Rep, r.Sustained, r.SustainTried, r.Ceiling.RPS)
		}
		if want := round(float64(*r.Lag.RPSTarget)/r.Ceiling.RPS, 3); r.LagFraction != want || want >= BenchLagFraction {
			t.Errorf("%s: lag at %v of the closed-loop ceiling, want %v (below %v)", r.Rep, r.LagFraction, want, BenchLagFraction)
		}
		if r.Engine.Engine != connresult.EngineEpoll || r.Ceiling.LoopCPUUtil == nil || r.Lag.LagP99Ms == nil {
			t.Errorf("%s: engine %q loop util %v lag %v", r.Rep, r.Engine.Engine, r.Ceiling.LoopCPUUtil, r.Lag.LagP99Ms)
		}
	}
	a, b := rep.Repetitions[0].Ratio, rep.Repetitions[1].Ratio
	if rep.Ratio.N != 2 || *rep.Ratio.Min != math.Min(a, b) || *rep.Ratio.Max != math.Max(a, b) || *rep.Ratio.Median != round((a+b)/2, 3) {
		t.Errorf("ratio spread %+v of %v and %v", rep.Ratio, a, b)
	}
	if rep.RatioOK != (*rep.Ratio.Median >= BenchRatioMin) || rep.LagOK != (*rep.LagP99Ms.Median <= BenchLagMaxMs) {
		t.Errorf("verdicts %v %v for ratio %v, sender lag %v", rep.RatioOK, rep.LagOK, *rep.Ratio.Median, *rep.LagP99Ms.Median)
	}
}

// TestKept: a run kept its schedule with 99 % of its rate and a sender lag
// p99 within 10 ms, not with either alone.
func TestKept(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		achieved, lag float64
		want          bool
	}{{990, 10, true}, {1000, 0.1, true}, {989, 0.1, false}, {1000, 10.5, false}} {
		l := &connresult.LowrateResult{RPSTarget: 1000, RPSAchieved: f(c.achieved), SenderLagP99Ms: f(c.lag)}
		if Kept(l) != c.want {
			t.Errorf("achieved %v lag %v: kept %v", c.achieved, c.lag, !c.want)
		}
	}
	if Kept(&connresult.LowrateResult{RPSTarget: 1000}) || Kept(nil) {
		t.Error("a run without figures was kept")
	}
}

// TestSustainedRun: the open-loop ceiling is the first sustain run that
// kept its schedule, after the ones that did not; none kept is a note.
func TestSustainedRun(t *testing.T) {
	src := filepath.Join(benchDir, "rep-1")
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		name := strings.Replace(e.Name(), "sustain-1.", "sustain-2.", 1)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Name(), "sustain-1.") {
			if e.Name() == "sustain-1.json" { // the one before fell behind
				b = bytes.Replace(b, []byte(`"sender_lag_p99_ms":`), []byte(`"sender_lag_p99_ms":1e3,"x":`), 1)
			}
			os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
		}
	}
	run, n, err := sustainedRun(dir)
	if err != nil || run == nil || n != 2 {
		t.Fatalf("sustained %+v of %d runs, %v", run, n, err)
	}
	// The next run: the lag, at 0.8 of what the run that kept it achieved.
	lag, _ := BenchRate("", filepath.Join(dir, "sustain-2.json"), BenchLagFraction)
	if what, rate, err := BenchSustainNext(dir); what != "lag" || rate != lag || err != nil {
		t.Errorf("next: %s %d, %v; want lag %d", what, rate, err, lag)
	}
	os.Remove(filepath.Join(dir, "sustain-2.json"))
	if run, n, err := sustainedRun(dir); run != nil || n != 1 || err != nil {
		t.Errorf("none kept: %+v of %d runs, %v", run, n, err)
	}
	// None kept yet: the next fraction of the ceiling.
	want, _ := BenchRate("", filepath.Join(dir, "ceiling.json"), BenchSustainFractions[1])
	if what, rate, err := BenchSustainNext(dir); what != "sustain" || rate != want || err != nil {
		t.Errorf("next: %s %d, %v; want sustain %d", what, rate, err, want)
	}
}

func TestBenchReportErrors(t *testing.T) {
	if _, err := BenchReportOf(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no repetition directory") {
		t.Errorf("empty dir: %v", err)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "rep-1"), 0o755)
	if _, err := BenchReportOf(dir); err == nil || !strings.Contains(err.Error(), "wrk.out") {
		t.Errorf("empty repetition: %v", err)
	}
}

// TestCPUBusy: busy is user + nice + system + irq + softirq + steal,
// idle and iowait left out, of the named CPU, in seconds of 100 ticks.
func TestCPUBusy(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 5 0 5 50 0 0 0 0 0 0\ncpu1 100 1 20 1000 7 2 3 4 0 0\n"), 0o644)
	os.WriteFile(b, []byte("cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 5 0 5 50 0 0 0 0 0 0\ncpu1 150 2 40 1100 9 3 4 9 0 0\n"), 0o644)
	got, err := cpuBusy(a, b, "cpu1")
	if want := (50 + 1 + 20 + 1 + 1 + 5) / 100.0; err != nil || math.Abs(got-want) > 1e-9 {
		t.Errorf("cpuBusy = %v, %v; want %v", got, err, want)
	}
	if _, err := cpuBusy(a, b, "cpu7"); err == nil || !strings.Contains(err.Error(), "no cpu7 line") {
		t.Errorf("missing CPU: %v", err)
	}
}

func TestReadTime(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		in   string
		want CPUTime
		err  string
	}{
		{"user_s=0.21 sys_s=1.75 wall_s=5.04\n", CPUTime{UserS: 0.21, SysS: 1.75, WallS: 5.04}, ""},
		{"Command exited with non-zero status 1\nuser_s=0.01 sys_s=0.00 wall_s=0.02\n", CPUTime{UserS: 0.01, WallS: 0.02, ExitStatus: 1}, ""},
		{"Command terminated by signal 9\nuser_s=0.01 sys_s=0.00 wall_s=0.02\n", CPUTime{UserS: 0.01, WallS: 0.02, ExitStatus: -1}, ""},
		{"0.21 1.75 5.04\n", CPUTime{}, "no line of /usr/bin/time"},
		{"user_s=x sys_s=1 wall_s=1\n", CPUTime{}, "is not"},
	}
	for i, c := range cases {
		p := filepath.Join(dir, strconv.Itoa(i))
		os.WriteFile(p, []byte(c.in), 0o644)
		got, err := readTime(p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v, want %+v", c.in, got, err, c.want)
		}
	}
}

// TestBenchRate: the rate of the next run comes from wrk's own JSON line
// and from a connclient result, rounded down.
func TestBenchRate(t *testing.T) {
	rep := filepath.Join(benchDir, "rep-1")
	r, err := BenchRate(filepath.Join(rep, "wrk.out"), "", 1)
	if err != nil {
		t.Fatal(err)
	}
	wrkRun, err := wrkRun(rep)
	if err != nil {
		t.Fatal(err)
	}
	if want := int(float64(wrkRun.Requests) / wrkRun.ElapsedS); r != want {
		t.Errorf("benchrate -wrk %d, want %d", r, want)
	}
	c, err := BenchRate("", filepath.Join(rep, "ceiling.json"), 0.8)
	if err != nil {
		t.Fatal(err)
	}
	ceil, err := clientRun(rep, "ceiling")
	if err != nil {
		t.Fatal(err)
	}
	if want := ceil.Requests * 8 / 10 / int64(ceil.ElapsedS); math.Abs(float64(c)-float64(want))/float64(want) > 0.01 {
		t.Errorf("benchrate -result -scale 0.8: %d, want about %d", c, want)
	}
	if _, err := BenchRate("", filepath.Join(rep, "wrk.time"), 1); err == nil {
		t.Error("a time file was taken for a result")
	}
}
