package capacity

import (
	"csbench/internal/rundir"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"csbench/internal/connresult"
)

// ClientCPUBusy: a client whose event loops were busy this share of their
// time (CPU seconds over elapsed × loops) bounded the step itself.
const ClientCPUBusy = 0.9

// LagBoundMs is the engine lag p99 above which a step is the client's:
// lagMaxMs, or half the SLO's latency bound when that is more. A client
// whose own lateness takes half the budget broke it; one a millisecond
// late did not: on a shared machine an overloaded server's or a full
// link's step sees the client's loops wake a little late too (1.0–1.6 ms
// measured here at 10 KB and 100 KB on the link, p99 0.2–4 s).
func LagBoundMs(lagMaxMs, sloLatencyMs float64) float64 { return math.Max(lagMaxMs, sloLatencyMs/2) }

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

// ReadStep merges one step's connclient lowrate results (one file per
// client process, on every client host) into a Step: rates and counts
// summed, the latency at the SLO's percentile and the engine's own lag
// from the histograms merged bucket by bucket. The step is client-bound
// when a client's CPUs were busy ClientCPUBusy of the schedule (by any
// task: a client given a small share of its CPUs), its loops were busy
// ClientCPUBusy of their time, or the engine's lag
// p99 exceeded lagBoundMs (LagBoundMs: the schedule, not the server, fell
// behind). Figures are read from the same files.
func ReadStep(files []string, percentile, lagBoundMs float64) (Step, Figures, error) {
	st := Step{LatencyMs: math.NaN(), GrowthMsPerS: math.NaN()}
	fig := Figures{LoopsBusyPct: math.NaN()}
	var lat, svc, sent, lag []*connresult.HistDump
	var cpuS, loopS float64
	// Every process's schedule tenths and durations (one agreed schedule).
	var tenths []*connresult.Tenths
	durations := map[float64]bool{}
	cpusBusy, cpusOf := math.NaN(), ""
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
	if cpusBusy >= 100*ClientCPUBusy {
		st.ClientBound, st.ClientWhy = true, fmt.Sprintf("its CPUs (%s) were %.0f%% busy (≥ %.0f%%): the client had no CPU to spare", cpusOf, cpusBusy, 100*ClientCPUBusy)
	} else if fig.LoopsBusyPct >= 100*ClientCPUBusy {
		st.ClientBound, st.ClientWhy = true, fmt.Sprintf("its event loops were busy %.0f%% of their time (≥ %.0f%%)", fig.LoopsBusyPct, 100*ClientCPUBusy)
	}
	if v, ok, err := connresult.MergedQuantilesMs(lag, 0.99); err != nil {
		return st, fig, err
	} else if ok && v[0] != nil && *v[0] > lagBoundMs && !st.ClientBound {
		st.ClientBound, st.ClientWhy = true, fmt.Sprintf("its sender lag p99 (idle connection found) was %.2f ms > %g ms", *v[0], lagBoundMs)
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
