package phase3

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"csbench/internal/decimal"
	"csbench/internal/summary"
)

// RatePacedSum says, in details connect_ramp.rate_paced_basis, how the
// paced rates of several processes combine.
const RatePacedSum = "sum_over_processes"

// rampSummary is what the processes' ramps say together besides the
// RampFigures (summary.json details "connect_ramp").
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

// rampFigures merges the processes' ramp objects into the cell's ramp
// figures, which it returns, and details "connect_ramp". nil when no
// process carries a ramp; a note, and nil, when only some do.
func rampFigures(clients []*Client, c *summary.Cell, note func(string, ...any)) *RampFigures {
	have := 0
	for _, cl := range clients {
		if cl.Ramp != nil {
			have++
		}
	}
	switch {
	case have == 0:
		return nil
	case have < len(clients):
		note("only %d of %d connclient results record their ramp: no first-attempt figures", have, len(clients))
		return nil
	}
	f := rampCounts(clients)
	basis := BasisOneProcess
	if len(clients) > 1 {
		basis = BasisMerged
	}
	ok, err := mergedPercentiles(clients, "first_connect", percentile{0.50, &f.ConnectLatencyFirstAttemptP50Ms},
		percentile{0.99, &f.ConnectLatencyFirstAttemptP99Ms}, percentile{1, &f.ConnectLatencyFirstAttemptMaxMs})
	if err != nil {
		note("%v", err)
	}
	if !ok && len(clients) > 1 {
		basis = BasisLargest
	}
	c.Details["connect_ramp"] = rampDetails(clients, basis)
	return f
}

// rampCounts is the ramps' counts and paced rates summed, their first
// attempts' connect percentiles the largest of the processes' (until
// merged).
func rampCounts(clients []*Client) *RampFigures {
	sum := func(get func(*Client) int64) *float64 { return count(clients, get) }
	return &RampFigures{
		ConnectionsAttempted:                   sum(func(cl *Client) int64 { return cl.ConnectionsAttempted }),
		ConnectionsFirstAttemptEstablished:     sum(func(cl *Client) int64 { return cl.Ramp.FirstAttempt.Established }),
		ConnectionsFirstAttemptFailed:          sum(func(cl *Client) int64 { return cl.Ramp.FirstAttempt.Failed }),
		ConnectionsFirstAttemptConnectTimeouts: sum(func(cl *Client) int64 { return cl.Ramp.FirstAttempt.ConnectTimeouts }),
		ConnectionsFirstAttemptRespTimeouts:    sum(func(cl *Client) int64 { return cl.Ramp.FirstAttempt.ResponseTimeouts }),
		ConnectionsFirstAttemptSlow:            sum(func(cl *Client) int64 { return cl.Ramp.FirstAttempt.ConnectsSlow }),
		ConnectionsRetried:                     sum(func(cl *Client) int64 { return cl.Ramp.ConnectionsRetried }),
		ConnectionsEstablishedAfterRetry:       sum(func(cl *Client) int64 { return cl.Ramp.EstablishedAfterRetry }),
		ConnectionsRetryAttempts:               sum(func(cl *Client) int64 { return cl.Ramp.Retries }),
		ConnectRatePacedMinPerS:                rounded(sumOf(clients, func(cl *Client) *float64 { return summary.F(cl.Ramp.RatePacedMin) }), 1),
		ConnectRatePacedMaxPerS:                rounded(sumOf(clients, func(cl *Client) *float64 { return summary.F(cl.Ramp.RatePacedMax) }), 1),
		ConnectLatencyFirstAttemptP50Ms:        largest(clients, func(cl *Client) *float64 { return cl.Ramp.FirstAttempt.ConnectLatencyP50Ms }),
		ConnectLatencyFirstAttemptP99Ms:        largest(clients, func(cl *Client) *float64 { return cl.Ramp.FirstAttempt.ConnectLatencyP99Ms }),
		ConnectLatencyFirstAttemptMaxMs:        largest(clients, func(cl *Client) *float64 { return cl.Ramp.FirstAttempt.ConnectLatencyMaxMs }),
	}
}

// rampDetails is what the processes' ramps say together besides the
// figures (details "connect_ramp"); basis is how the first attempts'
// percentiles were obtained.
func rampDetails(clients []*Client, basis string) *rampSummary {
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
	return rs
}

// backedOff says whether the ramp reached its count only by pacing down
// or retrying.
func backedOff(f *Figures, r *rampSummary) bool {
	return r != nil && (summary.Val(f.ramp().ConnectionsRetried) > 0 || r.PaceCuts > 0)
}

// retryText is the ramp's retries and first attempts, for the evidence
// of a verdict.
func retryText(f *Figures, r *rampSummary) string {
	g := f.ramp()
	paced := pacedText(g)
	if summary.Val(g.ConnectionsRetried) == 0 && summary.Val(g.ConnectionsFirstAttemptFailed) == 0 && r.PaceCuts == 0 && len(r.BoundReached) == 0 {
		return fmt.Sprintf("no connection needed a retry, no first attempt failed, the pace was never cut (%s connects/s)", paced)
	}
	t := fmt.Sprintf("%s of %s connections needed a retry (%s retries, at most %d per connection), %s of them established after it; first attempts: %s established, %s failed (%s connect timeouts, %s response timeouts), connect p50 / p99 %s / %s ms; paced at %s connects/s (%d cuts) for %s asked",
		decimal.Format(g.ConnectionsRetried, 0), decimal.Format(f.ConnectionsTarget, 0), decimal.Format(g.ConnectionsRetryAttempts, 0), r.ConnectRetriesMax,
		decimal.Format(g.ConnectionsEstablishedAfterRetry, 0),
		decimal.Format(g.ConnectionsFirstAttemptEstablished, 0), decimal.Format(g.ConnectionsFirstAttemptFailed, 0),
		decimal.Format(g.ConnectionsFirstAttemptConnectTimeouts, 0), decimal.Format(g.ConnectionsFirstAttemptRespTimeouts, 0),
		decimal.Format(g.ConnectLatencyFirstAttemptP50Ms, 1), decimal.Format(g.ConnectLatencyFirstAttemptP99Ms, 1),
		paced, r.PaceCuts, decimal.Format(f.ConnectRateTargetPerS, 0))
	if len(r.BoundReached) > 0 {
		t += fmt.Sprintf("; the ramp's bound (%g s) was reached by %d process(es): connections not attempted or retries not made by then count as failed", r.RampMaxS, len(r.BoundReached))
	}
	return t
}

// backoffWhy is, for a ramp that reached its count by backing off or
// retrying, how far it fell short of the rate asked and what explains it
// ("" when it did not fall short), for the evidence; the ramp is then no
// wall (details.ramp.wall "none", with the cause).
func backoffWhy(c *summary.Cell, f *Figures) string {
	walls, code, cause, why := rampShortfall(f)
	if code == "" {
		return ""
	}
	c.Details["ramp"] = map[string]string{"wall": "none", "cause": cause}
	return "; slower than asked, not a wall: " + strings.Join(walls, "; ") + " (" + why + ")"
}

// backoffText is what a verdict's bound adds when the ramp reached its
// count only by pacing down or retrying ("" otherwise): the server
// accepted every connection, more slowly than asked.
func backoffText(f *Figures, r *rampSummary) string {
	if !backedOff(f, r) {
		return ""
	}
	return fmt.Sprintf(" (the count was reached after the ramp backed off: %s of %s connects/s, %s connections retried)",
		decimal.Format(f.ConnectRateAchievedPerS, 0), decimal.Format(f.ConnectRateTargetPerS, 0), decimal.Format(f.ramp().ConnectionsRetried, 0))
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
func lostAfterRetries(c *summary.Cell, f *Figures, r *rampSummary, ev string) *summary.Verdict {
	errs, _ := c.Details["errors"].(map[string]float64)
	ev += "; the ramp: " + retryText(f, r)
	if w := rampWall(c, f, splitWalls{}, ""); w != nil {
		ev += "; " + w.Bound + ": " + w.Evidence
	}
	notTried := summary.Val(f.ConnectionsTarget) - summary.Val(f.ramp().ConnectionsAttempted)
	if len(r.BoundReached) > 0 && notTried > 0 {
		return &summary.Verdict{Code: CodeRampTimeBound, Bound: fmt.Sprintf("%s: %.0f connections not attempted within %g s", WallRampBound, notTried, r.RampMaxS), Evidence: ev}
	}
	return &summary.Verdict{Code: CodeRefusedAfterRetry, Cause: topCause(errs), Bound: fmt.Sprintf("%s: %s connects failed after up to %d retries each (%s)", WallRefusedAfterRetry,
		decimal.Format(f.ConnectionsFailed, 0), r.ConnectRetriesMax, topCause(errs)), Evidence: ev}
}

// pacedText is the ramp's paced rate, connects/s: "lo–hi", or one figure
// when both round alike.
func pacedText(g *RampFigures) string {
	paced := decimal.Format(g.ConnectRatePacedMinPerS, 0)
	if hi := decimal.Format(g.ConnectRatePacedMaxPerS, 0); hi != paced {
		paced += "–" + hi
	}
	return paced
}
