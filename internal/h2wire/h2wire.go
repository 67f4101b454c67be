// Package h2wire is connclient's minimal HTTP/2 client side (RFC 9113),
// for idle -http 2: one precomputed opening (the preface, SETTINGS, and a
// GET on stream 1: BuildRequest), a frame reader that follows stream 1 to
// the end of its response and decodes only its :status (RoundTrip; HPACK,
// RFC 7541: hpack.go), and the answers every HTTP/2 client owes its
// server at any time: a SETTINGS ACK, a PING ACK (Hold, during the hold).
// No net/http Transport: each connection carries exactly its own request,
// and a held connection costs a slice entry and a small struct (Conn), no
// goroutine.
package h2wire

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

// The errors of an HTTP/2 exchange; connclient classifies them into the
// causes of its result (alpn_not_h2, http1_answer, goaway, rst_stream,
// unexpected_data, bad_response).
var (
	ErrBadResponse    = errors.New("malformed HTTP response")
	ErrHTTP1Answer    = errors.New("the server answered the HTTP/2 preface in HTTP/1")
	ErrALPNNotH2      = errors.New("the server did not choose h2 by ALPN")
	ErrGoaway         = errors.New("GOAWAY from the server")
	ErrRSTStream      = errors.New("RST_STREAM on the request's stream")
	ErrUnexpectedData = errors.New("the server sent something unasked")
)

// The frame types and flags this client reads or writes.
const (
	FrameData         = 0x0
	FrameHeaders      = 0x1
	FramePriority     = 0x2
	FrameRSTStream    = 0x3
	FrameSettings     = 0x4
	FramePushPromise  = 0x5
	FramePing         = 0x6
	FrameGoAway       = 0x7
	FrameWindowUpdate = 0x8
	FrameContinuation = 0x9

	FlagEndStream  = 0x1 // DATA, HEADERS
	FlagAck        = 0x1 // SETTINGS, PING
	FlagEndHeaders = 0x4
	FlagPadded     = 0x8
	FlagPriority   = 0x20

	FrameHeaderLen = 9
	// MaxFrame is the largest frame payload the server may send: this
	// client leaves SETTINGS_MAX_FRAME_SIZE at its default.
	MaxFrame = 16384
	// MaxPath bounds -path with -http 2, so that the request's header
	// block fits in one HEADERS frame.
	MaxPath = 8192
	// windowAck: DATA received past this many bytes of the 65,535 of
	// the initial windows is given back with WINDOW_UPDATE frames, so that
	// a response larger than the window is not stalled.
	windowAck = 1 << 15
)

// The settings the client sends (RFC 9113 §6.5.2), both 0.
const (
	SettingHeaderTableSize = 0x1
	SettingEnablePush      = 0x2
)

// Preface is the client connection preface (RFC 9113 §3.4).
const Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// settingsAck is the SETTINGS frame with the ACK flag.
var settingsAck = []byte{0, 0, 0, FrameSettings, FlagAck, 0, 0, 0, 0}

// BuildRequest returns what opens an HTTP/2 connection and asks for path
// on it: the client preface, a SETTINGS frame with
// SETTINGS_HEADER_TABLE_SIZE 0 (no dynamic table: hpack.go) and
// SETTINGS_ENABLE_PUSH 0, and a HEADERS frame (END_STREAM, END_HEADERS) on stream 1 whose header
// block is :method GET and :scheme from the static table, :path and
// :authority as literals without indexing (with their names from the
// static table), and user-agent as HTTP/1.1's request sends it. Built once
// per process: every connection writes these same bytes.
func BuildRequest(scheme, authority, path string) []byte {
	block := []byte{0x82} // :method GET (index 2)
	if scheme == "https" {
		block = append(block, 0x87) // :scheme https (index 7)
	} else {
		block = append(block, 0x86) // :scheme http (index 6)
	}
	block = hpackAppendLiteral(block, 4, path)       // :path
	block = hpackAppendLiteral(block, 1, authority)  // :authority
	block = hpackAppendLiteral(block, 58, userAgent) // user-agent
	b := []byte(Preface)
	b = AppendFrameHeader(b, 12, FrameSettings, 0, 0)
	b = append(b, 0, SettingHeaderTableSize, 0, 0, 0, 0) // = 0
	b = append(b, 0, SettingEnablePush, 0, 0, 0, 0)      // = 0
	b = AppendFrameHeader(b, len(block), FrameHeaders, FlagEndStream|FlagEndHeaders, 1)
	return append(b, block...)
}

// userAgent is the User-Agent of every request.
const userAgent = "csbench-connclient"

func AppendFrameHeader(b []byte, length int, typ, flags byte, stream uint32) []byte {
	b = append(b, byte(length>>16), byte(length>>8), byte(length), typ, flags)
	return binary.BigEndian.AppendUint32(b, stream&0x7fffffff)
}

// alertNoApplicationProtocol is TLS alert 120, no_application_protocol
// (RFC 7301): the server speaks none of the protocols offered.
const alertNoApplicationProtocol = 120

// NoALPN reports whether err is a TLS handshake that failed on the
// server's no_application_protocol alert: it speaks none of the protocols
// offered (here only h2). crypto/tls reports an alert received as a
// net.OpError "remote error" whose error is the alert itself, of a uint8
// type it does not export: its code is read by reflection, never from its
// text (TestH2Refused sees this one).
func NoALPN(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return false
	}
	v := reflect.ValueOf(op.Err)
	return v.Kind() == reflect.Uint8 && v.Type().PkgPath() == "crypto/tls" && v.Uint() == alertNoApplicationProtocol
}

// Frame is a frame header.
type Frame struct {
	Length int
	Type   byte
	Flags  byte
	Stream uint32
}

// ParseFrameHeader reads the frame header at the start of b, which holds
// at least FrameHeaderLen bytes.
func ParseFrameHeader(b []byte) Frame {
	return Frame{
		Length: int(b[0])<<16 | int(b[1])<<8 | int(b[2]),
		Type:   b[3],
		Flags:  b[4],
		Stream: binary.BigEndian.Uint32(b[5:9]) & 0x7fffffff,
	}
}

// Buf is what one connect worker reads HTTP/2 responses with, beside its
// bufio.Reader: the header block being put together, and the frame it
// answers with.
type Buf struct {
	block []byte
	out   [FrameHeaderLen + 8]byte
}

// control handles a frame that may come at any time on a connection
// whose stream 1 is over (closed, or not yet begun: a frame on stream 0):
// it answers SETTINGS with a SETTINGS ACK and PING with a PING ACK (the
// same 8 bytes), ignores WINDOW_UPDATE, PRIORITY, RST_STREAM (on the
// closed stream) and frames of unknown types (RFC 9113 §4.1: ignored), and
// returns ErrGoaway for a GOAWAY and ErrUnexpectedData for a frame of a
// stream (DATA, HEADERS, CONTINUATION, PUSH_PROMISE). payload is the PING's
// 8 bytes; the other frames' payloads are not looked at.
func control(w io.Writer, out *[FrameHeaderLen + 8]byte, f Frame, payload []byte) error {
	switch f.Type {
	case FrameSettings:
		switch {
		case f.Stream != 0 || f.Length%6 != 0 || (f.Flags&FlagAck != 0 && f.Length != 0):
			return fmt.Errorf("%w: SETTINGS of %d bytes on stream %d", ErrBadResponse, f.Length, f.Stream)
		case f.Flags&FlagAck != 0:
			return nil
		}
		_, err := w.Write(settingsAck)
		return err
	case FramePing:
		if f.Stream != 0 || f.Length != 8 {
			return fmt.Errorf("%w: PING of %d bytes on stream %d", ErrBadResponse, f.Length, f.Stream)
		}
		if f.Flags&FlagAck != 0 {
			return nil // never asked: this client sends no PING
		}
		AppendFrameHeader(out[:0], 8, FramePing, FlagAck, 0)
		copy(out[FrameHeaderLen:], payload)
		_, err := w.Write(out[:])
		return err
	case FrameGoAway:
		return ErrGoaway
	case FrameData, FrameHeaders, FrameContinuation, FramePushPromise:
		return fmt.Errorf("%w: HTTP/2 frame type %d on stream %d", ErrUnexpectedData, f.Type, f.Stream)
	}
	return nil // WINDOW_UPDATE, PRIORITY, RST_STREAM, unknown types
}

// resp is where stream 1's response is.
type resp struct {
	status    int  // the final status, 0 until its header block is in
	inBlock   bool // a header block has begun and not ended: CONTINUATION must follow
	endStream bool // the header block in progress ends the stream
	done      bool // the response ended (END_STREAM)
	unacked   int  // DATA bytes not yet given back by WINDOW_UPDATE
}

// RoundTrip writes req (BuildRequest) on c and reads through br (which
// it resets onto c) the frames up to the end of stream 1's response,
// answering the server's SETTINGS and PINGs on the way (control). Then,
// the response over, it handles the frames already received, buffered in
// br or inside TLS, so that the connection is held at a frame boundary
// with nothing left unanswered: what comes later the hold sees
// (Hold.Serve). timeout (0: none) bounds the whole exchange, as
// connclient's HTTP/1.1 round trip does. It returns stream 1's status, 0
// when none came.
//
// A server that answers the preface in HTTP/1 gives ErrHTTP1Answer, a
// GOAWAY before the response's end ErrGoaway, a RST_STREAM on stream 1
// ErrRSTStream.
func RoundTrip(c net.Conn, br *bufio.Reader, s *Buf, req []byte, timeout time.Duration) (int, error) {
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
		return 0, ErrHTTP1Answer
	}
	if err != nil {
		return 0, err
	}
	var r resp
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
func (r *resp) frame(c net.Conn, br *bufio.Reader, s *Buf) error {
	hb, err := br.Peek(FrameHeaderLen)
	if err != nil {
		return noEOF(err)
	}
	f := ParseFrameHeader(hb)
	br.Discard(FrameHeaderLen)
	if f.Length > MaxFrame {
		return fmt.Errorf("%w: HTTP/2 frame of %d bytes, above %d", ErrBadResponse, f.Length, MaxFrame)
	}
	if r.inBlock && (f.Type != FrameContinuation || f.Stream != 1) {
		return fmt.Errorf("%w: HTTP/2 frame type %d inside a header block", ErrBadResponse, f.Type)
	}
	switch {
	case r.done || (f.Stream != 1 && f.Type != FramePushPromise):
		// After the response, or on stream 0 (and anything on another
		// stream, which control refuses).
		var payload []byte
		if f.Type == FramePing && f.Length == 8 {
			if payload, err = br.Peek(8); err != nil {
				return noEOF(err)
			}
		}
		if err := control(c, &s.out, f, payload); err != nil {
			return err
		}
		_, err := br.Discard(f.Length)
		return noEOF(err)
	case f.Type == FrameHeaders || f.Type == FrameContinuation:
		return r.headers(f, br, s)
	case f.Type == FrameData:
		if r.status == 0 {
			return fmt.Errorf("%w: HTTP/2 DATA before the response's headers", ErrBadResponse)
		}
		if _, err := br.Discard(f.Length); err != nil {
			return noEOF(err)
		}
		if f.Flags&FlagEndStream != 0 {
			r.done = true
			return nil
		}
		r.unacked += f.Length
		if r.unacked < windowAck {
			return nil
		}
		// Both windows, the connection's and the stream's.
		b := AppendFrameHeader(s.out[:0], 4, FrameWindowUpdate, 0, 0)
		b = binary.BigEndian.AppendUint32(b, uint32(r.unacked))
		b = AppendFrameHeader(b, 4, FrameWindowUpdate, 0, 1)
		b = binary.BigEndian.AppendUint32(b, uint32(r.unacked))
		r.unacked = 0
		_, err := c.Write(b)
		return err
	case f.Type == FrameRSTStream:
		return ErrRSTStream
	}
	// PUSH_PROMISE (push is off), a frame on stream 1 of no other type.
	return fmt.Errorf("%w: HTTP/2 frame type %d on stream %d", ErrBadResponse, f.Type, f.Stream)
}

// headers reads a HEADERS or CONTINUATION frame of stream 1 into the
// header block, and at its end decodes the status: an interim one (1xx)
// is skipped, the final one kept; a block after it is trailers.
func (r *resp) headers(f Frame, br *bufio.Reader, s *Buf) error {
	if f.Type == FrameContinuation && !r.inBlock {
		return fmt.Errorf("%w: HTTP/2 CONTINUATION without HEADERS", ErrBadResponse)
	}
	n := len(s.block)
	s.block = slices.Grow(s.block, f.Length)[:n+f.Length]
	if _, err := io.ReadFull(br, s.block[n:]); err != nil {
		return noEOF(err)
	}
	if f.Type == FrameHeaders {
		frag := s.block[n:]
		pad := 0
		if f.Flags&FlagPadded != 0 {
			if len(frag) < 1 {
				return fmt.Errorf("%w: HTTP/2 HEADERS padded without a pad length", ErrBadResponse)
			}
			pad, frag = int(frag[0]), frag[1:]
		}
		if f.Flags&FlagPriority != 0 {
			if len(frag) < 5 {
				return fmt.Errorf("%w: HTTP/2 HEADERS too short for its priority", ErrBadResponse)
			}
			frag = frag[5:]
		}
		if pad > len(frag) {
			return fmt.Errorf("%w: HTTP/2 HEADERS padding past its end", ErrBadResponse)
		}
		s.block = append(s.block[:n], frag[:len(frag)-pad]...)
		r.inBlock, r.endStream = true, f.Flags&FlagEndStream != 0
	}
	if f.Flags&FlagEndHeaders == 0 {
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
			return fmt.Errorf("%w: interim status %d ends the stream", ErrBadResponse, st)
		}
	} else if !r.endStream {
		return fmt.Errorf("%w: HTTP/2 trailers without END_STREAM", ErrBadResponse)
	}
	r.done = r.endStream && r.status != 0
	return nil
}

// Conn is what a held HTTP/2 connection keeps between two checks: the
// start of a frame that had not all arrived (nil nearly always).
type Conn struct {
	pending []byte
}

// Hold answers the servers of held HTTP/2 connections: one reader,
// large enough for a whole frame, serves them all in turn.
type Hold struct {
	src holdSource
	br  *bufio.Reader
	out [FrameHeaderLen + 8]byte
}

// NewHold returns a Hold with its reader.
func NewHold() *Hold {
	s := &Hold{}
	s.br = bufio.NewReaderSize(&s.src, FrameHeaderLen+MaxFrame)
	return s
}

// holdWait is how long a check waits for the rest of a TLS record whose
// start has arrived, and a write of an answer for the socket.
const holdWait = 10 * time.Millisecond

// Serve reads what the server sent on conn (whose state between checks
// is c), which a check found readable, without waiting for more, and
// answers it (control): nil while the connection stays up, else why it
// does not (ErrGoaway, ErrUnexpectedData, io.EOF, ...). A frame not all
// arrived is kept in c for the next check. readable reports, without
// reading, whether the socket holds bytes or has failed (a peek).
func (s *Hold) Serve(conn net.Conn, c *Conn, readable func() bool) error {
	s.src = holdSource{pending: c.pending, conn: conn, readable: readable}
	s.br.Reset(&s.src)
	defer s.br.Reset(nil)
	// No deadline left behind: a peek (RawConn.Read) honours it too.
	defer conn.SetDeadline(time.Time{})
	if err := conn.SetWriteDeadline(time.Now().Add(holdWait)); err != nil {
		return err
	}
	for {
		b, err := s.br.Peek(FrameHeaderLen)
		if err == nil {
			f := ParseFrameHeader(b)
			if f.Length > MaxFrame {
				return fmt.Errorf("%w: HTTP/2 frame of %d bytes, above %d", ErrBadResponse, f.Length, MaxFrame)
			}
			if b, err = s.br.Peek(FrameHeaderLen + f.Length); err == nil {
				if err := control(conn, &s.out, f, b[FrameHeaderLen:]); err != nil {
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

// holdSource is what Hold reads a connection through: first the bytes
// kept from the last check, then the connection, without waiting for the
// socket (a deadline already past) unless it holds bytes, and then at most
// holdWait (a TLS record's end).
type holdSource struct {
	pending  []byte
	conn     net.Conn
	readable func() bool
}

func (s *holdSource) Read(p []byte) (int, error) {
	if len(s.pending) > 0 {
		n := copy(p, s.pending)
		s.pending = s.pending[n:]
		return n, nil
	}
	// The last read's deadline off first: the peek honours it.
	if err := s.conn.SetReadDeadline(time.Time{}); err != nil {
		return 0, err
	}
	d := time.Unix(1, 0)
	if s.readable() { // (or failed: the read says how)
		d = time.Now().Add(holdWait)
	}
	if err := s.conn.SetReadDeadline(d); err != nil {
		return 0, err
	}
	return s.conn.Read(p)
}

// noEOF turns an EOF inside a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
