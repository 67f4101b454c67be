// Package phase5 summarizes and reports Phase 5 (05-capacity): per payload
// the steps of the open-model search (one cell each), the search replayed
// from their raw files (internal/capacity, as the runner asked it), the
// capacity found and, with the ground-truth server, its truth.
package phase5

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"csbench/internal/capacity"
	"csbench/internal/decimal"
	"csbench/internal/hostdata"
	"csbench/internal/httpphase"
	"csbench/internal/rundir"
	"csbench/internal/summary"
	"csbench/internal/trust"
)

// Phase implements cli.Phase for 05-capacity.
type Phase struct{}

// LagMaxMs is the engine lag p99 above which a step is client-bound (the
// runner's csb capacity-next uses the same default).
const LagMaxMs = 1.0

// Summarize fills one cell per step and the run's capacity per payload.
func (Phase) Summarize(r *rundir.Run, s *summary.Summary) error {
	hosts := hostdata.Load(r.Dir)
	for _, p := range hosts.Problems {
		s.Notes = append(s.Notes, "monitor data: "+p)
	}
	search, err := searchOf(r)
	if err != nil {
		s.Notes = append(s.Notes, "the search cannot be replayed: "+err.Error())
	}
	byPayload := map[string][]capacity.Step{}
	var order []string
	for _, rc := range r.Cells {
		c := summary.NewCell(rc)
		size := rc.Params["payload"]
		st, ok := measure(r, hosts, httpphase.NICs(s), rc, search, s.SharedCPUs(), &c)
		if !rc.Start.IsZero() && rc.End.After(rc.Start) {
			st.Seconds = rc.End.Sub(rc.Start).Seconds()
		}
		c.Trust = trust.Disturb(hosts, rc, s.Lab, trust.Threshold(r))
		if rc.Params["reason"] == "probe" && ok {
			c.Verdict = &summary.Verdict{Code: "probe", Bound: "probe", Evidence: fmt.Sprintf("a probe at full speed: %.0f req/s achieved; the search starts at half of it", st.AchievedRPS)}
		}
		// As the runner did: a step whose cell failed ended the search
		// and is not one of its steps (its figures are still shown); nor
		// is a probe.
		if ok && rc.Status == "ok" && rc.Params["reason"] != "probe" {
			if _, seen := byPayload[size]; !seen {
				order = append(order, size)
			}
			byPayload[size] = append(byPayload[size], st)
		}
		s.Cells = append(s.Cells, c)
	}
	if err != nil {
		return nil
	}
	truth := readTruth(r.Dir)
	for _, size := range order {
		search := search
		if v := num(r.Get("capacity.start_rps." + size)); v > 0 {
			search.StartRPS = v
		}
		d := search.Next(byPayload[size])
		res := summary.Capacity{Payload: size, Steps: len(byPayload[size]), SLOPercentile: search.SLO.Percentile,
			SLOLatencyMs: search.SLO.LatencyMs, SLOErrorsPct: search.SLO.ErrorsPct, Done: d.Done,
			StartRPS: summary.F(search.StartRPS), QueueGrowthMaxMsPerS: summary.F(search.QueueGrowthMaxMsPerS())}
		if v := num(r.Get("capacity.probe_rps." + size)); v > 0 {
			res.ProbeRPS = summary.F(v)
		}
		if v := num(r.Get("capacity.phase2_max_rps." + size)); v > 0 {
			res.Phase2MaxRPS, res.Phase2Run = summary.F(v), filepath.Base(r.Get("capacity.phase2_run."+size))
		}
		if d.Done {
			res.CapacityRPS, res.LowRPS, res.HighRPS = fp(d.CapacityRPS), fp(d.LowRPS), fp(d.HighRPS)
			res.Bound, res.Says = d.Bound, d.Says
		} else {
			res.Bound, res.Says = "cut_short", fmt.Sprintf("the search ended before it was done (next step: %d req/s, %s)", d.RPS, d.Reason)
			lo, _ := search.Bracket(byPayload[size])
			res.LowRPS = fp(lo)
		}
		truth := truth
		if w := windowTruth(r.Dir, s, size, res); w != nil && truth != nil {
			truth = w
		}
		res.Cause, res.CauseEvidence = cause(s, size, res, truth)
		if res.CapacityRPS != nil {
			for i := range s.Cells {
				f := figuresOf(&s.Cells[i])
				if s.Cells[i].Params["payload"] == size && summary.Val(f.OfferedRPS) == *res.CapacityRPS && f.LatencyP50Ms != nil {
					res.LittleInFlight = summary.F(decimal.Round(*res.CapacityRPS**f.LatencyP50Ms/1000, 1))
				}
			}
		}
		if truth != nil && truth.CapacityRPS != nil {
			res.TruthRPS = summary.F(decimal.Round(*truth.CapacityRPS, 1))
			res.TruthHoldMeanMs = truth.HoldMeanMs
			res.TruthBasis = "run"
			if truth.Window {
				res.TruthBasis = "capacity_steps"
			}
			if res.CapacityRPS != nil {
				res.TruthErrorPct = summary.F(decimal.Round(100*(*res.CapacityRPS / *truth.CapacityRPS - 1), 2))
				if over := 100 * (*res.CapacityRPS / *truth.CapacityRPS - 1); over > search.ResolutionPct {
					s.Faults = append(s.Faults, summary.Fault{Code: summary.FaultAboveTruth, Evidence: fmt.Sprintf(
						"%s: the capacity found, %.0f req/s, is %.1f %% above the ground truth's %.0f req/s (more than the search's resolution, %g %%)",
						size, *res.CapacityRPS, over, *truth.CapacityRPS, search.ResolutionPct)})
				}
			}
		}
		res.BoundDisturbed = boundDisturbed(s.Cells, size, res.HighRPS)
		if res.Bound == capacity.ServerFailed || res.Bound == capacity.ServerErrors {
			s.Faults = append(s.Faults, summary.Fault{Code: map[string]string{capacity.ServerFailed: summary.FaultServerFailed,
				capacity.ServerErrors: summary.FaultServerErrors}[res.Bound], Evidence: size + ": " + res.Says})
		}
		s.Capacity = append(s.Capacity, res)
	}
	return nil
}

// failingAt is the steps of size at rate high (the bracket's failing
// rate, nil for none) that failed, in order.
func failingAt(cells []summary.Cell, size string, high *float64) []*summary.Cell {
	var out []*summary.Cell
	for i := range cells {
		c := &cells[i]
		if high != nil && c.Params["payload"] == size && c.Verdict != nil && c.Verdict.Code != capacity.Pass &&
			summary.Val(figuresOf(c).OfferedRPS) == *high {
			out = append(out, c)
		}
	}
	return out
}

// boundDisturbed is the names of the failing steps at high (failingAt)
// whose cell was marked disturbed.
func boundDisturbed(cells []summary.Cell, size string, high *float64) []string {
	var out []string
	for _, c := range failingAt(cells, size, high) {
		if c.Trust != nil && c.Trust.Disturbed {
			out = append(out, c.Name)
		}
	}
	return out
}

// ServerBusy is the server host's CPU share (mean or busiest core) at
// which a failing step is the server's CPU; LinkFull the share of the
// link's rate its sent frames reached for the link.
const (
	ServerBusy = 90.0
	LinkFull   = 0.9
)

// cause is what the failing step above the capacity ran out of, a code
// (server_cpu, link, slots, errors, client, unexplained; "" when no step
// failed above it) and the evidence, from the step's host counters.
func cause(s *summary.Summary, size string, res summary.Capacity, truth *truthStats) (string, string) {
	switch res.Bound {
	case "client_bound":
		return "client", res.Says
	case "latency", "errors", "achieved", "queue", "unreadable":
	default:
		return "", ""
	}
	var m *Figures
	if failed := failingAt(s.Cells, size, res.HighRPS); len(failed) > 0 {
		f := figuresOf(failed[0])
		m = &f
	}
	if m == nil {
		return "unexplained", "the failing step's figures could not be read"
	}
	at := "at " + decimal.Format(res.HighRPS, 0) + " req/s"
	if res.Bound == "errors" {
		return "errors", fmt.Sprintf("%s %% of the requests failed %s", decimal.Format(m.ErrorsPct, 3), at)
	}
	srv, nic := m.CPU["server"], m.NIC["server"]
	cpu, core, tx := summary.Val(srv.Pct), summary.Val(srv.MaxCorePct), summary.Val(nic.TxMbps)
	hosts := fmt.Sprintf("%s the server host's CPU was %s %% busy (its busiest core %s %%), its NIC sent %s Mbit/s of the link's %s", at,
		decimal.Format(srv.Pct, 0), decimal.Format(srv.MaxCorePct, 0), decimal.Format(nic.TxMbps, 0), decimal.Format(s.Link.RateMbps, 0))
	// The payload the step asked the link to carry, against its TCP ceiling.
	demand := summary.Val(m.OfferedRPS) * num(sizeBytes(s, size)) * 8 / 1e6
	ceiling := summary.Val(s.Link.TCPCeilingMbps)
	switch {
	case cpu >= ServerBusy || core >= ServerBusy:
		return "server_cpu", hosts
	case demand >= LinkFull*ceiling || tx >= LinkFull*summary.Val(s.Link.RateMbps):
		return "link", fmt.Sprintf("%s; the step asked for %s Mbit/s of payload, the link's TCP ceiling is %s", hosts, decimal.Format(&demand, 0), decimal.Format(s.Link.TCPCeilingMbps, 1))
	case truth != nil && truth.Slots > 0:
		return "slots", fmt.Sprintf("%d slots held %s ms each; %s", truth.Slots, decimal.Format(truth.HoldMeanMs, 3), hosts)
	case math.IsNaN(cpu) && math.IsNaN(tx):
		return "unexplained", at + " the server host's CPU and NIC are unreadable"
	case corked(s, m, size, res.SLOLatencyMs):
		return "nginx_cork", fmt.Sprintf("%s; its median latency was %s ms and its p99 %s ms: most answers went at once and a few were held. "+
			"nginx ran with tcp_nopush on (with sendfile): a response of more than a segment may leave its last segments unsent, "+
			"everything before them acknowledged, until a timer fires about 100 ms later (05-capacity/PLAN.md); NGINX_TCP_NOPUSH=off removes the wait",
			hosts, decimal.Format(m.LatencyP50Ms, 2), decimal.Format(m.LatencyP99Ms, 1))
	}
	return "unexplained", hosts
}

// corked is whether a failing step m, neither CPU- nor link-bound, looks
// like nginx's tcp_nopush wait: nginx with tcp_nopush on, answers of more
// than a segment (summary.TCPPayloadBytes, on a 1500-byte path), and the median latency within half the SLO's bound (most
// answers at once: a few held, not a queue).
func corked(s *summary.Summary, m *Figures, size string, sloMs float64) bool {
	return s.Server != nil && s.Server.TCPNopush() == "on" && num(sizeBytes(s, size)) > summary.TCPPayloadBytes &&
		summary.Val(m.LatencyP50Ms) <= sloMs/2
}

// sizeBytes is a payload's bytes as its steps recorded them, "" unknown.
func sizeBytes(s *summary.Summary, size string) string {
	for _, c := range s.Cells {
		if c.Params["payload"] == size && c.Params["payload_bytes"] != "" {
			return c.Params["payload_bytes"]
		}
	}
	return ""
}

// fp is v as a pointer, nil for NaN.
func fp(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return summary.F(v)
}

// searchOf is the search of the run's settings (run.env), as the runner
// handed them to csb capacity-next.
func searchOf(r *rundir.Run) (capacity.Search, error) {
	num := func(k string) (float64, error) {
		raw, ok := r.Settings[k]
		if !ok {
			raw = r.Get(k)
		}
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return 0, fmt.Errorf("run.env %s=%q is not a number", k, raw)
		}
		return v, nil
	}
	s := capacity.Search{SLO: capacity.SLO{AchievedMin: 0.99}, Growth: 2}
	var err error
	for _, f := range []struct {
		key string
		dst *float64
	}{{"SLO_PERCENTILE", &s.SLO.Percentile}, {"SLO_LATENCY_MS", &s.SLO.LatencyMs}, {"SLO_ERRORS_PCT", &s.SLO.ErrorsPct},
		{"SEARCH_RESOLUTION_PCT", &s.ResolutionPct}, {"capacity.start_rps", &s.StartRPS}} {
		if *f.dst, err = num(f.key); err != nil {
			return s, err
		}
	}
	ms, err := num("capacity.max_steps")
	s.MaxSteps, s.Repeat = int(ms), 1
	if _, ok := r.Settings["SEARCH_MAX_S"]; ok && r.Settings["SEARCH_MAX_S"] != "" && err == nil {
		s.MaxSeconds, err = num("SEARCH_MAX_S")
	}
	if _, ok := r.Settings["REPEAT"]; ok && err == nil {
		var rep float64
		rep, err = num("REPEAT")
		s.Repeat = int(rep)
	}
	return s, err
}

// measure fills one step's metrics from its raw files; ok: the step is one
// the search counts (it ran and its results could be read).
func measure(r *rundir.Run, hosts *hostdata.Hosts, nics map[string]string, rc rundir.Cell, search capacity.Search, shared bool, c *summary.Cell) (capacity.Step, bool) {
	f := Figures{OfferedRPS: summary.F(num(rc.Params["offered_rps"])), CPU: hosts.CPU(rc), NIC: hosts.NIC(rc, nics),
		Procs: map[string]hostdata.ProcFigures{"server": hosts.Procs(rc, "server/csb-server")}}
	st, ok := measureStep(r, rc, search, shared, c, &f)
	summary.PutFigures(c.Metrics, &f)
	return st, ok
}

// measureStep reads a step's raw files into f and judges it.
func measureStep(r *rundir.Run, rc rundir.Cell, search capacity.Search, shared bool, c *summary.Cell, f *Figures) (capacity.Step, bool) {
	files, err := capacity.StepFiles(r.Dir, rc.Name)
	if err != nil {
		if rc.Status == "ok" {
			c.SetRawError(r.Dir, filepath.Join(r.Dir, "raw", rc.Name+".json"), err)
		}
		return capacity.Step{}, false
	}
	st, fig, err := capacity.ReadStep(files, capacity.Judging{Percentile: search.SLO.Percentile,
		LagBoundMs: capacity.LagBoundMs(LagMaxMs, search.SLO.LatencyMs), SharedCPUs: shared})
	if err != nil {
		c.SetRawError(r.Dir, files[0], err)
		return st, false
	}
	for _, x := range []struct {
		q    [3]*float64
		dsts [3]**float64
	}{{fig.Latency, [3]**float64{&f.LatencyP50Ms, &f.LatencyP99Ms, &f.LatencyP999Ms}},
		{fig.Service, [3]**float64{&f.ServiceLatencyP50Ms, &f.ServiceLatencyP99Ms, &f.ServiceLatencyP999Ms}},
		{fig.SenderLag, [3]**float64{&f.SenderLagP50Ms, &f.SenderLagP99Ms, &f.SenderLagP999Ms}}} {
		for i, d := range x.dsts {
			*d = round(x.q[i], 3)
		}
	}
	f.LatencySLOPercentileMs = fp(decimal.Round(st.LatencyMs, 3))
	f.AchievedRPS = summary.F(decimal.Round(st.AchievedRPS, 1))
	f.LatencyGrowthMsPerS = fp(st.GrowthMsPerS)
	f.Requests = summary.F(st.Requests)
	f.Errors = summary.F(st.Errors)
	if st.Requests > 0 {
		f.ErrorsPct = summary.F(decimal.Round(100*st.Errors/st.Requests, 3))
	}
	f.RequestsLatePoolBusy = summary.F(fig.LatePoolBusy)
	if !math.IsNaN(fig.LoopsBusyPct) {
		f.ClientLoopsBusyPct = summary.F(decimal.Round(fig.LoopsBusyPct, 1))
	}
	if !math.IsNaN(st.ClientCPUsBusyPct) {
		f.ClientCPUsBusyPct = summary.F(st.ClientCPUsBusyPct)
	}
	f.ClientBound = summary.F(0)
	if st.ClientBound {
		f.ClientBound = summary.F(1)
	}
	code, why := search.Judge(st)
	c.Verdict = &summary.Verdict{Code: code, Bound: code, Evidence: why}
	return st, true
}

func round(p *float64, d int) *float64 {
	if p == nil {
		return nil
	}
	return summary.F(decimal.Round(*p, d))
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// readTruth is the ground-truth server's own account of the run (its
// shutdown line's service figures), or nil.
func readTruth(dir string) *truthStats {
	f, err := rundir.Open(filepath.Join(dir, "server", "csb-server-1.log"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out *truthStats
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `"event":"shutdown"`) {
			continue
		}
		var ev struct {
			Service *truthStats `json:"service"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Service != nil {
			out = ev.Service
		}
	}
	return out
}

// windowTruth is the ground-truth server's capacity over the steps at the
// capacity's rate (their raw/<step>.stats0.json and .stats1.json, the
// server's /stats before and after): the hold it gave at that load, which
// a run's mean does not tell (10.17 ms at the capacity, 10.62 in an
// overloaded step of one run here: a busier host wakes its timers later).
// Nil without both files of at least one such step.
func windowTruth(dir string, s *summary.Summary, size string, res summary.Capacity) *truthStats {
	var slots int
	var holdNs, reqs float64
	for _, c := range s.Cells {
		v := summary.Val(figuresOf(&c).OfferedRPS)
		if c.Params["payload"] != size || res.CapacityRPS == nil || v != *res.CapacityRPS || c.Params["reason"] == "probe" {
			continue
		}
		var st [2]struct {
			Slots     int     `json:"slots"`
			Requests  float64 `json:"requests"`
			HoldSumNs float64 `json:"hold_sum_ns"`
		}
		ok := true
		for i := range st {
			b, err := rundir.ReadFile(filepath.Join(dir, "raw", fmt.Sprintf("%s.stats%d.json", c.Name, i)))
			ok = ok && err == nil && json.Unmarshal(b, &st[i]) == nil
		}
		if ok && st[1].Requests > st[0].Requests {
			slots, holdNs, reqs = st[1].Slots, holdNs+st[1].HoldSumNs-st[0].HoldSumNs, reqs+st[1].Requests-st[0].Requests
		}
	}
	if reqs == 0 || slots == 0 {
		return nil
	}
	mean := holdNs / reqs / 1e6
	capRPS := float64(slots) / (mean / 1e3)
	return &truthStats{Slots: slots, HoldMeanMs: &mean, CapacityRPS: &capRPS, Window: true}
}

// truthStats is the part of the server's ServiceStats the report uses.
type truthStats struct {
	Slots       int      `json:"slots"`
	ServiceMs   float64  `json:"service_time_ms"`
	CapacityRPS *float64 `json:"capacity_rps"`
	HoldMeanMs  *float64 `json:"hold_mean_ms"`
	Window      bool     `json:"-"` // of the bracket's steps, not the run
}
