package h1wire

import (
	"bytes"
	"fmt"
	"io"
)

// Parser reads one HTTP/1.x response to a GET incrementally, from the
// pieces a non-blocking read returns, for the event-loop engine: the same
// framing and checks as ReadResponse (status line, Content-Length, chunked,
// body until close, Connection), body bytes counted and never copied. Bytes
// are copied only when the head or a chunk line is split across reads (into
// acc, kept for the next response). The zero value is ready after reset.
type Parser struct {
	state  uint8
	lineOK bool // the status line has been checked
	head   respHead
	remain int64  // bodyLength / chunk data: bytes left
	acc    []byte // a head or line split across reads; len 0 otherwise
}

// Parser states.
const (
	psHead       = iota // status line and header fields, up to the empty line
	psBody              // Content-Length body: remain bytes left
	psUntilClose        // body delimited by the end of the connection
	psChunkSize         // a chunk-size line
	psChunkData         // remain bytes of chunk data
	psChunkEnd          // the CR LF after the chunk data
	psTrailer           // trailer lines, up to the empty line
	psDone
)

// MaxHead bounds a response head (and a chunk line), as ReadBufSize bounds
// a line in ReadResponse.
const MaxHead = ReadBufSize

// Status is the status code of the response, once its head is in (0
// before).
func (p *Parser) Status() int { return p.head.status }

// KeepAlive reports whether the connection may carry another request
// after the response (its Connection header and version).
func (p *Parser) KeepAlive() bool { return p.head.keepAlive }

// Reset prepares p for the next response.
func (p *Parser) Reset() {
	p.state, p.lineOK, p.remain, p.acc = psHead, false, 0, p.acc[:0]
}

// Feed consumes the bytes of b that belong to the response and returns how
// many it took and whether the response is complete. A complete response
// leaves the rest of b untaken (the caller decides: for a single request in
// flight, more bytes mean the stream is out of step). An error is a
// malformed response (ErrBadResponse).
func (p *Parser) Feed(b []byte) (n int, done bool, err error) {
	for n < len(b) {
		switch p.state {
		case psHead:
			k, complete, err := p.feedHead(b[n:])
			n += k
			if err != nil || !complete {
				return n, false, err
			}
		case psBody:
			k := int(min(p.remain, int64(len(b)-n)))
			n += k
			p.remain -= int64(k)
			if p.remain == 0 {
				p.state = psDone
			}
		case psUntilClose:
			return len(b), false, nil
		case psChunkSize, psChunkEnd, psTrailer:
			line, k, ok, err := p.line(b[n:])
			n += k
			if err != nil || !ok {
				return n, false, err
			}
			if err := p.chunkLine(line); err != nil {
				return n, false, err
			}
		case psChunkData:
			k := int(min(p.remain, int64(len(b)-n)))
			n += k
			p.remain -= int64(k)
			if p.remain == 0 {
				p.state = psChunkEnd
			}
		}
		if p.state == psDone {
			return n, true, nil
		}
	}
	return n, p.state == psDone, nil
}

// EOF is the end of the stream: it completes a body delimited by the close,
// and is io.ErrUnexpectedEOF anywhere else in a response.
func (p *Parser) EOF() (done bool, err error) {
	if p.state == psUntilClose {
		p.state = psDone
		return true, nil
	}
	return false, io.ErrUnexpectedEOF
}

// feedHead takes bytes of the head from b; complete once the empty line
// that ends it has been parsed.
func (p *Parser) feedHead(b []byte) (n int, complete bool, err error) {
	if !p.lineOK {
		// Check the status line as soon as it is whole, as ReadResponse
		// does: what is not HTTP fails at once, not at the end of the
		// stream.
		if err := p.checkStatusLine(b); err != nil {
			return len(b), false, err
		}
	}
	if len(p.acc) == 0 {
		if end := headEnd(b, 0); end >= 0 { // the whole head in one read: no copy
			if end > MaxHead {
				return end, false, fmt.Errorf("%w: head longer than %d bytes", ErrBadResponse, MaxHead)
			}
			return end, true, p.parseHead(b[:end])
		}
	}
	from := max(len(p.acc)-3, 0)
	room := MaxHead - len(p.acc)
	take := min(len(b), room)
	p.acc = append(p.acc, b[:take]...)
	end := headEnd(p.acc, from)
	if end < 0 {
		if take < len(b) || len(p.acc) >= MaxHead {
			return take, false, fmt.Errorf("%w: head longer than %d bytes", ErrBadResponse, MaxHead)
		}
		return take, false, nil
	}
	n = take - (len(p.acc) - end) // the bytes of b up to the end of the head
	err = p.parseHead(p.acc[:end])
	p.acc = p.acc[:0]
	return n, true, err
}

// checkStatusLine checks the status line once acc and b hold it whole.
func (p *Parser) checkStatusLine(b []byte) error {
	line := p.acc
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	} else if j := bytes.IndexByte(b, '\n'); j >= 0 {
		if len(p.acc) > 0 {
			line = append(line[:len(line):len(line)], b[:j]...) // rare: a status line split across reads
		} else {
			line = b[:j]
		}
	} else {
		return nil
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	p.lineOK = true
	return p.head.statusLine(line)
}

// headEnd returns the index just past the empty line that ends a head in
// b (CR LF CR LF, or bare LFs as readLine accepts), searching lines that
// end at or after from; -1 if there is none yet.
func headEnd(b []byte, from int) int {
	for i := from; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		if i < len(b) && b[i] == '\n' {
			return i + 1
		}
		if i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' {
			return i + 2
		}
		if i >= len(b) {
			return -1
		}
	}
}

// parseHead parses a whole head (status line to empty line) and moves to
// the body's state.
func (p *Parser) parseHead(head []byte) error {
	first := true
	for len(head) > 0 {
		i := bytes.IndexByte(head, '\n')
		line := head[:i]
		head = head[i+1:]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if first {
			if err := p.head.statusLine(line); err != nil {
				return err
			}
			first = false
			continue
		}
		if len(line) == 0 {
			break
		}
		if err := p.head.field(line); err != nil {
			return err
		}
	}
	body, err := p.head.body()
	if err != nil {
		return err
	}
	switch body {
	case bodyNone:
		p.state = psDone
	case bodyLength:
		p.state, p.remain = psBody, p.head.contentLength
		if p.remain == 0 {
			p.state = psDone
		}
	case bodyChunked:
		p.state = psChunkSize
	default:
		p.state = psUntilClose
	}
	return nil
}

// line takes one line (without CR LF) from b, joining a line split across
// reads in acc; ok is false when the line is not complete yet.
func (p *Parser) line(b []byte) (line []byte, n int, ok bool, err error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if len(p.acc)+len(b) > MaxHead {
			return nil, len(b), false, fmt.Errorf("%w: line longer than %d bytes", ErrBadResponse, MaxHead)
		}
		p.acc = append(p.acc, b...)
		return nil, len(b), false, nil
	}
	line = b[:i]
	if len(p.acc) > 0 {
		if len(p.acc)+i > MaxHead {
			return nil, i + 1, false, fmt.Errorf("%w: line longer than %d bytes", ErrBadResponse, MaxHead)
		}
		p.acc = append(p.acc, line...)
		line = p.acc
	}
	if k := len(line); k > 0 && line[k-1] == '\r' {
		line = line[:k-1]
	}
	return line, i + 1, true, nil
}

// chunkLine handles one complete line in a chunked body.
func (p *Parser) chunkLine(line []byte) error {
	defer func() { p.acc = p.acc[:0] }()
	switch p.state {
	case psChunkEnd:
		if len(line) != 0 {
			return fmt.Errorf("%w: no CRLF after chunk", ErrBadResponse)
		}
		p.state = psChunkSize
	case psTrailer:
		if len(line) == 0 {
			p.state = psDone
		}
	default: // psChunkSize
		size, err := chunkSize(line)
		if err != nil {
			return err
		}
		if size == 0 {
			p.state = psTrailer
		} else {
			p.state, p.remain = psChunkData, size
		}
	}
	return nil
}
