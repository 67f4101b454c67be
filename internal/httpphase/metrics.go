package httpphase

import (
	"fmt"
	"strconv"

	"csbench/internal/decimal"
	"csbench/internal/hostdata"
	"csbench/internal/kv"
	"csbench/internal/rundir"
	"csbench/internal/sizes"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// Measure fills a cell's metrics and details from its client hosts' raw
// output (one or more: a list of one is the case of one client) and the
// hosts' monitors (CPU, processes, the NICs' counters, nstat, sockstat);
// basis is what link_utilization compares with. Each client's figures are
// its own run's; the cell's are their merge (MergeLoads: one client's pass
// unchanged). It returns notes for the summary (disagreements, missing
// data). A cell whose output cannot be read, or that got no response
// carrying the payload, becomes "failed" with the reason.
func Measure(r *rundir.Run, s *summary.Summary, hosts *hostdata.Hosts, rc rundir.Cell, c *summary.Cell, basis Basis) []string {
	var f Figures
	var clients []ClientFigures
	notes := measure(r, s, hosts, rc, c, basis, &f, &clients)
	summary.PutFigures(c.Metrics, &f)
	for i := range clients {
		summary.PutFigures(c.Clients[i].Metrics, &clients[i])
	}
	return notes
}

// measure is Measure's work: it fills f and each client's figures
// (aligned with c.Clients).
func measure(r *rundir.Run, s *summary.Summary, hosts *hostdata.Hosts, rc rundir.Cell, c *summary.Cell, basis Basis, f *Figures, clients *[]ClientFigures) []string {
	var notes []string
	f.CPU, f.NIC = hosts.CPU(rc), hosts.NIC(rc, NICs(s))
	f.Procs = map[string]hostdata.ProcFigures{"server": hosts.Procs(rc, "server/csb-server")}
	counters, problems := hosts.Counters(rc)
	f.Counters = counters
	for _, p := range problems {
		notes = append(notes, "cell "+rc.Name+": "+p)
	}
	c.Trust = trust.Disturb(hosts, rc, s.Lab, trust.Threshold(r))
	// The warm-up (WARMUP) ran before the cell: its whole window counts.
	c.Trust = trust.Steady(c.Trust, hosts, rc, trust.Sender{Host: "server", NIC: s.Hosts["server"].NIC}, 0, trust.CVThreshold(r))
	loads, more := readClients(r, s, hosts, rc, c, f, clients)
	notes = append(notes, more...)
	if !rc.Measured() || loads == nil {
		return notes
	}
	body, err := sizes.ParseSize(rc.Params["payload"])
	if err != nil {
		fail(c, fmt.Sprintf("payload %q: %v", rc.Params["payload"], err))
		return notes
	}
	for i, l := range loads {
		lf, more := loadFigures(l, body)
		(*clients)[i].LoadFigures, (*clients)[i].MoreLatencyFigures = lf, &more
	}
	agg := MergeLoads(loads)
	f.LoadFigures, f.MoreLatencyFigures = loadFigures(agg, body)
	if basis.Mbps != nil && f.ThroughputMbps != nil {
		f.LinkUtilization = summary.F(decimal.Round(*f.ThroughputMbps / *basis.Mbps, 3))
	}
	if agg.Dist != nil || len(loads) == 1 {
		c.LatencyMerge = summary.LatencyMergeExact
	} else {
		c.LatencyMerge = summary.LatencyMergeNone
	}
	f.ErrorFigures = errorFigures(agg)
	errs := map[string]any{}
	for _, k := range kv.SortedKeys(agg.Errors) {
		errs[k] = agg.Errors[k]
	}
	codes := map[string]any{}
	for _, k := range kv.SortedKeys(agg.StatusCodes) {
		codes[k] = agg.StatusCodes[k]
	}
	c.Details = map[string]any{
		"loadgen": agg.Tool, "status_codes": codes, "errors": errs, "throughput_basis": agg.WireBasis,
	}
	if agg.Protocol != "" {
		c.Details["protocol"] = agg.Protocol
	}
	labels := make([]string, len(c.Clients))
	for i, cl := range c.Clients {
		labels[i] = cl.Label
	}
	if why := CellVerdict(r.Settings, rc, loads, labels); why != "" {
		fail(c, why)
	}
	return notes
}

// errorFigures is the merged load's errors by kind, those its tool counts.
func errorFigures(agg *Load) ErrorFigures {
	e := agg.Errors
	switch agg.Tool {
	case "wrk":
		return ErrorFigures{ErrorsConnect: summary.F(e["connect"]), ErrorsRead: summary.F(e["read"]),
			ErrorsWrite: summary.F(e["write"]), ErrorsTimeout: summary.F(e["timeout"]), ErrorsStatus: summary.F(e["status"])}
	case "h2load":
		// Its streams closed in error are in errors_total and details.
		return ErrorFigures{ErrorsStatus: summary.F(e["status"]), ErrorsTimeout: summary.F(e["timeout"])}
	default:
		return ErrorFigures{ErrorsStatus: summary.F(e["status"]), ErrorsDeadlineAborted: summary.F(agg.Aborted)}
	}
}

// NICs maps each monitored host to its benchmark interface: "server",
// "client", and with N clients "client1", ... from run.env.
func NICs(s *summary.Summary) map[string]string {
	nics := map[string]string{"server": s.Hosts["server"].NIC, "client": s.Hosts["client"].NIC}
	if s.Clients != nil {
		for _, h := range s.Clients.Hosts {
			nics[h.Label] = h.NIC
		}
	}
	return nics
}

func fail(c *summary.Cell, msg string) {
	c.Status = "failed"
	c.Error = &msg
}

// Param returns a cell parameter as a number, or NaN.
func Param(c *summary.Cell, key string) float64 {
	v, err := strconv.ParseFloat(c.Params[key], 64)
	if err != nil {
		return nan
	}
	return v
}
