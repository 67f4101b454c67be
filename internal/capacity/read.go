package capacity

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"csbench/internal/connresult"
	"csbench/internal/rundir"
)

// ClientCPUBusy: a client whose event loops were busy this share of their
// time (CPU seconds over elapsed × loops) bounded the step itself.
const ClientCPUBusy = 0.9

// LagBoundMs is the engine lag p99 above which a step's lateness is the
// client's own: half the SLO's latency bound (a client whose own lateness
// takes half the budget broke it), at least lagMaxMs and at most
// LagCapMs, whatever the SLO (an SLO of a minute does not make a client
// 30 s late keep its schedule). On a shared machine an overloaded server's
// or a full link's step sees the client's loops wake a little late too
// (1.0–1.6 ms measured here at 10 KB and 100 KB on the link).
func LagBoundMs(lagMaxMs, sloLatencyMs float64) float64 {
	return math.Max(lagMaxMs, math.Min(sloLatencyMs/2, LagCapMs))
}

// LagCapMs is LagBoundMs's highest bound, and LagMinRequests the requests
// that found an idle connection a lag p99 needs to be read at all (its
// 1 % is then ten requests or more, not one).
const (
	LagCapMs       = 5
	LagMinRequests = 1000
)

// OthersBusy: a client's CPUs busy this share of the schedule more than
// the client process used them itself were kept busy by others.
const OthersBusy = 0.1

// clientEvidence is what a step's client processes show of themselves
// (NaN: not measured) and of their CPUs.
type clientEvidence struct {
	LoopsBusyPct float64 // the event loops' CPU time over their time
	OwnPct       float64 // the client processes' own CPU time over their CPUs' time (the busiest list's)
	CPUsBusyPct  float64 // its CPUs busy, whoever used them (the busiest's)
	OthersPct    float64 // CPUsBusyPct − OwnPct: what others used of those CPUs
	CPUs         string  // that process's CPU list
	LagP99Ms     float64 // the engine lag p99 of the merged histograms
	LagRequests  uint64  // the requests behind it
	LagBoundMs   float64
	// SharedCPUs: the client's CPUs are the server under test's too (the
	// local lab, or the netns lab unpinned): the others on them are the
	// server first, so their work is no disturbance.
	SharedCPUs bool
}

// whose decides whether a step's limit is the client's, on the client's
// own evidence only (its loops, its process's CPU time, its lag with the
// CPUs its own), or the step was disturbed (its CPUs were busy with
// others' work: repeated, never blamed on the client). The rules, in order:
//   - its event loops were busy ClientCPUBusy of their time: client-bound;
//   - its process used ClientCPUBusy of its CPUs' time: client-bound;
//   - its CPUs were busy ClientCPUBusy while the process used less:
//     disturbed (client-bound in results from before connclient measured
//     its own share: nothing then told the two apart);
//   - its engine lag p99, over LagMinRequests or more, passed the bound:
//     disturbed when others kept its CPUs busy OthersBusy of the time or
//     more, else client-bound.
//
// On CPUs shared with the server (SharedCPUs) the others are the server
// under test: CPUs busy while the client used less are no one's verdict
// (the step is the server's), and a late sender is client-bound whoever
// else used them (the client could not keep its schedule beside the
// server it measures).
func whose(e clientEvidence) (clientBound, disturbed bool, why string) {
	busy := 100 * ClientCPUBusy
	if e.SharedCPUs {
		switch {
		case e.LoopsBusyPct >= busy || e.OwnPct >= busy:
			// as below
		case e.LagRequests >= LagMinRequests && e.LagP99Ms > e.LagBoundMs:
			return true, false, fmt.Sprintf("its sender lag p99 (idle connection found) was %.2f ms > %g ms on CPUs (%s) it shares with the server under test", e.LagP99Ms, e.LagBoundMs, e.CPUs)
		default:
			return false, false, ""
		}
	}
	switch {
	case e.LoopsBusyPct >= busy:
		return true, false, fmt.Sprintf("its event loops were busy %.0f%% of their time (≥ %.0f%%)", e.LoopsBusyPct, busy)
	case e.OwnPct >= busy:
		return true, false, fmt.Sprintf("it used %.0f%% of its CPUs (%s) itself (≥ %.0f%%)", e.OwnPct, e.CPUs, busy)
	case e.CPUsBusyPct >= busy && math.IsNaN(e.OwnPct):
		// A result from before connclient measured its own share: whoever
		// used the CPUs, the client had none to spare (as it was judged).
		return true, false, fmt.Sprintf("its CPUs (%s) were %.0f%% busy (≥ %.0f%%), its own share not measured: the client had no CPU to spare", e.CPUs, e.CPUsBusyPct, busy)
	case e.CPUsBusyPct >= busy:
		return false, true, fmt.Sprintf("its CPUs (%s) were %.0f%% busy while it used %s of them itself: others' work", e.CPUs, e.CPUsBusyPct, pctText(e.OwnPct))
	case e.LagRequests >= LagMinRequests && e.LagP99Ms > e.LagBoundMs && e.OthersPct >= 100*OthersBusy:
		return false, true, fmt.Sprintf("its sender lag p99 was %.2f ms > %g ms while others kept its CPUs (%s) %.0f%% busy", e.LagP99Ms, e.LagBoundMs, e.CPUs, e.OthersPct)
	case e.LagRequests >= LagMinRequests && e.LagP99Ms > e.LagBoundMs:
		return true, false, fmt.Sprintf("its sender lag p99 (idle connection found) was %.2f ms > %g ms", e.LagP99Ms, e.LagBoundMs)
	}
	return false, false, ""
}

// pctText is p as a whole percentage, or "an unmeasured share".
func pctText(p float64) string {
	if math.IsNaN(p) {
		return "an unmeasured share"
	}
	return fmt.Sprintf("%.0f%%", p)
}

// Figures are the step's merged figures for its report: the p50, p99 and
// p99.9 (nil: not merged) of the latency from the due time, of the service
// time and of the sender lag, the requests that waited for a busy
// connection, and how busy the event loops were (NaN: not measured).
type Figures struct {
	Latency, Service, SenderLag [3]*float64
	LatePoolBusy                float64
	LoopsBusyPct                float64
}

// Quantiles are the Figures' three percentiles.
var Quantiles = []float64{0.5, 0.99, 0.999}

// Judging is how ReadStep judges a step: the SLO's percentile, the
// engine lag bound (LagBoundMs) and whether the client's CPUs were the
// server's too (summary.SharedCPUs: the local lab, the netns lab unpinned).
type Judging struct {
	Percentile, LagBoundMs float64
	SharedCPUs             bool
}

// ReadStep merges one step's connclient lowrate results (one file per
// client process, on every client host) into a Step: rates and counts
// summed, the latency at the SLO's percentile and the engine's own lag
// from the histograms merged bucket by bucket. Whether the step's limit was
// the client's, or its CPUs were taken by others (Disturbed), is
// decided by whose on the client's own evidence (j).
// Figures are read from the same files.
func ReadStep(files []string, j Judging) (Step, Figures, error) {
	percentile := j.Percentile
	st := Step{LatencyMs: math.NaN(), GrowthMsPerS: math.NaN()}
	fig := Figures{LoopsBusyPct: math.NaN()}
	var lat, svc, sent, lag []*connresult.HistDump
	var cpuS, loopS float64
	// Every process's schedule tenths and durations (one agreed schedule).
	var tenths []*connresult.Tenths
	durations := map[float64]bool{}
	cpusBusy, cpusOf := math.NaN(), ""
	// The client processes' own CPU shares added up per CPU list: the
	// processes of one machine pinned to the same CPUs (the netns lab's
	// client hosts) are one client there, not others to each other. (Two
	// real machines with the same list are added up too: then the step
	// leans to the client's side, as it was judged before.)
	ownOn, busyOn := map[string]float64{}, map[string]float64{}
	for _, f := range files {
		b, err := rundir.ReadFile(f)
		if err != nil {
			return st, fig, err
		}
		r, err := connresult.DecodeResult(f, b)
		if err != nil {
			return st, fig, err
		}
		l := r.Lowrate
		if l == nil {
			return st, fig, fmt.Errorf("%s: connclient mode is not lowrate", f)
		}
		st.OfferedRPS += float64(l.RPSTarget)
		// Achieved: the requests answered (within the drain) over the
		// schedule's duration. connclient's rps_achieved divides by the
		// time to the last answer, a schedule plus one latency: low by
		// that latency over the step (1 % for 20 ms in a 2 s step), which
		// would fail the 99 % rule on a server that kept up.
		if l.DurationS > 0 {
			st.AchievedRPS += float64(l.RequestsCompleted) / l.DurationS
		} else if l.RPSAchieved != nil {
			st.AchievedRPS += *l.RPSAchieved
		}
		st.Requests += float64(l.RequestsScheduled)
		st.Counted = true
		st.ConnsOpened += float64(l.ConnectionsEstablished)
		st.ConnsFailed += float64(l.ConnectionsFailed)
		st.Sent += float64(l.RequestsSent)
		for _, cause := range ClientCauses {
			st.ClientErrors += float64(l.Errors[cause])
		}
		// Answered: a whole response, 2xx or not (cause "status").
		st.Answered += float64(l.RequestsCompleted) + float64(l.Errors["status"])
		tenths = append(tenths, l.ScheduleTenths)
		durations[l.DurationS] = true
		// Failed: an error or a status other than 2xx. Requests never
		// answered (unsent) are the queue, seen in the achieved rate.
		st.Errors += float64(l.RequestsFailed)
		lat, svc, sent, lag = append(lat, l.LatencyHist), append(svc, l.ServiceLatencyHist), append(sent, l.SenderLagHist), append(lag, l.EngineLagHist)
		if l.RequestsLatePoolBusy != nil {
			fig.LatePoolBusy += float64(*l.RequestsLatePoolBusy)
		}
		if p := l.ClientCPUsBusyPct; p != nil && !(*p <= cpusBusy) {
			cpusBusy, cpusOf = *p, l.ClientCPUs
		}
		if p := l.ClientProcessCPUPct; p != nil && l.ClientCPUsBusyPct != nil {
			ownOn[l.ClientCPUs] += *p
			busyOn[l.ClientCPUs] = max(busyOn[l.ClientCPUs], *l.ClientCPUsBusyPct)
		}
		if l.EventLoopsCPUS != nil && l.EventLoops != nil && l.ElapsedS != nil {
			cpuS += *l.EventLoopsCPUS
			loopS += float64(*l.EventLoops) * *l.ElapsedS
		}
	}
	if v, ok, err := connresult.MergedQuantilesMs(lat, percentile/100); err != nil {
		return st, fig, err
	} else if ok && v[0] != nil {
		st.LatencyMs = *v[0]
	}
	for _, f := range []struct {
		ds  []*connresult.HistDump
		out *[3]*float64
	}{{lat, &fig.Latency}, {svc, &fig.Service}, {sent, &fig.SenderLag}} {
		if v, ok, err := connresult.MergedQuantilesMs(f.ds, Quantiles...); err != nil {
			return st, fig, err
		} else if ok {
			copy(f.out[:], v)
		}
	}
	if loopS > 0 {
		fig.LoopsBusyPct = 100 * cpuS / loopS
	}
	// In steady state when every process recorded its tenths of one
	// schedule: summed, they are the step's.
	if sum, ok := sumTenths(tenths); ok && len(durations) == 1 && fig.Latency[0] != nil {
		for d := range durations {
			st.SetSteady(sum, d, *fig.Latency[0], len(files))
		}
	}
	st.ClientCPUsBusyPct = cpusBusy
	// The evidence is that of the busiest CPU list's processes.
	own, others := math.NaN(), math.NaN()
	if _, ok := ownOn[cpusOf]; ok {
		own = ownOn[cpusOf]
		others = busyOn[cpusOf] - own
	}
	ev := clientEvidence{LoopsBusyPct: fig.LoopsBusyPct, OwnPct: own, CPUsBusyPct: cpusBusy, OthersPct: others,
		CPUs: cpusOf, LagP99Ms: math.NaN(), LagBoundMs: j.LagBoundMs, SharedCPUs: j.SharedCPUs}
	// (No engine lag from the goroutine engine, or from a result before
	// it: nothing merged, nothing judged on it.)
	if len(lag) > 0 && !slices.Contains(lag, nil) {
		h, err := connresult.MergeDumps(lag)
		if err != nil {
			return st, fig, err
		}
		ev.LagRequests = h.Count()
		if v := connresult.QuantileMs(h, 0.99); v != nil && h.Count() > 0 {
			ev.LagP99Ms = *v
		}
	}
	var why string
	st.ClientBound, st.Disturbed, why = whose(ev)
	if st.ClientBound {
		st.ClientWhy = why
	} else {
		st.DisturbedWhy = why
	}
	return st, fig, nil
}

// sumTenths adds ts up; ok false when there are none or one is missing
// (a result written before they existed).
func sumTenths(ts []*connresult.Tenths) (*connresult.Tenths, bool) {
	var sum connresult.Tenths
	for _, t := range ts {
		if t == nil {
			return nil, false
		}
		sum.Add(t)
	}
	return &sum, len(ts) > 0
}

// StepFiles is step name's results in run directory dir: raw/<label>/
// <name>.json of every client host's directory that has one (plain or
// gzipped: rundir.Open), in the order of the labels (the directory is
// listed, never globbed: a user's path is data). None is an error naming
// where they were looked for.
func StepFiles(dir, name string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(dir, "raw"))
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range ents {
		f := filepath.Join(dir, "raw", e.Name(), name+".json")
		if e.IsDir() && rundir.Exists(f) {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no raw/<client>/%s.json", dir, name)
	}
	return files, nil
}
