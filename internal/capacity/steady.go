package capacity

import (
	"math"
	"sort"

	"csbench/internal/connresult"
)

// A step passes only in steady state: the server kept up while the
// schedule ran, not merely answered most of it by the end of the drain.
// An overload of ε (offered = (1 + ε) × what the server delivers) grows
// the queue by ε × the delivered rate each second, and so the latency from
// the due time of each later request by ε seconds per second; its totals
// can still look good: an 8 % overload over a 2 s step leaves a queue of
// ~390 requests whose last waits (~170 ms) stay under a 200 ms SLO, and
// answers in the drain made up the rate. Two tests, both from the
// schedule's tenths (connresult.Tenths):
//
//   - SteadyRate: the answers received from the first tenth that begins
//     after the median latency to the schedule's end, over that window.
//     A server that keeps up answers as fast as requests fall due once the
//     first answers are back; one that falls behind answers at its own
//     rate. Answers in the drain do not count.
//   - LatencyGrowth: the trend of each tenth's mean latency from the due
//     time, in ms per s of the schedule; a step whose latency grows faster
//     than Search.QueueGrowthMaxMsPerS fails with the code queue.

// SteadyRate is the rate of 2xx answers received from the first tenth of
// the schedule that begins at or after p50Ms to the schedule's end, and
// that window's seconds; ok false when no tenth is left (the median
// latency took 90 % of the schedule or more) or the tenths are unusable.
func SteadyRate(t *connresult.Tenths, durationS, p50Ms float64) (rps, windowS float64, ok bool) {
	if t == nil || !(durationS > 0) || math.IsNaN(p50Ms) {
		return 0, 0, false
	}
	slice := durationS / 10
	k0 := max(1, int(math.Ceil(p50Ms/1000/slice-1e-9)))
	if k0 >= 10 {
		return 0, 0, false
	}
	var n int64
	for k := k0; k < 10; k++ {
		n += t.DoneOK[k]
	}
	windowS = float64(10-k0) * slice
	return float64(n) / windowS, windowS, true
}

// LatencyGrowth is the trend of the mean latency from the due time of the
// requests due in each tenth against the tenth's middle, in ms per s: the
// Theil–Sen slope (the median of the slopes between every two tenths), so
// one tenth a hiccup slowed moves it little. NaN with fewer than three
// tenths answered.
func LatencyGrowth(t *connresult.Tenths, durationS float64) float64 {
	if t == nil || !(durationS > 0) {
		return math.NaN()
	}
	type pt struct{ x, y float64 }
	var pts []pt
	for k := range t.DueOK {
		if t.DueOK[k] > 0 {
			pts = append(pts, pt{(float64(k) + 0.5) * durationS / 10, float64(t.DueLatencySumUs[k]) / float64(t.DueOK[k]) / 1000})
		}
	}
	if len(pts) < 3 {
		return math.NaN()
	}
	var slopes []float64
	for i := range pts {
		for j := i + 1; j < len(pts); j++ {
			slopes = append(slopes, (pts[j].y-pts[i].y)/(pts[j].x-pts[i].x))
		}
	}
	sort.Float64s(slopes)
	n := len(slopes)
	if n%2 == 1 {
		return slopes[n/2]
	}
	return (slopes[n/2-1] + slopes[n/2]) / 2
}

// SetSteady makes st a step judged in steady state, from the schedule's
// tenths summed over procs client processes, its duration and the step's
// median latency from the due time.
func (st *Step) SetSteady(t *connresult.Tenths, durationS, p50Ms float64, procs int) {
	st.Steady = true
	st.AchievedRPS, st.WindowS, st.AchievedSlackRPS = 0, 0, 0
	if rps, w, ok := SteadyRate(t, durationS, p50Ms); ok {
		st.AchievedRPS, st.WindowS, st.AchievedSlackRPS = rps, w, float64(procs)/w
	}
	st.GrowthMsPerS = LatencyGrowth(t, durationS)
}

// QueueGrowthMaxMsPerS is the latency growth a passing step may show: that
// of an overload of half the search's resolution (ε = ResolutionPct/2 %
// grows the latency by ε s per s, so 10 ms/s at a 2 % resolution). A
// server that keeps up shows none but noise.
func (s Search) QueueGrowthMaxMsPerS() float64 { return s.ResolutionPct / 2 / 100 * 1000 }
