package phase3

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"csbench/internal/decimal"
	"csbench/internal/summary"
)

// RampKeys are the figures of a cell's connect ramp from connclient's
// "ramp" object (its pacing, its retries, its first attempts beside the
// final outcome): counts summed over the processes, the paced rates
// summed (the cell's rate, all processes together, lay between the sum of
// their lowest and the sum of their highest), the first attempts' connect
// percentiles from their histograms merged. A run whose results carry a
// ramp has them on every cell, null where not measured (wrk, the active
// scenario, has no ramp); a run made before has none.
var RampKeys = []string{
	"connections_attempted",
	"connections_first_attempt_established", "connections_first_attempt_failed",
	"connections_first_attempt_connect_timeouts", "connections_first_attempt_response_timeouts",
	"connections_first_attempt_slow",
	"connections_retried", "connections_established_after_retry", "connections_retry_attempts",
	"connect_rate_paced_min_per_s", "connect_rate_paced_max_per_s",
	"connect_latency_first_attempt_p50_ms", "connect_latency_first_attempt_p99_ms", "connect_latency_first_attempt_max_ms",
}

// RatePacedSum says, in details connect_ramp.rate_paced_basis, how the
// paced rates of several processes combine.
const RatePacedSum = "sum_over_processes"

// rampSummary is what the processes' ramps say together besides the
// RampKeys figures (summary.json details "connect_ramp").
type rampSummary struct {
	Pace              string  `json:"pace"` // aimd, fixed (several: joined by ",")
	PaceCuts          int     `json:"pace_cuts"`
	ConnectSlowMs     float64 `json:"connect_slow_ms"`
	ConnectRetriesMax int     `json:"connect_retries_max"`
	RampMaxS          float64 `json:"ramp_max_s"`
	// BoundReached lists the processes (1-based) whose ramp stopped at
	// ramp_max_s with connections not attempted or retries not made.
	BoundReached       []int              `json:"bound_reached_processes"`
	ConnectsSlow       int64              `json:"connects_slow"`
	FirstAttemptErrors map[string]float64 `json:"first_attempt_errors"`
	RatePacedBasis     string             `json:"rate_paced_basis"`
	// FirstAttemptBasis: how the first attempts' connect percentiles were
	// obtained (a percentile basis).
	FirstAttemptBasis string `json:"first_attempt_percentile_basis"`
}

// rampOf is the cell's merged ramp, or nil (a run made before connclient
// recorded its ramp, or a scenario without one).
func rampOf(c *summary.Cell) *rampSummary {
	var r *rampSummary
	detail(c, "connect_ramp", &r)
	return r
}

// detail sets *dst to the cell's details[key]: the value Summarize put
// there, or, in a summary read back from summary.json, the same decoded.
func detail[T any](c *summary.Cell, key string, dst **T) {
	switch v := c.Details[key].(type) {
	case nil:
	case *T:
		*dst = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		var t T
		if json.Unmarshal(b, &t) == nil {
			*dst = &t
		}
	}
}

// rampFigures merges the processes' ramp objects into the cell's RampKeys
// metrics and details "connect_ramp". Nothing when no process carries a
// ramp; a note, and nothing, when only some do.
func rampFigures(clients []*Client, c *summary.Cell, note func(string, ...any)) {
	have := 0
	for _, cl := range clients {
		if cl.Ramp != nil {
			have++
		}
	}
	switch {
	case have == 0:
		return
	case have < len(clients):
		note("only %d of %d connclient results record their ramp: no first-attempt figures", have, len(clients))
		return
	}
	m := c.Metrics
	sum := func(get func(*Client) int64) *float64 { return count(clients, get) }
	m["connections_attempted"] = sum(func(cl *Client) int64 { return cl.ConnectionsAttempted })
	m["connections_first_attempt_established"] = sum(func(cl *Client) int64 { return cl.Ramp.FirstAttempt.Established })
	m["connections_first_attempt_failed"] = sum(func(cl *Client) int64 { return cl.Ramp.FirstAttempt.Failed })
	m["connections_first_attempt_connect_timeouts"] = sum(func(cl *Client) int64 { return cl.Ramp.FirstAttempt.ConnectTimeouts })
	m["connections_first_attempt_response_timeouts"] = sum(func(cl *Client) int64 { return cl.Ramp.FirstAttempt.ResponseTimeouts })
	m["connections_first_attempt_slow"] = sum(func(cl *Client) int64 { return cl.Ramp.FirstAttempt.ConnectsSlow })
	m["connections_retried"] = sum(func(cl *Client) int64 { return cl.Ramp.ConnectionsRetried })
	m["connections_established_after_retry"] = sum(func(cl *Client) int64 { return cl.Ramp.EstablishedAfterRetry })
	m["connections_retry_attempts"] = sum(func(cl *Client) int64 { return cl.Ramp.Retries })
	m["connect_rate_paced_min_per_s"] = rounded(sumOf(clients, func(cl *Client) *float64 { return summary.F(cl.Ramp.RatePacedMin) }), 1)
	m["connect_rate_paced_max_per_s"] = rounded(sumOf(clients, func(cl *Client) *float64 { return summary.F(cl.Ramp.RatePacedMax) }), 1)
	m["connect_latency_first_attempt_p50_ms"] = largest(clients, func(cl *Client) *float64 { return cl.Ramp.FirstAttempt.ConnectLatencyP50Ms })
	m["connect_latency_first_attempt_p99_ms"] = largest(clients, func(cl *Client) *float64 { return cl.Ramp.FirstAttempt.ConnectLatencyP99Ms })
	m["connect_latency_first_attempt_max_ms"] = largest(clients, func(cl *Client) *float64 { return cl.Ramp.FirstAttempt.ConnectLatencyMaxMs })
	basis := BasisOneProcess
	if len(clients) > 1 {
		basis = BasisMerged
	}
	ok, err := mergedPercentiles(clients, "first_connect", "connect_latency_first_attempt_", m, "p50_ms", "p99_ms", "max_ms")
	if err != nil {
		note("%v", err)
	}
	if !ok && len(clients) > 1 {
		basis = BasisLargest
	}
	rs := &rampSummary{FirstAttemptErrors: map[string]float64{}, BoundReached: []int{}, RatePacedBasis: RatePacedSum, FirstAttemptBasis: basis}
	paces := map[string]bool{}
	for i, cl := range clients {
		r := cl.Ramp
		paces[r.Pace] = true
		rs.PaceCuts += r.PaceCuts
		rs.ConnectsSlow += r.ConnectsSlow
		rs.ConnectSlowMs = max(rs.ConnectSlowMs, r.ConnectSlowMs)
		rs.ConnectRetriesMax = max(rs.ConnectRetriesMax, r.ConnectRetriesMax)
		rs.RampMaxS = max(rs.RampMaxS, r.RampMaxS)
		if r.BoundReached {
			rs.BoundReached = append(rs.BoundReached, i+1)
		}
		for k, v := range r.FirstAttempt.Errors {
			rs.FirstAttemptErrors[k] += float64(v)
		}
	}
	var ps []string
	for p := range paces {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	rs.Pace = strings.Join(ps, ",")
	c.Details["connect_ramp"] = rs
}

// fillRunKeys gives every cell each key of keys it lacks, null, when some
// cell of the run has one: the figures of newer results are in every cell
// of a run that has them, and in none of a run made before them.
func fillRunKeys(cells []summary.Cell, keys []string) {
	found := false
	for _, c := range cells {
		for _, k := range keys {
			if _, ok := c.Metrics[k]; ok {
				found = true
			}
		}
	}
	if !found {
		return
	}
	for _, c := range cells {
		for _, k := range keys {
			if _, ok := c.Metrics[k]; !ok {
				c.Metrics[k] = nil
			}
		}
	}
}

// backedOff says whether the ramp reached its count only by pacing down
// or retrying.
func backedOff(c *summary.Cell, r *rampSummary) bool {
	return r != nil && (val(c.Metrics, "connections_retried") > 0 || r.PaceCuts > 0)
}

// retryText is the ramp's retries and first attempts, for the evidence
// of a verdict.
func retryText(c *summary.Cell, r *rampSummary) string {
	m := c.Metrics
	paced := decimal.Format(m["connect_rate_paced_min_per_s"], 0)
	if hi := decimal.Format(m["connect_rate_paced_max_per_s"], 0); hi != paced {
		paced += "–" + hi
	}
	if val(m, "connections_retried") == 0 && val(m, "connections_first_attempt_failed") == 0 && r.PaceCuts == 0 && len(r.BoundReached) == 0 {
		return fmt.Sprintf("no connection needed a retry, no first attempt failed, the pace was never cut (%s connects/s)", paced)
	}
	t := fmt.Sprintf("%s of %s connections needed a retry (%s retries, at most %d per connection), %s of them established after it; first attempts: %s established, %s failed (%s connect timeouts, %s response timeouts), connect p50 / p99 %s / %s ms; paced at %s connects/s (%d cuts) for %s asked",
		decimal.Format(m["connections_retried"], 0), decimal.Format(m["connections_target"], 0), decimal.Format(m["connections_retry_attempts"], 0), r.ConnectRetriesMax,
		decimal.Format(m["connections_established_after_retry"], 0),
		decimal.Format(m["connections_first_attempt_established"], 0), decimal.Format(m["connections_first_attempt_failed"], 0),
		decimal.Format(m["connections_first_attempt_connect_timeouts"], 0), decimal.Format(m["connections_first_attempt_response_timeouts"], 0),
		decimal.Format(m["connect_latency_first_attempt_p50_ms"], 1), decimal.Format(m["connect_latency_first_attempt_p99_ms"], 1),
		paced, r.PaceCuts, decimal.Format(m["connect_rate_target_per_s"], 0))
	if len(r.BoundReached) > 0 {
		t += fmt.Sprintf("; the ramp's bound (%g s) was reached by %d process(es): connections not attempted or retries not made by then count as failed", r.RampMaxS, len(r.BoundReached))
	}
	return t
}

// backoffWhy is, for a ramp that reached its count by backing off or
// retrying, how far it fell short of the rate asked and what explains it
// ("" when it did not fall short), for the evidence; the ramp is then no
// wall (details.ramp.wall "none", with the cause).
func backoffWhy(c *summary.Cell) string {
	walls, code, cause, why := rampShortfall(c.Metrics)
	if code == "" {
		return ""
	}
	c.Details["ramp"] = map[string]string{"wall": "none", "cause": cause}
	return "; slower than asked, not a wall: " + strings.Join(walls, "; ") + " (" + why + ")"
}

// backoffText is what a verdict's bound adds when the ramp reached its
// count only by pacing down or retrying ("" otherwise): the server
// accepted every connection, more slowly than asked.
func backoffText(c *summary.Cell, r *rampSummary) string {
	if !backedOff(c, r) {
		return ""
	}
	m := c.Metrics
	return fmt.Sprintf(" (the count was reached after the ramp backed off: %s of %s connects/s, %s connections retried)",
		decimal.Format(m["connect_rate_achieved_per_s"], 0), decimal.Format(m["connect_rate_target_per_s"], 0), decimal.Format(m["connections_retried"], 0))
}

// Walls of a ramp whose connections did not all open, from connclient's
// ramp record.
const (
	// WallRefusedAfterRetry: connects failed although each was retried:
	// the server did not take them.
	WallRefusedAfterRetry = "the server refused connects (failed after retries)"
	// WallRampBound: the ramp ran out of its time bound (connclient
	// -ramp-max) with connections not attempted: the lab's bound, not the
	// server's wall.
	WallRampBound = "the ramp's time bound (connections not attempted)"
)

// lostAfterRetries names why connections are missing when connclient
// recorded its ramp: the ramp's time bound when connections were never
// attempted, else the server refusing connects that failed after their
// retries; ev is what the verdict already says.
func lostAfterRetries(c *summary.Cell, r *rampSummary, ev string) *summary.Verdict {
	m := c.Metrics
	errs, _ := c.Details["errors"].(map[string]float64)
	ev += "; the ramp: " + retryText(c, r)
	if w := rampWall(c, "", ""); w != nil {
		ev += "; " + w.Bound + ": " + w.Evidence
	}
	notTried := val(m, "connections_target") - val(m, "connections_attempted")
	if len(r.BoundReached) > 0 && notTried > 0 {
		return &summary.Verdict{Bound: fmt.Sprintf("%s: %.0f connections not attempted within %g s", WallRampBound, notTried, r.RampMaxS), Evidence: ev}
	}
	return &summary.Verdict{Bound: fmt.Sprintf("%s: %s connects failed after up to %d retries each (%s)", WallRefusedAfterRetry,
		decimal.Format(m["connections_failed"], 0), r.ConnectRetriesMax, topCause(errs)), Evidence: ev}
}
