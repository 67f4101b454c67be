package connclient

import (
	"context"
	"strings"
	"testing"

	"csbench/internal/connresult"
	"csbench/internal/tlscert"
	"csbench/internal/tlscert/certtest"
)

// benchDir is the engine bench's files enginebench reads (its testdata).
const benchDir = "../enginebench/testdata/enginebench"

// TestBenchUsage: benchrate and benchreport refuse bad command lines with
// exit 2 and the usage.
func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"benchrate"},
		{"benchrate", "-wrk", "a", "-result", "b"},
		{"benchrate", "-result", "b", "-scale", "0"},
		{"benchrate", "-result", "b", "-scale", "101"},
		{"benchrate", "-wrk", "a", "-next", "d"},
		{"benchrate", "-next", "d", "-scale", "0.8"},
		{"benchreport"},
		{"benchreport", "-dir", "x", "extra"},
	} {
		var stdout, stderr strings.Builder
		err := Run(context.Background(), args, &stdout, &stderr)
		if ExitCode(err) != 2 || !strings.HasPrefix(stderr.String(), "error: ") || !strings.Contains(stderr.String(), "usage: connclient") || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q", args, ExitCode(err), stderr.String())
		}
	}
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), []string{"benchreport", "-dir", benchDir}, &stdout, &stderr); err != nil {
		t.Fatalf("benchreport: %v %s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"mode": "benchreport"`) {
		t.Errorf("benchreport printed %q", stdout.String())
	}
}

// TestUsageNamesEverySubcommand: the usage's synopsis names every
// subcommand Run knows.
func TestUsageNamesEverySubcommand(t *testing.T) {
	names := strings.FieldsFunc(strings.ReplaceAll(subcommandList, " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
	if len(names) != 7 {
		t.Fatalf("subcommands %q", names)
	}
	synopsis := Usage[:strings.Index(Usage, "\n\n")]
	for _, n := range names {
		if !strings.Contains(synopsis, "connclient "+n+" ") {
			t.Errorf("the usage synopsis lacks connclient %s", n)
		}
	}
}

// TestLowrateTLSEngine: with -tls-ca lowrate runs on the goroutine engine
// and says so; the epoll engine's own figures are null.
func TestLowrateTLSEngine(t *testing.T) {
	addr, ca := certtest.HTTPServer(t, tlscert.ECDSAP256)
	res := lowrateJSON(t, addr, "-conns", "3", "-rps", "100", "-duration", "200ms", "-tls-ca", ca)
	if res["engine"] != connresult.EngineGoroutines || num(t, res, "requests_completed") != 20 {
		t.Errorf("engine %v completed %v", res["engine"], res["requests_completed"])
	}
	for _, k := range []string{"event_loops", "event_loops_cpu_s", "requests_late_pool_busy", "connection_drops", "engine_lag_p99_ms", "engine_lag_histogram"} {
		if !isNull(res, k) {
			t.Errorf("%s = %v with the goroutine engine, want null", k, res[k])
		}
	}
	// Cleartext: the epoll engine, its figures measured.
	s := newScriptServer(t, okResp)
	res = lowrateJSON(t, s.addr, "-conns", "3", "-rps", "100", "-duration", "200ms")
	if res["engine"] != connresult.EngineEpoll || num(t, res, "event_loops") < 1 || num(t, res, "event_loops_cpu_s") < 0 ||
		num(t, res, "requests_late_pool_busy") < 0 || isNull(res, "connection_drops") || !isNull(res, "drain_s") {
		t.Errorf("epoll engine fields: engine %v loops %v cpu %v pool busy %v drops %v drain %v", res["engine"], res["event_loops"],
			res["event_loops_cpu_s"], res["requests_late_pool_busy"], res["connection_drops"], res["drain_s"])
	}
}
