package cli

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"csbench/internal/server"
)

const checkPathsUsage = `Usage: csb check-paths -base URL -dir DIR [-ca FILE] [-health PATH] [-keepalive] [-http 1.1|2|1.1,2] -path SIZE=PATH:BYTES...

Before a run's first cell: fetches every payload path twice (and the
health path once) from the server under test through the benchmark
address (-base, e.g. http://198.18.0.1:8080; with -ca, https trusting only
that CA) and refuses the server (exit 2, one line) when a response is not
200, is chunked, or either body is not the declared size (BYTES). Each response's status line and headers
go to DIR/<size>-<n>.headers (DIR/health-1.headers). Prints
connection_close=1 when the server answered "Connection: close" (every
request of a keep-alive load then opens a connection), else 0; with
-keepalive (Phase 3 holds keep-alive connections) such a server is refused.

-http lists the HTTP versions the run loads with (default 1.1): each path
is fetched over each. For 2 the server is first asked for HTTP/2 as a load
generator asks (https: ALPN offering h2 and http/1.1; http: prior
knowledge, the HTTP/2 preface): a server that does not answer in HTTP/2
is refused (exit 2) with what it offered instead; otherwise it prints
http2=h2 or http2=h2c, and the paths are fetched over HTTP/2 into
DIR/<size>-h2-<n>.headers.
`

func runCheckPaths(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("check-paths", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	base := fs.String("base", "", "")
	dir := fs.String("dir", "", "")
	ca := fs.String("ca", "", "")
	health := fs.String("health", "/healthz", "")
	keepalive := fs.Bool("keepalive", false, "")
	httpList := fs.String("http", server.DefaultHTTP, "")
	var targets []pathTarget
	fs.Func("path", "", func(v string) error {
		size, rest, ok1 := strings.Cut(v, "=")
		i := strings.LastIndex(rest, ":")
		if !ok1 || i < 0 {
			return fmt.Errorf("-path %q: want SIZE=PATH:BYTES", v)
		}
		n, err := strconv.ParseInt(rest[i+1:], 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("-path %q: BYTES is a positive count", v)
		}
		targets = append(targets, pathTarget{size, rest[:i], n})
		return nil
	})
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: check-paths: %v", errUsage, err)
	}
	switch {
	case *help:
		fmt.Fprint(stdout, checkPathsUsage)
		return nil
	case *base == "" || *dir == "" || fs.NArg() > 0:
		return fmt.Errorf("%w: check-paths needs -base and -dir, and no argument", errUsage)
	}
	versions, err := server.ParseHTTPVersions(*httpList)
	if err != nil {
		return fmt.Errorf("%w: check-paths: %v", errUsage, err)
	}
	tr := &http.Transport{Proxy: nil, DisableCompression: true}
	if *ca != "" {
		pem, err := os.ReadFile(*ca)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%w: check-paths: %s holds no PEM certificate", errBadInput, *ca)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	closed := false
	var out strings.Builder
	for _, v := range versions.List() {
		p := new(http.Protocols)
		tag := ""
		if v == "2" {
			offer, ok, err := h2Offer(*base, tr.TLSClientConfig, 10*time.Second)
			if err != nil {
				return fmt.Errorf("%w: the server under test could not be asked for HTTP/2 on %s: %v", errBadInput, hostOf(*base), err)
			}
			if !ok {
				return fmt.Errorf("%w: HTTP=2 asked, but the server under test offers %s; serve HTTP/2 there (h2 over TLS, h2c with prior knowledge in cleartext) or use HTTP=1.1", errBadInput, offer)
			}
			fmt.Fprintf(&out, "http2=%s\n", offer)
			p.SetHTTP2(true)
			p.SetUnencryptedHTTP2(true)
			tag = "h2-"
		} else {
			p.SetHTTP1(true)
		}
		t := tr.Clone()
		t.Protocols = p
		if err := checkPathsOver(t, *base, *dir, tag, *health, targets, &closed); err != nil {
			return err
		}
	}
	if closed && *keepalive {
		return fmt.Errorf("%w: the server under test answers 'Connection: close' (see raw/verify/): Phase 3 holds keep-alive connections, which this server closes after one response; configure it to keep connections alive", errBadInput)
	}
	c := 0
	if closed {
		c = 1
	}
	_, err = fmt.Fprintf(stdout, "connection_close=%d\n%s", c, out.String())
	return err
}

func hostOf(base string) string {
	return strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
}

// pathTarget is one payload to fetch: its size's name, path and body size.
type pathTarget struct {
	size, path string
	bytes      int64
}

// checkPathsOver fetches every target twice and the health path once
// through tr, keeping the headers as DIR/<size>-<tag><n>.headers; closed
// is set when a response said "Connection: close".
func checkPathsOver(tr *http.Transport, base, dir, tag, health string, targets []pathTarget, closed *bool) error {
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	defer tr.CloseIdleConnections()
	fetch := func(name, path string) (int64, error) {
		res, err := client.Get(base + path)
		if err != nil {
			return 0, fmt.Errorf("%w: the server under test did not answer GET %s on %s: %v", errBadInput, path, hostOf(base), err)
		}
		defer res.Body.Close()
		n, err := io.Copy(io.Discard, res.Body)
		if err != nil {
			return 0, fmt.Errorf("%w: the server under test's answer to GET %s broke off after %d bytes: %v", errBadInput, path, n, err)
		}
		if err := writeHeaders(filepath.Join(dir, name+".headers"), res); err != nil {
			return 0, err
		}
		if res.Close || strings.EqualFold(res.Header.Get("Connection"), "close") {
			*closed = true
		}
		switch {
		case res.StatusCode != http.StatusOK:
			return 0, statusError{fmt.Errorf("%w: the server under test answered GET %s with status %d: expected 200", errBadInput, path, res.StatusCode)}
		case len(res.TransferEncoding) > 0 && res.TransferEncoding[0] == "chunked":
			return 0, fmt.Errorf("%w: the server under test answered GET %s chunked (Transfer-Encoding: chunked): expected a Content-Length body", errBadInput, path)
		}
		return n, nil
	}
	for _, t := range targets {
		for i := 1; i <= 2; i++ {
			got, err := fetch(fmt.Sprintf("%s-%s%d", t.size, tag, i), t.path)
			if err != nil {
				if errors.As(err, new(statusError)) {
					err = fmt.Errorf("%w (the %s payload; PAYLOAD_PATHS maps a size to its path)", err, t.size)
				}
				return err
			}
			if got != t.bytes {
				return fmt.Errorf("%w: the server under test answered GET %s with a %d-byte body: expected %d bytes (%s); serve that size there or fix PAYLOAD_PATHS", errBadInput, t.path, got, t.bytes, t.size)
			}
		}
	}
	if _, err := fetch("health-"+tag+"1", health); err != nil {
		if errors.As(err, new(statusError)) {
			err = fmt.Errorf("%w (HEALTH_PATH)", err)
		}
		return err
	}
	return nil
}

// statusError is an answer that was not 200, which the callers name with
// what the path is for.
type statusError struct{ err error }

func (e statusError) Error() string { return e.err.Error() }
func (e statusError) Unwrap() error { return e.err }

// writeHeaders keeps a response's status line and headers as they came
// (Go's reading of them: one header a line, in name order).
func writeHeaders(path string, res *http.Response) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "%s %s\r\n", res.Proto, res.Status)
	if err := res.Header.Write(w); err != nil {
		f.Close()
		return err
	}
	if len(res.TransferEncoding) > 0 {
		fmt.Fprintf(w, "Transfer-Encoding: %s\r\n", strings.Join(res.TransferEncoding, ", "))
	}
	if res.ContentLength >= 0 {
		fmt.Fprintf(w, "Content-Length: %d\r\n", res.ContentLength)
	}
	fmt.Fprint(w, "\r\n")
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
