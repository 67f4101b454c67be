// Package nginxconf writes the nginx configuration of one run (SERVER=nginx):
// the same bytes at the same paths as the reference server, bound to the
// benchmark address only, a foreground master, and its sizing (workers,
// worker_connections, the fd limit, keep-alive) computed from the phase's
// connection counts and the server host's limits. lib/nginx.sh writes it
// into the run's work directory on the server host.
package nginxconf

import (
	"fmt"
	"strconv"
	"strings"

	"csbench/internal/clienthosts"
)

// Defaults of the sizing, when the settings leave a value empty.
const (
	MinWorkerConnections = 4096    // worker_connections at least
	SpareConnections     = 1024    // beyond the phase's largest connection count
	KeepaliveRequests    = 1000000 // so no busy connection is closed mid-cell
	KeepaliveTimeoutS    = 75      // nginx's own default
	HoldSlackS           = 60      // beyond Phase 3's hold, so idle connections last it
	NofileSpare          = 1024    // worker_rlimit_nofile = 2 x connections + this
	// HTTP2MaxConcurrentStreams is nginx's own http2_max_concurrent_streams
	// (the SETTINGS_MAX_CONCURRENT_STREAMS it announces) when not set.
	HTTP2MaxConcurrentStreams = 128
)

// Input is what the runner knows.
type Input struct {
	Dir    string // the run's work directory on the server host
	User   string // "user" directive (only when the server host's user is root)
	Listen string // IP:PORT ([IPv6]:PORT)
	// Paths maps each payload size, in order, to its path and its file
	// under Dir/bin/www/.
	Sizes      []string
	Paths      map[string]string
	HealthPath string
	// Sizing inputs; 0 (or "") means "the default".
	Workers           string // a number or "auto"
	ServerCPUs        string // SERVER_CPUS, a taskset list ("": not pinned)
	WorkerConnections int64
	MaxConns          int64 // the phase's largest connection count
	KeepaliveRequests int64
	KeepaliveTimeoutS int64
	HoldS             int64 // Phase 3's idle hold
	FDHard            int64 // the server host's hard fd limit (0: unknown)
	// Procs is the server processes a Phase 3 plan asks for (0 or 1: none):
	// past one process's fd limit nginx gets that many workers, each its
	// own listen socket (reuseport) and a whole fd budget.
	Procs int64
	// TLS: the directory holding cert.pem and key.pem ("" for cleartext).
	TLSDir     string
	TLSTickets bool
	// HTTP2: the listen gets http2: h2 by ALPN beside HTTP/1.1 over TLS;
	// in cleartext h2c with prior knowledge, which nginx before 1.25.1
	// speaks instead of HTTP/1.1 on that listen, not beside it.
	HTTP2 bool
	// HTTP2MaxStreams: http2_max_concurrent_streams (H2_MAX_STREAMS); 0:
	// nginx's default, HTTP2MaxConcurrentStreams.
	HTTP2MaxStreams int64
	// TCPNopush is tcp_nopush, "on" (as Debian ships nginx) or "off"
	// (NGINX_TCP_NOPUSH; "": on). On, with sendfile, nginx corks the
	// socket while it sends a response: on a 1500-byte path a 10 KB
	// answer's last segment can wait for the cork to be pulled.
	TCPNopush string
}

// Sizing is what the config gets, and why.
type Sizing struct {
	Workers           string
	WorkerConnections int64
	Nofile            int64
	KeepaliveRequests int64
	KeepaliveTimeoutS int64
	TCPNopush         string // on or off
	// ReusePort: each worker listens on its own socket (SO_REUSEPORT),
	// so the kernel spreads connections evenly over the planned workers.
	ReusePort bool
	// Warning is set when the fd limit capped worker_rlimit_nofile, or
	// NGINX_WORKERS is below the plan's server processes.
	Warning string
}

// FDMargin is the descriptors a worker keeps beyond its connections (its
// listen sockets, logs, files served).
const FDMargin = 64

// Size computes the sizing. worker_connections covers the phase's largest
// connection count in every worker (one worker may accept them all);
// nginx's "auto" counts the host's CPUs, not those it may run on, so with
// SERVER_CPUS the default is one worker per CPU listed. With a plan of
// several server processes (Procs) the workers are the plan's, each
// listening on its own socket, with worker_connections the fd limit less
// FDMargin and worker_rlimit_nofile the fd limit.
func Size(in Input) Sizing {
	s := Sizing{Workers: in.Workers, WorkerConnections: in.WorkerConnections,
		KeepaliveRequests: in.KeepaliveRequests, KeepaliveTimeoutS: in.KeepaliveTimeoutS, TCPNopush: in.TCPNopush}
	if s.TCPNopush == "" {
		s.TCPNopush = "on"
	}
	if in.Procs > 1 && in.FDHard > FDMargin {
		s.ReusePort = true
		if s.Workers == "" {
			s.Workers = fmt.Sprint(in.Procs)
		} else if n, err := strconv.ParseInt(s.Workers, 10, 64); err != nil || n < in.Procs {
			s.Warning = fmt.Sprintf("nginx: NGINX_WORKERS=%s is below the %d server processes the plan needs for %d connections: some will be refused", s.Workers, in.Procs, in.MaxConns)
		}
		if s.WorkerConnections == 0 {
			s.WorkerConnections = in.FDHard - FDMargin
		}
	}
	if s.Workers == "" {
		s.Workers = "auto"
		if n := clienthosts.CPUCount(in.ServerCPUs); n > 0 {
			s.Workers = fmt.Sprint(n)
		}
	}
	if s.WorkerConnections == 0 {
		s.WorkerConnections = max(in.MaxConns+SpareConnections, MinWorkerConnections)
	}
	if s.KeepaliveRequests == 0 {
		s.KeepaliveRequests = KeepaliveRequests
	}
	if s.KeepaliveTimeoutS == 0 {
		s.KeepaliveTimeoutS = max(in.HoldS+HoldSlackS, KeepaliveTimeoutS)
	}
	s.Nofile = 2*s.WorkerConnections + NofileSpare
	if s.ReusePort {
		s.Nofile = in.FDHard
	}
	if in.FDHard > 0 && s.Nofile > in.FDHard {
		s.Warning = fmt.Sprintf("nginx: worker_rlimit_nofile %d is above the server host's hard fd limit %d: capped there", s.Nofile, in.FDHard)
		s.Nofile = in.FDHard
	}
	return s
}

// Settings is the sizing as run.env records it (server.nginx).
func (s Sizing) Settings() string {
	rp := ""
	if s.ReusePort {
		rp = " reuseport=on"
	}
	return fmt.Sprintf("worker_processes=%s worker_connections=%d worker_rlimit_nofile=%d keepalive_requests=%d keepalive_timeout=%ds tcp_nopush=%s access_log=off%s",
		s.Workers, s.WorkerConnections, s.Nofile, s.KeepaliveRequests, s.KeepaliveTimeoutS, s.TCPNopush, rp)
}

// Render is the configuration file.
func Render(in Input, s Sizing) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	d := strings.TrimSuffix(in.Dir, "/")
	p("# Written by csb nginx-conf for one run; nginx -p %s/nginx/ -c %s/nginx/nginx.conf\n", d, d)
	p("# settings: %s\n", s.Settings())
	p("daemon off;\nmaster_process on;\n")
	if in.User != "" {
		p("user %s;\n", in.User)
	}
	p("worker_processes %s;\nworker_rlimit_nofile %d;\n", s.Workers, s.Nofile)
	p("pid %s/nginx/nginx.pid;\nerror_log %s/server/nginx-error.log warn;\n", d, d)
	p("events {\n  worker_connections %d;\n}\n", s.WorkerConnections)
	// HTTP/2 in cleartext: nginx 1.22 sends a DATA frame's body by
	// sendfile after its header and each response then waited ~40 ms (h2load,
	// one stream a connection, 1 KB: 184 req/s a client against 28,750 with
	// sendfile off, on this lab); over TLS sendfile is not used anyway.
	sendfile := "on"
	if in.HTTP2 && in.TLSDir == "" {
		sendfile = "off"
	}
	p("http {\n  access_log off;\n  sendfile %s;\n  tcp_nopush %s;\n  tcp_nodelay on;\n", sendfile, s.TCPNopush)
	p("  keepalive_requests %d;\n  keepalive_timeout %ds;\n", s.KeepaliveRequests, s.KeepaliveTimeoutS)
	if in.HTTP2 && in.HTTP2MaxStreams > 0 {
		p("  http2_max_concurrent_streams %d;\n", in.HTTP2MaxStreams)
	}
	p("  types { }\n  default_type application/octet-stream;\n  chunked_transfer_encoding off;\n")
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		p("  %s_temp_path %s/bin/nginx-tmp/%s;\n", t, d, t)
	}
	ssl := ""
	if in.TLSDir != "" {
		ssl = " ssl"
	}
	if in.HTTP2 {
		ssl += " http2"
	}
	if s.ReusePort {
		ssl += " reuseport"
	}
	p("  server {\n    listen %s%s backlog=65535;\n    server_name _;\n", in.Listen, ssl)
	if in.TLSDir != "" {
		// The run's certificate and key (read by the master at start); TLS
		// 1.3 and 1.2 as the reference server; tickets as TLS_TICKETS.
		tickets := "off"
		if in.TLSTickets {
			tickets = "on"
		}
		p("    ssl_certificate %s/cert.pem;\n    ssl_certificate_key %s/key.pem;\n", in.TLSDir, in.TLSDir)
		p("    ssl_protocols TLSv1.2 TLSv1.3;\n    ssl_session_tickets %s;\n", tickets)
	}
	health := func(path string) {
		p("    location = %s { default_type \"text/plain; charset=utf-8\"; return 200 \"ok\\n\"; }\n", path)
	}
	health("/healthz")
	if in.HealthPath != "" && in.HealthPath != "/healthz" {
		health(in.HealthPath)
	}
	for _, size := range in.Sizes {
		path := in.Paths[size]
		if path == "" {
			path = "/payload/" + size
		}
		p("    location = %s { alias %s/bin/www/%s; }\n", path, d, size)
	}
	p("  }\n}\n")
	return b.String()
}
