package summary

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Which figures can never be negative, by the unit or kind in their name
// (STYLE: units in names). Load refuses a summary.json holding a negative
// one: no tool measures one, so the file was edited or corrupted, and a
// comparison or report made from it would print it as a finding.
//
// A rule matches a metric name by suffix, prefix or whole name; the first
// matching rule of signedMetrics exempts the name (a difference, which
// noise can make negative); a name no rule matches is not checked (and
// TestEveryCommittedMetricClassified fails until it is classified).
type metricRule struct {
	how  string // "suffix", "prefix", "exact", "contains"
	text string
	what string // what the figure is, for the error
}

func (r metricRule) match(name string) bool {
	switch r.how {
	case "suffix":
		return strings.HasSuffix(name, r.text)
	case "prefix":
		return strings.HasPrefix(name, r.text)
	case "contains":
		return strings.Contains(name, r.text)
	}
	return name == r.text
}

// signedMetrics may be negative: memory held per connection is held minus
// baseline, over the connections (Phase 3), and another process freeing
// memory meanwhile makes it negative.
var signedMetrics = []metricRule{
	{"suffix", "_per_conn_kb", "memory per connection (held minus baseline)"},
	{"suffix", "_kb_per_conn", "kernel memory per connection (held minus baseline)"},
	{"exact", "latency_growth_ms_per_s", "the trend of a step's latency (negative when a queue drains)"},
}

// nonNegativeMetrics: times, rates, throughputs, shares, sizes, counts.
var nonNegativeMetrics = []metricRule{
	{"suffix", "_ms", "a time in ms (latency, lag or bound)"},
	{"suffix", "_s", "a duration in s"},
	{"suffix", "_mbps", "a throughput"},
	{"suffix", "_pps", "a packet rate"},
	{"suffix", "_per_s", "a rate"},
	{"suffix", "_rps", "a request rate"},
	{"exact", "client_bound", "a flag (0 or 1)"},
	{"exact", "rps", "a request rate"},
	{"prefix", "rps_", "a request rate"},
	{"suffix", "_pct", "a percentage"},
	{"suffix", "_mb", "a size in MB"},
	{"suffix", "_kb", "a size in KB"},
	{"suffix", "_bytes", "a size in bytes"},
	{"suffix", "_ratio", "a ratio of two rates"},
	{"exact", "link_utilization", "a share of the link"},
	{"contains", "_us_per_", "CPU time per request, connection or handshake"},
	// Counts.
	{"prefix", "errors", "a count of errors"},
	{"prefix", "requests", "a count of requests"},
	{"prefix", "connections_", "a count of connections"},
	{"prefix", "tls_handshakes_", "a count of handshakes"},
	{"prefix", "latency_", "a count of responses in a latency step"},
	{"prefix", "predicted_", "a predicted count"},
	{"prefix", "tcp_mem_pages_", "a count of pages"},
	{"prefix", "tcp_slab_objs_", "a count of slab objects"},
	{"exact", "retransmits", "a count of retransmissions"},
	{"exact", "backlog", "a listen backlog"},
	{"exact", "clients", "a count of client hosts"},
	{"exact", "ports", "a count of ports"},
	{"exact", "ports_left", "a count of ports"},
	{"suffix", "_retrans_segs", "a count of retransmitted segments"},
	{"suffix", "_syn_retrans", "a count of SYN retransmissions"},
	{"suffix", "_abort_on_data", "a TCP counter"},
	{"suffix", "_abort_on_overflow", "a sysctl (0 or 1)"},
	{"suffix", "_opens", "a count of connections opened"},
	{"suffix", "_attempt_fails", "a TCP counter"},
	{"suffix", "_estab_resets", "a TCP counter"},
	{"suffix", "_listen_drops", "a TCP counter"},
	{"suffix", "_listen_overflows", "a TCP counter"},
	{"suffix", "_out_rsts", "a TCP counter"},
	{"suffix", "_tcp_timeouts", "a TCP counter"},
	{"suffix", "_tcp_memory_pressures", "a TCP counter: times the kernel entered TCP memory pressure"},
	{"suffix", "_tcp_inuse", "a count of sockets"},
	{"suffix", "_established", "a count of connections"},
	{"contains", "_time_wait", "a count of TIME_WAIT sockets"},
	{"suffix", "_procs", "a count of processes"},
	{"suffix", "_somaxconn", "a sysctl"},
}

// metricKind is what the rules say of name: signed, non-negative (with
// what it is) or unclassified ("").
func metricKind(name string) (nonNegative bool, what string) {
	for _, r := range signedMetrics {
		if r.match(name) {
			return false, r.what
		}
	}
	for _, r := range nonNegativeMetrics {
		if r.match(name) {
			return true, r.what
		}
	}
	return false, ""
}

// LineRateFactor bounds a throughput: a figure above LineRateFactor times
// the lab's line rate (per client host: each has a link of its own) is no
// measurement of that line. Loose on purpose: counters sampled over a
// second that a cell cuts can run over the rate by some per cent, never
// by half.
const LineRateFactor = 1.5

// ValueError is a summary.json holding a figure no tool can produce.
type ValueError struct {
	Path  string
	Field string // e.g. cells["c2s-1"].metrics.rps
	Value float64
	Why   string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s: %s is %s: %s; no tool measures that (the file was edited or corrupted): regenerate it from the run's raw files (bin/csb summarize <run directory>)",
		e.Path, e.Field, strconv.FormatFloat(e.Value, 'g', 6, 64), e.Why)
}

// lineRateMbps is the line rate a throughput is bounded by: link.rate_mbps
// (LINK_RATE), or on LAB=ssh the fastest NIC of the hosts when that is
// faster (there LINK_RATE is the user's word, not a shaper); 0 when none
// is known (loopback, an unshaped link).
func (s *Summary) lineRateMbps() float64 {
	rate := 0.0
	if s.Link.RateMbps != nil {
		rate = *s.Link.RateMbps
	}
	if s.Lab == "ssh" && rate > 0 {
		for _, h := range s.Hosts {
			if h.NICSpeed != nil && *h.NICSpeed > rate {
				rate = *h.NICSpeed
			}
		}
	}
	return rate
}

// checkValues is Load's check of every figure: cells' and per-client
// metrics by the rules above, the link's rates, and throughputs against
// LineRateFactor times the line rate.
func (s *Summary) checkValues(path string) error {
	bad := func(field string, v float64, why string) error {
		return &ValueError{Path: path, Field: field, Value: v, Why: why}
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"link.rate_mbps", s.Link.RateMbps}, {"link.tcp_ceiling_mbps", s.Link.TCPCeilingMbps}, {"link.baseline_mbps", s.Link.BaselineMbps}} {
		if f.v != nil && *f.v < 0 {
			return bad(f.name, *f.v, "a line rate or throughput below zero")
		}
	}
	limit, basis := 0.0, ""
	if rate := s.lineRateMbps(); rate > 0 {
		n := 1
		if s.Clients != nil && s.Clients.N > 1 {
			n = s.Clients.N
		}
		limit = LineRateFactor * rate * float64(n)
		basis = fmt.Sprintf("above %g x the line rate of %g Mbit/s", LineRateFactor, rate)
		if n > 1 {
			basis += fmt.Sprintf(" x %d client hosts", n)
		}
		if s.Lab == "ssh" {
			basis += " (link.rate_mbps, or the fastest NIC of the hosts)"
		} else {
			basis += " (link.rate_mbps)"
		}
	}
	check := func(prefix string, m map[string]*float64) error {
		for _, k := range sortedMetricNames(m) {
			p := m[k]
			if p == nil {
				continue
			}
			v := *p
			field := prefix + ".metrics." + k
			if nonNeg, what := metricKind(k); nonNeg && v < 0 {
				return bad(field, v, what+" below zero")
			}
			if limit > 0 && strings.HasSuffix(k, "_mbps") && v > limit {
				return bad(field, v, "a throughput "+basis)
			}
		}
		return nil
	}
	for _, c := range s.Cells {
		cp := "cells[" + strconv.Quote(c.Name) + "]"
		if err := check(cp, c.Metrics); err != nil {
			return err
		}
		for _, cc := range c.Clients {
			if err := check(cp+".clients["+strconv.Quote(cc.Label)+"]", cc.Metrics); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedMetricNames(m map[string]*float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
