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

// verdict says which wall a cell met, with the evidence.
func verdict(c *summary.Cell) *summary.Verdict {
	m := c.Metrics
	if c.Status == "refused" {
		return nil
	}
	if m["connections_completed"] == nil {
		return &summary.Verdict{Bound: BoundNoResult, Evidence: "no connclient result"}
	}
	if Kind(c) == "backlog" {
		ov := intp(m["server_listen_overflows"])
		ev := fmt.Sprintf("backlog %s (server somaxconn %s), burst of %s connects: ListenOverflows %s, ListenDrops %s, SYN retransmits server %s / client %s; %s answered within 1 s, %s after 1-3 s, %s after 3-7 s, %s after 7 s or more; %s never came up; resets %s",
			decimal.Format(m["backlog"], 0), decimal.Format(m["server_somaxconn"], 0), decimal.Format(m["connections_target"], 0),
			decimal.Format(m["server_listen_overflows"], 0), decimal.Format(m["server_listen_drops"], 0),
			decimal.Format(m["server_syn_retrans"], 0), decimal.Format(m["client_syn_retrans"], 0),
			decimal.Format(m["latency_under_1s"], 0), decimal.Format(m["latency_1s_to_3s"], 0), decimal.Format(m["latency_3s_to_7s"], 0),
			decimal.Format(m["latency_7s_and_more"], 0), decimal.Format(m["connections_never_up"], 0), decimal.Format(m["errors_econnreset"], 0))
		if ov > 0 {
			return &summary.Verdict{Bound: BoundBacklog, Evidence: ev}
		}
		return &summary.Verdict{Bound: BoundNone, Evidence: "the backlog absorbed the burst: " + ev}
	}
	pred := ""
	if m["predicted_eaddrnotavail"] != nil {
		if *m["predicted_eaddrnotavail"] == 1 {
			pred = fmt.Sprintf("predicted: the ports run out after %s s (%s ports free at the start, %s/s sustainable)",
				decimal.Format(m["predicted_exhaust_s"], 2), decimal.Format(m["ports"], 0), decimal.Format(m["predicted_sustainable_rate_per_s"], 1))
		} else {
			pred = "predicted: no EADDRNOTAVAIL at this rate"
		}
	}
	if e := intp(m["errors_eaddrnotavail"]); e > 0 {
		return &summary.Verdict{Bound: BoundPorts, Evidence: fmt.Sprintf("%s connects failed with EADDRNOTAVAIL (cannot assign requested address), the first due at %s s; client TIME_WAIT peak %s; %s",
			decimal.Format(m["errors_eaddrnotavail"], 0), decimal.Format(m["first_eaddrnotavail_s"], 2), decimal.Format(m["client_time_wait_peak"], 0), pred)}
	}
	rate := fmt.Sprintf("%s of %s/s (%s), errors %s %%, p99 %s ms from the due time; server CPU %s %% of a core, client %s %%",
		decimal.Format(m["rate_achieved_per_s"], 1), decimal.Format(m["rate_target_per_s"], 0), decimal.Pct(m["rate_achieved_ratio"]),
		decimal.Format(m["error_pct"], 2), decimal.Format(m["latency_p99_ms"], 2), decimal.Format(m["server_proc_cpu_pct"], 1), decimal.Format(m["client_proc_cpu_pct"], 1))
	if pred != "" {
		rate += "; " + pred
	}
	if intp(m["error_pct"]) >= ErrorPctMax || intp(m["rate_achieved_ratio"]) < 1-RateTolerance {
		return &summary.Verdict{Bound: BoundRate, Evidence: rate}
	}
	if b := m["accept_p99_bound_ms"]; b != nil && intp(m["latency_p99_ms"]) > *b {
		return &summary.Verdict{Bound: BoundLatency, Evidence: fmt.Sprintf("p99 above %s ms: %s", decimal.Format(b, 0), rate)}
	}
	return &summary.Verdict{Bound: BoundNone, Evidence: "sustained: " + rate}
}

// Sustained reports whether an accept or churn cell kept its rate within
// the phase's bounds.
func Sustained(c *summary.Cell) bool {
	return c.Verdict != nil && c.Verdict.Bound == BoundNone && Kind(c) != "backlog"
}
