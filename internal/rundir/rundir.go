// Package rundir reads what a runner wrote into a run directory: run.env
// (the run's facts and resolved settings), cells.tsv (one line per measured
// cell with its window) and the hosts' environment captures under env/.
package rundir

import (
	"bufio"
	"csbench/internal/kv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Run is one run directory as the runner left it.
type Run struct {
	Dir      string
	Env      map[string]string // run.env, last value of each key wins
	Settings map[string]string // run.env's setting.* keys, prefix removed
	Cells    []Cell
	Hosts    map[string]Host // "server", "client"; with N clients also "client1", ...
}

// Cell is one line of cells.tsv.
type Cell struct {
	Name   string
	Status string // ok, failed, refused
	Start  time.Time
	End    time.Time
	Params map[string]string
	Order  []string // parameter names in the order the runner gave them
	Error  string
}

// Host is one host's environment capture.
type Host struct {
	Facts   map[string]string // facts.env
	Sysctls map[string]string // sysctl.txt
	Tools   map[string]string // tools.txt
}

// Get returns a run.env value or "".
func (r *Run) Get(key string) string { return r.Env[key] }

// Read loads a run directory. A missing cells.tsv or env capture is not an
// error (a run can fail before it writes them); a missing run.env is.
func Read(dir string) (*Run, error) {
	r := &Run{Dir: dir, Settings: map[string]string{}, Hosts: map[string]Host{}}
	env, err := readKV(filepath.Join(dir, "run.env"), "=")
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	r.Env = env
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
	// An N-client run (see internal/clients) captures each client's
	// environment under env/<label>/.
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

func readCells(path string) ([]Cell, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cells []Cell
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		if n == 1 {
			continue // header
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 6 {
			return nil, fmt.Errorf("%s:%d: want 6 tab-separated fields, got %d", path, n, len(fields))
		}
		c := Cell{Name: fields[0], Status: fields[1], Error: fields[5], Params: map[string]string{}}
		c.Start, err = epochMS(fields[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: start: %w", path, n, err)
		}
		c.End, err = epochMS(fields[3])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: end: %w", path, n, err)
		}
		for _, kv := range strings.Split(fields[4], ";") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				c.Params[k] = v
				c.Order = append(c.Order, k)
			}
		}
		cells = append(cells, c)
	}
	return cells, sc.Err()
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
