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

// Codes is the closed list of Phase 4's verdict codes (summary.json
// verdict.code, docs/verdicts.md): its Bound* constants; Word gives the
// words the reports print. A refused cell has no verdict.
var Codes = []string{BoundNoResult, BoundBacklog, BoundPorts, BoundRate, BoundLatency, BoundNone}

// rule is one verdict: it returns the verdict when it holds, else nil.
type rule func(c *summary.Cell, f *Figures) *summary.Verdict

// rules decide a cell's verdict in this order; the first that holds is
// it. A backlog cell is decided by the two backlog rules, every other
// (accept, churn) by the rules after them.
var rules = []rule{noResultRule, backlogRule, burstAbsorbedRule, portsRule, rateRule, latencyRule, sustainedRule}

// verdict says which wall a cell met, with the evidence, from its
// figures f; nil for a refused cell.
func verdict(c *summary.Cell, f *Figures) *summary.Verdict {
	if c.Status == "refused" {
		return nil
	}
	for _, r := range rules {
		if v := r(c, f); v != nil {
			return v
		}
	}
	return nil // unreachable: sustainedRule always holds
}

func coded(code, evidence string) *summary.Verdict {
	return &summary.Verdict{Code: code, Bound: Word(code), Evidence: evidence}
}

// noResultRule: connclient left no result.
func noResultRule(_ *summary.Cell, f *Figures) *summary.Verdict {
	if f.ConnectionsCompleted != nil {
		return nil
	}
	return coded(BoundNoResult, "no connclient result")
}

// backlogRule: a burst overflowed its listen backlog.
func backlogRule(c *summary.Cell, f *Figures) *summary.Verdict {
	if Kind(c) != "backlog" || !(intp(f.Counters["server"].ListenOverflows) > 0) {
		return nil
	}
	return coded(BoundBacklog, burstText(f))
}

// burstAbsorbedRule: the listen backlog absorbed the burst.
func burstAbsorbedRule(c *summary.Cell, f *Figures) *summary.Verdict {
	if Kind(c) != "backlog" {
		return nil
	}
	return coded(BoundNone, "the backlog absorbed the burst: "+burstText(f))
}

// portsRule: connects failed with EADDRNOTAVAIL, the client's ports ran out.
func portsRule(_ *summary.Cell, f *Figures) *summary.Verdict {
	if !(intp(f.ErrorsEAddrNotAvail) > 0) {
		return nil
	}
	return coded(BoundPorts, fmt.Sprintf("%s connects failed with EADDRNOTAVAIL (cannot assign requested address), the first due at %s s; client TIME_WAIT peak %s; %s",
		decimal.Format(f.ErrorsEAddrNotAvail, 0), decimal.Format(f.FirstEAddrNotAvailS, 2), decimal.Format(f.ClientTimeWaitPeak, 0), predText(f)))
}

// rateRule: errors at ErrorPctMax or more, or the achieved rate more than
// RateTolerance below the target.
func rateRule(_ *summary.Cell, f *Figures) *summary.Verdict {
	if !(intp(f.ErrorPct) >= ErrorPctMax || intp(f.RateAchievedRatio) < 1-RateTolerance) {
		return nil
	}
	return coded(BoundRate, rateText(f))
}

// latencyRule: an accept cell's p99 above its bound.
func latencyRule(_ *summary.Cell, f *Figures) *summary.Verdict {
	b := f.AcceptP99BoundMs
	if b == nil || !(intp(f.LatencyP99Ms) > *b) {
		return nil
	}
	return coded(BoundLatency, fmt.Sprintf("p99 above %s ms: %s", decimal.Format(b, 0), rateText(f)))
}

// sustainedRule: the rate was kept.
func sustainedRule(_ *summary.Cell, f *Figures) *summary.Verdict {
	return coded(BoundNone, "sustained: "+rateText(f))
}

// predText is what the settings predicted of the ports ("" when no
// prediction was recorded).
func predText(f *Figures) string {
	p := f.PredictedEAddrNotAvail
	switch {
	case p == nil:
		return ""
	case *p == 1:
		return fmt.Sprintf("predicted: the ports run out after %s s (%s ports free at the start, %s/s sustainable)",
			decimal.Format(f.PredictedExhaustS, 2), decimal.Format(f.Ports, 0), decimal.Format(f.PredictedSustainableRatePerS, 1))
	}
	return "predicted: no EADDRNOTAVAIL at this rate"
}

// rateText is the rate, errors, latency and CPU of an accept or churn
// cell, then the prediction.
func rateText(f *Figures) string {
	rate := fmt.Sprintf("%s of %s/s (%s), errors %s %%, p99 %s ms from the due time; server CPU %s %% of a core, client %s %%",
		decimal.Format(f.RateAchievedPerS, 1), decimal.Format(f.RateTargetPerS, 0), decimal.Pct(f.RateAchievedRatio),
		decimal.Format(f.ErrorPct, 2), decimal.Format(f.LatencyP99Ms, 2), decimal.Format(f.Procs["server"].CPUPct, 1), decimal.Format(f.Procs["client"].CPUPct, 1))
	if pred := predText(f); pred != "" {
		rate += "; " + pred
	}
	return rate
}

// burstText is a burst's backlog, overflows and how its connects fared.
func burstText(f *Figures) string {
	srv, cl := f.Counters["server"], f.Counters["client"]
	return fmt.Sprintf("backlog %s (server somaxconn %s), burst of %s connects: ListenOverflows %s, ListenDrops %s, SYN retransmits server %s / client %s; %s answered within 1 s, %s after 1-3 s, %s after 3-7 s, %s after 7 s or more; %s never came up; resets %s",
		decimal.Format(f.Backlog, 0), decimal.Format(f.ServerSomaxconn, 0), decimal.Format(f.ConnectionsTarget, 0),
		decimal.Format(srv.ListenOverflows, 0), decimal.Format(srv.ListenDrops, 0),
		decimal.Format(srv.SynRetrans, 0), decimal.Format(cl.SynRetrans, 0),
		decimal.Format(f.LatencyUnder1s, 0), decimal.Format(f.LatencyFrom1s, 0), decimal.Format(f.LatencyFrom3s, 0),
		decimal.Format(f.LatencyFrom7s, 0), decimal.Format(f.ConnectionsNeverUp, 0), decimal.Format(f.ErrorsEConnReset, 0))
}

// Sustained reports whether an accept or churn cell kept its rate within
// the phase's bounds.
func Sustained(c *summary.Cell) bool {
	return c.Verdict != nil && c.Verdict.Code == BoundNone && Kind(c) != "backlog"
}
