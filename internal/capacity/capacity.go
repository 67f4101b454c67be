// Package capacity is Phase 5's search: the highest offered rate at which
// a server keeps its SLO (a percentile of the latency from the due time
// within a bound, few errors, the rate delivered), found step by step with
// an open-model client (connclient lowrate).
//
// The search is a pure function of the steps measured so far: Next reads
// them and says what to do, one more step at a rate or done, with the
// capacity, its bracket and what bounded it. The runner runs the step it
// is given and asks again. Rules:
//
//   - A step passes when its errors are at most ErrorsPct % of its
//     requests, the latency at Percentile is at most LatencyMs, achieved ≥
//     AchievedMin × offered, and (steady.go) achieved is the rate the server
//     delivered while the schedule ran and the latency from the due time
//     did not grow faster than QueueGrowthMaxMsPerS: a rate the server
//     cannot sustain never passes, whatever the step's length, its drain
//     or the SLO. (Steps recorded before connclient cut its schedule into
//     tenths are judged on achieved alone, answers in the drain included.)
//     A client-bound step (the client's CPU or sender
//     lag, not the server, limited it) neither passes nor fails: it ends
//     the search, naming the client's ceiling, since a rate the client
//     could not offer says nothing of the server. Only a step that broke
//     the SLO is judged so: one that kept it was offered well enough (a
//     lag hiccup of a shared machine does not end a search).
//   - Up: from StartRPS, each passing step multiplies the rate by Growth
//     until one fails. Down: a first step that fails divides it by Growth
//     until one passes (below MinRPS the SLO is never met).
//   - Then bisection between the highest passing rate (lo) and the lowest
//     failing rate above it (hi) until hi − lo ≤ ResolutionPct % of lo; the
//     capacity is lo, the bracket lo–hi.
//   - A disturbed step (the trust rules) is repeated once at its rate; the
//     repetition replaces it, disturbed or not.
//   - With Repeat > 1, once the bracket is within the resolution, the steps
//     at its two rates are run again until each rate has Repeat steps: a
//     rate passes only when every one of its steps passed, so a boundary
//     that a noisy machine moved is found again (the bisection goes on from
//     the new bracket).
//   - MaxSteps bounds the search, and MaxSeconds its steps' time: when
//     one more step (as long as the mean so far) would pass it, the search
//     ends with what is known, the bound named.
package capacity

import (
	"fmt"
	"math"
)

// SchemaVersion of the decision's KEY=VALUE lines and of Step documents.
const SchemaVersion = 1

// SLOLatencyMinMs and SLOLatencyMaxMs bound an SLO's latency to what a
// service could have: 0.1 ms to 60 s (a bound of 1e9 ms would pass any
// step, and the client-lag bound that scales with it would too).
const (
	SLOLatencyMinMs = 0.1
	SLOLatencyMaxMs = 60000.0
)

// SLO is the objective a step must keep.
type SLO struct {
	Percentile  float64 // e.g. 99 (p99) of the latency from the due time
	LatencyMs   float64 // bound of that percentile
	ErrorsPct   float64 // errors as a share of the requests, in %
	AchievedMin float64 // achieved/offered at least this (0.99)
}

// Search is the search's settings.
type Search struct {
	SLO           SLO
	StartRPS      float64
	MinRPS        float64 // below it the search gives up going down (default 1)
	Growth        float64 // factor per coarse step (default 2)
	ResolutionPct float64 // bisection ends when hi − lo ≤ this % of lo
	MaxSteps      int
	MaxSeconds    float64 // the steps' wall time at most (0: no bound)
	Repeat        int     // steps at each of the bracket's two rates at the end (default 1)
}

// Step is one measured step.
type Step struct {
	OfferedRPS float64
	// AchievedRPS is the rate delivered: with Steady, the answers received
	// over WindowS (SteadyRate), else those within the drain over the
	// schedule's duration. AchievedSlackRPS is one answer per client
	// process over the window, a schedule's rounding at its ends.
	AchievedRPS      float64
	AchievedSlackRPS float64
	// Steady: the step's schedule tenths were read (every client
	// process's); WindowS is then the steady rate's window (0: the median
	// latency left none) and GrowthMsPerS the latency's growth over the
	// schedule (LatencyGrowth; NaN: too few tenths answered).
	Steady       bool
	WindowS      float64
	GrowthMsPerS float64
	Requests     float64 // requests scheduled
	Errors       float64 // failed requests: an error, or a status other than 2xx
	// Counted: the client's counts below were read (ReadStep); a step
	// with none opened, sent or answered is the server's failure.
	Counted                     bool
	ConnsOpened, Sent, Answered float64
	ConnsFailed                 float64
	// ClientErrors counts the failures that were the client's own (no
	// free port or address, no file descriptor: ClientCauses), which
	// never make a step the server's failure.
	ClientErrors float64
	LatencyMs    float64 // at the SLO's percentile, from the due time; NaN unreadable
	ClientBound  bool
	ClientWhy    string // why it is client-bound (a sentence)
	// ClientCPUsBusyPct: how busy the client's CPUs were (the busiest
	// process's), NaN unknown.
	ClientCPUsBusyPct float64
	// Disturbed: the step is to be repeated, not trusted alone: its trust
	// marks say so (the runner's -disturbed), or the client's CPUs were
	// taken by others' work (ReadStep: DisturbedWhy says how).
	Disturbed    bool
	DisturbedWhy string
	Seconds      float64 // the step's wall time, set up to end (0: unknown)
}

// Outcome codes of one step.
const (
	Pass        = "pass"
	FailLatency = "latency"
	FailErrors  = "errors"
	FailRate    = "achieved"
	FailQueue   = "queue"
	FailNoData  = "unreadable"
	ClientBound = "client_bound"
	// The server under test failed: they end the search, whatever the
	// step's other figures, and make the run not ok (a summary fault).
	ServerFailed = "server_failed" // no connection opened, no request sent, or none answered
	ServerErrors = "server_errors" // errors above the SLO's share while the rest of the SLO held
)

// Judge is one step's outcome code and a sentence saying why.
func (s Search) Judge(st Step) (code, why string) {
	if why := serverFailed(st); why != "" {
		return ServerFailed, why
	}
	code, why = s.judgeSLO(st)
	if code == FailErrors {
		// Errors while the rest of the SLO held are the server's own
		// failures (a server shedding load under overload keeps errors,
		// and the search goes on below them).
		rest := st
		rest.Errors = 0
		if c, _ := s.judgeSLO(rest); c == Pass {
			return ServerErrors, "the server failed requests it had the capacity for: " + why
		}
	}
	if code != Pass && st.ClientBound {
		return ClientBound, "client-bound: " + st.ClientWhy + " (" + why + ")"
	}
	if code != Pass && st.DisturbedWhy != "" {
		why += "; the client was disturbed, not the limit: " + st.DisturbedWhy
	}
	return code, why
}

// ClientCauses are connclient's error causes that are the client host's
// limits, not the server's doing.
var ClientCauses = []string{"eaddrnotavail", "eaddrinuse", "emfile", "enfile"}

// serverFailed is why a counted step shows a server that failed outright,
// "" when it did not (or when the client's own limits failed it).
func serverFailed(st Step) string {
	switch {
	case !st.Counted || st.Requests <= 0 || st.ClientErrors > 0:
		return ""
	case st.ConnsOpened == 0:
		return fmt.Sprintf("no connection opened (%.0f failed)", st.ConnsFailed)
	case st.Sent == 0:
		return "no request was sent"
	case st.Answered == 0:
		return fmt.Sprintf("no request was answered (%.0f sent, %.0f failed)", st.Sent, st.Errors)
	}
	return ""
}

// judgeSLO is the step against the SLO alone.
func (s Search) judgeSLO(st Step) (code, why string) {
	slo := s.SLO
	switch {
	case math.IsNaN(st.LatencyMs) || st.Requests <= 0:
		return FailNoData, "no latency could be read"
	case st.Errors > slo.ErrorsPct/100*st.Requests:
		return FailErrors, fmt.Sprintf("errors %.3g%% > %.3g%%", 100*st.Errors/st.Requests, slo.ErrorsPct)
	case st.LatencyMs > slo.LatencyMs:
		return FailLatency, fmt.Sprintf("p%g %.2f ms > %g ms", slo.Percentile, st.LatencyMs, slo.LatencyMs)
	case st.Steady && st.WindowS <= 0:
		return FailRate, "the median latency left no tenth of the schedule to measure the rate over (a longer STEP would)"
	case st.AchievedRPS+st.AchievedSlackRPS < slo.AchievedMin*st.OfferedRPS:
		return FailRate, fmt.Sprintf("achieved %.0f of %.0f req/s (%.1f%% < %.0f%%)%s", st.AchievedRPS, st.OfferedRPS, 100*st.AchievedRPS/st.OfferedRPS, 100*slo.AchievedMin, overWindow(st))
	case st.Steady && st.GrowthMsPerS > s.QueueGrowthMaxMsPerS():
		return FailQueue, fmt.Sprintf("the latency from the due time grew %.1f ms/s over the schedule (> %.3g ms/s: a queue that grows)", st.GrowthMsPerS, s.QueueGrowthMaxMsPerS())
	}
	return Pass, fmt.Sprintf("p%g %.2f ms ≤ %g ms, achieved %.0f of %.0f req/s%s", slo.Percentile, st.LatencyMs, slo.LatencyMs, st.AchievedRPS, st.OfferedRPS, overWindow(st))
}

// overWindow says over which window a steady step's rate was measured.
func overWindow(st Step) string {
	if !st.Steady {
		return ""
	}
	return fmt.Sprintf(" over the schedule's last %.2g s", st.WindowS)
}

// Decision is what to do next.
type Decision struct {
	Done   bool
	RPS    int    // the next step's offered rate (not Done)
	Reason string // up | down | bisect | repeat_disturbed | repeat_boundary | first (not Done)
	// Done: the capacity (NaN when no step passed), its bracket (High NaN
	// when no step failed) and what ended the search.
	CapacityRPS, LowRPS, HighRPS float64
	Bound                        string // a step outcome code, client_bound, max_steps, max_time, never_met
	Says                         string // one sentence for the log and the report
}

// Next is the decision after steps (in the order they ran).
func (s Search) Next(steps []Step) Decision {
	if s.Growth <= 1 {
		s.Growth = 2
	}
	if s.MinRPS <= 0 {
		s.MinRPS = 1
	}
	if len(steps) == 0 {
		return Decision{RPS: roundRate(s.StartRPS), Reason: "first"}
	}
	last := steps[len(steps)-1]
	code, why := s.Judge(last)
	switch code {
	case ClientBound:
		lo, hi := s.Bracket(steps)
		return done(lo, hi, ClientBound, fmt.Sprintf("the client's ceiling (%.0f req/s achieved at %.0f offered) is below the server's capacity: %s", last.AchievedRPS, last.OfferedRPS, why))
	case ServerFailed, ServerErrors:
		lo, hi := s.Bracket(steps)
		return done(lo, hi, code, fmt.Sprintf("the server under test failed at %.0f req/s: %s", last.OfferedRPS, why))
	}
	if last.Disturbed && !(len(steps) >= 2 && steps[len(steps)-2].OfferedRPS == last.OfferedRPS) {
		if len(steps) < s.MaxSteps {
			return Decision{RPS: roundRate(last.OfferedRPS), Reason: "repeat_disturbed"}
		}
	}
	lo, hi := s.Bracket(steps)
	bound := ""
	if !math.IsNaN(hi) {
		bound = s.failAt(steps, hi)
	}
	var next Decision
	switch {
	case math.IsNaN(lo) && math.IsNaN(hi):
		next = Decision{RPS: roundRate(s.StartRPS), Reason: "first"}
	case math.IsNaN(hi):
		next = Decision{RPS: roundRate(lo * s.Growth), Reason: "up"}
	case math.IsNaN(lo):
		r := hi / s.Growth
		if r < s.MinRPS {
			return done(lo, hi, "never_met", fmt.Sprintf("the SLO was not met even at %.0f req/s (%s)", hi, bound))
		}
		next = Decision{RPS: roundRate(r), Reason: "down"}
	case hi-lo <= s.ResolutionPct/100*lo || roundRate((lo+hi)/2) <= roundRate(lo) || roundRate((lo+hi)/2) >= roundRate(hi):
		if r, ok := s.repeatAt(steps, lo, hi); ok {
			next = Decision{RPS: roundRate(r), Reason: "repeat_boundary"}
			break
		}
		return done(lo, hi, bound, fmt.Sprintf("capacity %.0f req/s (bracket %.0f–%.0f, within %g%%): the next rate up failed on %s", lo, lo, hi, s.ResolutionPct, bound))
	default:
		next = Decision{RPS: roundRate((lo + hi) / 2), Reason: "bisect"}
	}
	if spent, n := stepSeconds(steps); s.MaxSeconds > 0 && n > 0 && spent+spent/float64(n) > s.MaxSeconds {
		return done(lo, hi, "max_time", fmt.Sprintf("SEARCH_MAX_S=%g: the %d steps took %.0f s, and one more would pass it", s.MaxSeconds, len(steps), spent))
	}
	if len(steps) >= s.MaxSteps {
		if next.Reason == "repeat_boundary" {
			return done(lo, hi, "max_steps", fmt.Sprintf("SEARCH_MAX_STEPS=%d reached before the bracket's rates had REPEAT=%d steps each", s.MaxSteps, s.Repeat))
		}
		return done(lo, hi, "max_steps", fmt.Sprintf("SEARCH_MAX_STEPS=%d reached before the bracket was within %g%%", s.MaxSteps, s.ResolutionPct))
	}
	return next
}

// Bracket is the highest passing rate and the lowest failing rate above it
// (NaN for none). A rate passes when every step at it passed; a disturbed
// step followed by another at its rate is replaced by it.
func (s Search) Bracket(steps []Step) (lo, hi float64) {
	at := map[float64]string{}
	for _, st := range s.kept(steps) {
		if c, _ := s.Judge(st); c != ClientBound {
			if prev, seen := at[st.OfferedRPS]; !seen || prev == Pass {
				at[st.OfferedRPS] = c
			}
		}
	}
	lo, hi = math.NaN(), math.NaN()
	for r, c := range at {
		if c == Pass && (math.IsNaN(lo) || r > lo) {
			lo = r
		}
	}
	for r, c := range at {
		if c != Pass && (math.IsNaN(lo) || r > lo) && (math.IsNaN(hi) || r < hi) {
			hi = r
		}
	}
	return lo, hi
}

// kept is steps without the disturbed ones that a later step at their rate
// replaces, in order.
func (s Search) kept(steps []Step) []Step {
	var out []Step
	for i, st := range steps {
		replaced := false
		for _, later := range steps[i+1:] {
			replaced = replaced || later.OfferedRPS == st.OfferedRPS
		}
		if !(st.Disturbed && replaced) {
			out = append(out, st)
		}
	}
	return out
}

// repeatAt is the rate of the bracket (lo first, then hi) with fewer than
// Repeat kept steps, if any.
func (s Search) repeatAt(steps []Step, lo, hi float64) (float64, bool) {
	n := map[float64]int{}
	for _, st := range s.kept(steps) {
		if c, _ := s.Judge(st); c != ClientBound {
			n[st.OfferedRPS]++
		}
	}
	for _, r := range []float64{lo, hi} {
		if n[r] < s.Repeat {
			return r, true
		}
	}
	return 0, false
}

// failAt is the outcome code of a failing step at rate r (the first).
func (s Search) failAt(steps []Step, r float64) string {
	code := ""
	for _, st := range s.kept(steps) {
		if c, _ := s.Judge(st); st.OfferedRPS == r && (code == "" || code == Pass) {
			code = c
		}
	}
	return code
}

// stepSeconds is the steps' wall time and how many had one.
func stepSeconds(steps []Step) (float64, int) {
	sum, n := 0.0, 0
	for _, st := range steps {
		if st.Seconds > 0 {
			sum += st.Seconds
			n++
		}
	}
	return sum, n
}

func done(lo, hi float64, bound, text string) Decision {
	return Decision{Done: true, CapacityRPS: lo, LowRPS: lo, HighRPS: hi, Bound: bound, Says: text}
}

// roundRate is a rate as a whole number of requests per second, at least 1.
func roundRate(r float64) int { return max(1, int(math.Round(r))) }
