package parse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// OhaDeadlineError is the errorDistribution key under which oha counts the
// requests still in flight when its -z deadline ended the run.
const OhaDeadlineError = "aborted due to deadline"

// OhaResult is what `oha --no-tui -j ...` printed. oha states every duration
// in seconds; here they are converted to milliseconds.
//
// oha's own terms, which this struct keeps: a "response" is any request that
// got an HTTP status, 4xx and 5xx included; an "error" is a request that got
// none (connect failure, timeout, reset, deadline abort), counted in
// errorDistribution under free-text keys. oha's figures, read from its
// source and checked against the real fixture:
//
//   - successRate = responses / (responses + errors other than deadline
//     aborts): a 503 counts as a success, a deadline abort counts nowhere;
//   - requestsPerSec = (responses + every error, deadline aborts included)
//     / total;
//   - slowest, fastest, average and the latency percentiles cover responses
//     only, and are null (nil here) when there is none.
type OhaResult struct {
	TotalS float64 // summary.total: the run's wall time, in seconds

	RequestsTotal   uint64 // Responses + Errors
	Responses       uint64 // sum of statusCodeDistribution
	Errors          uint64 // sum of errorDistribution, deadline aborts included
	DeadlineAborted uint64 // errorDistribution[OhaDeadlineError]

	SuccessRate       *float64 // summary.successRate, 0..1, oha's definition
	RequestsPerSecond float64  // summary.requestsPerSec, oha's definition

	LatencyMeanMs    *float64 // summary.average
	LatencyFastestMs *float64 // summary.fastest
	LatencySlowestMs *float64 // summary.slowest
	LatencyP50Ms     *float64
	LatencyP75Ms     *float64
	LatencyP90Ms     *float64
	LatencyP95Ms     *float64
	LatencyP99Ms     *float64
	LatencyP999Ms    *float64 // 99.9th percentile
	LatencyP9999Ms   *float64 // 99.99th percentile
	// LatencyPercentilesMs holds every percentile oha printed, keyed as
	// oha keys them ("p10", "p99.9", ...); a null one is absent.
	LatencyPercentilesMs map[string]float64

	TotalDataBytes      uint64
	SizePerRequestBytes *uint64 // null when there was no response
	SizePerSecondBytes  float64
	StatusCodes         map[int]uint64    // statusCodeDistribution
	ErrorDistribution   map[string]uint64 // errorDistribution, keys verbatim
	// ResponseTimeHistogram is responseTimeHistogram in ascending order of
	// oha's bucket labels (strings in the JSON), converted to ms.
	ResponseTimeHistogram []OhaBucket
}

// OhaBucket is one bar of oha's response time histogram: Count responses
// fell in the bucket that oha labels LatencyMs.
type OhaBucket struct {
	LatencyMs float64
	Count     uint64
}

type ohaJSON struct {
	Summary *struct {
		SuccessRate    *float64 `json:"successRate"`
		Total          *float64 `json:"total"`
		Slowest        *float64 `json:"slowest"`
		Fastest        *float64 `json:"fastest"`
		Average        *float64 `json:"average"`
		RequestsPerSec *float64 `json:"requestsPerSec"`
		TotalData      *uint64  `json:"totalData"`
		SizePerRequest *uint64  `json:"sizePerRequest"`
		SizePerSec     *float64 `json:"sizePerSec"`
	} `json:"summary"`
	ResponseTimeHistogram  map[string]uint64   `json:"responseTimeHistogram"`
	LatencyPercentiles     map[string]*float64 `json:"latencyPercentiles"`
	StatusCodeDistribution map[string]uint64   `json:"statusCodeDistribution"`
	ErrorDistribution      map[string]uint64   `json:"errorDistribution"`
}

// ParseOha reads the JSON that `oha --no-tui -j` printed. It fails if the
// input is not oha's JSON (no summary, total or requestsPerSec, no
// statusCodeDistribution or errorDistribution) or if a status code or
// histogram key is not a number.
func ParseOha(r io.Reader) (*OhaResult, error) {
	var in ohaJSON
	if err := json.NewDecoder(r).Decode(&in); err != nil {
		return nil, fmt.Errorf("oha: not oha -j output: %w", err)
	}
	s := in.Summary
	if s == nil || s.Total == nil || s.RequestsPerSec == nil || s.TotalData == nil ||
		in.StatusCodeDistribution == nil || in.ErrorDistribution == nil {
		return nil, errors.New("oha: no summary.total, summary.requestsPerSec, summary.totalData, statusCodeDistribution or errorDistribution: not oha -j output")
	}
	fs := []field{f64("summary.total", s.Total), f64("summary.successRate", s.SuccessRate),
		f64("summary.slowest", s.Slowest), f64("summary.fastest", s.Fastest), f64("summary.average", s.Average),
		f64("summary.requestsPerSec", s.RequestsPerSec), f64("summary.sizePerSec", s.SizePerSec)}
	for _, k := range sortedKeys(in.LatencyPercentiles) {
		fs = append(fs, f64("latencyPercentiles."+k, in.LatencyPercentiles[k]))
	}
	if err := nonNegative("oha", fs...); err != nil {
		return nil, err
	}
	ms := func(sec *float64) *float64 {
		if sec == nil {
			return nil
		}
		v := *sec * 1000
		return &v
	}
	res := &OhaResult{
		TotalS:               *s.Total,
		SuccessRate:          s.SuccessRate,
		RequestsPerSecond:    *s.RequestsPerSec,
		LatencyMeanMs:        ms(s.Average),
		LatencyFastestMs:     ms(s.Fastest),
		LatencySlowestMs:     ms(s.Slowest),
		TotalDataBytes:       *s.TotalData,
		SizePerRequestBytes:  s.SizePerRequest,
		StatusCodes:          map[int]uint64{},
		ErrorDistribution:    map[string]uint64{},
		LatencyPercentilesMs: map[string]float64{},
	}
	if s.SizePerSec != nil {
		res.SizePerSecondBytes = *s.SizePerSec
	}
	for code, n := range in.StatusCodeDistribution {
		c, err := strconv.Atoi(code)
		if err != nil {
			return nil, fmt.Errorf("oha: status code %q is not a number", code)
		}
		res.StatusCodes[c] = n
		res.Responses += n
	}
	for msg, n := range in.ErrorDistribution {
		res.ErrorDistribution[msg] = n
		res.Errors += n
	}
	res.DeadlineAborted = in.ErrorDistribution[OhaDeadlineError]
	res.RequestsTotal = res.Responses + res.Errors
	for k, v := range in.LatencyPercentiles {
		if v != nil {
			res.LatencyPercentilesMs[k] = *v * 1000
		}
	}
	pct := func(key string) *float64 {
		v, ok := res.LatencyPercentilesMs[key]
		if !ok {
			return nil
		}
		return &v
	}
	res.LatencyP50Ms, res.LatencyP75Ms, res.LatencyP90Ms = pct("p50"), pct("p75"), pct("p90")
	res.LatencyP95Ms, res.LatencyP99Ms = pct("p95"), pct("p99")
	res.LatencyP999Ms, res.LatencyP9999Ms = pct("p99.9"), pct("p99.99")
	for k, n := range in.ResponseTimeHistogram {
		sec, err := strconv.ParseFloat(k, 64)
		if err != nil {
			return nil, fmt.Errorf("oha: responseTimeHistogram key %q is not a number", k)
		}
		if err := nonNegative("oha", val("responseTimeHistogram key", sec)); err != nil {
			return nil, err
		}
		res.ResponseTimeHistogram = append(res.ResponseTimeHistogram, OhaBucket{LatencyMs: sec * 1000, Count: n})
	}
	sort.Slice(res.ResponseTimeHistogram, func(i, j int) bool {
		return res.ResponseTimeHistogram[i].LatencyMs < res.ResponseTimeHistogram[j].LatencyMs
	})
	return res, nil
}

// Non2xx returns the number of responses whose status is not 2xx.
func (r *OhaResult) Non2xx() uint64 {
	var n uint64
	for code, c := range r.StatusCodes {
		if code < 200 || code > 299 {
			n += c
		}
	}
	return n
}

// ErrorsExceptDeadline returns the errors other than deadline aborts: the
// failures the server (or the network) caused.
func (r *OhaResult) ErrorsExceptDeadline() uint64 {
	return r.Errors - r.DeadlineAborted
}
