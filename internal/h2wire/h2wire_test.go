package h2wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"
)

func newReader() *bufio.Reader { return bufio.NewReaderSize(nil, 4096) }

// TestBuildH2Request: the preface, SETTINGS (no dynamic table, push off) and the HEADERS of
// the GET on stream 1, whose header block is what the static table and
// literals without indexing make of it.
func TestBuildH2Request(t *testing.T) {
	b := BuildRequest("https", "127.0.0.1:8443", "/healthz")
	want := Preface +
		"\x00\x00\x0c\x04\x00\x00\x00\x00\x00" + "\x00\x01\x00\x00\x00\x00" + "\x00\x02\x00\x00\x00\x00" +
		"\x00\x00\x31\x01\x05\x00\x00\x00\x01" +
		"\x82\x87" + "\x04\x08/healthz" + "\x01\x0e127.0.0.1:8443" + "\x0f\x2b\x12csbench-connclient"
	if string(b) != want {
		t.Errorf("request\n%q\nwant\n%q", b, want)
	}
	if b := BuildRequest("http", "h", "/"); !strings.Contains(string(b), "\x82\x86\x04\x01/") {
		t.Errorf("cleartext request %q lacks :scheme http", b)
	}
}

// TestClientSettings: the SETTINGS frame of the opening, the first frame
// after the preface, sets HEADER_TABLE_SIZE 0, so that the server's HPACK
// encoder adds nothing to a dynamic table (hpack.go), and ENABLE_PUSH 0.
func TestClientSettings(t *testing.T) {
	b := BuildRequest("http", "127.0.0.1:8080", "/healthz")
	if !strings.HasPrefix(string(b), Preface) {
		t.Fatalf("the opening %q does not start with the preface", b)
	}
	b = b[len(Preface):]
	f := ParseFrameHeader(b)
	if f.Type != FrameSettings || f.Flags != 0 || f.Stream != 0 || f.Length%6 != 0 {
		t.Fatalf("first frame %+v, want a SETTINGS on stream 0", f)
	}
	got := map[uint16]uint32{}
	for p := b[FrameHeaderLen : FrameHeaderLen+f.Length]; len(p) > 0; p = p[6:] {
		got[binary.BigEndian.Uint16(p)] = binary.BigEndian.Uint32(p[2:])
	}
	if v, ok := got[SettingHeaderTableSize]; !ok || v != 0 {
		t.Errorf("SETTINGS_HEADER_TABLE_SIZE %d (sent: %v), want 0", v, ok)
	}
	if v, ok := got[SettingEnablePush]; !ok || v != 0 {
		t.Errorf("SETTINGS_ENABLE_PUSH %d (sent: %v), want 0", v, ok)
	}
	if len(got) != 2 {
		t.Errorf("settings %v, want those two alone", got)
	}
}

// h2Canned is a net.Conn whose server side is canned bytes: what a
// server sends a connection up to the end of its response.
type h2Canned struct {
	net.Conn
	r strings.Reader
	w *bytes.Buffer // what the client wrote; nil: not kept
}

func (c *h2Canned) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *h2Canned) Write(p []byte) (int, error) {
	if c.w != nil {
		c.w.Write(p)
	}
	return len(p), nil
}
func (c *h2Canned) SetDeadline(time.Time) error      { return nil }
func (c *h2Canned) SetReadDeadline(time.Time) error  { return nil }
func (c *h2Canned) SetWriteDeadline(time.Time) error { return nil }

// h2CannedResponse is a server's side of a connection: SETTINGS, a
// WINDOW_UPDATE, the ACK of the client's SETTINGS, a PING, then the
// response: HEADERS (:status 200 Huffman-coded) and CONTINUATION, and the
// body in two DATA frames.
func h2CannedResponse() string {
	var b []byte
	frame := func(typ, flags byte, stream uint32, payload []byte) {
		b = AppendFrameHeader(b, len(payload), typ, flags, stream)
		b = append(b, payload...)
	}
	frame(FrameSettings, 0, 0, []byte{0, 3, 0, 0, 0, 100})
	frame(FrameWindowUpdate, 0, 0, []byte{0, 0, 0x10, 0})
	frame(FrameSettings, FlagAck, 0, nil)
	frame(FramePing, 0, 0, []byte("12345678"))
	frame(FrameHeaders, 0, 1, []byte{0x48, 0x82, 0x10, 0x01})
	frame(FrameContinuation, FlagEndHeaders, 1, append([]byte{0x5f, 0x0a}, "text/plain"...))
	frame(FrameData, 0, 1, []byte("ok"))
	frame(FrameData, FlagEndStream, 1, []byte("\n"))
	return string(b)
}

// TestH2RoundTripAllocs: priming a connection over HTTP/2 allocates
// nothing once the worker's buffers have their size.
func TestH2RoundTripAllocs(t *testing.T) {
	resp := h2CannedResponse()
	c := &h2Canned{}
	req := BuildRequest("http", "127.0.0.1:8080", "/healthz")
	br := newReader()
	var s Buf
	allocs := testing.AllocsPerRun(1000, func() {
		c.r.Reset(resp)
		if st, err := RoundTrip(c, br, &s, req, 5*time.Second); st != 200 || err != nil {
			t.Fatalf("status %d, %v", st, err)
		}
	})
	if allocs != 0 {
		t.Errorf("RoundTrip allocates %.1f times per connection, want 0", allocs)
	}
}

// TestH2RoundTripDrain: frames that came with the end of the response (a
// PING read with it) are answered before the connection is held.
func TestH2RoundTripDrain(t *testing.T) {
	ping := AppendFrameHeader(nil, 8, FramePing, 0, 0)
	ping = append(ping, "afterend"...)
	c := &h2Canned{w: &bytes.Buffer{}}
	c.r.Reset(h2CannedResponse() + string(ping))
	req := BuildRequest("http", "127.0.0.1:8080", "/healthz")
	var s Buf
	if st, err := RoundTrip(c, newReader(), &s, req, time.Second); st != 200 || err != nil {
		t.Fatalf("status %d, %v", st, err)
	}
	ack := string(AppendFrameHeader(nil, 8, FramePing, FlagAck, 0)) + "afterend"
	if w := c.w.String(); !strings.HasPrefix(w, string(req)) || !strings.HasSuffix(w, ack) {
		t.Errorf("the client wrote %q, want its request first and the PING ACK last", w)
	}
	if c.r.Len() != 0 {
		t.Errorf("%d bytes left unread", c.r.Len())
	}
}

// TestH2RoundTripWindow: a body larger than half the initial window is
// given back with WINDOW_UPDATE frames, the connection's and the
// stream's, so that a response past 64 KiB is not stalled.
func TestH2RoundTripWindow(t *testing.T) {
	var b []byte
	b = AppendFrameHeader(b, 1, FrameHeaders, FlagEndHeaders, 1)
	b = append(b, 0x88)
	chunk := make([]byte, MaxFrame)
	for range 3 {
		b = AppendFrameHeader(b, len(chunk), FrameData, 0, 1)
		b = append(b, chunk...)
	}
	b = AppendFrameHeader(b, 0, FrameData, FlagEndStream, 1)
	c := &h2Canned{w: &bytes.Buffer{}}
	c.r.Reset(string(b))
	req := BuildRequest("http", "127.0.0.1:8080", "/payload/48k")
	var s Buf
	if st, err := RoundTrip(c, newReader(), &s, req, time.Second); st != 200 || err != nil {
		t.Fatalf("status %d, %v", st, err)
	}
	var want []byte
	for _, stream := range []uint32{0, 1} {
		want = AppendFrameHeader(want, 4, FrameWindowUpdate, 0, stream)
		want = binary.BigEndian.AppendUint32(want, 2*MaxFrame)
	}
	if w := c.w.String(); w != string(req)+string(want) {
		t.Errorf("after its request the client wrote %q, want %q", w[min(len(w), len(req)):], want)
	}
}
