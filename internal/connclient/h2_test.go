package connclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"csbench/internal/h2wire"
	"csbench/internal/localtest"
	"csbench/internal/server"
	"csbench/internal/tlscert"
	"csbench/internal/tlscert/certtest"
)

// h2Peer is the server side of one HTTP/2 connection in a test, frame by
// frame.
type h2Peer struct {
	c  net.Conn
	br *bufio.Reader
	// settings is the payload of the client's SETTINGS frame (the first
	// one without ACK).
	settings []byte
}

func (p *h2Peer) write(typ, flags byte, stream uint32, payload []byte) error {
	b := h2wire.AppendFrameHeader(nil, len(payload), typ, flags, stream)
	_, err := p.c.Write(append(b, payload...))
	return err
}

func (p *h2Peer) read() (h2wire.Frame, []byte, error) {
	var hb [h2wire.FrameHeaderLen]byte
	if _, err := io.ReadFull(p.br, hb[:]); err != nil {
		return h2wire.Frame{}, nil, err
	}
	f := h2wire.ParseFrameHeader(hb[:])
	payload := make([]byte, f.Length)
	_, err := io.ReadFull(p.br, payload)
	return f, payload, err
}

// readUntil reads frames until one of type typ and flags comes, and
// returns its payload.
func (p *h2Peer) readUntil(typ, flags byte) ([]byte, error) {
	for {
		f, payload, err := p.read()
		if err != nil {
			return nil, err
		}
		if f.Type == typ && f.Flags&flags == flags {
			return payload, nil
		}
	}
}

// holdOpen keeps the connection open until the client closes it.
func (p *h2Peer) holdOpen() { io.Copy(io.Discard, p.br) }

// respond200 answers stream 1: :status 200, indexed, ending the stream.
func (p *h2Peer) respond200() error {
	return p.write(h2wire.FrameHeaders, h2wire.FlagEndStream|h2wire.FlagEndHeaders, 1, []byte{0x88})
}

// rawH2Server accepts on 127.0.0.1 and, on each connection, checks the
// client preface, sends an empty SETTINGS, reads the client's frames up to
// its request's HEADERS (which must be on stream 1 and end the stream and
// the header block), and hands the connection to serve, then closes it.
func rawH2Server(t *testing.T, serve func(p *h2Peer)) string {
	t.Helper()
	return localtest.Serve(t, func(c net.Conn) {
		defer c.Close()
		p := &h2Peer{c: c, br: bufio.NewReader(c)}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		pre := make([]byte, len(h2wire.Preface))
		if _, err := io.ReadFull(p.br, pre); err != nil || string(pre) != h2wire.Preface {
			return
		}
		if p.write(h2wire.FrameSettings, 0, 0, nil) != nil {
			return
		}
		for {
			f, payload, err := p.read()
			if err != nil {
				return
			}
			if f.Type == h2wire.FrameSettings && f.Flags&h2wire.FlagAck == 0 && p.settings == nil {
				p.settings = payload
			}
			if f.Type == h2wire.FrameHeaders {
				if f.Stream != 1 || f.Flags != h2wire.FlagEndStream|h2wire.FlagEndHeaders {
					return
				}
				break
			}
		}
		serve(p)
	}).String()
}

// TestH2ClientSettings: the SETTINGS frame every connection sends, as its
// server reads it, sets HEADER_TABLE_SIZE and ENABLE_PUSH to 0 and
// nothing else: no dynamic table (h2wire's hpack.go), no push.
func TestH2ClientSettings(t *testing.T) {
	var ok atomic.Int64
	addr := rawH2Server(t, func(p *h2Peer) {
		want := map[uint16]uint32{h2wire.SettingHeaderTableSize: 0, h2wire.SettingEnablePush: 0}
		got := map[uint16]uint32{}
		for b := p.settings; len(b) >= 6; b = b[6:] {
			got[binary.BigEndian.Uint16(b)] = binary.BigEndian.Uint32(b[2:])
		}
		if len(p.settings)%6 == 0 && maps.Equal(got, want) {
			ok.Add(1)
		} else {
			t.Errorf("the client's SETTINGS %x, want HEADER_TABLE_SIZE 0 and ENABLE_PUSH 0", p.settings)
		}
		p.respond200()
		p.holdOpen()
	})
	res := h2Idle(t, "-target", addr, "-conns", "3", "-hold", "100ms")
	wantHeld(t, res, 3, "200")
	if ok.Load() != 3 {
		t.Errorf("%d connections sent the SETTINGS wanted, want 3", ok.Load())
	}
}

// h2Idle runs idle -http 2 with args after the mode and returns the result.
func h2Idle(t *testing.T, args ...string) map[string]any {
	t.Helper()
	res, stderr, err := runCmd(t, context.Background(), append([]string{"idle", "-http", "2"}, args...)...)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if res["http"] != "2" {
		t.Errorf(`http %v, want "2"`, res["http"])
	}
	return res
}

// wantHeld checks that all n connections were opened, answered with
// status, and held to the end without a drop.
func wantHeld(t *testing.T, res map[string]any, n int, status string) {
	t.Helper()
	if num(t, res, "connections_established") != float64(n) || num(t, res, "connections_alive_end") != float64(n) {
		t.Errorf("established %v alive_end %v, want %d", res["connections_established"], res["connections_alive_end"], n)
	}
	if sc := counts(t, res, "status_codes"); sc[status] != n || len(sc) != 1 {
		t.Errorf("status_codes %v, want %s: %d", sc, status, n)
	}
	if e, d := counts(t, res, "errors"), counts(t, res, "drops"); len(e) != 0 || len(d) != 0 {
		t.Errorf("errors %v drops %v, want none", e, d)
	}
}

// pingEvery100ms: a net/http server pings an HTTP/2 connection idle
// (nothing read) for 100 ms, and closes it if the PING ACK does not come
// within 500 ms.
var pingEvery100ms = &http.HTTP2Config{SendPingTimeout: 100 * time.Millisecond, PingTimeout: 500 * time.Millisecond}

// h2cServer is a net/http server on 127.0.0.1 speaking HTTP/1.1 and
// HTTP/2 with prior knowledge, which counts the HTTP/2 requests for
// /healthz and pings idle connections (pingEvery100ms).
func h2cServer(t *testing.T, h2reqs *atomic.Int64) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 || r.URL.Path != "/healthz" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		h2reqs.Add(1)
		io.WriteString(w, "ok\n")
	}))
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetHTTP1(true)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Config.HTTP2 = pingEvery100ms
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// TestH2CleartextHold: against net/http's HTTP/2 with prior knowledge,
// every connection gets its 200 over HTTP/2 and is held for 1 s, over
// which the server pings each idle connection every 100 ms and closes any
// whose PING ACK does not come within 500 ms: all stay alive.
func TestH2CleartextHold(t *testing.T) {
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 50 * time.Millisecond
	var h2reqs atomic.Int64
	s := h2cServer(t, &h2reqs)
	res := h2Idle(t, "-target", hostPort(s), "-conns", "20", "-hold", "1s")
	wantHeld(t, res, 20, "200")
	if h2reqs.Load() != 20 {
		t.Errorf("the server saw %d HTTP/2 requests for /healthz, want 20", h2reqs.Load())
	}
	if num(t, res, "requests_completed") != 20 {
		t.Errorf("requests_completed %v, want 20", res["requests_completed"])
	}
}

// h2TLSServer is a net/http server on 127.0.0.1 over TLS, offering h2 and
// http/1.1 by ALPN (and pinging idle connections: pingEvery100ms), or
// http/1.1 only; and the CA file that verifies it.
func h2TLSServer(t *testing.T, h2 bool, h2reqs *atomic.Int64) (addr, caFile string) {
	t.Helper()
	pair, caFile := certtest.Cert(t, tlscert.ECDSAP256)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			h2reqs.Add(1)
		}
		io.WriteString(w, "ok\n")
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	s.EnableHTTP2 = h2
	s.Config.HTTP2 = pingEvery100ms
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused
	s.StartTLS()
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "https://"), caFile
}

// TestH2TLSHold: over TLS, ALPN chooses h2 and every connection is held
// for 1 s, answering the server's PINGs through TLS.
func TestH2TLSHold(t *testing.T) {
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 50 * time.Millisecond
	var h2reqs atomic.Int64
	addr, ca := h2TLSServer(t, true, &h2reqs)
	res := h2Idle(t, "-target", addr, "-conns", "10", "-hold", "1s", "-tls-ca", ca)
	wantHeld(t, res, 10, "200")
	if h2reqs.Load() != 10 {
		t.Errorf("the server saw %d HTTP/2 requests, want 10", h2reqs.Load())
	}
	tlsr, _ := res["tls"].(map[string]any)
	if first, _ := tlsr["first"].(map[string]any); first["alpn"] != "h2" {
		t.Errorf("tls %v: want the first connection's alpn h2", res["tls"])
	}
}

// TestH2Refused: a server that does not speak HTTP/2 fails every
// connection with the cause that says so, without a retry: http1_answer
// in cleartext (net/http's HTTP/1.1, and a raw one that answers 400),
// alpn_not_h2 over TLS (a server offering http/1.1 only refuses the
// handshake; one without ALPN chooses nothing).
func TestH2Refused(t *testing.T) {
	h1 := okServer(t, nil)
	raw400 := rawServer(t, func(c *net.TCPConn) {
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		c.Close()
	})
	var n atomic.Int64
	h1TLS, h1CA := h2TLSServer(t, false, &n)
	noALPN, noALPNCA := certtest.HandshakeServer(t, tlscert.ECDSAP256, false)
	for _, c := range []struct {
		name  string
		args  []string
		cause string
	}{
		{"net/http HTTP/1.1", []string{"-target", hostPort(h1)}, causeHTTP1Answer},
		{"HTTP/1.1 400", []string{"-target", raw400}, causeHTTP1Answer},
		{"TLS http/1.1 only", []string{"-target", h1TLS, "-tls-ca", h1CA}, causeALPNNotH2},
		{"TLS without ALPN", []string{"-target", noALPN, "-tls-ca", noALPNCA}, causeALPNNotH2},
	} {
		res := h2Idle(t, append(c.args, "-conns", "3", "-hold", "10ms")...)
		if e := counts(t, res, "errors"); e[c.cause] != 3 || len(e) != 1 {
			t.Errorf("%s: errors %v, want %s: 3", c.name, e, c.cause)
		}
		if num(t, res, "connections_established") != 0 || num(t, res, "connections_failed") != 3 {
			t.Errorf("%s: established %v failed %v, want 0 and 3", c.name, res["connections_established"], res["connections_failed"])
		}
		ramp, _ := res["ramp"].(map[string]any)
		if ramp["retries"] != 0.0 {
			t.Errorf("%s: ramp retries %v, want 0", c.name, ramp["retries"])
		}
	}
}

// TestH2Priming: what a server may do before its response ends, frame by
// frame: ping first (the client must answer before it gets its response),
// split its header block, send its status Huffman-coded and a body over
// several DATA frames; answer 404; or refuse the request.
func TestH2Priming(t *testing.T) {
	var pinged atomic.Int64
	for _, c := range []struct {
		name   string
		serve  func(p *h2Peer)
		status string // "": none, the connection failed with cause
		cause  string
	}{
		{"ping, continuation, Huffman, data", func(p *h2Peer) {
			p.write(h2wire.FramePing, 0, 0, []byte("12345678"))
			if ack, err := p.readUntil(h2wire.FramePing, h2wire.FlagAck); err != nil || string(ack) != "12345678" {
				return
			}
			pinged.Add(1)
			// :status 200 Huffman-coded, literal with incremental
			// indexing; content-type in the CONTINUATION.
			p.write(h2wire.FrameHeaders, 0, 1, []byte{0x48, 0x82, 0x10, 0x01})
			p.write(h2wire.FrameContinuation, h2wire.FlagEndHeaders, 1, append([]byte{0x5f, 0x0a}, "text/plain"...))
			p.write(h2wire.FrameWindowUpdate, 0, 0, []byte{0, 0, 0x10, 0})
			p.write(h2wire.FrameData, 0, 1, []byte("ok"))
			p.write(h2wire.FrameData, h2wire.FlagEndStream, 1, nil)
			p.holdOpen()
		}, "200", ""},
		{"padded headers with priority", func(p *h2Peer) {
			// pad length 2, priority (5 bytes), :status 204, padding
			p.write(h2wire.FrameHeaders, h2wire.FlagEndStream|h2wire.FlagEndHeaders|h2wire.FlagPadded|h2wire.FlagPriority, 1,
				[]byte{2, 0, 0, 0, 0, 15, 0x89, 0, 0})
			p.holdOpen()
		}, "204", ""},
		{"404", func(p *h2Peer) {
			p.write(h2wire.FrameHeaders, h2wire.FlagEndStream|h2wire.FlagEndHeaders, 1, []byte{0x8d})
			p.holdOpen()
		}, "404", ""},
		{"goaway", func(p *h2Peer) {
			p.write(h2wire.FrameGoAway, 0, 0, []byte{0, 0, 0, 0, 0, 0, 0, 0})
			p.holdOpen()
		}, "", causeGoaway},
		{"rst_stream", func(p *h2Peer) {
			p.write(h2wire.FrameRSTStream, 0, 1, []byte{0, 0, 0, 8}) // CANCEL
			p.holdOpen()
		}, "", causeRSTStream},
		{"data before headers", func(p *h2Peer) {
			p.write(h2wire.FrameData, h2wire.FlagEndStream, 1, []byte("ok"))
			p.holdOpen()
		}, "", causeBadResponse},
		{"closed", func(p *h2Peer) {
			// Once the client's last frame is read: a close with unread
			// bytes would be a RST.
			p.readUntil(h2wire.FrameSettings, h2wire.FlagAck)
		}, "", causeEOF},
	} {
		addr := rawH2Server(t, c.serve)
		res := h2Idle(t, "-target", addr, "-conns", "3", "-hold", "50ms")
		if c.status != "" {
			wantHeld(t, res, 3, c.status)
			continue
		}
		if e := counts(t, res, "errors"); e[c.cause] != 3 || len(e) != 1 {
			t.Errorf("%s: errors %v, want %s: 3", c.name, e, c.cause)
		}
	}
	if pinged.Load() != 3 {
		t.Errorf("%d PINGs answered before the response, want 3", pinged.Load())
	}
}

// TestH2PrimingTimeout: a server that never answers the request: every
// attempt is a response timeout, retried as over HTTP/1.1.
func TestH2PrimingTimeout(t *testing.T) {
	addr := rawH2Server(t, func(p *h2Peer) { p.holdOpen() })
	res := h2Idle(t, "-target", addr, "-conns", "2", "-hold", "10ms", "-timeout", "200ms", "-connect-retries", "1")
	if e := counts(t, res, "errors"); e[causeTimeout] != 2 {
		t.Errorf("errors %v, want etimedout: 2", e)
	}
	ramp, _ := res["ramp"].(map[string]any)
	first, _ := ramp["first_attempt"].(map[string]any)
	if ramp["retries"] != 2.0 || first["response_timeouts"] != 2.0 {
		t.Errorf("ramp retries %v, first attempts' response_timeouts %v: want 2 and 2", ramp["retries"], first["response_timeouts"])
	}
}

// TestH2HoldAnswers: during the hold the server sends a SETTINGS, a
// WINDOW_UPDATE and a PING, the PING in two writes 120 ms apart (the frame
// is whole only at a later check): each connection answers the SETTINGS
// and the PING, and stays alive.
func TestH2HoldAnswers(t *testing.T) {
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 50 * time.Millisecond
	var answered atomic.Int64
	addr := rawH2Server(t, func(p *h2Peer) {
		p.respond200()
		// The ACK of the first SETTINGS (it may come before or after the
		// response was read).
		if _, err := p.readUntil(h2wire.FrameSettings, h2wire.FlagAck); err != nil {
			return
		}
		time.Sleep(150 * time.Millisecond)
		p.write(h2wire.FrameSettings, 0, 0, []byte{0, 3, 0, 0, 0, 100}) // MAX_CONCURRENT_STREAMS 100
		p.write(h2wire.FrameWindowUpdate, 0, 0, []byte{0, 0, 0x10, 0})
		ping := h2wire.AppendFrameHeader(nil, 8, h2wire.FramePing, 0, 0)
		ping = append(ping, "pingpong"...)
		p.c.Write(ping[:5])
		time.Sleep(120 * time.Millisecond)
		p.c.Write(ping[5:])
		if _, err := p.readUntil(h2wire.FrameSettings, h2wire.FlagAck); err != nil {
			return
		}
		if ack, err := p.readUntil(h2wire.FramePing, h2wire.FlagAck); err != nil || string(ack) != "pingpong" {
			return
		}
		answered.Add(1)
		p.holdOpen()
	})
	res := h2Idle(t, "-target", addr, "-conns", "5", "-hold", "800ms")
	wantHeld(t, res, 5, "200")
	if answered.Load() != 5 {
		t.Errorf("%d connections answered the hold's SETTINGS and PING, want 5", answered.Load())
	}
}

// TestH2HoldGoaway: a GOAWAY during the hold is a drop, though the server
// keeps the connection open.
func TestH2HoldGoaway(t *testing.T) {
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 50 * time.Millisecond
	addr := rawH2Server(t, func(p *h2Peer) {
		p.respond200()
		time.Sleep(100 * time.Millisecond)
		var goaway [8]byte
		binary.BigEndian.PutUint32(goaway[:4], 1) // last stream 1, NO_ERROR
		p.write(h2wire.FrameGoAway, 0, 0, goaway[:])
		p.holdOpen()
	})
	res := h2Idle(t, "-target", addr, "-conns", "5", "-hold", "600ms")
	if num(t, res, "connections_established") != 5 || num(t, res, "connections_alive_end") != 0 {
		t.Errorf("established %v alive_end %v, want 5 and 0", res["connections_established"], res["connections_alive_end"])
	}
	if d := counts(t, res, "drops"); d[causeGoaway] != 5 || len(d) != 1 {
		t.Errorf("drops %v, want goaway: 5", d)
	}
}

// TestHTTPFlag: -http takes 1.1 or 2, and 2 in idle only; HTTP/1.1 is the
// default, and the result says which was spoken.
func TestHTTPFlag(t *testing.T) {
	checkUsageErrors(t, []string{"idle", "-conns", "10"}, []usageCase{
		{[]string{"-http", "3"}, `-http "3": want 1.1 or 2`},
		{[]string{"-http", "h2"}, `-http "h2": want 1.1 or 2`},
	})
	checkUsageErrors(t, []string{"lowrate", "-conns", "10", "-rps", "5"}, []usageCase{
		{[]string{"-http", "2"}, "-http 2: lowrate speaks HTTP/1.1 only (its open-model engine); use idle"},
	})
	checkUsageErrors(t, []string{"churn", "-rate", "10"}, []usageCase{
		{[]string{"-http", "2"}, "-http 2: churn speaks HTTP/1.1 only"},
	})
	checkUsageErrors(t, []string{"burst", "-conns", "10"}, []usageCase{
		{[]string{"-http", "2"}, "-http 2: burst speaks HTTP/1.1 only"},
	})
	checkUsageErrors(t, []string{"idle", "-conns", "10", "-http", "2"}, []usageCase{
		{[]string{"-path", "/" + strings.Repeat("a", h2wire.MaxPath)}, "with -http 2 at most 8192"},
	})
	for _, args := range [][]string{
		{"lowrate", "-target", "127.0.0.1:1", "-conns", "1", "-rps", "1", "-http", "1.1"},
		{"churn", "-target", "127.0.0.1:1", "-rate", "1", "-http", "1.1"},
		{"burst", "-target", "127.0.0.1:1", "-conns", "1", "-http", "1.1"},
	} {
		if _, err := parseArgs(args); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
	res, stderr, err := runCmd(t, context.Background(), "idle", "-target", hostPort(okServer(t, nil)), "-conns", "2", "-hold", "10ms")
	if err != nil || res["http"] != "1.1" {
		t.Errorf(`default: http %v (%v), want "1.1"`+"\n%s", res["http"], err, stderr)
	}
}

// TestH2ReferenceServer: the lab's reference server (internal/server)
// with -http 2 in cleartext (h2c with prior knowledge): every connection
// is primed over HTTP/2 and held.
func TestH2ReferenceServer(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := server.Run(ctx, []string{"-addr", "127.0.0.1", "-port", "0", "-sizes", "1k", "-http", "2"}, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	defer func() {
		stop()
		<-done
	}()
	lines := bufio.NewReader(pr)
	var listening struct{ Addr string }
	line, err := lines.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &listening) != nil || listening.Addr == "" {
		t.Fatalf("no listening line: %q (%v)", line, err)
	}
	go io.Copy(io.Discard, lines) // the shutdown line
	res := h2Idle(t, "-target", listening.Addr, "-conns", "20", "-hold", "200ms")
	wantHeld(t, res, 20, "200")
}
