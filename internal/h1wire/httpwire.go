// Package h1wire is connclient's minimal HTTP/1.1 client side: one
// precomputed request (BuildRequest), a blocking response reader
// (ReadResponse, RoundTrip) and an incremental one for the event-loop
// engine (Parser, respparse.go), both reading the status line,
// Content-Length / chunked framing and the Connection header, and
// discarding the body. Neither allocates on the success path.
package h1wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// The errors of a response; connclient classifies them as bad_response
// and server_close.
var (
	ErrBadResponse = errors.New("malformed HTTP response")
	ErrServerClose = errors.New("server closed the connection (Connection: close)")
)

// BuildRequest returns the bytes of a keep-alive GET request.
func BuildRequest(host, path string) []byte {
	return []byte("GET " + path + " HTTP/1.1\r\nHost: " + host +
		"\r\nUser-Agent: csbench-connclient\r\nAccept: */*\r\n\r\n")
}

// ReadBufSize is the bufio buffer used to read responses; a status or header
// line longer than this is a bad response.
const ReadBufSize = 4096

func NewReader() *bufio.Reader { return bufio.NewReaderSize(nil, ReadBufSize) }

// RoundTrip writes req on c and reads one response through br (which it
// resets onto c). The read deadline is timeout after the write; timeout 0
// means none. It returns the status code and whether the connection may be
// reused.
func RoundTrip(c net.Conn, br *bufio.Reader, req []byte, timeout time.Duration) (status int, keepAlive bool, err error) {
	if timeout > 0 {
		if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
			return 0, false, err
		}
	}
	if _, err := c.Write(req); err != nil {
		return 0, false, err
	}
	br.Reset(c)
	status, keepAlive, err = ReadResponse(br)
	if err == nil && br.Buffered() > 0 {
		// Bytes beyond the response: the stream is out of step.
		err = fmt.Errorf("%w: %d unexpected bytes after the response", ErrBadResponse, br.Buffered())
	}
	br.Reset(nil)
	if err != nil {
		return status, false, err
	}
	if timeout > 0 {
		if err := c.SetDeadline(time.Time{}); err != nil {
			return status, false, err
		}
	}
	return status, keepAlive, nil
}

// ReadResponse reads one HTTP/1.x response to a GET from br and discards its
// body.
func ReadResponse(br *bufio.Reader) (status int, keepAlive bool, err error) {
	line, err := readLine(br)
	if err != nil {
		return 0, false, err
	}
	var h respHead
	if err := h.statusLine(line); err != nil {
		return 0, false, err
	}
	for {
		line, err = readLine(br)
		if err != nil {
			return h.status, false, noEOF(err)
		}
		if len(line) == 0 {
			break
		}
		if err := h.field(line); err != nil {
			return h.status, false, err
		}
	}
	switch body, err := h.body(); {
	case err != nil:
		return h.status, false, err
	case body == bodyNone:
		return h.status, h.keepAlive, nil
	case body == bodyChunked:
		return h.status, h.keepAlive, noEOF(discardChunked(br))
	case body == bodyLength:
		if _, err := br.Discard(int(h.contentLength)); err != nil {
			return h.status, false, noEOF(err)
		}
		return h.status, h.keepAlive, nil
	default: // bodyUntilClose
		if _, err := io.Copy(io.Discard, br); err != nil {
			return h.status, false, err
		}
		return h.status, false, nil
	}
}

// respHead is what a response's status line and header fields say about
// its framing; ReadResponse (blocking) and Parser (incremental) share it.
type respHead struct {
	status        int
	keepAlive     bool
	contentLength int64 // -1: none
	chunked       bool
}

// How a response's body is delimited.
const (
	bodyNone       = iota // 204, 304
	bodyLength            // Content-Length bytes
	bodyChunked           // Transfer-Encoding: chunked
	bodyUntilClose        // the end of the connection (Connection: close, no length)
)

// statusLine parses "HTTP/1.1 200 OK" (line without its CR LF) into a fresh h.
func (h *respHead) statusLine(line []byte) error {
	*h = respHead{contentLength: -1}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return fmt.Errorf("%w: status line %q", ErrBadResponse, line)
	}
	for _, b := range line[9:12] {
		if b < '0' || b > '9' {
			h.status = 0
			return fmt.Errorf("%w: status line %q", ErrBadResponse, line)
		}
		h.status = h.status*10 + int(b-'0')
	}
	h.keepAlive = line[7] == '1' // HTTP/1.1 defaults to keep-alive, 1.0 to close
	return nil
}

// field parses one header line (without its CR LF).
func (h *respHead) field(line []byte) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return fmt.Errorf("%w: header line %q", ErrBadResponse, line)
	}
	name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
	switch {
	case bytes.EqualFold(name, []byte("Content-Length")):
		n, ok := parseDec(value)
		if !ok {
			return fmt.Errorf("%w: Content-Length %q", ErrBadResponse, value)
		}
		h.contentLength = n
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		h.chunked = bytes.EqualFold(lastToken(value), []byte("chunked"))
	case bytes.EqualFold(name, []byte("Connection")):
		if hasToken(value, []byte("close")) {
			h.keepAlive = false
		} else if hasToken(value, []byte("keep-alive")) {
			h.keepAlive = true
		}
	}
	return nil
}

// body says how the body of the response to a GET is delimited, once every
// header field is in.
func (h *respHead) body() (int, error) {
	switch {
	case h.status < 200:
		return 0, fmt.Errorf("%w: interim status %d", ErrBadResponse, h.status)
	case h.status == 204 || h.status == 304:
		return bodyNone, nil
	case h.chunked:
		return bodyChunked, nil
	case h.contentLength >= 0:
		return bodyLength, nil
	case !h.keepAlive:
		return bodyUntilClose, nil
	default:
		return 0, fmt.Errorf("%w: no Content-Length on a keep-alive response", ErrBadResponse)
	}
}

// readLine returns one line without its CR LF; the slice is valid until the
// next read from br.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("%w: line longer than %d bytes", ErrBadResponse, ReadBufSize)
	}
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func discardChunked(br *bufio.Reader) error {
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		size, err := chunkSize(line)
		if err != nil {
			return err
		}
		if size == 0 {
			for { // trailers, up to the empty line
				line, err := readLine(br)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					return nil
				}
			}
		}
		if _, err := br.Discard(int(size)); err != nil {
			return err
		}
		if line, err := readLine(br); err != nil {
			return err
		} else if len(line) != 0 {
			return fmt.Errorf("%w: no CRLF after chunk", ErrBadResponse)
		}
	}
}

// noEOF turns io.EOF inside a response into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func parseDec(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// chunkSize reads a chunk-size line (its extensions after ';' ignored).
func chunkSize(line []byte) (int64, error) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	size, ok := parseHex(bytes.TrimSpace(line))
	if !ok {
		return 0, fmt.Errorf("%w: chunk size %q", ErrBadResponse, line)
	}
	return size, nil
}

func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

// hasToken reports whether the comma-separated list v holds tok
// (case-insensitive).
func hasToken(v, tok []byte) bool {
	for len(v) > 0 {
		var t []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			t, v = v, nil
		}
		if bytes.EqualFold(bytes.TrimSpace(t), tok) {
			return true
		}
	}
	return false
}

func lastToken(v []byte) []byte {
	if i := bytes.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return bytes.TrimSpace(v)
}
