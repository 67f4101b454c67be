package tlsdial

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"csbench/internal/tlscert"
	"csbench/internal/tlscert/certtest"
)

func dialOnce(tb testing.TB, addr string, cfg *tls.Config) Timing {
	c, _, tm, err := Dial(context.Background(), &net.Dialer{}, addr, cfg, 5*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	var b [1]byte
	c.Read(b[:]) // reads the ticket (TLS 1.3 sends it after the handshake)
	c.Close()
	return tm
}

func TestDialTLS(t *testing.T) {
	addr, ca := certtest.HandshakeServer(t, tlscert.ECDSAP256, true)
	for _, resume := range []bool{false, true} {
		cfg, err := ClientConfig(ca, netip.MustParseAddr("127.0.0.1"), resume)
		if err != nil {
			t.Fatal(err)
		}
		first, second := dialOnce(t, addr, cfg), dialOnce(t, addr, cfg)
		if first.Resumed || second.Resumed != resume {
			t.Errorf("resume=%v: first resumed %v, second %v", resume, first.Resumed, second.Resumed)
		}
		if first.Connect <= 0 || first.Handshake <= 0 {
			t.Errorf("timing %+v: connect and handshake must both be measured", first)
		}
	}
	// Another IP than the certificate's: refused.
	cfg, _ := ClientConfig(ca, netip.MustParseAddr("127.0.0.2"), false)
	if _, _, _, err := Dial(context.Background(), &net.Dialer{}, addr, cfg, 5*time.Second); err == nil {
		t.Error("a certificate for 127.0.0.1 verified as 127.0.0.2")
	}
	if _, err := ClientConfig(filepath.Join(t.TempDir(), "none.pem"), netip.MustParseAddr("127.0.0.1"), false); err == nil {
		t.Error("a missing CA file was accepted")
	}
	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("no pem"), 0o600)
	if _, err := ClientConfig(bad, netip.MustParseAddr("127.0.0.1"), false); err == nil {
		t.Error("a CA file without a certificate was accepted")
	}
}

// BenchmarkHandshake: full and resumed handshakes per key type, client and
// server in this process on loopback (each op: TCP connect, handshake, one
// byte, close). handshakes/s = 1e9 / ns/op on one connection at a time;
// the server's CPU per handshake is part of each op.
//
//	go test -run - -bench Handshake -benchtime 2s ./internal/tlsdial
func BenchmarkHandshake(b *testing.B) {
	for _, kt := range tlscert.KeyTypes {
		for _, resume := range []bool{false, true} {
			name := kt + "/full"
			if resume {
				name = kt + "/resumed"
			}
			b.Run(name, func(b *testing.B) {
				addr, ca := certtest.HandshakeServer(b, kt, true)
				cfg, err := ClientConfig(ca, netip.MustParseAddr("127.0.0.1"), resume)
				if err != nil {
					b.Fatal(err)
				}
				dialOnce(b, addr, cfg) // the ticket for the resumed case
				b.ResetTimer()
				var hs time.Duration
				for i := 0; i < b.N; i++ {
					tm := dialOnce(b, addr, cfg)
					if tm.Resumed != resume {
						b.Fatalf("resumed %v, want %v", tm.Resumed, resume)
					}
					hs += tm.Handshake
				}
				b.ReportMetric(float64(hs.Microseconds())/float64(b.N), "handshake-µs/op")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
			})
		}
	}
}
