package summary

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"csbench/internal/rundir"
)

// oomFindings reads the OOM killer's counts the runner recorded on every host
// before the first cell and at the end (run.env oom_kill.before.<label>,
// oom_kill.after.<label>: /proc/vmstat's oom_kill; oom_dmesg.*: dmesg's
// "Out of memory: Killed process" lines). A run during which either grew
// drove a host into the OOM killer: it is not ok, whatever it measured
// (Decide's rule "oom": the first finding). One finding per host.
func oomFindings(r *rundir.Run) []string {
	var out []string
	var labels []string
	for k := range r.Env {
		if l, ok := strings.CutPrefix(k, "oom_kill.before."); ok {
			labels = append(labels, l)
		}
	}
	sort.Strings(labels)
	for _, l := range labels {
		for _, key := range []string{"oom_kill", "oom_dmesg"} {
			b, errB := strconv.ParseInt(r.Get(key+".before."+l), 10, 64)
			a, errA := strconv.ParseInt(r.Get(key+".after."+l), 10, 64)
			if errB != nil || errA != nil || a <= b {
				continue
			}
			out = append(out, fmt.Sprintf("the kernel's OOM killer ran on %s during the run: %s %d before, %d after", l, key, b, a))
			break
		}
	}
	return out
}

// oomFinding is the first of oomFindings, or "".
func oomFinding(r *rundir.Run) string {
	if f := oomFindings(r); len(f) > 0 {
		return f[0]
	}
	return ""
}
