package main

import (
	"os"
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

// TestDocNamesEverySubcommand: the command's doc comment shows the synopsis
// line of every subcommand the usage names (one truth: the usage).
func TestDocNamesEverySubcommand(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src[:strings.Index(string(src), "package main")])
	synopsis := connclient.Usage[:strings.Index(connclient.Usage, "\n\n")]
	for _, line := range strings.Split(synopsis, "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "usage:"))
		if len(f) < 2 || f[0] != "connclient" {
			continue // a continued synopsis line
		}
		if !strings.Contains(doc, "//\tconnclient "+f[1]+" ") {
			t.Errorf("main.go's doc comment lacks the synopsis of connclient %s", f[1])
		}
	}
}
