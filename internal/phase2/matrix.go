package phase2

import (
	"math"
	"sort"
	"strconv"

	"csbench/internal/httpphase"
	"csbench/internal/sizes"
	"csbench/internal/summary"
)

// PlateauShare is how close to a payload's best RPS a concurrency must come
// to be on the plateau.
const PlateauShare = 0.95

// Group is one payload x concurrency point of the matrix (x streams per
// connection over HTTP/2), with all its repetitions.
type Group struct {
	// Payload names the series the point is on: the payload, and over
	// HTTP/2 its streams per connection ("1k -m 10").
	Payload string
	Bytes   int
	Conc    int
	Streams int             // HTTP/2: h2load's -m; 0 over HTTP/1.1 (one request a connection)
	Cells   []*summary.Cell // every repetition, in cells.tsv order
	OK      []*summary.Cell // those that measured
	// Med, Min and Max hold, per figure, the median, least and greatest
	// over the repetitions that measured it; nil when none did.
	Med, Min, Max httpphase.Figures
	// Rep is the repetition whose RPS is nearest the median: its verdict
	// and distributions stand for the group.
	Rep *summary.Cell
}

// Status is "ok" when a repetition measured, else the first one's status.
func (g *Group) Status() string {
	if len(g.OK) > 0 {
		return "ok"
	}
	return g.Cells[0].Status
}

// Groups gathers the cells of a matrix run by payload, streams and
// concurrency, ordered by payload size, then streams, then concurrency.
func Groups(s *summary.Summary) []*Group {
	by := map[string]*Group{}
	var out []*Group
	for i := range s.Cells {
		c := &s.Cells[i]
		key := c.Params["payload"] + "/" + c.Params["concurrency"] + "/" + c.Params["streams"]
		g := by[key]
		if g == nil {
			bytes, _ := sizes.ParseSize(c.Params["payload"])
			conc, _ := strconv.Atoi(c.Params["concurrency"])
			streams, _ := strconv.Atoi(c.Params["streams"])
			label := c.Params["payload"]
			if streams > 0 {
				label += " -m " + c.Params["streams"]
			}
			g = &Group{Payload: label, Bytes: bytes, Conc: conc, Streams: streams}
			by[key] = g
			out = append(out, g)
		}
		g.Cells = append(g.Cells, c)
		if c.Status == "ok" {
			g.OK = append(g.OK, c)
		}
	}
	for _, g := range out {
		g.aggregate()
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes < out[j].Bytes
		}
		if out[i].Streams != out[j].Streams {
			return out[i].Streams < out[j].Streams
		}
		return out[i].Conc < out[j].Conc
	})
	return out
}

func (g *Group) aggregate() {
	med, lo, hi := map[string]*float64{}, map[string]*float64{}, map[string]*float64{}
	keys := map[string]bool{}
	for _, c := range g.Cells {
		for k := range c.Metrics {
			keys[k] = true
		}
	}
	for k := range keys {
		var xs []float64
		for _, c := range g.OK {
			if v := c.Metrics[k]; v != nil {
				xs = append(xs, *v)
			}
		}
		med[k], lo[k], hi[k] = nil, nil, nil
		if len(xs) == 0 {
			continue
		}
		sort.Float64s(xs)
		med[k] = summary.F(median(xs))
		lo[k] = summary.F(xs[0])
		hi[k] = summary.F(xs[len(xs)-1])
	}
	summary.Figures(med, &g.Med)
	summary.Figures(lo, &g.Min)
	summary.Figures(hi, &g.Max)
	g.Rep = g.Cells[0]
	if med := g.Med.RPS; med != nil {
		best := math.Inf(1)
		for _, c := range g.OK {
			if v := httpphase.FiguresOf(c).RPS; v != nil && math.Abs(*v-*med) < best {
				best, g.Rep = math.Abs(*v-*med), c
			}
		}
	}
}

// median of sorted xs: the middle value, or the mean of the middle two.
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// Plateau is where one payload's RPS stops growing with concurrency.
type Plateau struct {
	Payload string
	Groups  []*Group // this payload's points, by concurrency
	Best    *Group   // the highest median RPS
	Knee    *Group   // the smallest concurrency within PlateauShare of Best
}

// Plateaus finds the plateau of each payload over its measured points.
func Plateaus(groups []*Group) []*Plateau {
	var out []*Plateau
	var cur *Plateau
	for _, g := range groups {
		if cur == nil || cur.Payload != g.Payload {
			cur = &Plateau{Payload: g.Payload}
			out = append(out, cur)
		}
		cur.Groups = append(cur.Groups, g)
		if r := g.Med.RPS; r != nil && (cur.Best == nil || *r > *cur.Best.Med.RPS) {
			cur.Best = g
		}
	}
	for _, p := range out {
		if p.Best == nil {
			continue
		}
		for _, g := range p.Groups {
			if r := g.Med.RPS; r != nil && *r >= PlateauShare**p.Best.Med.RPS {
				p.Knee = g
				break
			}
		}
	}
	return out
}

// Little is the check of Little's law on one point. In a closed loop of
// Conc connections, each holding one request, every request occupies its
// connection for W = Conc / RPS on average (Little's law, exact when the
// load generator keeps every connection busy; over HTTP/2 the InFlight =
// Conc x Streams requests each hold a stream: W = InFlight / RPS); the
// tool's own mean latency should be that W.
type Little struct {
	WMs   *float64 // InFlight / RPS, in ms
	L     *float64 // RPS x the tool's mean latency: requests in flight
	Ratio *float64 // L / InFlight = the tool's mean / W
	// Reading is "service" (at or below the plateau's knee), "queueing"
	// (past it, RPS flat) or "" when not measured.
	Reading string
	// Consistency is "" when L/Conc is within 10% of 1, "short" below
	// (time outside the measured latency: the load generator, errors) or
	// "over" above (the latency figures overstate: wrk's correction).
	Consistency string
	// QueueShare is, for a queueing point, the share of W above W at the
	// plateau's knee: the part of each request's time spent waiting.
	QueueShare *float64
}

// InFlight is the requests the point keeps in flight: one a connection
// over HTTP/1.1, Streams a connection over HTTP/2.
func (g *Group) InFlight() int { return g.Conc * max(g.Streams, 1) }

// LittleOf checks g against its payload's plateau p.
func LittleOf(g *Group, p *Plateau) Little {
	rps := g.Med.RPS
	if rps == nil || *rps <= 0 || g.Conc <= 0 {
		return Little{}
	}
	w := float64(g.InFlight()) / *rps * 1000
	out := Little{WMs: summary.F(w), Reading: "service"}
	if mean := g.Med.LatencyMeanMs; mean != nil {
		l := *rps * *mean / 1000
		ratio := l / float64(g.InFlight())
		out.L, out.Ratio = summary.F(l), summary.F(ratio)
		switch {
		case ratio < 0.9:
			out.Consistency = "short"
		case ratio > 1.1:
			out.Consistency = "over"
		}
	}
	if p != nil && p.Knee != nil && g.Conc > p.Knee.Conc && *rps >= PlateauShare**p.Best.Med.RPS {
		out.Reading = "queueing"
		kw := float64(p.Knee.InFlight()) / *p.Knee.Med.RPS * 1000
		out.QueueShare = summary.F(math.Max(0, 1-kw/w))
	}
	return out
}
