package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"csbench/internal/sizes"
)

func TestRunHelp(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		var stdout, stderr bytes.Buffer
		err := Run(context.Background(), []string{arg}, &stdout, &stderr)
		if err != nil || ExitCode(err) != 0 {
			t.Errorf("Run(%s) = %v, want nil", arg, err)
		}
		out := stdout.String()
		for _, want := range []string{"Usage: server -addr IP", "/payload/<size>", "Examples:", "Exit status:",
			"-addr", "-port", "-sizes", "-idle-timeout", "-read-header-timeout", "-reuseport", "-gomaxprocs",
			"-http", "-max-concurrent-streams", "-service-time", "-slots", "-accept-every", "CSB_SERVICE_TIME", "CSB_SLOTS", "/stats", "h2c"} {
			if !strings.Contains(out, want) {
				t.Errorf("Run(%s) stdout lacks %q:\n%s", arg, want, out)
			}
		}
		if stderr.Len() != 0 {
			t.Errorf("Run(%s) wrote to stderr: %q", arg, stderr.String())
		}
	}
}

func TestRunBadUsage(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{nil, "-addr is required"},
		{[]string{"-port", "8080"}, "-addr is required"},
		{[]string{"-addr", "198.18.0.1;touch /tmp/x"}, `-addr "198.18.0.1;touch /tmp/x" is not an IP literal`},
		{[]string{"-addr", "$(reboot)"}, "is not an IP literal"},
		{[]string{"-addr", "localhost"}, `-addr "localhost" is not an IP literal`},
		{[]string{"-addr", "server.lab"}, "hostnames are not resolved"},
		{[]string{"-addr", "127.0.0.1:8080"}, "the port goes in -port"},
		{[]string{"-addr", "[::1]"}, "is not an IP literal"},
		{[]string{"-addr", "127.1"}, "is not an IP literal"},
		{[]string{"-addr", "127.000.0.1"}, "is not an IP literal"},
		{[]string{"-addr", " 127.0.0.1"}, "is not an IP literal"},
		{[]string{"-addr", "fe80::1%eth0"}, "has an IPv6 zone"},
		{[]string{"-addr", "127.0.0.1", "-port", "65536"}, "-port 65536 is out of range"},
		{[]string{"-addr", "127.0.0.1", "-port", "-1"}, "-port -1 is out of range"},
		{[]string{"-addr", "127.0.0.1", "-port", "http"}, `invalid value "http" for flag -port`},
		{[]string{"-addr", "127.0.0.1", "-sizes", "1g"}, `-sizes "1g": invalid size "1g"`},
		{[]string{"-addr", "127.0.0.1", "-sizes", ""}, "no sizes given"},
		{[]string{"-addr", "127.0.0.1", "-sizes", "1k,1024"}, "repeats"},
		{[]string{"-addr", "127.0.0.1", "-idle-timeout", "0"}, "-idle-timeout 0s must be positive"},
		{[]string{"-addr", "127.0.0.1", "-idle-timeout", "10"}, `invalid value "10" for flag -idle-timeout`},
		{[]string{"-addr", "127.0.0.1", "-read-header-timeout", "-1s"}, "-read-header-timeout -1s must be positive"},
		{[]string{"-addr", "127.0.0.1", "-gomaxprocs", "-1"}, "-gomaxprocs -1 must be 0"},
		{[]string{"-addr", "127.0.0.1", "-gomaxprocs", "two"}, `invalid value "two" for flag -gomaxprocs`},
		{[]string{"-addr", "127.0.0.1", "-reuseport=maybe"}, "invalid boolean value"},
		{[]string{"-addr", "127.0.0.1", "-x"}, "flag provided but not defined: -x"},
		{[]string{"-addr", "127.0.0.1", "extra"}, `unexpected argument "extra"`},
		{[]string{"-addr"}, "flag needs an argument: -addr"},
		{[]string{"-addr", "127.0.0.1", "-http", "3"}, `-http "3": "3" is not an HTTP version (want 1.1, 2 or 1.1,2)`},
		{[]string{"-addr", "127.0.0.1", "-http", "1.1,1.1"}, `-http "1.1,1.1" names 1.1 twice`},
		{[]string{"-addr", "127.0.0.1", "-http", ""}, `-http "": "" is not an HTTP version`},
		{[]string{"-addr", "127.0.0.1", "-max-concurrent-streams", "100"}, "-max-concurrent-streams applies to HTTP/2 only: add -http 2 or -http 1.1,2"},
		{[]string{"-addr", "127.0.0.1", "-http", "2", "-max-concurrent-streams", "0"}, "-max-concurrent-streams 0 is out of range (want 1 to 1048576; leave it out for net/http's 250)"},
		{[]string{"-addr", "127.0.0.1", "-http", "1.1,2", "-max-concurrent-streams", "-5"}, "-max-concurrent-streams -5 is out of range"},
		{[]string{"-addr", "127.0.0.1", "-service-time", "10ms"}, "-service-time 10ms needs -slots (or CSB_SLOTS) too: how many requests are served at once"},
		{[]string{"-addr", "127.0.0.1", "-slots", "40"}, "-slots 40 needs -service-time (or CSB_SERVICE_TIME) too: how long each request holds its slot"},
		{[]string{"-addr", "127.0.0.1", "-slots", "0", "-service-time", "10ms"}, "-slots 0 is out of range (want 1 to 100000)"},
		{[]string{"-addr", "127.0.0.1", "-slots", "-3", "-service-time", "10ms"}, "-slots -3 is out of range"},
		{[]string{"-addr", "127.0.0.1", "-slots", "4", "-service-time", "-10ms"}, "-service-time -10ms is out of range (want 1ms to 1s; time.Sleep is not precise below 1ms)"},
		{[]string{"-addr", "127.0.0.1", "-slots", "4", "-service-time", "0"}, "-service-time 0s is out of range"},
		{[]string{"-addr", "127.0.0.1", "-slots", "4", "-service-time", "100us"}, "-service-time 100µs is out of range"},
		{[]string{"-addr", "127.0.0.1", "-slots", "4", "-service-time", "2s"}, "-service-time 2s is out of range"},
		{[]string{"-addr", "127.0.0.1", "-slots", "4", "-service-time", "10"}, `invalid value "10" for flag -service-time`},
		{[]string{"-addr", "127.0.0.1", "-accept-every", "100us"}, "-accept-every 100µs is out of range (want 1ms to 1s, or 0 to accept as fast as the host can)"},
		{[]string{"-addr", "127.0.0.1", "-accept-every", "2s"}, "-accept-every 2s is out of range"},
		{[]string{"-addr", "127.0.0.1", "-accept-every", "-1ms"}, "-accept-every -1ms is out of range"},
	} {
		var stdout, stderr bytes.Buffer
		err := Run(context.Background(), tc.args, &stdout, &stderr)
		if code := ExitCode(err); code != 2 {
			t.Errorf("Run(%q) = %v (exit %d), want a usage error (exit 2)", tc.args, err, code)
			continue
		}
		msg := stderr.String()
		if !strings.HasPrefix(msg, "error: ") || !strings.Contains(msg, tc.wantErr) || !strings.Contains(msg, "\nUsage: server -addr IP") {
			t.Errorf("Run(%q) stderr = %q, want \"error: ...%s...\" and the usage", tc.args, msg, tc.wantErr)
		}
		if stdout.Len() != 0 {
			t.Errorf("Run(%q) wrote to stdout: %q", tc.args, stdout.String())
		}
	}
}

// noEnv is an environment with nothing set.
func noEnv(string) (string, bool) { return "", false }

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"-addr", "198.18.0.1"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Addr:              netip.MustParseAddr("198.18.0.1"),
		Port:              8080,
		Sizes:             []sizes.Size{{Name: "1k", Bytes: 1024}, {Name: "4k", Bytes: 4096}, {Name: "10k", Bytes: 10240}, {Name: "100k", Bytes: 102400}},
		IdleTimeout:       10 * time.Minute,
		ReadHeaderTimeout: 5 * time.Second,
		HTTP:              HTTPVersions{HTTP1: true},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", cfg, want)
	}

	cfg, err = parseArgs([]string{"-addr", "2001:DB8::1", "-port", "0", "-sizes", "1m,1500",
		"-idle-timeout", "15m", "-read-header-timeout", "2s", "-reuseport", "-gomaxprocs", "1",
		"-http", "2,1.1", "-max-concurrent-streams", "100", "-service-time", "10ms", "-slots", "40"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want = Config{
		Addr:                 netip.MustParseAddr("2001:db8::1"),
		Sizes:                []sizes.Size{{Name: "1500", Bytes: 1500}, {Name: "1m", Bytes: 1 << 20}},
		IdleTimeout:          15 * time.Minute,
		ReadHeaderTimeout:    2 * time.Second,
		ReusePort:            true,
		GOMAXPROCS:           1,
		HTTP:                 HTTPVersions{HTTP1: true, HTTP2: true},
		MaxConcurrentStreams: 100,
		ServiceTime:          10 * time.Millisecond,
		Slots:                40,
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("all flags:\n got %+v\nwant %+v", cfg, want)
	}

	// An IPv4-mapped IPv6 literal is the IPv4 address.
	cfg, err = parseArgs([]string{"-addr", "::ffff:127.0.0.1"}, noEnv)
	if err != nil || cfg.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("-addr ::ffff:127.0.0.1: got %v, %v; want 127.0.0.1", cfg.Addr, err)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's error log and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A running is Run serving in the background on 127.0.0.1.
type running struct {
	listeningLine string
	listening     map[string]any // listeningLine decoded
	addr          string
	lines         chan string // stdout lines after the listening line
	done          chan error  // Run's result
	stop          context.CancelCauseFunc
	stderr        *syncBuffer
}

// startRun runs Run with args and waits for its listening line.
func startRun(t testing.TB, args ...string) *running {
	t.Helper()
	ctx, stop := context.WithCancelCause(context.Background())
	pr, pw := io.Pipe()
	r := &running{lines: make(chan string, 10), done: make(chan error, 1), stop: stop, stderr: new(syncBuffer)}
	go func() {
		err := Run(ctx, args, pw, r.stderr)
		pw.Close()
		r.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		stop(errors.New("test cleanup"))
		select {
		case <-r.done:
		case <-time.After(ShutdownTimeout + 5*time.Second):
			t.Error("Run did not return after cleanup")
		}
	})

	select {
	case line, ok := <-r.lines:
		if !ok {
			t.Fatalf("Run(%q) ended before listening: %v; stderr: %s", args, <-r.done, r.stderr)
		}
		r.listeningLine = line
		if err := json.Unmarshal([]byte(line), &r.listening); err != nil {
			t.Fatalf("listening line %q: %v", line, err)
		}
		r.addr, _ = r.listening["addr"].(string)
	case <-time.After(10 * time.Second):
		t.Fatalf("Run(%q) printed no listening line; stderr: %s", args, r.stderr)
	}
	return r
}

// shutdown cancels Run's context with cause and returns Run's result and
// the decoded shutdown line.
func (r *running) shutdown(t testing.TB, cause error) (error, map[string]any) {
	t.Helper()
	r.stop(cause)
	var ev map[string]any
	for line := range r.lines {
		if ev != nil {
			t.Errorf("more than one line after the listening line: %q", line)
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("shutdown line %q: %v", line, err)
		}
	}
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err, ev
	case <-time.After(ShutdownTimeout + 5*time.Second):
		t.Fatal("Run did not return after its context was canceled")
		return nil, nil
	}
}

func TestRunListeningLine(t *testing.T) {
	r := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-sizes", "100k,1k,1m", "-idle-timeout", "90s")
	got := r.listening
	host, port, err := net.SplitHostPort(r.addr)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Errorf("addr = %q, want 127.0.0.1 with the port the kernel picked", r.addr)
	}
	for key, want := range map[string]any{
		"event":                     "listening",
		"go_version":                runtime.Version(),
		"gomaxprocs":                float64(runtime.GOMAXPROCS(0)),
		"reuseport":                 false,
		"idle_timeout_s":            90.0,
		"read_header_timeout_s":     5.0,
		"write_timeout_s":           60.0,
		"max_header_bytes":          8192.0,
		"tls":                       nil, // cleartext
		"http_versions":             []any{"1.1"},
		"h2_max_concurrent_streams": nil, // no HTTP/2
		"service_time_ms":           nil, // no ground-truth mode
		"slots":                     nil,
		"accept_every_ms":           nil, // accept not paced
	} {
		if !reflect.DeepEqual(got[key], want) {
			t.Errorf("%s = %#v, want %#v", key, got[key], want)
		}
	}
	if pid, _ := got["pid"].(float64); pid <= 0 {
		t.Errorf("pid = %v", got["pid"])
	}
	// The raw line: one line, fields in a fixed order, sizes in size order.
	wantPrefix := `{"event":"listening","addr":"` + r.addr + `","pid":`
	wantSizes := `,"sizes":{"1k":1024,"100k":102400,"1m":1048576},"go_version":`
	if !strings.HasPrefix(r.listeningLine, wantPrefix) || !strings.Contains(r.listeningLine, wantSizes) {
		t.Errorf("listening line %s\nwant it to start %s and contain %s", r.listeningLine, wantPrefix, wantSizes)
	}
	if !reflect.DeepEqual(got["sizes"], map[string]any{"1k": 1024.0, "100k": 102400.0, "1m": 1048576.0}) {
		t.Errorf("sizes = %v", got["sizes"])
	}
	if len(got) != 17 {
		t.Errorf("listening line has %d fields, want 17: %v", len(got), got)
	}
}

// rawRequest sends req on c and reads one response, whose body it returns
// in full.
func rawRequest(t *testing.T, c net.Conn, br *bufio.Reader, req string) (*http.Response, []byte) {
	t.Helper()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	method, _, _ := strings.Cut(req, " ")
	res, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%q: %v", req, err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%q: reading the body: %v", req, err)
	}
	res.Body.Close()
	return res, body
}

// TestRunServesHTTP talks HTTP/1.1 and 1.0 over a real loopback socket and
// checks the framing: an exact Content-Length, never chunked.
func TestRunServesHTTP(t *testing.T) {
	r := startRun(t, "-addr", "127.0.0.1", "-port", "0")
	c, err := net.DialTimeout("tcp", r.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)

	// Several requests on one keep-alive connection.
	for _, tc := range []struct {
		method, path string
		status, n    int
		contentType  string
	}{
		{"GET", "/healthz", 200, 3, "text/plain; charset=utf-8"},
		{"HEAD", "/healthz", 200, 3, "text/plain; charset=utf-8"},
		{"GET", "/payload/1k", 200, 1024, "application/octet-stream"},
		{"GET", "/payload/4k", 200, 4096, "application/octet-stream"},
		{"GET", "/payload/10k", 200, 10240, "application/octet-stream"},
		{"GET", "/payload/100k", 200, 102400, "application/octet-stream"},
		{"HEAD", "/payload/100k", 200, 102400, "application/octet-stream"},
		{"GET", "/payload/3k", 404, 19, "text/plain; charset=utf-8"},
		{"POST", "/payload/1k", 405, 23, "text/plain; charset=utf-8"},
	} {
		req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n", tc.method, tc.path, r.addr)
		res, body := rawRequest(t, c, br, req)
		name := tc.method + " " + tc.path
		if res.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", name, res.StatusCode, tc.status)
		}
		if res.TransferEncoding != nil || res.Header.Get("Transfer-Encoding") != "" {
			t.Errorf("%s: Transfer-Encoding %q, want none", name, res.TransferEncoding)
		}
		if got := res.Header.Get("Content-Length"); got != strconv.Itoa(tc.n) {
			t.Errorf("%s: Content-Length %q, want %d", name, got, tc.n)
		}
		if got := res.Header.Get("Content-Type"); got != tc.contentType {
			t.Errorf("%s: Content-Type %q, want %q", name, got, tc.contentType)
		}
		if tc.status == 405 && res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: Allow %q, want \"GET, HEAD\"", name, res.Header.Get("Allow"))
		}
		wantLen := tc.n
		if tc.method == "HEAD" {
			wantLen = 0
		}
		if len(body) != wantLen {
			t.Errorf("%s: %d body bytes, want %d", name, len(body), wantLen)
		}
		if tc.status == 200 && tc.n > 3 && !bytes.Equal(body, wantBody(tc.n)[:len(body)]) {
			t.Errorf("%s: body is not the pattern", name)
		}
		if res.Close {
			t.Fatalf("%s: the server closed the keep-alive connection", name)
		}
	}

	// HTTP/1.0 gets a Content-Length too, not a body delimited by close.
	c10, err := net.DialTimeout("tcp", r.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c10.Close()
	c10.SetDeadline(time.Now().Add(10 * time.Second))
	res, body := rawRequest(t, c10, bufio.NewReader(c10), "GET /payload/4k HTTP/1.0\r\n\r\n")
	if res.StatusCode != 200 || res.ContentLength != 4096 || len(body) != 4096 {
		t.Errorf("HTTP/1.0: status %d, Content-Length %d, %d bytes; want 200, 4096, 4096", res.StatusCode, res.ContentLength, len(body))
	}

	// The small header limit is in force: 16 KiB of headers is refused.
	cbig, err := net.DialTimeout("tcp", r.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cbig.Close()
	cbig.SetDeadline(time.Now().Add(10 * time.Second))
	big := "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n"
	if res, _ := rawRequest(t, cbig, bufio.NewReader(cbig), big); res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("16 KiB of headers: status %d, want 431", res.StatusCode)
	}

	// Through net/http's client too.
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + r.addr + "/payload/100k")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.ContentLength != 102400 || n != 102400 || resp.TransferEncoding != nil || resp.Uncompressed {
		t.Errorf("client GET: ContentLength %d, %d bytes, TransferEncoding %q, Uncompressed %v", resp.ContentLength, n, resp.TransferEncoding, resp.Uncompressed)
	}
	client.CloseIdleConnections()

	if s := r.stderr.String(); s != "" {
		t.Errorf("stderr: %q, want nothing (no per-request logging)", s)
	}
}

// TestRunGracefulShutdown shows that a shutdown lets a response in flight
// finish, closes idle keep-alive connections, stops accepting, and returns
// nil after printing the shutdown line.
func TestRunGracefulShutdown(t *testing.T) {
	// 16 MiB is more than the loopback socket buffers hold, so the handler
	// is still writing while the client does not read.
	r := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-sizes", "16m")
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.DialTimeout("tcp", r.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(30 * time.Second))
		return c, bufio.NewReader(c)
	}

	// An idle keep-alive connection: one request done.
	idle, idleBR := dial()
	rawRequest(t, idle, idleBR, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")

	// A request in flight: headers read, body not.
	busy, busyBR := dial()
	io.WriteString(busy, "GET /payload/16m HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(busyBR, nil)
	if err != nil {
		t.Fatal(err)
	}

	cause := errors.New("test shutdown")
	r.stop(cause)
	select {
	case err := <-r.done:
		t.Fatalf("Run returned %v while a response was in flight", err)
	case <-time.After(300 * time.Millisecond):
	}
	// The idle connection has been closed by the server.
	if _, err := idleBR.ReadByte(); err != io.EOF {
		t.Errorf("idle connection: read error %v, want EOF", err)
	}
	// The in-flight response completes in full.
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil || n != 16<<20 {
		t.Errorf("in-flight response: %d bytes, %v; want %d bytes", n, err, 16<<20)
	}

	err, ev := r.shutdown(t, cause)
	if err != nil || ExitCode(err) != 0 {
		t.Fatalf("Run = %v after a graceful shutdown, want nil; stderr: %s", err, r.stderr)
	}
	if ev["event"] != "shutdown" || ev["addr"] != r.addr || ev["graceful"] != true || ev["reason"] != "test shutdown" {
		t.Errorf("shutdown line = %v", ev)
	}
	for _, key := range []string{"pid", "shutdown_ms", "uptime_s"} {
		if _, ok := ev[key].(float64); !ok {
			t.Errorf("shutdown line: %s = %#v, want a number", key, ev[key])
		}
	}
	// Nothing listens any more.
	if c, err := net.DialTimeout("tcp", r.addr, 5*time.Second); err == nil {
		c.Close()
		t.Errorf("a connection to %s succeeded after shutdown", r.addr)
	}
}

// TestRunReusePort runs two servers on one port, as the multi-process
// cells do.
func TestRunReusePort(t *testing.T) {
	if !ReusePortSupported {
		t.Skip("SO_REUSEPORT is not supported here")
	}
	first := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-reuseport")
	_, port, _ := net.SplitHostPort(first.addr)
	second := startRun(t, "-addr", "127.0.0.1", "-port", port, "-reuseport")
	if second.addr != first.addr || second.listening["reuseport"] != true {
		t.Errorf("second server: %v, want it on %s with reuseport", second.listening, first.addr)
	}
	for _, r := range []*running{first, second} {
		if err, _ := r.shutdown(t, errors.New("done")); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
}

func TestRunBindErrors(t *testing.T) {
	holder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	_, port, _ := net.SplitHostPort(holder.Addr().String())

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = Run(ctx, []string{"-addr", "127.0.0.1", "-port", port}, &stdout, &stderr)
	if ExitCode(err) != 1 {
		t.Errorf("port in use: Run = %v (exit %d), want exit 1", err, ExitCode(err))
	}
	want := "error: listen tcp 127.0.0.1:" + port + ": bind: address already in use (is another server still running?"
	if !strings.HasPrefix(stderr.String(), want) || strings.Contains(stderr.String(), "Usage:") {
		t.Errorf("port in use: stderr = %q, want %q... without the usage", stderr.String(), want)
	}
	if stdout.Len() != 0 {
		t.Errorf("port in use: stdout = %q, want nothing", stdout.String())
	}

	// 192.0.2.1 (RFC 5737) is on no host of the lab; binding sends nothing.
	stdout.Reset()
	stderr.Reset()
	err = Run(ctx, []string{"-addr", "192.0.2.1", "-port", "0"}, &stdout, &stderr)
	if err == nil {
		t.Skip("this host allows binding 192.0.2.1 (net.ipv4.ip_nonlocal_bind?)")
	}
	if ExitCode(err) != 1 || !strings.Contains(stderr.String(), "cannot assign requested address (is 192.0.2.1 an address of this host?") {
		t.Errorf("address not on host: Run = %v (exit %d), stderr %q", err, ExitCode(err), stderr.String())
	}
}
