package parse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"csbench/internal/dist"
)

// The h2load fixtures (testdata/README.md): every one a .txt (h2load's
// stdout and stderr) and a .log (its --log-file).
var h2loadFixtures = []string{
	"h2load-h2c-slots", "h2load-h2-tls-slots", "h2load-h2c-n1000", "h2load-h2c-t2",
	"h2load-404", "h2load-h1-only-server", "h2load-refused",
}

func h2loadFixture(t *testing.T, name string) (*H2loadText, *H2loadLog) {
	t.Helper()
	txt, err := ParseH2loadText(open(t, name+".txt"))
	if err != nil {
		t.Fatalf("%s.txt: %v", name, err)
	}
	log, err := ParseH2loadLog(open(t, name+".log"))
	if err != nil {
		t.Fatalf("%s.log: %v", name, err)
	}
	return txt, log
}

func TestParseH2loadText(t *testing.T) {
	type counts struct{ total, started, done, succeeded, failed, errored, timeout uint64 }
	type status struct{ s2, s3, s4, s5 uint64 }
	for _, tc := range []struct {
		name      string
		threads   int
		clients   int
		planned   *uint64 // -n
		durationS float64 // -D, else 0
		proto     string
		tls       [3]string
		finished  float64
		rps       float64
		counts    counts
		status    status
		traffic   [3]uint64
		request   *H2loadTimes
		connect   bool
		clientRPS H2loadRates
	}{
		{"h2load-h2c-slots", 1, 4, nil, 3, "h2c", [3]string{}, 3e6, 709.67,
			counts{2129, 2169, 2129, 2129, 0, 0, 0}, status{2129, 0, 0, 0}, [3]uint64{2227630, 8968, 2180096},
			&H2loadTimes{12980, 72180, 55700, 4560, 91.36}, true, H2loadRates{176.96, 178.29, 177.38, 0.63, 75}},
		{"h2load-h2-tls-slots", 1, 4, nil, 2, "h2", [3]string{"TLSv1.3", "TLS_AES_128_GCM_SHA256", "X25519 253 bits"}, 2e6, 724.00,
			counts{1448, 1488, 1448, 1448, 0, 0, 0}, status{1448, 0, 0, 0}, [3]uint64{1515212, 6152, 1482752},
			&H2loadTimes{11870, 61300, 54170, 4480, 95.86}, true, H2loadRates{179.78, 183.85, 180.83, 2.01, 75}},
		{"h2load-h2c-n1000", 1, 4, u64(1000), 0, "h2c", [3]string{}, 94670, 10563.34,
			counts{1000, 1000, 1000, 1000, 0, 0, 0}, status{1000, 0, 0, 0}, [3]uint64{1046420, 4176, 1024000},
			&H2loadTimes{135, 12070, 3260, 2350, 74.60}, true, H2loadRates{2763.22, 3039.13, 2875.51, 117.59, 75}},
		{"h2load-h2c-t2", 2, 4, u64(1000), 0, "h2c", [3]string{}, 80980, 12348.12,
			counts{1000, 1000, 1000, 1000, 0, 0, 0}, status{1000, 0, 0, 0}, [3]uint64{1046420, 4176, 1024000},
			&H2loadTimes{122, 9760, 2800, 2650, 82.70}, true, H2loadRates{3099.04, 4548.02, 3512.82, 692.60, 75}},
		// 404s: completed, so in "time for request" and req/s, but failed.
		{"h2load-404", 1, 2, u64(200), 0, "h2c", [3]string{}, 21600, 9259.69,
			counts{200, 200, 200, 0, 200, 0, 0}, status{0, 0, 200, 0}, [3]uint64{8412, 890, 3800},
			&H2loadTimes{65, 5380, 945, 812, 89.50}, true, H2loadRates{4726.81, 4989.54, 4858.18, 185.78, 100}},
		// h2c against an HTTP/1.1-only server: h2load says h2c, every request errors.
		{"h2load-h1-only-server", 1, 2, u64(100), 0, "h2c", [3]string{}, 9680, 0,
			counts{100, 10, 0, 0, 100, 100, 0}, status{}, [3]uint64{324, 0, 0},
			nil, true, H2loadRates{0, 0, 0, 0, 100}},
		// Connection refused: no protocol line, no message at all, exit 0.
		{"h2load-refused", 1, 2, u64(10), 0, "", [3]string{}, 498, 0,
			counts{10, 0, 0, 0, 10, 10, 0}, status{}, [3]uint64{},
			nil, false, H2loadRates{0, 0, 0, 0, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			txt, err := ParseH2loadText(open(t, tc.name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			if txt.Threads != tc.threads || txt.Clients != tc.clients || txt.Protocol != tc.proto ||
				[3]string{txt.TLSProtocol, txt.TLSCipher, txt.TLSServerTempKey} != tc.tls || len(txt.Notes) != 0 {
				t.Errorf("threads %d, clients %d, protocol %q, tls %q %q %q, notes %q",
					txt.Threads, txt.Clients, txt.Protocol, txt.TLSProtocol, txt.TLSCipher, txt.TLSServerTempKey, txt.Notes)
			}
			if !reflect.DeepEqual(txt.RequestsPlanned, tc.planned) {
				t.Errorf("RequestsPlanned %v, want %v", txt.RequestsPlanned, tc.planned)
			}
			if tc.durationS > 0 {
				wantFloat(t, "DurationS", txt.DurationS, tc.durationS, 0)
				wantFloat(t, "WarmUpS", txt.WarmUpS, 0, 0)
			} else {
				wantNil(t, "DurationS", txt.DurationS)
			}
			if txt.FinishedInUs != tc.finished || txt.RequestsPerSecond != tc.rps {
				t.Errorf("finished in %vus, %v req/s; want %v, %v", txt.FinishedInUs, txt.RequestsPerSecond, tc.finished, tc.rps)
			}
			got := counts{txt.Total, txt.Started, txt.Done, txt.Succeeded, txt.Failed, txt.Errored, txt.Timeout}
			if got != tc.counts {
				t.Errorf("requests %+v, want %+v", got, tc.counts)
			}
			if s := (status{txt.Status2xx, txt.Status3xx, txt.Status4xx, txt.Status5xx}); s != tc.status {
				t.Errorf("status %+v, want %+v", s, tc.status)
			}
			if tr := [3]uint64{txt.TrafficBytes, txt.HeaderBytes, txt.DataBytes}; tr != tc.traffic {
				t.Errorf("traffic %v, want %v", tr, tc.traffic)
			}
			if !reflect.DeepEqual(txt.TimeForRequest, tc.request) {
				t.Errorf("time for request %+v, want %+v", txt.TimeForRequest, tc.request)
			}
			if (txt.TimeForConnect != nil) != tc.connect {
				t.Errorf("time for connect %+v, want measured %v", txt.TimeForConnect, tc.connect)
			}
			if txt.ClientRequestsPerSecond != tc.clientRPS {
				t.Errorf("req/s row %+v, want %+v", txt.ClientRequestsPerSecond, tc.clientRPS)
			}
		})
	}
}

func u64(n uint64) *uint64 { return &n }

func TestParseH2loadTextDetails(t *testing.T) {
	txt, _ := h2loadFixture(t, "h2load-h2c-slots")
	// "725.14KB/s", "95.66%", the connect and first-byte rows.
	if txt.BytesPerSecond != 725.14*1024 || txt.HeaderSpaceSavingsPct != 95.66 {
		t.Errorf("BytesPerSecond %v, savings %v", txt.BytesPerSecond, txt.HeaderSpaceSavingsPct)
	}
	if *txt.TimeForConnect != (H2loadTimes{91, 143, 121, 22, 75}) || *txt.TimeToFirstByte != (H2loadTimes{13170, 45820, 29490, 14210, 50}) {
		t.Errorf("connect %+v, first byte %+v", *txt.TimeForConnect, *txt.TimeToFirstByte)
	}
	if txt.Completed() != 2129 {
		t.Errorf("Completed %d", txt.Completed())
	}
	// The 404 run: none succeeded, all completed.
	if txt, _ := h2loadFixture(t, "h2load-404"); txt.Completed() != 200 {
		t.Errorf("404 run: Completed %d, want 200", txt.Completed())
	}
	// A line h2load printed that carries no figure is kept (here
	// "client could not connect to host", which h2load writes to stderr,
	// inserted into a real output).
	in := strings.Replace(string(fixture(t, "h2load-refused.txt")), "\nfinished in", "\nclient could not connect to host\n\nfinished in", 1)
	txt, err := ParseH2loadText(strings.NewReader(in))
	if err != nil || !reflect.DeepEqual(txt.Notes, []string{"client could not connect to host"}) {
		t.Errorf("notes %q, %v", txt.Notes, err)
	}
}

// TestParseH2loadTextMalformed: real outputs changed in one place (in the
// test, not on disk), each refused with the line it is on.
func TestParseH2loadTextMalformed(t *testing.T) {
	real := string(fixture(t, "h2load-h2c-slots.txt"))
	lineOf := func(sub string) int {
		i := strings.Index(real, sub)
		if i < 0 {
			t.Fatalf("%q not in the fixture", sub)
		}
		return strings.Count(real[:i], "\n") + 1
	}
	for _, tc := range []struct {
		what, old, new string
		want           string // substrings, |-separated
	}{
		{"a misspelt count", "2129 succeeded", "2129 succeded", fmt.Sprintf("line %d:", lineOf("requests: "))},
		{"a count that is not a number", "0 failed", "x failed", fmt.Sprintf("line %d:", lineOf("requests: "))},
		{"trailing text", "0 timeout", "0 timeout, 3 more", fmt.Sprintf("line %d:", lineOf("requests: "))},
		{"a scaled size that is not the count's", "2.12MB (2227630)", "2.13MB (2227630)", fmt.Sprintf("line %d: \"traffic: 2.13MB", lineOf("traffic: ")) + `|h2load prints "traffic: 2.12MB (2227630) total`},
		{"a time row re-spaced", "time for request:    12.98ms", "time for request:   12.98ms ", fmt.Sprintf("line %d:", lineOf("time for request"))},
		{"a time without its unit", "    72.18ms", "      72.18", fmt.Sprintf("line %d:", lineOf("time for request"))},
		{"a time in an unknown unit", "     121us", "     121ns", fmt.Sprintf("line %d:", lineOf("time for connect"))},
		{"a rate with 3 decimals", "176.96", "176.960", fmt.Sprintf("line %d:", lineOf("req/s    "))},
		{"the time header changed", "+/- sd", "+- sd", fmt.Sprintf("line %d:", lineOf("   min "))},
		{"a wrong req/s", "709.67 req/s", "719.67 req/s", "719.67 req/s, but 2129 completed in 3s is 709.67"},
		{"succeeded + failed not total", "requests: 2129 total", "requests: 2130 total", "succeeded 2129 + failed 0 != total 2130"},
		{"a line after the summary", "0.63    75.00%\n", "0.63    75.00%\nextra\n", fmt.Sprintf("line %d: \"extra\": after the summary's last row", lineOf("req/s    ")+1)},
		{"the summary cut", "req/s           :     176.96      178.29      177.38        0.63    75.00%\n", "", "the summary ends after line"},
		{"a thread out of order", "spawning thread #0", "spawning thread #1", fmt.Sprintf("line %d: \"spawning thread #1: ", lineOf("spawning")) + "|: thread #1, want #0"},
		{"no thread line", "spawning thread #0", "spawning fiber #0", "no \"spawning thread\" line before the summary"},
		{"two protocol lines", "Application protocol: h2c\n", "Application protocol: h2c\nApplication protocol: h2\n", "want one protocol, once"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			if !strings.Contains(real, tc.old) {
				t.Fatalf("%q not in the fixture", tc.old)
			}
			_, err := ParseH2loadText(strings.NewReader(strings.Replace(real, tc.old, tc.new, 1)))
			for _, want := range strings.Split(tc.want, "|") {
				wantErrContains(t, err, want)
			}
		})
	}
	for name, in := range map[string]string{
		"empty":          "",
		"wrk's output":   string(fixture(t, "wrk-200.txt")),
		"the log itself": string(fixture(t, "h2load-h2c-slots.log")),
	} {
		if _, err := ParseH2loadText(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), `no "finished in" line`) {
			t.Errorf("%s: %v, want no \"finished in\" line", name, err)
		}
	}
}

func TestParseH2loadLog(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		statuses map[int]uint64
		min, max uint64
		span     uint64 // last end - first start
	}{
		{"h2load-h2c-slots", 2129, map[int]uint64{200: 2129}, 12978, 72183, 2991018},
		{"h2load-h2-tls-slots", 1448, map[int]uint64{200: 1448}, 11872, 61303, 1986354},
		{"h2load-h2c-n1000", 1000, map[int]uint64{200: 1000}, 135, 12071, 90030},
		{"h2load-h2c-t2", 1000, map[int]uint64{200: 1000}, 122, 9755, 80261},
		{"h2load-404", 200, map[int]uint64{404: 200}, 65, 5380, 20306},
		{"h2load-h1-only-server", 0, map[int]uint64{}, 0, 0, 0},
		{"h2load-refused", 0, map[int]uint64{}, 0, 0, 0},
	} {
		log, err := ParseH2loadLog(open(t, tc.name+".log"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		d := log.Latency()
		mn, _ := d.Min()
		mx, _ := d.Max()
		first, last, ok := log.Span()
		if len(log.Requests) != tc.n || !reflect.DeepEqual(log.Statuses(), tc.statuses) || mn != tc.min || mx != tc.max ||
			last-first != tc.span || ok != (tc.n > 0) || d.Count() != uint64(tc.n) {
			t.Errorf("%s: %d requests, statuses %v, latency %d..%d us, span %d us (%v); want %d, %v, %d..%d, %d",
				tc.name, len(log.Requests), log.Statuses(), mn, mx, last-first, ok, tc.n, tc.statuses, tc.min, tc.max, tc.span)
		}
	}
	// The first line as h2load wrote it.
	log, _ := ParseH2loadLog(open(t, "h2load-h2c-slots.log"))
	if r := log.Requests[0]; r != (H2loadRequest{StartUs: 1796167022261646, Status: 200, ElapsedUs: 12978}) {
		t.Errorf("first request %+v", r)
	}
}

func TestParseH2loadLogMalformed(t *testing.T) {
	good := "1796167022261643\t200\t12978\n"
	for _, tc := range []struct{ in, want string }{
		{good + "1796167022261643\t200\n", `line 2: "1796167022261643\t200": 2 fields`},
		{good + good + "1796167022261643\t200\t12978\t5\n", "line 3: "},
		{"1796167022261643 200 12978\n", "line 1: "},
		{"x\t200\t12978\n", "line 1: "},
		{good + "1796167022261643\t2000\t12978\n", `line 2: "1796167022261643\t2000\t12978": status "2000"`},
		{"1796167022261643\t-2\t12978\n", `status "-2"`},
		{"1796167022261643\t200\t-5\n", "whole microseconds"},
		{"0\t200\t5\n", "start out of range"},
		{"99999999999999999999999\t200\t5\n", "start out of range"},
		{"1796167022261643\t200\t12978\r\n", "line 1: "},
		{good + "\n", `line 2: "": 1 fields`},
		{good + "1796167022261643\t200\t12978", "line 2: \"1796167022261643\\t200\\t12978\" has no newline: a cut file"},
	} {
		_, err := ParseH2loadLog(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.want)
		}
	}
	// Failed streams are -1, kept out of the latency but counted.
	log, err := ParseH2loadLog(strings.NewReader(good + "1796167022261700\t-1\t500\n"))
	if err != nil || log.Latency().Count() != 1 || log.Statuses()[-1] != 1 {
		t.Errorf("a failed stream: %+v, %v", log, err)
	}
}

// TestCrossCheckH2load: each real log agrees with its own text, and not
// with another run's or with a changed copy.
func TestCrossCheckH2load(t *testing.T) {
	for _, name := range h2loadFixtures {
		txt, log := h2loadFixture(t, name)
		if err := CrossCheckH2load(txt, log.Tally()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	txt, log := h2loadFixture(t, "h2load-h2c-slots")
	_, other := h2loadFixture(t, "h2load-h2-tls-slots")
	err := CrossCheckH2load(txt, other.Tally())
	wantErrContains(t, err, "done: log 1448 lines, text 2129")
	wantErrContains(t, err, "time for request min: log 11872.0us, text 12980us")

	// Responses whose headers came before a -D run ended and whose
	// streams were still open (nginx: 192 2xx, 184 done, 192 started): in
	// the text's classes, in no log line; no more than the open streams.
	open := *txt
	open.Status2xx += 40 // 2169 started, 2129 done
	if err := CrossCheckH2load(&open, log.Tally()); err != nil {
		t.Errorf("40 open streams with headers: %v", err)
	}
	open.Status2xx++
	wantErrContains(t, CrossCheckH2load(&open, log.Tally()), "status codes: text has 41 more than the log's, which has only 0 failed streams and 40 still open at the end")

	// One line lost.
	cut := &H2loadLog{Requests: log.Requests[1:]}
	wantErrContains(t, CrossCheckH2load(txt, cut.Tally()), "done: log 2128 lines, text 2129")
	// A 200 that the log calls a failed stream: done still agrees.
	changed := &H2loadLog{Requests: append([]H2loadRequest(nil), log.Requests...)}
	changed.Requests[5].Status = -1
	err = CrossCheckH2load(txt, changed.Tally())
	wantErrContains(t, err, "completed: log 2128, text succeeded 2129 + failed 0 - errored 0 = 2129")
	wantErrContains(t, err, "succeeded: log 2xx+3xx 2128, text 2129")
	// A 200 that the log calls a 503.
	changed.Requests[5].Status = 503
	wantErrContains(t, CrossCheckH2load(txt, changed.Tally()), "5xx: log 1, text 0")
	// A latency the text's max does not allow.
	changed.Requests[5].Status = 200
	changed.Requests[5].ElapsedUs = 90000
	wantErrContains(t, CrossCheckH2load(txt, changed.Tally()), "time for request max: log 90000.0us, text 72180us (printed to 5us)")

	// A run with no completed request against a log that has some.
	none, _ := h2loadFixture(t, "h2load-refused")
	wantErrContains(t, CrossCheckH2load(none, log.Tally()), "time for request: text none, log 2129 completed requests")
}

// TestH2loadLogMergesExactly: split a real log into two "hosts" (every
// other line): their latencies merged are exactly the whole's; two real
// runs merged are exactly their union, and a percentile of the merge is
// not the average of theirs.
func TestH2loadLogMergesExactly(t *testing.T) {
	raw := strings.SplitAfter(string(fixture(t, "h2load-h2c-t2.log")), "\n")
	var a, b strings.Builder
	for i, l := range raw {
		if i%2 == 0 {
			a.WriteString(l)
		} else {
			b.WriteString(l)
		}
	}
	la, err1 := ParseH2loadLog(strings.NewReader(a.String()))
	lb, err2 := ParseH2loadLog(strings.NewReader(b.String()))
	whole, err3 := ParseH2loadLog(open(t, "h2load-h2c-t2.log"))
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	merged := dist.Merge(la.Latency(), lb.Latency())
	if !reflect.DeepEqual(merged.Pairs(), whole.Latency().Pairs()) || merged.Count() != 1000 {
		t.Errorf("two halves merged: %d samples, not the whole's distribution", merged.Count())
	}
	if !reflect.DeepEqual(MergeH2loadLogs(la, lb).Latency().Pairs(), whole.Latency().Pairs()) {
		t.Error("MergeH2loadLogs of the halves is not the whole")
	}

	_, clear := h2loadFixture(t, "h2load-h2c-slots")
	_, fast := h2loadFixture(t, "h2load-h2c-n1000")
	both := MergeH2loadLogs(clear, fast)
	if d := both.Latency(); d.Count() != 2129+1000 || !reflect.DeepEqual(d.Pairs(), dist.Merge(clear.Latency(), fast.Latency()).Pairs()) {
		t.Errorf("two runs merged: %d samples", d.Count())
	}
	p50, _ := both.Latency().Percentile(50)
	pa, _ := clear.Latency().Percentile(50)
	pb, _ := fast.Latency().Percentile(50)
	if float64(p50) == float64(pa+pb)/2 {
		t.Errorf("p50 of the merge %d is the average of the p50s", p50)
	}

	// The common window: requests started within it.
	first, last, _ := whole.Span()
	mid := first + (last-first)/2
	early, late := whole.StartedWithin(first, mid), whole.StartedWithin(mid, last+1)
	if len(early.Requests)+len(late.Requests) != 1000 || len(early.Requests) == 0 || len(late.Requests) == 0 {
		t.Errorf("windows: %d + %d requests, want 1000", len(early.Requests), len(late.Requests))
	}
}

// TestH2loadKnownAnswer checks the h2c fixture against the server it ran
// on, whose capacity is known: 8 slots of 10 ms (its shutdown line says
// what the slots really held). h2load kept c x m = 4 x 10 = 40 requests in
// flight, so the server was saturated: every request waited for 4 holds
// and had its own, the rate was the server's capacity, and Little's law
// ties them (40 = rate x mean latency).
func TestH2loadKnownAnswer(t *testing.T) {
	for _, name := range []string{"h2load-h2c-slots", "h2load-h2-tls-slots"} {
		txt, log := h2loadFixture(t, name)
		var shutdown struct {
			Event   string
			Service struct {
				Slots       int     `json:"slots"`
				Requests    uint64  `json:"requests"`
				Abandoned   uint64  `json:"abandoned"`
				CapacityRPS float64 `json:"capacity_rps"`
				HoldMeanMs  float64 `json:"hold_mean_ms"`
				WaitMeanMs  float64 `json:"wait_mean_ms"`
			}
		}
		lines := bytes.Split(bytes.TrimSpace(fixture(t, name+".server.jsonl")), []byte("\n"))
		if err := json.Unmarshal(lines[len(lines)-1], &shutdown); err != nil || shutdown.Event != "shutdown" || shutdown.Service.Slots != 8 {
			t.Fatalf("%s: server's last line: %v %+v", name, err, shutdown)
		}
		s := shutdown.Service
		const inFlight = 4 * 10
		rate := float64(log.Latency().Count()) / *txt.DurationS
		mean, _ := log.Latency().Mean()
		meanMs := mean / 1e3
		t.Logf("%s: h2load %.1f req/s, mean %.2f ms; server capacity %.1f/s (hold %.3f ms), wait %.2f ms; Little: %.2f in flight",
			name, rate, meanMs, s.CapacityRPS, s.HoldMeanMs, s.WaitMeanMs, rate*meanMs/1e3)
		// Every request h2load started was served or left the queue.
		if s.Requests+s.Abandoned != txt.Started {
			t.Errorf("%s: server served %d + abandoned %d, h2load started %d", name, s.Requests, s.Abandoned, txt.Started)
		}
		// The rate is the capacity, less the ramp and the requests the
		// server finished after h2load stopped counting.
		if r := rate / s.CapacityRPS; r < 0.95 || r > 1.0 {
			t.Errorf("%s: h2load %.1f req/s is %.3f of the server's capacity %.1f/s", name, rate, r, s.CapacityRPS)
		}
		if l := rate * meanMs / 1e3; math.Abs(l-inFlight)/inFlight > 0.03 {
			t.Errorf("%s: rate x mean latency = %.2f, want the %d in flight", name, l, inFlight)
		}
		if want := inFlight / 8 * s.HoldMeanMs; math.Abs(meanMs-want)/want > 0.05 {
			t.Errorf("%s: mean latency %.2f ms, want 5 holds = %.2f ms", name, meanMs, want)
		}
	}
}
