// Package parse reads the raw output of the lab's measuring tools into plain Go
// structs: iperf3 -J, mpstat -o JSON, pidstat -H -h, sadf -j, nstat -j, the
// lib/wrk/report.lua hook (and wrk's text as a cross-check) and oha -j.
//
// Every parser reads a machine format and is tested on output that the real
// tool printed (testdata/README.md says how each fixture was captured, with
// which flags and environment). Field names carry their unit. A value the tool
// did not measure is a nil pointer (or an absent map key), never 0.
//
// The sysstat tools stamp each sample with the time at which its interval
// ended, to the second, in the time zone of their environment: runners must
// start them with TZ=UTC (and mpstat with S_TIME_FORMAT=ISO); see each parser.
package parse

import (
	"errors"
	"fmt"
	"time"
)

// Window is a closed time interval [From, To]. The sysstat helpers use it to
// pick the samples that belong to one phase of a run.
//
// A sysstat sample is stamped with the end of its interval, truncated to the
// second: the sample stamped T was taken at an instant in [T, T+1s) and covers
// the interval before that instant. To keep only the samples whose whole
// interval lies inside a load phase that ran from S to E, use
// Window{From: S.Add(interval), To: E.Add(-time.Second)}.
type Window struct {
	From, To time.Time
}

// Contains reports whether t lies in [w.From, w.To].
func (w Window) Contains(t time.Time) bool {
	return !t.Before(w.From) && !t.After(w.To)
}

// String formats the window in RFC 3339, for error messages.
func (w Window) String() string {
	return fmt.Sprintf("[%s, %s]", w.From.UTC().Format(time.RFC3339Nano), w.To.UTC().Format(time.RFC3339Nano))
}

// ErrNoSamples is returned (wrapped) by the window helpers when no sample in
// the window carries the value asked for. A mean over nothing is not 0.
var ErrNoSamples = errors.New("no samples")

// ToolError is returned when the tool itself reported a failure in its
// machine-readable output (iperf3's "error" field). The parser returns it
// together with whatever it parsed, so that a caller can still record it.
type ToolError struct {
	Tool string // "iperf3"
	Msg  string // the tool's message, verbatim
}

// Error formats the failure as "TOOL reported: MESSAGE".
func (e *ToolError) Error() string { return e.Tool + " reported: " + e.Msg }

// meanOf returns the mean of xs, or ErrNoSamples (wrapped with what) if xs is
// empty.
func meanOf(xs []float64, what string) (float64, error) {
	if len(xs) == 0 {
		return 0, fmt.Errorf("%s: %w", what, ErrNoSamples)
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs)), nil
}
