package connclient

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"slices"
	"time"
)

// Minimal HTTP/2 client side (RFC 9113) for idle -http 2: one precomputed
// opening (the preface, SETTINGS, and a GET on stream 1), a frame reader
// that follows stream 1 to the end of its response and decodes only its
// :status (HPACK, RFC 7541: hpack.go), and the answers every HTTP/2 client
// owes its server at any time: a SETTINGS ACK, a PING ACK. No
// net/http Transport: each connection carries exactly its own request, and
// a held connection costs a slice entry and a small struct (h2Conn), no
// goroutine.

var (
	errHTTP1Answer    = errors.New("the server answered the HTTP/2 preface in HTTP/1")
	errALPNNotH2      = errors.New("the server did not choose h2 by ALPN")
	errGoaway         = errors.New("GOAWAY from the server")
	errRSTStream      = errors.New("RST_STREAM on the request's stream")
	errUnexpectedData = errors.New("the server sent something unasked")
)

// The frame types and flags this client reads or writes.
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2Priority     = 0x2
	h2RSTStream    = 0x3
	h2Settings     = 0x4
	h2PushPromise  = 0x5
	h2Ping         = 0x6
	h2GoAway       = 0x7
	h2WindowUpdate = 0x8
	h2Continuation = 0x9

	h2FlagEndStream  = 0x1 // DATA, HEADERS
	h2FlagAck        = 0x1 // SETTINGS, PING
	h2FlagEndHeaders = 0x4
	h2FlagPadded     = 0x8
	h2FlagPriority   = 0x20

	h2FrameHeaderLen = 9
	// h2MaxFrame is the largest frame payload the server may send: this
	// client leaves SETTINGS_MAX_FRAME_SIZE at its default.
	h2MaxFrame = 16384
	// h2MaxPath bounds -path with -http 2, so that the request's header
	// block fits in one HEADERS frame.
	h2MaxPath = 8192
	// h2WindowAck: DATA received past this many bytes of the 65,535 of
	// the initial windows is given back with WINDOW_UPDATE frames, so that
	// a response larger than the window is not stalled.
	h2WindowAck = 1 << 15
)

const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// h2SettingsAck is the SETTINGS frame with the ACK flag.
var h2SettingsAck = []byte{0, 0, 0, h2Settings, h2FlagAck, 0, 0, 0, 0}

// buildH2Request returns what opens an HTTP/2 connection and asks for path
// on it: the client preface, a SETTINGS frame with SETTINGS_ENABLE_PUSH 0,
// and a HEADERS frame (END_STREAM, END_HEADERS) on stream 1 whose header
// block is :method GET and :scheme from the static table, :path and
// :authority as literals without indexing (with their names from the
// static table), and user-agent as HTTP/1.1's request sends it. Built once
// per process: every connection writes these same bytes.
func buildH2Request(scheme, authority, path string) []byte {
	block := []byte{0x82} // :method GET (index 2)
	if scheme == "https" {
		block = append(block, 0x87) // :scheme https (index 7)
	} else {
		block = append(block, 0x86) // :scheme http (index 6)
	}
	block = hpackAppendLiteral(block, 4, path)       // :path
	block = hpackAppendLiteral(block, 1, authority)  // :authority
	block = hpackAppendLiteral(block, 58, userAgent) // user-agent
	b := []byte(h2Preface)
	b = appendFrameHeader(b, 6, h2Settings, 0, 0)
	b = append(b, 0, 2, 0, 0, 0, 0) // SETTINGS_ENABLE_PUSH = 0
	b = appendFrameHeader(b, len(block), h2Headers, h2FlagEndStream|h2FlagEndHeaders, 1)
	return append(b, block...)
}

// userAgent is the User-Agent of every request.
const userAgent = "csbench-connclient"

func appendFrameHeader(b []byte, length int, typ, flags byte, stream uint32) []byte {
	b = append(b, byte(length>>16), byte(length>>8), byte(length), typ, flags)
	return binary.BigEndian.AppendUint32(b, stream&0x7fffffff)
}

// alertNoApplicationProtocol is TLS alert 120, no_application_protocol
// (RFC 7301): the server speaks none of the protocols offered.
const alertNoApplicationProtocol = 120

// noALPN reports whether err is a TLS handshake that failed on the
// server's no_application_protocol alert: it speaks none of the protocols
// offered (here only h2). crypto/tls reports an alert received as a
// net.OpError "remote error" whose error is the alert itself, of a uint8
// type it does not export: its code is read by reflection, never from its
// text (TestH2Refused sees this one).
func noALPN(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return false
	}
	v := reflect.ValueOf(op.Err)
	return v.Kind() == reflect.Uint8 && v.Type().PkgPath() == "crypto/tls" && v.Uint() == alertNoApplicationProtocol
}

// h2Frame is a frame header.
type h2Frame struct {
	length int
	typ    byte
	flags  byte
	stream uint32
}

func parseFrameHeader(b []byte) h2Frame {
	return h2Frame{
		length: int(b[0])<<16 | int(b[1])<<8 | int(b[2]),
		typ:    b[3],
		flags:  b[4],
		stream: binary.BigEndian.Uint32(b[5:9]) & 0x7fffffff,
	}
}

// h2Buf is what one connect worker reads HTTP/2 responses with, beside its
// bufio.Reader: the header block being put together, and the frame it
// answers with.
type h2Buf struct {
	block []byte
	out   [h2FrameHeaderLen + 8]byte
}

// h2Control handles a frame that may come at any time on a connection
// whose stream 1 is over (closed, or not yet begun: a frame on stream 0):
// it answers SETTINGS with a SETTINGS ACK and PING with a PING ACK (the
// same 8 bytes), ignores WINDOW_UPDATE, PRIORITY, RST_STREAM (on the
// closed stream) and frames of unknown types (RFC 9113 §4.1: ignored), and
// returns errGoaway for a GOAWAY and errUnexpectedData for a frame of a
// stream (DATA, HEADERS, CONTINUATION, PUSH_PROMISE). payload is the PING's
// 8 bytes; the other frames' payloads are not looked at.
func h2Control(w io.Writer, out *[h2FrameHeaderLen + 8]byte, f h2Frame, payload []byte) error {
	switch f.typ {
	case h2Settings:
		switch {
		case f.stream != 0 || f.length%6 != 0 || (f.flags&h2FlagAck != 0 && f.length != 0):
			return fmt.Errorf("%w: SETTINGS of %d bytes on stream %d", errBadResponse, f.length, f.stream)
		case f.flags&h2FlagAck != 0:
			return nil
		}
		_, err := w.Write(h2SettingsAck)
		return err
	case h2Ping:
		if f.stream != 0 || f.length != 8 {
			return fmt.Errorf("%w: PING of %d bytes on stream %d", errBadResponse, f.length, f.stream)
		}
		if f.flags&h2FlagAck != 0 {
			return nil // never asked: this client sends no PING
		}
		appendFrameHeader(out[:0], 8, h2Ping, h2FlagAck, 0)
		copy(out[h2FrameHeaderLen:], payload)
		_, err := w.Write(out[:])
		return err
	case h2GoAway:
		return errGoaway
	case h2Data, h2Headers, h2Continuation, h2PushPromise:
		return fmt.Errorf("%w: HTTP/2 frame type %d on stream %d", errUnexpectedData, f.typ, f.stream)
	}
	return nil // WINDOW_UPDATE, PRIORITY, RST_STREAM, unknown types
}

// h2Resp is where stream 1's response is.
type h2Resp struct {
	status    int  // the final status, 0 until its header block is in
	inBlock   bool // a header block has begun and not ended: CONTINUATION must follow
	endStream bool // the header block in progress ends the stream
	done      bool // the response ended (END_STREAM)
	unacked   int  // DATA bytes not yet given back by WINDOW_UPDATE
}

// h2RoundTrip writes req (buildH2Request) on c and reads through br (which
// it resets onto c) the frames up to the end of stream 1's response,
// answering the server's SETTINGS and PINGs on the way (h2Control). Then,
// the response over, it handles the frames already received, buffered in
// br or inside TLS, so that the connection is held at a frame boundary
// with nothing left unanswered: what comes later the hold sees
// (h2Hold.serve). timeout (0: none) bounds the whole exchange, as
// roundTrip's. It returns stream 1's status, 0 when none came.
//
// A server that answers the preface in HTTP/1 gives errHTTP1Answer, a
// GOAWAY before the response's end errGoaway, a RST_STREAM on stream 1
// errRSTStream.
func h2RoundTrip(c net.Conn, br *bufio.Reader, s *h2Buf, req []byte, timeout time.Duration) (int, error) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
		if err := c.SetDeadline(deadline); err != nil {
			return 0, err
		}
	}
	if _, err := c.Write(req); err != nil {
		return 0, err
	}
	br.Reset(c)
	defer br.Reset(nil)
	s.block = s.block[:0]
	b, err := br.Peek(len("HTTP/"))
	if bytes.HasPrefix(b, []byte("HTTP/")) {
		return 0, errHTTP1Answer
	}
	if err != nil {
		return 0, err
	}
	var r h2Resp
	for {
		if r.done && br.Buffered() == 0 {
			more, err := tlsBuffered(c, br, deadline)
			if err != nil {
				return r.status, err
			}
			if !more {
				break
			}
		}
		if err := r.frame(c, br, s); err != nil {
			return r.status, err
		}
	}
	if timeout > 0 {
		if err := c.SetDeadline(time.Time{}); err != nil {
			return r.status, err
		}
	}
	return r.status, nil
}

// tlsBuffered reports whether TLS on c holds more of what the server sent
// than br has read: a record read from the socket with the one before it.
// It reads it into br without waiting for the socket. On a cleartext
// connection it is false: what the socket holds, the hold sees.
func tlsBuffered(c net.Conn, br *bufio.Reader, deadline time.Time) (bool, error) {
	if _, ok := c.(*tls.Conn); !ok {
		return false, nil
	}
	// A deadline past: TLS reads no socket, only the records it has (a
	// timeout in TLS is not sticky: the connection stays usable).
	if err := c.SetReadDeadline(time.Unix(1, 0)); err != nil {
		return false, err
	}
	_, err := br.Peek(1)
	if derr := c.SetReadDeadline(deadline); derr != nil {
		return false, derr
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return false, nil
	}
	return false, err
}

// frame reads one frame from br and does what it asks.
func (r *h2Resp) frame(c net.Conn, br *bufio.Reader, s *h2Buf) error {
	hb, err := br.Peek(h2FrameHeaderLen)
	if err != nil {
		return noEOF(err)
	}
	f := parseFrameHeader(hb)
	br.Discard(h2FrameHeaderLen)
	if f.length > h2MaxFrame {
		return fmt.Errorf("%w: HTTP/2 frame of %d bytes, above %d", errBadResponse, f.length, h2MaxFrame)
	}
	if r.inBlock && (f.typ != h2Continuation || f.stream != 1) {
		return fmt.Errorf("%w: HTTP/2 frame type %d inside a header block", errBadResponse, f.typ)
	}
	switch {
	case r.done || (f.stream != 1 && f.typ != h2PushPromise):
		// After the response, or on stream 0 (and anything on another
		// stream, which h2Control refuses).
		var payload []byte
		if f.typ == h2Ping && f.length == 8 {
			if payload, err = br.Peek(8); err != nil {
				return noEOF(err)
			}
		}
		if err := h2Control(c, &s.out, f, payload); err != nil {
			return err
		}
		_, err := br.Discard(f.length)
		return noEOF(err)
	case f.typ == h2Headers || f.typ == h2Continuation:
		return r.headers(f, br, s)
	case f.typ == h2Data:
		if r.status == 0 {
			return fmt.Errorf("%w: HTTP/2 DATA before the response's headers", errBadResponse)
		}
		if _, err := br.Discard(f.length); err != nil {
			return noEOF(err)
		}
		if f.flags&h2FlagEndStream != 0 {
			r.done = true
			return nil
		}
		r.unacked += f.length
		if r.unacked < h2WindowAck {
			return nil
		}
		// Both windows, the connection's and the stream's.
		b := appendFrameHeader(s.out[:0], 4, h2WindowUpdate, 0, 0)
		b = binary.BigEndian.AppendUint32(b, uint32(r.unacked))
		b = appendFrameHeader(b, 4, h2WindowUpdate, 0, 1)
		b = binary.BigEndian.AppendUint32(b, uint32(r.unacked))
		r.unacked = 0
		_, err := c.Write(b)
		return err
	case f.typ == h2RSTStream:
		return errRSTStream
	}
	// PUSH_PROMISE (push is off), a frame on stream 1 of no other type.
	return fmt.Errorf("%w: HTTP/2 frame type %d on stream %d", errBadResponse, f.typ, f.stream)
}

// headers reads a HEADERS or CONTINUATION frame of stream 1 into the
// header block, and at its end decodes the status: an interim one (1xx)
// is skipped, the final one kept; a block after it is trailers.
func (r *h2Resp) headers(f h2Frame, br *bufio.Reader, s *h2Buf) error {
	if f.typ == h2Continuation && !r.inBlock {
		return fmt.Errorf("%w: HTTP/2 CONTINUATION without HEADERS", errBadResponse)
	}
	n := len(s.block)
	s.block = slices.Grow(s.block, f.length)[:n+f.length]
	if _, err := io.ReadFull(br, s.block[n:]); err != nil {
		return noEOF(err)
	}
	if f.typ == h2Headers {
		frag := s.block[n:]
		pad := 0
		if f.flags&h2FlagPadded != 0 {
			if len(frag) < 1 {
				return fmt.Errorf("%w: HTTP/2 HEADERS padded without a pad length", errBadResponse)
			}
			pad, frag = int(frag[0]), frag[1:]
		}
		if f.flags&h2FlagPriority != 0 {
			if len(frag) < 5 {
				return fmt.Errorf("%w: HTTP/2 HEADERS too short for its priority", errBadResponse)
			}
			frag = frag[5:]
		}
		if pad > len(frag) {
			return fmt.Errorf("%w: HTTP/2 HEADERS padding past its end", errBadResponse)
		}
		s.block = append(s.block[:n], frag[:len(frag)-pad]...)
		r.inBlock, r.endStream = true, f.flags&h2FlagEndStream != 0
	}
	if f.flags&h2FlagEndHeaders == 0 {
		return nil
	}
	r.inBlock = false
	block := s.block
	s.block = s.block[:0]
	if r.status == 0 {
		st, err := hpackStatus(block)
		if err != nil {
			return err
		}
		if st >= 200 {
			r.status = st
		} else if r.endStream {
			return fmt.Errorf("%w: interim status %d ends the stream", errBadResponse, st)
		}
	} else if !r.endStream {
		return fmt.Errorf("%w: HTTP/2 trailers without END_STREAM", errBadResponse)
	}
	r.done = r.endStream && r.status != 0
	return nil
}

// h2Conn is what a held HTTP/2 connection keeps between two checks: the
// start of a frame that had not all arrived (nil nearly always).
type h2Conn struct {
	pending []byte
}

// h2Hold answers the servers of held HTTP/2 connections: one reader,
// large enough for a whole frame, serves them all in turn.
type h2Hold struct {
	src holdSource
	br  *bufio.Reader
	out [h2FrameHeaderLen + 8]byte
}

func newH2Hold() *h2Hold {
	s := &h2Hold{}
	s.br = bufio.NewReaderSize(&s.src, h2FrameHeaderLen+h2MaxFrame)
	return s
}

// h2HoldWait is how long a check waits for the rest of a TLS record whose
// start has arrived, and a write of an answer for the socket.
const h2HoldWait = 10 * time.Millisecond

// serve reads what the server sent on h, which a check found readable,
// without waiting for more, and answers it (h2Control): nil while the
// connection stays up, else why it does not (errGoaway, errUnexpectedData,
// io.EOF, ...). A frame not all arrived is kept in h.h2 for the next check.
func (s *h2Hold) serve(h held) error {
	c := h.h2
	s.src = holdSource{pending: c.pending, h: h}
	s.br.Reset(&s.src)
	defer s.br.Reset(nil)
	// No deadline left behind: a peek (RawConn.Read) honours it too.
	defer h.io.SetDeadline(time.Time{})
	if err := h.io.SetWriteDeadline(time.Now().Add(h2HoldWait)); err != nil {
		return err
	}
	for {
		b, err := s.br.Peek(h2FrameHeaderLen)
		if err == nil {
			f := parseFrameHeader(b)
			if f.length > h2MaxFrame {
				return fmt.Errorf("%w: HTTP/2 frame of %d bytes, above %d", errBadResponse, f.length, h2MaxFrame)
			}
			if b, err = s.br.Peek(h2FrameHeaderLen + f.length); err == nil {
				if err := h2Control(h.io, &s.out, f, b[h2FrameHeaderLen:]); err != nil {
					return err
				}
				s.br.Discard(len(b))
				continue
			}
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		// Nothing more to read now: keep the start of a frame, if any.
		// (The socket was read only once pending was all in br.)
		rest, _ := s.br.Peek(s.br.Buffered())
		c.pending = append(c.pending[:0], rest...)
		return nil
	}
}

// holdSource is what h2Hold reads a connection through: first the bytes
// kept from the last check, then the connection, without waiting for the
// socket (a deadline already past) unless it holds bytes, and then at most
// h2HoldWait (a TLS record's end).
type holdSource struct {
	pending []byte
	h       held
}

func (s *holdSource) Read(p []byte) (int, error) {
	if len(s.pending) > 0 {
		n := copy(p, s.pending)
		s.pending = s.pending[n:]
		return n, nil
	}
	// The last read's deadline off first: the peek honours it.
	if err := s.h.io.SetReadDeadline(time.Time{}); err != nil {
		return 0, err
	}
	d := time.Unix(1, 0)
	if peek(s.h) != "" { // readable (or failed: the read says how)
		d = time.Now().Add(h2HoldWait)
	}
	if err := s.h.io.SetReadDeadline(d); err != nil {
		return 0, err
	}
	return s.h.io.Read(p)
}
