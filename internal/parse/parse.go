// Package parse reads the raw output of the lab's measuring tools into plain Go
// structs: iperf3 -J, mpstat -o JSON, pidstat -H -h, sadf -j, nstat -j, the
// lib/wrk/report.lua hook (and wrk's text as a cross-check), oha -j, and
// h2load's --log-file with its text summary (h2load has no machine-readable
// summary: its text is read strictly, each line rendered again in h2load's
// format and compared, and cross-checked against the log).
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
	"sort"
	"strconv"
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

// ErrImpossible marks a raw value no tool prints: a count, time, size,
// rate or percentage below zero. A file holding one was corrupted or
// edited; callers refuse it as they refuse a malformed file
// (errors.Is(err, ErrImpossible)).
var ErrImpossible = errors.New("below zero")

// field is one value of a tool's output, by the name the tool gives it;
// nil when the tool did not print it.
type field struct {
	name string
	v    *float64
}

func f64(name string, p *float64) field { return field{name, p} }

func i64(name string, p *int64) field {
	if p == nil {
		return field{name: name}
	}
	v := float64(*p)
	return field{name, &v}
}

func val(name string, v float64) field { return field{name, &v} }

// nonNegative returns an error (wrapping ErrImpossible) naming the first
// of fields that is below zero, or nil. NaN passes: a parser that can
// meet one says what it means.
func nonNegative(tool string, fields ...field) error {
	for _, f := range fields {
		if f.v != nil && *f.v < 0 {
			return fmt.Errorf("%s: %w", tool, impossible(tool, f.name, *f.v))
		}
	}
	return nil
}

// impossible says that TOOL's value NAME, v, is below zero.
func impossible(tool, name string, v float64) error {
	return fmt.Errorf("%s is %s: %w, which %s never prints (a corrupted or edited file)",
		name, strconv.FormatFloat(v, 'g', 6, 64), ErrImpossible, tool)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
