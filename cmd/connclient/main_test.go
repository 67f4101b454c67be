package main

import (
	"strings"
	"testing"

	"csbench/internal/connclient"
)

// The command itself is tested in internal/connclient; this checks the
// wiring of run: help on stdout (exit 0), bad usage on stderr (exit 2).
func TestRun(t *testing.T) {
	var stdout, stderr strings.Builder
	if err := run([]string{"-h"}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "examples:") {
		t.Errorf("-h: err %v, stdout %q", err, stdout.String())
	}
	stdout.Reset()
	err := run([]string{"idle", "-target", "localhost:80", "-conns", "1"}, &stdout, &stderr)
	if connclient.ExitCode(err) != 2 || !strings.HasPrefix(stderr.String(), "error: ") || stdout.Len() != 0 {
		t.Errorf("bad target: exit %d, stderr %q, stdout %q", connclient.ExitCode(err), stderr.String(), stdout.String())
	}
}
