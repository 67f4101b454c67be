package connclient

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Minimal HTTP/1.1 client side: one precomputed request, a response parser
// that reads the status line, Content-Length / chunked framing and the
// Connection header, and discards the body. It allocates nothing on the
// success path.

var (
	errBadResponse = errors.New("malformed HTTP response")
	errServerClose = errors.New("server closed the connection (Connection: close)")
)

// buildRequest returns the bytes of a keep-alive GET request.
func buildRequest(host, path string) []byte {
	return []byte("GET " + path + " HTTP/1.1\r\nHost: " + host +
		"\r\nUser-Agent: csbench-connclient\r\nAccept: */*\r\n\r\n")
}

// readBufSize is the bufio buffer used to read responses; a status or header
// line longer than this is a bad response.
const readBufSize = 4096

func newReader() *bufio.Reader { return bufio.NewReaderSize(nil, readBufSize) }

// roundTrip writes req on c and reads one response through br (which it
// resets onto c). The read deadline is timeout after the write; timeout 0
// means none. It returns the status code and whether the connection may be
// reused.
func roundTrip(c net.Conn, br *bufio.Reader, req []byte, timeout time.Duration) (status int, keepAlive bool, err error) {
	if timeout > 0 {
		if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
			return 0, false, err
		}
	}
	if _, err := c.Write(req); err != nil {
		return 0, false, err
	}
	br.Reset(c)
	status, keepAlive, err = readResponse(br)
	if err == nil && br.Buffered() > 0 {
		// Bytes beyond the response: the stream is out of step.
		err = fmt.Errorf("%w: %d unexpected bytes after the response", errBadResponse, br.Buffered())
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

// readResponse reads one HTTP/1.x response to a GET from br and discards its
// body.
func readResponse(br *bufio.Reader) (status int, keepAlive bool, err error) {
	line, err := readLine(br)
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return 0, false, fmt.Errorf("%w: status line %q", errBadResponse, line)
	}
	for _, b := range line[9:12] {
		if b < '0' || b > '9' {
			return 0, false, fmt.Errorf("%w: status line %q", errBadResponse, line)
		}
		status = status*10 + int(b-'0')
	}
	keepAlive = line[7] == '1' // HTTP/1.1 defaults to keep-alive, 1.0 to close
	contentLength := int64(-1)
	chunked := false
	for {
		line, err = readLine(br)
		if err != nil {
			return status, false, noEOF(err)
		}
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return status, false, fmt.Errorf("%w: header line %q", errBadResponse, line)
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := parseDec(value)
			if !ok {
				return status, false, fmt.Errorf("%w: Content-Length %q", errBadResponse, value)
			}
			contentLength = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(lastToken(value), []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			if hasToken(value, []byte("close")) {
				keepAlive = false
			} else if hasToken(value, []byte("keep-alive")) {
				keepAlive = true
			}
		}
	}
	switch {
	case status < 200 || status == 204 || status == 304:
		if status < 200 {
			return status, false, fmt.Errorf("%w: interim status %d", errBadResponse, status)
		}
		return status, keepAlive, nil
	case chunked:
		return status, keepAlive, noEOF(discardChunked(br))
	case contentLength >= 0:
		if _, err := br.Discard(int(contentLength)); err != nil {
			return status, false, noEOF(err)
		}
		return status, keepAlive, nil
	case !keepAlive:
		// Body delimited by the end of the connection.
		if _, err := io.Copy(io.Discard, br); err != nil {
			return status, false, err
		}
		return status, false, nil
	default:
		return status, false, fmt.Errorf("%w: no Content-Length on a keep-alive response", errBadResponse)
	}
}

// readLine returns one line without its CR LF; the slice is valid until the
// next read from br.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("%w: line longer than %d bytes", errBadResponse, readBufSize)
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
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, ok := parseHex(bytes.TrimSpace(line))
		if !ok {
			return fmt.Errorf("%w: chunk size %q", errBadResponse, line)
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
			return fmt.Errorf("%w: no CRLF after chunk", errBadResponse)
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
