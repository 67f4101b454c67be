package summary

import (
	"strings"
	"testing"

	"csbench/internal/rundir"
)

// A run during which a host's OOM killer ran is not ok; unreadable counts
// and unchanged ones say nothing.
func TestOOMFindings(t *testing.T) {
	env := map[string]string{"oom_kill.before.server": "3", "oom_kill.after.server": "4",
		"oom_dmesg.before.server": "unreadable", "oom_dmesg.after.server": "unreadable",
		"oom_kill.before.client": "0", "oom_kill.after.client": "0"}
	f := oomFindings(&rundir.Run{Env: env})
	if len(f) != 1 || !strings.Contains(f[0], "OOM killer ran on server during the run: oom_kill 3 before, 4 after") {
		t.Errorf("findings %q", f)
	}
	env["oom_kill.after.server"] = "3"
	if f := oomFindings(&rundir.Run{Env: env}); len(f) != 0 {
		t.Errorf("unchanged: findings %q", f)
	}
}
