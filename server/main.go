// Command server is the fixed-payload HTTP server of CS Benchmark.
//
// It binds one IP literal of this host and serves /healthz and
// /payload/<size> (by default 1k, 4k, 10k and 100k) from bodies built once at
// start, prints one JSON line on stdout when it is listening and one when it
// has shut down, and shuts down gracefully on SIGINT or SIGTERM. It speaks
// HTTP/1.1, and HTTP/2 with -http (h2 over TLS, h2c with prior knowledge).
// With -service-time and -slots it is a queue of known capacity (slots /
// service time), the ground truth of a capacity search, and reports the
// service time it really gave at /stats and in its shutdown line.
//
// Usage:
//
//	server -addr 198.18.0.1 [-port 8080] [-sizes 1k,4k,10k,100k] [-reuseport]
//	       [-http 1.1|2|1.1,2] [-service-time 10ms -slots 40] ...
//
// Run "server -h" for every flag. The logic lives in csbench/internal/server.
package main

import (
	"context"
	"io"
	"os"
	"syscall"

	"csbench/internal/server"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		// run has already reported err on stderr.
		os.Exit(server.ExitCode(err))
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	ctx, stop := server.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return server.Run(ctx, args, stdout, stderr)
}
