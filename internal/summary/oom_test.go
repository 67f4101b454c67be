package summary

import (
	"strings"
	"testing"

	"csbench/internal/rundir"
)

// A run during which a host's OOM killer ran is not ok; unreadable counts
// and unchanged ones say nothing.
func TestOOMCheck(t *testing.T) {
	env := map[string]string{"oom_kill.before.server": "3", "oom_kill.after.server": "4",
		"oom_dmesg.before.server": "unreadable", "oom_dmesg.after.server": "unreadable",
		"oom_kill.before.client": "0", "oom_kill.after.client": "0"}
	s := &Summary{Status: "ok"}
	oomCheck(&rundir.Run{Env: env}, s)
	if s.Status != "partial" || s.Error == nil || !strings.Contains(*s.Error, "OOM killer ran on server during the run: oom_kill 3 before, 4 after") || len(s.Notes) != 1 {
		t.Errorf("status %q error %v notes %q", s.Status, s.Error, s.Notes)
	}
	env["oom_kill.after.server"] = "3"
	s = &Summary{Status: "ok"}
	if oomCheck(&rundir.Run{Env: env}, s); s.Status != "ok" || len(s.Notes) != 0 {
		t.Errorf("unchanged: status %q notes %q", s.Status, s.Notes)
	}
}
