package phase3

import (
	"slices"
	"testing"

	"csbench/internal/c10kplan"
	"csbench/internal/golden"
	"csbench/internal/hostdata"
	"csbench/internal/summary"
)

// cell3 is a constructed cell of scenario kind with metrics m and the
// connect errors errs.
func cell3(kind, status string, m map[string]float64, errs map[string]float64) *summary.Cell {
	c := rampCell(m)
	for _, h := range []string{"server", "client"} {
		for _, k := range summary.FigureNames(hostdata.CPUFigures{}) {
			if _, ok := c.Metrics[h+"_"+k]; !ok {
				c.Metrics[h+"_"+k] = nil
			}
		}
	}
	c.Name, c.Status = kind, status
	c.Params["scenario"] = kind
	if errs != nil {
		c.Details["errors"] = errs
	}
	return c
}

// held is what a cell that established all its connections measured.
func held(more map[string]float64) map[string]float64 {
	m := map[string]float64{"connections_target": 100, "connections_established": 100, "server_procs": 1, "client_procs": 1}
	for k, v := range more {
		m[k] = v
	}
	return m
}

// lost is what a cell that established half its connections measured.
func lost(more map[string]float64) map[string]float64 {
	return held(mergeMaps(map[string]float64{"connections_established": 50}, more))
}

func mergeMaps(a, b map[string]float64) map[string]float64 {
	for k, v := range b {
		a[k] = v
	}
	return a
}

type ruleCase struct {
	name  string
	c     *summary.Cell
	plan  *c10kplan.Plan
	s     *summary.Summary
	rule  rule
	code  string
	cause string
	quals []string
	bound string
}

func ruleCases() []ruleCase {
	refusedPlan := &c10kplan.Plan{Refusals: []c10kplan.Refusal{{Code: c10kplan.CodeFDLimit, Message: "too few fds"}}}
	withRamp := func(c *summary.Cell, r *rampSummary) *summary.Cell { c.Details["connect_ramp"] = r; return c }
	closed := cell3("idle", "ok", held(map[string]float64{"connections_alive_end": 60}), nil)
	closed.Params["hold_s"] = "10"
	closed.Details["drops"] = map[string]float64{"eof": 40}
	return []ruleCase{
		{name: "refused with a code", c: cell3("idle", "refused", nil, nil), plan: refusedPlan, rule: refusedRule,
			code: CodeFDLimit, cause: c10kplan.CodeFDLimit, quals: []string{QualRefused}, bound: WallFD + " (refused before it started)"},
		{name: "refused without a code", c: cell3("idle", "refused", nil, nil), rule: refusedRule, code: CodeRefused, bound: "refused (refused before it started)"},
		{name: "failed", c: cell3("idle", "failed", nil, nil), rule: failedRule, code: CodeFailed, bound: "none (failed)"},
		{name: "ports", c: cell3("idle", "ok", lost(nil), map[string]float64{"eaddrnotavail": 5}), rule: portsRule, code: CodePorts, bound: WallPorts},
		{name: "fds", c: cell3("idle", "ok", lost(nil), map[string]float64{"emfile": 5}), rule: fdRule, code: CodeFDLimit, bound: WallFD},
		{name: "backlog", c: cell3("idle", "ok", lost(map[string]float64{"server_listen_overflows": 9}), nil), rule: backlogRule, code: CodeBacklog, bound: WallBacklog},
		{name: "tcp_mem", c: cell3("idle", "ok", lost(map[string]float64{"client_tcp_memory_pressures": 2}), nil), rule: tcpMemRule, code: CodeTCPMem, bound: WallTCPMem},
		{name: "ramp time bound", c: withRamp(cell3("idle", "ok", lost(map[string]float64{"connections_attempted": 80}), nil),
			&rampSummary{BoundReached: []int{1}, RampMaxS: 30}), rule: rampLostRule, code: CodeRampTimeBound,
			bound: WallRampBound + ": 20 connections not attempted within 30 s"},
		{name: "refused after retry", c: withRamp(cell3("idle", "ok", lost(map[string]float64{"connections_attempted": 100, "connections_failed": 50}),
			map[string]float64{"etimedout": 50}), &rampSummary{ConnectRetriesMax: 3}), rule: rampLostRule, code: CodeRefusedAfterRetry, cause: "etimedout",
			bound: WallRefusedAfterRetry + ": 50 connects failed after up to 3 retries each (etimedout)"},
		{name: "lost", c: cell3("idle", "ok", lost(nil), map[string]float64{"econnreset": 50}), rule: lostRule, code: CodeConnectionsLost, cause: "econnreset",
			bound: "connections lost: econnreset"},
		{name: "server closed", c: closed, rule: serverClosedRule, code: CodeServerClosed, bound: WallIdleClose},
		{name: "short ramp", c: cell3("lowrate", "ok", held(map[string]float64{"connect_rate_target_per_s": 1000, "connect_rate_achieved_per_s": 500,
			"connect_latency_p99_ms": 2000, "client_syn_retrans": 3}), nil), rule: rampRule, code: CodeShortRamp, cause: RampSynRetr, quals: []string{QualSlowConnects},
			bound: "short ramp: 500 of 1000 connects/s (50%); slow connects: connect p99 2000 ms (SYNs were retransmitted)"},
		{name: "idle, split", c: cell3("idle", "ok", held(map[string]float64{"server_procs": 4}), nil), rule: idleRule, code: CodeNone, quals: []string{QualSplitFD},
			bound: "fd limit per process () → split across 4 server processes (SO_REUSEPORT)"},
		{name: "idle", c: cell3("idle", "ok", held(nil), nil), rule: idleRule, code: CodeNone, bound: WallNone},
		{name: "no rate", c: cell3("lowrate", "ok", held(nil), nil), rule: noRateRule, code: CodeNotMeasured, bound: "none (no rate measured)"},
		{name: "rate not delivered", c: cell3("lowrate", "ok", held(map[string]float64{"rps_achieved_ratio": 0.5, "client_cpu_pct": 95}), nil),
			rule: rateNotDeliveredRule, code: CodeRateNotDelivered, quals: []string{QualClientCPU}, bound: "offered rate not delivered behind the client's CPU"},
		{name: "schedule lag", c: cell3("lowrate", "ok", held(map[string]float64{"rps_achieved_ratio": 1, "latency_p99_ms": 100, "service_latency_p99_ms": 1}), nil),
			rule: scheduleLagRule, code: CodeScheduleLag, bound: "client schedule lag"},
		{name: "lowrate", c: cell3("lowrate", "ok", held(map[string]float64{"rps_achieved_ratio": 1, "latency_p99_ms": 2, "service_latency_p99_ms": 1}), nil),
			rule: lowrateRule, code: CodeNone, bound: "none: rate delivered, p99 ≈ service time"},
		{name: "queueing", c: cell3("active", "ok", held(map[string]float64{"server_cpu_pct": 99}), nil), rule: queueingRule, code: CodeQueueing,
			quals: []string{QualServerCPU}, bound: WallQueueing + " behind the server's CPU"},
		{name: "unknown", c: cell3("other", "ok", held(nil), nil), rule: unknownRule, code: CodeUnknownScenario, bound: "unknown scenario"},
	}
}

func TestVerdictRules(t *testing.T) {
	for _, tc := range ruleCases() {
		s := tc.s
		if s == nil {
			s = &summary.Summary{}
		}
		check := func(what string, v *summary.Verdict) {
			t.Helper()
			if v == nil {
				t.Errorf("%s: %s: no verdict", tc.name, what)
				return
			}
			if v.Code != tc.code || v.Cause != tc.cause || !slices.Equal(v.Qualifiers, tc.quals) || v.Bound != tc.bound {
				t.Errorf("%s: %s: code %q cause %q qualifiers %v bound %q; want %q %q %v %q", tc.name, what, v.Code, v.Cause, v.Qualifiers, v.Bound,
					tc.code, tc.cause, tc.quals, tc.bound)
			}
		}
		f := figuresOf(tc.c)
		j := &judged{s: s, c: tc.c, plan: tc.plan, f: f}
		j.errs, _ = tc.c.Details["errors"].(map[string]float64)
		j.target, j.est = summary.Val(f.ConnectionsTarget), summary.Val(f.ConnectionsEstablished)
		check("its rule", tc.rule(j))
		check("the rules", verdict(s, tc.c, tc.plan))
	}
}

// Every code and qualifier the rules return is in Codes and Qualifiers
// (and so in docs/verdicts.md); every code is returned by some case.
func TestVerdictCodesListed(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range ruleCases() {
		v := verdict(&summary.Summary{}, tc.c, tc.plan)
		if !slices.Contains(Codes, v.Code) {
			t.Errorf("%s: code %q not in %v", tc.name, v.Code, Codes)
		}
		for _, q := range v.Qualifiers {
			if !slices.Contains(Qualifiers, q) {
				t.Errorf("%s: qualifier %q not in %v", tc.name, q, Qualifiers)
			}
		}
		seen[v.Code] = true
	}
	for _, code := range Codes {
		if !seen[code] && code != CodeMemory && code != CodeSlowConnects {
			t.Errorf("code %q: no case returns it", code)
		}
	}
	for code := range map[string]string{c10kplan.CodeMemory: CodeMemory, c10kplan.CodeFileMax: CodeMemory, c10kplan.CodeEphemeralPorts: CodePorts,
		c10kplan.CodeTimeWait: CodePorts, c10kplan.CodeListenBacklog: CodeBacklog, c10kplan.CodeTCPMem: CodeTCPMem, "": CodeRefused} {
		if _, c := refusalWall(code); !slices.Contains(Codes, c) {
			t.Errorf("refusal %q: code %q not in %v", code, c, Codes)
		}
	}
}

func TestVerdictCodesDocumented(t *testing.T) {
	golden.Documented(t, "../../docs/verdicts.md", "## Phase 3", Codes)
	golden.Documented(t, "../../docs/verdicts.md", "## Phase 3", Qualifiers)
	golden.Documented(t, "../../docs/verdicts.md", "## Phase 3", []string{RampBacklog, RampSynRetr, RampSynAckRetr, RampClientCPU, RampUnknown})
}
