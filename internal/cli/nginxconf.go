package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"csbench/internal/nginxconf"
)

const nginxConfUsage = `Usage: csb nginx-conf -dir DIR -listen IP:PORT -sizes LIST [flags]

Prints the nginx configuration of one run (SERVER=nginx): the payload
sizes at their paths (files DIR/bin/www/<size>), /healthz and the health
path, bound to -listen only, a foreground master, TLS when -tls-dir is set;
and its sizing: worker_connections cover the phase's largest connection
count (+1024, at least 4096), worker_rlimit_nofile is twice that +1024
capped at the server host's hard fd limit, keepalive_timeout outlasts
Phase 3's hold (+60 s, at least 75 s; -hold is the time a connection may
stay idle: the scenario's ramp bound and hold), one worker per CPU of
SERVER_CPUS (else auto). With -procs N > 1 (a Phase 3 plan's server
processes) N workers, each listening with reuseport, worker_connections
the fd limit - 64 and worker_rlimit_nofile the fd limit. Its second line is "# settings: ..." (what run.env records);
a "# warning: ..." line follows when the fd limit capped the sizing.

Flags (empty or 0: the default above):
  -dir DIR  -user NAME  -listen IP:PORT  -sizes 1k,10k  -paths SIZE=PATH,...
  -health PATH  -workers N|auto  -server-cpus LIST  -worker-connections N
  -max-conns N  -keepalive-requests N  -keepalive-timeout S  -hold S
  -fd-hard N  -procs N  -tls-dir DIR  -tls-tickets=false
  -http2    the listen speaks HTTP/2 (h2 by ALPN over TLS; h2c in cleartext)
  -http2-max-streams N  with -http2: http2_max_concurrent_streams (0: nginx's
            own, 128)
  -tcp-nopush on|off  tcp_nopush (default on, as Debian ships nginx)
`

func runNginxConf(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nginx-conf", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var in nginxconf.Input
	var sizes, paths string
	fs.StringVar(&in.Dir, "dir", "", "")
	fs.StringVar(&in.User, "user", "", "")
	fs.StringVar(&in.Listen, "listen", "", "")
	fs.StringVar(&sizes, "sizes", "", "")
	fs.StringVar(&paths, "paths", "", "")
	fs.StringVar(&in.HealthPath, "health", "/healthz", "")
	fs.StringVar(&in.Workers, "workers", "", "")
	fs.StringVar(&in.ServerCPUs, "server-cpus", "", "")
	fs.Int64Var(&in.WorkerConnections, "worker-connections", 0, "")
	fs.Int64Var(&in.MaxConns, "max-conns", 0, "")
	fs.Int64Var(&in.KeepaliveRequests, "keepalive-requests", 0, "")
	fs.Int64Var(&in.KeepaliveTimeoutS, "keepalive-timeout", 0, "")
	fs.Int64Var(&in.HoldS, "hold", 0, "")
	fs.Int64Var(&in.FDHard, "fd-hard", 0, "")
	fs.Int64Var(&in.Procs, "procs", 0, "")
	fs.StringVar(&in.TLSDir, "tls-dir", "", "")
	fs.BoolVar(&in.TLSTickets, "tls-tickets", true, "")
	fs.BoolVar(&in.HTTP2, "http2", false, "")
	fs.Int64Var(&in.HTTP2MaxStreams, "http2-max-streams", 0, "")
	fs.StringVar(&in.TCPNopush, "tcp-nopush", "on", "")
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: nginx-conf: %v", errUsage, err)
	}
	switch {
	case *help:
		fmt.Fprint(stdout, nginxConfUsage)
		return nil
	case fs.NArg() > 0:
		return fmt.Errorf("%w: nginx-conf: unexpected argument %q", errUsage, fs.Arg(0))
	case in.Dir == "" || in.Listen == "" || sizes == "":
		return fmt.Errorf("%w: nginx-conf needs -dir, -listen and -sizes", errUsage)
	case in.HTTP2MaxStreams < 0:
		return fmt.Errorf("%w: nginx-conf: -http2-max-streams %d is below 0", errUsage, in.HTTP2MaxStreams)
	case in.TCPNopush != "on" && in.TCPNopush != "off":
		return fmt.Errorf("%w: nginx-conf: -tcp-nopush %q: on or off", errUsage, in.TCPNopush)
	}
	in.Sizes = strings.Split(sizes, ",")
	in.Paths = map[string]string{}
	if paths != "" {
		for _, kv := range strings.Split(paths, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("%w: nginx-conf: -paths %q: want SIZE=PATH,...", errUsage, paths)
			}
			in.Paths[k] = v
		}
	}
	s := nginxconf.Size(in)
	conf := nginxconf.Render(in, s)
	if s.Warning != "" {
		first, rest, _ := strings.Cut(conf, "\n")
		second, rest, _ := strings.Cut(rest, "\n")
		conf = first + "\n" + second + "\n# warning: " + s.Warning + "\n" + rest
	}
	_, err := io.WriteString(stdout, conf)
	return err
}
