package cli

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// csb check-paths against servers of known answers: the right sizes, a
// wrong size, a size that varies, a 404, a chunked body, Connection: close.
func TestCheckPaths(t *testing.T) {
	calls := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok\n") })
	mux.HandleFunc("/payload/1k", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1024")
		w.Write(bytes.Repeat([]byte("x"), 1024))
	})
	mux.HandleFunc("/varies", func(w http.ResponseWriter, r *http.Request) {
		calls++
		n := 1024 + calls%2
		w.Header().Set("Content-Length", fmt.Sprint(n))
		w.Write(bytes.Repeat([]byte("x"), n))
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("x"))
		w.(http.Flusher).Flush()
		w.Write(bytes.Repeat([]byte("x"), 1023))
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Length", "1024")
		w.Write(bytes.Repeat([]byte("x"), 1024))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	run := func(paths ...string) (int, string) {
		dir := t.TempDir()
		args := []string{"check-paths", "-base", srv.URL, "-dir", dir}
		for _, p := range paths {
			args = append(args, "-path", p)
		}
		var out, errb bytes.Buffer
		rc := Main(args, &out, &errb)
		return rc, out.String() + errb.String()
	}
	if rc, out := run("1k=/payload/1k:1024"); rc != 0 || out != "connection_close=0\n" {
		t.Errorf("good: rc %d: %s", rc, out)
	}
	for _, c := range []struct{ path, want string }{
		{"1k=/payload/1k:2048", "with a 1024-byte body: expected 2048 bytes (1k)"},
		{"1k=/varies:1025", "answered GET /varies with a 1024-byte body: expected 1025 bytes"},
		{"1k=/nothing:1024", "with status 404: expected 200 (the 1k payload"},
		{"1k=/chunked:1024", "chunked"},
	} {
		if rc, out := run(c.path); rc != 2 || !strings.Contains(out, c.want) || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: rc %d: %s", c.path, rc, out)
		}
	}
	if rc, out := run("1k=/close:1024"); rc != 0 || out != "connection_close=1\n" {
		t.Errorf("close: rc %d: %s", rc, out)
	}
	dir := t.TempDir()
	var out bytes.Buffer
	if rc := Main([]string{"check-paths", "-base", srv.URL, "-dir", dir, "-keepalive", "-path", "1k=/close:1024"}, &out, &out); rc != 2 ||
		!strings.Contains(out.String(), "Phase 3 holds keep-alive connections") {
		t.Errorf("-keepalive: rc %d: %s", rc, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "1k-1.headers")); err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 200 OK\r\n") {
		t.Errorf("headers kept: %q, %v", b, err)
	}
}

// -http 2 against servers of known offers: h2c (prior knowledge) and h2
// over TLS are fetched over HTTP/2; an HTTP/1.1-only server is refused,
// in cleartext and over TLS, with what it offered.
func TestCheckPathsHTTP2(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok\n") })
	mux.HandleFunc("/payload/1k", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1024")
		w.Write(bytes.Repeat([]byte("x"), 1024))
	})
	both := new(http.Protocols)
	both.SetHTTP1(true)
	both.SetHTTP2(true)
	both.SetUnencryptedHTTP2(true)
	serve := func(tls, h2 bool) *httptest.Server {
		srv := httptest.NewUnstartedServer(mux)
		if h2 {
			srv.Config.Protocols = both
			srv.EnableHTTP2 = true
		}
		if tls {
			srv.StartTLS()
		} else {
			srv.Start()
		}
		t.Cleanup(srv.Close)
		return srv
	}
	run := func(srv *httptest.Server, list string) (int, string, string) {
		dir := t.TempDir()
		args := []string{"check-paths", "-base", srv.URL, "-dir", dir, "-http", list, "-path", "1k=/payload/1k:1024"}
		if srv.TLS != nil {
			ca := filepath.Join(dir, "ca.pem")
			if err := os.WriteFile(ca, pemOf(srv), 0o600); err != nil {
				t.Fatal(err)
			}
			args = append(args, "-ca", ca)
		}
		var out, errb bytes.Buffer
		rc := Main(args, &out, &errb)
		return rc, out.String() + errb.String(), dir
	}
	for _, c := range []struct {
		tls     bool
		list    string
		want    string
		headers string
	}{
		{false, "2", "connection_close=0\nhttp2=h2c\n", "HTTP/2.0 200 OK\r\n"},
		{true, "1.1,2", "connection_close=0\nhttp2=h2\n", "HTTP/2.0 200 OK\r\n"},
	} {
		rc, out, dir := run(serve(c.tls, true), c.list)
		if rc != 0 || out != c.want {
			t.Errorf("tls %v -http %s: rc %d: %s", c.tls, c.list, rc, out)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "1k-h2-1.headers")); err != nil || !strings.HasPrefix(string(b), c.headers) {
			t.Errorf("tls %v: h2 headers kept: %q, %v", c.tls, b, err)
		}
	}
	for _, c := range []struct {
		tls  bool
		want string
	}{
		{false, `HTTP=2 asked, but the server under test offers HTTP/1.1 only: it answered the HTTP/2 preface with "HTTP/1.1 400 Bad Request"`},
		{true, "HTTP=2 asked, but the server under test offers http/1.1 only (ALPN)"},
	} {
		rc, out, _ := run(serve(c.tls, false), "2")
		if rc != 2 || !strings.Contains(out, c.want) || strings.Count(out, "\n") != 1 {
			t.Errorf("HTTP/1.1 only, tls %v: rc %d: %s", c.tls, rc, out)
		}
	}
	if rc, out, _ := run(serve(false, true), "3"); rc != 2 || !strings.Contains(out, `"3" is not an HTTP version`) {
		t.Errorf("-http 3: rc %d: %s", rc, out)
	}
}

// pemOf is the PEM of a TLS test server's certificate.
func pemOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}
