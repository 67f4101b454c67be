// Package connclient implements the connclient command: a TCP/HTTP client
// for Phase 3 (C10K) that opens and holds many keep-alive connections
// (idle) or drives an open-model request rate over many connections
// (lowrate), which wrk and oha cannot do, up to rates past a one-core
// server's knee (the epoll engine).
//
// # Connections
//
// Connections are opened by a pool of -workers goroutines. With -pace
// fixed the connects are paced at -rate connects/s (connect i is due at
// start + i/rate); with -pace aimd (the default) the ramp paces itself to
// what the server accepts, from -rate down: every 100 ms, when an attempt
// (connect, TLS handshake, first request) begun after the last cut timed
// out, or took -connect-slow (1 s, a SYN retransmitted) or longer with a
// retransmission on it (TCP_INFO), or has been under way 3 x
// -connect-slow, the rate is halved (to no less than max(1, rate/100));
// while attempts complete within -connect-slow it grows by rate/20 per
// second, up to -rate (ramppace.go). An attempt that timed out (no answer
// to the connect, the handshake or the first request) is made again, at
// most -connect-retries times per connection; no attempt starts after
// -ramp-max. A connection is a
// net.TCPConn dialed with TCP keep-alive probes off; with -source it is
// bound to that IP with IP_BIND_ADDRESS_NO_PORT, with -linger0 it has
// SO_LINGER=0. HTTP/1.1 is spoken directly on the connection (a precomputed
// GET and a minimal response parser, no net/http Transport), so every
// request goes on the connection it was assigned to, and a request/response
// allocates nothing.
//
// In idle mode each connection carries one GET /healthz; once answered it
// is kept as a slice entry only (no goroutine, no buffer).
// With -http 2 that GET is HTTP/2 (h2wire.go, hpack.go): h2 by ALPN over
// TLS (only h2 offered), h2c with prior knowledge in cleartext; the
// connection writes the preface, a SETTINGS frame (push off) and a HEADERS
// frame on stream 1 (bytes built once per process), and reads frames to
// the end of stream 1's response, decoding only its :status, answering
// the server's SETTINGS and PINGs. A held HTTP/2 connection costs a small
// struct more (a frame not all arrived, between checks). Once a second
// during the hold, and at its end, every connection is checked with a
// non-blocking recv(MSG_PEEK|MSG_DONTWAIT): EAGAIN means alive, 0 bytes
// means the server closed it; over HTTP/2, bytes to read are read then,
// without waiting for more, through one reader shared by every connection:
// SETTINGS and PING are answered (ACK); WINDOW_UPDATE, PRIORITY,
// RST_STREAM (of the closed stream) and unknown frame types are ignored;
// anything else (GOAWAY, a stream's frame) is a drop. So a server's PING waits up to a second for its ACK.
// The hold lasts -hold, or with -hold-file
// until the end time the file gives: processes on several hosts, each
// printing {"event":"holding"} once its connections are open, then hold
// until the one instant a runner writes there once every one holds.
//
// In lowrate mode each connection also carries one GET of -path when it is
// opened (a server's header timeout runs from accept, so an unused new
// connection would be closed before its first scheduled request). Then the
// schedule runs: request i due at start + i/rps. Cleartext runs on the
// event-loop engine (engine.go): the connections' fds are taken out of the
// Go runtime's poller and split over event loops (one per 5,000 requests/s,
// at most one per CPU: GOMAXPROCS; or -loops), each a goroutine locked to its thread that waits in
// epoll_pwait2 (nanosecond timeouts) as a raw syscall, reads and writes
// non-blocking, parses responses incrementally (respparse.go) and
// allocates nothing per request. A due request takes its loop's connection
// idle the longest; when all are busy it waits, counted in
// requests_late_pool_busy. With TLS the goroutine engine runs instead: one
// dispatcher goroutine keeps the schedule (request i on connection i mod
// conns) and wakes the connection's goroutine; a busy connection sends
// late and the wait counts in the latency. That dispatcher sleeps on a
// timerfd (Linux) rather than a Go timer, which would fire up to 1 ms late.
//
// responder is a trivial HTTP/1.1 server (one event loop, a fixed
// response) to measure the client against; benchrate and benchreport
// compute from the raw files of scripts/engine-bench.sh (benchcheck.go).
//
// # Result
//
// One JSON object on stdout. Units are in the names; null means not
// measured (an interrupted phase, a percentile of nothing), never 0.
// Latencies come from log-linear histograms (µs resolution, <= 0.4 % error),
// maxima are exact.
//
// Both modes:
//
//	schema_version, tool, mode, status ("complete"|"partial"), argv,
//	started_at, finished_at (RFC 3339 UTC), go_version,
//	target, http ("1.1" | "2": -http; absent from results written before it
//	existed, all HTTP/1.1), source (null: none), linger0, timeout_s,
//	connect_timeout_s (-connect-timeout: the bound of an attempt's connect,
//	handshake and first response), connect_workers,
//	rlimit_nofile_soft, rlimit_nofile_hard (after raising the soft limit),
//	connections_target, connect_rate_target_per_s,
//	connections_attempted, connections_established, connections_failed,
//	setup_s (first connect to last connection done; null if interrupted),
//	connect_rate_achieved_per_s,
//	connect_latency_{p50,p90,p99,max}_ms (TCP handshake, every connect that succeeded),
//	connect_latency_histogram (the histogram behind them, see below),
//	(the connection figures are the final outcome, retries included)
//	ramp (null before it existed): pace ("aimd"|"fixed"), connect_slow_ms,
//	connect_retries_max, ramp_max_s, bound_reached (the ramp stopped at
//	ramp_max_s with work left: connections not attempted, retries not
//	made), rate_paced_{min,max}_per_s, pace_cuts, retries (attempts after
//	a first), connections_retried, established_after_retry, connects_slow
//	(every attempt), first_attempt {established, failed, connect_timeouts,
//	response_timeouts, connects_slow, errors {cause: count},
//	connect_latency_{p50,p90,p99,max}_ms, connect_latency_histogram} (the
//	ramp as it would have been without retries),
//	connections_alive_end (idle: at the end of the hold; lowrate: at the end of the run),
//	errors {cause: count}, status_codes {"200": count} (every response read,
//	the one that opened each connection included),
//	client_rss_mb (VmRSS; idle: end of hold, lowrate: mid-schedule),
//	client_goroutines (sampled with client_rss_mb)
//
// idle:
//
//	hold_s (-hold, or with -hold-file from the hold's start to the end in
//	the file; null: no end came), hold_elapsed_s,
//	hold_began_at_ms, hold_ended_at_ms (Unix ms: every connection open and
//	primed; the last check begun), hold_end_agreed_at_ms (the end in
//	-hold-file; null without), first_drop_s (null: no drop seen),
//	drops {cause: count}, requests_completed,
//	request_latency_{p50,p99,max}_ms (the GET /healthz on each connection),
//	request_latency_histogram
//
// lowrate:
//
//	path, rps_target, duration_s, elapsed_s (start of schedule to last
//	response, at least duration_s), requests_scheduled, requests_sent,
//	requests_completed, requests_failed, requests_unsent,
//	rps_achieved (requests_completed / elapsed_s),
//	schedule_started_at (when request 0 was due; -start-file: the agreed moment),
//	latency_{p50,p90,p99,p999,max}_ms (from the due time: coordinated-omission corrected),
//	service_latency_{p50,p90,p99,p999,max}_ms (from the actual send),
//	sender_lag_{p50,p99,max}_ms (actual send - due time),
//	latency_histogram, service_latency_histogram, sender_lag_histogram,
//	engine ("epoll" | "goroutines"), event_loops, event_loops_cpu_s (the
//	loops' threads' CPU time), requests_late_pool_busy (a due request found
//	every connection of its loop busy), engine_lag_{p50,p99,max}_ms and
//	engine_lag_histogram (the sender lag of the other requests: the
//	engine's own lateness), connection_drops {cause: count} (connections
//	that left the pool without failing a request): null with the goroutine
//	engine, which does not measure them; drain_s (-drain; null: no bound)
//
// A histogram is {unit "us", sub_bits, max_bits, count, min_us, max_us,
// buckets [[index, count], ...]} (non-empty buckets only, HistDump): every
// process uses the same buckets, so the histograms of several processes
// merge exactly (MergeDumps) and the merged percentiles are those one
// process holding every sample would have printed. The fields are an
// addition within schema version 1: results written before them have none,
// and a reader says its percentiles of several processes are not exact.
//
// churn and burst (Phase 4) print their own documents: churn.go, burst.go.
//
// Error causes: eaddrnotavail, eaddrinuse, emfile, enfile, econnrefused,
// econnreset, etimedout (errno, dial timeout or response timeout), epipe,
// eof (closed before the response), bad_response, server_close (idle: the
// response said Connection: close), conn_closed (lowrate: request assigned
// to a connection that had already failed, or, epoll engine, due when its
// loop had no connection left), status (lowrate: a whole response whose
// status is not 2xx; its code is in status_codes), canceled (interrupted),
// hold_file (idle: -hold-file gave no end time; exit 1), start_file
// (lowrate: -start-file gave no start time), other; with -http 2 (idle)
// also alpn_not_h2 (TLS: the server refused h2 or chose another protocol),
// http1_answer (cleartext: it answered the preface in HTTP/1), goaway (a
// GOAWAY before the response's end), rst_stream (RST_STREAM on the
// request's stream). Drop causes (idle, and lowrate's connection_drops)
// are the same plus unexpected_data (the server sent something unasked on
// an idle connection, typically a 408 before closing; over HTTP/2 a
// stream's frame); over HTTP/2 a GOAWAY during the hold is the drop
// goaway. In connection_drops server_close is a response that said
// Connection: close.
package connclient
