// Package enginebench computes the engine bench's figures and verdicts.
// The engine bench (scripts/engine-bench.sh) keeps raw outputs only; two
// subcommands of connclient compute from them with this package:
//
//	benchrate   the rate of the script's next run: -scale times wrk's
//	            achieved rate (-wrk), or a connclient run's (-result)
//	benchreport the figures of every repetition of a run directory, their
//	            min/median/max, and the verdicts against the engine's goals
//
// A repetition directory DIR/rep-N holds, each client's output with the
// /usr/bin/time file of its process (TimeFormat) and, when the bench took
// them, /proc/stat before and after it (NAME.stat0, NAME.stat1):
//
//	wrk.out, wrk.time         wrk -t1 -cN (lib/wrk/report.lua) against the server
//	engine.json, engine.time  connclient lowrate, same N and server, at twice
//	                          wrk's rate: every connection busy, the server
//	                          saturated, as with wrk (the ratio's verdict)
//	knee.json, knee.time      connclient lowrate at wrk's rate: the open loop
//	                          at the server's knee (for information)
//	ceiling.json, ceiling.time  connclient lowrate far above what it can do,
//	                          against the responder: every connection busy,
//	                          its closed-loop ceiling
//	sustain-N.json, .time     connclient lowrate at BenchSustainFractions of
//	                          that ceiling, N in order, until one keeps its
//	                          schedule (Kept: 99 % of its rate, sender lag
//	                          p99 within 10 ms): the open-loop ceiling, the
//	                          highest rate it sends on time. Below
//	                          saturation an open loop sleeps and wakes for
//	                          its requests, which costs it more per request
//	                          than a loop that never waits (on this machine
//	                          about 15 against 11 us): the closed-loop
//	                          ceiling is a rate it cannot keep
//	lag.json, lag.time        connclient lowrate at BenchLagFraction of the
//	                          open-loop ceiling, same connections and
//	                          responder: the lag's verdict, on every
//	                          request's sender lag
package enginebench

import (
	"bytes"
	"csbench/internal/rundir"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"csbench/internal/connresult"
	"csbench/internal/decimal"
	"csbench/internal/parse"
)

// TimeFormat is the /usr/bin/time -f format the bench writes.
const TimeFormat = "user_s=%U sys_s=%S wall_s=%e"

// The engine's goals.
const (
	// BenchRatioMin: requests per client CPU-second, at least this much of
	// wrk's on the same server and connections.
	BenchRatioMin = 0.8
	// BenchLagFraction of the ceiling is the rate of the lag run, where the
	// sender lag p99 must be at most BenchLagMaxMs.
	BenchLagFraction = 0.8
	BenchLagMaxMs    = 1.0
	// BenchKeptMin, BenchKeptLagMs: a run kept its schedule when it
	// achieved at least this fraction of its target rate (Phase 5's own
	// rule for a step) with its sender lag p99 within Phase 5's default
	// latency budget: an engine that runs behind by a constant offset (a
	// stall it never caught up with) has reached its ceiling even if it
	// sends at the rate.
	BenchKeptMin   = 0.99
	BenchKeptLagMs = 10.0
)

// BenchSustainFractions are the fractions of the closed-loop ceiling the
// bench tries, in order, for the open-loop ceiling (sustain-1, -2, ...).
var BenchSustainFractions = []float64{0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5}

// Kept says whether a lowrate result kept its schedule: it achieved at
// least BenchKeptMin of its target rate, its sender lag p99 at most
// BenchKeptLagMs.
func Kept(l *connresult.LowrateResult) bool {
	return l != nil && l.RPSAchieved != nil && l.SenderLagP99Ms != nil && KeptRate(*l.RPSAchieved, float64(l.RPSTarget), *l.SenderLagP99Ms)
}

// KeptRate is Kept's rule on the figures: achieved and target rates, sender
// lag p99 in ms.
func KeptRate(achieved, target, lagP99Ms float64) bool {
	return target > 0 && achieved >= BenchKeptMin*target && lagP99Ms <= BenchKeptLagMs
}

// BenchSustainNext is what the bench runs next in a repetition directory
// holding ceiling.json and sustain-1 .. sustain-k: "sustain" and the rate
// of sustain-(k+1), the next of BenchSustainFractions of the ceiling's
// achieved rate, while none of them kept its schedule; else "lag" and the
// lag run's rate, BenchLagFraction of the rate the run that kept its
// schedule achieved (of the last one, when every fraction was tried).
func BenchSustainNext(dir string) (string, int, error) {
	run, tried, err := sustainedRun(dir)
	if err != nil {
		return "", 0, err
	}
	if run == nil && tried < len(BenchSustainFractions) {
		rate, err := BenchRate("", filepath.Join(dir, "ceiling.json"), BenchSustainFractions[tried])
		return "sustain", rate, err
	}
	rate, err := BenchRate("", filepath.Join(dir, "sustain-"+strconv.Itoa(tried)+".json"), BenchLagFraction)
	return "lag", rate, err
}

// CPUTime is one process's /usr/bin/time line.
type CPUTime struct {
	UserS, SysS, WallS float64
	ExitStatus         int // "Command exited with non-zero status N"; -1: killed by a signal
}

// readTime reads a /usr/bin/time -f TimeFormat -o FILE file.
func readTime(path string) (CPUTime, error) {
	b, err := rundir.ReadFile(path)
	if err != nil {
		return CPUTime{}, err
	}
	var t CPUTime
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Command exited with non-zero status "):
			t.ExitStatus, _ = strconv.Atoi(strings.TrimPrefix(line, "Command exited with non-zero status "))
		case strings.HasPrefix(line, "Command terminated by signal "):
			t.ExitStatus = -1
		case strings.HasPrefix(line, "user_s="):
			_, err := fmt.Sscanf(line, "user_s=%g sys_s=%g wall_s=%g", &t.UserS, &t.SysS, &t.WallS)
			if err != nil {
				return CPUTime{}, fmt.Errorf("%s: %q is not %q: %v", path, line, TimeFormat, err)
			}
			found = true
		}
	}
	if !found {
		return CPUTime{}, fmt.Errorf("%s: no line of /usr/bin/time -f %q", path, TimeFormat)
	}
	return t, nil
}

// BenchRun is one process of a repetition: what it did and what it cost.
type BenchRun struct {
	Connections int     `json:"connections"`
	RPSTarget   *int    `json:"rps_target"` // null: wrk (closed loop)
	Engine      string  `json:"engine,omitempty"`
	Requests    int64   `json:"requests"` // completed: wrk's responses, connclient's requests_completed
	Failed      int64   `json:"requests_failed"`
	ExitStatus  int     `json:"exit_status"`
	UserS       float64 `json:"user_s"`
	SysS        float64 `json:"sys_s"`
	CPUS        float64 `json:"cpu_s"`  // user + sys of the whole process
	WallS       float64 `json:"wall_s"` // the whole process
	ElapsedS    float64 `json:"elapsed_s"`
	RPS         float64 `json:"requests_per_s"`     // Requests / ElapsedS
	PerCPUS     float64 `json:"requests_per_cpu_s"` // Requests / CPUS
	CPUUtil     float64 `json:"cpu_utilization"`    // CPUS / WallS: near 1, the client bound the rate
	// LoopCPUUtil is connclient's event_loops_cpu_s over elapsed_s and
	// event_loops: how busy its loops were during the schedule alone.
	LoopCPUUtil *float64 `json:"loop_cpu_utilization,omitempty"`
	// OtherCPUS is how much CPU 1 (the client's) was busy with anything
	// but the client while it ran (/proc/stat, steal included): the other
	// work the machine did there. Null without the stat files.
	OtherCPUS   *float64 `json:"client_cpu_other_s"`
	LagP99Ms    *float64 `json:"sender_lag_p99_ms,omitempty"`
	OwnLagP99Ms *float64 `json:"engine_lag_p99_ms,omitempty"` // the requests that found an idle connection
	LatP99Ms    *float64 `json:"latency_p99_ms,omitempty"`
	PoolBusy    *int64   `json:"requests_late_pool_busy,omitempty"`
}

// BenchRep is one repetition.
type BenchRep struct {
	Rep    string   `json:"rep"`
	Wrk    BenchRun `json:"wrk"`
	Engine BenchRun `json:"engine"`
	Ratio  float64  `json:"ratio"` // engine / wrk requests per CPU-second
	Knee   BenchRun `json:"knee"`
	// KneeRatio is knee / wrk requests per CPU-second: below saturation an
	// open loop sleeps and wakes for each request, which costs more.
	KneeRatio float64  `json:"knee_ratio"`
	Ceiling   BenchRun `json:"ceiling"`
	// Sustained is the first sustain-N run that kept its schedule (null:
	// none did); SustainTried is how many were run.
	Sustained    *BenchRun `json:"sustained"`
	SustainTried int       `json:"sustain_runs"`
	Lag          BenchRun  `json:"lag"`
	// LagFraction is the lag run's target over the closed-loop ceiling's
	// achieved rate.
	LagFraction float64 `json:"lag_fraction_of_closed_ceiling"`
}

// Spread is the min, median and max of one figure over the repetitions;
// null where no repetition measured it.
type Spread struct {
	Min    *float64 `json:"min"`
	Median *float64 `json:"median"`
	Max    *float64 `json:"max"`
	N      int      `json:"n"` // repetitions that measured it
}

// BenchReport is benchreport's document.
type BenchReport struct {
	SchemaVersion int        `json:"schema_version"`
	Tool          string     `json:"tool"`
	Mode          string     `json:"mode"`
	Dir           string     `json:"dir"` // the run directory's name (where it lies is not the report's)
	Statistic     string     `json:"statistic"`
	Repetitions   []BenchRep `json:"repetitions"`

	WrkPerCPUS     Spread `json:"wrk_requests_per_cpu_s"`
	EnginePerCPUS  Spread `json:"engine_requests_per_cpu_s"`
	Ratio          Spread `json:"ratio"`
	KneeRatio      Spread `json:"knee_ratio"`
	KneeLagP99Ms   Spread `json:"knee_sender_lag_p99_ms"`
	KneeOwnP99Ms   Spread `json:"knee_engine_lag_p99_ms"`
	CeilingRPS     Spread `json:"ceiling_requests_per_s"`
	CeilingPerCPUS Spread `json:"ceiling_requests_per_cpu_s"`
	CeilingCPUUtil Spread `json:"ceiling_cpu_utilization"`
	// CeilingLoopUtil is how busy the engine's loops were in the ceiling
	// run: well below 1, the responder, not the engine, set the ceiling.
	CeilingLoopUtil Spread `json:"ceiling_loop_cpu_utilization"`
	// SustainedRPS is the open-loop ceiling: the highest rate the engine
	// kept (its sustain run's achieved rate); the lag run is at
	// BenchLagFraction of it.
	SustainedRPS Spread `json:"sustained_requests_per_s"`
	LagRPS       Spread `json:"lag_run_requests_per_s"`
	LagFraction  Spread `json:"lag_run_fraction_of_closed_ceiling"`
	LagP99Ms     Spread `json:"lag_run_sender_lag_p99_ms"`
	// LagOwnP99Ms is the lag run's engine_lag_p99_ms: without the requests
	// that waited for a connection (counted apart: a pool too small, or a
	// responder that fell behind, is not the engine's lateness). The lag
	// verdict is on lag_run_sender_lag_p99_ms, every request's lag; this
	// one is beside it, to tell the engine's lateness from the pool's.
	LagOwnP99Ms Spread `json:"lag_run_engine_lag_p99_ms"`
	// LagOtherCPUS is the other work on the client's CPU during the lag
	// run (client_cpu_other_s): well above 0, the figures are a shared
	// machine's.
	LagOtherCPUS Spread `json:"lag_run_client_cpu_other_s"`

	RatioMin float64  `json:"ratio_min"`
	LagMaxMs float64  `json:"sender_lag_p99_max_ms"`
	RatioOK  bool     `json:"ratio_ok"`
	LagOK    bool     `json:"lag_ok"`
	Notes    []string `json:"notes"`
}

// wrkRun reads wrk.out and wrk.time of dir.
func wrkRun(dir string) (BenchRun, error) {
	path := filepath.Join(dir, "wrk.out")
	b, err := rundir.ReadFile(path)
	if err != nil {
		return BenchRun{}, err
	}
	w, err := parse.ParseWrkJSON(bytes.NewReader(b))
	if err != nil {
		return BenchRun{}, fmt.Errorf("%s: %w", path, err)
	}
	txt, err := parse.ParseWrkText(bytes.NewReader(b))
	if err != nil {
		return BenchRun{}, fmt.Errorf("%s: %w", path, err)
	}
	run := BenchRun{Connections: txt.Connections, Requests: int64(w.Requests),
		Failed:   int64(w.Errors.Connect + w.Errors.Read + w.Errors.Write + w.Errors.Status + w.Errors.Timeout),
		ElapsedS: float64(w.DurationUs) / 1e6}
	if w.LatencyP99Us != nil {
		run.LatP99Ms = ptr(*w.LatencyP99Us / 1000)
	}
	return run, addTime(&run, filepath.Join(dir, "wrk.time"))
}

// clientRun reads NAME.json and NAME.time of dir.
func clientRun(dir, name string) (BenchRun, error) {
	path := filepath.Join(dir, name+".json")
	b, err := rundir.ReadFile(path)
	if err != nil {
		return BenchRun{}, err
	}
	r, err := connresult.DecodeResult(path, b)
	if err != nil {
		return BenchRun{}, err
	}
	l := r.Lowrate
	if l == nil {
		return BenchRun{}, fmt.Errorf("%s: mode %q, want lowrate", path, r.Common.Mode)
	}
	if l.ElapsedS == nil {
		return BenchRun{}, fmt.Errorf("%s: the schedule did not run (status %s, errors %v)", path, l.Status, l.Errors)
	}
	run := BenchRun{Connections: int(l.ConnectionsEstablished), RPSTarget: ptr(l.RPSTarget), Engine: l.Engine,
		Requests: l.RequestsCompleted, Failed: l.RequestsFailed, ElapsedS: *l.ElapsedS,
		LagP99Ms: l.SenderLagP99Ms, OwnLagP99Ms: l.EngineLagP99Ms, LatP99Ms: l.LatencyP99Ms, PoolBusy: l.RequestsLatePoolBusy}
	if l.EventLoopsCPUS != nil && l.EventLoops != nil && *l.EventLoops > 0 && *l.ElapsedS > 0 {
		run.LoopCPUUtil = ptr(round(*l.EventLoopsCPUS / *l.ElapsedS / float64(*l.EventLoops), 3))
	}
	return run, addTime(&run, filepath.Join(dir, name+".time"))
}

// sustainedRun reads dir's sustain-1, -2, ... runs (in order, until one is
// missing) and returns the first that kept its schedule, and how many
// there were.
func sustainedRun(dir string) (*BenchRun, int, error) {
	for k := 1; ; k++ {
		name := "sustain-" + strconv.Itoa(k)
		path := filepath.Join(dir, name+".json")
		b, err := rundir.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, k - 1, nil
		}
		if err != nil {
			return nil, k - 1, err
		}
		r, err := connresult.DecodeResult(path, b)
		if err != nil {
			return nil, k - 1, err
		}
		if !Kept(r.Lowrate) {
			continue
		}
		run, err := clientRun(dir, name)
		return &run, k, err
	}
}

// addTime adds the process's CPU (path: NAME.time), the rates that
// follow, and the other work on its CPU (NAME.stat0, .stat1, if there).
func addTime(run *BenchRun, path string) error {
	t, err := readTime(path)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(path, ".time")
	if busy, err := cpuBusy(base+".stat0", base+".stat1", "cpu1"); err == nil {
		run.OtherCPUS = ptr(round(max(busy-(t.UserS+t.SysS), 0), 2))
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	run.UserS, run.SysS, run.WallS, run.ExitStatus = t.UserS, t.SysS, t.WallS, t.ExitStatus
	run.CPUS = round(t.UserS+t.SysS, 3)
	if run.ElapsedS > 0 {
		run.RPS = round(float64(run.Requests)/run.ElapsedS, 1)
	}
	if run.CPUS > 0 {
		run.PerCPUS = round(float64(run.Requests)/run.CPUS, 1)
	}
	if t.WallS > 0 {
		run.CPUUtil = round(run.CPUS/t.WallS, 3)
	}
	return nil
}

// cpuBusy is how many seconds cpu (a /proc/stat line name) was busy
// between the snapshots a and b: user, nice, system, irq, softirq and
// steal, in USER_HZ (100 a second on Linux).
func cpuBusy(a, b, cpu string) (float64, error) {
	var ticks [2]float64
	for i, path := range []string{a, b} {
		data, err := rundir.ReadFile(path)
		if err != nil {
			return 0, err
		}
		found := false
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) < 9 || f[0] != cpu {
				continue
			}
			for _, k := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
				v, err := strconv.ParseFloat(f[k], 64)
				if err != nil {
					return 0, fmt.Errorf("%s: %s field %d %q is not a number", path, cpu, k, f[k])
				}
				ticks[i] += v
			}
			found = true
		}
		if !found {
			return 0, fmt.Errorf("%s: no %s line", path, cpu)
		}
	}
	return (ticks[1] - ticks[0]) / 100, nil
}

// BenchReportOf reads every repetition of dir (dir/rep-N, in N order).
func BenchReportOf(dir string) (*BenchReport, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var reps []int
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), "rep-"); ok && e.IsDir() {
			if k, err := strconv.Atoi(n); err == nil && k > 0 {
				reps = append(reps, k)
			}
		}
	}
	if len(reps) == 0 {
		return nil, fmt.Errorf("%s: no repetition directory (rep-1, rep-2, ...)", dir)
	}
	slices.Sort(reps)
	rep := &BenchReport{SchemaVersion: 1, Tool: "connclient", Mode: "benchreport", Dir: filepath.Base(filepath.Clean(dir)),
		Statistic: "median over the repetitions (min and max beside); verdicts on the medians",
		RatioMin:  BenchRatioMin, LagMaxMs: BenchLagMaxMs, Notes: []string{}}
	for _, k := range reps {
		d := filepath.Join(dir, "rep-"+strconv.Itoa(k))
		var r BenchRep
		r.Rep = filepath.Base(d)
		var errs [6]error
		r.Wrk, errs[0] = wrkRun(d)
		r.Engine, errs[1] = clientRun(d, "engine")
		r.Knee, errs[2] = clientRun(d, "knee")
		r.Ceiling, errs[3] = clientRun(d, "ceiling")
		r.Lag, errs[4] = clientRun(d, "lag")
		r.Sustained, r.SustainTried, errs[5] = sustainedRun(d)
		if err := errors.Join(errs[:]...); err != nil {
			return nil, err
		}
		if r.Ceiling.RPS > 0 && r.Lag.RPSTarget != nil {
			r.LagFraction = round(float64(*r.Lag.RPSTarget)/r.Ceiling.RPS, 3)
		}
		if r.Sustained == nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: none of its %d sustain runs kept its schedule: no open-loop ceiling", r.Rep, r.SustainTried))
		}
		if r.Wrk.PerCPUS > 0 {
			r.Ratio = round(r.Engine.PerCPUS/r.Wrk.PerCPUS, 3)
			r.KneeRatio = round(r.Knee.PerCPUS/r.Wrk.PerCPUS, 3)
		}
		for name, run := range map[string]BenchRun{"wrk": r.Wrk, "engine": r.Engine, "knee": r.Knee, "ceiling": r.Ceiling, "lag": r.Lag} {
			if run.Failed > 0 || run.ExitStatus != 0 {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s %s: %d failed requests, exit status %d", r.Rep, name, run.Failed, run.ExitStatus))
			}
		}
		if r.Engine.Connections != r.Wrk.Connections {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: wrk ran %d connections, connclient %d: not the same load", r.Rep, r.Wrk.Connections, r.Engine.Connections))
		}
		if r.Lag.Connections != r.Ceiling.Connections {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: the ceiling ran %d connections, the lag run %d: not 0.8 of the same ceiling", r.Rep, r.Ceiling.Connections, r.Lag.Connections))
		}
		if r.Lag.PoolBusy != nil && *r.Lag.PoolBusy > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s lag: %d requests found every connection busy (their wait is in sender_lag, not in engine_lag)", r.Rep, *r.Lag.PoolBusy))
		}
		rep.Repetitions = append(rep.Repetitions, r)
	}
	slices.Sort(rep.Notes)
	spread := func(f func(BenchRep) *float64) Spread {
		var v []float64
		for _, r := range rep.Repetitions {
			if x := f(r); x != nil {
				v = append(v, *x)
			}
		}
		return spreadOf(v)
	}
	val := func(x float64) *float64 { return &x }
	rep.WrkPerCPUS = spread(func(r BenchRep) *float64 { return val(r.Wrk.PerCPUS) })
	rep.EnginePerCPUS = spread(func(r BenchRep) *float64 { return val(r.Engine.PerCPUS) })
	rep.Ratio = spread(func(r BenchRep) *float64 { return val(r.Ratio) })
	rep.KneeRatio = spread(func(r BenchRep) *float64 { return val(r.KneeRatio) })
	rep.KneeLagP99Ms = spread(func(r BenchRep) *float64 { return r.Knee.LagP99Ms })
	rep.KneeOwnP99Ms = spread(func(r BenchRep) *float64 { return r.Knee.OwnLagP99Ms })
	rep.CeilingRPS = spread(func(r BenchRep) *float64 { return val(r.Ceiling.RPS) })
	rep.CeilingPerCPUS = spread(func(r BenchRep) *float64 { return val(r.Ceiling.PerCPUS) })
	rep.CeilingCPUUtil = spread(func(r BenchRep) *float64 { return val(r.Ceiling.CPUUtil) })
	rep.CeilingLoopUtil = spread(func(r BenchRep) *float64 { return r.Ceiling.LoopCPUUtil })
	rep.SustainedRPS = spread(func(r BenchRep) *float64 {
		if r.Sustained == nil {
			return nil
		}
		return val(r.Sustained.RPS)
	})
	rep.LagRPS = spread(func(r BenchRep) *float64 { return val(r.Lag.RPS) })
	rep.LagFraction = spread(func(r BenchRep) *float64 { return val(r.LagFraction) })
	rep.LagP99Ms = spread(func(r BenchRep) *float64 { return r.Lag.LagP99Ms })
	rep.LagOwnP99Ms = spread(func(r BenchRep) *float64 { return r.Lag.OwnLagP99Ms })
	rep.LagOtherCPUS = spread(func(r BenchRep) *float64 { return r.Lag.OtherCPUS })
	rep.RatioOK = *rep.Ratio.Median >= BenchRatioMin
	rep.LagOK = rep.LagP99Ms.N == len(rep.Repetitions) && *rep.LagP99Ms.Median <= BenchLagMaxMs
	return rep, nil
}

// spreadOf is the min, median (the mean of the middle two for an even
// count) and max of v.
func spreadOf(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Spread{Min: ptr(s[0]), Median: ptr(round(med, 3)), Max: ptr(s[n-1]), N: n}
}

// BenchRate is benchrate's answer: scale times wrk's achieved requests/s
// (wrkOut) or a connclient result's rps_achieved (result), rounded down,
// at least 1.
func BenchRate(wrkOut, result string, scale float64) (int, error) {
	var rps float64
	switch {
	case wrkOut != "":
		b, err := rundir.ReadFile(wrkOut)
		if err != nil {
			return 0, err
		}
		w, err := parse.ParseWrkJSON(bytes.NewReader(b))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", wrkOut, err)
		}
		rps = w.RequestsPerSecond()
	default:
		b, err := rundir.ReadFile(result)
		if err != nil {
			return 0, err
		}
		r, err := connresult.DecodeResult(result, b)
		if err != nil {
			return 0, err
		}
		if r.Lowrate == nil || r.Lowrate.RPSAchieved == nil {
			return 0, fmt.Errorf("%s: not a lowrate result with rps_achieved", result)
		}
		rps = *r.Lowrate.RPSAchieved
	}
	return max(1, int(math.Floor(rps*scale))), nil
}

func ptr[T any](v T) *T { return &v }

var round = decimal.Round
