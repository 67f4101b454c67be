package phase3

import (
	"fmt"
	"strconv"
	"strings"

	"csbench/internal/decimal"
	"csbench/internal/summary"
)

// The report's tables of the connect ramps (first attempts beside the
// final figures) and of the idle holds: only for the cells whose results
// record them, so the report of a run made before is what it was.

// hasRamp says whether some cell of the run has its ramp recorded.
func hasRamp(s *summary.Summary) bool {
	for i := range s.Cells {
		if rampOf(&s.Cells[i]) != nil {
			return true
		}
	}
	return false
}

func rampWallsText() string {
	return fmt.Sprintf("Where connclient recorded its ramp (it paces its connects to what the server accepts and makes again an attempt that timed out): a ramp that reached its count only by backing off or retrying is not a wall, the bound says so and the evidence how many connections needed a retry; connections still missing after their retries are the server refusing connects (**%s**), unless the ramp ran out of its time bound with connections never attempted (**%s**), a bound of the lab.",
		WallRefusedAfterRetry, WallRampBound)
}

var rampHead = []string{"scenario", "paced connects/s (cuts)", "first attempts established / failed", "first-attempt timeouts connect / response", "first attempts slow",
	"first-attempt connect p50 / p99 ms", "connections retried (established after)", "retries", "final established / failed",
	"final connect p50 / p99 ms", "ramp bound reached"}

// rampRows is one row per cell with its ramp recorded.
func rampRows(s *summary.Summary, figs []*Figures) [][]string {
	var rows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		r := rampOf(c)
		if r == nil {
			continue
		}
		f := figs[i]
		g := f.ramp()
		paced := pacedText(g)
		bound := "no"
		if len(r.BoundReached) > 0 {
			var ps []string
			for _, p := range r.BoundReached {
				ps = append(ps, strconv.Itoa(p))
			}
			bound = fmt.Sprintf("yes (%g s; process %s)", r.RampMaxS, strings.Join(ps, ", "))
		}
		rows = append(rows, []string{label(c), fmt.Sprintf("%s (%d)", paced, r.PaceCuts),
			decimal.Format(g.ConnectionsFirstAttemptEstablished, 0) + " / " + decimal.Format(g.ConnectionsFirstAttemptFailed, 0),
			decimal.Format(g.ConnectionsFirstAttemptConnectTimeouts, 0) + " / " + decimal.Format(g.ConnectionsFirstAttemptRespTimeouts, 0),
			decimal.Format(g.ConnectionsFirstAttemptSlow, 0),
			decimal.Format(g.ConnectLatencyFirstAttemptP50Ms, 2) + " / " + decimal.Format(g.ConnectLatencyFirstAttemptP99Ms, 2),
			decimal.Format(g.ConnectionsRetried, 0) + " (" + decimal.Format(g.ConnectionsEstablishedAfterRetry, 0) + ")",
			decimal.Format(g.ConnectionsRetryAttempts, 0),
			decimal.Format(f.ConnectionsEstablished, 0) + " / " + decimal.Format(f.ConnectionsFailed, 0),
			decimal.Format(f.ConnectLatencyP50Ms, 2) + " / " + decimal.Format(f.ConnectLatencyP99Ms, 2), bound})
	}
	return rows
}

// rampTableText says what the ramp table shows, with the settings the
// processes ran with.
func rampTableText(s *summary.Summary) string {
	pace, slow, retries := "", 0.0, 0
	for i := range s.Cells {
		if r := rampOf(&s.Cells[i]); r != nil {
			pace, slow, retries = r.Pace, max(slow, r.ConnectSlowMs), max(retries, r.ConnectRetriesMax)
		}
	}
	return fmt.Sprintf("The connect ramps (connclient's `ramp` in `raw/<cell>.client-N.json`): the pace (%s) halves the rate when an attempt begun after the last cut timed out or took %g ms or more to connect (a SYN retransmitted; runs since 2026-12-04 also ask the kernel: only an attempt with a retransmission on it cuts, a slow one without waited for a CPU) and grows it again while attempts are fast; an attempt that timed out, at the connect or waiting for the first answer, is made again, at most %d times per connection and none after the ramp's time bound. The first attempts are the ramp as it would have been without retries (slow: connected after %g ms or more); the final figures (above) include the retries. With several processes the counts are summed, the paced rate is the sum of the processes' lowest and the sum of their highest rates (the scenario's rate lay between), the first attempts' connect percentiles come from their histograms merged bucket by bucket.",
		pace, slow, retries, slow)
}

var holdHead = []string{"scenario", "processes held over the agreed end", "agreed end (UTC)", "began holding, first → last (s from the end)",
	"hold ended, first → last (s from the end)", "every process holding s", "ramps' spread s"}

// holdRows is one row per idle cell with its hold recorded.
func holdRows(s *summary.Summary, figs []*Figures) [][]string {
	var rows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		h := holdOf(c)
		if h == nil {
			continue
		}
		g := figs[i].hold()
		end := "none agreed"
		rel := func(a, b *int64) string {
			if a == nil || b == nil || h.AgreedEndMs == nil {
				return "—"
			}
			f := func(v int64) string { return fmt.Sprintf("%+.3f", float64(v-*h.AgreedEndMs)/1000) }
			return f(*a) + " → " + f(*b)
		}
		if h.AgreedEndMs != nil {
			end = stampMs(*h.AgreedEndMs)
		}
		rows = append(rows, []string{label(c), fmt.Sprintf("%d of %d", h.Processes-len(h.Missed), h.Processes), end,
			rel(h.BeganFirstMs, h.BeganLastMs), rel(h.EndedFirstMs, h.EndedLastMs),
			decimal.Format(g.HoldSharedS, 3), decimal.Format(g.HoldBeganSpreadS, 3)})
	}
	return rows
}

const holdTableText = "The idle holds: each connclient process, once all its connections were open and primed, held them until one end that the runner wrote for every process once all of them held (`raw/<cell>.hold`, `c10k.<cell>.hold_end_ms` in run.env), and the snapshot with every connection held was taken then, before that end. A process held over the agreed end when it began holding before it and its hold ended at or after it (connclient's `hold_began_at_ms`, `hold_ended_at_ms`, `hold_end_agreed_at_ms`); every process was holding from the last to begin to the first to end; the ramps' spread is from the first process to begin holding to the last."
