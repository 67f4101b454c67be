package phase4

import (
	"sort"
	"strconv"
	"time"

	"csbench/internal/clienthosts"
	"csbench/internal/hostdata"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// sumClientCounters: with several client hosts, every counter hostdata
// gives per host (client<k>_syn_retrans, client<k>_time_wait, ...) also as
// the client side's sum, counters "client" (client_syn_retrans,
// client_time_wait, ...: null when a host's is), the names a one-client
// run has. Nothing with one, or when the first client host has none.
func sumClientCounters(set *clienthosts.Set, counters map[string]hostdata.CounterFigures) {
	if set.N() < 2 {
		return
	}
	if _, ok := counters[set.Clients[0].Label]; !ok {
		return
	}
	each := make([]hostdata.CounterFigures, set.N())
	for i, cl := range set.Clients {
		each[i] = counters[cl.Label]
	}
	counters["client"] = summary.FieldWise(each, sumOf)
}

// fillClients puts every share's own figures into c.Clients (made by
// readTimings, one per client host, in order).
func fillClients(c *summary.Cell, shares []*share) {
	for i, h := range shares {
		if i >= len(c.Clients) {
			return
		}
		summary.PutFigures(c.Clients[i].Metrics, &h.fig)
	}
}

// readTimings starts c.Clients, one per client host with its share of the
// cell (params <label>.connections: the connects of a burst, the rate of
// a churn or accept cell) and when it ran (the timing `csb start-at` wrote
// beside its result, on a run that has one): its start lag, and the window
// in which every client was running into c.Overlap.
func readTimings(r *rundir.Run, set *clienthosts.Set, rc rundir.Cell, c *summary.Cell) []string {
	var notes []string
	var timings []clienthosts.Timing
	timed := true
	for _, cl := range set.Clients {
		cc := summary.ClientCell{Label: cl.Label, Metrics: map[string]*float64{}}
		if n, err := strconv.ParseFloat(rc.Params[cl.Label+".connections"], 64); err == nil {
			cc.Connections = &n
		}
		path := set.RawPath(r.Dir, "", cl.Label, rc.Name+".json")
		t, more := summary.ClientTiming(set, rc, path, "connclient", &cc)
		notes = append(notes, more...)
		if t == nil {
			timed = false
		} else {
			timings = append(timings, *t)
		}
		c.Clients = append(c.Clients, cc)
	}
	if !timed {
		return notes
	}
	w, err := clienthosts.Overlap(set.Clients, timings, 0)
	if err != nil {
		return append(notes, "cell "+rc.Name+": "+err.Error())
	}
	c.Overlap = &summary.Overlap{FromMs: w.FromMs, ToMs: w.ToMs, S: round(w.S(), 3),
		StartSpreadMs: round(w.StartSpreadMs, 1), EndSpreadMs: round(w.EndSpreadMs, 1)}
	for i, sp := range w.Spans {
		c.Clients[i].StartMs, c.Clients[i].EndMs = summary.F(sp.StartMs), summary.F(sp.EndMs)
	}
	return notes
}

// TWPoint is one second of TIME_WAIT on the hosts (sar), seconds from the
// cell's start; -1 where a host had no sample. With several client hosts
// Clients holds each one's and Client is their sum (-1 unless every client
// host had a sample in that second); with one, Clients is empty.
type TWPoint struct {
	T       float64        `json:"t_s"`
	Client  int            `json:"client"`
	Server  int            `json:"server"`
	Clients map[string]int `json:"clients,omitempty"`
}

// timeWait adds the TIME_WAIT peaks over the cell and its per-second
// series (details "time_wait") from sar's net-sock samples of each host:
// each client host's own peak (its ports are its own) into its share, the
// server's into f.ServerTimeWaitPeak; f.ClientTimeWaitPeak is the one
// client host's peak, or with several the peak of their per-second sum
// (the client side's TIME_WAIT altogether, as the predicted figure is).
func timeWait(h *hostdata.Hosts, rc rundir.Cell, f *Figures, details map[string]any, shares []*share) {
	series := map[float64]map[string]int{}
	labels := make([]string, 0, len(shares)+1)
	for _, s := range shares {
		labels = append(labels, s.label)
	}
	for i, host := range append(labels, "server") {
		r := h.Sadf[host]
		if r == nil {
			continue
		}
		peak := -1
		for _, s := range r.Samples {
			if s.Sock == nil || s.Time.Before(rc.Start) || s.Time.After(rc.End.Add(time.Second)) {
				continue
			}
			t := round(s.Time.Sub(rc.Start).Seconds(), 0)
			if series[t] == nil {
				series[t] = map[string]int{}
			}
			series[t][host] = s.Sock.TCPTW
			peak = max(peak, s.Sock.TCPTW)
		}
		if peak < 0 {
			continue
		}
		if host == "server" {
			f.ServerTimeWaitPeak = summary.F(float64(peak))
		} else {
			shares[i].fig.ClientTimeWaitPeak = summary.F(float64(peak))
		}
	}
	pts := make([]TWPoint, 0, len(series))
	sumPeak := -1
	for t, vals := range series {
		p := TWPoint{T: t, Client: -1, Server: -1}
		if v, ok := vals["server"]; ok {
			p.Server = v
		}
		if len(labels) == 1 {
			if v, ok := vals[labels[0]]; ok {
				p.Client = v
			}
		} else {
			sum, all := 0, true
			for _, l := range labels {
				v, ok := vals[l]
				if !ok {
					all = false
					continue
				}
				if p.Clients == nil {
					p.Clients = map[string]int{}
				}
				p.Clients[l] = v
				sum += v
			}
			if all {
				p.Client = sum
				sumPeak = max(sumPeak, sum)
			}
		}
		pts = append(pts, p)
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].T < pts[j].T })
	details["time_wait"] = pts
	switch {
	case len(labels) == 1:
		f.ClientTimeWaitPeak = shares[0].fig.ClientTimeWaitPeak
	case sumPeak >= 0:
		f.ClientTimeWaitPeak = summary.F(float64(sumPeak))
	}
}
