package trust

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"csbench/internal/chart"
	"csbench/internal/decimal"
	"csbench/internal/hostdata"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// DefaultUnsteadyCV is UNSTEADY_CV's default, in percent.
const DefaultUnsteadyCV = 10

// MinSteadySamples is the fewest per-second samples a cell is judged on.
const MinSteadySamples = 4

// TrendT is the |t| of the fitted slope from which a trend is significant.
const TrendT = 3.0

// CVThreshold reads UNSTEADY_CV from the run's settings (percent); a run
// from before the setting gets the default.
func CVThreshold(r *rundir.Run) float64 {
	if v, err := strconv.ParseFloat(r.Settings["UNSTEADY_CV"], 64); err == nil && v > 0 {
		return v
	}
	return DefaultUnsteadyCV
}

// Sender is the host and interface whose transmit counter carries a cell's
// payload: the server's for HTTP and iperf3 -R, the client's for iperf3
// from the client.
type Sender struct{ Host, NIC string }

// Steady judges the per-second throughput of a cell on the sender's NIC
// (sar), skipping skipS seconds of warm-up inside the window, and sets
// t.Unsteady with its evidence. t may be nil (Disturb had nothing); the
// result is then a new Trust. It returns t unchanged when sar has no such
// interface (no steadiness known).
func Steady(t *summary.Trust, h *hostdata.Hosts, c rundir.Cell, snd Sender, skipS int, cvPct float64) *summary.Trust {
	sar := h.Sadf[snd.Host]
	if sar == nil || snd.NIC == "" {
		return t
	}
	w := hostdata.Window(c)
	// The load ran duration_s from the cell's start; the cell ends later
	// (counters are read after it). A sample stamped T was taken within
	// [T, T+1s) and covers the second before: it lies wholly in the load
	// when T <= start + duration - 1 s.
	if d, err := strconv.Atoi(c.Params["duration_s"]); err == nil && d > 0 {
		if to := c.Start.Add(time.Duration(d-1) * time.Second); to.Before(w.To) {
			w.To = to
		}
	}
	var xs []float64
	skipped := 0
	for _, s := range sar.Samples {
		if !w.Contains(s.Time) {
			continue
		}
		d, ok := s.Interface(snd.NIC)
		if !ok {
			continue
		}
		if skipped < skipS {
			skipped++
			continue
		}
		xs = append(xs, decimal.Round(d.TxKBPerS*8*1024/1e6, 2))
	}
	if len(xs) == 0 {
		return t
	}
	if t == nil {
		t = &summary.Trust{}
	}
	st := JudgeSeries(xs, cvPct)
	st.Source = fmt.Sprintf("sar: %s %s tx", snd.Host, snd.NIC)
	st.WarmupS = skipS
	t.Steadiness = st
	t.Unsteady = st.Cause != ""
	return t
}

// JudgeSeries computes the spread and trend of a per-second series.
func JudgeSeries(xs []float64, cvPct float64) *summary.Steadiness {
	st := &summary.Steadiness{Mbps: xs, CVThreshold: cvPct}
	n := float64(len(xs))
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= n
	st.MeanMbps = decimal.Round(mean, 2)
	if len(xs) < MinSteadySamples || mean <= 0 {
		st.Reason = fmt.Sprintf("not judged: %d s of samples (at least %d needed) at %.1f Mbit/s mean", len(xs), MinSteadySamples, mean)
		return st
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	st.CVPct = decimal.Round(sd/mean*100, 1)
	// Least squares of x against the second 0..n-1, and the t statistic of
	// its slope (residual standard error over sqrt(Sxx)).
	xm := (n - 1) / 2
	sxx, sxy := 0.0, 0.0
	for i, x := range xs {
		sxx += (float64(i) - xm) * (float64(i) - xm)
		sxy += (float64(i) - xm) * (x - mean)
	}
	b := sxy / sxx
	res := 0.0
	for i, x := range xs {
		e := x - (mean + b*(float64(i)-xm))
		res += e * e
	}
	se := math.Sqrt(res/(n-2)) / math.Sqrt(sxx)
	tstat := math.Inf(1)
	if se > 0 {
		tstat = math.Abs(b) / se
	} else if b == 0 {
		tstat = 0
	}
	st.SlopePctPerS = decimal.Round(b/mean*100, 2)
	st.TrendT = decimal.Round(math.Min(tstat, 999), 1)
	st.Judged = true
	change := math.Abs(b) * (n - 1) / mean * 100
	switch {
	case tstat >= TrendT && change >= cvPct/2:
		st.Cause = "trend"
		dir := "up"
		if b < 0 {
			dir = "down"
		}
		st.Reason = fmt.Sprintf("per-second throughput trended %s %.1f %% a second over %d s (%.0f %% in all, t = %.1f; CV %.1f %%)", dir, math.Abs(st.SlopePctPerS), len(xs), change, tstat, st.CVPct)
	case st.CVPct > cvPct:
		st.Cause = "variation"
		st.Reason = fmt.Sprintf("per-second throughput varied %.1f %% (coefficient of variation) over %d s, above %.0f %%", st.CVPct, len(xs), cvPct)
	}
	return st
}

// Chart is one chart of a phase's cells' per-second throughput, a line
// per cell (x: seconds into the measured window), or nil when no cell has
// a timeline.
func Chart(cells []summary.Cell) *chart.Chart {
	ch := &chart.Chart{Name: "timeline", Title: "Throughput per second of each cell (sar, sender's NIC, after warm-up)",
		XLabel: "second of the cell", YLabel: "Mbit/s", HLine: math.NaN()}
	for _, c := range cells {
		if c.Trust == nil || c.Trust.Steadiness == nil {
			continue
		}
		st := c.Trust.Steadiness
		sr := chart.Series{Title: c.Name + Marks(&c)}
		for i, y := range st.Mbps {
			sr.Points = append(sr.Points, chart.Point{X: float64(st.WarmupS + i + 1), Y: y})
		}
		ch.Series = append(ch.Series, sr)
		if len(st.ToolMbps) > 0 {
			tr := chart.Series{Title: c.Name + " (tool)"}
			for i, y := range st.ToolMbps {
				tr.Points = append(tr.Points, chart.Point{X: float64(st.WarmupS + i + 1), Y: y})
			}
			ch.Series = append(ch.Series, tr)
		}
	}
	if len(ch.Series) == 0 {
		return nil
	}
	return ch
}
