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
