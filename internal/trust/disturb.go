// Package trust says how far a cell's figures can be trusted: whether
// anything besides the run took CPU during the cell (disturbed), whether its
// throughput held steady over the measured window (unsteady), and how much a
// figure moves between repetitions (spread). Every phase uses it the same
// way; the marks land in summary.json (summary.Trust) and the reports.
package trust

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"csbench/internal/decimal"
	"csbench/internal/hostdata"
	"csbench/internal/mdtext"
	"csbench/internal/parse"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// DefaultDisturbPct is DISTURB_THRESHOLD's default: 10 % of one core.
const DefaultDisturbPct = 10

// TopN is how many other processes a cell names, each of at least
// MinNamedPct of one core.
const (
	TopN        = 3
	MinNamedPct = 1.0
)

// monitorCommands are the sysstat monitors every run keeps: the run's own,
// whichever run started them (pidstat of all processes cannot tell).
var monitorCommands = map[string]bool{"sar": true, "sadc": true, "mpstat": true, "pidstat": true, "sadf": true}

// kernelThread reports whether a command is a kernel thread that does the
// network and housekeeping work of whatever runs (softirq, workers, RCU).
// Its CPU is reported apart: under load it is mostly the run's own packets.
func kernelThread(cmd string) bool {
	for _, p := range []string{"ksoftirqd/", "kworker/", "irq/", "rcu_", "migration/", "kswapd", "kdamond", "cpuhp/", "idle_inject/"} {
		if strings.HasPrefix(cmd, p) {
			return true
		}
	}
	return false
}

// Threshold reads DISTURB_THRESHOLD from the run's settings (in % of one
// core); a run from before the setting gets the default.
func Threshold(r *rundir.Run) float64 {
	if v, err := strconv.ParseFloat(r.Settings["DISTURB_THRESHOLD"], 64); err == nil && v >= 0 {
		return v
	}
	return DefaultDisturbPct
}

// SharedKernel reports whether the lab's two hosts are one machine.
func SharedKernel(lab string) bool { return lab == "local" || lab == "netns" }

// runPIDs is every PID the run watched with its own pidstat files
// (servers, load generators, connection clients), on the given hosts.
func runPIDs(h *hostdata.Hosts, hosts ...string) map[int]bool {
	pids := map[int]bool{}
	for key, rep := range h.Pidstat {
		host, _, _ := strings.Cut(key, "/")
		for _, want := range hosts {
			if host == want {
				for _, s := range rep.Samples {
					pids[s.PID] = true
				}
			}
		}
	}
	return pids
}

// Disturb judges one cell: the other load on each host (one entry,
// "machine", when the lab's hosts share a kernel) and whether it passed
// threshold (% of one core). It returns nil when no host has a
// pidstat of all processes (a run from before this existed).
func Disturb(h *hostdata.Hosts, c rundir.Cell, lab string, threshold float64) *summary.Trust {
	t := &summary.Trust{DisturbThresholdPct: threshold}
	type view struct{ name, procs, cpu string }
	var views []view
	names := h.Names // "server", "client"; or with N clients "server", "client1", ...
	if len(names) < 2 {
		names = []string{"server", "client"}
	}
	if SharedKernel(lab) {
		// One kernel: the (first) client's pidstat of all processes sees
		// the machine.
		views = []view{{"machine", names[1], names[1]}}
	} else {
		for _, n := range names {
			views = append(views, view{n, n, n})
		}
	}
	for _, v := range views {
		all := h.AllProcs[v.procs]
		if all == nil {
			continue
		}
		hosts := []string{v.name}
		if v.name == "machine" {
			hosts = names
		}
		ol := otherLoad(all, runPIDs(h, hosts...), h.Mpstat[v.cpu], h.Sadf[v.cpu], hostdata.Window(c))
		ol.Host = v.name
		if ol.OthersCPUPct != nil && *ol.OthersCPUPct > threshold {
			t.Disturbed = true
		}
		t.OtherLoad = append(t.OtherLoad, ol)
	}
	if len(t.OtherLoad) == 0 {
		return nil
	}
	return t
}

// otherLoad sums, second by second over w, the CPU of every process in all
// that is not in run (nor a monitor, nor a kernel thread), adds mpstat's
// steal, and names the top processes.
func otherLoad(all *parse.PidstatReport, run map[int]bool, mp *parse.MpstatReport, sar *parse.SadfReport, w parse.Window) summary.OtherLoad {
	var ol summary.OtherLoad
	ticks := map[time.Time]bool{}
	type key struct {
		pid int
		cmd string
	}
	per := map[key]float64{}
	var others, mine, kernel float64
	for _, s := range all.Samples {
		if !w.Contains(s.Time) {
			continue
		}
		ticks[s.Time] = true
		switch {
		case run[s.PID] || monitorCommands[s.Command]:
			mine += s.CPUPercent
		case kernelThread(s.Command):
			kernel += s.CPUPercent
		default:
			others += s.CPUPercent
			per[key{s.PID, s.Command}] += s.CPUPercent
		}
	}
	// pidstat prints a second only when some process used CPU in it, so
	// the window's length counts, not the seconds that have lines.
	n := float64(len(ticks))
	if secs := math.Floor(w.To.Sub(w.From).Seconds()) + 1; secs > n {
		n = secs
	}
	if len(ticks) == 0 {
		return ol
	}
	steal := 0.0
	if mp != nil {
		ol.CPUs = mp.NumCPUs
		var st, busy []float64
		for _, s := range mp.Samples {
			if !w.Contains(s.Time) {
				continue
			}
			if a, ok := s.CPU("all"); ok {
				st = append(st, a.StealPercent*float64(mp.NumCPUs))
				busy = append(busy, (100-a.IdlePercent-a.IowaitPercent-a.StealPercent)*float64(mp.NumCPUs))
			}
		}
		if len(st) > 0 {
			steal = mean(st)
			ol.StealCPUPct = summary.F(decimal.Round(steal, 1))
			ol.HostBusyCPUPct = summary.F(decimal.Round(mean(busy), 1))
		}
	}
	ol.OthersCPUPct = summary.F(decimal.Round(others/n+steal, 1))
	ol.RunCPUPct = summary.F(decimal.Round(mine/n, 1))
	ol.KernelThreadsCPUPct = summary.F(decimal.Round(kernel/n, 1))
	if sar != nil {
		var q []float64
		for _, s := range sar.Samples {
			if w.Contains(s.Time) && s.Queue != nil {
				q = append(q, s.Queue.RunqSz)
			}
		}
		if len(q) > 0 {
			mx := q[0]
			for _, x := range q {
				mx = math.Max(mx, x)
			}
			ol.RunQueueMean = summary.F(decimal.Round(mean(q), 1))
			ol.RunQueueMax = summary.F(mx)
		}
	}
	for k, v := range per {
		if v/n >= MinNamedPct {
			ol.Top = append(ol.Top, summary.OtherProc{PID: k.pid, Command: k.cmd, CPUPct: decimal.Round(v/n, 1)})
		}
	}
	sort.Slice(ol.Top, func(i, j int) bool {
		a, b := ol.Top[i], ol.Top[j]
		if a.CPUPct != b.CPUPct {
			return a.CPUPct > b.CPUPct
		}
		return a.PID < b.PID
	})
	if len(ol.Top) > TopN {
		ol.Top = ol.Top[:TopN]
	}
	ol.Top = append([]summary.OtherProc{}, ol.Top...)
	return ol
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// DisturbLine is the report's sentence on a disturbed cell, or "".
func DisturbLine(t *summary.Trust) string {
	if t == nil || !t.Disturbed {
		return ""
	}
	var parts []string
	for _, ol := range t.OtherLoad {
		if ol.OthersCPUPct == nil || *ol.OthersCPUPct <= t.DisturbThresholdPct {
			continue
		}
		var top []string
		for _, p := range ol.Top {
			top = append(top, fmt.Sprintf("%s (pid %d) %.0f %%", mdtext.CodeCell(p.Command), p.PID, p.CPUPct))
		}
		s := fmt.Sprintf("on the %s, other processes took %.0f %% of one core", ol.Host, *ol.OthersCPUPct)
		if ol.StealCPUPct != nil && *ol.StealCPUPct >= 0.5 {
			s += fmt.Sprintf(" (steal %.0f %% of it)", *ol.StealCPUPct)
		}
		if len(top) > 0 {
			s += ": " + strings.Join(top, ", ")
		}
		if ol.RunQueueMean != nil && ol.CPUs > 0 {
			s += fmt.Sprintf("; run queue %.1f mean, %.0f max, on %d CPUs", *ol.RunQueueMean, *ol.RunQueueMax, ol.CPUs)
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("disturbed (over %.0f %% of one core): %s", t.DisturbThresholdPct, strings.Join(parts, "; "))
}

// UnsteadyLine is the report's sentence on an unsteady cell, or "".
func UnsteadyLine(t *summary.Trust) string {
	if t == nil || !t.Unsteady || t.Steadiness == nil {
		return ""
	}
	return "unsteady: " + t.Steadiness.Reason
}
