// Package rundir reads what a runner wrote into a run directory: run.env
// (the run's facts and resolved settings), cells.tsv (one line per measured
// cell with its window) and the hosts' environment captures under env/.
package rundir

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"csbench/internal/kv"
)

// SchemaVersion is the run.env format this csb reads: 2 gives every
// client host its own raw/<label>/ (one client too), 1 kept a lone
// client's raw files in raw/ itself. Both are read.
const SchemaVersion = 2

// Run is one run directory as the runner left it.
type Run struct {
	Dir string
	// Schema is run.env's schema_version (1 or 2; 1 when it has none).
	Schema   int
	Env      map[string]string // run.env, last value of each key wins
	Settings map[string]string // run.env's setting.* keys, prefix removed
	Cells    []Cell
	Hosts    map[string]Host // "server", "client"; with N clients also "client1", ...
}

// Cell is one line of cells.tsv.
type Cell struct {
	Name   string
	Status string // ok, failed, refused, errors (StatusErrors)
	Start  time.Time
	End    time.Time
	Params map[string]string
	Order  []string // parameter names in the order the runner gave them
	Error  string
	// CutShort: the runner could not write the cell's row whole (no
	// start, no end, or cut mid-line); the cell is failed and Error
	// begins with why.
	CutShort bool
}

// StatusErrors is a cell whose tools ran and left output the runner read
// (csb check) with errors above the run's threshold (NON2XX_MAX): its
// figures are summarized, and it is never ok.
const StatusErrors = "errors"

// Measured says the cell's tools ran to the end and their output is to be
// read: ok, or StatusErrors.
func (c Cell) Measured() bool { return c.Status == "ok" || c.Status == StatusErrors }

// Host is one host's environment capture.
type Host struct {
	Facts   map[string]string // facts.env
	Sysctls map[string]string // sysctl.txt
	Tools   map[string]string // tools.txt
}

// Get returns a run.env value or "".
func (r *Run) Get(key string) string { return r.Env[key] }

// Read loads a run directory. A missing cells.tsv or env capture is not an
// error (a run can fail before it writes them), nor is a row of cells.tsv
// the runner could not write whole (see readCells); a missing run.env is.
func Read(dir string) (*Run, error) {
	r := &Run{Dir: dir, Settings: map[string]string{}, Hosts: map[string]Host{}}
	env, err := readKV(filepath.Join(dir, "run.env"), "=")
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	r.Env = env
	r.Schema = 1
	if v, ok := env["schema_version"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > SchemaVersion {
			return nil, fmt.Errorf("%s: run.env has schema_version %q; this csb reads 1 to %d: read it with the csb that made it", dir, v, SchemaVersion)
		}
		r.Schema = n
	}
	for k, v := range env {
		if s, ok := strings.CutPrefix(k, "setting."); ok {
			r.Settings[s] = v
		}
	}
	cells, err := readCells(filepath.Join(dir, "cells.tsv"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	r.Cells = cells
	hosts := []string{"server", "client"}
	// A run of N >= 2 client hosts (see internal/clienthosts) captures
	// each client's environment under env/<label>/.
	if n, err := strconv.Atoi(env["clients"]); err == nil && n >= 2 {
		hosts = hosts[:1]
		for k := 1; k <= n; k++ {
			hosts = append(hosts, fmt.Sprintf("client%d", k))
		}
	}
	for _, h := range hosts {
		d := filepath.Join(dir, "env", h)
		facts, _ := readKV(filepath.Join(d, "facts.env"), "=")
		sysctls, _ := readKV(filepath.Join(d, "sysctl.txt"), " = ")
		tools, _ := readKV(filepath.Join(d, "tools.txt"), ": ")
		r.Hosts[h] = Host{Facts: facts, Sysctls: sysctls, Tools: tools}
	}
	return r, nil
}

// readKV reads KEY<sep>VALUE lines (kv.Read).
var readKV = kv.Read

// CutShortReason is the start of the error of a cell whose cells.tsv row
// the runner could not write whole (a full disk, a kill between two
// writes): "the row of cell X has no start: the run was cut short (disk
// full?)".
const CutShortReason = "the run was cut short (disk full?)"

// readCells reads cells.tsv. A row without its start or end (empty), and
// a last row cut off before its newline, is a cell cut short: it is kept,
// failed, with CutShort set and the reason first in its error, so a run
// stopped by a full disk stays summarizable. Any other malformed row is
// an error naming the file and line.
func readCells(path string) ([]Cell, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := string(b)
	whole := strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var cells []Cell
	for i, line := range lines {
		n := i + 1
		if n == 1 {
			continue // header
		}
		fields := strings.Split(line, "\t")
		midLine := false
		if i == len(lines)-1 && !whole && len(fields) < 6 {
			// Cut off mid-row: only a field followed by a tab is whole.
			if len(fields) < 2 {
				continue // not even the cell's name: nothing to keep
			}
			fields = append(fields[:len(fields)-1], make([]string, 7-len(fields))...)
			midLine = true
		}
		if len(fields) < 6 {
			return nil, fmt.Errorf("%s:%d: want 6 tab-separated fields, got %d", path, n, len(fields))
		}
		c := Cell{Name: fields[0], Status: fields[1], Error: fields[5], Params: map[string]string{}}
		var missing []string
		if fields[2] == "" {
			missing = append(missing, "start")
		} else if c.Start, err = epochMS(fields[2]); err != nil {
			return nil, fmt.Errorf("%s:%d: start: %w", path, n, err)
		}
		if fields[3] == "" {
			missing = append(missing, "end")
		} else if c.End, err = epochMS(fields[3]); err != nil {
			return nil, fmt.Errorf("%s:%d: end: %w", path, n, err)
		}
		for _, kv := range strings.Split(fields[4], ";") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				c.Params[k] = v
				c.Order = append(c.Order, k)
			}
		}
		if len(missing) > 0 || midLine {
			cutShort(&c, missing, midLine)
		}
		cells = append(cells, c)
	}
	return cells, nil
}

// cutShort fails a cell whose row lacks its start or end (missing), or
// was cut off mid-line. A missing start or end takes the other's time:
// the cell has a place in the run but no window, so no monitor sample is
// taken for it.
func cutShort(c *Cell, missing []string, midLine bool) {
	what := "is cut off mid-line"
	if len(missing) > 0 {
		what = "has no " + strings.Join(missing, " and no ")
		if midLine {
			what += " (cut off mid-line)"
		}
	}
	reason := "the row of cell " + c.Name + " " + what + ": " + CutShortReason
	if c.Error != "" {
		reason += "; " + c.Error
	}
	c.Status, c.Error, c.CutShort = "failed", reason, true
	switch {
	case c.Start.IsZero() && !c.End.IsZero():
		c.Start = c.End
	case c.End.IsZero() && !c.Start.IsZero():
		c.End = c.Start
	}
}

func epochMS(s string) (time.Time, error) {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms).UTC(), nil
}

// SortedKeys returns m's keys in order (kv.SortedKeys, kept for its callers).
func SortedKeys[V any](m map[string]V) []string { return kv.SortedKeys(m) }
