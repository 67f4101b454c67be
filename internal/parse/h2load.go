package parse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"csbench/internal/dist"
)

// h2load (nghttp2's load generator, Debian's nghttp2-client) prints no
// machine-readable summary: its figures are a text block on stdout, and
// --log-file writes one line per request. Both are read here, strictly,
// against the format of nghttp2 1.52 (src/h2load.cc): the text's summary
// lines are parsed and then rendered again with h2load's own formatting
// and compared, so a line that differs in any character is refused; the
// log is the source of the latency distribution, which merges exactly
// across hosts; CrossCheckH2load ties the two together.
//
// h2load's terms, from its source: a request is "done" when its stream
// closed (each is one line of the log); "completed" when the stream closed
// cleanly, whatever its status (the log's status is then the HTTP status,
// else -1); "succeeded" when completed with a 2xx or 3xx status. "failed"
// counts the completed requests with another status plus every "errored"
// one, and "errored" counts the streams that closed in error plus the
// requests never sent or abandoned when a connection failed or the run
// ended. So completed = succeeded + failed - errored, and succeeded +
// failed = total. "time for request" and the req/s of "finished in" cover
// the completed requests, 4xx and 5xx included.

// H2loadText is what h2load printed on stdout (and stderr, if the two
// were written to one file).
type H2loadText struct {
	Threads int // "spawning thread #N" lines
	Clients int // their clients, summed
	// RequestsPlanned is -n (the threads' "N total requests", summed);
	// nil with -D, where DurationS and WarmUpS are set instead.
	RequestsPlanned *uint64
	DurationS       *float64 // -D: the main duration
	WarmUpS         *float64 // -D: --warm-up-time (0 without it)

	// Protocol is "Application protocol:": h2c, h2 or http/1.1. Empty when
	// h2load printed none (no connection of its first thread got that far,
	// e.g. connection refused). For h2c h2load prints h2c before it knows
	// whether the server speaks it.
	Protocol string
	// TLS, as h2load reported it; empty in cleartext.
	TLSProtocol      string // "TLSv1.3"
	TLSCipher        string // "TLS_AES_128_GCM_SHA256"
	TLSServerTempKey string // "X25519 253 bits"

	// Notes are the lines before the summary that carry no figure and are
	// not h2load's progress messages (e.g. "client could not connect to
	// host" when stderr went to the same file), verbatim.
	Notes []string

	FinishedInUs      float64 // "finished in 3.00s": to h2load's 2 decimals of its unit
	RequestsPerSecond float64 // completed / -D duration (or / the run's time with -n)
	BytesPerSecond    float64 // traffic / the same; h2load's 1024-based units, 2 decimals

	// The "requests:" line.
	Total, Started, Done, Succeeded, Failed, Errored, Timeout uint64
	// The "status codes:" line: responses by class, counted when their
	// headers arrived (a stream that then failed is in a class and errored).
	Status2xx, Status3xx, Status4xx, Status5xx uint64

	// The "traffic:" line, in bytes (h2load's exact counts).
	TrafficBytes, HeaderBytes, DataBytes uint64
	HeaderSpaceSavingsPct                float64

	// The time rows: nil when h2load had no sample (it then prints 0us and
	// 0.00%). TimeForRequest covers the completed requests.
	TimeForRequest  *H2loadTimes
	TimeForConnect  *H2loadTimes
	TimeToFirstByte *H2loadTimes
	// ClientRequestsPerSecond is the "req/s" row: each client's completed
	// requests over its own lifetime.
	ClientRequestsPerSecond H2loadRates
}

// H2loadTimes is one time row of h2load's summary. Values below 1 ms are
// whole microseconds (truncated), others 2 decimals of ms or s. The
// standard deviation of "time for request" is the sample's (n-1): h2load
// means the population's unless it kept only a sample of its requests, but
// it counts every request twice in its sampling counter (sample() and
// on_stream_close() both increment request_times_smp.n), so it always
// takes them for a sample. With 200 requests the two differ by 0.25%,
// which the live test sees (4.04 ms printed; 4030.7 us population).
type H2loadTimes struct {
	MinUs, MaxUs, MeanUs, SdUs float64
	WithinSdPct                float64 // "+/- sd": share of samples within mean +/- sd
}

// H2loadRates is the "req/s" row.
type H2loadRates struct {
	Min, Max, Mean, Sd float64
	WithinSdPct        float64
}

// Completed is the number of requests whose stream closed cleanly, any
// status: succeeded + failed - errored.
func (t *H2loadText) Completed() uint64 { return t.Succeeded + t.Failed - t.Errored }

var (
	h2loadSpawnN = regexp.MustCompile(`^spawning thread #(\d+): (\d+) total client\(s\)\. (?:Up to \d+ client\(s\) will be created every \S+ )?(\d+) total requests$`)
	h2loadSpawnD = regexp.MustCompile(`^spawning thread #(\d+): (\d+) total client\(s\)\. Timing-based test with (\S+)s of warm-up time and (\S+)s of main duration for measurements\.$`)
	h2loadQuiet  = regexp.MustCompile(`^(starting benchmark\.\.\.|progress: \d+% (done|of clients started)|Warm-up started for thread #\d+\.|Warm-up phase is over for thread #\d+\.|Main benchmark duration is started for thread #\d+\.|Main benchmark duration is over for thread #\d+\. Stopping all clients\.|Stopped all clients for thread #\d+)$`)
	h2loadToken  = regexp.MustCompile(`^[!-~]+$`)
)

const h2loadTimeHeader = "                     min         max         mean         sd        +/- sd"

// ParseH2loadText reads h2load's stdout. The summary, from "finished in" to
// the "req/s" row, must be complete and exactly in h2load's format; before
// it, the thread, protocol and TLS lines are read and any other line that
// is not a progress message is kept in Notes. Errors name the line.
func ParseH2loadText(r io.Reader) (*H2loadText, error) {
	t := &H2loadText{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		n++
		return sc.Text(), true
	}
	fail := func(line string, format string, args ...any) error {
		return fmt.Errorf("h2load: line %d: %q: %s", n, line, fmt.Sprintf(format, args...))
	}

	// Before the summary.
	var line string
	var ok bool
	for {
		if line, ok = next(); !ok {
			if err := sc.Err(); err != nil {
				return nil, fmt.Errorf("h2load: %w", err)
			}
			return nil, fmt.Errorf("h2load: no \"finished in\" line in %d lines: not h2load's output, or h2load stopped before its summary", n)
		}
		if strings.HasPrefix(line, "finished in ") {
			break
		}
		switch {
		case line == "" || h2loadQuiet.MatchString(line):
		case strings.HasPrefix(line, "spawning thread #"):
			if err := t.spawnLine(line); err != nil {
				return nil, fail(line, "%v", err)
			}
		case strings.HasPrefix(line, "Application protocol: "):
			v := strings.TrimPrefix(line, "Application protocol: ")
			if t.Protocol != "" || !h2loadToken.MatchString(v) {
				return nil, fail(line, "want one protocol, once")
			}
			t.Protocol = v
		case strings.HasPrefix(line, "TLS Protocol: "):
			t.TLSProtocol = strings.TrimPrefix(line, "TLS Protocol: ")
		case strings.HasPrefix(line, "Cipher: "):
			t.TLSCipher = strings.TrimPrefix(line, "Cipher: ")
		case strings.HasPrefix(line, "Server Temp Key: "):
			t.TLSServerTempKey = strings.TrimPrefix(line, "Server Temp Key: ")
		default:
			t.Notes = append(t.Notes, line)
		}
	}
	if t.Threads == 0 {
		return nil, fail(line, "no \"spawning thread\" line before the summary")
	}

	// The summary: each line parsed, then rendered as h2load renders it.
	steps := []func(string) error{
		t.finishedLine, t.requestsLine, t.statusLine, t.trafficLine,
		func(l string) error {
			if l != h2loadTimeHeader {
				return errors.New("want the min/max/mean/sd header of the time rows")
			}
			return nil
		},
		func(l string) (err error) { t.TimeForRequest, err = h2loadTimeRow(l, "time for request: "); return },
		func(l string) (err error) { t.TimeForConnect, err = h2loadTimeRow(l, "time for connect: "); return },
		func(l string) (err error) { t.TimeToFirstByte, err = h2loadTimeRow(l, "time to 1st byte: "); return },
		t.rpsRow,
	}
	for i, step := range steps {
		if i > 0 {
			if line, ok = next(); !ok {
				return nil, fmt.Errorf("h2load: the summary ends after line %d: cut output", n)
			}
		}
		if err := step(line); err != nil {
			return nil, fail(line, "%v", err)
		}
	}
	if line, ok = next(); ok {
		return nil, fail(line, "after the summary's last row")
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("h2load: %w", err)
	}
	if err := t.consistent(); err != nil {
		return nil, fmt.Errorf("h2load: %w", err)
	}
	return t, nil
}

func (t *H2loadText) spawnLine(line string) error {
	var id, clients string
	if m := h2loadSpawnN.FindStringSubmatch(line); m != nil {
		id, clients = m[1], m[2]
		if t.DurationS != nil {
			return errors.New("a -n thread after a -D thread")
		}
		reqs, err := strconv.ParseUint(m[3], 10, 64)
		if err != nil {
			return err
		}
		if t.RequestsPlanned == nil {
			t.RequestsPlanned = new(uint64)
		}
		*t.RequestsPlanned += reqs
	} else if m := h2loadSpawnD.FindStringSubmatch(line); m != nil {
		id, clients = m[1], m[2]
		if t.RequestsPlanned != nil {
			return errors.New("a -D thread after a -n thread")
		}
		warm, err1 := strconv.ParseFloat(m[3], 64)
		dur, err2 := strconv.ParseFloat(m[4], 64)
		if err1 != nil || err2 != nil || dur <= 0 || warm < 0 {
			return errors.New("warm-up time or duration is not a number of seconds")
		}
		if t.DurationS != nil && (*t.DurationS != dur || *t.WarmUpS != warm) {
			return errors.New("threads with different durations")
		}
		t.DurationS, t.WarmUpS = &dur, &warm
	} else {
		return errors.New("not a thread line of h2load 1.52")
	}
	if id != strconv.Itoa(t.Threads) {
		return fmt.Errorf("thread #%s, want #%d", id, t.Threads)
	}
	c, err := strconv.Atoi(clients)
	if err != nil {
		return err
	}
	t.Threads++
	t.Clients += c
	return nil
}

// finishedLine: "finished in 3.00s, 709.67 req/s, 725.14KB/s".
func (t *H2loadText) finishedLine(line string) error {
	f := strings.Split(strings.TrimPrefix(line, "finished in "), ", ")
	if len(f) != 3 || !strings.HasSuffix(f[1], " req/s") || !strings.HasSuffix(f[2], "B/s") {
		return errors.New(`want "finished in TIME, N req/s, SIZEB/s"`)
	}
	var err error
	if t.FinishedInUs, err = h2loadTimeUs(f[0]); err != nil {
		return err
	}
	if t.RequestsPerSecond, err = strconv.ParseFloat(strings.TrimSuffix(f[1], " req/s"), 64); err != nil {
		return err
	}
	if t.BytesPerSecond, err = h2loadSize(strings.TrimSuffix(f[2], "B/s")); err != nil {
		return err
	}
	if want := fmt.Sprintf("finished in %s, %.2f req/s, %sB/s", f[0], t.RequestsPerSecond, strings.TrimSuffix(f[2], "B/s")); want != line {
		return fmt.Errorf("h2load prints %q", want)
	}
	return nil
}

func (t *H2loadText) requestsLine(line string) error {
	const format = "requests: %d total, %d started, %d done, %d succeeded, %d failed, %d errored, %d timeout"
	return scanExact(line, format, &t.Total, &t.Started, &t.Done, &t.Succeeded, &t.Failed, &t.Errored, &t.Timeout)
}

func (t *H2loadText) statusLine(line string) error {
	return scanExact(line, "status codes: %d 2xx, %d 3xx, %d 4xx, %d 5xx", &t.Status2xx, &t.Status3xx, &t.Status4xx, &t.Status5xx)
}

// trafficLine: "traffic: 2.12MB (2227630) total, 8.76KB (8968) headers
// (space savings 95.66%), 2.08MB (2180096) data"; each scaled size must be
// h2load's rendering of the exact count beside it.
func (t *H2loadText) trafficLine(line string) error {
	var total, head, data string
	var savings float64
	format := "traffic: %s (%d) total, %s (%d) headers (space savings %f%%), %s (%d) data"
	if _, err := fmt.Sscanf(line, format, &total, &t.TrafficBytes, &head, &t.HeaderBytes, &savings, &data, &t.DataBytes); err != nil {
		return fmt.Errorf("want %q: %v", format, err)
	}
	t.HeaderSpaceSavingsPct = savings
	want := fmt.Sprintf("traffic: %sB (%d) total, %sB (%d) headers (space savings %.2f%%), %sB (%d) data",
		h2loadFunit(t.TrafficBytes), t.TrafficBytes, h2loadFunit(t.HeaderBytes), t.HeaderBytes, savings, h2loadFunit(t.DataBytes), t.DataBytes)
	if want != line {
		return fmt.Errorf("h2load prints %q for these counts", want)
	}
	return nil
}

// scanExact reads line with format (of %d verbs into *uint64) and checks
// that rendering the values with format gives line back.
func scanExact(line, format string, vals ...*uint64) error {
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	if _, err := fmt.Sscanf(line, format, args...); err != nil {
		return fmt.Errorf("want %q: %v", format, err)
	}
	for i, v := range vals {
		args[i] = *v
	}
	if want := fmt.Sprintf(format, args...); want != line {
		return fmt.Errorf("h2load prints %q", want)
	}
	return nil
}

// h2loadTimeRow reads "time for request:    12.98ms     72.18ms     55.70ms
// 4.56ms    91.36%" (widths as h2load's setw(10) and setw(9)). A row of
// zeros with 0.00% is h2load's "no sample": nil.
func h2loadTimeRow(line, prefix string) (*H2loadTimes, error) {
	f, err := h2loadRow(line, prefix)
	if err != nil {
		return nil, err
	}
	var v [4]float64
	for i := range v {
		if v[i], err = h2loadTimeUs(f[i]); err != nil {
			return nil, err
		}
	}
	within, err := h2loadPct(f[4])
	if err != nil {
		return nil, err
	}
	if within == 0 {
		if v != [4]float64{} {
			return nil, errors.New("times with 0.00% within one sd")
		}
		return nil, nil
	}
	return &H2loadTimes{MinUs: v[0], MaxUs: v[1], MeanUs: v[2], SdUs: v[3], WithinSdPct: within}, nil
}

func (t *H2loadText) rpsRow(line string) error {
	f, err := h2loadRow(line, "req/s           : ")
	if err != nil {
		return err
	}
	var v [4]float64
	for i := range v {
		if strings.Count(f[i], ".") != 1 || len(f[i])-strings.IndexByte(f[i], '.') != 3 {
			return fmt.Errorf("%q: want a rate with 2 decimals", f[i])
		}
		if v[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return err
		}
	}
	within, err := h2loadPct(f[4])
	if err != nil {
		return err
	}
	t.ClientRequestsPerSecond = H2loadRates{Min: v[0], Max: v[1], Mean: v[2], Sd: v[3], WithinSdPct: within}
	return nil
}

// h2loadRow splits a row after its prefix into 4 values and a percentage,
// and checks that h2load's widths render it back.
func h2loadRow(line, prefix string) ([5]string, error) {
	var f [5]string
	rest, ok := strings.CutPrefix(line, prefix)
	fields := strings.Fields(rest)
	if !ok || len(fields) != 5 || !strings.HasSuffix(fields[4], "%") {
		return f, fmt.Errorf("want %q and 4 values and a percentage", prefix)
	}
	copy(f[:], fields)
	f[4] = strings.TrimSuffix(f[4], "%")
	if want := fmt.Sprintf("%s%10s  %10s  %10s  %10s%9s%%", prefix, f[0], f[1], f[2], f[3], f[4]); want != line {
		return f, fmt.Errorf("h2load prints %q", want)
	}
	return f, nil
}

func h2loadPct(s string) (float64, error) {
	if strings.Count(s, ".") != 1 || len(s)-strings.IndexByte(s, '.') != 3 {
		return 0, fmt.Errorf("%q: want a percentage with 2 decimals", s)
	}
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || p < 0 || p > 100 {
		return 0, fmt.Errorf("%q: want a percentage", s)
	}
	return p, nil
}

// h2loadTimeUs reads util::format_duration, of whole microseconds
// ("finished in") or of seconds (the time rows), which print the same three
// forms: "967us" (whole us), "94.67ms", "3.00s".
func h2loadTimeUs(s string) (float64, error) {
	if us, ok := strings.CutSuffix(s, "us"); ok && us != "" && strings.Trim(us, "0123456789") == "" {
		return strconv.ParseFloat(us, 64)
	}
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"ms", 1e3}, {"s", 1e6}} {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		if i := strings.IndexByte(num, '.'); i < 1 || len(num)-i != 3 || strings.Trim(num, "0123456789.") != "" || strings.Count(num, ".") != 1 {
			continue // "ms" also ends in "s"
		}
		x, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, err
		}
		return x * u.mult, nil
	}
	return 0, fmt.Errorf("%q: want a time such as 135us, 12.98ms or 3.00s", s)
}

// h2loadSize reads util::utos_funit ("890", "8.76K", "2.12M", "1.50G").
func h2loadSize(s string) (float64, error) {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		return strconv.ParseFloat(s, 64)
	}
	for i, u := range []string{"K", "M", "G"} {
		num, ok := strings.CutSuffix(s, u)
		if !ok {
			continue
		}
		if j := strings.IndexByte(num, '.'); j < 1 || len(num)-j != 3 || strings.Trim(num, "0123456789.") != "" {
			break
		}
		x, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, err
		}
		return x * float64(uint64(1)<<(10*(i+1))), nil
	}
	return 0, fmt.Errorf("%q: want a size such as 890, 8.76K or 2.12M", s)
}

// h2loadFunit is util::utos_funit: n below 1024 as an integer, else with
// 2 decimals of K, M or G (1024-based), rounded half away from zero.
func h2loadFunit(n uint64) string {
	unit, shift := "", 0
	switch {
	case n >= 1<<30:
		unit, shift = "G", 30
	case n >= 1<<20:
		unit, shift = "M", 20
	case n >= 1<<10:
		unit, shift = "K", 10
	default:
		return strconv.FormatUint(n, 10)
	}
	m := int64(math.Round(100 * float64(n) / float64(uint64(1)<<shift)))
	return fmt.Sprintf("%d.%02d%s", m/100, m%100, unit)
}

// consistent checks h2load's own arithmetic on the parsed figures.
func (t *H2loadText) consistent() error {
	var errs []error
	if t.Succeeded+t.Failed != t.Total {
		errs = append(errs, fmt.Errorf("succeeded %d + failed %d != total %d", t.Succeeded, t.Failed, t.Total))
	}
	if t.Errored > t.Failed {
		errs = append(errs, fmt.Errorf("errored %d > failed %d (every errored request is a failed one)", t.Errored, t.Failed))
	}
	if t.RequestsPlanned != nil && *t.RequestsPlanned != t.Total {
		errs = append(errs, fmt.Errorf("total %d, the threads planned %d", t.Total, *t.RequestsPlanned))
	}
	if (t.TimeForRequest == nil) != (t.Completed() == 0) {
		errs = append(errs, fmt.Errorf("time for request %v with %d completed requests", t.TimeForRequest != nil, t.Completed()))
	}
	// req/s is completed over -D, or over the run's time, which
	// "finished in" prints to 2 decimals of its unit.
	secs, rel := t.FinishedInUs/1e6, 0.005/math.Max(h2loadMantissa(t.FinishedInUs), 1)
	if t.DurationS != nil {
		secs, rel = *t.DurationS, 0
	}
	if secs > 0 {
		want := float64(t.Completed()) / secs
		if math.Abs(t.RequestsPerSecond-want) > 0.005+rel*want*1.01 {
			errs = append(errs, fmt.Errorf("%.2f req/s, but %d completed in %gs is %.2f", t.RequestsPerSecond, t.Completed(), secs, want))
		}
	}
	return errors.Join(errs...)
}

// h2loadMantissa is the printed number of a time in us: "94.67ms" 94.67.
func h2loadMantissa(us float64) float64 {
	switch {
	case us >= 1e6:
		return us / 1e6
	case us >= 1e3:
		return us / 1e3
	}
	return us
}

// H2loadRequest is one line of h2load's --log-file.
type H2loadRequest struct {
	StartUs   uint64 // when it was sent, microseconds since the Unix epoch (h2load's wall clock)
	Status    int    // the HTTP status; -1 when the stream closed in error
	ElapsedUs uint64 // from sending to the end of the response (monotonic clock, truncated to us)
}

// H2loadLog is h2load's --log-file: every request done in the main
// duration (none of the warm-up), one line each, in the order streams
// closed (with several threads, nearly).
type H2loadLog struct {
	Requests []H2loadRequest
}

// ParseH2loadLog reads a --log-file: lines of START_US, STATUS (-1 for a
// failed stream) and ELAPSED_US, tab-separated, each ended by a newline.
// Anything else is refused, naming the line; an empty file is a run with
// no request done.
func ParseH2loadLog(r io.Reader) (*H2loadLog, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	l := &H2loadLog{}
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("h2load log: line %d: longer than %d bytes", n, br.Size())
		}
		if err == io.EOF {
			if len(line) > 0 {
				return nil, fmt.Errorf("h2load log: line %d: %q has no newline: a cut file", n, line)
			}
			return l, nil
		}
		if err != nil {
			return nil, fmt.Errorf("h2load log: %w", err)
		}
		req, err := h2loadLogLine(line[:len(line)-1])
		if err != nil {
			return nil, fmt.Errorf("h2load log: line %d: %q: %v (want START_US<TAB>STATUS<TAB>ELAPSED_US)", n, line[:len(line)-1], err)
		}
		l.Requests = append(l.Requests, req)
	}
}

func h2loadLogLine(b []byte) (H2loadRequest, error) {
	f := bytes.Split(b, []byte{'\t'})
	if len(f) != 3 {
		return H2loadRequest{}, fmt.Errorf("%d fields", len(f))
	}
	digits := func(x []byte) bool { return len(x) > 0 && len(bytes.Trim(x, "0123456789")) == 0 }
	var req H2loadRequest
	var err error
	if !digits(f[0]) || !digits(f[2]) {
		return req, errors.New("start and elapsed must be whole microseconds")
	}
	if req.StartUs, err = strconv.ParseUint(string(f[0]), 10, 64); err != nil || req.StartUs == 0 {
		return req, errors.New("start out of range")
	}
	if req.ElapsedUs, err = strconv.ParseUint(string(f[2]), 10, 64); err != nil {
		return req, errors.New("elapsed out of range")
	}
	switch {
	case string(f[1]) == "-1":
		req.Status = -1
	case digits(f[1]) && len(f[1]) <= 3:
		req.Status, _ = strconv.Atoi(string(f[1]))
	default:
		return req, fmt.Errorf("status %q: want -1 or an HTTP status", f[1])
	}
	return req, nil
}

// MergeH2loadLogs is the log of several runs together (several client
// hosts): every request of each. Its Latency is exactly dist.Merge of
// theirs.
func MergeH2loadLogs(logs ...*H2loadLog) *H2loadLog {
	out := &H2loadLog{}
	for _, l := range logs {
		out.Requests = append(out.Requests, l.Requests...)
	}
	return out
}

// StartedWithin is the requests sent in [fromUs, toUs): the common window
// of several hosts, over which a merged rate is computed.
func (l *H2loadLog) StartedWithin(fromUs, toUs uint64) *H2loadLog {
	out := &H2loadLog{}
	for _, r := range l.Requests {
		if r.StartUs >= fromUs && r.StartUs < toUs {
			out.Requests = append(out.Requests, r)
		}
	}
	return out
}

// Latency is the distribution of the elapsed time, in microseconds, of
// the completed requests (any status; not the failed streams), the
// requests h2load's "time for request" covers.
func (l *H2loadLog) Latency() dist.Dist {
	samples := make([]uint64, 0, len(l.Requests))
	for _, r := range l.Requests {
		if r.Status != -1 {
			samples = append(samples, r.ElapsedUs)
		}
	}
	return dist.FromSamples(samples)
}

// Statuses counts the requests by status; -1 counts the failed streams.
func (l *H2loadLog) Statuses() map[int]uint64 {
	m := map[int]uint64{}
	for _, r := range l.Requests {
		m[r.Status]++
	}
	return m
}

// H2loadTally is what a summary reads of an h2load log: the requests by
// status (-1: the failed streams) and the exact distribution of the
// completed ones' elapsed times. A committed reference keeps it in place
// of the log (csb h2load-tally), a hundredth of the bytes.
type H2loadTally struct {
	Statuses map[int]uint64
	Latency  dist.Dist // microseconds, the completed requests (any status)
}

// Tally is the log's tally.
func (l *H2loadLog) Tally() H2loadTally {
	return H2loadTally{Statuses: l.Statuses(), Latency: l.Latency()}
}

// Done is how many requests the tally counts, the failed streams among them.
func (t H2loadTally) Done() uint64 {
	var n uint64
	for _, c := range t.Statuses {
		n += c
	}
	return n
}

// Span is the first start and the last end (start + elapsed) of the
// requests; false when there is none.
func (l *H2loadLog) Span() (firstStartUs, lastEndUs uint64, ok bool) {
	for i, r := range l.Requests {
		if i == 0 || r.StartUs < firstStartUs {
			firstStartUs = r.StartUs
		}
		lastEndUs = max(lastEndUs, r.StartUs+r.ElapsedUs)
	}
	return firstStartUs, lastEndUs, len(l.Requests) > 0
}

// h2loadMaxSamples is h2load's MAX_SAMPLES: past 1,000,000 / threads
// completed requests a thread keeps a random sample, and the time rows
// describe the sample.
const h2loadMaxSamples = 1000000

// CrossCheckH2load checks that a log and a text summary are of one run:
// one line per done request; the completed ones (status other than -1)
// are succeeded + failed - errored; their 2xx and 3xx are the succeeded;
// no class has more in the log than in the text, and what the text has
// more (responses whose stream then failed, or was still open when a -D
// run ended) is at most the failed streams and those left open; and, when h2load kept every sample, the log's min, max, mean
// and (sample) standard deviation of the completed requests are the
// text's "time for request" to its printed precision (the log truncates
// to whole microseconds: 1 us more). It returns nil or every disagreement.
func CrossCheckH2load(t *H2loadText, l H2loadTally) error {
	var errs []error
	st := l.Statuses
	failedStreams := st[-1]
	done := l.Done()
	completed := done - failedStreams
	if done != t.Done {
		errs = append(errs, fmt.Errorf("done: log %d lines, text %d", done, t.Done))
	}
	if completed != t.Completed() {
		errs = append(errs, fmt.Errorf("completed: log %d, text succeeded %d + failed %d - errored %d = %d",
			completed, t.Succeeded, t.Failed, t.Errored, t.Completed()))
	}
	var class [6]uint64
	for status, c := range st {
		if status >= 200 && status < 600 {
			class[status/100] += c
		}
	}
	if ok := class[2] + class[3]; ok != t.Succeeded {
		errs = append(errs, fmt.Errorf("succeeded: log 2xx+3xx %d, text %d", ok, t.Succeeded))
	}
	var extra uint64
	for k, text := range map[int]uint64{2: t.Status2xx, 3: t.Status3xx, 4: t.Status4xx, 5: t.Status5xx} {
		if class[k] > text {
			errs = append(errs, fmt.Errorf("%dxx: log %d, text %d", k, class[k], text))
		} else {
			extra += text - class[k]
		}
	}
	// A response counts in the text's classes once its headers arrived:
	// a stream that then failed, or one still open when a -D run ended
	// (started, never done, in no log line), is in a class and not in the
	// log.
	var open uint64
	if t.Started > t.Done {
		open = t.Started - t.Done
	}
	if extra > failedStreams+open {
		errs = append(errs, fmt.Errorf("status codes: text has %d more than the log's, which has only %d failed streams and %d still open at the end", extra, failedStreams, open))
	}

	d := l.Latency
	switch {
	case t.TimeForRequest == nil:
		if d.Count() != 0 {
			errs = append(errs, fmt.Errorf("time for request: text none, log %d completed requests", d.Count()))
		}
	case d.Count() == 0:
		errs = append(errs, errors.New("time for request: text has times, log no completed request"))
	case d.Count() <= h2loadMaxSamples/uint64(max(t.Threads, 1)):
		mn, _ := d.Min()
		mx, _ := d.Max()
		mean, _ := d.Mean()
		sd, _ := d.Stdev() // 0 for one request, as h2load prints
		tr := t.TimeForRequest
		for _, c := range []struct {
			what      string
			log, text float64
		}{{"min", float64(mn), tr.MinUs}, {"max", float64(mx), tr.MaxUs}, {"mean", mean, tr.MeanUs}, {"sd", sd, tr.SdUs}} {
			if tol := h2loadPrintTolUs(c.text) + 1; math.Abs(c.log-c.text) > tol {
				errs = append(errs, fmt.Errorf("time for request %s: log %.1fus, text %gus (printed to %gus)", c.what, c.log, c.text, tol-1))
			}
		}
	}
	return errors.Join(errs...)
}

// h2loadPrintTolUs is how far from the true value h2load's print of a
// time can be: whole us (truncated) below 1 ms, then half of 0.01 ms or s.
func h2loadPrintTolUs(us float64) float64 {
	switch {
	case us < 1e3:
		return 1
	case us < 1e6:
		return 5
	}
	return 5000
}
