package clientsys

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// How busy the CPUs this process may run on were over a window, from
// /proc/stat (every task on them counts, the kernel's network work too: a
// client given a small share of its CPUs shows them busy, its own loops
// not). In a network namespace /proc/stat is still the machine's.

// allowedCPUs is the process's CPU list (Cpus_allowed_list of
// /proc/self/status, such as "1" or "0-1,3") and its CPU numbers.
func allowedCPUs() (string, map[int]bool, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "", nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		cpus, err := parseCPUList(v)
		return v, cpus, err
	}
	return "", nil, fmt.Errorf("/proc/self/status has no Cpus_allowed_list")
}

// parseCPUList reads "0-1,3".
func parseCPUList(v string) (map[int]bool, error) {
	out := map[int]bool{}
	for _, part := range strings.Split(v, ",") {
		lo, hi, found := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if found {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a {
			return nil, fmt.Errorf("CPU list %q: want such as 0-1,3", v)
		}
		for c := a; c <= b; c++ {
			out[c] = true
		}
	}
	return out, nil
}

// cpuTimes is the busy and total ticks of cpus in /proc/stat.
func cpuTimes(cpus map[int]bool) (busy, total uint64, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	seen := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || !strings.HasPrefix(fields[0], "cpu") || fields[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(fields[0][3:])
		if err != nil || !cpus[n] {
			continue
		}
		seen++
		var sum, idle uint64
		// user nice system idle iowait irq softirq steal (guest is in user).
		for i, s := range fields[1:min(len(fields), 9)] {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("/proc/stat %s: %q is not a count", fields[0], s)
			}
			sum += v
			if i == 3 || i == 4 {
				idle += v
			}
		}
		busy += sum - idle
		total += sum
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if seen != len(cpus) {
		return 0, 0, fmt.Errorf("/proc/stat lists %d of the %d CPUs this process may use", seen, len(cpus))
	}
	return busy, total, nil
}

// CPUWindow measures how busy the process's CPUs are from Begin to End,
// by every task and by this process.
type CPUWindow struct {
	list        string
	cpus        map[int]bool
	busy, total uint64
	err         error
	began       time.Time
	own0        time.Duration
	own         float64
	ownOK       bool
}

// Begin starts the window: it reads the CPU list and their counters, and
// this process's CPU time.
func (w *CPUWindow) Begin() {
	w.began, w.own0 = time.Now(), processCPU()
	if w.list, w.cpus, w.err = allowedCPUs(); w.err == nil {
		w.busy, w.total, w.err = cpuTimes(w.cpus)
	}
}

// processCPU is this process's CPU time so far (user + system, every
// thread), 0 when getrusage fails.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Own is the share (0..1) of its CPUs' time over the window that this
// process used itself, from End; ok false when it could not be read.
func (w *CPUWindow) Own() (share float64, ok bool) { return w.own, w.ownOK }

// List is the CPU list the window watches (Cpus_allowed_list, such as
// "0-1,3"), once begun.
func (w *CPUWindow) List() string { return w.list }

// End is the share of the window (0..1) the CPUs were busy; ok false when
// it could not be read (then nothing is claimed).
func (w *CPUWindow) End() (share float64, ok bool) {
	if w.err != nil {
		return 0, false
	}
	if wall := time.Since(w.began); wall > 0 && w.own0 > 0 && len(w.cpus) > 0 {
		w.own = (processCPU() - w.own0).Seconds() / (wall.Seconds() * float64(len(w.cpus)))
		w.ownOK = true
	}
	busy, total, err := cpuTimes(w.cpus)
	if err != nil || total <= w.total {
		return 0, false
	}
	return float64(busy-w.busy) / float64(total-w.total), true
}
