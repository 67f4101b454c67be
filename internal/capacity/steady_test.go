package capacity

import (
	"math"
	"sort"
	"testing"
	"time"

	"csbench/internal/connresult"
)

// ddc is a step against a D/D/c server (slots × hold: its true capacity
// is slots/hold): requests due at i/rps over duration, served first come
// first served, answers later than the drain after the schedule lost, as
// connclient's -drain does. steady judges it as ReadStep does a step with
// the schedule's tenths; else as before them (answers in the drain count).
func ddc(rps float64, duration, drain, hold time.Duration, slots int, steady bool) Step {
	n := int(rps * duration.Seconds())
	done := make([]time.Duration, n)
	rec := connresult.NewTenthsRecorder(duration)
	var lat []float64
	for i := range n {
		due := time.Duration(float64(i) / rps * float64(time.Second))
		start := due
		if i >= slots && done[i-slots] > start {
			start = done[i-slots]
		}
		done[i] = start + hold
		if done[i] > duration+drain {
			continue
		}
		rec.Record(due, done[i])
		lat = append(lat, float64(done[i]-due)/1e6)
	}
	sort.Float64s(lat)
	q := func(p float64) float64 { return lat[int(math.Ceil(p*float64(len(lat))))-1] }
	st := Step{OfferedRPS: rps, Requests: float64(n), LatencyMs: q(0.99), GrowthMsPerS: math.NaN(),
		AchievedRPS: float64(len(lat)) / duration.Seconds()}
	if steady {
		st.SetSteady(&rec.T, duration.Seconds(), q(0.5), 1)
	}
	return st
}

// The case: 25 slots × 10.71 ms (2,334 req/s), a 2 s step with a
// 1 s drain and a 200 ms SLO. At 108.4 % of the truth the step passed
// before the tenths (its queue's last waits stay under the SLO and the
// drain made up the rate); in steady state it fails.
func TestSteadyOverloadNoLongerPasses(t *testing.T) {
	s := search(2000)
	s.SLO.LatencyMs = 200
	hold := 10710 * time.Microsecond
	truth := 25 / hold.Seconds()
	old := ddc(1.084*truth, 2*time.Second, time.Second, hold, 25, false)
	if code, why := s.Judge(old); code != Pass {
		t.Fatalf("the model does not reproduce the fault: before the tenths the step was %s (%s), want pass", code, why)
	}
	st := ddc(1.084*truth, 2*time.Second, time.Second, hold, 25, true)
	if code, why := s.Judge(st); code == Pass {
		t.Errorf("108.4 %% of the truth passed in steady state: %s (%+v)", why, st)
	}
	// An 8 % overload grows the latency by 80 ms a second.
	st = ddc(1.08*truth, 2*time.Second, time.Second, hold, 25, true)
	if math.Abs(st.GrowthMsPerS-80) > 8 {
		t.Errorf("8 %% over: latency growth %.1f ms/s, want 80 ± 8", st.GrowthMsPerS)
	}
	if r := st.AchievedRPS / st.OfferedRPS; math.Abs(r-1/1.08) > 0.01 {
		t.Errorf("8 %% over: achieved %.3f of offered, want %.3f (the server's own rate)", r, 1/1.08)
	}
}

// Over step lengths, drains and SLOs: a rate the resolution or more above
// the truth never passes, one the resolution below it does (a server that
// keeps up shows no growth).
func TestSteadyTruthBracket(t *testing.T) {
	for _, tc := range []struct {
		slots int
		hold  time.Duration
		slo   float64
	}{{25, 10 * time.Millisecond, 200}, {40, 10 * time.Millisecond, 200}, {100, 20 * time.Millisecond, 50}, {4, 2 * time.Millisecond, 10}} {
		truth := float64(tc.slots) / tc.hold.Seconds()
		s := search(truth)
		s.SLO.LatencyMs = tc.slo
		for _, d := range []time.Duration{2 * time.Second, 5 * time.Second, 10 * time.Second} {
			for _, drain := range []time.Duration{0, time.Second, 10 * time.Second} {
				for _, over := range []float64{1.02, 1.05, 1.1, 1.5, 3} {
					st := ddc(over*truth, d, drain, tc.hold, tc.slots, true)
					if code, why := s.Judge(st); code == Pass {
						t.Errorf("%d × %v, SLO %g ms, step %v, drain %v: %.0f %% of the truth passed: %s", tc.slots, tc.hold, tc.slo, d, drain, 100*over, why)
					}
				}
				st := ddc(0.98*truth, d, drain, tc.hold, tc.slots, true)
				if code, why := s.Judge(st); code != Pass {
					t.Errorf("%d × %v, SLO %g ms, step %v, drain %v: 98 %% of the truth failed: %s (%s)", tc.slots, tc.hold, tc.slo, d, drain, code, why)
				}
				if math.Abs(st.GrowthMsPerS) > 0.5 {
					t.Errorf("%d × %v, step %v: a server that keeps up shows latency growth %.2f ms/s", tc.slots, tc.hold, d, st.GrowthMsPerS)
				}
			}
		}
	}
}

// The growth is robust to one slow tenth (a hiccup), and a latency that
// grows past the bound fails with queue even when the rate was kept.
func TestLatencyGrowth(t *testing.T) {
	var tt connresult.Tenths
	for k := range tt.DueOK {
		tt.DueOK[k], tt.DueLatencySumUs[k], tt.DoneOK[k] = 100, 100*2000, 100
	}
	tt.DueLatencySumUs[9] = 100 * 100000 // one tenth 100 ms slow
	if g := LatencyGrowth(&tt, 2); math.Abs(g) > 1e-9 {
		t.Errorf("one slow tenth: growth %v, want 0", g)
	}
	for k := range tt.DueOK {
		tt.DueLatencySumUs[k] = 100 * int64(2000+15000*(float64(k)+0.5)*0.2) // 15 ms/s
	}
	if g := LatencyGrowth(&tt, 2); math.Abs(g-15) > 1e-6 {
		t.Errorf("growth %v, want 15 ms/s", g)
	}
	s := search(500)
	s.SLO.LatencyMs = 200
	st := Step{OfferedRPS: 500, Requests: 1000, LatencyMs: 30}
	st.SetSteady(&tt, 2, 15, 1)
	if code, why := s.Judge(st); code != FailQueue {
		t.Errorf("15 ms/s of growth at a 2 %% resolution: %s (%s), want %s", code, why, FailQueue)
	}
	if LatencyGrowth(&connresult.Tenths{DueOK: [10]int64{1, 1}}, 2); !math.IsNaN(LatencyGrowth(&connresult.Tenths{DueOK: [10]int64{1, 1}}, 2)) {
		t.Error("two tenths answered: want NaN")
	}
	// The median latency past 90 % of the schedule leaves no window.
	if _, _, ok := SteadyRate(&tt, 2, 1900); ok {
		t.Error("p50 1.9 s of a 2 s schedule: want no window")
	}
	st.SetSteady(&tt, 2, 1900, 1)
	if code, _ := s.Judge(st); code != FailRate {
		t.Errorf("no window: %s, want %s", code, FailRate)
	}
}

// Tenths merge by adding: two processes' halves of one schedule are the
// whole one's.
func TestTenthsMerge(t *testing.T) {
	whole, a, b := connresult.NewTenthsRecorder(time.Second), connresult.NewTenthsRecorder(time.Second), connresult.NewTenthsRecorder(time.Second)
	for i := range 1000 {
		due := time.Duration(i) * time.Millisecond
		done := due + time.Duration(i%37)*time.Millisecond
		whole.Record(due, done)
		if i%2 == 0 {
			a.Record(due, done)
		} else {
			b.Record(due, done)
		}
	}
	a.T.Add(&b.T)
	if a.T != whole.T || whole.T.Completed() != 1000 {
		t.Errorf("merged %+v, want %+v (1000 answers)", a.T, whole.T)
	}
}
