package phase4

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"time"

	"csbench/internal/clienthosts"
	"csbench/internal/connresult"
	"csbench/internal/decimal"
	"csbench/internal/hostdata"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// ReportName is the report's file name in the run directory.
const ReportName = "Report_04-connections.md"

// ErrorPctMax is the share of failed connections below which an accept
// step counts as sustained (the issue's "errors under 1 %").
const ErrorPctMax = 1.0

// Phase implements cli.Phase for 04-connections.
type Phase struct{}

// Verdict codes (summary.json verdict.code; docs/verdicts.md): one word
// each, for readers to decide by. Word gives a code's words for people
// (verdict.bound, the reports).
const (
	BoundPorts    = "ephemeral_ports"
	BoundBacklog  = "listen_backlog"
	BoundRate     = "rate_not_kept"
	BoundLatency  = "latency_bound"
	BoundNone     = "none"
	BoundNoResult = "no_result"
)

var words = map[string]string{
	BoundPorts: "ephemeral ports", BoundBacklog: "listen backlog", BoundRate: "rate not kept",
	BoundLatency: "latency bound", BoundNone: "none", BoundNoResult: "no result",
}

// Word is a verdict code in words (the code itself when it has none).
func Word(code string) string {
	if w, ok := words[code]; ok {
		return w
	}
	return code
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

var round = decimal.Round

func intp(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Kind is a cell's scenario: backlog, accept or churn.
func Kind(c *summary.Cell) string { return c.Params["scenario"] }

// Summarize reads every cell's raw files and the monitors.
func (Phase) Summarize(r *rundir.Run, s *summary.Summary) error {
	hosts := hostdata.Load(r.Dir)
	for _, p := range hosts.Problems {
		s.Notes = append(s.Notes, "monitor data: "+p)
	}
	set := s.ClientSet()
	for _, rc := range r.Cells {
		c := summary.NewCell(rc)
		var f Figures
		s.Notes = append(s.Notes, measure(r, set, hosts, rc, &c, &f)...)
		summary.PutFigures(c.Metrics, &f)
		c.Trust = trust.Disturb(hosts, rc, s.Lab, trust.Threshold(r))
		c.Verdict = verdict(&c, &f)
		s.Cells = append(s.Cells, c)
	}
	return nil
}

// share is one client host's part of a cell: its settings read before the
// cell, its connclient result, its prediction and its own figures.
type share struct {
	label    string
	facts    Facts
	factsErr error
	pred     *Prediction
	fig      ClientFigures
	// timeWait is its host's sockets in TIME_WAIT after the cell
	// (sockstat), a count: what its ports left are counted from.
	timeWait *float64
}

// measure fills a cell's figures f from every client host's connclient
// result, merged (mergeChurn, mergeBurst: one host's result is the cell's,
// unchanged), each host's own figures in c.Clients; the port prediction
// per host and combined (Combine); the monitors of every host.
func measure(r *rundir.Run, set *clienthosts.Set, hosts *hostdata.Hosts, rc rundir.Cell, c *summary.Cell, f *Figures) []string {
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, "cell "+rc.Name+": "+fmt.Sprintf(format, a...)) }
	details := map[string]any{}
	c.Details = details
	f.CPU = hosts.CPU(rc)
	var problems []string
	f.Counters, problems = hosts.Counters(rc)
	for _, p := range problems {
		note("%s", p)
	}
	sumClientCounters(set, f.Counters)
	srvName := rc.Params["server"]
	if srvName == "" {
		srvName = "csb-server-" + rc.Name
	}
	f.Procs = map[string]hostdata.ProcFigures{"server": hosts.Procs(rc, "server/"+srvName)}
	shares, errC := readShares(r, set, hosts, rc, f)
	defer fillClients(c, shares)
	timeWait(hosts, rc, f, details, shares)

	srv, errS := ReadFacts(filepath.Join(r.Dir, "raw", rc.Name+".facts.server.env"))
	if errC == nil && errS == nil {
		if v, err := strconv.Atoi(srv["net.core.somaxconn"]); err == nil {
			f.ServerSomaxconn = summary.F(float64(v))
		}
		if v, err := strconv.Atoi(srv["net.ipv4.tcp_abort_on_overflow"]); err == nil {
			f.ServerAbortOnOverflow = summary.F(float64(v))
		}
		f.ClientTimeWaitBefore = sumOf(each(shares, func(h *share) *float64 { return h.fig.ClientTimeWaitBefore }))
	} else if rc.Status != "refused" {
		note("no settings read before the cell: %v", firstErr(errC, errS))
	}
	notes = append(notes, readTimings(r, set, rc, c)...)

	if rc.Status == "refused" {
		return notes
	}
	churns, bursts, ok := readResults(r, set, rc, c, shares)
	if !ok {
		return notes
	}
	var mr *mergeResult
	switch {
	case len(churns) > 0:
		var res *connresult.ChurnResult
		res, mr = mergeChurn(churns)
		churn(res, &f.ResultFigures, &f.CellResultFigures, details)
		if errC == nil && errS == nil {
			for _, n := range predictCell(r, shares, churns, srv, f, details) {
				note("%s", n)
			}
		}
		cpuPerConn(f, shares, res.TLS != nil)
		if Kind(c) == "accept" {
			f.AcceptP99BoundMs = summary.F(num(rc.Params["p99_bound_ms"]))
		}
	case len(bursts) > 0:
		var res *connresult.BurstResult
		res, mr = mergeBurst(bursts)
		burst(res, &f.ResultFigures, &f.CellResultFigures, details)
		f.Backlog = summary.F(num(rc.Params["backlog"]))
		if d, err := time.ParseDuration(rc.Params["accept_every"]); err == nil && d > 0 {
			every := float64(d) / 1e6
			f.AcceptEveryMs = summary.F(every)
			f.PredictedListenOverflow = PredictOverflow(float64(res.ConnsTarget), num(rc.Params["backlog"]), res.IssueS, every)
		}
	}
	if mr != nil && set.N() > 1 {
		c.LatencyMerge = summary.LatencyMergeExact
		if !mr.exactLatency() {
			c.LatencyMerge = summary.LatencyMergeNone
		}
		if len(mr.Upper) > 0 {
			details["upper_bound_metrics"] = mr.Upper
		}
		for _, p := range mr.Problems {
			note("latency not merged exactly: %s", p)
		}
	}
	return notes
}

// readShares starts each client host's share of a cell: its connclient's
// CPU and memory (pidstat), its host's CPU and TIME_WAIT after the cell
// (from f), its settings before the cell (raw/<cell>.facts.<client>.env);
// the cell's client processes (f.Procs "client": client_proc_cpu_pct,
// client_rss_mb) are the hosts' added up. It returns the first settings
// file that could not be read.
func readShares(r *rundir.Run, set *clienthosts.Set, hosts *hostdata.Hosts, rc rundir.Cell, f *Figures) ([]*share, error) {
	shares := make([]*share, set.N())
	var errC error
	for i, cl := range set.Clients {
		h := &share{label: cl.Label}
		cp := hosts.Procs(rc, cl.Label+"/connclient-"+rc.Name)
		h.fig.ClientProcCPUPct, h.fig.ClientRSSMB = cp.CPUPct, cp.RSSMB
		h.timeWait = f.Counters[cl.Label].TimeWait
		h.fig.HostCPUPct, h.fig.HostCPUMaxCorePct = f.CPU[cl.Label].Pct, f.CPU[cl.Label].MaxCorePct
		h.facts, h.factsErr = ReadFacts(filepath.Join(r.Dir, "raw", rc.Name+".facts."+cl.Label+".env"))
		if h.factsErr != nil {
			errC = firstErr(errC, h.factsErr)
		} else if tw := h.facts.TimeWait(); tw >= 0 {
			h.fig.ClientTimeWaitBefore = summary.F(float64(tw))
		}
		shares[i] = h
	}
	f.Procs["client"] = hostdata.ProcFigures{
		CPUPct: sumOf(each(shares, func(h *share) *float64 { return h.fig.ClientProcCPUPct })),
		RSSMB:  sumOf(each(shares, func(h *share) *float64 { return h.fig.ClientRSSMB })),
	}
	return shares, errC
}

// readResults reads every client host's connclient result of a cell
// (set.RawPath: raw/<client>/<cell>.json, or raw/<cell>.json in a run of
// one client from before) into its share's figures. It returns the churn
// or the burst results, one per host, or false (the cell failed, naming
// the file) when one is missing, malformed, of another mode or of another
// mode than the other hosts'.
func readResults(r *rundir.Run, set *clienthosts.Set, rc rundir.Cell, c *summary.Cell, shares []*share) ([]*connresult.ChurnResult, []*connresult.BurstResult, bool) {
	var churns []*connresult.ChurnResult
	var bursts []*connresult.BurstResult
	for _, h := range shares {
		path := set.RawPath(r.Dir, "", h.label, rc.Name+".json")
		b, err := rundir.ReadFile(path)
		if err != nil {
			c.SetRawError(r.Dir, path, err)
			return nil, nil, false
		}
		res, err := connresult.DecodeResult(path, b)
		if err != nil {
			c.SetRawError(r.Dir, path, err)
			return nil, nil, false
		}
		// A share keeps none of the cell's own result figures.
		switch {
		case res.Churn != nil:
			churns = append(churns, res.Churn)
			churn(res.Churn, &h.fig.ResultFigures, &CellResultFigures{}, map[string]any{})
		case res.Burst != nil:
			bursts = append(bursts, res.Burst)
			burst(res.Burst, &h.fig.ResultFigures, &CellResultFigures{}, map[string]any{})
		default:
			c.SetRawError(r.Dir, path, fmt.Errorf("connclient mode %q is not one of Phase 4", res.Common.Mode))
			return nil, nil, false
		}
		if len(churns) > 0 && len(bursts) > 0 {
			c.SetRawError(r.Dir, path, fmt.Errorf("connclient churn on some client hosts of the cell, burst on others"))
			return nil, nil, false
		}
	}
	return churns, bursts, true
}

// predictCell predicts each client host's share of a churn cell from its
// own settings and its share of the rate (churns, one per host), then the
// cell (Combine) into f and details "prediction" (with several hosts each
// one's in "predictions"). It returns why a host has none (then the cell
// has none either).
func predictCell(r *rundir.Run, shares []*share, churns []*connresult.ChurnResult, srv Facts, f *Figures, details map[string]any) []string {
	var notes []string
	preds := make([]*Prediction, 0, len(shares))
	labels := make([]string, len(shares))
	for i, h := range shares {
		labels[i] = h.label
		in := Input{Client: h.facts, Server: srv, Close: churns[i].Close, RatePerS: float64(churns[i].RateTargetPerS),
			DurationS: churns[i].DurationS, Sources: 1, Lab: r.Get("lab")}
		p, err := Predict(in)
		if err != nil {
			who := ""
			if len(shares) > 1 {
				who = h.label + ": "
			}
			notes = append(notes, fmt.Sprintf("%sno prediction: %v", who, err))
			continue
		}
		h.pred = p
		setPrediction(&h.fig.PredictionFigures, p, h.timeWait)
		preds = append(preds, p)
	}
	if len(preds) < len(shares) {
		return notes
	}
	p := Combine(labels, preds, srv)
	details["prediction"] = p
	setPrediction(&f.PredictionFigures, p, f.Counters["client"].TimeWait)
	f.PredictedServerTimeWait = summary.F(float64(p.ServerTimeWait))
	if len(shares) > 1 {
		per := map[string]*Prediction{}
		for _, h := range shares {
			per[h.label] = h.pred
		}
		details["predictions"] = per
	}
	return notes
}

// cpuPerConn: the processes' CPU over the connections completed per
// second, the server's over the cell's merged rate (every host's
// connections), each client host's connclient over its own.
func cpuPerConn(f *Figures, shares []*share, tls bool) {
	if v, rate := f.Procs["server"].CPUPct, f.RateAchievedPerS; v != nil && rate != nil && *rate > 0 {
		f.ServerCPUUsPerConn = summary.F(round(*v/100*1e6 / *rate, 1))
		if tls {
			f.ServerCPUUsPerHandshake = f.ServerCPUUsPerConn
		}
	}
	for _, h := range shares {
		if v, rate := h.fig.ClientProcCPUPct, h.fig.RateAchievedPerS; v != nil && rate != nil && *rate > 0 {
			h.fig.ClientCPUUsPerConn = summary.F(round(*v/100*1e6 / *rate, 1))
		}
	}
}

// setPrediction sets a prediction's figures; ports left is the ports less
// the client TIME_WAIT after the cell (timeWait, a count; none without it).
func setPrediction(f *PredictionFigures, p *Prediction, timeWait *float64) {
	f.PredictedSustainableRatePerS = p.SustainableRatePerS
	f.PredictedCellRatePerS = summary.F(p.CellRatePerS)
	f.PredictedExhaustS = p.ExhaustS
	f.PredictedEAddrNotAvail = summary.F(b2f(p.EAddrNotAvail))
	f.PredictedClientTimeWait = summary.F(float64(p.ClientTimeWait))
	f.Ports = summary.F(float64(p.Ports))
	if timeWait != nil {
		f.PortsLeft = summary.F(math.Max(0, float64(p.Ports)-*timeWait))
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// errorsDetail puts a result's failures by cause (connclient's errors,
// by cause) into details "errors" and the causes the figures name into f.
func errorsDetail(errs map[string]uint64, f *ResultFigures, details map[string]any) {
	e := map[string]float64{}
	for k, v := range errs {
		e[k] = float64(v)
	}
	details["errors"] = e
	f.ErrorsEAddrNotAvail = summary.F(e["eaddrnotavail"])
	f.ErrorsEConnReset = summary.F(e["econnreset"])
	f.ErrorsEConnRefused = summary.F(e["econnrefused"])
	f.ErrorsETimedOut = summary.F(e["etimedout"])
}

// churn sets a churn result's figures: those a share has too into f, the
// cell's own into x.
func churn(res *connresult.ChurnResult, f *ResultFigures, x *CellResultFigures, details map[string]any) {
	f.RateTargetPerS = summary.F(float64(res.RateTargetPerS))
	f.RateAchievedPerS = res.RateAchievedPerS
	if res.RateAchievedPerS != nil {
		f.RateAchievedRatio = summary.F(round(*res.RateAchievedPerS/float64(res.RateTargetPerS), 4))
	}
	f.ConnectionsTarget = summary.F(float64(res.ConnsScheduled))
	f.ConnectionsCompleted = summary.F(float64(res.ConnsCompleted))
	f.ConnectionsFailed = summary.F(float64(res.ConnsFailed))
	if res.ConnsScheduled > 0 {
		f.ErrorPct = summary.F(round(100*float64(res.ConnsFailed)/float64(res.ConnsScheduled), 2))
	}
	f.FirstEAddrNotAvailS = res.FirstAddrNotAvail
	f.ConnectLatencyP50Ms, f.ConnectLatencyP99Ms, x.ConnectLatencyMaxMs = res.ConnectLatencyP50Ms, res.ConnectLatencyP99Ms, res.ConnectLatencyMaxMs
	f.LatencyP50Ms, f.LatencyP99Ms, f.LatencyMaxMs = res.LatencyP50Ms, res.LatencyP99Ms, res.LatencyMaxMs
	f.ScheduleLagP99Ms = res.ScheduleLagP99Ms
	errorsDetail(res.Errors, f, details)
	details["close"] = res.Close
	details["per_second"] = res.PerSecond
	if t := res.TLS; t != nil {
		f.TLSHandshakesFull = summary.F(float64(t.HandshakesFull))
		f.TLSHandshakesResumed = summary.F(float64(t.HandshakesResumed))
		x.TLSHandshakeFullP50Ms, x.TLSHandshakeFullP99Ms = t.HandshakeFullP50Ms, t.HandshakeFullP99Ms
		x.TLSHandshakeResumedP50Ms, x.TLSHandshakeResumedP99Ms = t.HandshakeResumeP50, t.HandshakeResumeP99
		if t.First != nil {
			details["tls"] = t.First
		}
	}
}

// burst sets a burst result's figures: those a share has too into f, the
// cell's own into x.
func burst(res *connresult.BurstResult, f *ResultFigures, x *CellResultFigures, details map[string]any) {
	f.ConnectionsTarget = summary.F(float64(res.ConnsTarget))
	f.ConnectionsCompleted = summary.F(float64(res.ConnsCompleted))
	f.ConnectionsFailed = summary.F(float64(res.ConnsFailed))
	f.ConnectionsNeverUp = summary.F(float64(res.ConnsNeverUp))
	x.BurstIssueS = summary.F(res.IssueS)
	if res.ConnsTarget > 0 {
		f.ErrorPct = summary.F(round(100*float64(res.ConnsFailed)/float64(res.ConnsTarget), 2))
	}
	f.ConnectLatencyP50Ms, f.ConnectLatencyP99Ms, x.ConnectLatencyMaxMs = res.ConnectLatencyP50, res.ConnectLatencyP99, res.ConnectLatencyMax
	f.LatencyP50Ms, f.LatencyP99Ms, f.LatencyMaxMs = res.LatencyP50Ms, res.LatencyP99Ms, res.LatencyMaxMs
	f.LatencyUnder1s = summary.F(float64(res.Steps.Under1s))
	f.LatencyFrom1s = summary.F(float64(res.Steps.From1s))
	f.LatencyFrom3s = summary.F(float64(res.Steps.From3s))
	f.LatencyFrom7s = summary.F(float64(res.Steps.From7sUp))
	errorsDetail(res.Errors, f, details)
}
