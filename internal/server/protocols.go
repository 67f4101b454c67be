package server

import (
	"fmt"
	"net/http"
	"strings"
)

// DefaultHTTP is the default value of -http: HTTP/1.1 only, what the
// server offered before it could speak HTTP/2, so every run made without
// the flag is unchanged.
const DefaultHTTP = "1.1"

// MaxConcurrentStreamsLimit bounds -max-concurrent-streams. HTTP/2 allows
// up to 2^31-1; more than a million streams on one connection is no
// setting a run means.
const MaxConcurrentStreamsLimit = 1 << 20

// NetHTTPMaxConcurrentStreams is what net/http's HTTP/2 server announces in
// SETTINGS_MAX_CONCURRENT_STREAMS when HTTP2Config.MaxConcurrentStreams is
// 0 (http2defaultMaxStreams in net/http's h2_bundle.go). A test reads the
// server's SETTINGS frame and fails if a Go release changes it.
const NetHTTPMaxConcurrentStreams = 250

// HTTPVersions is which HTTP versions the server offers: HTTP/1.1 (and
// 1.0), and HTTP/2, which is h2 over TLS (ALPN) and h2c with prior
// knowledge in cleartext (net/http does not implement the HTTP/1.1
// Upgrade to h2c).
type HTTPVersions struct {
	HTTP1, HTTP2 bool
}

// ParseHTTPVersions reads -http: "1.1", "2" or "1.1,2" (in either order).
func ParseHTTPVersions(s string) (HTTPVersions, error) {
	var v HTTPVersions
	for _, item := range strings.Split(s, ",") {
		var seen *bool
		switch strings.TrimSpace(item) {
		case "1.1":
			seen = &v.HTTP1
		case "2":
			seen = &v.HTTP2
		default:
			return HTTPVersions{}, fmt.Errorf("-http %q: %q is not an HTTP version (want 1.1, 2 or 1.1,2)", s, strings.TrimSpace(item))
		}
		if *seen {
			return HTTPVersions{}, fmt.Errorf("-http %q names %s twice", s, strings.TrimSpace(item))
		}
		*seen = true
	}
	return v, nil
}

// List is the versions in the listening line's order: ["1.1","2"].
func (v HTTPVersions) List() []string {
	var out []string
	if v.HTTP1 {
		out = append(out, "1.1")
	}
	if v.HTTP2 {
		out = append(out, "2")
	}
	return out
}

// protocols is v as net/http's Server.Protocols: HTTP/2 is both h2 (on a
// TLS connection whose ALPN chose it) and unencrypted HTTP/2 (a cleartext
// connection that starts with the HTTP/2 preface). Which one a connection
// can use is decided by the listener: cleartext never negotiates ALPN,
// and the TLS config's NextProtos (alpn) offer h2 only when v has it.
func (v HTTPVersions) protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(v.HTTP1)
	p.SetHTTP2(v.HTTP2)
	p.SetUnencryptedHTTP2(v.HTTP2)
	return p
}

// alpn is the ALPN list the TLS listener offers, in the server's order of
// preference: h2 first when offered.
func (v HTTPVersions) alpn() []string {
	var out []string
	if v.HTTP2 {
		out = append(out, "h2")
	}
	if v.HTTP1 {
		out = append(out, "http/1.1")
	}
	return out
}
