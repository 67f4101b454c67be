package server

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"csbench/internal/tlscert"
)

// labCert writes a lab certificate for 127.0.0.1 into a temporary directory.
func labCert(t testing.TB, kt string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	b, err := tlscert.Make(netip.MustParseAddr("127.0.0.1"), kt, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlscert.WriteDir(dir, b); err != nil {
		t.Fatal(err)
	}
	return dir
}

func clientConfig(t testing.TB, dir string) *tls.Config {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(dir, tlscert.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}, ClientSessionCache: tls.NewLRUClientSessionCache(4)}
}

func TestTLSFlags(t *testing.T) {
	dir := labCert(t, tlscert.ECDSAP256)
	cert, key := filepath.Join(dir, tlscert.CertFile), filepath.Join(dir, tlscert.KeyFile)
	if err := os.WriteFile(filepath.Join(dir, "garbage.pem"), []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-tls-cert", cert}, "-tls-cert without -tls-key"},
		{[]string{"-tls-key", key}, "-tls-key without -tls-cert"},
		{[]string{"-tls-tickets=false"}, "HTTPS only"},
		{[]string{"-tls-cert", filepath.Join(dir, "nope.pem"), "-tls-key", key}, "cannot be read"},
		{[]string{"-tls-cert", cert, "-tls-key", dir}, "cannot be read"},
		{[]string{"-tls-cert", cert, "-tls-key", filepath.Join(dir, "garbage.pem")}, "-tls-key"},
	}
	for _, c := range cases {
		_, err := ParseArgs(append([]string{"-addr", "127.0.0.1"}, c.args...))
		if err == nil || ExitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v (exit %d), want exit 2 with %q", c.args, err, ExitCode(err), c.want)
		}
	}
}

// TestRunServesTLS: HTTPS with the lab certificate, the listening line's tls
// object, resumption with tickets and none without.
func TestRunServesTLS(t *testing.T) {
	dir := labCert(t, tlscert.ECDSAP256)
	for _, tickets := range []bool{true, false} {
		args := []string{"-addr", "127.0.0.1", "-port", "0", "-sizes", "1k",
			"-tls-cert", filepath.Join(dir, tlscert.CertFile), "-tls-key", filepath.Join(dir, tlscert.KeyFile)}
		if !tickets {
			args = append(args, "-tls-tickets=false")
		}
		r := startRun(t, args...)
		info, _ := r.listening["tls"].(map[string]any)
		if info["key_type"] != "ecdsa-p256" || info["session_tickets"] != tickets || info["max_version"] != "TLS 1.3" {
			t.Errorf("listening tls %v", info)
		}
		cfg := clientConfig(t, dir)
		var resumed []bool
		for i := 0; i < 2; i++ {
			c, err := tls.Dial("tcp", r.addr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(c, "GET /payload/1k HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			b, _ := io.ReadAll(c)
			if !strings.HasPrefix(string(b), "HTTP/1.1 200 ") || !strings.Contains(string(b), "Content-Length: 1024") {
				t.Fatalf("response %.80q", b)
			}
			if c.ConnectionState().NegotiatedProtocol != "http/1.1" {
				t.Errorf("ALPN %q", c.ConnectionState().NegotiatedProtocol)
			}
			resumed = append(resumed, c.ConnectionState().DidResume)
			c.Close()
		}
		if resumed[0] || resumed[1] != tickets {
			t.Errorf("tickets=%v: resumed %v", tickets, resumed)
		}
		// A cleartext request on the TLS port gets no payload.
		c, err := net.Dial("tcp", r.addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET /payload/1k HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		c.Close()
		if strings.Contains(string(b), "200 OK") {
			t.Errorf("cleartext got a 200 on the TLS port")
		}
		r.shutdown(t, errShutdownTest)
	}
}

type shutdownTestErr struct{}

func (shutdownTestErr) Error() string { return "test done" }

var errShutdownTest = shutdownTestErr{}

// allocsPerRequest: the allocations of the whole process (server and this
// raw client) per keep-alive GET of 1k after the connection is set up.
func allocsPerRequest(t *testing.T, tlsDir string) float64 {
	args := []string{"-addr", "127.0.0.1", "-port", "0", "-sizes", "1k"}
	if tlsDir != "" {
		args = append(args, "-tls-cert", filepath.Join(tlsDir, tlscert.CertFile), "-tls-key", filepath.Join(tlsDir, tlscert.KeyFile))
	}
	r := startRun(t, args...)
	var c net.Conn
	var err error
	if tlsDir != "" {
		c, err = tls.Dial("tcp", r.addr, clientConfig(t, tlsDir))
	} else {
		c, err = net.Dial("tcp", r.addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET /payload/1k HTTP/1.1\r\nHost: x\r\n\r\n")
	// The response's size is fixed: learn it once, then read exactly it.
	c.Write(req)
	buf := make([]byte, 4096)
	n, hdr := 0, -1
	for hdr < 0 || n < hdr+1024 {
		m, err := c.Read(buf[n:])
		if err != nil {
			t.Fatal(err)
		}
		n += m
		hdr = strings.Index(string(buf[:n]), "\r\n\r\n")
		if hdr >= 0 {
			hdr += 4
		}
	}
	size := n
	one := func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		one()
	}
	return testing.AllocsPerRun(2000, one)
}

// TestTLSAllocsPerRequest measures what TLS adds per request after the
// handshake: net/http itself allocates per request (its Request, the
// header map, the context: 16 per request with this raw client, both ends
// in this process), so the figure is the difference between HTTPS and HTTP
// on one keep-alive connection. Measured (go1.26, -memprofilerate 1): TLS
// adds 3, all inside crypto/tls: (*Conn).readFromUntil boxes an
// atLeastReader and bytes.Buffer.ReadFrom grows per record read (the
// client's read, the server's request read and net/http's background
// read); the server's own code adds none. More than 3 fails.
func TestTLSAllocsPerRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	plain := allocsPerRequest(t, "")
	withTLS := allocsPerRequest(t, labCert(t, tlscert.ECDSAP256))
	t.Logf("allocations per request (server + client, whole process): http %.1f, https %.1f, TLS adds %.1f", plain, withTLS, withTLS-plain)
	if withTLS-plain > 3 {
		t.Errorf("TLS adds %.1f allocations per request after the handshake (http %.1f, https %.1f), want at most crypto/tls's 3", withTLS-plain, plain, withTLS)
	}
}
