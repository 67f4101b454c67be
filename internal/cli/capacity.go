package cli

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"csbench/internal/capacity"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

const capacityNextUsage = `Usage: csb capacity-next [SLO and search flags] [-dir RUN -step NAME...]

Phase 5's search (internal/capacity): reads the steps measured so far, in
order (-step NAME: the step's connclient lowrate results in the run
directory RUN, raw/<client>/NAME.json of every client host, merged
exactly) and prints what to do next
as KEY=VALUE lines:
  schema_version=1  steps=N
  last_code=pass|latency|errors|achieved|unreadable|client_bound  last_text=…
  done=0  rps=R  reason=first|up|down|bisect|repeat_disturbed|repeat_boundary
  done=1  capacity_rps=R|unreadable  low_rps  high_rps  bound=CODE  text=…
  (bound: the outcome code of the failing step above the capacity, or
  client_bound, max_steps, max_time, never_met)
Without -step it checks the settings and prints the first step; with
-phase2 DIR -lab L -server KIND -scheme S -payload SIZE the first step is
half the closed-loop maximum (the most RPS of any cell at SIZE) of the
newest Phase 2 run under DIR with that lab, server kind and scheme, when
there is one:
  start_from=phase2|setting  phase2_max_rps=M  phase2_run=DIR
With -dir RUN -probe NAME (no -step) the first step is half of what the
probe step NAME achieved (a step offering far more than the server takes):
  start_from=probe  probe_rps=A
Settings that cannot work are one line, exit 2.

Flags:
  -percentile P       the SLO's percentile of the latency from the due time (99)
  -latency-ms MS      its bound (10)
  -errors-pct E       failed requests at most E % (0.1)
  -achieved-min F     achieved at least F × offered (0.99)
  -start R            the first step's rate, req/s
  -growth G           factor per coarse step (2)
  -resolution-pct D   bisect until the bracket is within D % (2)
  -max-steps N        at most N steps (12)
  -max-seconds S      at most S seconds of steps (their cells' wall time in
                      RUN's cells.tsv): no step that would pass it (0: none)
  -repeat N           the bracket's two rates get N steps each at the end; a
                      rate passes when all of its steps pass (1)
  -lag-max-ms MS      the least engine lag p99 that makes a step that broke the
                      SLO client-bound (half -latency-ms when more, up to 5 ms;
                      over 1,000 requests or more, with others using under 10 %
                      of its CPUs) (1)
  -disturbed K        step K (1-based) is disturbed (trust marks); repeatable
With -dir, whether the client's CPUs were the server's too (LAB=local, or
netns unpinned: run.env's lab, server.cpus and client.1.cpus) decides how
busy CPUs are read: there the other work on them is the server's, no
disturbance, and a late sender is the client's limit.
`

func runCapacityNext(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("capacity-next", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pct := fs.Float64("percentile", 99, "")
	lat := fs.Float64("latency-ms", 10, "")
	errs := fs.Float64("errors-pct", 0.1, "")
	ach := fs.Float64("achieved-min", 0.99, "")
	start := fs.Float64("start", 0, "")
	growth := fs.Float64("growth", 2, "")
	res := fs.Float64("resolution-pct", 2, "")
	maxSteps := fs.Int("max-steps", 12, "")
	maxSecs := fs.Float64("max-seconds", 0, "")
	repeat := fs.Int("repeat", 1, "")
	lagMax := fs.Float64("lag-max-ms", 1, "")
	dir := fs.String("dir", "", "")
	p2dir := fs.String("phase2", "", "")
	p2lab := fs.String("lab", "", "")
	p2server := fs.String("server", "", "")
	p2scheme := fs.String("scheme", "http", "")
	p2size := fs.String("payload", "", "")
	probe := fs.String("probe", "", "")
	var names []string
	fs.Func("step", "", func(v string) error {
		names = append(names, v)
		return nil
	})
	disturbed := map[int]bool{}
	fs.Func("disturbed", "", func(v string) error {
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 {
			return fmt.Errorf("-disturbed %q: a step number from 1", v)
		}
		disturbed[k] = true
		return nil
	})
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: capacity-next: %v", errUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, capacityNextUsage)
		return nil
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: capacity-next: unexpected argument %q", errUsage, fs.Arg(0))
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", errBadInput, fmt.Sprintf(format, a...))
	}
	switch {
	case !(*pct > 0 && *pct < 100):
		return bad("SLO_PERCENTILE=%g: a percentile above 0 and below 100, e.g. 99 or 99.9", *pct)
	case !(*lat >= capacity.SLOLatencyMinMs && *lat <= capacity.SLOLatencyMaxMs):
		return bad("SLO_LATENCY_MS=%g: a latency bound a service could have, from %g ms to %g ms (%g s), e.g. 10",
			*lat, capacity.SLOLatencyMinMs, capacity.SLOLatencyMaxMs, capacity.SLOLatencyMaxMs/1000)
	case !(*errs >= 0 && *errs <= 100):
		return bad("SLO_ERRORS_PCT=%g: a share of the requests from 0 to 100 %%, e.g. 0.1", *errs)
	case !(*ach > 0 && *ach <= 1):
		return bad("-achieved-min %g: a fraction above 0, at most 1", *ach)
	case !(*start >= 1) || math.IsInf(*start, 0):
		return bad("START_RPS=%g: the first step's rate, at least 1 req/s", *start)
	case !(*growth > 1) || math.IsInf(*growth, 0):
		return bad("-growth %g: a factor above 1", *growth)
	case !(*res > 0 && *res < 100):
		return bad("SEARCH_RESOLUTION_PCT=%g: above 0 and below 100, e.g. 2", *res)
	case *maxSteps < 2:
		return bad("SEARCH_MAX_STEPS=%d: at least 2 steps (one that passes, one that fails)", *maxSteps)
	case !(*maxSecs >= 0) || math.IsInf(*maxSecs, 0):
		return bad("SEARCH_MAX_S=%g: seconds of steps at most, 0 or more (0: no bound)", *maxSecs)
	case *repeat < 1:
		return bad("REPEAT=%d: at least 1 step at each of the bracket's rates", *repeat)
	case *repeat > 1 && *maxSteps < 2**repeat:
		return bad("SEARCH_MAX_STEPS=%d with REPEAT=%d: at least %d steps (REPEAT at each of the bracket's two rates)", *maxSteps, *repeat, 2**repeat)
	case !(*lagMax > 0):
		return bad("-lag-max-ms %g: above 0", *lagMax)
	}
	s := capacity.Search{SLO: capacity.SLO{Percentile: *pct, LatencyMs: *lat, ErrorsPct: *errs, AchievedMin: *ach},
		StartRPS: *start, Growth: *growth, ResolutionPct: *res, MaxSteps: *maxSteps, MaxSeconds: *maxSecs, Repeat: *repeat}
	if (len(names) > 0 || *probe != "") && *dir == "" {
		return fmt.Errorf("%w: capacity-next: -step needs -dir RUN", errUsage)
	}
	judging := capacity.Judging{Percentile: *pct, LagBoundMs: capacity.LagBoundMs(*lagMax, *lat)}
	var cells map[string]float64
	if *dir != "" && (len(names) > 0 || *probe != "") {
		r, err := rundir.Read(*dir)
		if err != nil {
			return err
		}
		judging.SharedCPUs = summary.RunSharedCPUs(r)
		cells = cellSeconds(r)
	}
	steps := make([]capacity.Step, len(names))
	for i, name := range names {
		files, err := capacity.StepFiles(*dir, name)
		if err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		st, _, err := capacity.ReadStep(files, judging)
		if err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		st.Disturbed = st.Disturbed || disturbed[i+1]
		st.Seconds = cells[name]
		steps[i] = st
	}
	kv := [][2]string{{"schema_version", strconv.Itoa(capacity.SchemaVersion)}, {"steps", strconv.Itoa(len(steps))}}
	if *probe != "" && len(steps) == 0 {
		files, err := capacity.StepFiles(*dir, *probe)
		if err != nil {
			return fmt.Errorf("probe: %w", err)
		}
		st, _, err := capacity.ReadStep(files, judging)
		if err != nil {
			return fmt.Errorf("probe: %w", err)
		}
		if st.AchievedRPS > 0 {
			s.StartRPS = capacity.ProbeStart(st.AchievedRPS)
			kv = append(kv, [2]string{"start_from", "probe"}, [2]string{"probe_rps", strconv.FormatFloat(math.Round(st.AchievedRPS), 'f', 0, 64)})
		}
	}
	if *p2dir != "" && len(steps) == 0 {
		kv = append(kv, [2]string{"start_from", "setting"})
		if p, ok := capacity.Phase2Max(*p2dir, *p2lab, *p2server, *p2scheme, []string{*p2size})[*p2size]; ok {
			s.StartRPS = math.Max(1, math.Round(capacity.StartFraction*p.MaxRPS))
			kv[len(kv)-1][1] = "phase2"
			kv = append(kv, [2]string{"phase2_max_rps", strconv.FormatFloat(p.MaxRPS, 'f', -1, 64)}, [2]string{"phase2_run", p.Run})
		}
	}
	if len(steps) > 0 {
		code, why := s.Judge(steps[len(steps)-1])
		kv = append(kv, [2]string{"last_code", code}, [2]string{"last_text", why})
	}
	d := s.Next(steps)
	if d.Done {
		kv = append(kv, [2]string{"done", "1"}, [2]string{"capacity_rps", rateText(d.CapacityRPS)},
			[2]string{"low_rps", rateText(d.LowRPS)}, [2]string{"high_rps", rateText(d.HighRPS)},
			[2]string{"bound", d.Bound}, [2]string{"text", d.Says})
	} else {
		kv = append(kv, [2]string{"done", "0"}, [2]string{"rps", strconv.Itoa(d.RPS)}, [2]string{"reason", d.Reason})
	}
	var b strings.Builder
	for _, p := range kv {
		fmt.Fprintf(&b, "%s=%s\n", p[0], strings.ReplaceAll(p[1], "\n", " "))
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}

// cellSeconds is each ended cell's wall time in run r.
func cellSeconds(r *rundir.Run) map[string]float64 {
	out := map[string]float64{}
	for _, c := range r.Cells {
		if !c.Start.IsZero() && c.End.After(c.Start) {
			out[c.Name] = c.End.Sub(c.Start).Seconds()
		}
	}
	return out
}

// rateText is a rate in whole req/s, or "unreadable" for none.
func rateText(r float64) string {
	if math.IsNaN(r) {
		return "unreadable"
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}
