package parse

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseWrkJSON(t *testing.T) {
	// wrk -t1 -c4 -d2s --latency -s lib/wrk/report.lua http://127.0.0.1:18089/
	res, err := ParseWrkJSON(open(t, "wrk-200.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 148767 || res.DurationUs != 2100614 || res.Bytes != 18000807 || res.Errors != (WrkErrors{}) {
		t.Errorf("res = %+v", res)
	}
	wantFloat(t, "LatencyMinUs", res.LatencyMinUs, 12, 0)
	wantFloat(t, "LatencyMeanUs", res.LatencyMeanUs, 102.93587053682276, 1e-12)
	wantFloat(t, "LatencyStdevUs", res.LatencyStdevUs, 335.15384181665394, 1e-12)
	wantFloat(t, "LatencyMaxUs", res.LatencyMaxUs, 5784, 0)
	wantFloat(t, "LatencyP50Us", res.LatencyP50Us, 46, 0)
	wantFloat(t, "LatencyP75Us", res.LatencyP75Us, 64, 0)
	wantFloat(t, "LatencyP90Us", res.LatencyP90Us, 95, 0)
	wantFloat(t, "LatencyP95Us", res.LatencyP95Us, 178, 0)
	wantFloat(t, "LatencyP99Us", res.LatencyP99Us, 1910, 0)
	wantFloat(t, "LatencyP999Us", res.LatencyP999Us, 4074, 0)
	if got := res.RequestsPerSecond(); !approx(got, 70820.72, 0.005) {
		t.Errorf("RequestsPerSecond = %v, wrk printed 70820.72", got)
	}
}

func TestParseWrkJSONErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		want WrkErrors
		req  uint64
	}{
		// /status/503: every response counted in requests and in status.
		{"wrk-503.txt", WrkErrors{Status: 133737}, 133737},
		// server killed 1 s into a 3 s run.
		{"wrk-server-killed.txt", WrkErrors{Read: 8, Write: 142977}, 69155},
		// --timeout 1s against a handler that sleeps 1.5 s.
		{"wrk-timeout.txt", WrkErrors{Timeout: 8}, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := ParseWrkJSON(open(t, c.name))
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors != c.want || res.Requests != c.req {
				t.Errorf("requests %d, errors %+v; want %d, %+v", res.Requests, res.Errors, c.req, c.want)
			}
		})
	}
}

func TestParseWrkJSONNoLatencySample(t *testing.T) {
	// Every response came after --timeout: wrk has no latency sample and its
	// text says "0.00us ... -nan%"; the hook prints null.
	res, err := ParseWrkJSON(open(t, "wrk-timeout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*float64{
		"min": res.LatencyMinUs, "mean": res.LatencyMeanUs, "stdev": res.LatencyStdevUs,
		"max": res.LatencyMaxUs, "p50": res.LatencyP50Us, "p99.9": res.LatencyP999Us,
	} {
		wantNil(t, "latency "+name, p)
	}
	txt, err := ParseWrkText(open(t, "wrk-timeout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantNil(t, "text LatencyAvgUs", txt.LatencyAvgUs)
	wantNil(t, "text LatencyP50Us", txt.LatencyP50Us)
	if err := CrossCheckWrk(res, txt); err != nil {
		t.Error(err)
	}
}

func TestParseWrkJSONRefused(t *testing.T) {
	// Nothing listening: wrk exits 1 before running, the hook never runs.
	_, err := ParseWrkJSON(open(t, "wrk-refused.txt"))
	wantErrContains(t, err, "no CSB_WRK_JSON line")
	wantErrContains(t, err, "unable to connect to 127.0.0.1:18089 Connection refused")
	if _, err := ParseWrkText(open(t, "wrk-refused.txt")); err == nil {
		t.Error("ParseWrkText: err = nil for a run that did not happen")
	}
}

func TestParseWrkJSONBadLine(t *testing.T) {
	good := string(fixture(t, "wrk-200.txt"))
	i := strings.Index(good, WrkJSONPrefix)
	line := good[i:]
	for _, c := range []struct{ name, in, err string }{
		{"twice", good + line, "more than one"},
		{"cut", good[:len(good)-40], "CSB_WRK_JSON line"},
		{"unknown field", strings.Replace(good, `"bytes":`, `"bytez":`, 1), `unknown field "bytez"`},
		{"schema", strings.Replace(good, `"schema":1`, `"schema":2`, 1), "schema 2"},
		{"no requests", strings.Replace(good, `"requests":148767,`, ``, 1), "lacks requests"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseWrkJSON(strings.NewReader(c.in))
			wantErrContains(t, err, c.err)
		})
	}
}

func TestParseWrkText(t *testing.T) {
	txt, err := ParseWrkText(open(t, "wrk-200.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if txt.URL != "http://127.0.0.1:18089/" || txt.Threads != 1 || txt.Connections != 4 {
		t.Errorf("header = %q, %d threads, %d connections", txt.URL, txt.Threads, txt.Connections)
	}
	if txt.Requests != 148767 || txt.DurationS != 2.10 || txt.RequestsPerSecond != 70820.72 {
		t.Errorf("requests %d in %vs, %v/s", txt.Requests, txt.DurationS, txt.RequestsPerSecond)
	}
	if !approx(txt.ReadBytes, 17.17*(1<<20), 1) || !approx(txt.BytesPerSecond, 8.17*(1<<20), 1) {
		t.Errorf("read %v B, %v B/s", txt.ReadBytes, txt.BytesPerSecond)
	}
	// Latency   102.94us  335.15us   5.78ms   96.74%
	wantFloat(t, "LatencyAvgUs", txt.LatencyAvgUs, 102.94, 1e-9)
	wantFloat(t, "LatencyStdevUs", txt.LatencyStdevUs, 335.15, 1e-9)
	wantFloat(t, "LatencyMaxUs", txt.LatencyMaxUs, 5780, 1e-9)
	wantFloat(t, "LatencyWithinStdevPct", txt.LatencyWithinStdevPct, 96.74, 1e-9)
	wantFloat(t, "LatencyP50Us", txt.LatencyP50Us, 46, 1e-9)
	wantFloat(t, "LatencyP99Us", txt.LatencyP99Us, 1910, 1e-9)
	if txt.Non2xx3xx != 0 || txt.Socket != (WrkErrors{}) {
		t.Errorf("errors: %d non-2xx, %+v", txt.Non2xx3xx, txt.Socket)
	}
}

func TestParseWrkTextErrors(t *testing.T) {
	txt, err := ParseWrkText(open(t, "wrk-503.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if txt.Non2xx3xx != 133737 {
		t.Errorf("Non2xx3xx = %d", txt.Non2xx3xx)
	}
	txt, err = ParseWrkText(open(t, "wrk-server-killed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if txt.Socket != (WrkErrors{Read: 8, Write: 142977}) || txt.DurationS != 3.10 {
		t.Errorf("Socket = %+v, %vs", txt.Socket, txt.DurationS)
	}
	txt, err = ParseWrkText(open(t, "wrk-timeout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Transfer/sec:     322.09B
	if txt.Socket.Timeout != 8 || txt.BytesPerSecond != 322.09 || !approx(txt.ReadBytes, 0.95*1024, 1e-9) {
		t.Errorf("timeout run = %+v", txt)
	}
}

func TestCrossCheckWrk(t *testing.T) {
	for _, name := range []string{"wrk-200.txt", "wrk-503.txt", "wrk-server-killed.txt", "wrk-timeout.txt"} {
		j, err := ParseWrkJSON(open(t, name))
		if err != nil {
			t.Fatal(err)
		}
		txt, err := ParseWrkText(open(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := CrossCheckWrk(j, txt); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A JSON line from another run disagrees.
	j, _ := ParseWrkJSON(open(t, "wrk-503.txt"))
	txt, _ := ParseWrkText(open(t, "wrk-200.txt"))
	err := CrossCheckWrk(j, txt)
	wantErrContains(t, err, "requests: JSON 133737, text 148767")
	wantErrContains(t, err, "non-2xx/3xx: JSON 133737, text 0")
}

func TestWrkUnits(t *testing.T) {
	for _, c := range []struct {
		in   string
		us   float64
		fail bool
	}{
		{"46.00us", 46, false}, {"1.91ms", 1910, false}, {"2.10s", 2.1e6, false},
		{"1.50m", 90e6, false}, {"1.00h", 3600e6, false}, {"12", 0, true}, {"ms", 0, true},
	} {
		got, err := wrkTimeUs(c.in)
		if (err != nil) != c.fail || (!c.fail && !approx(got, c.us, 1e-6)) {
			t.Errorf("wrkTimeUs(%q) = %v, %v", c.in, got, err)
		}
	}
	for _, c := range []struct {
		in string
		b  float64
	}{{"322.09B", 322.09}, {"0.95KB", 0.95 * 1024}, {"8.17MB", 8.17 * (1 << 20)}, {"1.10GB", 1.1 * (1 << 30)}} {
		if got, err := wrkBytes(c.in); err != nil || !approx(got, c.b, 1e-6) {
			t.Errorf("wrkBytes(%q) = %v, %v", c.in, got, err)
		}
	}
}

// TestCrossCheckBytesBelowOneUnit: "0.86GB read" has two significant digits;
// the hook's 928351214 bytes (0.8646 GiB) agree with it (a real wrk run).
func TestCrossCheckBytesBelowOneUnit(t *testing.T) {
	j := &WrkResult{Requests: 812917, DurationUs: 10008635, Bytes: 928351214}
	tx := &WrkText{Requests: 812917, ReadBytes: 0.86 * (1 << 30), DurationS: 10.01,
		RequestsPerSecond: 81221.57, BytesPerSecond: 88.46 * (1 << 20)}
	if err := CrossCheckWrk(j, tx); err != nil {
		t.Fatalf("0.86GB against 928351214 bytes: %v", err)
	}
	tx.ReadBytes = 0.84 * (1 << 30)
	if err := CrossCheckWrk(j, tx); err == nil || !strings.Contains(err.Error(), "bytes read") {
		t.Fatalf("0.84GB against 928351214 bytes must disagree, got %v", err)
	}
}

func TestParseWrkDist(t *testing.T) {
	for _, c := range []struct {
		file  string
		conns int
	}{
		// wrk -t2 -c8 -d2s --latency -s lib/wrk/report.lua .../payload/1k
		{"wrk-dist-200.txt", 8},
		// wrk -t1 -c1 -d1s ... /healthz
		{"wrk-dist-c1.txt", 1},
		// wrk -t2 -c3000 -d2s ... /payload/1k: a tail to 1.74 s, read
		// through the FFI (walking latency(i) took 37 s).
		{"wrk-dist-c3000.txt", 3000},
	} {
		t.Run(c.file, func(t *testing.T) {
			wd, err := ParseWrkDist(open(t, c.file))
			if err != nil || wd == nil || !wd.Complete {
				t.Fatalf("%+v, err %v", wd, err)
			}
			d := wd.Dist
			j, err := ParseWrkJSON(open(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			// Every figure wrk computed from its histogram, the
			// percentiles exactly, and the count once wrk's
			// coordinated-omission correction is undone.
			if err := CrossCheckWrkDist(d, j, c.conns); err != nil {
				t.Fatal(err)
			}
			tx, err := ParseWrkText(open(t, c.file))
			if err != nil || tx.Connections != c.conns {
				t.Fatalf("text: %+v, %v", tx, err)
			}
			if err := CrossCheckWrk(j, tx); err != nil {
				t.Fatal(err)
			}
			// A wrong count, min or percentile is caught.
			bad := *j
			bad.Requests++
			if err := CrossCheckWrkDist(d, &bad, c.conns); err == nil || !strings.Contains(err.Error(), "count") {
				t.Errorf("requests+1: %v", err)
			}
			p99 := *j.LatencyP99Us + 1
			bad = *j
			bad.LatencyP99Us = &p99
			if err := CrossCheckWrkDist(d, &bad, c.conns); err == nil || !strings.Contains(err.Error(), "p99") {
				t.Errorf("p99+1: %v", err)
			}
		})
	}
}

func TestParseWrkDistAbsent(t *testing.T) {
	// Raw files from before the line: not an error, found is false.
	for _, f := range []string{"wrk-200.txt", "wrk-timeout.txt"} {
		if wd, err := ParseWrkDist(open(t, f)); wd != nil || err != nil {
			t.Errorf("%s: %+v, err %v", f, wd, err)
		}
	}
}

func TestParseWrkDistBad(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`CSB_WRK_DIST {"schema":"csb.wrkdist/v2","unit":"us","values":[]}`, "schema"},
		{`CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"ms","values":[]}`, "unit"},
		{`CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us"}`, "lacks values"},
		{`CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","values":[[5,1],[4,1]]}`, "increase"},
		{`CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","values":[[5,0]]}`, "count 0"},
		{`CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","values":[],"x":1}`, "unknown field"},
		{"CSB_WRK_DIST {\"schema\":\"csb.wrkdist/v1\",\"unit\":\"us\",\"values\":[]}\nCSB_WRK_DIST {}", "more than one"},
		{`CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","values":[[1,`, "CSB_WRK_DIST line"},
		{`CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","complete":false,"distinct":3,"values":[[1,1]]}`, "complete:false"},
		{`CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","complete":false,"values":[]}`, "complete:false"},
	} {
		_, err := ParseWrkDist(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.in, err, c.want)
		}
	}
}

func TestParseWrkDistIncomplete(t *testing.T) {
	// What the hook prints when it could not read the histogram through
	// the FFI and its walk ran past its budget.
	wd, err := ParseWrkDist(strings.NewReader(`CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","complete":false,"distinct":55324,"values":[]}`))
	if err != nil || wd.Complete || wd.Distinct != 55324 || wd.Dist.Count() != 0 {
		t.Fatalf("%+v, %v", wd, err)
	}
}

// At 10k connections the hook's distribution line is over a megabyte (a
// Phase 3 active cell gave 1.2 MB): the readers that pass over it must
// not fail on its length.
func TestParseWrkLongDistLine(t *testing.T) {
	var b strings.Builder
	b.Write(fixture(t, "wrk-200.txt"))
	b.WriteString(WrkDistPrefix + `{"schema":"csb.wrkdist/v1","unit":"us","values":[`)
	for v := 1; v <= 150000; v++ {
		if v > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%d,1]", v)
	}
	b.WriteString("]}\n")
	if b.Len() < 1<<20 {
		t.Fatalf("the line is only %d bytes", b.Len())
	}
	if _, err := ParseWrkJSON(strings.NewReader(b.String())); err != nil {
		t.Errorf("ParseWrkJSON: %v", err)
	}
	if _, err := ParseWrkText(strings.NewReader(b.String())); err != nil {
		t.Errorf("ParseWrkText: %v", err)
	}
}
