// Command connclient opens and holds many keep-alive TCP connections to an
// HTTP/1.1 server, for the C10K phase of CS Benchmark, where wrk and oha
// fall short, and drives open-model request rates over them.
//
// Usage:
//
//	connclient idle    -target IP:PORT -conns N [-rate R] [-hold D | -hold-file F [-hold-wait D]] [common flags] [ramp flags]
//	connclient lowrate -target IP:PORT -conns N -rps R [-duration D] [-path P] [-rate R] [-drain D] [-loops N] [common flags] [ramp flags]
//	connclient churn   -target IP:PORT -rate R [-duration D] [-close client|server|linger0] [...]
//	connclient burst   -target IP:PORT -conns N [-path P] [-source IP] [-timeout D]
//	connclient responder -listen IP:PORT [-size N] [-spin]
//	connclient benchrate -wrk FILE | -result FILE [-scale F]
//	connclient benchreport -dir DIR
//
// idle opens N connections paced at R connects/s, sends one GET /healthz on
// each, holds them all for D without a goroutine per connection, and reports
// how many were established, how fast, why the others failed and how many
// were still alive at the end. lowrate opens N connections, then sends R
// requests/s on an open-model schedule, on event loops (one per CPU, epoll)
// or, with TLS, a goroutine per connection, and reports latency measured
// from the scheduled time (coordinated-omission corrected) and from the
// actual send, and the requests that found every connection busy. churn
// and burst (Phase 4) open connections at a rate or all at once. responder
// is a trivial HTTP server to measure the client against; benchrate and
// benchreport compute the figures of scripts/engine-bench.sh.
//
// Common flags: -source IP (bind, with IP_BIND_ADDRESS_NO_PORT), -linger0
// (close with RST, no TIME_WAIT), -timeout D, -workers N. Ramp flags:
// -pace aimd|fixed (by default the ramp halves its rate while SYNs are
// retransmitted or connects time out, and grows back while they are fast),
// -connect-retries R, -connect-slow D, -ramp-max D. With -hold-file F idle
// holds until the end time a runner writes into F, so that processes on
// several hosts end their holds at one instant.
//
// The result is one JSON object on stdout; progress goes to stderr once a
// second. Exit status: 0 done, 1 interrupted (partial result printed) or
// failed, 2 bad usage. Run "connclient -h" for the full usage and examples.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"csbench/internal/connclient"
)

func main() {
	os.Exit(connclient.ExitCode(run(os.Args[1:], os.Stdout, os.Stderr)))
}

// run runs connclient; SIGINT and SIGTERM stop it cleanly with a partial
// result. Errors have already been reported on stderr.
func run(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return connclient.Run(ctx, args, stdout, stderr)
}
