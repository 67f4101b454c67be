package server

import (
	"crypto/tls"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/tlscert"
)

// rawGetter starts a server with args (and the TLS certificate in tlsDir
// when not empty) and returns a function that GETs /payload/1k once on one
// keep-alive connection, HTTP/1.1 or HTTP/2 as proto says, with a client
// that allocates (next to) nothing per request, so that a count of the
// whole process's allocations is the server's.
func rawGetter(tb testing.TB, proto, tlsDir string, args ...string) func() {
	tb.Helper()
	args = append([]string{"-addr", "127.0.0.1", "-port", "0", "-sizes", "1k"}, args...)
	if proto == "h2" {
		args = append(args, "-http", "2")
	}
	var cfg *tls.Config
	if tlsDir != "" {
		args = append(args, "-tls-cert", filepath.Join(tlsDir, tlscert.CertFile), "-tls-key", filepath.Join(tlsDir, tlscert.KeyFile))
		cfg = clientConfig(tb, tlsDir)
		if proto == "h2" {
			cfg.NextProtos = []string{"h2"}
		}
	}
	r := startRun(tb, args...)
	var c net.Conn
	var err error
	if cfg != nil {
		c, err = tls.Dial("tcp", r.addr, cfg)
	} else {
		c, err = net.Dial("tcp", r.addr)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })

	if proto == "h2" {
		scheme := "http"
		if cfg != nil {
			scheme = "https"
		}
		h, err := newH2Raw(c, "GET", scheme, "/payload/1k")
		if err != nil {
			tb.Fatal(err)
		}
		return func() {
			if status, n, err := h.Do(); err != nil || status != 0x88 || n != 1024 {
				tb.Fatalf("h2 GET: status byte %#x, %d bytes, %v", status, n, err)
			}
		}
	}

	req := []byte("GET /payload/1k HTTP/1.1\r\nHost: x\r\n\r\n")
	// The response's size is fixed: learn it once, then read exactly it.
	c.Write(req)
	buf := make([]byte, 4096)
	n, hdr := 0, -1
	for hdr < 0 || n < hdr+1024 {
		m, err := c.Read(buf[n:])
		if err != nil {
			tb.Fatal(err)
		}
		n += m
		if hdr = strings.Index(string(buf[:n]), "\r\n\r\n"); hdr >= 0 {
			hdr += 4
		}
	}
	size := n
	return func() {
		if _, err := c.Write(req); err != nil {
			tb.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkServe is one keep-alive GET of /payload/1k through the whole
// server over loopback, for each protocol, cleartext and TLS: go test
// -run '^$' -bench Serve -benchmem ./internal/server/. Its allocs/op is
// the whole process's per request: net/http's (and crypto/tls's), since
// the handler allocates nothing (BenchmarkHandler) and the raw clients
// next to nothing. The slots cases add the ground-truth mode with 1 ms
// service (-benchtime 200x: each op sleeps).
func BenchmarkServe(b *testing.B) {
	dir := labCert(b, tlscert.ECDSAP256)
	for _, tc := range []struct {
		proto, tlsDir string
		args          []string
	}{
		{"h1", "", nil},
		{"h1", dir, nil},
		{"h2", "", nil},
		{"h2", dir, nil},
		{"h1", "", []string{"-service-time", "1ms", "-slots", "4"}},
		{"h2", "", []string{"-service-time", "1ms", "-slots", "4"}},
	} {
		name := tc.proto + "/clear"
		if tc.tlsDir != "" {
			name = tc.proto + "/tls"
		}
		if tc.args != nil {
			name += "/slots"
		}
		b.Run(name, func(b *testing.B) {
			get := rawGetter(b, tc.proto, tc.tlsDir, tc.args...)
			for i := 0; i < 100; i++ {
				get()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				get()
			}
		})
	}
}

// TestH2AllocsPerRequest states what HTTP/2 costs per request beside
// HTTP/1.1, both measured the same way (the whole process, raw clients):
// the server's own code adds nothing to either, so a rise here is
// net/http's. The bound is loose (net/http's h2 server allocates per
// stream: the request, its header map, the stream and its goroutine's
// work); it catches the handler or the wiring starting to allocate
// per byte or per header.
func TestH2AllocsPerRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	figures := map[string]float64{}
	for _, proto := range []string{"h1", "h2"} {
		get := rawGetter(t, proto, "")
		for i := 0; i < 100; i++ {
			get()
		}
		figures[proto] = testing.AllocsPerRun(2000, get)
	}
	t.Logf("allocations per request (whole process, raw clients): h1 %.1f, h2 %.1f", figures["h1"], figures["h2"])
	if figures["h2"] > 40 {
		t.Errorf("h2: %.1f allocations per request, want at most 40 (net/http's own; h1: %.1f)", figures["h2"], figures["h1"])
	}
}
