package nginxconf

import (
	"strings"
	"testing"

	"csbench/internal/golden"
)

// The Phase 3 config of the committed csb-vs-nginx reference run
// (compare/csb-vs-nginx/nginx/03-c10k/…/nginx/nginx.conf): 10k
// connections, SERVER_CPUS=1, root on the server host.
func TestRenderC10k(t *testing.T) {
	in := Input{Dir: "/tmp/csb-run.uxUKXxaffJ", User: "root", Listen: "198.18.0.1:8080", Sizes: []string{"1k"},
		HealthPath: "/healthz", ServerCPUs: "1", MaxConns: 10000, HoldS: 15, FDHard: 20000}
	s := Size(in)
	if s.Workers != "1" || s.WorkerConnections != 11024 || s.Nofile != 20000 || s.KeepaliveTimeoutS != 75 || s.Warning == "" {
		t.Fatalf("sizing %+v", s)
	}
	golden.Check(t, "c10k.conf", Render(in, s))
}

func TestRenderTLSAndPaths(t *testing.T) {
	in := Input{Dir: "/w", Listen: "[fd00::1]:8443", Sizes: []string{"1k", "10k"}, Paths: map[string]string{"10k": "/s/10k.bin"},
		HealthPath: "/ping", Workers: "2", HoldS: 60, TLSDir: "/w/bin/tls"}
	s := Size(in)
	if s.WorkerConnections != MinWorkerConnections || s.KeepaliveTimeoutS != 120 || s.Nofile != 2*4096+1024 || s.Warning != "" {
		t.Fatalf("sizing %+v", s)
	}
	conf := Render(in, s)
	for _, want := range []string{"listen [fd00::1]:8443 ssl backlog=65535;", "ssl_session_tickets off;", "location = /ping {",
		"location = /s/10k.bin { alias /w/bin/www/10k; }", "location = /payload/1k { alias /w/bin/www/1k; }", "worker_processes 2;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	// HTTP/2: h2 beside HTTP/1.1 over TLS, h2c in cleartext.
	in.HTTP2 = true
	if conf := Render(in, s); !strings.Contains(conf, "listen [fd00::1]:8443 ssl http2 backlog=65535;") {
		t.Errorf("http2 over TLS:\n%s", conf)
	}
	in.TLSDir = ""
	s = Size(in)
	if conf := Render(in, s); !strings.Contains(conf, "listen [fd00::1]:8443 http2 backlog=65535;") || !strings.Contains(conf, "sendfile off;") {
		t.Errorf("h2c:\n%s", conf)
	}
	// NGINX_TCP_NOPUSH: on by default (as Debian ships it), off when asked,
	// and recorded in the settings line either way.
	if conf := Render(in, s); !strings.Contains(conf, "tcp_nopush on;") || !strings.Contains(conf, " tcp_nopush=on ") {
		t.Errorf("default tcp_nopush:\n%s", conf)
	}
	in.TCPNopush = "off"
	s = Size(in)
	if conf := Render(in, s); !strings.Contains(conf, "tcp_nopush off;") || !strings.Contains(conf, " tcp_nopush=off ") {
		t.Errorf("tcp_nopush off:\n%s", conf)
	}
}

// C1M: the plan's 56 server processes (fd limit 20000) are 56 workers, each
// listening on its own socket, with the whole fd budget; keep-alive outlasts
// the ramp bound and the hold; NGINX_WORKERS below the plan is warned about.
func TestSizeC1M(t *testing.T) {
	in := Input{Dir: "/w", Listen: "198.18.0.1:8080", Sizes: []string{"1k"}, MaxConns: 1_000_000, HoldS: 2030 + 60 + 30, FDHard: 20000, Procs: 56}
	s := Size(in)
	if s.Workers != "56" || !s.ReusePort || s.WorkerConnections != 20000-FDMargin || s.Nofile != 20000 || s.KeepaliveTimeoutS != 2180 || s.Warning != "" {
		t.Fatalf("sizing %+v", s)
	}
	conf := Render(in, s)
	for _, want := range []string{"worker_processes 56;", "worker_rlimit_nofile 20000;", "worker_connections 19936;", "listen 198.18.0.1:8080 reuseport backlog=65535;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	in.Workers = "8"
	if s = Size(in); s.Workers != "8" || !strings.Contains(s.Warning, "NGINX_WORKERS=8 is below the 56 server processes") {
		t.Errorf("NGINX_WORKERS below the plan: %+v", s)
	}
}
