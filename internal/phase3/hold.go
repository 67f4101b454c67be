package phase3

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"csbench/internal/decimal"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// Why a process did not hold over the agreed end (details
// hold.missed[].why).
const (
	HoldNever    = "never_held"       // no hold began: its ramp never finished
	HoldLate     = "began_after_end"  // it held every connection only after the agreed end
	HoldEarly    = "ended_before_end" // its hold ended before the agreed end
	HoldOtherEnd = "other_end"        // it was told another end than the runner wrote
)

// Where the agreed end came from (details hold.agreed_end_basis).
const (
	HoldEndRunEnv    = "run.env"    // c10k.<cell>.hold_end_ms, written by the runner
	HoldEndProcesses = "connclient" // the processes' hold_end_agreed_at_ms
	HoldEndNone      = "none"       // no end agreed (-hold): the holds' overlap only
)

// holdSummary is how the idle processes of a cell held (summary.json
// details "hold"); instants are Unix milliseconds.
type holdSummary struct {
	AgreedEndMs  *int64     `json:"agreed_end_ms"`
	AgreedBasis  string     `json:"agreed_end_basis"`
	BeganFirstMs *int64     `json:"began_first_ms"`
	BeganLastMs  *int64     `json:"began_last_ms"`
	EndedFirstMs *int64     `json:"ended_first_ms"`
	EndedLastMs  *int64     `json:"ended_last_ms"`
	Processes    int        `json:"processes"`
	Shared       bool       `json:"shared"` // every process held over the agreed end
	Missed       []holdMiss `json:"missed"`
}

// holdMiss is a process that did not hold over the agreed end.
type holdMiss struct {
	Process int    `json:"process"` // 1-based, raw/<cell>.client-N.json
	Label   string `json:"label"`   // process N (host, source)
	Host    string `json:"host,omitempty"`
	Why     string `json:"why"`
	// ByMs: how long after the agreed end it began (late), before it
	// it ended (early), or how far its end was from it (other end).
	ByMs *int64 `json:"by_ms"`
}

// holdOf is the cell's hold, or nil.
func holdOf(c *summary.Cell) *holdSummary {
	var h *holdSummary
	detail(c, "hold", &h)
	return h
}

// checkHold compares the processes' holds with the one end agreed for all
// (agreed: the runner's; nil: the processes' own): every process held
// over it when the last to begin holding began at or before it and the
// first to end ended at or after it. nil when no result records its hold
// (results written before connclient did).
func checkHold(clients []*Client, hosts []string, agreed *int64) *holdSummary {
	recorded := false
	for _, cl := range clients {
		if cl.HoldBeganAtMs != nil || cl.HoldEndedAtMs != nil || cl.HoldEndAgreedAtMs != nil {
			recorded = true
		}
	}
	if !recorded {
		return nil
	}
	h := &holdSummary{AgreedEndMs: agreed, AgreedBasis: HoldEndRunEnv, Processes: len(clients), Missed: []holdMiss{}}
	if agreed == nil {
		h.AgreedBasis = HoldEndNone
		for _, cl := range clients {
			if cl.HoldEndAgreedAtMs != nil {
				h.AgreedEndMs, h.AgreedBasis = cl.HoldEndAgreedAtMs, HoldEndProcesses
				break
			}
		}
	}
	lo := func(p **int64, v *int64) {
		if v != nil && (*p == nil || *v < **p) {
			*p = v
		}
	}
	hi := func(p **int64, v *int64) {
		if v != nil && (*p == nil || *v > **p) {
			*p = v
		}
	}
	diff := func(a, b int64) *int64 { d := a - b; return &d }
	for i, cl := range clients {
		lo(&h.BeganFirstMs, cl.HoldBeganAtMs)
		hi(&h.BeganLastMs, cl.HoldBeganAtMs)
		lo(&h.EndedFirstMs, cl.HoldEndedAtMs)
		hi(&h.EndedLastMs, cl.HoldEndedAtMs)
		miss := holdMiss{Process: i + 1, Label: processLabel(clients, hosts, i)}
		if i < len(hosts) {
			miss.Host = hosts[i]
		}
		end := h.AgreedEndMs
		switch {
		case cl.HoldBeganAtMs == nil:
			miss.Why = HoldNever
		case end != nil && cl.HoldEndAgreedAtMs != nil && *cl.HoldEndAgreedAtMs != *end:
			miss.Why, miss.ByMs = HoldOtherEnd, diff(*cl.HoldEndAgreedAtMs, *end)
		case end != nil && *cl.HoldBeganAtMs > *end:
			miss.Why, miss.ByMs = HoldLate, diff(*cl.HoldBeganAtMs, *end)
		case end != nil && cl.HoldEndedAtMs == nil:
			miss.Why = HoldEarly
		case end != nil && *cl.HoldEndedAtMs < *end:
			miss.Why, miss.ByMs = HoldEarly, diff(*end, *cl.HoldEndedAtMs)
		default:
			continue
		}
		h.Missed = append(h.Missed, miss)
	}
	h.Shared = len(h.Missed) == 0
	if h.AgreedEndMs == nil {
		// No end agreed: the holds share an instant when they overlap.
		h.Shared = h.Shared && h.BeganLastMs != nil && h.EndedFirstMs != nil && *h.BeganLastMs <= *h.EndedFirstMs
	}
	return h
}

// holdFigures checks an idle cell's hold (checkHold, against the end the
// runner recorded in run.env, c10k.<cell>.hold_end_ms) into its
// HoldFigures, details "hold" and, when a process did not hold over the
// agreed end, a note naming it. A run made before the processes recorded
// their hold named, in c10k.<cell>.hold_ended, the client hosts whose
// processes ended their hold before every host held: that is a note too.
func holdFigures(r *rundir.Run, rc rundir.Cell, clients []*Client, hosts []string, c *summary.Cell, f *Figures, note func(string, ...any)) {
	if v := r.Get("c10k." + rc.Name + ".hold_ended"); v != "" {
		c.Details["hold_ended_early"] = strings.Split(v, ",")
		note("the idle processes on %s ended their hold before every client host held its connections: the counts and memory with every connection held miss theirs (raise HOLD above the spread of the hosts' ramps)", v)
	}
	var agreed *int64
	if v, err := strconv.ParseInt(r.Get("c10k."+rc.Name+".hold_end_ms"), 10, 64); err == nil {
		agreed = &v
	}
	h := checkHold(clients, hosts, agreed)
	if h == nil {
		return
	}
	c.Details["hold"] = h
	g := &HoldFigures{HoldMissedProcs: summary.F(float64(len(h.Missed)))}
	f.HoldFigures = g
	if h.BeganLastMs != nil && h.EndedFirstMs != nil {
		g.HoldSharedS = summary.F(round(max(0, float64(*h.EndedFirstMs-*h.BeganLastMs)/1000), 3))
	}
	if h.BeganFirstMs != nil {
		g.HoldBeganSpreadS = summary.F(round(float64(*h.BeganLastMs-*h.BeganFirstMs)/1000, 3))
	}
	if len(h.Missed) == 0 {
		return
	}
	var parts []string
	for _, x := range h.Missed {
		parts = append(parts, x.Label+" "+missText(x))
	}
	end := "no end was agreed and the holds did not overlap"
	if h.AgreedEndMs != nil {
		end = "the end agreed for all, " + stampMs(*h.AgreedEndMs)
	}
	note("not every idle process held its connections over one shared instant (%s): %s; the counts and memory with every connection held may miss theirs",
		end, strings.Join(parts, "; "))
}

// missText says how a process missed the agreed end.
func missText(x holdMiss) string {
	by := ""
	if x.ByMs != nil {
		by = strconv.FormatFloat(float64(*x.ByMs)/1000, 'f', 3, 64) + " s "
	}
	switch x.Why {
	case HoldNever:
		return "never held its connections (its ramp did not finish)"
	case HoldLate:
		return "began holding " + by + "after it (its ramp outlasted the runner's wait)"
	case HoldOtherEnd:
		return "was told another end, " + by + "from it"
	}
	if by == "" {
		return "ended its hold before it (no end recorded)"
	}
	return "ended its hold " + by + "before it"
}

// stampMs is a Unix-millisecond instant in UTC, to the millisecond.
func stampMs(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// holdText is what an idle verdict's evidence says of the hold ("" for a
// run made before the processes recorded it).
func holdText(c *summary.Cell, f *Figures) string {
	h := holdOf(c)
	if h == nil {
		return ""
	}
	g := f.hold()
	switch {
	case h.Shared && h.Processes == 1:
		return fmt.Sprintf("; the client process held its connections %s s, up to the agreed end", decimal.Format(g.HoldSharedS, 1))
	case h.Shared:
		return fmt.Sprintf("; every client process (%d) held its connections over one shared instant, %s s together (the last began %.0f ms after the first)",
			h.Processes, decimal.Format(g.HoldSharedS, 1), summary.Val(g.HoldBeganSpreadS)*1000)
	}
	return fmt.Sprintf("; %d of %d client processes did not hold over one shared instant (see the notes)", len(h.Missed), h.Processes)
}
