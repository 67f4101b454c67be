package phase3

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"csbench/internal/c10kplan"
	"csbench/internal/hostdata"
	"csbench/internal/rundir"
)

// The fourth way of memory per connection, the one a larger step is
// planned from: the fall of each host's MemAvailable (/proc/meminfo) between
// the clients' start and every connection held, ÷ connections
// (host_mem_kb_per_conn, the server host's; with both ends on one machine
// it is everything the connections cost there: both processes, the
// kernel's sockets, files, epoll entries and buffers). Other work on the
// machine moves it too; the figures beside it say how it splits.

// readMemAvailable is MemAvailable, in KiB, from a copy of /proc/meminfo.
func readMemAvailable(path string) (float64, error) {
	f, err := rundir.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			return strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		}
	}
	return 0, fmt.Errorf("%s: no MemAvailable line", path)
}

// memFall is the fall of a host's MemAvailable over a cell, KiB.
func memFall(path func(host, when, ext string) string, host string) (float64, error) {
	b, err := readMemAvailable(path(host, "before", "meminfo"))
	if err != nil {
		return 0, err
	}
	h, err := readMemAvailable(path(host, "held", "meminfo"))
	if err != nil {
		return 0, err
	}
	return b - h, nil
}

// StepCost is the memory per connection measured at the step a scenario of
// KIND with CONNS connections is planned from: the largest step of the run
// in DIR below CONNS whose cell ended ok, of the same kind when there is
// one. nil (and no error) when the run has no such step yet.
func StepCost(dir, kind string, conns int64) (*c10kplan.Cost, error) {
	r, err := rundir.Read(dir)
	if err != nil {
		return nil, err
	}
	var best *rundir.Cell
	var bestN int64
	sameKind := false
	for i := range r.Cells {
		c := &r.Cells[i]
		n, err := strconv.ParseInt(c.Params["connections"], 10, 64)
		if c.Status != "ok" || err != nil || n <= 0 || n >= conns {
			continue
		}
		same := c.Params["scenario"] == kind
		if best == nil || (same && !sameKind) || (same == sameKind && n > bestN) {
			best, bestN, sameKind = c, n, same
		}
	}
	if best == nil {
		return nil, nil
	}
	path := func(host, when, ext string) string {
		return filepath.Join(dir, "monitors", host, "c10k", best.Name+"."+when+"."+ext)
	}
	fall, err := memFall(path, "server")
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", best.Name, err)
	}
	c := &c10kplan.Cost{From: best.Name, Conns: bestN, ServerHostKB: fall / float64(bestN)}
	lab := r.Get("lab")
	if lab != "netns" && lab != "local" {
		entries, err := os.ReadDir(filepath.Join(dir, "monitors"))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() || e.Name() == "server" {
				continue
			}
			f, err := memFall(path, e.Name())
			if err != nil {
				continue // a monitors directory of no client host
			}
			c.ClientHostKB += f / float64(bestN)
		}
	}
	before, errB := hostdata.ReadSockstat(path("server", "before", "sockstat"))
	held, errH := hostdata.ReadSockstat(path("server", "held", "sockstat"))
	page, errP := readPageSize(path("server", "before", "pagesize"))
	if errB == nil && errH == nil && errP == nil {
		b, ok1 := before["TCP.mem"]
		h, ok2 := held["TCP.mem"]
		if ok1 && ok2 {
			c.TCPMemKB = c10kplan.Float{V: (h - b) * page / 1024 / float64(bestN), Known: true}
		}
	}
	return c, nil
}
