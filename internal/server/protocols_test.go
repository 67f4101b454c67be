package server

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"csbench/internal/tlscert"
)

func TestParseHTTPVersions(t *testing.T) {
	for in, want := range map[string]HTTPVersions{
		"1.1":    {HTTP1: true},
		"2":      {HTTP2: true},
		"1.1,2":  {HTTP1: true, HTTP2: true},
		"2, 1.1": {HTTP1: true, HTTP2: true},
		" 1.1 ":  {HTTP1: true},
	} {
		got, err := ParseHTTPVersions(in)
		if err != nil || got != want {
			t.Errorf("ParseHTTPVersions(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1", "1.0", "h2", "http/1.1", "2,2", "1.1,", "3"} {
		if _, err := ParseHTTPVersions(in); err == nil {
			t.Errorf("ParseHTTPVersions(%q) accepted", in)
		}
	}
}

// h2Client is net/http's client speaking only HTTP/2: h2c with prior
// knowledge in cleartext, h2 (ALPN) over TLS with tlsConf.
func h2Client(tlsConf *tls.Config) *http.Client {
	var p http.Protocols
	tr := &http.Transport{TLSClientConfig: tlsConf}
	if tlsConf == nil {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
	}
	tr.Protocols = &p
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// h1Client is net/http's client speaking only HTTP/1.1.
func h1Client(tlsConf *tls.Config) *http.Client {
	var p http.Protocols
	p.SetHTTP1(true)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf, Protocols: &p}, Timeout: 10 * time.Second}
}

// fetchAll GETs /payload/1k and /healthz with client and checks each
// response's protocol, framing and body.
func fetchAll(t *testing.T, client *http.Client, base, wantProto string) {
	t.Helper()
	for _, tc := range []struct {
		path string
		body []byte
		ct   string
	}{
		{"/payload/1k", wantBody(1024), payloadContentType},
		{"/healthz", []byte("ok\n"), textContentType},
	} {
		res, err := client.Get(base + tc.path)
		if err != nil {
			t.Errorf("GET %s%s: %v", base, tc.path, err)
			continue
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Errorf("GET %s: reading the body: %v", tc.path, err)
		}
		if res.Proto != wantProto || res.StatusCode != 200 {
			t.Errorf("GET %s: %s %d, want %s 200", tc.path, res.Proto, res.StatusCode, wantProto)
		}
		if !bytes.Equal(body, tc.body) || res.ContentLength != int64(len(tc.body)) || res.Header.Get("Content-Type") != tc.ct {
			t.Errorf("GET %s (%s): %d bytes, Content-Length %d, Content-Type %q; want the %d-byte body, %q",
				tc.path, res.Proto, len(body), res.ContentLength, res.Header.Get("Content-Type"), len(tc.body), tc.ct)
		}
	}
	client.CloseIdleConnections()
}

// TestRunServesH2C: -http 1.1,2 in cleartext serves h2c with prior
// knowledge and HTTP/1.1 on one port; -http 2 serves h2c only.
func TestRunServesH2C(t *testing.T) {
	r := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-sizes", "1k", "-http", "1.1,2")
	if got := r.listening["http_versions"]; !reflect.DeepEqual(got, []any{"1.1", "2"}) {
		t.Errorf("http_versions = %v", got)
	}
	if got := r.listening["h2_max_concurrent_streams"]; got != float64(NetHTTPMaxConcurrentStreams) {
		t.Errorf("h2_max_concurrent_streams = %v, want net/http's %d", got, NetHTTPMaxConcurrentStreams)
	}
	fetchAll(t, h2Client(nil), "http://"+r.addr, "HTTP/2.0")
	fetchAll(t, h1Client(nil), "http://"+r.addr, "HTTP/1.1")

	only2 := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-sizes", "1k", "-http", "2")
	fetchAll(t, h2Client(nil), "http://"+only2.addr, "HTTP/2.0")
	if res, err := h1Client(nil).Get("http://" + only2.addr + "/healthz"); err == nil {
		res.Body.Close()
		t.Errorf("-http 2: an HTTP/1.1 request got %s %d, want the connection closed", res.Proto, res.StatusCode)
	}
	for _, r := range []*running{r, only2} {
		if s := r.stderr.String(); s != "" {
			t.Errorf("stderr: %q", s)
		}
	}
}

// TestRunServesH2TLS: over TLS, -http 1.1,2 offers ALPN h2 then http/1.1;
// -http 2 offers h2 alone, so a client that wants only http/1.1 gets no
// answer.
func TestRunServesH2TLS(t *testing.T) {
	dir := labCert(t, tlscert.ECDSAP256)
	tlsArgs := []string{"-addr", "127.0.0.1", "-port", "0", "-sizes", "1k",
		"-tls-cert", filepath.Join(dir, tlscert.CertFile), "-tls-key", filepath.Join(dir, tlscert.KeyFile)}

	both := startRun(t, append(tlsArgs, "-http", "1.1,2")...)
	if info, _ := both.listening["tls"].(map[string]any); info["alpn"] != "h2,http/1.1" {
		t.Errorf("listening tls = %v, want alpn h2,http/1.1", info)
	}
	fetchAll(t, h2Client(clientConfig(t, dir)), "https://"+both.addr, "HTTP/2.0")
	fetchAll(t, h1Client(clientConfig(t, dir)), "https://"+both.addr, "HTTP/1.1")
	for protos, want := range map[string]string{"h2,http/1.1": "h2", "http/1.1,h2": "h2", "http/1.1": "http/1.1", "h2": "h2"} {
		if got := negotiate(t, both.addr, dir, strings.Split(protos, ",")); got != want {
			t.Errorf("-http 1.1,2: client ALPN %s negotiated %q, want %q", protos, got, want)
		}
	}

	only2 := startRun(t, append(tlsArgs, "-http", "2")...)
	if info, _ := only2.listening["tls"].(map[string]any); info["alpn"] != "h2" {
		t.Errorf("listening tls = %v, want alpn h2", info)
	}
	fetchAll(t, h2Client(clientConfig(t, dir)), "https://"+only2.addr, "HTTP/2.0")
	// crypto/tls lets a client that offers only http/1.1 through with no
	// protocol (its http/1.1 fallback); net/http then closes the
	// connection, HTTP/1.1 being off.
	if got := negotiate(t, only2.addr, dir, []string{"http/1.1"}); got != "" {
		t.Errorf("-http 2: client ALPN http/1.1 negotiated %q, want none", got)
	}
	if res, err := h1Client(clientConfig(t, dir)).Get("https://" + only2.addr + "/healthz"); err == nil {
		res.Body.Close()
		t.Errorf("-http 2: an HTTP/1.1 request over TLS got %s %d, want the connection closed", res.Proto, res.StatusCode)
	}
}

// negotiate returns the ALPN protocol a TLS handshake with protos chose,
// or "handshake failed".
func negotiate(t *testing.T, addr, dir string, protos []string) string {
	t.Helper()
	cfg := clientConfig(t, dir)
	cfg.NextProtos = protos
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return "handshake failed"
	}
	defer c.Close()
	return c.ConnectionState().NegotiatedProtocol
}

// TestDefaultOffersHTTP1Only: without -http nothing changed: an HTTP/2
// client with prior knowledge fails in cleartext, and over TLS ALPN
// offers only http/1.1 (a client offering h2 and http/1.1 gets http/1.1,
// one offering only h2 fails the handshake).
func TestDefaultOffersHTTP1Only(t *testing.T) {
	r := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-sizes", "1k")
	if res, err := h2Client(nil).Get("http://" + r.addr + "/payload/1k"); err == nil {
		res.Body.Close()
		t.Errorf("default: an h2c prior-knowledge request got %s %d, want an error", res.Proto, res.StatusCode)
	}
	// The raw preface too: no SETTINGS frame comes back.
	c, err := net.DialTimeout("tcp", r.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := newH2Raw(c, "GET", "http", "/payload/1k"); err == nil {
		t.Error("default: the server answered the HTTP/2 preface with SETTINGS")
	}
	c.Close()

	dir := labCert(t, tlscert.ECDSAP256)
	tr := startRun(t, "-addr", "127.0.0.1", "-port", "0", "-sizes", "1k",
		"-tls-cert", filepath.Join(dir, tlscert.CertFile), "-tls-key", filepath.Join(dir, tlscert.KeyFile))
	if info, _ := tr.listening["tls"].(map[string]any); info["alpn"] != "http/1.1" {
		t.Errorf("default listening tls = %v, want alpn http/1.1", info)
	}
	if tr.listening["h2_max_concurrent_streams"] != nil || !reflect.DeepEqual(tr.listening["http_versions"], []any{"1.1"}) {
		t.Errorf("default: http_versions %v, h2_max_concurrent_streams %v", tr.listening["http_versions"], tr.listening["h2_max_concurrent_streams"])
	}
	if got := negotiate(t, tr.addr, dir, []string{"h2", "http/1.1"}); got != "http/1.1" {
		t.Errorf("default: client ALPN h2,http/1.1 negotiated %q, want http/1.1", got)
	}
	if got := negotiate(t, tr.addr, dir, []string{"h2"}); got != "handshake failed" {
		t.Errorf("default: client ALPN h2 negotiated %q, want a failed handshake", got)
	}
	res, err := h2Client(clientConfig(t, dir)).Get("https://" + tr.addr + "/payload/1k")
	if err == nil {
		res.Body.Close()
		t.Errorf("default: an h2-only TLS client got %s %d, want an error", res.Proto, res.StatusCode)
	}
}

// TestMaxConcurrentStreams reads the server's SETTINGS frame off the wire:
// the flag's value, or net/http's default without it.
func TestMaxConcurrentStreams(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want uint32
	}{
		{[]string{"-http", "1.1,2"}, NetHTTPMaxConcurrentStreams},
		{[]string{"-http", "2", "-max-concurrent-streams", "7"}, 7},
	} {
		r := startRun(t, append([]string{"-addr", "127.0.0.1", "-port", "0", "-sizes", "1k"}, tc.args...)...)
		if got := r.listening["h2_max_concurrent_streams"]; got != float64(tc.want) {
			t.Errorf("%q: listening h2_max_concurrent_streams = %v, want %d", tc.args, got, tc.want)
		}
		c, err := net.DialTimeout("tcp", r.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		h, err := newH2Raw(c, "GET", "http", "/payload/1k")
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got, ok := h.Settings[h2SettingMaxConcurrentStreams]; !ok || got != tc.want {
			t.Errorf("%q: SETTINGS_MAX_CONCURRENT_STREAMS = %d (sent %v), want %d", tc.args, got, ok, tc.want)
		}
		if status, n, err := h.Do(); err != nil || status != 0x88 || n != 1024 {
			t.Errorf("%q: raw GET: status byte %#x, %d bytes, %v; want 0x88 (200), 1024", tc.args, status, n, err)
		}
		c.Close()
		if err, _ := r.shutdown(t, errors.New("done")); err != nil {
			t.Error(err)
		}
	}
}
