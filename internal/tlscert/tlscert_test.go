package tlscert

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// handshake runs a real crypto/tls handshake over a pipe: a server with the
// bundle's certificate, a client trusting only its CA, verifying serverName.
func handshake(t *testing.T, b *Bundle, serverName string) (tls.ConnectionState, error) {
	t.Helper()
	pair, err := tls.X509KeyPair(b.CertPEM, b.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b.CAPEM) {
		t.Fatal("no CA")
	}
	// Loopback TCP, not net.Pipe: a pipe has no buffer, so a client that
	// refuses the certificate blocks on its alert until the deadline.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		sc, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		sc.SetDeadline(time.Now().Add(10 * time.Second))
		done <- tls.Server(sc, &tls.Config{Certificates: []tls.Certificate{pair}}).Handshake()
		sc.Close()
	}()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cl := tls.Client(cc, &tls.Config{RootCAs: pool, ServerName: serverName})
	cc.SetDeadline(time.Now().Add(10 * time.Second))
	err = cl.Handshake()
	st := cl.ConnectionState()
	cc.Close()
	<-done
	return st, err
}

func TestMakeVerifiesForTheIP(t *testing.T) {
	for _, kt := range KeyTypes {
		t.Run(kt, func(t *testing.T) {
			ip := netip.MustParseAddr("198.18.0.1")
			b, err := Make(ip, kt, time.Now(), DefaultValidity)
			if err != nil {
				t.Fatal(err)
			}
			st, err := handshake(t, b, "198.18.0.1")
			if err != nil {
				t.Fatalf("handshake for the certificate's IP: %v", err)
			}
			if got := StateOf(st); got.KeyType != kt || got.Version == "" {
				t.Errorf("state %+v, want key type %s", got, kt)
			}
			// Another IP, or a host name, must not verify.
			for _, other := range []string{"198.18.0.2", "localhost"} {
				if _, err := handshake(t, b, other); err == nil {
					t.Errorf("certificate for 198.18.0.1 verified for %s", other)
				}
			}
		})
	}
}

func TestMakeIPv6(t *testing.T) {
	b, err := Make(netip.MustParseAddr("fd00::1"), ECDSAP256, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(t, b, "fd00::1"); err != nil {
		t.Fatal(err)
	}
}

func TestRefusesBadKeyTypes(t *testing.T) {
	for _, kt := range []string{"", "dsa", "rsa-1024", "ECDSA-P256", "ed25519"} {
		_, err := Make(netip.MustParseAddr("198.18.0.1"), kt, time.Now(), time.Hour)
		var bad *BadInputError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "ecdsa-p256, rsa-2048") {
			t.Errorf("key type %q: got %v, want a BadInputError naming the supported types", kt, err)
		}
	}
}

func TestWriteDirRefusesRepo(t *testing.T) {
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, ".git"), []byte("gitdir: elsewhere\n"), 0o644); err != nil {
		t.Fatal(err) // a worktree's .git is a file
	}
	sub := filepath.Join(repo, "results", "x")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := Make(netip.MustParseAddr("127.0.0.1"), ECDSAP256, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// Directly, below, through a symlink from outside, and not yet existing.
	outside := t.TempDir()
	link := filepath.Join(outside, "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{repo, sub, link, filepath.Join(link, "new")} {
		err := WriteDir(d, b)
		var bad *BadInputError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "inside the git checkout") {
			t.Errorf("WriteDir(%s): %v, want a refusal", d, err)
		}
		if _, err := os.Stat(filepath.Join(d, KeyFile)); err == nil {
			t.Errorf("a key was written in %s", d)
		}
	}
	// Outside: written, the key 0600, the CA's key nowhere.
	dir := t.TempDir()
	if err := WriteDir(dir, b); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key.pem: %v %v, want mode 0600", st, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("files %v, want ca.pem cert.pem key.pem only", ents)
	}
	for _, f := range []string{CAFile, CertFile} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); strings.Contains(string(b), "PRIVATE") {
			t.Errorf("%s holds a private key", f)
		}
	}
	if _, err := Check(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile), filepath.Join(dir, CAFile), netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Fatal(err)
	}
}

func TestCheckRefuses(t *testing.T) {
	ip := netip.MustParseAddr("198.18.0.1")
	dir := t.TempDir()
	b, _ := Make(ip, ECDSAP256, time.Now(), time.Hour)
	other, _ := Make(ip, ECDSAP256, time.Now(), time.Hour)
	if err := WriteDir(dir, b); err != nil {
		t.Fatal(err)
	}
	p := func(n string) string { return filepath.Join(dir, n) }
	write := func(n string, data []byte) string {
		if err := os.WriteFile(p(n), data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p(n)
	}
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(edKey)
	cases := []struct {
		name, cert, key, ca, want string
		ip                        netip.Addr
	}{
		{"missing cert", p("nope.pem"), p(KeyFile), p(CAFile), "cannot be read", ip},
		{"garbage key", p(CertFile), write("garbage.pem", []byte("hello\n")), p(CAFile), "no PEM private key", ip},
		{"key is a directory", p(CertFile), dir, p(CAFile), "cannot be read", ip},
		{"unsupported key type", p(CertFile), write("ed.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), p(CAFile), "ed25519: not a supported key type", ip},
		{"another key", p(CertFile), write("other.pem", other.KeyPEM), p(CAFile), "do not make a pair", ip},
		{"another CA", p(CertFile), p(KeyFile), write("otherca.pem", other.CAPEM), "does not verify", ip},
		{"another IP", p(CertFile), p(KeyFile), p(CAFile), "does not verify", netip.MustParseAddr("198.18.0.9")},
	}
	for _, c := range cases {
		_, err := Check(c.cert, c.key, c.ca, c.ip)
		var bad *BadInputError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a BadInputError with %q", c.name, err, c.want)
		}
	}
}
