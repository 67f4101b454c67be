package phase3

import (
	"strings"

	"csbench/internal/c10kplan"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// measureConnclients combines the connclient processes of an idle or lowrate
// cell (one process or many, on one client host or several): counts and
// rates add up, the setup time is the slowest process's, latency
// percentiles come from the processes' histograms merged bucket by bucket
// (connectFigures, idleFigures, lowrateFigures, mergeLatencies); the
// errors and drops are summed, each process and each client host keeps
// its own row (processRows, hostShares); the ramps are merged where
// connclient recorded them (rampFigures). It returns the clients it read.
func measureConnclients(r *rundir.Run, rc rundir.Cell, c *summary.Cell, f *Figures, plan *c10kplan.Plan, note func(string, ...any)) []*Client {
	clients, err := readClients(r.Dir, rc.Name)
	if err != nil {
		note("%v", err)
	}
	if len(clients) == 0 {
		if rc.Status == "ok" {
			fail(c, "no connclient result in raw/"+rc.Name+".client-*.json")
		}
		return nil
	}
	kind := rc.Params["scenario"]
	hosts := processHosts(plan)
	connectFigures(clients, &f.ConnectFigures)
	errs, total := sumErrors(clients)
	f.ErrorsTotal = summary.F(total)
	c.Details["errors"] = errs
	c.Details["processes"] = processRows(clients, hosts, kind)
	if shares := hostShares(clients, hosts); shares != nil {
		c.Details["client_hosts"] = shares
	}
	if kind == "idle" {
		idleFigures(clients, &f.LoadFigures, c.Details)
	} else {
		lowrateFigures(clients, &f.LoadFigures)
	}
	basis, merr := mergeLatencies(clients, kind, f)
	for _, e := range merr {
		note("%v", e)
	}
	c.Details["percentile_basis"] = basis
	if n := partial(clients); n > 0 {
		note("%d of %d connclient processes report a partial result (interrupted)", n, len(clients))
	}
	f.RampFigures = rampFigures(clients, c, note)
	return clients
}

// processHosts is the host of each process (the plan's sources, in
// order) when the plan spread the scenario over several client hosts;
// none with one.
func processHosts(plan *c10kplan.Plan) []string {
	if !multiHost(plan) {
		return nil
	}
	return plan.HostNames()
}

// sumOf sums get over the processes; nil when one has no value.
func sumOf(clients []*Client, get func(*Client) *float64) *float64 {
	t := 0.0
	for _, cl := range clients {
		v := get(cl)
		if v == nil {
			return nil
		}
		t += *v
	}
	return summary.F(t)
}

// largest is the largest of the processes' values; nil when none has one.
func largest(clients []*Client, get func(*Client) *float64) *float64 {
	var best *float64
	for _, cl := range clients {
		if v := get(cl); v != nil && (best == nil || *v > *best) {
			best = v
		}
	}
	return best
}

// count sums a count over the processes.
func count(clients []*Client, get func(*Client) int64) *float64 {
	t := int64(0)
	for _, cl := range clients {
		t += get(cl)
	}
	return summary.F(float64(t))
}

// connectFigures sets the connect phase's figures: counts and rates
// summed, the setup time the slowest process's, the connect percentiles
// the largest of the processes' (mergeLatencies replaces them by the
// merged ones where every process dumped its histogram).
func connectFigures(clients []*Client, f *ConnectFigures) {
	f.ConnectionsEstablished = count(clients, func(cl *Client) int64 { return cl.ConnectionsEstablished })
	f.ConnectionsFailed = count(clients, func(cl *Client) int64 { return cl.ConnectionsFailed })
	f.ConnectionsAliveEnd = sumOf(clients, func(cl *Client) *float64 { return cl.ConnectionsAliveEnd })
	f.SetupS = rounded(largest(clients, func(cl *Client) *float64 { return cl.SetupS }), 3)
	f.ConnectRateAchievedPerS = rounded(sumOf(clients, func(cl *Client) *float64 { return cl.ConnectRateAchieved }), 1)
	f.ConnectRateTargetPerS = sumOf(clients, func(cl *Client) *float64 { return cl.ConnectRateTarget })
	f.ConnectLatencyP50Ms = largest(clients, func(cl *Client) *float64 { return cl.ConnectLatencyP50Ms })
	f.ConnectLatencyP99Ms = largest(clients, func(cl *Client) *float64 { return cl.ConnectLatencyP99Ms })
	f.ConnectLatencyMaxMs = largest(clients, func(cl *Client) *float64 { return cl.ConnectLatencyMaxMs })
}

// idleFigures: the request on each connection (its p99 the largest of the
// processes', until merged) and the drops during the hold, by cause.
func idleFigures(clients []*Client, f *LoadFigures, details map[string]any) {
	f.RequestLatencyP99Ms = largest(clients, func(cl *Client) *float64 { return cl.RequestP99Ms })
	drops := map[string]float64{}
	for _, cl := range clients {
		for k, v := range cl.Drops {
			drops[k] += float64(v)
		}
	}
	details["drops"] = drops
}

// lowrateFigures: the schedule's requests and rate summed, its latency
// percentiles the largest of the processes' (until merged).
func lowrateFigures(clients []*Client, f *LoadFigures) {
	f.RequestsCompleted = sumOf(clients, func(cl *Client) *float64 { return cl.RequestsCompleted })
	f.RequestsFailed = sumOf(clients, func(cl *Client) *float64 { return cl.RequestsFailed })
	f.RPSAchieved = rounded(sumOf(clients, func(cl *Client) *float64 { return cl.RPSAchieved }), 1)
	if t, a := f.RPSTarget, f.RPSAchieved; t != nil && a != nil && *t > 0 {
		f.RPSAchievedRatio = summary.F(round(*a / *t, 4))
	}
	for _, x := range []struct {
		dst **float64
		get func(*Client) *float64
	}{
		{&f.LatencyP50Ms, func(cl *Client) *float64 { return cl.LatencyP50Ms }},
		{&f.LatencyP90Ms, func(cl *Client) *float64 { return cl.LatencyP90Ms }},
		{&f.LatencyP99Ms, func(cl *Client) *float64 { return cl.LatencyP99Ms }},
		{&f.LatencyP999Ms, func(cl *Client) *float64 { return cl.LatencyP999Ms }},
		{&f.LatencyMaxMs, func(cl *Client) *float64 { return cl.LatencyMaxMs }},
		{&f.ServiceLatencyP50Ms, func(cl *Client) *float64 { return cl.ServiceLatencyP50Ms }},
		{&f.ServiceLatencyP90Ms, func(cl *Client) *float64 { return cl.ServiceLatencyP90Ms }},
		{&f.ServiceLatencyP99Ms, func(cl *Client) *float64 { return cl.ServiceLatencyP99Ms }},
		{&f.ServiceLatencyP999Ms, func(cl *Client) *float64 { return cl.ServiceLatencyP999Ms }},
		{&f.ServiceLatencyMaxMs, func(cl *Client) *float64 { return cl.ServiceLatencyMaxMs }},
		{&f.SenderLagP99Ms, func(cl *Client) *float64 { return cl.SenderLagP99Ms }},
	} {
		*x.dst = largest(clients, x.get)
	}
}

// merges are the histograms a scenario's percentiles are merged from,
// into f's figures.
func merges(kind string, f *Figures) []merge {
	connect := merge{"connect", []percentile{{0.50, &f.ConnectLatencyP50Ms}, {0.99, &f.ConnectLatencyP99Ms}, {1, &f.ConnectLatencyMaxMs}}}
	switch kind {
	case "idle":
		return []merge{connect, {"request", []percentile{{0.99, &f.RequestLatencyP99Ms}}}}
	case "lowrate":
		return []merge{connect,
			{"latency", []percentile{{0.50, &f.LatencyP50Ms}, {0.90, &f.LatencyP90Ms}, {0.99, &f.LatencyP99Ms}, {0.999, &f.LatencyP999Ms}, {1, &f.LatencyMaxMs}}},
			{"service", []percentile{{0.50, &f.ServiceLatencyP50Ms}, {0.90, &f.ServiceLatencyP90Ms}, {0.99, &f.ServiceLatencyP99Ms}, {0.999, &f.ServiceLatencyP999Ms}, {1, &f.ServiceLatencyMaxMs}}},
			{"sender_lag", []percentile{{0.99, &f.SenderLagP99Ms}}},
		}
	}
	return nil
}

// mergeLatencies replaces the largest-of-processes percentiles by those
// of the processes' histograms merged, and says how the cell's
// percentiles were obtained (details "percentile_basis"): one process's
// own, merged, or, with several processes of which one dumped no
// histogram (results written before the dumps), the largest of theirs.
func mergeLatencies(clients []*Client, kind string, f *Figures) (string, []error) {
	basis := BasisOneProcess
	if len(clients) > 1 {
		basis = BasisMerged
	}
	var errs []error
	for _, g := range merges(kind, f) {
		ok, err := mergedPercentiles(clients, g.name, g.percentiles...)
		if err != nil {
			errs = append(errs, err)
		}
		if !ok && len(clients) > 1 {
			basis = BasisLargest
		}
	}
	return basis, errs
}

// sumErrors sums the processes' errors by cause, and in all.
func sumErrors(clients []*Client) (map[string]float64, float64) {
	errs, total := map[string]float64{}, 0.0
	for _, cl := range clients {
		for k, v := range cl.Errors {
			errs[k] += float64(v)
			total += float64(v)
		}
	}
	return errs, total
}

// partial counts the processes whose result is partial (interrupted).
func partial(clients []*Client) int {
	n := 0
	for _, cl := range clients {
		if cl.Status != "complete" {
			n++
		}
	}
	return n
}

// processLabel names process i (0-based) of the cell: its number, host
// (hosts: the plan's, in the processes' order; none with one client host)
// and source address.
func processLabel(clients []*Client, hosts []string, i int) string {
	l := "process " + itoa(i+1)
	var at []string
	if i < len(hosts) {
		at = append(at, hosts[i])
	}
	if s := clients[i].Source; s != nil {
		at = append(at, *s)
	}
	if len(at) == 0 {
		return l
	}
	return l + " (" + strings.Join(at, ", ") + ")"
}

// processRows is one row per process (details "processes"): its source,
// host, status, counts, setup time, memory and errors, and what its
// scenario adds (lowrate: rate and p99s; idle: the connections alive at
// the end and the drops; with the results that carry them, the ramp's
// retries and the hold's instants).
func processRows(clients []*Client, hosts []string, kind string) []map[string]any {
	var rows []map[string]any
	for i, cl := range clients {
		src := ""
		if cl.Source != nil {
			src = *cl.Source
		}
		p := map[string]any{"process": i + 1, "source": src, "status": cl.Status,
			"connections_target": cl.ConnectionsTarget, "connections_established": cl.ConnectionsEstablished,
			"setup_s": cl.SetupS, "client_rss_mb": cl.ClientRSSMB, "errors": cl.Errors}
		if i < len(hosts) {
			p["host"] = hosts[i]
		}
		if kind == "lowrate" {
			p["rps_target"], p["rps_achieved"] = cl.RPSTarget, cl.RPSAchieved
			p["latency_p99_ms"], p["service_latency_p99_ms"] = cl.LatencyP99Ms, cl.ServiceLatencyP99Ms
		} else {
			p["connections_alive_end"], p["first_drop_s"], p["drops"] = cl.ConnectionsAliveEnd, cl.FirstDropS, cl.Drops
		}
		if r := cl.Ramp; r != nil {
			p["connections_first_attempt_established"], p["connections_first_attempt_failed"] = r.FirstAttempt.Established, r.FirstAttempt.Failed
			p["connections_retried"], p["connect_rate_paced_min_per_s"], p["ramp_bound_reached"] = r.ConnectionsRetried, r.RatePacedMin, r.BoundReached
		}
		if cl.HoldBeganAtMs != nil || cl.HoldEndedAtMs != nil {
			p["hold_began_at_ms"], p["hold_ended_at_ms"] = cl.HoldBeganAtMs, cl.HoldEndedAtMs
		}
		rows = append(rows, p)
	}
	return rows
}

// hostShares is each client host's share (details "client_hosts"): its
// processes, connections and their memory (connclient's own VmRSS), per
// connection; nil without hosts (one client host).
func hostShares(clients []*Client, hosts []string) []map[string]any {
	type share struct {
		procs       int
		established int64
		rssMB       float64
		rssKnown    bool
	}
	by := map[string]*share{}
	var order []string
	for i, cl := range clients {
		if i >= len(hosts) {
			break
		}
		h := hosts[i]
		if by[h] == nil {
			by[h] = &share{rssKnown: true}
			order = append(order, h)
		}
		b := by[h]
		b.procs++
		b.established += cl.ConnectionsEstablished
		if cl.ClientRSSMB == nil {
			b.rssKnown = false
		} else {
			b.rssMB += *cl.ClientRSSMB
		}
	}
	if len(order) == 0 {
		return nil
	}
	var out []map[string]any
	for _, h := range order {
		b := by[h]
		e := map[string]any{"host": h, "processes": b.procs, "connections_established": b.established,
			"client_vmrss_mb": nil, "client_rss_per_conn_kb": nil}
		if b.rssKnown {
			e["client_vmrss_mb"] = round(b.rssMB, 1)
			if b.established > 0 {
				e["client_rss_per_conn_kb"] = round(b.rssMB*1024/float64(b.established), 1)
			}
		}
		out = append(out, e)
	}
	return out
}
