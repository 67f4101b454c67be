package phase4

import (
	"fmt"

	"csbench/internal/connresult"
	"csbench/internal/summary"
)

// How a cell's figures combine its client hosts' results (mergeChurn,
// mergeBurst): counts and rates add up; the first failure and the first
// EADDRNOTAVAIL are the earliest host's (every host started at one due
// time, so their schedules share a clock); per-second series add up by
// second (their latency maximum is the largest); latency, connect latency
// and TLS handshake percentiles come from every host's histogram merged
// bucket by bucket (connresult.MergedQuantilesMs): exactly what one
// connclient making every connection would have printed. When a host's
// result carries no histogram (or one that cannot be read) a percentile is
// the largest of the hosts' own: an upper bound, named in mergeResult.Upper.
// The schedule lag has no histogram in connclient's result: with several
// hosts its percentiles are always the largest host's. A maximum is exact
// either way. The merge of one host's result is that result, unchanged.

// mergeResult says how a merge was made.
type mergeResult struct {
	// Upper lists the cell metrics given as the largest of the hosts'
	// values (an upper bound, not the cell's percentile); empty for one
	// host.
	Upper []string
	// Problems are histograms that could not be merged (each then counted
	// in Upper).
	Problems []string
}

// exactLatency reports whether every latency percentile of the merge came
// from merged histograms (the schedule lag, which has none, aside).
func (mr *mergeResult) exactLatency() bool {
	for _, k := range mr.Upper {
		if k != "schedule_lag_p50_ms" && k != "schedule_lag_p99_ms" {
			return false
		}
	}
	return true
}

// pct is one percentile of a merge: the q-quantile of histogram hist,
// which becomes the cell metric metric (named when it is an upper bound),
// written to dst; each is every host's own figure.
type pct struct {
	q      float64
	metric string
	dst    **float64
	each   []*float64
}

// percentiles sets every p from the merged histogram hist of the hosts
// (dumps, one per host), or from the largest of the hosts' own figures.
func (mr *mergeResult) percentiles(hist string, dumps []*connresult.HistDump, ps ...pct) {
	qs := make([]float64, len(ps))
	for i, p := range ps {
		qs[i] = p.q
	}
	var vals []*float64
	ok := false
	if hist != "" {
		var err error
		vals, ok, err = connresult.MergedQuantilesMs(dumps, qs...)
		if err != nil {
			mr.Problems = append(mr.Problems, fmt.Sprintf("histogram %s: %v", hist, err))
			ok = false
		}
	}
	for i, p := range ps {
		if ok {
			*p.dst = vals[i]
			continue
		}
		*p.dst = largest(p.each)
		if p.q < 1 && p.metric != "" {
			mr.Upper = append(mr.Upper, p.metric)
		}
	}
}

// largest is the largest of vs that are set; nil when none is.
func largest(vs []*float64) *float64 {
	var best *float64
	for _, v := range vs {
		if v != nil && (best == nil || *v > *best) {
			best = v
		}
	}
	return best
}

// earliest is the smallest of vs that are set; nil when none is.
func earliest(vs []*float64) *float64 {
	var best *float64
	for _, v := range vs {
		if v != nil && (best == nil || *v < *best) {
			best = v
		}
	}
	return best
}

// each is f of every result.
func each[T any](rs []T, f func(T) *float64) []*float64 {
	out := make([]*float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

// hists is every result's histogram name (nil where it has none).
func hists[T any](rs []T, get func(T) map[string]*connresult.Dump, name string) []*connresult.HistDump {
	out := make([]*connresult.HistDump, len(rs))
	for i, r := range rs {
		out[i] = get(r)[name]
	}
	return out
}

func addCounts(dst, src map[string]uint64) {
	for k, v := range src {
		dst[k] += v
	}
}

// header is the merged results' header: the first host's, without a
// source address (each host has its own), partial when any host's is.
func header(hs []connresult.Header) connresult.Header {
	h := hs[0]
	h.Source = nil
	for _, o := range hs[1:] {
		if o.Status != "complete" {
			h.Status = o.Status
		}
	}
	return h
}

// mergeChurn merges the churn results of a cell's client hosts into the
// cell's (see above). Fields the summary does not read (dispatch and
// connect() handshake percentiles, histograms) are left empty in a merge
// of several.
func mergeChurn(rs []*connresult.ChurnResult) (*connresult.ChurnResult, *mergeResult) {
	mr := &mergeResult{}
	if len(rs) == 1 {
		return rs[0], mr
	}
	hs := make([]connresult.Header, len(rs))
	for i, r := range rs {
		hs[i] = r.Header
	}
	out := &connresult.ChurnResult{Header: header(hs), Close: rs[0].Close, Path: rs[0].Path,
		Errors: map[string]uint64{}, StatusCodes: map[string]uint64{}}
	achieved, allAchieved := 0.0, true
	var tlsRes []*connresult.TLSResult
	for _, r := range rs {
		out.RateTargetPerS += r.RateTargetPerS
		out.DurationS = max(out.DurationS, r.DurationS)
		out.ConnsScheduled += r.ConnsScheduled
		out.ConnsDispatched += r.ConnsDispatched
		out.ConnsNotSent += r.ConnsNotSent
		out.ConnsAttempted += r.ConnsAttempted
		out.ConnsEstablished += r.ConnsEstablished
		out.ConnsCompleted += r.ConnsCompleted
		out.ConnsFailed += r.ConnsFailed
		out.Goroutines += r.Goroutines
		if r.RateAchievedPerS == nil {
			allAchieved = false
		} else {
			achieved += *r.RateAchievedPerS
		}
		addCounts(out.Errors, r.Errors)
		addCounts(out.StatusCodes, r.StatusCodes)
		if r.TLS != nil {
			tlsRes = append(tlsRes, r.TLS)
		}
	}
	if allAchieved {
		out.RateAchievedPerS = summary.F(round(achieved, 1))
	}
	out.ElapsedS = largest(each(rs, func(r *connresult.ChurnResult) *float64 { return r.ElapsedS }))
	out.FirstFailureS = earliest(each(rs, func(r *connresult.ChurnResult) *float64 { return r.FirstFailureS }))
	out.FirstAddrNotAvail = earliest(each(rs, func(r *connresult.ChurnResult) *float64 { return r.FirstAddrNotAvail }))
	out.ClientRSSMB = sumOf(each(rs, func(r *connresult.ChurnResult) *float64 { return r.ClientRSSMB }))
	out.PerSecond = mergeSeconds(rs)
	h := func(r *connresult.ChurnResult) map[string]*connresult.Dump { return r.Histograms }
	mr.percentiles("connect", hists(rs, h, "connect"),
		pct{0.5, "connect_latency_p50_ms", &out.ConnectLatencyP50Ms, each(rs, func(r *connresult.ChurnResult) *float64 { return r.ConnectLatencyP50Ms })},
		pct{0.99, "connect_latency_p99_ms", &out.ConnectLatencyP99Ms, each(rs, func(r *connresult.ChurnResult) *float64 { return r.ConnectLatencyP99Ms })},
		pct{1, "connect_latency_max_ms", &out.ConnectLatencyMaxMs, each(rs, func(r *connresult.ChurnResult) *float64 { return r.ConnectLatencyMaxMs })})
	mr.percentiles("latency", hists(rs, h, "latency"),
		pct{0.5, "latency_p50_ms", &out.LatencyP50Ms, each(rs, func(r *connresult.ChurnResult) *float64 { return r.LatencyP50Ms })},
		pct{0.9, "latency_p90_ms", &out.LatencyP90Ms, each(rs, func(r *connresult.ChurnResult) *float64 { return r.LatencyP90Ms })},
		pct{0.99, "latency_p99_ms", &out.LatencyP99Ms, each(rs, func(r *connresult.ChurnResult) *float64 { return r.LatencyP99Ms })},
		pct{1, "latency_max_ms", &out.LatencyMaxMs, each(rs, func(r *connresult.ChurnResult) *float64 { return r.LatencyMaxMs })})
	// No histogram of the schedule lag: the largest host's.
	mr.percentiles("",
		nil,
		pct{0.5, "schedule_lag_p50_ms", &out.ScheduleLagP50Ms, each(rs, func(r *connresult.ChurnResult) *float64 { return r.ScheduleLagP50Ms })},
		pct{0.99, "schedule_lag_p99_ms", &out.ScheduleLagP99Ms, each(rs, func(r *connresult.ChurnResult) *float64 { return r.ScheduleLagP99Ms })},
		pct{1, "schedule_lag_max_ms", &out.ScheduleLagMaxMs, each(rs, func(r *connresult.ChurnResult) *float64 { return r.ScheduleLagMaxMs })})
	if len(tlsRes) > 0 {
		out.TLS = mergeTLS(rs, tlsRes, mr)
	}
	return out, mr
}

// mergeTLS merges the hosts' TLS handshakes: counts added, percentiles of
// the merged tls_full and tls_resumed histograms, the first handshake the
// first host's that had one.
func mergeTLS(rs []*connresult.ChurnResult, ts []*connresult.TLSResult, mr *mergeResult) *connresult.TLSResult {
	out := &connresult.TLSResult{}
	for _, t := range ts {
		out.HandshakesFull += t.HandshakesFull
		out.HandshakesResumed += t.HandshakesResumed
		out.Resume = out.Resume || t.Resume
		if out.First == nil {
			out.First = t.First
		}
	}
	h := func(r *connresult.ChurnResult) map[string]*connresult.Dump { return r.Histograms }
	// A host without TLS has no such histogram: nothing merges exactly.
	full, resumed := hists(rs, h, "tls_full"), hists(rs, h, "tls_resumed")
	mr.percentiles("tls_full", full,
		pct{0.5, "tls_handshake_full_p50_ms", &out.HandshakeFullP50Ms, each(ts, func(t *connresult.TLSResult) *float64 { return t.HandshakeFullP50Ms })},
		pct{0.99, "tls_handshake_full_p99_ms", &out.HandshakeFullP99Ms, each(ts, func(t *connresult.TLSResult) *float64 { return t.HandshakeFullP99Ms })},
		pct{1, "tls_handshake_full_max_ms", &out.HandshakeFullMaxMs, each(ts, func(t *connresult.TLSResult) *float64 { return t.HandshakeFullMaxMs })})
	mr.percentiles("tls_resumed", resumed,
		pct{0.5, "tls_handshake_resumed_p50_ms", &out.HandshakeResumeP50, each(ts, func(t *connresult.TLSResult) *float64 { return t.HandshakeResumeP50 })},
		pct{0.99, "tls_handshake_resumed_p99_ms", &out.HandshakeResumeP99, each(ts, func(t *connresult.TLSResult) *float64 { return t.HandshakeResumeP99 })},
		pct{1, "tls_handshake_resumed_max_ms", &out.HandshakeResumeMax, each(ts, func(t *connresult.TLSResult) *float64 { return t.HandshakeResumeMax })})
	return out
}

// mergeSeconds adds the hosts' per-second series up by second (each from
// its own schedule's start: one due time for all); a second's latency
// maximum is the largest host's. A series is indexed by its second (entry
// i holds the connections due in second i): connclient leaves t_s 0 in
// every entry, so the index is what says the second, and the merge sets
// t_s from it.
func mergeSeconds(rs []*connresult.ChurnResult) []connresult.ChurnSecond {
	n := 0
	for _, r := range rs {
		n = max(n, len(r.PerSecond))
	}
	out := make([]connresult.ChurnSecond, n)
	for i := range out {
		out[i].T = i
	}
	for _, r := range rs {
		for i, s := range r.PerSecond {
			p := &out[i]
			p.Completed += s.Completed
			p.Failed += s.Failed
			p.AddrNotAvail += s.AddrNotAvail
			p.ConnectedLate += s.ConnectedLate
			p.LatencyMaxMs = max(p.LatencyMaxMs, s.LatencyMaxMs)
		}
	}
	return out
}

// mergeBurst merges the burst results of a cell's client hosts (each
// host's share issued at one instant) into the cell's: counts and latency
// steps added, percentiles of the merged connect and latency histograms.
func mergeBurst(rs []*connresult.BurstResult) (*connresult.BurstResult, *mergeResult) {
	mr := &mergeResult{}
	if len(rs) == 1 {
		return rs[0], mr
	}
	hs := make([]connresult.Header, len(rs))
	for i, r := range rs {
		hs[i] = r.Header
	}
	out := &connresult.BurstResult{Header: header(hs), Path: rs[0].Path, Errors: map[string]uint64{}, StatusCodes: map[string]uint64{}}
	for _, r := range rs {
		out.ConnsTarget += r.ConnsTarget
		out.IssueS = max(out.IssueS, r.IssueS)
		out.ConnsAttempted += r.ConnsAttempted
		out.ConnsEstablished += r.ConnsEstablished
		out.ConnsCompleted += r.ConnsCompleted
		out.ConnsFailed += r.ConnsFailed
		out.ConnsNeverUp += r.ConnsNeverUp
		out.Steps.Under1s += r.Steps.Under1s
		out.Steps.From1s += r.Steps.From1s
		out.Steps.From3s += r.Steps.From3s
		out.Steps.From7sUp += r.Steps.From7sUp
		addCounts(out.Errors, r.Errors)
		addCounts(out.StatusCodes, r.StatusCodes)
	}
	h := func(r *connresult.BurstResult) map[string]*connresult.Dump { return r.Histograms }
	mr.percentiles("connect", hists(rs, h, "connect"),
		pct{0.5, "connect_latency_p50_ms", &out.ConnectLatencyP50, each(rs, func(r *connresult.BurstResult) *float64 { return r.ConnectLatencyP50 })},
		pct{0.99, "connect_latency_p99_ms", &out.ConnectLatencyP99, each(rs, func(r *connresult.BurstResult) *float64 { return r.ConnectLatencyP99 })},
		pct{1, "connect_latency_max_ms", &out.ConnectLatencyMax, each(rs, func(r *connresult.BurstResult) *float64 { return r.ConnectLatencyMax })})
	mr.percentiles("latency", hists(rs, h, "latency"),
		pct{0.5, "latency_p50_ms", &out.LatencyP50Ms, each(rs, func(r *connresult.BurstResult) *float64 { return r.LatencyP50Ms })},
		pct{0.9, "latency_p90_ms", &out.LatencyP90Ms, each(rs, func(r *connresult.BurstResult) *float64 { return r.LatencyP90Ms })},
		pct{0.99, "latency_p99_ms", &out.LatencyP99Ms, each(rs, func(r *connresult.BurstResult) *float64 { return r.LatencyP99Ms })},
		pct{1, "latency_max_ms", &out.LatencyMaxMs, each(rs, func(r *connresult.BurstResult) *float64 { return r.LatencyMaxMs })})
	return out, mr
}

// sumOf adds vs up; nil when one of them is nil. The sum of one is that
// one, unchanged.
func sumOf(vs []*float64) *float64 {
	if len(vs) == 1 {
		return vs[0]
	}
	t := 0.0
	for _, v := range vs {
		if v == nil {
			return nil
		}
		t += *v
	}
	return summary.F(round(t, 1))
}
