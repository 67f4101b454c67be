// Package httpphase is what the HTTP phases (1: wrk baseline, 2: payload x
// concurrency matrix) share: reading a load generator's raw output (the wrk
// hook's JSON line and text, oha's JSON) into one shape, the per-cell metrics
// of summary.json, the Phase 0 baseline a cell is compared with, and the
// verdict that names what bound a cell.
package httpphase

import (
	"bytes"
	"csbench/internal/rundir"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"csbench/internal/dist"
	"csbench/internal/parse"
	"csbench/internal/sizes"
)

// Load is what one load generator run measured, whichever tool ran.
type Load struct {
	Tool string // "wrk", "oha" or "h2load"
	// Protocol is the application protocol the tool reported (h2load's
	// "Application protocol:": h2, h2c or http/1.1); "" when the tool
	// does not say (wrk and oha speak HTTP/1.1).
	Protocol  string
	DurationS float64 // the measured run's wall time
	Responses float64 // responses read, whatever their status
	// OK counts the responses that carried the payload: wrk's requests less
	// its "Non-2xx or 3xx" count; oha's 2xx responses.
	OK float64
	// WireBytes is the HTTP bytes read: status lines, headers and bodies.
	// wrk counts them itself; for oha (which counts bodies only) it is
	// Responses x one response's size as curl saw it; nil when unknown.
	WireBytes *float64
	// WireBasis says where WireBytes came from.
	WireBasis string
	// Latency in ms: "mean", "stdev", "max", "p50", "p75", "p90", "p95",
	// "p99", "p99_9"; nil when the tool did not measure it.
	Latency map[string]*float64
	// Errors by kind: wrk's connect/read/write/timeout and status (non-2xx
	// or 3xx responses); oha's error distribution, verbatim keys, and
	// "status" for its non-2xx responses.
	Errors map[string]float64
	// ErrorsTotal counts the requests that failed: socket errors, timeouts
	// and error statuses (oha: not the requests its deadline aborted).
	ErrorsTotal float64
	// Aborted counts oha's requests aborted at the deadline (without
	// --wait-ongoing-requests-after-deadline); not an error of the server.
	Aborted float64
	// StatusCodes is the status distribution: oha's per code; wrk only
	// knows "2xx/3xx" and "non-2xx/3xx".
	StatusCodes map[string]float64
	// CrossCheck is "" when wrk's text, the hook's JSON and its
	// distribution line agree, else the disagreement.
	CrossCheck string
	// Dist is every latency value (us) wrk recorded with its count, from
	// the hook's CSB_WRK_DIST line; nil for oha and for wrk runs made
	// before the line existed. Several clients' Dists merge exactly.
	Dist *dist.Dist
	// DistMissing says why a wrk run has no Dist ("" for oha, which has
	// none by nature, and when Dist is set).
	DistMissing string
	// Parts are the clients' loads a merge was made of (nil for one
	// client's own load, and for the merge of one, which is that load).
	Parts []*Load
}

func (l *Load) parts() []*Load {
	if l.Parts == nil {
		return []*Load{l}
	}
	return l.Parts
}

// RPS is the successful responses (OK) per second: a client's over its
// own run, a merge's the sum of its clients' (each over its own run). A
// response with an error status is not served load.
func (l *Load) RPS() float64 {
	rps := 0.0
	for _, p := range l.parts() {
		rps += p.OK / p.DurationS
	}
	return rps
}

// LatencyKeys are the latency figures every cell reports, in order.
var LatencyKeys = []string{"mean", "stdev", "max", "p50", "p75", "p90", "p95", "p99", "p99_9"}

func usToMs(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p / 1000
	return &v
}

// ReadWrk reads raw/<cell>.txt: wrk's text with the CSB_WRK_JSON line of
// lib/wrk/report.lua. The JSON is the source of every figure; the text is
// a cross-check.
func ReadWrk(path string) (*Load, error) {
	out, err := rundir.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no wrk output: %w", err)
	}
	f := bytes.NewReader(out)
	j, err := parse.ParseWrkJSON(f)
	if err != nil {
		return nil, err
	}
	l := &Load{
		Tool:      "wrk",
		DurationS: float64(j.DurationUs) / 1e6,
		Responses: float64(j.Requests),
		OK:        float64(j.Requests - min(j.Errors.Status, j.Requests)),
		WireBasis: "wrk's bytes read (status lines, headers and bodies)",
		Latency: map[string]*float64{
			"mean": usToMs(j.LatencyMeanUs), "stdev": usToMs(j.LatencyStdevUs), "max": usToMs(j.LatencyMaxUs),
			"p50": usToMs(j.LatencyP50Us), "p75": usToMs(j.LatencyP75Us), "p90": usToMs(j.LatencyP90Us),
			"p95": usToMs(j.LatencyP95Us), "p99": usToMs(j.LatencyP99Us), "p99_9": usToMs(j.LatencyP999Us),
		},
		Errors: map[string]float64{
			"connect": float64(j.Errors.Connect), "read": float64(j.Errors.Read), "write": float64(j.Errors.Write),
			"timeout": float64(j.Errors.Timeout), "status": float64(j.Errors.Status),
		},
		StatusCodes: map[string]float64{
			"2xx/3xx":     float64(j.Requests - min(j.Errors.Status, j.Requests)),
			"non-2xx/3xx": float64(j.Errors.Status),
		},
	}
	b := float64(j.Bytes)
	l.WireBytes = &b
	for _, v := range l.Errors {
		l.ErrorsTotal += v
	}
	conns := 0
	if _, err := f.Seek(0, 0); err == nil {
		if t, err := parse.ParseWrkText(f); err != nil {
			l.CrossCheck = "wrk's text could not be read: " + err.Error()
		} else {
			conns = t.Connections
			if err := parse.CrossCheckWrk(j, t); err != nil {
				l.CrossCheck = err.Error()
			}
		}
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, fmt.Errorf("wrk output: %w", err)
	}
	// The distribution line serves merging only: when it is malformed or
	// disagrees with the JSON line, the run keeps its own figures and the
	// line is not merged (DistMissing says why), never merged unchecked.
	note := func(what string) {
		l.DistMissing = what
		if l.CrossCheck != "" {
			l.CrossCheck += "; "
		}
		l.CrossCheck += what
	}
	wd, err := parse.ParseWrkDist(f)
	switch {
	case err != nil:
		note("its distribution line is unreadable: " + err.Error())
	case wd == nil:
		l.DistMissing = "wrk's output has no " + strings.TrimSpace(parse.WrkDistPrefix) + " line (a hook older than it)"
	case !wd.Complete:
		l.DistMissing = fmt.Sprintf("the hook could not hand over wrk's distribution (%d distinct values) within its budget", wd.Distinct)
	default:
		if err := parse.CrossCheckWrkDist(wd.Dist, j, conns); err != nil {
			note("its distribution line disagrees with the JSON line: " + err.Error())
		} else {
			d := wd.Dist
			l.Dist = &d
		}
	}
	return l, nil
}

// ReadOha reads raw/<cell>.json, what `oha --no-tui -j` (or
// --output-format json) printed. responseBytes is the size of one whole
// response (status line, headers, body) as curl fetched it, or nil.
func ReadOha(path string, responseBytes *float64) (*Load, error) {
	f, err := rundir.Open(path)
	if err != nil {
		return nil, fmt.Errorf("no oha output: %w", err)
	}
	defer f.Close()
	o, err := parse.ParseOha(f)
	if err != nil {
		return nil, err
	}
	l := &Load{
		Tool:      "oha",
		DurationS: o.TotalS,
		Responses: float64(o.Responses),
		Latency: map[string]*float64{
			"mean": o.LatencyMeanMs, "stdev": nil, "max": o.LatencySlowestMs,
			"p50": o.LatencyP50Ms, "p75": o.LatencyP75Ms, "p90": o.LatencyP90Ms,
			"p95": o.LatencyP95Ms, "p99": o.LatencyP99Ms, "p99_9": o.LatencyP999Ms,
		},
		Errors:      map[string]float64{},
		StatusCodes: map[string]float64{},
		Aborted:     float64(o.DeadlineAborted),
	}
	for code, n := range o.StatusCodes {
		l.StatusCodes[strconv.Itoa(code)] = float64(n)
		if code >= 200 && code <= 299 {
			l.OK += float64(n)
		}
	}
	for msg, n := range o.ErrorDistribution {
		if msg != parse.OhaDeadlineError {
			l.Errors[msg] = float64(n)
		}
	}
	if n := o.Non2xx(); n > 0 {
		l.Errors["status"] = float64(n)
	}
	l.ErrorsTotal = float64(o.ErrorsExceptDeadline() + o.Non2xx())
	if responseBytes != nil {
		b := l.Responses * *responseBytes
		l.WireBytes = &b
		l.WireBasis = "oha's responses x one response's size as curl read it (raw/headers/): oha counts bodies only"
	} else {
		l.WireBasis = "unknown: oha counts bodies only and no response was captured in raw/headers/"
	}
	return l, nil
}

// ResponseBytes is the size of one whole response to /payload/<size>: the
// status line and headers curl wrote to raw/headers/<size>.txt, plus the
// body. nil when the capture is missing or empty.
func ResponseBytes(dir, size string) *float64 {
	body, err := sizes.ParseSize(size)
	if err != nil {
		return nil
	}
	st, err := os.Stat(filepath.Join(dir, "raw", "headers", size+".txt"))
	if err != nil || st.Size() == 0 {
		return nil
	}
	v := float64(st.Size()) + float64(body)
	return &v
}

// H2loadLogName is the name of h2load's --log-file beside its text output
// <cell>.h2load.txt: <cell>.h2load.log.
func H2loadLogName(textPath string) string {
	return strings.TrimSuffix(textPath, ".txt") + ".log"
}

// ReadH2load reads raw/<cell>.h2load.txt, what h2load printed, and the
// --log-file beside it (H2loadLogName): one line per request, the source
// of the latency distribution (every request's, so several clients' merge
// exactly), tied to the text by parse.CrossCheckH2load; where the log is
// not there, the tally that took its place (H2loadTallyName). Responses are the
// completed requests (any status), OK the 2xx and 3xx ones; the streams
// that closed in error and the requests h2load never sent or abandoned are
// errors ("errored"), as are the error statuses ("status"). The wire bytes
// are h2load's traffic total: every frame it read, headers (HPACK), data
// and control, which HTTP/1.1's status lines and headers compare with.
func ReadH2load(path string) (*Load, error) {
	tf, err := rundir.Open(path)
	if err != nil {
		return nil, fmt.Errorf("no h2load output: %w", err)
	}
	defer tf.Close()
	t, err := parse.ParseH2loadText(tf)
	if err != nil {
		return nil, err
	}
	lg, err := readH2loadTally(path)
	if err != nil {
		return nil, err
	}
	if t.DurationS == nil {
		return nil, fmt.Errorf("h2load ran a request count (-n), not a duration (-D): not a cell of this phase")
	}
	completed := float64(t.Completed())
	ok := float64(t.Succeeded)
	wire := float64(t.TrafficBytes)
	l := &Load{
		Tool:      "h2load",
		DurationS: *t.DurationS,
		Responses: completed,
		OK:        ok,
		WireBytes: &wire,
		WireBasis: "h2load's traffic (every frame read: HPACK headers, data, control)",
		Errors: map[string]float64{
			"errored": float64(t.Errored), "timeout": float64(t.Timeout), "status": completed - ok,
		},
		ErrorsTotal: float64(t.Failed),
		StatusCodes: map[string]float64{
			"2xx": float64(t.Status2xx), "3xx": float64(t.Status3xx), "4xx": float64(t.Status4xx), "5xx": float64(t.Status5xx),
		},
		Protocol: t.Protocol,
	}
	if err := parse.CrossCheckH2load(t, lg); err != nil {
		l.CrossCheck = err.Error()
		l.DistMissing = "h2load's log disagrees with its text: " + err.Error()
		l.Latency = latencyOf(dist.Dist{}) // none: the log is not this run's
		return l, nil
	}
	d := lg.Latency
	l.Dist = &d
	l.Latency = latencyOf(d)
	return l, nil
}
