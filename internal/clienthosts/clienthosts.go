// Package clienthosts reads what a run records about its client hosts (one
// or several: CLIENTS=N, one host the case N = 1): run.env's clients=N and
// client.<k>.* keys, where each host's raw output of a cell is
// (raw/<label>/<cell>.<ext>), the raw/<label>/<cell>.timing.json that `csb
// start-at` wrote beside it; and it computes the overlap window in which
// every client was loading. A run made before one client had its own
// directory (raw/<cell>.<ext>, no timing) reads as one client "client".
package clienthosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"csbench/internal/rundir"
)

// Client is one client host of the run (run.env client.<k>.*).
type Client struct {
	K     int    // 1-based
	Label string // client<k>
	SSH   string // "local" or an ssh destination
	Addrs []string
	NIC   string
	CPUs  string // cpuset, "" = all
	// ClockOffsetMs is the host's clock minus the controller's; nil when
	// the runner recorded none.
	ClockOffsetMs *float64
}

// Set is the client hosts of a run, one or more.
type Set struct {
	// OwnDirs: each client host has its own raw/<label>/ (run.env schema
	// 2); else (schema 1) one client's raw files are in raw/ itself.
	OwnDirs      bool
	Clients      []Client
	ServerCPUs   string
	ClockBoundMs *float64
}

// N is the number of clients.
func (s *Set) N() int { return len(s.Clients) }

// OneLabel is the label of the only client host of a one-client run.
const OneLabel = "client"

// Label is client k's label among n: "client" alone, else client<k>.
func Label(k, n int) string {
	if n == 1 {
		return OneLabel
	}
	return fmt.Sprintf("client%d", k)
}

// One is the set of a run that recorded no client table (made before
// several client hosts existed): one client host, "client", its raw files
// in raw/.
func One() *Set { return &Set{Clients: []Client{{K: 1, Label: OneLabel, SSH: "local"}}} }

// FromRun reads the client hosts from run.env: clients=N and the
// client.<k>.* keys, or one host "client" when the run recorded none. It
// returns an error naming the key when a client.<k>.* key is malformed.
func FromRun(r *rundir.Run) (*Set, error) {
	v := r.Get("clients")
	if v == "" {
		s := One()
		s.OwnDirs = r.Schema >= 2
		s.ServerCPUs = r.Get("server.cpus")
		if c := r.Get("client.1.cpus"); c != "" {
			s.Clients[0].CPUs = c
		}
		return s, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("run.env: clients=%q is not a positive integer", v)
	}
	s := &Set{ServerCPUs: r.Get("server.cpus"), OwnDirs: r.Schema >= 2 || n > 1}
	if b := r.Get("clock_bound_ms"); b != "" {
		f, err := strconv.ParseFloat(b, 64)
		if err != nil {
			return nil, fmt.Errorf("run.env: clock_bound_ms=%q is not a number", b)
		}
		s.ClockBoundMs = &f
	}
	for k := 1; k <= n; k++ {
		p := fmt.Sprintf("client.%d.", k)
		c := Client{K: k, Label: r.Get(p + "label"), SSH: r.Get(p + "ssh"), NIC: r.Get(p + "nic"), CPUs: r.Get(p + "cpus")}
		if n == 1 && c.Label == "" {
			c.Label, c.SSH = OneLabel, "local"
		}
		if want := Label(k, n); c.Label != want {
			return nil, fmt.Errorf("run.env: %slabel=%q, want %q (clients=%d)", p, c.Label, want, n)
		}
		if a := r.Get(p + "addrs"); a != "" {
			c.Addrs = strings.Split(a, ",")
		}
		if o := r.Get(p + "clock_offset_ms"); o != "" {
			f, err := strconv.ParseFloat(o, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("run.env: %sclock_offset_ms=%q is not a number", p, o)
			}
			c.ClockOffsetMs = &f
		}
		s.Clients = append(s.Clients, c)
	}
	return s, nil
}

// TimingSchema is the schema of the files `csb start-at -out` writes.
const TimingSchema = "csb.timing/v1"

// Timing is one raw/<label>/<cell>.timing.json: when the client's tool was
// due, started and ended, in Unix epoch ms of that client's clock.
type Timing struct {
	Schema  string `json:"schema"`
	DueMs   *int64 `json:"due_ms"`
	StartMs *int64 `json:"start_ms"`
	EndMs   *int64 `json:"end_ms"`
	Exit    *int   `json:"exit"`
}

// RawPath is where client label's output of a cell is: raw/<sub><label>/
// <name> (sub "" or "warmup/"); for a run made before one client had its
// own directory, raw/<sub><name>.
func (s *Set) RawPath(dir, sub, label, name string) string {
	if !s.OwnDirs {
		return filepath.Join(dir, "raw", sub, name)
	}
	return filepath.Join(dir, "raw", sub, label, name)
}

// TimingExpected says whether a timing that could not be read (err) is
// worth a note: the run gives each client its own directory (one from
// before has no timings of one client), the cell ran (not refused), and
// either its output is there or the timing is unreadable, not absent.
func (s *Set) TimingExpected(status, raw string, err error) bool {
	if !s.OwnDirs || status == "refused" {
		return false
	}
	return !errors.Is(err, fs.ErrNotExist) || fileExists(raw)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TimingPath is where the timing of a raw output is: beside it, its
// extension replaced by .timing.json.
func TimingPath(raw string) string {
	return strings.TrimSuffix(raw, filepath.Ext(raw)) + ".timing.json"
}

// ReadTiming reads a timing file strictly: the schema, every field, and
// start <= end.
func ReadTiming(path string) (Timing, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Timing{}, err
	}
	var t Timing
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Timing{}, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case t.Schema != TimingSchema:
		return Timing{}, fmt.Errorf("%s: schema %q, want %q", path, t.Schema, TimingSchema)
	case t.DueMs == nil || t.StartMs == nil || t.EndMs == nil || t.Exit == nil:
		return Timing{}, fmt.Errorf("%s: lacks due_ms, start_ms, end_ms or exit", path)
	case *t.EndMs < *t.StartMs:
		return Timing{}, fmt.Errorf("%s: end_ms %d before start_ms %d", path, *t.EndMs, *t.StartMs)
	}
	return t, nil
}

// Span is one client's run on the controller's clock: its own times less
// its clock offset.
type Span struct {
	Label   string
	StartMs float64
	EndMs   float64
}

// Window is the overlap of the clients' runs, on the controller's clock.
type Window struct {
	Spans []Span
	// FromMs is the latest start plus the warm-up; ToMs the earliest end.
	FromMs, ToMs float64
	// StartSpreadMs and EndSpreadMs are how far apart the clients
	// started and ended (latest minus earliest).
	StartSpreadMs, EndSpreadMs float64
}

// S is the overlap's length in seconds (0 when empty).
func (w Window) S() float64 { return math.Max(0, w.ToMs-w.FromMs) / 1000 }

// Overlap is [max start + warm-up, min end] over the clients' spans, each
// corrected by its client's clock offset (host clock minus controller's:
// controller time = host time - offset). An offset not recorded counts as
// 0. It fails when the window is empty: no moment had every client loading.
func Overlap(cs []Client, ts []Timing, warmupMs float64) (Window, error) {
	if len(cs) != len(ts) || len(cs) == 0 {
		return Window{}, fmt.Errorf("overlap: %d clients, %d timings", len(cs), len(ts))
	}
	w := Window{FromMs: math.Inf(-1), ToMs: math.Inf(1)}
	minStart, maxEnd := math.Inf(1), math.Inf(-1)
	for i, c := range cs {
		off := 0.0
		if c.ClockOffsetMs != nil {
			off = *c.ClockOffsetMs
		}
		sp := Span{Label: c.Label, StartMs: float64(*ts[i].StartMs) - off, EndMs: float64(*ts[i].EndMs) - off}
		w.Spans = append(w.Spans, sp)
		w.FromMs = math.Max(w.FromMs, sp.StartMs)
		w.ToMs = math.Min(w.ToMs, sp.EndMs)
		minStart = math.Min(minStart, sp.StartMs)
		maxEnd = math.Max(maxEnd, sp.EndMs)
	}
	w.StartSpreadMs = w.FromMs - minStart
	w.EndSpreadMs = maxEnd - w.ToMs
	w.FromMs += warmupMs
	if w.ToMs <= w.FromMs {
		return w, fmt.Errorf("the clients' runs do not overlap (latest start%s %.0f ms, earliest end %.0f ms, controller clock): no moment had every client loading",
			map[bool]string{true: " + warm-up", false: ""}[warmupMs > 0], w.FromMs, w.ToMs)
	}
	return w, nil
}

// CPUCount is the number of CPUs in a cpuset such as "1", "0-3", "1,3-5";
// 0 when cpus is empty (all) or malformed.
func CPUCount(cpus string) int { return len(ExpandCPUs(cpus)) }

// ExpandCPUs expands a cpuset such as "0" or "1-3,5" into CPU numbers as
// mpstat names them ("1", "2", ...); nil when it is empty or malformed.
func ExpandCPUs(cpus string) []string {
	if cpus == "" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(cpus, ",") {
		lo, hi, rng := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil
		}
		b := a
		if rng {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, strconv.Itoa(i))
		}
	}
	return out
}
