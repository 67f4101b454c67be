package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestUsageAndBadUsage(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status int
		out    string
	}{
		{[]string{"-h"}, 0, "Usage: csb COMMAND"},
		{nil, 2, "error: usage: missing command"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"summarize"}, 2, "summarize needs at least one run directory"},
		{[]string{"check", "iperf3"}, 2, "check needs KIND and FILE"},
		{[]string{"check", "nope", "x"}, 2, `unknown kind "nope"`},
		{[]string{"summarize", "/nonexistent/run"}, 1, "is not a run directory"},
		{[]string{"check", "iperf3", "../parse/testdata/iperf3-refused.json"}, 1, "unable to connect to server: Connection refused"},
		{[]string{"check", "iperf3", "../parse/testdata/iperf3-p1.json"}, 0, ""},
		// A low-rate cell's requests: Phase 3's summary's verdict, exit 3.
		{[]string{"check", "connclient", "../phase3/testdata/lowrate-status500.client-1.json"}, 3, "error: 10 requests failed (status 10)"},
		{[]string{"check", "connclient", "../phase3/testdata/run/raw/lowrate-800-100rps.client-1.json"}, 0, ""},
		{[]string{"check", "connclient", "../phase3/testdata/run/raw/limits.client.env"}, 1, "not connclient's JSON"},
	} {
		var stdout, stderr bytes.Buffer
		got := Main(tc.args, &stdout, &stderr)
		if got != tc.status {
			t.Errorf("csb %v: status %d, want %d (stderr %q)", tc.args, got, tc.status, stderr.String())
		}
		if !strings.Contains(stdout.String()+stderr.String(), tc.out) {
			t.Errorf("csb %v: output %q does not contain %q", tc.args, stdout.String()+stderr.String(), tc.out)
		}
		if tc.status == 2 && !strings.Contains(stderr.String(), "Usage: csb") {
			t.Errorf("csb %v: bad usage without the usage text", tc.args)
		}
	}
}

func TestCompareRoots(t *testing.T) {
	root := "../crossreport/testdata/root"
	var out, errb strings.Builder
	if rc := Main([]string{"compare", "-roots", root, root}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	for _, want := range []string{"## 01-http-baseline", "## 02-http-matrix", "| cell | metric | A | B |", "| rps |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "## 00-iperf3") {
		t.Error("Phase 0 compared: it has no server under test")
	}
	if rc := Main([]string{"compare", "-roots", root}, &out, &errb); rc != 2 {
		t.Errorf("one root: rc %d", rc)
	}
}

// TestCommandsTable: every row of the table is dispatched by its name,
// listed in csb -h with each of its forms, and has a one-line summary that
// fits cmd/csb's doc comment.
func TestCommandsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands {
		if seen[c.name] || c.name == "" || strings.ContainsAny(c.name, " \t") {
			t.Errorf("command %q: a name must be one word, used once", c.name)
		}
		seen[c.name] = true
		if c.summary == "" || strings.Contains(c.summary, "\n") || len([]rune(c.summary)) > 58 || strings.HasSuffix(c.summary, ".") {
			t.Errorf("%s: summary %q: want one line of at most 58 characters, no final period", c.name, c.summary)
		}
		if c.run == nil || len(c.usage) == 0 {
			t.Errorf("%s: no function or no usage form", c.name)
		}
		for _, form := range c.usage {
			if !strings.HasPrefix(form, c.name) || !strings.Contains(usage, "\n  "+form) {
				t.Errorf("%s: form %q does not start with its name or is missing from csb -h", c.name, form)
			}
		}
		if !strings.Contains(usage, c.summary+".") {
			t.Errorf("%s: csb -h lacks its summary", c.name)
		}
		var stdout, stderr bytes.Buffer
		Main([]string{c.name, "-h"}, &stdout, &stderr)
		if strings.Contains(stderr.String(), "unknown command") {
			t.Errorf("csb %s -h: %s", c.name, stderr.String())
		}
	}
	for _, line := range strings.Split(usage, "\n") {
		if len([]rune(line)) > 80 && !strings.HasPrefix(line, "  csb ") {
			t.Errorf("csb -h: line over 80 columns: %q", line)
		}
	}
}

// Every command answers -h on stdout with exit 0, its own help or its row's.
func TestEveryCommandHelp(t *testing.T) {
	for _, c := range Commands() {
		var out, errb strings.Builder
		if code := Main([]string{c[0], "-h"}, &out, &errb); code != 0 || out.Len() == 0 {
			t.Errorf("csb %s -h: exit %d, stdout %d bytes, stderr %q", c[0], code, out.Len(), errb.String())
		}
	}
}
