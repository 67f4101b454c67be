package httpphase

import (
	"fmt"
	"strconv"
	"strings"

	"csbench/internal/kv"
	"csbench/internal/rundir"
)

// Non2xxKey is the setting that bounds the share of a cell's responses
// that may have an error status (not 2xx; wrk cannot tell 3xx apart) for
// the cell to stay ok: a fraction from 0 (the default: none) to 1.
const Non2xxKey = "NON2XX_MAX"

// Non2xxMax reads NON2XX_MAX from a run's settings: 0 when unset (runs
// made before the setting existed had none).
func Non2xxMax(settings map[string]string) (float64, error) {
	v, ok := settings[Non2xxKey]
	if !ok || v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1 {
		return 0, fmt.Errorf("%s=%q: want a fraction from 0 to 1 (0.001 lets one response in a thousand have an error status)", Non2xxKey, v)
	}
	return f, nil
}

// StatusError is a load whose output was read but whose responses carry
// error statuses above NON2XX_MAX, or none of which carried the payload:
// the cell ran, its figures stand, and it is not ok.
type StatusError struct{ msg string }

func (e *StatusError) Error() string { return e.msg }

func statusErr(format string, a ...any) error { return &StatusError{fmt.Sprintf(format, a...)} }

// StatusErrorf is a *StatusError for another tool's output whose requests
// failed (connclient's: internal/phase3): csb check exits 3 on it.
func StatusErrorf(format string, a ...any) error { return statusErr(format, a...) }

// Check is the one verdict on a load generator's output, which the runner
// (csb check wrk|oha) and the summary both read: a *StatusError when no response carried the payload, or when the share of
// responses with an error status is above max; the error names the
// statuses (oha counts each code; wrk only "non-2xx or 3xx").
func Check(l *Load, max float64) error {
	bad := l.Responses - l.OK
	if l.OK == 0 {
		return statusErr("no response carried the payload (%.0f responses, %.0f errors%s)", l.Responses, l.ErrorsTotal, l.statuses())
	}
	if bad > 0 && bad > max*l.Responses {
		return statusErr("%.0f of %.0f responses (%.2f %%) had an error status%s, above %s=%s",
			bad, l.Responses, 100*bad/l.Responses, l.statuses(), Non2xxKey, strconv.FormatFloat(max, 'g', -1, 64))
	}
	return nil
}

// CellVerdict is a cell's verdict from its clients' loads (labels in the
// same order), the one the runner made with csb check: "" when ok, else the
// error, its client named when there are several. A cell the runner ended
// "errors" (rundir.StatusErrors) stays not ok with the runner's words, should
// this run's NON2XX_MAX have let it pass.
func CellVerdict(settings map[string]string, rc rundir.Cell, loads []*Load, labels []string) string {
	max, err := Non2xxMax(settings)
	if err != nil {
		return err.Error()
	}
	for i, l := range loads {
		if err := Check(l, max); err != nil {
			if len(loads) > 1 {
				return labels[i] + ": " + err.Error()
			}
			return err.Error()
		}
	}
	if rc.Status == rundir.StatusErrors {
		return rc.Error
	}
	return ""
}

// statuses is ": 500 383, 503 2" (oha), ": non-2xx/3xx 383, wrk does not
// tell the codes apart", or "" when every response was 2xx.
func (l *Load) statuses() string {
	var parts []string
	for _, k := range kv.SortedKeys(l.StatusCodes) {
		n := l.StatusCodes[k]
		if n == 0 || strings.HasPrefix(k, "2") {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.0f", k, n))
	}
	if len(parts) == 0 {
		return ""
	}
	s := " (by status: " + strings.Join(parts, ", ")
	if l.Tool == "wrk" {
		s += "; wrk does not tell the codes apart"
	}
	return s + ")"
}
