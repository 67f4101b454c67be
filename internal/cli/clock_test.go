package cli

import (
	"bytes"
	"strings"
	"testing"
)

// csb clock: the runner's answer as KEY=VALUE, a code on refusal, exit 2
// on malformed input.
func TestClock(t *testing.T) {
	old := stdin
	defer func() { stdin = old }()
	run := func(in string, args ...string) (int, string) {
		stdin = strings.NewReader(in)
		var out, errb bytes.Buffer
		rc := Main(append([]string{"clock"}, args...), &out, &errb)
		return rc, out.String() + errb.String()
	}
	// client2 answers 5 s ahead, the server within the bound.
	in := "server 1000000 1000600 1001000\nclient2 1000000 6000500 1001000\nclient2 2000000 7001000 2004000\n"
	rc, out := run(in, "-bound-ms", "100", "-name", "client2=client2 (me@c2)")
	if rc != 0 {
		t.Fatalf("rc %d: %s", rc, out)
	}
	for _, want := range []string{"server.offset_ms=0.100\n", "client2.offset_ms=5000.000\n", "client2.error_ms=0.500\n",
		"max_rtt_us=1000\n", "ok=0\n", "code=clock_skew\n", "refused=client2\n",
		"refusal=the clock of client2 (me@c2) is off by 5000.000 ms (+- 0.500 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	// The test-only offset brings it back within the bound.
	if rc, out = run(in, "-bound-ms", "100", "-test-offset", "client2=-5000"); rc != 0 || !strings.Contains(out, "ok=1\n") {
		t.Errorf("rc %d:\n%s", rc, out)
	}
	// One kernel's clock (the netns lab): offsets 0 whatever ssh made of
	// them; a test offset is still added; the lead still counts the trips.
	rc, out = run("server 1000000 1350000 1700000\n", "-bound-ms", "100", "-same-clock")
	if rc != 0 || !strings.Contains(out, "server.offset_ms=0.000\n") || !strings.Contains(out, "server.error_ms=0.000\n") ||
		!strings.Contains(out, "ok=1\n") || !strings.Contains(out, "lead_ms=1700\n") {
		t.Errorf("-same-clock: rc %d:\n%s", rc, out)
	}
	if rc, out = run("client2 1000000 1000500 1001000\n", "-bound-ms", "100", "-same-clock", "-test-offset", "client2=500"); rc != 0 || !strings.Contains(out, "refused=client2\n") {
		t.Errorf("-same-clock with a test offset: rc %d:\n%s", rc, out)
	}
	if rc, out = run("", "-bound-ms", "100"); rc != 0 || !strings.Contains(out, "lead_ms=300\n") {
		t.Errorf("no host over ssh: rc %d:\n%s", rc, out)
	}
	for _, bad := range [][]string{{}, {"-bound-ms", "100", "extra"}, {"-bound-ms", "100", "-test-offset", "x"}} {
		if rc, out = run(in, bad...); rc != 2 {
			t.Errorf("%v: rc %d: %s", bad, rc, out)
		}
	}
	if rc, out = run("server 1 2\n", "-bound-ms", "100"); rc != 2 {
		t.Errorf("malformed samples: rc %d: %s", rc, out)
	}
}
