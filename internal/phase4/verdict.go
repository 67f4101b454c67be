package phase4

import (
	"fmt"

	"csbench/internal/decimal"
	"csbench/internal/summary"
)

// RateTolerance is how far below its target a churn cell's achieved rate
// (completed over the schedule, stretched by the last connection's latency)
// may stay while the cell still counts as keeping its rate.
const RateTolerance = 0.05

// verdict says which wall a cell met, with the evidence, from its
// figures f.
func verdict(c *summary.Cell, f *Figures) *summary.Verdict {
	if c.Status == "refused" {
		return nil
	}
	if f.ConnectionsCompleted == nil {
		return &summary.Verdict{Bound: BoundNoResult, Evidence: "no connclient result"}
	}
	if Kind(c) == "backlog" {
		return backlogVerdict(f)
	}
	pred := ""
	if p := f.PredictedEAddrNotAvail; p != nil {
		if *p == 1 {
			pred = fmt.Sprintf("predicted: the ports run out after %s s (%s ports free at the start, %s/s sustainable)",
				decimal.Format(f.PredictedExhaustS, 2), decimal.Format(f.Ports, 0), decimal.Format(f.PredictedSustainableRatePerS, 1))
		} else {
			pred = "predicted: no EADDRNOTAVAIL at this rate"
		}
	}
	if e := intp(f.ErrorsEAddrNotAvail); e > 0 {
		return &summary.Verdict{Bound: BoundPorts, Evidence: fmt.Sprintf("%s connects failed with EADDRNOTAVAIL (cannot assign requested address), the first due at %s s; client TIME_WAIT peak %s; %s",
			decimal.Format(f.ErrorsEAddrNotAvail, 0), decimal.Format(f.FirstEAddrNotAvailS, 2), decimal.Format(f.ClientTimeWaitPeak, 0), pred)}
	}
	rate := fmt.Sprintf("%s of %s/s (%s), errors %s %%, p99 %s ms from the due time; server CPU %s %% of a core, client %s %%",
		decimal.Format(f.RateAchievedPerS, 1), decimal.Format(f.RateTargetPerS, 0), decimal.Pct(f.RateAchievedRatio),
		decimal.Format(f.ErrorPct, 2), decimal.Format(f.LatencyP99Ms, 2), decimal.Format(f.Procs["server"].CPUPct, 1), decimal.Format(f.Procs["client"].CPUPct, 1))
	if pred != "" {
		rate += "; " + pred
	}
	if intp(f.ErrorPct) >= ErrorPctMax || intp(f.RateAchievedRatio) < 1-RateTolerance {
		return &summary.Verdict{Bound: BoundRate, Evidence: rate}
	}
	if b := f.AcceptP99BoundMs; b != nil && intp(f.LatencyP99Ms) > *b {
		return &summary.Verdict{Bound: BoundLatency, Evidence: fmt.Sprintf("p99 above %s ms: %s", decimal.Format(b, 0), rate)}
	}
	return &summary.Verdict{Bound: BoundNone, Evidence: "sustained: " + rate}
}

// backlogVerdict says whether a burst overflowed its listen backlog.
func backlogVerdict(f *Figures) *summary.Verdict {
	srv, cl := f.Counters["server"], f.Counters["client"]
	ev := fmt.Sprintf("backlog %s (server somaxconn %s), burst of %s connects: ListenOverflows %s, ListenDrops %s, SYN retransmits server %s / client %s; %s answered within 1 s, %s after 1-3 s, %s after 3-7 s, %s after 7 s or more; %s never came up; resets %s",
		decimal.Format(f.Backlog, 0), decimal.Format(f.ServerSomaxconn, 0), decimal.Format(f.ConnectionsTarget, 0),
		decimal.Format(srv.ListenOverflows, 0), decimal.Format(srv.ListenDrops, 0),
		decimal.Format(srv.SynRetrans, 0), decimal.Format(cl.SynRetrans, 0),
		decimal.Format(f.LatencyUnder1s, 0), decimal.Format(f.LatencyFrom1s, 0), decimal.Format(f.LatencyFrom3s, 0),
		decimal.Format(f.LatencyFrom7s, 0), decimal.Format(f.ConnectionsNeverUp, 0), decimal.Format(f.ErrorsEConnReset, 0))
	if intp(srv.ListenOverflows) > 0 {
		return &summary.Verdict{Bound: BoundBacklog, Evidence: ev}
	}
	return &summary.Verdict{Bound: BoundNone, Evidence: "the backlog absorbed the burst: " + ev}
}

// Sustained reports whether an accept or churn cell kept its rate within
// the phase's bounds.
func Sustained(c *summary.Cell) bool {
	return c.Verdict != nil && c.Verdict.Bound == BoundNone && Kind(c) != "backlog"
}
