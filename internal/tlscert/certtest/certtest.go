// Package certtest gives tests a lab certificate and a TLS server on
// 127.0.0.1 (made by internal/tlscert), for the packages whose tests dial
// TLS: one copy, not one per package.
package certtest

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"csbench/internal/localtest"
	"csbench/internal/tlscert"
)

// Cert makes a lab CA and a certificate of key type kt for 127.0.0.1: the
// server's key pair and the CA file a client trusts.
func Cert(tb testing.TB, kt string) (tls.Certificate, string) {
	tb.Helper()
	dir := tb.TempDir()
	b, err := tlscert.Make(netip.MustParseAddr("127.0.0.1"), kt, time.Now(), time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	if err := tlscert.WriteDir(dir, b); err != nil {
		tb.Fatal(err)
	}
	pair, err := tls.X509KeyPair(b.CertPEM, b.KeyPEM)
	if err != nil {
		tb.Fatal(err)
	}
	return pair, filepath.Join(dir, tlscert.CAFile)
}

// HandshakeServer is a TLS server on 127.0.0.1 that completes each
// handshake, writes one byte (session tickets go out with the first write
// in TLS 1.3), then closes: its address and CA file for the client.
func HandshakeServer(tb testing.TB, kt string, tickets bool) (addr, caFile string) {
	tb.Helper()
	pair, caFile := Cert(tb, kt)
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, SessionTicketsDisabled: !tickets}
	return localtest.Serve(tb, func(c net.Conn) {
		sc := tls.Server(c, cfg)
		if sc.Handshake() == nil {
			sc.Write([]byte("x"))
		}
		sc.Close()
	}).String(), caFile
}

// HTTPServer is a net/http server over TLS on 127.0.0.1 with a lab
// certificate of key type kt, answering "ok\n" to every request: its
// address and the CA file for the client.
func HTTPServer(tb testing.TB, kt string) (addr, caFile string) {
	tb.Helper()
	pair, caFile := Cert(tb, kt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}}}
	go srv.ServeTLS(ln, "", "")
	tb.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), caFile
}
