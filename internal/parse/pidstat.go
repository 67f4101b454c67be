package parse

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PidstatReport is what `pidstat -H -h -u -r -p PID[,PID...] INTERVAL` printed.
//
// pidstat has no JSON output; its -h layout is one line per process per
// interval under a "# Time ..." header, which ParsePidstat reads by column
// name. -H makes the time an epoch second (UTC whatever TZ says); -h puts CPU
// and memory on one line and drops the "Average:" lines. Run it with LC_ALL=C
// so that numbers use a decimal point. pidstat flushes after every interval:
// stopped by SIGINT (exit 0) or SIGTERM (exit 143), the file ends on a whole
// line either way. A process that exits simply stops appearing.
type PidstatReport struct {
	Samples []PidstatSample // in file order
	// Truncated is true when the last line had no newline and was dropped.
	Truncated bool
	// Wrapped counts the samples dropped because sysstat printed a
	// wrapped-around percentage (about 2^64: see pidstatWrap).
	Wrapped int
}

// PidstatSample is one process's line in one interval.
type PidstatSample struct {
	Time          time.Time // end of the interval, UTC, to the second
	UID           int
	PID           int
	UsrPercent    float64
	SystemPercent float64
	GuestPercent  *float64 // nil if pidstat did not print %guest
	WaitPercent   *float64 // nil if pidstat did not print %wait
	// CPUPercent is pidstat's %CPU: a share of ONE CPU, so a multi-threaded
	// process can exceed 100 (pidstat -I would divide it by the CPU count).
	CPUPercent float64
	CPU        int // the processor the task last ran on
	MinfltPerS float64
	MajfltPerS float64
	VSZKB      uint64
	RSSKB      uint64
	MemPercent float64
	Command    string
}

// pidstatColumns are the header columns ParsePidstat needs, with the flag that
// makes pidstat print them.
var pidstatColumns = []struct{ name, flag string }{
	{"UID", ""}, {"PID", ""}, {"%usr", "-u"}, {"%system", "-u"}, {"%CPU", "-u"},
	{"CPU", "-u"}, {"minflt/s", "-r"}, {"majflt/s", "-r"}, {"VSZ", "-r"},
	{"RSS", "-r"}, {"%MEM", "-r"}, {"Command", ""},
}

// ParsePidstat reads the output of `pidstat -H -h -u -r -p PIDS INTERVAL`. It
// fails if the header lacks a column it needs (naming the missing flag), if
// the times are not epoch seconds (-H missing) or on a malformed line.
func ParsePidstat(r io.Reader) (*PidstatReport, error) {
	return parsePidstat(r, true)
}

// ParsePidstatCPU reads the output of `pidstat -H -h -u INTERVAL` (every
// process, CPU only: pidstat prints the processes that used CPU in each
// interval). The memory fields of its samples are zero.
func ParsePidstatCPU(r io.Reader) (*PidstatReport, error) {
	return parsePidstat(r, false)
}

func parsePidstat(r io.Reader, mem bool) (*PidstatReport, error) {
	rep := &PidstatReport{}
	br := bufio.NewReader(r)
	var col map[string]int // column name -> field index, from the last header
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("pidstat: %w", err)
		}
		if err == io.EOF && line != "" {
			// A line without its newline: the writer was cut mid-line.
			rep.Truncated = true
			break
		}
		if err == io.EOF {
			break
		}
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
			continue
		case lineNo == 1 && fields[0] == "Linux":
			continue // "Linux 6.18.44 (vm)  11/30/26  _x86_64_  (2 CPU)"
		case fields[0] == "#":
			if col, err = pidstatHeader(fields[1:], mem); err != nil {
				return nil, fmt.Errorf("pidstat: line %d: %w", lineNo, err)
			}
			continue
		case fields[0] == "Average:":
			continue
		case len(fields) > 2 && fields[1] == "UID" && fields[2] == "PID":
			// Without -h each activity gets its own header, with no "#".
			return nil, fmt.Errorf("pidstat: line %d: a header without \"#\": run pidstat with -h", lineNo)
		}
		if col == nil {
			return nil, fmt.Errorf("pidstat: line %d: a data line before any \"# Time\" header", lineNo)
		}
		s, err := pidstatLine(fields, col)
		if err != nil {
			return nil, fmt.Errorf("pidstat: line %d: %w", lineNo, err)
		}
		if s.wrapped() {
			rep.Wrapped++
			continue
		}
		rep.Samples = append(rep.Samples, s)
	}
	return rep, nil
}

func pidstatHeader(names []string, mem bool) (map[string]int, error) {
	col := map[string]int{}
	for i, n := range names {
		col[n] = i
	}
	if _, ok := col["Time"]; !ok || col["Time"] != 0 {
		return nil, fmt.Errorf("header %q: no leading Time column", strings.Join(names, " "))
	}
	for _, c := range pidstatColumns {
		if _, ok := col[c.name]; !ok && (mem || c.flag != "-r") {
			if c.flag != "" {
				return nil, fmt.Errorf("header has no %s column: run pidstat with -h %s", c.name, c.flag)
			}
			return nil, fmt.Errorf("header has no %s column", c.name)
		}
	}
	if col["Command"] != len(names)-1 {
		return nil, errors.New("header: Command is not the last column")
	}
	return col, nil
}

func pidstatLine(f []string, col map[string]int) (PidstatSample, error) {
	var s PidstatSample
	if len(f) < len(col) {
		return s, fmt.Errorf("%d fields, want %d", len(f), len(col))
	}
	sec, err := strconv.ParseInt(f[col["Time"]], 10, 64)
	if err != nil {
		return s, fmt.Errorf("time %q is not an epoch second: run pidstat with -H", f[col["Time"]])
	}
	s.Time = time.Unix(sec, 0).UTC()
	var errs []error
	// Every number pidstat prints (ids, a CPU number, shares, rates,
	// sizes) is zero or more.
	atoi := func(name string) int {
		n, err := strconv.Atoi(f[col[name]])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		} else if n < 0 {
			errs = append(errs, impossible("pidstat", name, float64(n)))
		}
		return n
	}
	atou := func(name string) uint64 {
		n, err := strconv.ParseUint(f[col[name]], 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		return n
	}
	atof := func(name string) float64 {
		x, err := strconv.ParseFloat(f[col[name]], 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		} else if x < 0 {
			errs = append(errs, impossible("pidstat", name, x))
		}
		return x
	}
	optf := func(name string) *float64 {
		if _, ok := col[name]; !ok {
			return nil
		}
		x := atof(name)
		return &x
	}
	s.UID = atoi("UID")
	s.PID = atoi("PID")
	s.UsrPercent = atof("%usr")
	s.SystemPercent = atof("%system")
	s.GuestPercent = optf("%guest")
	s.WaitPercent = optf("%wait")
	s.CPUPercent = atof("%CPU")
	s.CPU = atoi("CPU")
	if _, ok := col["RSS"]; ok {
		s.MinfltPerS = atof("minflt/s")
		s.MajfltPerS = atof("majflt/s")
		s.VSZKB = atou("VSZ")
		s.RSSKB = atou("RSS")
		s.MemPercent = atof("%MEM")
	}
	// A command name (the kernel's comm) may hold spaces.
	s.Command = strings.Join(f[col["Command"]:], " ")
	return s, errors.Join(errs...)
}

// pidstatTicks groups the samples inside w by time, in time order.
func (r *PidstatReport) pidstatTicks(w Window) [][]PidstatSample {
	by := map[time.Time][]PidstatSample{}
	for _, s := range r.Samples {
		if w.Contains(s.Time) {
			by[s.Time] = append(by[s.Time], s)
		}
	}
	times := make([]time.Time, 0, len(by))
	for t := range by {
		times = append(times, t)
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	ticks := make([][]PidstatSample, len(times))
	for i, t := range times {
		ticks[i] = by[t]
	}
	return ticks
}

// MeanCPUPercent sums %CPU over the processes of each interval stamped inside
// w, then averages those sums over the intervals: the mean CPU the processes
// used together, in percent of one CPU. An interval counts the processes that
// were alive in it. It returns an error wrapping ErrNoSamples if no sample
// lies inside w.
func (r *PidstatReport) MeanCPUPercent(w Window) (float64, error) {
	var sums []float64
	for _, tick := range r.pidstatTicks(w) {
		var sum float64
		for _, s := range tick {
			sum += s.CPUPercent
		}
		sums = append(sums, sum)
	}
	return meanOf(sums, fmt.Sprintf("pidstat in %v", w))
}

// RSSKB sums RSS over the processes of each interval stamped inside w and
// returns the largest such sum and the last one. It returns an error wrapping
// ErrNoSamples if no sample lies inside w.
func (r *PidstatReport) RSSKB(w Window) (maxKB, lastKB uint64, err error) {
	ticks := r.pidstatTicks(w)
	if len(ticks) == 0 {
		return 0, 0, fmt.Errorf("pidstat in %v: %w", w, ErrNoSamples)
	}
	for _, tick := range ticks {
		var sum uint64
		for _, s := range tick {
			sum += s.RSSKB
		}
		maxKB = max(maxKB, sum)
		lastKB = sum
	}
	return maxKB, lastKB, nil
}

// pidstatWrap is a percentage no process can reach: sysstat prints about
// 1.8e19 (2^64) when a task's CPU time went backwards between two readings
// (a thread's times folded into its exiting process), an unsigned
// subtraction that wrapped around.
const pidstatWrap = 1e12

// wrapped reports whether s carries such a wrapped-around percentage.
func (s PidstatSample) wrapped() bool {
	return s.UsrPercent >= pidstatWrap || s.SystemPercent >= pidstatWrap || s.CPUPercent >= pidstatWrap
}
