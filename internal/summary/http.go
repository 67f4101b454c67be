package summary

import (
	"strings"

	"csbench/internal/rundir"
)

// HTTP is which HTTP versions a run loaded with (its HTTP setting) and,
// with HTTP/2, what the server answered when asked for it before the first
// cell (csb check-paths: h2 by ALPN over TLS, h2c to the prior-knowledge
// preface in cleartext; run.env server.http2).
type HTTP struct {
	Versions string `json:"versions"`        // "2" or "1.1,2"
	HTTP2    string `json:"http2,omitempty"` // h2 or h2c; "" when not recorded
}

// HTTPFor reads a run's HTTP versions; nil for a run over HTTP/1.1 only,
// or from before the HTTP setting existed (both loaded HTTP/1.1 only).
func HTTPFor(r *rundir.Run) *HTTP {
	v := r.Settings["HTTP"]
	if !strings.Contains(","+v+",", ",2,") {
		return nil
	}
	return &HTTP{Versions: v, HTTP2: r.Get("server.http2")}
}
