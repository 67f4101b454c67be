package capacity

import (
	"math"
	"strings"
	"testing"
)

func search(start float64) Search {
	return Search{SLO: SLO{Percentile: 99, LatencyMs: 10, ErrorsPct: 0.1, AchievedMin: 0.99},
		StartRPS: start, ResolutionPct: 2, MaxSteps: 20}
}

// server of capacity c: below it the p99 is 2 ms and every request is
// delivered; above, the queue grows: the rate is capped and the p99 large.
func server(c float64) func(r float64) Step {
	return func(r float64) Step {
		st := Step{OfferedRPS: r, AchievedRPS: r, Requests: r * 5, LatencyMs: 2}
		if r > c {
			st.AchievedRPS, st.LatencyMs = c, 500
		}
		return st
	}
}

// run drives the search against measure and returns its decision and steps.
func run(t *testing.T, s Search, measure func(float64) Step) (Decision, []Step) {
	t.Helper()
	var steps []Step
	for i := 0; i < 100; i++ {
		d := s.Next(steps)
		if d.Done {
			return d, steps
		}
		steps = append(steps, measure(float64(d.RPS)))
	}
	t.Fatal("the search did not end")
	return Decision{}, nil
}

// A server of known capacity is found within the resolution, from a start
// below it and above it.
func TestFindsKnownCapacity(t *testing.T) {
	for _, tc := range []struct{ c, start float64 }{{4000, 1000}, {4000, 30000}, {61500, 50000}, {4000, 4000}, {123, 7}} {
		d, steps := run(t, search(tc.start), server(tc.c))
		if (d.Bound != FailRate && d.Bound != FailLatency) || d.LowRPS > tc.c || d.HighRPS <= tc.c || (d.HighRPS-d.LowRPS) > 0.02*d.LowRPS+1 {
			t.Errorf("capacity %v from %v: %+v after %d steps", tc.c, tc.start, d, len(steps))
		}
		if len(steps) > 12 {
			t.Errorf("capacity %v from %v: %d steps", tc.c, tc.start, len(steps))
		}
	}
}

// The bound is the first SLO term that broke: latency before the rate is
// capped, or errors.
func TestBoundNamesTheBrokenTerm(t *testing.T) {
	lat := func(r float64) Step {
		st := Step{OfferedRPS: r, AchievedRPS: r, Requests: r * 5, LatencyMs: r / 100} // 10 ms at 1000/s
		return st
	}
	d, _ := run(t, search(100), lat)
	if d.Bound != FailLatency || d.LowRPS > 1000 || d.HighRPS <= 1000 || !strings.Contains(d.Says, "latency") {
		t.Errorf("latency-bound: %+v", d)
	}
	// A server shedding load: past 2000/s it answers the rest with errors
	// at once, and its 2xx rate stays 2000/s.
	errs := func(r float64) Step {
		st := Step{OfferedRPS: r, AchievedRPS: r, Requests: r * 5, LatencyMs: 1}
		if r > 2000 {
			st.AchievedRPS, st.Errors = 2000, (r-2000)*5
		}
		return st
	}
	d, _ = run(t, search(100), errs)
	if d.Bound != FailErrors || d.LowRPS > 2000 || d.HighRPS <= 2000 {
		t.Errorf("error-bound: %+v", d)
	}
}

// A server that fails: errors while the rest of the SLO held (it failed
// requests it had the capacity for), or no connection, request or answer
// at all, ends the search at once with its code, whatever else the step
// shows; counts never read (a step from before them) say nothing.
func TestServerFailureEndsTheSearch(t *testing.T) {
	s := search(200)
	for _, tc := range []struct {
		name string
		st   Step
		code string
		says string
	}{
		{"1 in 100 answered 500", Step{OfferedRPS: 200, AchievedRPS: 198, Requests: 400, Errors: 4, LatencyMs: 1, Counted: true, ConnsOpened: 32, Sent: 400, Answered: 400},
			ServerErrors, "failed requests it had the capacity for: errors 1% > 0.1%"},
		{"no connection", Step{OfferedRPS: 200, Requests: 400, LatencyMs: math.NaN(), Counted: true, ConnsFailed: 32},
			ServerFailed, "no connection opened (32 failed)"},
		{"none answered", Step{OfferedRPS: 200, Requests: 400, Errors: 18, LatencyMs: math.NaN(), Counted: true, ConnsOpened: 18, Sent: 18},
			ServerFailed, "no request was answered (18 sent, 18 failed)"},
		{"nothing sent", Step{OfferedRPS: 200, Requests: 400, LatencyMs: math.NaN(), Counted: true, ConnsOpened: 18},
			ServerFailed, "no request was sent"},
	} {
		steps := []Step{{OfferedRPS: 100, AchievedRPS: 100, Requests: 200, LatencyMs: 1}, tc.st}
		d := s.Next(steps)
		if !d.Done || d.Bound != tc.code || !strings.Contains(d.Says, tc.says) || !strings.Contains(d.Says, "the server under test failed at 200 req/s") {
			t.Errorf("%s: %+v, want done, bound %s saying %q", tc.name, d, tc.code, tc.says)
		}
	}
	if code, _ := s.Judge(Step{OfferedRPS: 200, Requests: 400, LatencyMs: math.NaN()}); code != FailNoData {
		t.Errorf("a step without counts: %s, want %s", code, FailNoData)
	}
	// No connection because the client ran out of file descriptors: not
	// the server's failure.
	if code, _ := s.Judge(Step{OfferedRPS: 200, Requests: 400, LatencyMs: math.NaN(), Counted: true, ConnsFailed: 32, ClientErrors: 32}); code != FailNoData {
		t.Errorf("the client's emfile: %s, want %s", code, FailNoData)
	}
}

// A client-bound step ends the search and is never the capacity.
func TestClientBoundEndsTheSearch(t *testing.T) {
	srv := server(100000)
	measure := func(r float64) Step {
		st := srv(r)
		if r > 5000 {
			st.AchievedRPS, st.ClientBound, st.ClientWhy = 5000, true, "client CPU 100% ≥ 90%"
		}
		return st
	}
	d, steps := run(t, search(1000), measure)
	if d.Bound != ClientBound || d.CapacityRPS != 4000 || !math.IsNaN(d.HighRPS) || !strings.Contains(d.Says, "the client's ceiling (5000 req/s achieved at 8000 offered) is below the server's capacity") {
		t.Errorf("client-bound: %+v after %d steps", d, len(steps))
	}
}

// A disturbed step is repeated once at its rate; the repetition counts.
func TestDisturbedRepeatedOnce(t *testing.T) {
	s := search(1000)
	steps := []Step{{OfferedRPS: 1000, AchievedRPS: 1000, Requests: 5000, LatencyMs: 1, Disturbed: true}}
	if d := s.Next(steps); d.Done || d.RPS != 1000 || d.Reason != "repeat_disturbed" {
		t.Errorf("after a disturbed step: %+v", d)
	}
	steps = append(steps, steps[0])
	if d := s.Next(steps); d.Done || d.RPS != 2000 || d.Reason != "up" {
		t.Errorf("after its disturbed repetition: %+v", d)
	}
}

// The step bound and a server that never meets the SLO end the search,
// named.
func TestSearchBounds(t *testing.T) {
	s := search(1000)
	s.MaxSteps = 3
	d, steps := run(t, s, server(50000))
	if d.Bound != "max_steps" || len(steps) != 3 || d.CapacityRPS != 4000 || !strings.Contains(d.Says, "SEARCH_MAX_STEPS=3") {
		t.Errorf("max steps: %+v after %d", d, len(steps))
	}
	never := func(r float64) Step { return Step{OfferedRPS: r, AchievedRPS: r, Requests: r * 5, LatencyMs: 50} }
	s = search(1000)
	s.MinRPS = 10
	d, _ = run(t, s, never)
	if d.Bound != "never_met" || !math.IsNaN(d.CapacityRPS) {
		t.Errorf("never met: %+v", d)
	}
	unreadable := func(r float64) Step { return Step{OfferedRPS: r, Requests: r, LatencyMs: math.NaN()} }
	if c, _ := search(1).Judge(unreadable(5)); c != FailNoData {
		t.Errorf("unreadable step judged %s", c)
	}
}

// With Repeat, the bracket's two rates are run again until each has Repeat
// steps; a repetition of the capacity that fails moves the bracket down
// and the bisection goes on.
func TestRepeatAtTheBoundary(t *testing.T) {
	s := search(1000)
	s.Repeat = 3
	d, steps := run(t, s, server(4000))
	n := map[float64]int{}
	for _, st := range steps {
		n[st.OfferedRPS]++
	}
	if d.Bound != FailLatency || n[d.LowRPS] != 3 || n[d.HighRPS] != 3 {
		t.Errorf("repeat 3: %+v, steps per rate %v", d, n)
	}
	// A server whose capacity drops from 4000 to 3800 after the bracket's
	// first steps: the repetition of 3969 fails and the search goes on.
	calls := 0
	srv := func(r float64) Step {
		calls++
		if calls > 9 {
			return server(3800)(r)
		}
		return server(4000)(r)
	}
	d, steps = run(t, s, srv)
	if d.LowRPS > 3800 || d.HighRPS <= 3800 || d.Bound != FailLatency {
		t.Errorf("a capacity that moved: %+v after %d steps", d, len(steps))
	}
	// A disturbed step's repetition replaces it: a failing disturbed step
	// does not make its rate fail.
	pass := Step{OfferedRPS: 1000, AchievedRPS: 1000, Requests: 5000, LatencyMs: 1}
	bad := pass
	bad.LatencyMs, bad.Disturbed = 50, true
	if lo, hi := s.Bracket([]Step{bad, pass}); lo != 1000 || !math.IsNaN(hi) {
		t.Errorf("disturbed then passing: lo %v hi %v", lo, hi)
	}
	if lo, hi := s.Bracket([]Step{pass, pass, func() Step { b := bad; b.Disturbed = false; return b }()}); !math.IsNaN(lo) || hi != 1000 {
		t.Errorf("pass, pass, fail: lo %v hi %v", lo, hi)
	}
}

// MaxSeconds ends a search before a step that would pass it.
func TestSearchTimeBound(t *testing.T) {
	s := search(1000)
	s.MaxSeconds = 20
	srv := server(50000)
	d, steps := run(t, s, func(r float64) Step { st := srv(r); st.Seconds = 6; return st })
	if d.Bound != "max_time" || len(steps) != 3 || d.CapacityRPS != 4000 || !strings.Contains(d.Says, "SEARCH_MAX_S=20") {
		t.Errorf("time bound: %+v after %d steps", d, len(steps))
	}
}
