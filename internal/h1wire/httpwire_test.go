package h1wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"csbench/internal/localtest"
)

// responseCases are responses to a GET with what a parser must make of
// them: ReadResponse (blocking) and Parser (incremental) alike.
var responseCases = []struct {
	name      string
	in        string
	status    int
	keepAlive bool
	err       string // cause, "" for success
	rest      string // what must remain unread
}{
	{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nok\nNEXT", 200, true, "", "NEXT"},
	{"zero length", "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 404, true, "", ""},
	{"header case", "HTTP/1.1 200 OK\r\ncontent-length:   2\r\n\r\nhiNEXT", 200, true, "", "NEXT"},
	{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", 200, true, "", ""},
	{"no reason", "HTTP/1.1 503\r\nContent-Length: 0\r\n\r\n", 503, true, "", ""},
	{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\na;ext=1\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT", 200, true, "", "NEXT"},
	{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 200, false, "", ""},
	{"close without length", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody until EOF", 200, false, "", ""},
	{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, false, "", ""},
	{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", 200, true, "", ""},
	{"204 no body", "HTTP/1.1 204 No Content\r\n\r\nNEXT", 204, true, "", "NEXT"},
	{"304 no body", "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", 304, true, "", ""},
	{"empty", "", 0, false, causeEOF, ""},
	{"truncated headers", "HTTP/1.1 200 OK\r\nContent-Len", 200, false, causeEOF, ""},
	{"truncated body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 200, false, causeEOF, ""},
	{"truncated chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", 200, false, causeEOF, ""},
	{"garbage", "SSH-2.0-OpenSSH_9.6\r\n", 0, false, causeBadResponse, ""},
	{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", 0, false, causeBadResponse, ""},
	{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 200, false, causeBadResponse, ""},
	{"bad header", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", 200, false, causeBadResponse, ""},
	{"no length keep-alive", "HTTP/1.1 200 OK\r\n\r\nbody", 200, false, causeBadResponse, ""},
	{"interim", "HTTP/1.1 100 Continue\r\n\r\n", 100, false, causeBadResponse, ""},
	{"long line", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", ReadBufSize) + "\r\n\r\n", 200, false, causeBadResponse, ""},
}

func TestReadResponse(t *testing.T) {
	cases := responseCases
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			br := bufio.NewReaderSize(strings.NewReader(c.in), ReadBufSize)
			status, keep, err := ReadResponse(br)
			if got := classify(err); got != c.err {
				t.Fatalf("error %v (cause %q), want cause %q", err, got, c.err)
			}
			if status != c.status || (err == nil && keep != c.keepAlive) {
				t.Errorf("status %d keepAlive %v, want %d %v", status, keep, c.status, c.keepAlive)
			}
			if err == nil {
				rest, _ := io.ReadAll(br)
				if string(rest) != c.rest {
					t.Errorf("left %q unread, want %q", rest, c.rest)
				}
			}
		})
	}
}

func TestBuildRequest(t *testing.T) {
	got := string(BuildRequest("198.18.0.1:8080", "/healthz"))
	want := "GET /healthz HTTP/1.1\r\nHost: 198.18.0.1:8080\r\nUser-Agent: csbench-connclient\r\nAccept: */*\r\n\r\n"
	if got != want {
		t.Errorf("request %q, want %q", got, want)
	}
}

// TestReadResponseAllocs proves the parse path allocates nothing.
func TestReadResponseAllocs(t *testing.T) {
	for _, resp := range []string{
		"HTTP/1.1 200 OK\r\nDate: Mon, 30 Nov 2026 07:00:00 GMT\r\nContent-Length: 3\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nok\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nok\n\r\n0\r\n\r\n",
	} {
		src := strings.NewReader(resp)
		br := NewReader()
		allocs := testing.AllocsPerRun(1000, func() {
			src.Reset(resp)
			br.Reset(src)
			if _, _, err := ReadResponse(br); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("ReadResponse allocates %.1f times per response, want 0", allocs)
		}
	}
}

// cannedServer answers every request on 127.0.0.1 with one fixed response,
// with fixed buffers, so that it allocates nothing per request itself.
func cannedServer(tb testing.TB, resp []byte) net.Addr {
	tb.Helper()
	return localtest.Serve(tb, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 4096)
		n := 0
		for {
			m, err := c.Read(buf[n:])
			if err != nil {
				return
			}
			n += m
			for {
				i := bytes.Index(buf[:n], []byte("\r\n\r\n"))
				if i < 0 {
					break
				}
				if _, err := c.Write(resp); err != nil {
					return
				}
				n = copy(buf, buf[i+4:n])
			}
		}
	})
}

const cannedOK = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nok\n"

// TestRoundTripAllocs: a request/response on a kept-alive connection costs
// no heap allocation on the client (the canned server allocates none
// either).
func TestRoundTripAllocs(t *testing.T) {
	addr := cannedServer(t, []byte(cannedOK))
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := BuildRequest(addr.String(), "/healthz")
	br := NewReader()
	allocs := testing.AllocsPerRun(500, func() {
		if _, _, err := RoundTrip(c, br, req, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	})
	if allocs >= 1 {
		t.Errorf("RoundTrip allocates %.1f times per request, want 0", allocs)
	}
}

func BenchmarkReadResponse(b *testing.B) {
	src := strings.NewReader(cannedOK)
	br := NewReader()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		src.Reset(cannedOK)
		br.Reset(src)
		if _, _, err := ReadResponse(br); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRoundTripLoopback(b *testing.B) {
	addr := cannedServer(b, []byte(cannedOK))
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := BuildRequest(addr.String(), "/healthz")
	br := NewReader()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := RoundTrip(c, br, req, 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// The causes connclient's Classify names for the errors of this package.
const (
	causeEOF         = "eof"
	causeBadResponse = "bad_response"
)

// classify is the part of connclient's Classify these errors reach.
func classify(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return causeEOF
	case errors.Is(err, ErrBadResponse):
		return causeBadResponse
	}
	return "other"
}
