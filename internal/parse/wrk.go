package parse

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"csbench/internal/dist"
)

// WrkJSONPrefix starts the line that lib/wrk/report.lua prints from wrk's
// done() hook.
const WrkJSONPrefix = "CSB_WRK_JSON "

// WrkResult is the line that lib/wrk/report.lua printed:
// `wrk -t T -c C -d D --latency -s lib/wrk/report.lua URL`.
//
// Requests counts every response wrk read, non-2xx/3xx included, and also
// the responses that came after --timeout (Errors.Timeout), which wrk leaves
// out of the latency figures. A latency is nil when wrk recorded no latency
// sample at all (every response timed out); wrk's own text then shows 0.00us.
type WrkResult struct {
	Requests   uint64
	DurationUs uint64
	Bytes      uint64
	Errors     WrkErrors

	LatencyMinUs   *float64
	LatencyMeanUs  *float64
	LatencyStdevUs *float64
	LatencyMaxUs   *float64
	LatencyP50Us   *float64
	LatencyP75Us   *float64
	LatencyP90Us   *float64
	LatencyP95Us   *float64
	LatencyP99Us   *float64
	LatencyP999Us  *float64 // 99.9th percentile
}

// WrkErrors are wrk's error counters. Status counts responses with a status
// of 400 or more ("Non-2xx or 3xx responses"); the others are socket errors.
type WrkErrors struct {
	Connect uint64 `json:"connect"`
	Read    uint64 `json:"read"`
	Write   uint64 `json:"write"`
	Status  uint64 `json:"status"`
	Timeout uint64 `json:"timeout"`
}

// RequestsPerSecond is Requests over the run's duration, as wrk computes its
// "Requests/sec".
func (r *WrkResult) RequestsPerSecond() float64 {
	return float64(r.Requests) / (float64(r.DurationUs) / 1e6)
}

// BytesPerSecond is Bytes over the run's duration ("Transfer/sec").
func (r *WrkResult) BytesPerSecond() float64 {
	return float64(r.Bytes) / (float64(r.DurationUs) / 1e6)
}

type wrkJSON struct {
	Schema         int        `json:"schema"`
	Requests       *uint64    `json:"requests"`
	DurationUs     *uint64    `json:"duration_us"`
	Bytes          *uint64    `json:"bytes"`
	Errors         *WrkErrors `json:"errors"`
	LatencyMinUs   *float64   `json:"latency_min_us"`
	LatencyMeanUs  *float64   `json:"latency_mean_us"`
	LatencyStdevUs *float64   `json:"latency_stdev_us"`
	LatencyMaxUs   *float64   `json:"latency_max_us"`
	LatencyP50Us   *float64   `json:"latency_p50_us"`
	LatencyP75Us   *float64   `json:"latency_p75_us"`
	LatencyP90Us   *float64   `json:"latency_p90_us"`
	LatencyP95Us   *float64   `json:"latency_p95_us"`
	LatencyP99Us   *float64   `json:"latency_p99_us"`
	LatencyP999Us  *float64   `json:"latency_p99_9_us"`
}

// ParseWrkJSON finds the one line of wrk's stdout that starts with
// WrkJSONPrefix and reads it. It fails if there is no such line (the hook was
// not loaded, or wrk stopped before running: its first line is quoted in the
// error, e.g. "unable to connect to 127.0.0.1:8080 Connection refused"), if
// there are several, or if the line lacks a field the hook always prints.
// wrkMaxLine bounds one line of wrk's output. The hook's CSB_WRK_DIST line
// is the long one: a pair is at most ~40 bytes and wrk's histogram has at
// most one value per microsecond up to its timeout; at 10k connections a
// 5 s cell gave 1.2 MB. Every reader of the file takes that line in
// passing, so every one needs the room (the buffer grows only as needed).
const wrkMaxLine = 256 << 20

func ParseWrkJSON(r io.Reader) (*WrkResult, error) {
	var line []byte
	var first string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), wrkMaxLine)
	for sc.Scan() {
		b := sc.Bytes()
		if first == "" && len(bytes.TrimSpace(b)) > 0 {
			first = strings.TrimSpace(string(b))
		}
		if rest, ok := bytes.CutPrefix(b, []byte(WrkJSONPrefix)); ok {
			if line != nil {
				return nil, errors.New("wrk: more than one " + strings.TrimSpace(WrkJSONPrefix) + " line")
			}
			line = append([]byte(nil), rest...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("wrk: %w", err)
	}
	if line == nil {
		return nil, fmt.Errorf("wrk: no %s line (was wrk run with -s lib/wrk/report.lua?); wrk's output began: %q",
			strings.TrimSpace(WrkJSONPrefix), first)
	}
	var in wrkJSON
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("wrk: %s line: %w", strings.TrimSpace(WrkJSONPrefix), err)
	}
	if in.Schema != 1 {
		return nil, fmt.Errorf("wrk: %s schema %d, want 1", strings.TrimSpace(WrkJSONPrefix), in.Schema)
	}
	if in.Requests == nil || in.DurationUs == nil || in.Bytes == nil || in.Errors == nil {
		return nil, fmt.Errorf("wrk: %s line lacks requests, duration_us, bytes or errors", strings.TrimSpace(WrkJSONPrefix))
	}
	if *in.DurationUs == 0 {
		return nil, fmt.Errorf("wrk: %s duration_us is 0", strings.TrimSpace(WrkJSONPrefix))
	}
	// The counts are unsigned (the decoder refuses a negative one); the
	// latencies are floats, which a corrupted line can make negative.
	if err := nonNegative("wrk", f64("latency_min_us", in.LatencyMinUs), f64("latency_mean_us", in.LatencyMeanUs),
		f64("latency_stdev_us", in.LatencyStdevUs), f64("latency_max_us", in.LatencyMaxUs),
		f64("latency_p50_us", in.LatencyP50Us), f64("latency_p75_us", in.LatencyP75Us), f64("latency_p90_us", in.LatencyP90Us),
		f64("latency_p95_us", in.LatencyP95Us), f64("latency_p99_us", in.LatencyP99Us), f64("latency_p99_9_us", in.LatencyP999Us)); err != nil {
		return nil, err
	}
	return &WrkResult{
		Requests: *in.Requests, DurationUs: *in.DurationUs, Bytes: *in.Bytes, Errors: *in.Errors,
		LatencyMinUs: in.LatencyMinUs, LatencyMeanUs: in.LatencyMeanUs,
		LatencyStdevUs: in.LatencyStdevUs, LatencyMaxUs: in.LatencyMaxUs,
		LatencyP50Us: in.LatencyP50Us, LatencyP75Us: in.LatencyP75Us, LatencyP90Us: in.LatencyP90Us,
		LatencyP95Us: in.LatencyP95Us, LatencyP99Us: in.LatencyP99Us, LatencyP999Us: in.LatencyP999Us,
	}, nil
}

// WrkText is what wrk's own text summary says. wrk rounds every figure to
// two decimals and scales it (us/ms/s, KB/MB with 1024, k/M with 1000), so
// it is a cross-check on WrkResult, not a source of figures to quote.
type WrkText struct {
	URL         string
	Threads     int
	Connections int
	Requests    uint64  // "148767 requests in 2.10s, 17.17MB read"
	DurationS   float64 // 2.10
	ReadBytes   float64 // 17.17MB, as bytes

	RequestsPerSecond float64 // "Requests/sec:"
	BytesPerSecond    float64 // "Transfer/sec:", as bytes

	// The "Latency" row of Thread Stats and the "Latency Distribution"
	// (with --latency); all nil when wrk recorded no latency sample
	// (its "+/- Stdev" is then "-nan%").
	LatencyAvgUs          *float64
	LatencyStdevUs        *float64
	LatencyMaxUs          *float64
	LatencyWithinStdevPct *float64
	LatencyP50Us          *float64
	LatencyP75Us          *float64
	LatencyP90Us          *float64
	LatencyP99Us          *float64

	// Non2xx3xx is "Non-2xx or 3xx responses: N" (wrk prints the line only
	// when N > 0), Socket the "Socket errors:" line (printed only when one
	// is non-zero). Both are 0 when wrk did not print the line.
	Non2xx3xx uint64
	Socket    WrkErrors // Status is unused here
}

// ParseWrkText reads wrk's text summary, ignoring any other line (the
// hook's JSON line included). It fails if the "requests in", "Requests/sec"
// or "Transfer/sec" line is missing or malformed.
func ParseWrkText(r io.Reader) (*WrkText, error) {
	t := &WrkText{}
	var sawRequests, sawRPS, sawTransfer, inDist bool
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), wrkMaxLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		if !(len(f) == 2 && strings.HasSuffix(f[0], "%")) {
			inDist = false // the distribution is a run of "NN%  TIME" lines
		}
		var err error
		switch {
		case len(f) == 0:
			continue
		case strings.HasPrefix(line, "Running ") && len(f) >= 4 && f[len(f)-2] == "@":
			t.URL = f[len(f)-1]
		case len(f) == 5 && f[1] == "threads" && f[2] == "and" && f[4] == "connections":
			t.Threads, err = strconv.Atoi(f[0])
			if err == nil {
				t.Connections, err = strconv.Atoi(f[3])
			}
		case f[0] == "Latency" && len(f) == 5:
			err = t.latencyRow(f[1:])
		case line == "Latency Distribution":
			inDist = true
			continue
		case inDist && len(f) == 2 && strings.HasSuffix(f[0], "%"):
			var us float64
			if us, err = wrkTimeUs(f[1]); err == nil && t.LatencyWithinStdevPct != nil {
				p := &us
				switch f[0] {
				case "50%":
					t.LatencyP50Us = p
				case "75%":
					t.LatencyP75Us = p
				case "90%":
					t.LatencyP90Us = p
				case "99%":
					t.LatencyP99Us = p
				}
			}
		case len(f) == 6 && f[1] == "requests" && f[2] == "in" && f[5] == "read":
			sawRequests = true
			if t.Requests, err = strconv.ParseUint(f[0], 10, 64); err == nil {
				if t.DurationS, err = wrkTimeS(strings.TrimSuffix(f[3], ",")); err == nil {
					t.ReadBytes, err = wrkBytes(f[4])
				}
			}
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:") && len(f) == 5:
			t.Non2xx3xx, err = strconv.ParseUint(f[4], 10, 64)
		case strings.HasPrefix(line, "Socket errors:"):
			err = t.socketErrors(strings.TrimPrefix(line, "Socket errors:"))
		case f[0] == "Requests/sec:" && len(f) == 2:
			sawRPS = true
			t.RequestsPerSecond, err = strconv.ParseFloat(f[1], 64)
		case f[0] == "Transfer/sec:" && len(f) == 2:
			sawTransfer = true
			t.BytesPerSecond, err = wrkBytes(f[1])
		}
		if err != nil {
			return nil, fmt.Errorf("wrk text: %q: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("wrk text: %w", err)
	}
	if !sawRequests || !sawRPS || !sawTransfer {
		return nil, errors.New(`wrk text: no "N requests in", "Requests/sec:" or "Transfer/sec:" line: not a wrk summary`)
	}
	return t, nil
}

// latencyRow reads "102.94us  335.15us   5.78ms   96.74%".
func (t *WrkText) latencyRow(f []string) error {
	p := strings.TrimSuffix(f[3], "%")
	if strings.EqualFold(strings.TrimLeft(p, "+-"), "nan") {
		return nil // no sample: wrk prints "0.00us 0.00us 0.00us -nan%"
	}
	pct, err := strconv.ParseFloat(p, 64)
	if err != nil {
		return err
	}
	var v [3]float64
	for i := range v {
		if v[i], err = wrkTimeUs(f[i]); err != nil {
			return err
		}
	}
	t.LatencyAvgUs, t.LatencyStdevUs, t.LatencyMaxUs, t.LatencyWithinStdevPct = &v[0], &v[1], &v[2], &pct
	return nil
}

// socketErrors reads " connect 0, read 8, write 142977, timeout 0".
func (t *WrkText) socketErrors(s string) error {
	for _, part := range strings.Split(s, ",") {
		kv := strings.Fields(part)
		if len(kv) != 2 {
			return fmt.Errorf("socket error %q", part)
		}
		n, err := strconv.ParseUint(kv[1], 10, 64)
		if err != nil {
			return err
		}
		switch kv[0] {
		case "connect":
			t.Socket.Connect = n
		case "read":
			t.Socket.Read = n
		case "write":
			t.Socket.Write = n
		case "timeout":
			t.Socket.Timeout = n
		default:
			return fmt.Errorf("socket error kind %q", kv[0])
		}
	}
	return nil
}

// wrkScaled splits "17.17MB" into 17.17 and the multiplier of its unit.
func wrkScaled(s string, units []string, mult []float64) (float64, error) {
	for i, u := range units {
		num, ok := strings.CutSuffix(s, u)
		if !ok {
			continue
		}
		x, err := strconv.ParseFloat(num, 64)
		if err != nil {
			continue // "ms" also ends in "s": try the next unit
		}
		return x * mult[i], nil
	}
	return 0, fmt.Errorf("%q: no number with a unit in %v", s, units)
}

// wrkTimeUs reads a wrk time such as "46.00us", "1.91ms", "2.10s", "1.00m".
func wrkTimeUs(s string) (float64, error) {
	return wrkScaled(s, []string{"us", "ms", "s", "m", "h"}, []float64{1, 1e3, 1e6, 60e6, 3600e6})
}

func wrkTimeS(s string) (float64, error) {
	us, err := wrkTimeUs(s)
	return us / 1e6, err
}

// wrkBytes reads a wrk size such as "322.09B", "0.95KB", "8.17MB" (1024-based).
func wrkBytes(s string) (float64, error) {
	return wrkScaled(s, []string{"KB", "MB", "GB", "TB", "PB", "B"},
		[]float64{1 << 10, 1 << 20, 1 << 30, 1 << 40, 1 << 50, 1})
}

// wrkByteUnit is the 1024-based unit a byte count of n is at most one of:
// 1 for n < 1024, 1024 up to 1 MiB, and so on (9.3e8 bytes: 1 GiB).
func wrkByteUnit(n float64) float64 {
	unit := 1.0
	for unit < n {
		unit *= 1024
	}
	return unit
}

// CrossCheckWrk checks that the hook's JSON and wrk's text describe the same
// run: the same request count and error counts, and rates and latencies that
// agree to wrk's two printed decimals. It returns nil or an error listing
// every disagreement.
func CrossCheckWrk(j *WrkResult, t *WrkText) error {
	var errs []error
	if j.Requests != t.Requests {
		errs = append(errs, fmt.Errorf("requests: JSON %d, text %d", j.Requests, t.Requests))
	}
	if j.Errors.Status != t.Non2xx3xx {
		errs = append(errs, fmt.Errorf("non-2xx/3xx: JSON %d, text %d", j.Errors.Status, t.Non2xx3xx))
	}
	sock := j.Errors
	sock.Status = 0
	if sock != t.Socket {
		errs = append(errs, fmt.Errorf("socket errors: JSON %+v, text %+v", sock, t.Socket))
	}
	// wrk prints 2 decimals: allow half a unit in the last place, relative
	// to the printed magnitude (3 significant digits at worst, "1.91ms").
	near := func(what string, got, want float64) {
		if math.Abs(got-want) > 0.005*math.Max(1, math.Abs(want)) {
			errs = append(errs, fmt.Errorf("%s: JSON %v, text %v", what, want, got))
		}
	}
	near("requests/sec", t.RequestsPerSecond, j.RequestsPerSecond())
	near("transfer/sec", t.BytesPerSecond, j.BytesPerSecond())
	near("duration", t.DurationS, float64(j.DurationUs)/1e6)
	// Bytes read may print below 1 in its unit ("0.86GB": wrk moves to the
	// next 1024-unit early), where two decimals are two significant digits:
	// allow half of 0.01 of that unit.
	if unit := wrkByteUnit(float64(j.Bytes)); math.Abs(t.ReadBytes-float64(j.Bytes)) > 0.005*unit {
		near("bytes read", t.ReadBytes, float64(j.Bytes))
	}
	pairs := []struct {
		what string
		j, t *float64
	}{
		{"latency mean", j.LatencyMeanUs, t.LatencyAvgUs},
		{"latency stdev", j.LatencyStdevUs, t.LatencyStdevUs},
		{"latency max", j.LatencyMaxUs, t.LatencyMaxUs},
		{"latency p50", j.LatencyP50Us, t.LatencyP50Us},
		{"latency p75", j.LatencyP75Us, t.LatencyP75Us},
		{"latency p90", j.LatencyP90Us, t.LatencyP90Us},
		{"latency p99", j.LatencyP99Us, t.LatencyP99Us},
	}
	for _, p := range pairs {
		switch {
		case (p.j == nil) != (p.t == nil):
			errs = append(errs, fmt.Errorf("%s: measured in one output only (JSON %v, text %v)", p.what, p.j != nil, p.t != nil))
		case p.j != nil:
			near(p.what, *p.t, *p.j)
		}
	}
	return errors.Join(errs...)
}

// WrkDistPrefix starts the line, after the WrkJSONPrefix one, in which
// lib/wrk/report.lua prints every latency value wrk recorded with its count.
const WrkDistPrefix = "CSB_WRK_DIST "

// WrkDistSchema is the schema of the WrkDistPrefix line.
const WrkDistSchema = "csb.wrkdist/v1"

type wrkDistJSON struct {
	Schema   string     `json:"schema"`
	Unit     string     `json:"unit"`
	Complete *bool      `json:"complete"`
	Distinct *uint64    `json:"distinct"`
	Values   *dist.Dist `json:"values"`
}

// WrkDist is the WrkDistPrefix line: the distribution (values in
// microseconds), or, when the hook could not read wrk's histogram cheaply
// and its walk ran past its budget, Complete false and no values.
type WrkDist struct {
	Dist     dist.Dist
	Complete bool
	Distinct uint64 // with Complete false: how many distinct values wrk had
}

// ParseWrkDist finds the one line of wrk's stdout that starts with
// WrkDistPrefix and reads it. It returns nil, with no error, when there is
// no such line: wrk ran with a hook older than the line (every run made
// before it). It fails on several such lines, an unknown field or schema, a
// unit other than "us", values that are not strictly increasing with counts
// above zero, or "complete":false with values.
func ParseWrkDist(r io.Reader) (*WrkDist, error) {
	var line []byte
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), wrkMaxLine)
	name := strings.TrimSpace(WrkDistPrefix)
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(WrkDistPrefix)); ok {
			if line != nil {
				return nil, errors.New("wrk: more than one " + name + " line")
			}
			line = append([]byte(nil), rest...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("wrk: %w", err)
	}
	if line == nil {
		return nil, nil
	}
	var in wrkDistJSON
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("wrk: %s line: %w", name, err)
	}
	switch {
	case in.Schema != WrkDistSchema:
		return nil, fmt.Errorf("wrk: %s schema %q, want %q", name, in.Schema, WrkDistSchema)
	case in.Unit != "us":
		return nil, fmt.Errorf("wrk: %s unit %q, want \"us\"", name, in.Unit)
	case in.Values == nil:
		return nil, fmt.Errorf("wrk: %s line lacks values", name)
	}
	out := &WrkDist{Dist: *in.Values, Complete: in.Complete == nil || *in.Complete}
	if !out.Complete {
		if in.Values.Count() != 0 || in.Distinct == nil {
			return nil, fmt.Errorf("wrk: %s line says complete:false but has values or no distinct count", name)
		}
		out.Distinct = *in.Distinct
	}
	return out, nil
}

// WrkPercentiles are the percentiles the hook's JSON line carries, with
// the JSON's value for each.
func (r *WrkResult) WrkPercentiles() []struct {
	P  float64
	Us *float64
} {
	return []struct {
		P  float64
		Us *float64
	}{
		{50, r.LatencyP50Us}, {75, r.LatencyP75Us}, {90, r.LatencyP90Us},
		{95, r.LatencyP95Us}, {99, r.LatencyP99Us}, {99.9, r.LatencyP999Us},
	}
}

// CrossCheckWrkDist checks the distribution line against the hook's JSON
// line of the same run, which wrk computed from the same histogram: min,
// max and every percentile must be equal (dist.Percentile follows wrk's
// rule), the mean equal to float precision. The count is checked too: wrk
// records requests less timeouts, then (wrk 4, src/wrk.c) adds
// stats_correct's synthetic samples for coordinated omission, at an
// interval of duration / (requests / connections); connections is wrk's
// -c (the text's "N connections"; 0 skips the count). Undoing that
// correction must leave exactly requests - timeouts samples. It returns
// nil or an error listing every disagreement.
func CrossCheckWrkDist(d dist.Dist, j *WrkResult, connections int) error {
	var errs []error
	if j.LatencyMinUs == nil {
		if d.Count() != 0 {
			errs = append(errs, fmt.Errorf("distribution has %d samples, JSON none", d.Count()))
		}
		return errors.Join(errs...)
	}
	if d.Count() == 0 {
		return errors.New("distribution empty, JSON has latencies")
	}
	mn, _ := d.Min()
	mx, _ := d.Max()
	if float64(mn) != *j.LatencyMinUs {
		errs = append(errs, fmt.Errorf("min: distribution %d, JSON %v", mn, *j.LatencyMinUs))
	}
	if j.LatencyMaxUs != nil && float64(mx) != *j.LatencyMaxUs {
		errs = append(errs, fmt.Errorf("max: distribution %d, JSON %v", mx, *j.LatencyMaxUs))
	}
	if mean, _ := d.Mean(); j.LatencyMeanUs != nil && math.Abs(mean-*j.LatencyMeanUs) > 1e-9*math.Max(1, *j.LatencyMeanUs) {
		errs = append(errs, fmt.Errorf("mean: distribution %v, JSON %v", mean, *j.LatencyMeanUs))
	}
	for _, p := range j.WrkPercentiles() {
		if p.Us == nil {
			continue
		}
		if v, _ := d.Percentile(p.P); float64(v) != *p.Us {
			errs = append(errs, fmt.Errorf("p%v: distribution %d, JSON %v", p.P, v, *p.Us))
		}
	}
	if connections > 0 {
		recorded := j.Requests - min(j.Errors.Timeout, j.Requests)
		if n := uncorrectedCount(d, j.DurationUs, j.Requests, uint64(connections)); n != recorded {
			errs = append(errs, fmt.Errorf("count: distribution %d samples (%d before wrk's correction), JSON requests - timeouts = %d",
				d.Count(), n, recorded))
		}
	}
	return errors.Join(errs...)
}

// uncorrectedCount undoes wrk's stats_correct: for every value n >= 2e
// (e = duration / (requests / connections), integer division as in wrk),
// the count n had before the correction was added at n-e, n-2e, ... while
// above e. Walking down from the maximum, each value's added count is
// known before it is read.
func uncorrectedCount(d dist.Dist, durationUs, requests, connections uint64) uint64 {
	if requests/connections == 0 {
		return d.Count()
	}
	e := durationUs / (requests / connections)
	if e == 0 {
		return d.Count()
	}
	added := map[uint64]uint64{}
	var n uint64
	pairs := d.Pairs()
	for i := len(pairs) - 1; i >= 0; i-- {
		p := pairs[i]
		orig := p.Count - min(added[p.Value], p.Count)
		n += orig
		if p.Value >= 2*e && orig > 0 {
			for m := p.Value - e; m > e; m -= e {
				added[m] += orig
			}
		}
	}
	return n
}
