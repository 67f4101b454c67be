package crossreport

import (
	"math"
	"sort"
	"strconv"

	"csbench/internal/kv"
	"csbench/internal/phase2"
	"csbench/internal/phase4"
	"csbench/internal/sizes"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// This file computes what the summary says: every figure the findings
// table and the per-phase detail quote, over the repetitions and the runs,
// with the verdict codes counted. summary.go only renders these.

// boundCount is how many cells of a group got one verdict code.
type boundCount struct {
	Code string
	N    int
}

// countBounds counts the verdict codes of cells, in the order they first
// appear; a cell without a verdict is not counted.
func countBounds(cells []*summary.Cell) []boundCount {
	var out []boundCount
	idx := map[string]int{}
	for _, c := range cells {
		if c.Verdict == nil {
			continue
		}
		i, ok := idx[c.Verdict.Code]
		if !ok {
			i = len(out)
			idx[c.Verdict.Code] = i
			out = append(out, boundCount{Code: c.Verdict.Bound})
		}
		out[i].N++
	}
	return out
}

// spreadOf one figure over cells (nil entries skipped: not measured).
func spreadOf(cells []*summary.Cell, get cellFigure) trust.Spread {
	vals := make([]*float64, 0, len(cells))
	for _, c := range cells {
		vals = append(vals, get(c))
	}
	return trust.SpreadOf(vals)
}

func okCells(cells []*summary.Cell) []*summary.Cell {
	var out []*summary.Cell
	for _, c := range cells {
		if c.Status == "ok" {
			out = append(out, c)
		}
	}
	return out
}

func cellsOf(s *summary.Summary) []*summary.Cell {
	out := make([]*summary.Cell, len(s.Cells))
	for i := range s.Cells {
		out[i] = &s.Cells[i]
	}
	return out
}

// iperfStat is Phase 0: throughput over its cells (directions and stream
// counts, not repetitions) against the TCP ceiling.
type iperfStat struct {
	Run        Run
	Cells      []*summary.Cell
	Throughput trust.Spread // over the cells that measured
	CeilingMbs *float64
	Bounds     []boundCount
}

func phase0Stat(r Run) iperfStat {
	cells := cellsOf(r.Summary)
	return iperfStat{Run: r, Cells: cells, Throughput: spreadOf(okCells(cells), iperfMbps),
		CeilingMbs: r.Summary.Link.TCPCeilingMbps, Bounds: countBounds(cells)}
}

// payloadStat is one Phase 1 payload over its repetitions (REPEAT): the
// median, least and greatest of each figure over those that measured.
type payloadStat struct {
	Payload                string
	Bytes                  int
	Runs                   int // repetitions, measured or not
	RPS, Mbps, Util, P99ms trust.Spread
	Bounds                 []boundCount
}

func phase1Stats(s *summary.Summary) []payloadStat {
	by := map[string][]*summary.Cell{}
	var order []string
	for _, c := range cellsOf(s) {
		p := c.Params["payload"]
		if _, ok := by[p]; !ok {
			order = append(order, p)
		}
		by[p] = append(by[p], c)
	}
	out := make([]payloadStat, 0, len(order))
	for _, p := range order {
		cells := by[p]
		ok := okCells(cells)
		b, _ := sizes.ParseSize(p)
		out = append(out, payloadStat{Payload: p, Bytes: b, Runs: len(cells),
			RPS: spreadOf(ok, httpRPS), Mbps: spreadOf(ok, httpMbps), Util: spreadOf(ok, httpUtil),
			P99ms: spreadOf(ok, httpP99), Bounds: countBounds(ok)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Bytes < out[j].Bytes })
	return out
}

// concStat is one payload x concurrency point of Phase 2 over its
// repetitions.
type concStat struct {
	Conc   int
	Runs   int
	RPS    trust.Spread
	P99ms  trust.Spread
	Bounds []boundCount
}

// plateauStat is one Phase 2 payload: its points and where RPS plateaus.
type plateauStat struct {
	Payload    string
	Points     []concStat
	Knee, Best *concStat // nil: no point measured
}

func phase2Stats(s *summary.Summary) []plateauStat {
	var out []plateauStat
	for _, p := range phase2.Plateaus(phase2.Groups(s)) {
		ps := plateauStat{Payload: p.Payload}
		for _, g := range p.Groups {
			ps.Points = append(ps.Points, concStat{Conc: g.Conc, Runs: len(g.Cells), RPS: spreadOf(g.OK, httpRPS),
				P99ms: spreadOf(g.OK, httpP99), Bounds: countBounds(g.OK)})
		}
		for i, g := range p.Groups {
			if g == p.Knee {
				ps.Knee = &ps.Points[i]
			}
			if g == p.Best {
				ps.Best = &ps.Points[i]
			}
		}
		out = append(out, ps)
	}
	return out
}

// heldCell is one Phase 3 cell with the run it came from.
type heldCell struct {
	Cell *summary.Cell
	Run  Run
}

// heldGroup is one Phase 3 scenario at one connection count and, for the
// loaded scenarios, one offered rate (lowrate's rps, active's payload):
// the cells of every run that measured it, as repetitions.
type heldGroup struct {
	Scenario string
	Conns    int
	Load     string // params rps (lowrate) or payload (active); "" for idle
	Cells    []heldCell
	// Held is connections established over the repetitions, Target the
	// count asked for; Lost is true when a repetition held fewer.
	Held   trust.Spread
	Target float64
	Lost   bool
	// Errors are the error codes (details.errors) with a count above 0,
	// summed over the repetitions, by name.
	Errors []errCount
	// RampShort: a repetition's connect ramp fell short of its target or
	// its connects were slow (details.ramp.wall short_ramp, slow_connects).
	RampShort          bool
	RSSKiB, RPS, P99ms trust.Spread
}

type errCount struct {
	Code string
	N    float64
}

// scenarioOrder is Plan.md's order of Phase 3's scenarios; others follow
// by name.
var scenarioOrder = map[string]int{"idle": 0, "lowrate": 1, "active": 2}

func phase3Stats(rs []Run) []*heldGroup {
	by := map[string]*heldGroup{}
	var out []*heldGroup
	for _, r := range rs {
		for _, c := range cellsOf(r.Summary) {
			sc := c.Params["scenario"]
			conns, _ := strconv.Atoi(c.Params["connections"])
			load := c.Params["rps"]
			if sc == "active" {
				load = c.Params["payload"]
			}
			key := sc + "/" + strconv.Itoa(conns) + "/" + load
			g := by[key]
			if g == nil {
				g = &heldGroup{Scenario: sc, Conns: conns, Load: load}
				by[key] = g
				out = append(out, g)
			}
			g.Cells = append(g.Cells, heldCell{Cell: c, Run: r})
		}
	}
	for _, g := range out {
		g.aggregate()
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		oa, okA := scenarioOrder[a.Scenario]
		ob, okB := scenarioOrder[b.Scenario]
		switch {
		case okA != okB:
			return okA
		case oa != ob:
			return oa < ob
		case a.Scenario != b.Scenario:
			return a.Scenario < b.Scenario
		case a.Conns != b.Conns:
			return a.Conns < b.Conns
		}
		la, _ := strconv.ParseFloat(a.Load, 64)
		lb, _ := strconv.ParseFloat(b.Load, 64)
		return la < lb
	})
	return out
}

func (g *heldGroup) aggregate() {
	var cells []*summary.Cell
	errs := map[string]float64{}
	g.Target = math.NaN()
	for _, hc := range g.Cells {
		c := hc.Cell
		cells = append(cells, c)
		est, tgt := figVal(c, heldEstab), figVal(c, heldTarget)
		if !math.IsNaN(tgt) {
			g.Target = tgt
		}
		if !math.IsNaN(est) && !math.IsNaN(tgt) && est < tgt {
			g.Lost = true
		}
		if m, ok := c.Details["errors"].(map[string]any); ok {
			for k, v := range m {
				if n, ok := v.(float64); ok && n > 0 {
					errs[k] += n
				}
			}
		}
		// The ramp's details (not a figure): its wall, "none" when it made
		// every connection in time.
		if ramp, ok := c.Details["ramp"].(map[string]any); ok {
			if w, _ := ramp["wall"].(string); w != "" && w != "none" {
				g.RampShort = true
			}
		}
	}
	for _, k := range kv.SortedKeys(errs) {
		g.Errors = append(g.Errors, errCount{Code: k, N: errs[k]})
	}
	g.Held = spreadOf(cells, heldEstab)
	g.RSSKiB = spreadOf(cells, heldRSSConn)
	g.RPS = spreadOf(cells, heldRPS)
	g.P99ms = spreadOf(cells, heldP99)
}

// scenarioStat is one Phase 3 scenario over its connection counts: how far
// every connection was held, where the first was lost.
type scenarioStat struct {
	Scenario string
	Groups   []*heldGroup
	// HeldUpTo is the largest count at which every repetition held every
	// connection (0: none did); FirstLoss the smallest at which one did
	// not (nil: none).
	HeldUpTo  int
	FirstLoss *heldGroup
	// RampShortFrom is the smallest count whose connect ramp fell short
	// (0: none).
	RampShortFrom      int
	RSSKiB, P99ms, RPS trust.Spread // over the held counts' cells
	Loads              trust.Spread // offered rates (lowrate rps)
}

func scenarioStats(groups []*heldGroup) []scenarioStat {
	var out []scenarioStat
	for _, g := range groups {
		if len(out) == 0 || out[len(out)-1].Scenario != g.Scenario {
			out = append(out, scenarioStat{Scenario: g.Scenario})
		}
		s := &out[len(out)-1]
		s.Groups = append(s.Groups, g)
	}
	for i := range out {
		s := &out[i]
		var held []*summary.Cell
		var loads []*float64
		for _, g := range s.Groups {
			if g.RampShort && (s.RampShortFrom == 0 || g.Conns < s.RampShortFrom) {
				s.RampShortFrom = g.Conns
			}
			if g.Lost {
				if s.FirstLoss == nil || g.Conns < s.FirstLoss.Conns {
					s.FirstLoss = g
				}
				continue
			}
			s.HeldUpTo = max(s.HeldUpTo, g.Conns)
			for _, hc := range g.Cells {
				held = append(held, hc.Cell)
				loads = append(loads, heldLoad(hc.Cell))
			}
		}
		s.RSSKiB, s.P99ms, s.RPS = spreadOf(held, heldRSSConn), spreadOf(held, heldP99), spreadOf(held, heldRPS)
		s.Loads = trust.SpreadOf(loads)
	}
	return out
}

// rateStep is one Phase 4 cell that offered a rate (churn, accept).
type rateStep struct {
	Cell      *summary.Cell
	Target    *float64
	Achieved  *float64
	P99ms     *float64
	Sustained bool
	Code      string // the verdict's bound code, "" without one
}

// rateGroup is Phase 4's steps of one kind: churn by who closes, accept
// by TLS handshake; Best is the sustained step of the highest target,
// Wall the lowest that was not.
type rateGroup struct {
	Kind, Close, Handshake string
	Steps                  []rateStep
	Best, Wall             *rateStep
	PredictedRate          *float64 // predicted_sustainable_rate_per_s of the wall's cell (ports)
	CPUus                  *float64 // server CPU per connection (or handshake) at Best
}

// burst is one backlog cell of Phase 4.
type burst struct {
	Backlog, Burst, Overflows, NeverUp, P99ms *float64
	Code                                      string
}

type connStat struct {
	Churn, Accept []rateGroup
	Bursts        []burst
}

func phase4Stat(s *summary.Summary) connStat {
	var out connStat
	churn := map[string][]*summary.Cell{}
	var accept [][]*summary.Cell
	acc := map[string]int{}
	for _, c := range cellsOf(s) {
		switch phase4.Kind(c) {
		case "churn":
			churn[c.Params["close"]] = append(churn[c.Params["close"]], c)
		case "accept":
			h := c.Params["handshake"]
			i, ok := acc[h]
			if !ok {
				i = len(accept)
				acc[h] = i
				accept = append(accept, nil)
			}
			accept[i] = append(accept[i], c)
		case "backlog":
			f := connOf(c)
			b := burst{Backlog: f.Backlog, Burst: f.ConnectionsTarget, Overflows: f.ServerListenOverflows,
				NeverUp: f.ConnectionsNeverUp, P99ms: f.LatencyP99Ms}
			if c.Verdict != nil {
				b.Code = c.Verdict.Code
			}
			out.Bursts = append(out.Bursts, b)
		}
	}
	for _, k := range kv.SortedKeys(churn) {
		out.Churn = append(out.Churn, rateGroupOf("churn", k, "", churn[k], perConn))
	}
	for _, cells := range accept {
		h := cells[0].Params["handshake"]
		us := perConn
		if h != "" {
			us = perHandshake
		}
		out.Accept = append(out.Accept, rateGroupOf("accept", "", h, cells, us))
	}
	return out
}

// perConn and perHandshake pick the server's CPU per connection, per TLS
// handshake (µs).
func perConn(f *connFigures) *float64      { return f.ServerCPUUsPerConn }
func perHandshake(f *connFigures) *float64 { return f.ServerCPUUsPerHandshake }

func rateGroupOf(kind, close, handshake string, cells []*summary.Cell, cpu func(*connFigures) *float64) rateGroup {
	g := rateGroup{Kind: kind, Close: close, Handshake: handshake}
	for _, c := range cells {
		f := connOf(c)
		st := rateStep{Cell: c, Target: f.RateTargetPerS, Achieved: f.RateAchievedPerS,
			P99ms: f.LatencyP99Ms, Sustained: phase4.Sustained(c)}
		if c.Verdict != nil {
			st.Code = c.Verdict.Code
		}
		g.Steps = append(g.Steps, st)
	}
	sort.SliceStable(g.Steps, func(i, j int) bool { return summary.Val(g.Steps[i].Target) < summary.Val(g.Steps[j].Target) })
	for i := range g.Steps {
		st := &g.Steps[i]
		if st.Sustained {
			g.Best = st
		} else if g.Wall == nil && st.Code != "" {
			g.Wall = st
		}
	}
	if g.Best != nil {
		f := connOf(g.Best.Cell)
		g.CPUus = cpu(&f)
	}
	if g.Wall != nil && g.Wall.Code == phase4.BoundPorts {
		g.PredictedRate = connOf(g.Wall.Cell).PredictedSustainableRatePerS
	}
	return g
}

// httpsRuns are the HTTP runs made over https.
func httpsRuns(in *Inputs) []Run {
	var out []Run
	for _, p := range Phases[1:] {
		for _, r := range in.Runs[p.Name] {
			if r.Summary.TLS != nil && r.Summary.TLS.Scheme == "https" {
				out = append(out, r)
			}
		}
	}
	return out
}
